"""Betting return against the market price (Prophet Arena's average return): hand-computed payoffs, the CRRA
bettor's stake checked against a numeric maximiser of its expected utility, the per-method table, refusals."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize_scalar

from agent_schemas import DataValidationError
from benchmarks.scoring.betting import betting_return, betting_table


def test_risk_neutral_bets_the_dollar_on_the_side_with_the_edge():
    p = [0.7, 0.7, 0.2, 0.2, 0.9, 0.45, 0.3]
    q = [0.5, 0.5, 0.4, 0.4, 0.95, 0.45, 0.25]
    o = [1, 0, 0, 1, 0, 1, 1]
    want = [1 / 0.5 - 1,  # YES at 0.5, Yes: 2 dollars back
            -1.0,  # YES at 0.5, No
            1 / 0.6 - 1,  # p < q: NO at 0.6, No
            -1.0,  # NO at 0.6, Yes
            1 / 0.05 - 1,  # NO at 0.05, No: 20 dollars back
            0.0,  # no edge: no bet
            1 / 0.25 - 1]
    assert betting_return(p, q, o) == pytest.approx(want, abs=1e-12)


def test_log_utility_is_kelly_p_on_yes_and_1_minus_p_on_no():
    r = betting_return([0.8, 0.8, 0.0, 1.0, 0.3], [0.5, 0.5, 0.2, 0.2, 0.6], [1, 0, 0, 0, 1], risk_aversion=1.0)
    assert r == pytest.approx([0.8 / 0.5 - 1, 0.2 / 0.5 - 1, 1 / 0.8 - 1, -1.0, 0.3 / 0.6 - 1], abs=1e-12)


def test_half_risk_aversion_by_hand():
    # p = 0.8, q = 0.5: r = (0.8 * 0.5 / (0.2 * 0.5)) ** 2 = 16; y = 1 / (0.5 * 16 + 0.5) = 1 / 8.5; x = 16 / 8.5
    r = betting_return([0.8, 0.8], [0.5, 0.5], [1, 0], risk_aversion=0.5)
    assert r == pytest.approx([16 / 8.5 - 1, 1 / 8.5 - 1], abs=1e-12)


@pytest.mark.parametrize("gamma", [0.25, 0.5, 0.75, 1.0])
@pytest.mark.parametrize("p, q", [(0.8, 0.5), (0.3, 0.6), (0.55, 0.5), (0.05, 0.3)])
def test_the_stake_maximises_the_bettors_expected_utility(gamma, p, q):
    """Oracle: the dollar split a (on YES) that maximises p U(a/q) + (1-p) U((1-a)/(1-q)), found numerically."""
    def utility(w):
        return math.log(w) if gamma == 1.0 else w ** (1 - gamma) / (1 - gamma)

    best = minimize_scalar(lambda a: -(p * utility(a / q) + (1 - p) * utility((1 - a) / (1 - q))),
                           bounds=(1e-9, 1 - 1e-9), method="bounded", options={"xatol": 1e-12})
    a = best.x
    got = betting_return([p, p], [q, q], [1, 0], risk_aversion=gamma)
    assert got == pytest.approx([a / q - 1, (1 - a) / (1 - q) - 1], abs=1e-5)


def test_copying_the_market_earns_nothing_and_the_expected_payoff_is_the_edge():
    q = np.array([0.1, 0.35, 0.5, 0.92])
    for gamma in (0.0, 0.5, 1.0):
        for o in (0, 1):
            assert betting_return(q, q, [o] * 4, risk_aversion=gamma) == pytest.approx(np.zeros(4), abs=1e-12)
    # risk neutral, under the forecaster's own belief: expected payoff max(p / q, (1 - p) / (1 - q))
    p, q = 0.3, 0.6
    expected = p * (betting_return([p], [q], [1])[0] + 1) + (1 - p) * (betting_return([p], [q], [0])[0] + 1)
    assert expected == pytest.approx(max(p / q, (1 - p) / (1 - q)))


@pytest.mark.parametrize("args, kwargs, needle", [
    (([0.5], [1.0], [1]), {}, "market_p_yes must be a price in (0, 1): 1.0 at index 0"),
    (([0.5, 0.5], [0.4, 0.0], [1, 0]), {}, "market_p_yes must be a price in (0, 1): 0.0 at index 1"),
    (([0.5], [float("nan")], [1]), {}, "market_p_yes must be a price in (0, 1): nan at index 0"),
    (([0.5, 0.5], [0.4], [1, 0]), {}, "market_p_yes must have the shape of p_yes"),
    (([1.2], [0.4], [1]), {}, "p_yes"),
    (([0.5], [0.4], [2]), {}, "outcomes must be 0 or 1: 2.0 at index 0"),
    (([0.5], [0.4], [1]), {"risk_aversion": 1.5}, "risk_aversion must be in [0, 1]; got 1.5"),
])
def test_bad_input_is_refused_naming_the_value(args, kwargs, needle):
    with pytest.raises(DataValidationError) as err:
        betting_return(*args, **kwargs)
    assert needle in str(err.value)


def test_betting_table_per_method_on_the_questions_with_a_market_price():
    df = pd.DataFrame({
        "method": ["crowd", "crowd", "a", "a", "a", "b", "b", "b"],
        "question_id": ["q1", "q2", "q1", "q2", "q3", "q1", "q2", "q3"],
        "p_yes": [0.5, 0.4, 0.7, 0.4, 0.9, 0.2, 0.1, 0.5],
        "outcome": [1, 0, 1, 0, 1, 1, 0, 1],
    })  # q3 has no market price: left out
    t = betting_table(df, cluster_col=None, n_resamples=50).set_index("method")
    assert list(t.index) == ["a", "b"]  # the market itself is not listed
    # a: q1 YES at 0.5 won (+1), q2 no edge (0) -> mean 0.5, one bet; b: q1 NO at 0.5 lost (-1), q2 NO at 0.6 won (+2/3)
    assert (t.loc["a", "n"], t.loc["a", "n_bets"], t.loc["a", "mean_return"]) == (2, 1, pytest.approx(0.5))
    assert (t.loc["b", "n"], t.loc["b", "n_bets"]) == (2, 2) and t.loc["b", "mean_return"] == pytest.approx((-1 + 1 / 0.6 - 1) / 2)
    assert math.isnan(t.loc["a", "return_ci_low"])  # 2 clusters: no interval
    empty = betting_table(df[df["method"] != "crowd"], cluster_col=None)
    assert empty.empty and list(empty.columns)[:4] == ["method", "n", "n_clusters", "mean_return"]
    with pytest.raises(DataValidationError, match=r"cluster_col='cluster' is not a column of the data frame"):
        betting_table(df)
