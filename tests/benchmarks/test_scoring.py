"""Scoring: cross-checked against sklearn, hand-computed calibration, exact Murphy decomposition, bootstrap."""

import doctest
import math
import types

import numpy as np
import scipy.stats
import pandas as pd
import pytest
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss
from sklearn.metrics import log_loss as sklearn_log_loss

from agent_schemas.errors import DataValidationError
from benchmarks import scoring
from benchmarks.scoring import bootstrap
from benchmarks.scoring import (
    HORIZON_BUCKETS,
    brier_score,
    brier_skill_score,
    clustered_bootstrap_ci,
    expected_calibration_error,
    horizon_bucket,
    log_loss,
    murphy_decomposition,
    paired_difference_ci,
    reliability_diagram,
    score_summary,
    score_table,
    segment_table,
)


@pytest.fixture(scope="module")
def forecasts():
    rng = np.random.default_rng(42)
    p = rng.beta(0.8, 0.8, size=5000)
    o = (rng.random(p.size) < p**1.3).astype(int)  # slightly miscalibrated
    return p, o


# --- per-question scores against sklearn ------------------------------------------------------------


def test_brier_matches_sklearn(forecasts):
    p, o = forecasts
    per_q = brier_score(p, o)
    assert per_q.shape == p.shape
    assert per_q.mean() == pytest.approx(brier_score_loss(o, p), abs=1e-15)
    np.testing.assert_allclose(brier_score([0.9, 0.2, 0.5], [True, True, False]), [0.01, 0.64, 0.25])


def test_log_loss_matches_sklearn_including_certain_forecasts(forecasts):
    p, o = forecasts
    p = p.copy()
    p[:10] = [0.0, 1.0, 0.0, 1.0, 1e-17, 1 - 1e-17, 0.5, 0.0, 1.0, 1e-300]
    o = o.copy()
    o[:10] = [1, 0, 0, 1, 1, 0, 1, 0, 1, 1]
    per_q = log_loss(p, o)
    assert np.isfinite(per_q).all()
    assert per_q.mean() == pytest.approx(sklearn_log_loss(o, p), rel=1e-12)
    # a certain wrong forecast costs -ln(eps) nats; a certain right one ~0; 0.5 costs ln 2
    assert per_q[0] == pytest.approx(-math.log(np.finfo(float).eps))
    assert per_q[2] == pytest.approx(0.0, abs=1e-15)
    assert per_q[6] == pytest.approx(math.log(2))


def test_log_loss_custom_eps():
    assert log_loss([0.0], [1], eps=1e-4)[0] == pytest.approx(-math.log(1e-4))


# --- calibration -------------------------------------------------------------------------------------


@pytest.mark.parametrize("n_bins", [5, 10, 15])
def test_reliability_table_matches_sklearn_calibration_curve(forecasts, n_bins):
    p, o = forecasts
    table = reliability_diagram(p, o, n_bins=n_bins)
    prob_true, prob_pred = calibration_curve(o, p, n_bins=n_bins, strategy="uniform")
    shown = table[table["count"] > 0]  # sklearn drops empty bins
    np.testing.assert_allclose(shown["observed_frequency"], prob_true, rtol=1e-12)
    np.testing.assert_allclose(shown["mean_p_yes"], prob_pred, rtol=1e-12)
    assert table["count"].sum() == p.size


def test_reliability_table_keeps_empty_bins_and_edges():
    table = reliability_diagram([0.0, 0.05, 1.0, 0.95], [0, 0, 1, 0], n_bins=4)
    assert list(table.columns) == ["bin_lower", "bin_upper", "count", "mean_p_yes", "observed_frequency"]
    assert table["bin_lower"].tolist() == [0.0, 0.25, 0.5, 0.75]
    assert table["bin_upper"].tolist() == [0.25, 0.5, 0.75, 1.0]
    assert table["count"].tolist() == [2, 0, 0, 2]  # 0.0 in the first bin, 1.0 in the last
    assert table.loc[1, ["mean_p_yes", "observed_frequency"]].isna().all()
    np.testing.assert_allclose(table.loc[3, ["mean_p_yes", "observed_frequency"]].to_numpy(float), [0.975, 0.5])


