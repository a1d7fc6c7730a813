"""Aggregation of ensemble members' p_yes: hand-computed values, NaN/0/1 members, fitted recalibration."""

import doctest
import math
import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit, logit

from agent_research import aggregation as agg
from agent_research.aggregation import (
    AGGREGATORS,
    LOGIT_EPS,
    PlattScaler,
    aggregate,
    extremized,
    fit_extremizing_factor,
    fit_platt_scaling,
    geomean_odds,
    trimmed_mean,
)
from agent_schemas.errors import DataValidationError, ReconcileError

NAN = np.nan


def test_aggregator_names_are_the_documented_ones():
    assert list(AGGREGATORS) == ["mean", "median", "min", "max", "trimmed_mean", "geomean_odds", "extremized"]


def test_hand_computed_values_with_missing_members():
    p = np.array([
        [0.2, 0.6, NAN, 0.4],
        [0.9, NAN, NAN, NAN],
        [0.1, 0.3, 0.8, 0.2],
    ])
    np.testing.assert_allclose(aggregate("mean", p), [0.4, 0.9, 0.35])
    np.testing.assert_allclose(aggregate("median", p), [0.4, 0.9, 0.25])
    np.testing.assert_allclose(aggregate("min", p), [0.2, 0.9, 0.1])
    np.testing.assert_allclose(aggregate("max", p), [0.6, 0.9, 0.8])


def test_geomean_odds_hand_values():
    # odds 0.25 and 1 -> geometric mean 0.5 -> p = 0.5 / 1.5 = 1/3
    np.testing.assert_allclose(geomean_odds([[0.2, 0.5]]), [1 / 3])
    # odds 1/9 and 9 cancel; a missing member is ignored
    np.testing.assert_allclose(geomean_odds([[0.1, 0.9, NAN]]), [0.5])
    # three members: odds 1/4, 1, 4 -> 1 -> 0.5; odds 1, 1, 8 -> 2 -> 2/3
    np.testing.assert_allclose(geomean_odds([[0.2, 0.5, 0.8], [0.5, 0.5, 8 / 9]]), [0.5, 2 / 3])


def test_zero_and_one_members_are_clipped_not_nan():
    out = geomean_odds([[0.0, 0.5], [1.0, 1.0], [0.0, 1.0]])
    odds_eps = LOGIT_EPS / (1 - LOGIT_EPS)
    expected_first = math.sqrt(odds_eps) / (1 + math.sqrt(odds_eps))  # sqrt(odds(1e-4) * 1)
    np.testing.assert_allclose(out, [expected_first, 1 - LOGIT_EPS, 0.5], rtol=1e-12)
    assert np.isfinite(extremized([[0.0, 0.0], [1.0, 1.0]], d=3.0)).all()


def test_extremized_with_d_one_is_the_logit_mean():
    rng = np.random.default_rng(3)
    p = rng.uniform(0.01, 0.99, size=(50, 5))
    p[rng.random(p.shape) < 0.2] = NAN
    p[:, 0] = rng.uniform(0.01, 0.99, size=50)  # at least one member per row
    logit_mean = np.nanmean(logit(p), axis=1)
    np.testing.assert_allclose(extremized(p, d=1.0), expit(logit_mean), rtol=1e-12)
    np.testing.assert_allclose(geomean_odds(p), expit(logit_mean), rtol=1e-12)


def test_extremized_hand_value_and_default_d():
    # logits of 0.6, 0.8 average to ln(6)/2; d=2 gives odds 6 -> 6/7
    np.testing.assert_allclose(extremized([[0.6, 0.8]], d=2.0), [6 / 7])
    # default d=1.5: sigmoid(1.5 * ln(6)/2) = 6**0.75 / (1 + 6**0.75)
    np.testing.assert_allclose(extremized([[0.6, 0.8]]), [6**0.75 / (1 + 6**0.75)])
    assert agg.DEFAULT_EXTREMIZING_FACTOR == 1.5


def test_trimmed_mean_matches_scipy_per_row():
    rng = np.random.default_rng(7)
    p = rng.random((200, 9))
    p[rng.random(p.shape) < 0.3] = NAN
    p[:, 0] = rng.random(200)
    for trim in (0.0, 0.1, 0.2, 0.34, 0.49):
        got = trimmed_mean(p, trim=trim)
        expected = [stats.trim_mean(row[~np.isnan(row)], trim) for row in p]
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_trimmed_mean_hand_value():
    # 5 members, floor(0.2*5)=1 cut each end: mean(0.1, 0.2, 0.3) = 0.2
    np.testing.assert_allclose(trimmed_mean([[1.0, 0.0, 0.3, 0.1, 0.2]]), [0.2])
    with pytest.raises(DataValidationError, match="trim must be in"):
        trimmed_mean([[0.5]], trim=0.5)


