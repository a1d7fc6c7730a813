"""The multiple-choice kind: its spec, answers read or refused, pools and scores (hand values and sklearn)."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss, log_loss as sk_log_loss

from agent_schemas import DataValidationError, ForecastParseError, Question
from agent_schemas.kinds import KINDS, ChoiceSpec
from agent_schemas.kinds.multiple_choice import MULTIPLE_CHOICE as MC

NAN = np.nan
SPEC = ChoiceSpec(options=("Arsenal", "Liverpool", "Manchester City"))
ORDERED = ChoiceSpec(options=("large decrease", "decrease", "stable", "increase", "large increase"), ordered=True)


def test_registered_and_attached_to_a_question():
    assert KINDS["multiple_choice"] is MC
    q = Question(id="q", text="Who wins the league?", forecast_date=dt.date(2025, 1, 1), spec=SPEC, outcome=2)
    assert q.kind is MC and q.outcome == 2 and MC.outcome_text(q.spec, q.outcome) == "Manchester City"
    assert q.visible().spec == SPEC  # the options are knowable: agents see them
    assert "- Liverpool" in MC.question_lines(SPEC)


@pytest.mark.parametrize("options, why", [
    (("A",), "2 to 30 options"),
    (("A", "a "), "the same label"),
    (("A", " "), "empty"),
])
def test_bad_specs_are_refused(options, why):
    with pytest.raises(ValueError, match=why):
        ChoiceSpec(options=options)


@pytest.mark.parametrize("outcome", [3, -1, 1.5, "Arsenal"])
def test_an_outcome_is_an_option_index(outcome):
    with pytest.raises(ValueError):
        Question(id="q", text="t", forecast_date=dt.date(2025, 1, 1), spec=SPEC, outcome=outcome)


def test_answers_read_and_renormalised_only_within_the_rounding_tolerance():
    p = MC.read_answer(SPEC, {"probabilities": {"arsenal": 50, "Liverpool ": "30%", "Manchester  City": 21}})
    assert p.tolist() == pytest.approx([50 / 101, 30 / 101, 21 / 101])
    assert MC.read_answer(SPEC, {"rationale": "no forecast here"}) is None


@pytest.mark.parametrize("given, field, why", [
    ({"Arsenal": 50, "Liverpool": 30}, "probabilities", "no probability for 1 option"),
    ({"Arsenal": 50, "Liverpool": 30, "Manchester City": 10, "Chelsea": 10}, "probabilities.Chelsea", "not an option"),
    ({"Arsenal": 50, "arsenal": 20, "Liverpool": 15, "Manchester City": 15}, "probabilities.arsenal", "given twice"),
    ({"Arsenal": 60, "Liverpool": 30, "Manchester City": 20}, "probabilities", "add up to 110%"),
    ({"Arsenal": 0.5, "Liverpool": 0.3, "Manchester City": 0.2}, "probabilities.Arsenal", "ambiguous"),
    ({"Arsenal": 50, "Liverpool": True, "Manchester City": 50}, "probabilities.Liverpool", "boolean"),
    ([50, 30, 20], "probabilities", "must be an object"),
])
def test_answers_that_cannot_be_stood_behind_are_refused(given, field, why):
    with pytest.raises(ForecastParseError, match=why) as e:
        MC.read_answer(SPEC, {"probabilities": given}, raw_text="raw")
    assert e.value.field == field and e.value.raw_text == "raw"


def test_the_answer_schema_constrains_each_option_to_an_integer_percent():
    props = MC.answer_properties(SPEC)["probabilities"]
    assert props["required"] == list(SPEC.options)
    assert props["properties"]["Liverpool"]["enum"] == list(range(101))


def test_stored_forecasts_are_checked():
    assert MC.check_forecast(SPEC, [0.2, 0.3, 0.5]).tolist() == [0.2, 0.3, 0.5]
    with pytest.raises(DataValidationError, match="sum to 0.9"):
        MC.check_forecast(SPEC, [0.2, 0.2, 0.5])
    with pytest.raises(DataValidationError, match="one probability per option"):
        MC.check_forecast(SPEC, [0.5, 0.5])
    assert MC.uninformed(SPEC).tolist() == pytest.approx([1 / 3] * 3)


STACK = np.array([
    [[0.5, 0.3, 0.2], [0.2, 0.3, 0.5], [NAN, NAN, NAN]],
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
    [[NAN, NAN, NAN], [NAN, NAN, NAN], [NAN, NAN, NAN]],
])


def test_pools_by_hand():
    np.testing.assert_allclose(MC.pool("mean", STACK)[:2], [[0.35, 0.3, 0.35], [1 / 3, 1 / 3, 1 / 3]])
    # per-option medians of two members are their means; of three certain members all 0: the mean
    np.testing.assert_allclose(MC.pool("median", STACK)[:2], [[0.35, 0.3, 0.35], [1 / 3, 1 / 3, 1 / 3]])
    g = np.sqrt([0.5 * 0.2, 0.3 * 0.3, 0.2 * 0.5])
    assert MC.pool("log_pool", STACK)[0].tolist() == pytest.approx((g / g.sum()).tolist())
    e = g ** 1.5
    assert MC.pool("extremized", STACK)[0].tolist() == pytest.approx((e / e.sum()).tolist())
    assert MC.pool("least_confident", STACK)[0].tolist() == [0.5, 0.3, 0.2]  # equal entropy: the first
    for method in MC.pools:
        out = MC.pool(method, STACK)
        assert np.isnan(out[2]).all(), method  # no member: NaN, never a default
        assert np.allclose(out[:2].sum(axis=1), 1.0), method


def test_the_least_confident_member_has_the_highest_entropy():
    stack = np.array([[[0.9, 0.05, 0.05], [0.4, 0.3, 0.3], [0.6, 0.2, 0.2]]])
    assert MC.pool("least_confident", stack)[0].tolist() == [0.4, 0.3, 0.3]


def test_trimmed_mean_cuts_members_per_option():
    stack = np.array([[[0.1, 0.9], [0.2, 0.8], [0.3, 0.7], [0.4, 0.6], [0.9, 0.1]]])
    assert MC.pool("trimmed_mean", stack)[0].tolist() == pytest.approx([0.3, 0.7])


def test_scores_by_hand_and_against_sklearn():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(5), size=400)
    o = rng.integers(0, 5, size=400)
    s = MC.score([ORDERED] * 400, p, o)
    assert s["brier"].mean() == pytest.approx(brier_score_loss(o, p, labels=range(5), scale_by_half=False))
    assert s["log_loss"].mean() == pytest.approx(sk_log_loss(o, p, labels=range(5)))
    cp, co = np.cumsum(p, axis=1)[:, :4], np.cumsum(np.eye(5)[o], axis=1)[:, :4]
    assert s["rps"] == pytest.approx(((cp - co) ** 2).sum(axis=1) / 4)
    one = MC.score([SPEC], [[0.5, 0.3, 0.2]], [2])
    assert one["brier"][0] == pytest.approx(0.25 + 0.09 + 0.64)
    assert np.isnan(one["rps"][0])  # unordered options have no RPS
    assert one["baseline_score"][0] == pytest.approx(100 * np.log(3 * 0.2) / np.log(3))
    assert MC.score([SPEC], [[1 / 3] * 3], [0])["baseline_score"][0] == pytest.approx(0.0)


def test_two_options_score_as_the_binary_kind_does():
    p = np.array([[0.3, 0.7], [0.9, 0.1]])
    o = np.array([1, 1])
    two = ChoiceSpec(options=("No", "Yes"))
    s = MC.score([two] * 2, p, o)
    b = KINDS["binary"].score([None] * 2, p[:, 1:], o)
    assert s["brier"] == pytest.approx(2 * b["brier"])
    assert s["log_loss"] == pytest.approx(b["log_loss"])
    assert s["baseline_score"] == pytest.approx(b["baseline_score"])


def test_peer_scores_average_zero_over_entries():
    lq = MC.outcome_log_probability([SPEC] * 2, [[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]], [0, 2])
    peer = MC.peer_scores(np.stack([lq, np.log([0.25, 0.5]), np.log([0.5, 0.2])], axis=1))
    assert peer.sum(axis=1) == pytest.approx([0.0, 0.0])
    assert peer[0, 0] == pytest.approx(100 * (np.log(0.5) - (np.log(0.25) + np.log(0.5)) / 2))


def test_diagnostics_top_label():
    d = MC.diagnostics([SPEC] * 2, [[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]], [0, 1])
    assert d["top_p"].tolist() == [0.5, 0.8] and d["top_hit"].tolist() == [1.0, 0.0]