def test_decimal_forecasts_land_in_the_bin_they_name():
    # 0.57 * 100 == 56.99999999999999 in binary floating point; it still belongs to [0.57, 0.58)
    table = reliability_diagram([0.57, 0.3, 0.7], [1, 0, 1], n_bins=100)
    assert table.loc[[30, 57, 70], "count"].tolist() == [1, 1, 1]
    assert reliability_diagram([0.2], [1], n_bins=10)["count"].tolist()[2] == 1  # left-closed [0.2, 0.3)


def test_ece_hand_computed():
    # bins of width 0.25: {0.1, 0.2}: mean p 0.15, freq 0.5 -> |.|=0.35, weight 2/5
    #                      {0.6}: 0.6 vs 1 -> 0.4, weight 1/5;  {0.8, 1.0}: 0.9 vs 0.5 -> 0.4, weight 2/5
    ece = expected_calibration_error([0.1, 0.2, 0.6, 0.8, 1.0], [0, 1, 1, 1, 0], n_bins=4)
    assert ece == pytest.approx(0.4 * 0.35 + 0.2 * 0.4 + 0.4 * 0.4, abs=1e-15)
    assert expected_calibration_error([0.0, 1.0], [0, 1]) == 0.0


def test_ece_equals_weighted_gap_of_the_reliability_table(forecasts):
    p, o = forecasts
    t = reliability_diagram(p, o, n_bins=10).dropna()
    expected = (t["count"] * (t["mean_p_yes"] - t["observed_frequency"]).abs()).sum() / p.size
    assert expected_calibration_error(p, o, n_bins=10) == pytest.approx(expected, abs=1e-14)


# --- Murphy decomposition ---------------------------------------------------------------------------


@pytest.mark.parametrize("n_bins", [1, 3, 10, 20])
def test_murphy_decomposition_sums_exactly(forecasts, n_bins):
    p, o = forecasts
    m = murphy_decomposition(p, o, n_bins=n_bins)
    assert m.brier == pytest.approx(brier_score_loss(o, p), abs=1e-15)
    total = m.reliability - m.resolution + m.uncertainty + m.within_bin_variance - 2 * m.within_bin_covariance
    assert abs(total - m.brier) < 1e-12
    assert abs(m.total() - m.brier) < 1e-12
    assert m.within_bin == pytest.approx(m.within_bin_variance - 2 * m.within_bin_covariance)
    assert m.uncertainty == pytest.approx(o.mean() * (1 - o.mean()))


def test_murphy_hand_computed_and_three_term_special_case():
    # forecasts constant within bins: Murphy (1973) three terms, within-bin terms vanish
    p = [0.25, 0.25, 0.25, 0.75, 0.75]
    o = [0, 0, 1, 1, 1]
    m = murphy_decomposition(p, o, n_bins=2)
    obar = 3 / 5
    rel = (3 * (0.25 - 1 / 3) ** 2 + 2 * (0.75 - 1.0) ** 2) / 5
    res = (3 * (1 / 3 - obar) ** 2 + 2 * (1.0 - obar) ** 2) / 5
    assert m.reliability == pytest.approx(rel, abs=1e-15)
    assert m.resolution == pytest.approx(res, abs=1e-15)
    assert m.uncertainty == pytest.approx(0.24, abs=1e-15)
    assert m.within_bin_variance == pytest.approx(0.0, abs=1e-15)
    assert m.within_bin_covariance == pytest.approx(0.0, abs=1e-15)
    assert m.brier == pytest.approx(rel - res + 0.24, abs=1e-15)
    # spread within one bin: WBV = mean((p - pbar)^2), WBC = mean((p - pbar)(o - obar_k))
    m2 = murphy_decomposition([0.1, 0.3], [0, 1], n_bins=1)
    assert m2.within_bin_variance == pytest.approx(0.01)
    assert m2.within_bin_covariance == pytest.approx(0.05)
    assert m2.brier == pytest.approx((0.01 + 0.49) / 2)


