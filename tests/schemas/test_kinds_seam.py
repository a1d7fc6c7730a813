"""The per-kind seam itself: the registry, a question's spec, the binary kind's forms (unchanged from before the
seam), and the rules every kind follows."""

from __future__ import annotations

import datetime as dt
import doctest

import numpy as np
import pytest

from agent_schemas import Question
from agent_schemas.kinds import KINDS, BinarySpec, kind_named
from agent_schemas.kinds.binary import BINARY, pools


def test_the_binary_kind_is_the_default_and_stores_p_yes():
    q = Question(id="q", text="t", forecast_date=dt.date(2025, 1, 1), outcome=1)
    assert q.kind is BINARY and q.spec == BinarySpec()
    assert BINARY.fields(np.array([0.3]), "final_") == {"final_p_yes": 0.3}
    assert BINARY.forecast_of({"p_yes": 0.3}).tolist() == [0.3]
    assert BINARY.read_answer(BinarySpec(), BINARY.answer_of(BinarySpec(), np.array([0.3]))).tolist() == [0.3]


def test_unknown_kinds_are_named():
    with pytest.raises(ValueError, match="unknown question kind 'date'; known: binary, multiple_choice"):
        kind_named("date")


def test_binary_pools_are_the_aggregators():
    stack = np.array([[[0.2], [0.6], [np.nan]]])
    assert BINARY.pool("mean", stack)[0, 0] == pytest.approx(0.4)
    assert BINARY.pool("geomean_odds", stack)[0, 0] == pytest.approx(pools.geomean_odds([[0.2, 0.6]])[0])
    with pytest.raises(ValueError, match="unknown binary pooling method 'log_pool'"):
        BINARY.pool("log_pool", stack)


def test_binary_scores_by_hand():
    s = BINARY.score([BinarySpec()] * 2, [[0.9], [0.2]], [1, 1])
    assert s["brier"].tolist() == pytest.approx([0.01, 0.64])
    assert s["log_loss"].tolist() == pytest.approx([-np.log(0.9), -np.log(0.2)])
    assert s["baseline_score"].tolist() == pytest.approx([100 * (np.log2(0.9) + 1), 100 * (np.log2(0.2) + 1)])


@pytest.mark.parametrize("name", sorted(KINDS))
def test_every_kind_has_mean_and_median_and_ranks_on_one_of_its_scores(name):
    kind = KINDS[name]
    assert {"mean", "median"} <= set(kind.pools)
    assert set(kind.default_methods) <= set(kind.pools)
    assert kind.primary_score in kind.scores and kind.primary_score not in kind.higher_is_better


def test_the_binary_pooling_rules_doctests_pass():
    result = doctest.testmod(pools, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 10 and result.failed == 0