@pytest.mark.parametrize("name", list(AGGREGATORS))
def test_all_nan_question_gives_nan_without_warnings(name):
    p = np.array([[0.3, 0.7], [NAN, NAN]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = AGGREGATORS[name](p)
    assert out.shape == (2,)
    assert np.isnan(out[1]) and np.isfinite(out[0])
    assert np.isnan(AGGREGATORS[name](np.empty((3, 0)))).all()


def test_out_of_range_names_row_column_and_value():
    with pytest.raises(DataValidationError, match=r"outside \[0, 1\]: 1\.2 at \(row 1, column 2\)") as err:
        aggregate("mean", [[0.1, 0.2, 0.3], [0.1, NAN, 1.2]])
    assert err.value.row == 1 and err.value.value == 1.2
    assert isinstance(err.value, ValueError) and isinstance(err.value, ReconcileError)
    with pytest.raises(DataValidationError, match=r"-0\.1 at \(row 0, column 0\)"):
        geomean_odds([[-0.1, 0.5]])


def test_one_dimensional_input_is_rejected_with_a_hint():
    with pytest.raises(DataValidationError, match=r"must be 2-D .*got shape \(3,\).*atleast_2d"):
        aggregate("mean", [0.1, 0.2, 0.3])


def test_unknown_method_lists_valid_names():
    with pytest.raises(DataValidationError, match="unknown aggregation method 'avg'; valid: mean, median, min, max, trimmed_mean, geomean_odds, extremized"):
        aggregate("avg", [[0.5]])


def test_aggregate_passes_keyword_arguments():
    np.testing.assert_allclose(aggregate("extremized", [[0.6, 0.8]], d=2.0), [6 / 7])
    np.testing.assert_allclose(aggregate("trimmed_mean", [[0.0, 0.4, 0.6, 1.0]], trim=0.25), [0.5])


def _synthetic_members(rng, n, d_true, n_members=5):
    z = rng.normal(0.0, 1.2, size=n)  # shared signal on the log-odds scale
    members = expit(z[:, None] + rng.normal(0, 0.3, size=(n, n_members)))
    z_mean = logit(members).mean(axis=1)
    outcomes = (rng.random(n) < expit(d_true * z_mean)).astype(int)
    return members, outcomes


def test_fit_extremizing_factor_recovers_known_d():
    rng = np.random.default_rng(2024)
    members, outcomes = _synthetic_members(rng, 20_000, d_true=1.8)
    d = fit_extremizing_factor(members, outcomes)
    assert d == pytest.approx(1.8, abs=0.08)


def test_fit_extremizing_factor_errors():
    with pytest.raises(DataValidationError, match="single class"):
        fit_extremizing_factor([[0.2], [0.7]], [1, 1])
    with pytest.raises(DataValidationError, match="at least 2"):
        fit_extremizing_factor([[0.2]], [1])
    with pytest.raises(DataValidationError, match="row 1 has no member"):
        fit_extremizing_factor([[0.2], [NAN], [0.6]], [0, 1, 1])
    with pytest.raises(DataValidationError, match=r"outcomes must be 0 or 1: 2\.0 at index 1"):
        fit_extremizing_factor([[0.2], [0.4]], [0, 2])


def test_platt_scaling_recovers_known_a_b():
    rng = np.random.default_rng(11)
    x = rng.normal(0.0, 2.0, size=40_000)
    p = expit(x)
    y = (rng.random(x.size) < expit(0.6 * x - 0.7)).astype(int)
    scaler = fit_platt_scaling(p, y)
    assert scaler.a == pytest.approx(0.6, abs=0.03)
    assert scaler.b == pytest.approx(-0.7, abs=0.04)
    # agrees with an unpenalised logistic regression on logit(p)
    sk = pytest.importorskip("sklearn.linear_model")
    lr = sk.LogisticRegression(C=np.inf, tol=1e-10, max_iter=1000).fit(logit(p)[:, None], y)
    assert scaler.a == pytest.approx(lr.coef_[0, 0], abs=1e-4)
    assert scaler.b == pytest.approx(lr.intercept_[0], abs=1e-4)


def test_platt_scaling_weights_count_a_question_as_repeated():
    rng = np.random.default_rng(12)
    x = rng.normal(0.0, 1.5, size=300)
    p = expit(x)
    y = (rng.random(x.size) < expit(0.8 * x + 0.3)).astype(int)
    w = rng.integers(0, 4, size=x.size)  # 0 to 3 copies of each question
    for smoothing in (False, True):
        weighted = fit_platt_scaling(p, y, sample_weight=w, target_smoothing=smoothing)
        repeated = fit_platt_scaling(np.repeat(p, w), np.repeat(y, w), target_smoothing=smoothing)
        assert (weighted.a, weighted.b) == pytest.approx((repeated.a, repeated.b), abs=1e-6)
    # real-valued weights: the weighted logistic regression of sklearn
    w = 0.5 ** (np.arange(x.size)[::-1] / 60)
    s = fit_platt_scaling(p, y, sample_weight=w)
    sk = pytest.importorskip("sklearn.linear_model")
    lr = sk.LogisticRegression(C=np.inf, tol=1e-10, max_iter=1000).fit(logit(p)[:, None], y, sample_weight=w)
    assert (s.a, s.b) == pytest.approx((lr.coef_[0, 0], lr.intercept_[0]), abs=1e-4)
    assert abs(s.a - fit_platt_scaling(p, y).a) > 0.01  # the weights do move the fit
    with pytest.raises(DataValidationError, match=r"sample_weight must be finite and >= 0: -1\.0 at index 1"):
        fit_platt_scaling([0.2, 0.7], [0, 1], sample_weight=[1, -1])
    with pytest.raises(DataValidationError, match="shape"):
        fit_platt_scaling([0.2, 0.7], [0, 1], sample_weight=[1])
    with pytest.raises(DataValidationError, match="0 for every question"):
        fit_platt_scaling([0.2, 0.7], [0, 1], sample_weight=[0, 0])


def test_platt_transform_values_and_nan_passthrough():
    s = PlattScaler(a=2.0, b=math.log(2))
    out = s.transform([0.5, 0.75, NAN])
    # logit(0.75) = ln 3 -> odds 9 * 2 = 18 -> 18/19
    np.testing.assert_allclose(out[:2], [2 / 3, 18 / 19])
    assert np.isnan(out[2])
    with pytest.raises(DataValidationError, match="outside"):
        s.transform([1.5])


def test_platt_errors_and_target_smoothing():
    with pytest.raises(DataValidationError, match="at least 2"):
        fit_platt_scaling([0.3], [1])
    with pytest.raises(DataValidationError, match="single class"):
        fit_platt_scaling([0.3, 0.6, 0.7], [0, 0, 0])
    with pytest.raises(DataValidationError, match="NaN at index 1"):
        fit_platt_scaling([0.3, NAN], [0, 1])
    # perfectly separated data: smoothed targets keep the fit finite and monotone
    s = fit_platt_scaling([0.2, 0.3, 0.7, 0.8], [0, 0, 1, 1], target_smoothing=True)
    assert np.isfinite([s.a, s.b]).all() and s.a > 0


def test_doctests_pass():
    result = doctest.testmod(agg, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 10
    assert result.failed == 0


def test_aggregate_many_equals_each_method_on_ragged_members():
    # questions with 0 to 6 members present, members at exactly 0 and 1, an all-NaN row and a one-member row
    rng = np.random.default_rng(3)
    p = rng.random((200, 6))
    p[rng.random(p.shape) < 0.4] = NAN
    p[rng.random(p.shape) < 0.05] = 0.0
    p[rng.random(p.shape) < 0.05] = 1.0
    p[0] = NAN
    p[1] = [0.3, NAN, NAN, NAN, NAN, NAN]
    got = agg.aggregate_many(p, trim=0.2, d=2.0)
    assert list(got) == list(AGGREGATORS)
    for name, fn in AGGREGATORS.items():
        want = fn(p, d=2.0) if name == "extremized" else fn(p, trim=0.2) if name == "trimmed_mean" else fn(p)
        np.testing.assert_array_equal(got[name], want, err_msg=name)
    # hand values of one question: members 0.2, 0.5, 0.8 (log-odds -1.386, 0, 1.386: geomean 0.5)
    one = agg.aggregate_many([[0.2, 0.5, 0.8]], ["min", "max", "median", "mean", "geomean_odds"])
    assert {k: round(float(v[0]), 6) for k, v in one.items()} == {"min": 0.2, "max": 0.8, "median": 0.5, "mean": 0.5, "geomean_odds": 0.5}


def test_aggregate_many_checks_names_and_parameters():
    with pytest.raises(DataValidationError, match="unknown aggregation method 'mode'"):
        agg.aggregate_many([[0.5]], ["mean", "mode"])
    with pytest.raises(DataValidationError, match="trim must be in"):
        agg.aggregate_many([[0.5]], trim=0.5)
    with pytest.raises(DataValidationError, match=r"outside \[0, 1\]: 1.2 at \(row 0, column 1\)"):
        agg.aggregate_many([[0.5, 1.2]])
    assert np.isnan(agg.aggregate_many(np.empty((2, 0)), ["mean"])["mean"]).all()