def test_brier_skill_score_scalar_array_and_base_rate(forecasts):
    p, o = forecasts
    base_rate = o.mean()
    bss = brier_skill_score(p, o, reference=base_rate)
    assert bss == pytest.approx(1 - brier_score_loss(o, p) / (base_rate * (1 - base_rate)), rel=1e-12)
    m = murphy_decomposition(p, o)
    assert bss == pytest.approx((m.resolution - m.reliability - m.within_bin) / m.uncertainty, rel=1e-10)
    assert brier_skill_score([0.9, 0.2], [1, 0], reference=[0.5, 0.5]) == pytest.approx(1 - 0.025 / 0.25)
    with pytest.raises(DataValidationError, match="Brier score 0"):
        brier_skill_score([0.5, 0.5], [1, 0], reference=[1.0, 0.0])
    with pytest.raises(DataValidationError, match=r"reference has values outside \[0, 1\]: 2\.0 at index 0"):
        brier_skill_score([0.5], [1], reference=2.0)


def test_score_summary_equals_the_separate_functions(forecasts):
    p, o = forecasts
    s = score_summary(p, o, n_bins=10)
    assert s.n == p.size
    assert s.brier == pytest.approx(brier_score(p, o).mean(), abs=1e-15)
    assert s.log_loss == pytest.approx(log_loss(p, o).mean(), abs=1e-14)
    assert s.ece == expected_calibration_error(p, o)
    pd.testing.assert_frame_equal(s.reliability_table, reliability_diagram(p, o))
    assert s.murphy == murphy_decomposition(p, o)
    np.testing.assert_array_equal(s.brier_scores, brier_score(p, o))


# --- validation --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "p, o, message",
    [
        ([0.1, 0.2, 0.3, 1.198], [0, 1, 0, 1], r"p_yes has values outside \[0, 1\]: 1\.198 at index 3"),
        ([0.1, -0.5], [0, 1], r"p_yes has values outside \[0, 1\]: -0\.5 at index 1"),
        ([0.1, np.nan], [0, 1], r"p_yes has NaN at index 1"),
        ([0.1, 0.2, 0.3], [0, 1, 2], r"outcomes must be 0 or 1: 2\.0 at index 2"),
        ([0.1, 0.2], [0.5, 1], r"outcomes must be 0 or 1: 0\.5 at index 0"),
        ([0.1, 0.2], [1, np.nan], r"outcomes has NaN at index 1"),
        ([0.1, 0.2], [1, 0, 1], r"same shape: \(2,\) vs \(3,\)"),
        ([[0.1, 0.2]], [[1, 0]], r"p_yes must be 1-D"),
        ([], [], r"empty"),
    ],
)
def test_validation_names_index_and_value(p, o, message):
    for fn in (brier_score, log_loss, expected_calibration_error, reliability_diagram, murphy_decomposition, score_summary):
        with pytest.raises(DataValidationError, match=message) as err:
            fn(p, o)
        assert isinstance(err.value, ValueError)


def test_bad_n_bins():
    with pytest.raises(DataValidationError, match="n_bins must be a positive integer; got 0"):
        expected_calibration_error([0.5], [1], n_bins=0)


# --- bootstrap ---------------------------------------------------------------------------------------


def test_bootstrap_contains_mean_and_is_reproducible(forecasts):
    p, o = forecasts
    scores = brier_score(p, o)
    clusters = np.arange(scores.size) // 10
    ci = clustered_bootstrap_ci(scores, clusters, n_resamples=500, seed=3)
    assert ci.mean == pytest.approx(scores.mean())
    assert ci.low < ci.mean < ci.high
    assert clustered_bootstrap_ci(scores, clusters, n_resamples=500, seed=3) == ci
    assert clustered_bootstrap_ci(scores, clusters, n_resamples=500, seed=4) != ci
    wider = clustered_bootstrap_ci(scores, clusters, n_resamples=500, confidence=0.99, seed=3)
    assert wider.low <= ci.low and wider.high >= ci.high


def test_bootstrap_matches_a_naive_loop():
    rng = np.random.default_rng(5)
    scores = rng.random(60)
    clusters = rng.integers(0, 12, size=60).astype(str)
    ci = clustered_bootstrap_ci(scores, clusters, n_resamples=300, confidence=0.9, seed=9, interval="expanded")
    # oracle: the same draws of cluster indices, statistic computed by concatenating the drawn clusters
    codes, uniques = pd.factorize(clusters)
    members = [scores[codes == c] for c in range(len(uniques))]
    stats = []
    for _, rows, gen in bootstrap._resample_blocks(len(uniques), 300, seed=9):
        for row in gen.integers(0, len(uniques), size=(rows, len(uniques))):
            stats.append(np.concatenate([members[c] for c in row]).mean())
    assert len(stats) == 300
    # the expanded percentile interval (Hesterberg 2015) at 90%: the tail is Phi(-sqrt(G/(G-1)) t_{G-1}(0.95))
    g = len(uniques)
    tail = scipy.stats.norm.cdf(-np.sqrt(g / (g - 1)) * scipy.stats.t.ppf(0.95, g - 1))
    assert g == 12 and tail == pytest.approx(0.0303, abs=1e-4)  # t_11(0.95) = 1.796; x sqrt(12/11): 1.876
    low, high = np.quantile(stats, [tail, 1 - tail])
    assert ci.low == pytest.approx(low, abs=1e-12)
    assert ci.high == pytest.approx(high, abs=1e-12)
    plain = clustered_bootstrap_ci(scores, clusters, n_resamples=300, confidence=0.9, seed=9, interval="percentile")
    assert (plain.low, plain.high) == pytest.approx(tuple(np.quantile(stats, [0.05, 0.95])), abs=1e-12)
    assert ci.low < plain.low and plain.high < ci.high
    # the hybrid (the default): the smallest interval holding the expanded one, the t interval with the bootstrap
    # standard error, and Hall's skewness-corrected t interval, each computed here by hand
    hybrid = clustered_bootstrap_ci(scores, clusters, n_resamples=300, confidence=0.9, seed=9)
    q = scipy.stats.t.ppf(0.95, g - 1)
    m = scores.mean()
    half = q * np.sqrt(g / (g - 1)) * np.std(stats, ddof=1)
    sums = np.array([x.sum() for x in members])
    counts = np.array([x.size for x in members])
    u = (sums - m * counts) / (counts.sum() / g)
    se = np.sqrt(g / (g - 1) * (u ** 2).sum()) / g
    gamma = np.mean(u ** 3) / np.mean(u ** 2) ** 1.5
    a, b = gamma / (3 * np.sqrt(g)), gamma / (6 * np.sqrt(g))
    hall = [m - (np.cbrt(1 + 3 * a * (y - b)) - 1) / a * se for y in (q, -q)]
    assert hybrid.low == pytest.approx(max(min(low, m - half, hall[0]), scores.min()), abs=1e-12)
    assert hybrid.high == pytest.approx(min(max(high, m + half, hall[1]), scores.max()), abs=1e-12)
    assert hybrid.low <= ci.low and ci.high <= hybrid.high
    # cut to the scores' range: a right-skewed Brier on few clusters never reads a negative lower bound
    skewed = np.r_[np.zeros(9), 0.9, 0.01, 0.04]
    cut = clustered_bootstrap_ci(skewed, np.arange(12), n_resamples=300, seed=1)
    assert cut.low == 0.0 and cut.high > cut.mean


def test_the_skew_corrected_interval_is_longer_on_the_skewed_side_and_symmetric_without_skew():
    from benchmarks.scoring.bootstrap import skew_corrected_t
    q = scipy.stats.t.ppf(0.975, 9)
    symmetric = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.5, 0.6, 0.7, 0.8, 0.9])  # skewness 0: the plain t interval
    low, high = skew_corrected_t(symmetric, np.ones(10), q)
    se = symmetric.std(ddof=1) / np.sqrt(10)
    assert (low, high) == pytest.approx((0.5 - q * se, 0.5 + q * se), abs=1e-12)
    right = np.array([0.1, 0.0, 0.2, 0.1, 0.0, 0.1, 0.3, 0.0, 0.1, 2.0])
    low, high = skew_corrected_t(right, np.ones(10), q)
    assert high - right.mean() > 1.5 * (right.mean() - low)
    low_l, high_l = skew_corrected_t(-right, np.ones(10), q)  # mirrored data: the mirrored interval
    assert (low_l, high_l) == pytest.approx((-high, -low), abs=1e-12)


def test_bootstrap_is_independent_of_threading(monkeypatch):
    rng = np.random.default_rng(12)
    scores = rng.random(3000)
    clusters = np.arange(3000) // 3  # 1000 clusters -> several blocks of draws
    monkeypatch.setattr(bootstrap, "_DRAWS_PER_BLOCK", 2**14)
    monkeypatch.setattr(bootstrap, "_PARALLEL_MIN_DRAWS", 1)
    threaded = clustered_bootstrap_ci(scores, clusters, n_resamples=200, seed=4)
    monkeypatch.setattr(bootstrap, "_MAX_THREADS", 1)
    assert clustered_bootstrap_ci(scores, clusters, n_resamples=200, seed=4) == threaded
    # and the interval is the textbook one: about mean +- 1.96 standard errors of the cluster means
    se = scores.reshape(1000, 3).mean(axis=1).std(ddof=1) / np.sqrt(1000)
    assert threaded.high - threaded.low == pytest.approx(2 * 1.96 * se, rel=0.15)


def test_identical_scores_within_clusters_equal_the_unclustered_bootstrap():
    rng = np.random.default_rng(8)
    s = rng.random(40)
    clustered = clustered_bootstrap_ci(np.repeat(s, 5), np.repeat(np.arange(40), 5), n_resamples=400, seed=1)
    plain = clustered_bootstrap_ci(s, np.arange(40), n_resamples=400, seed=1)
    assert clustered.low == pytest.approx(plain.low, abs=1e-12)
    assert clustered.high == pytest.approx(plain.high, abs=1e-12)
    # treating the 200 copies as independent questions understates the uncertainty
    naive = clustered_bootstrap_ci(np.repeat(s, 5), np.arange(200), n_resamples=400, seed=1)
    assert naive.high - naive.low < 0.7 * (clustered.high - clustered.low)


def test_integer_labels_with_gaps_equal_string_labels():
    scores = np.array([0.1, 0.4, 0.2, 0.9, 0.5, 0.3])
    by_int = clustered_bootstrap_ci(scores, [10, 10, 30, 30, 500, 500], n_resamples=300, seed=7, min_clusters=3)
    by_str = clustered_bootstrap_ci(scores, ["a", "a", "b", "b", "c", "c"], n_resamples=300, seed=7, min_clusters=3)
    assert not np.isnan(by_int.low)
    assert by_int == by_str


def test_too_few_clusters_give_no_interval_never_a_zero_width_one():
    ci = clustered_bootstrap_ci([0.1, 0.3], ["a", "a"], n_resamples=20)
    assert ci.mean == pytest.approx(0.2) and np.isnan(ci.low) and np.isnan(ci.high)
    nine = clustered_bootstrap_ci(np.linspace(0, 1, 18), np.arange(18) // 2, n_resamples=50)  # 9 clusters < 10
    assert np.isnan(nine.low) and np.isnan(nine.high)
    ten = clustered_bootstrap_ci(np.linspace(0, 1, 20), np.arange(20) // 2, n_resamples=50)
    assert ten.low < ten.mean < ten.high
    d = paired_difference_ci([0.1, 0.2, 0.1], [0.2, 0.3, 0.3], [0, 1, 2], n_resamples=50)
    assert np.isnan(d.low) and d.mean == pytest.approx(-0.4 / 3)
    t = score_table(pd.DataFrame({"method": ["m"] * 3, "question_id": [1, 2, 3], "p_yes": [0.1, 0.5, 0.9],
                                  "outcome": [0, 1, 1], "cluster": ["a", "a", "b"]}), baseline=None, n_resamples=20)
    assert t.loc[0, "n_clusters"] == 2 and np.isnan(t.loc[0, "brier_ci_low"])
    assert t.loc[0, "interval_note"] == "no interval: 2 clusters < 10"
    # a caller's lower floor never reaches one cluster: nothing to resample (it divided by zero before)
    for floor in (0, 1):
        one = clustered_bootstrap_ci([0.1, 0.3], ["a", "a"], n_resamples=20, min_clusters=floor)
        assert one.mean == pytest.approx(0.2) and np.isnan(one.low) and np.isnan(one.high)
        assert np.isnan(paired_difference_ci([0.1], [0.2], ["a"], n_resamples=20, min_clusters=floor).low)
    two = clustered_bootstrap_ci([0.1, 0.3], ["a", "b"], n_resamples=200, min_clusters=1)
    assert 0.1 <= two.low <= two.high <= 0.3


def test_paired_difference_uses_the_same_resample():
    rng = np.random.default_rng(6)
    a = rng.random(300)
    b = a + 0.05 + rng.normal(0, 0.01, size=300)
    clusters = np.arange(300) // 3
    d = paired_difference_ci(a, b, clusters, n_resamples=400, seed=2)
    assert d == clustered_bootstrap_ci(a - b, clusters, n_resamples=400, seed=2)
    assert d.high < 0  # a is clearly better, which the paired design detects
    assert d.mean == pytest.approx(a.mean() - b.mean())
    with pytest.raises(DataValidationError, match="same shape"):
        paired_difference_ci(a, b[:-1], clusters)


def test_bootstrap_validation():
    with pytest.raises(DataValidationError, match=r"scores has a non-finite value nan at index 1"):
        clustered_bootstrap_ci([0.1, np.nan], [0, 1])
    with pytest.raises(DataValidationError, match=r"clusters has a missing label at index 0"):
        clustered_bootstrap_ci([0.1, 0.2], [None, "a"])
    with pytest.raises(DataValidationError, match=r"clusters must have shape \(2,\)"):
        clustered_bootstrap_ci([0.1, 0.2], [1])
    with pytest.raises(DataValidationError, match="confidence must be in"):
        clustered_bootstrap_ci([0.1], [1], confidence=95)
    with pytest.raises(DataValidationError, match="n_resamples must be a positive integer"):
        clustered_bootstrap_ci([0.1], [1], n_resamples=0)


# --- tables ------------------------------------------------------------------------------------------


def _long_frame():
    # question 4 unanswered by "min"; question 5 unresolved
    return pd.DataFrame({
        "method": ["mean"] * 5 + ["min"] * 5,
        "question_id": ["q1", "q2", "q3", "q4", "q5"] * 2,
        "p_yes": [0.8, 0.3, 0.6, 0.9, 0.5, 0.6, 0.1, 0.2, np.nan, 0.4],
        "outcome": [1, 0, 1, 1, np.nan] * 2,
        "cluster": ["a", "a", "b", "c", "c"] * 2,
    })


def test_score_table_hand_values():
    raw = score_table(_long_frame(), n_resamples=200, seed=0, min_clusters=1)
    assert raw["method"].tolist() == ["mean", "min"] and list(raw.index) == [0, 1]
    assert list(raw.columns[:4]) == ["method", "n", "n_missing", "n_unresolved"]
    t = raw.set_index("method")
    mean_b = [0.04, 0.09, 0.16, 0.01]
    min_b = [0.16, 0.01, 0.64]
    assert t.loc["mean", "n"] == 4 and t.loc["min", "n"] == 3
    assert t.loc["min", "n_missing"] == 1 and t.loc["mean", "n_missing"] == 0
    assert t.loc["min", "n_unresolved"] == 1
    assert t.loc["mean", "brier"] == pytest.approx(np.mean(mean_b))
    assert t.loc["min", "brier"] == pytest.approx(np.mean(min_b))
    # deltas only on the questions both answered: q1..q3
    assert t.loc["min", "n_common"] == 3
    assert t.loc["min", "delta_brier_vs_baseline"] == pytest.approx(np.mean(min_b) - np.mean(mean_b[:3]))
    assert t.loc["min", "brier_skill_vs_baseline"] == pytest.approx(1 - np.mean(min_b) / np.mean(mean_b[:3]))
    assert t.loc["mean", "delta_brier_vs_baseline"] == 0.0
    assert t.loc["min", "delta_brier_ci_low"] <= t.loc["min", "delta_brier_vs_baseline"] <= t.loc["min", "delta_brier_ci_high"]
    assert t.loc["mean", "brier_ci_low"] <= t.loc["mean", "brier"] <= t.loc["mean", "brier_ci_high"]
    p = np.array([0.8, 0.3, 0.6, 0.9])
    o = np.array([1, 0, 1, 1])
    assert t.loc["mean", "log_loss"] == pytest.approx(sklearn_log_loss(o, p))
    m = murphy_decomposition(p, o)
    assert t.loc["mean", "reliability"] == pytest.approx(m.reliability)
    assert t.loc["mean", "within_bin"] == pytest.approx(m.within_bin)
    assert t.loc["mean", "brier_skill_vs_in_sample_rate"] == pytest.approx(brier_skill_score(p, o, o.mean()))


def test_score_table_is_reproducible_and_without_baseline():
    df = _long_frame()
    pd.testing.assert_frame_equal(score_table(df, n_resamples=100, seed=1), score_table(df, n_resamples=100, seed=1))
    t = score_table(df.rename(columns={"method": "label"}), method_col="label", baseline=None, cluster_col=None, n_resamples=50)
    assert t["label"].tolist() == ["mean", "min"]
    assert t["delta_brier_vs_baseline"].isna().all()


def test_score_table_accepts_nullable_and_object_columns():
    df = _long_frame()
    df["outcome"] = pd.array([1, 0, 1, 1, None] * 2, dtype="Int64")
    df["p_yes"] = df["p_yes"].astype(object).where(df["p_yes"].notna(), None)
    pd.testing.assert_frame_equal(score_table(df, n_resamples=50), score_table(_long_frame(), n_resamples=50))


def test_score_table_errors():
    df = _long_frame()
    with pytest.raises(DataValidationError, match="baseline 'median' is not among the methods"):
        score_table(df, baseline="median")
    with pytest.raises(DataValidationError, match=r"cluster_col='family' is not a column"):
        score_table(df, cluster_col="family")
    dup = pd.concat([df, df.iloc[[0]]], ignore_index=True)
    with pytest.raises(DataValidationError, match="duplicated \\(method, question\\) row at position 10: 'mean', 'q1'"):
        score_table(dup)
    no_cluster = df.copy()
    no_cluster.loc[3, "cluster"] = None
    with pytest.raises(DataValidationError, match="cluster has a missing value at row 3"):
        score_table(no_cluster)
    bad = df.copy()
    bad.loc[7, "p_yes"] = 1.5
    with pytest.raises(DataValidationError, match=r"p_yes has values outside \[0, 1\]: 1\.5 at row 7"):
        score_table(bad)


def test_horizon_bucket():
    assert [horizon_bucket(d) for d in (0, 7, 7.5, 30, 31, 90, 91, 180, 181)] == [
        "<=7d", "<=7d", "8-30d", "8-30d", "31-90d", "31-90d", "91-180d", "91-180d", ">180d"]
    cat = horizon_bucket([400, np.nan, 3])
    assert list(cat.categories) == list(HORIZON_BUCKETS) and cat.ordered
    assert cat[0] == ">180d" and pd.isna(cat[1]) and cat[2] == "<=7d"
    assert horizon_bucket(float("nan")) is None
    with pytest.raises(DataValidationError, match=r"days must be >= 0: -1\.0 at index 1"):
        horizon_bucket([3, -1])


def test_segment_table():
    df = _long_frame()
    df["horizon"] = horizon_bucket([3, 40, 40, 200, 3] * 2)
    flat = segment_table(df, "horizon", n_resamples=50)
    assert list(flat.columns[:2]) == ["horizon", "method"]
    assert flat["horizon"].drop_duplicates().tolist() == ["<=7d", "31-90d", ">180d"]  # ordered, empty dropped
    t = flat.set_index(["horizon", "method"])
    assert t.loc[("31-90d", "mean"), "brier"] == pytest.approx((0.09 + 0.16) / 2)
    assert t.loc[(">180d", "min"), "n"] == 0  # only an unanswered forecast in that segment
    assert t.loc[(">180d", "min"), "n_missing"] == 1
    # a segment lacking the baseline gets NaN deltas instead of an error
    only_min = df[~((df["method"] == "mean") & (df["horizon"] == "<=7d"))]
    t2 = segment_table(only_min, "horizon", n_resamples=20).set_index(["horizon", "method"])
    assert np.isnan(t2.loc[("<=7d", "min"), "delta_brier_vs_baseline"])
    assert t2.loc[("31-90d", "min"), "delta_brier_vs_baseline"] == pytest.approx((0.01 + 0.64 - 0.09 - 0.16) / 2)


def test_doctests_pass():
    import importlib

    attempted = 0
    for name in ("rules", "calibration", "summary", "bootstrap", "tables"):
        result = doctest.testmod(importlib.import_module(f"benchmarks.scoring.{name}"), optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0, name
        attempted += result.attempted
    assert attempted >= 10


def test_log_score_is_a_deprecated_alias_of_log_loss():
    p, o = [0.5, 0.8, 0.0], [1, 0, 0]
    with pytest.warns(DeprecationWarning, match="use log_loss"):
        assert scoring.log_score(p, o).tolist() == log_loss(p, o).tolist()
    s = score_summary(p, o)
    with pytest.warns(DeprecationWarning, match="use log_loss"):
        assert s.log_score == s.log_loss == pytest.approx((math.log(2) + math.log(5)) / 3)
    with pytest.warns(DeprecationWarning, match="LOG_LOSS_EPS"):
        assert scoring.LOG_SCORE_EPS == scoring.LOG_LOSS_EPS


def test_public_api_is_the_contract():
    submodules = {name for name in dir(scoring) if isinstance(getattr(scoring, name), types.ModuleType)}
    assert {"betting", "bootstrap", "calibration", "rules", "summary", "tables", "validation"} <= submodules
    assert set(scoring.__all__) == {name for name in dir(scoring) if not name.startswith("_")} - submodules
    assert "log_loss" in score_table(pd.DataFrame({"method": ["m"], "question_id": [1], "p_yes": [0.5], "outcome": [1]}),
                                     cluster_col=None, baseline=None, n_resamples=10).columns
