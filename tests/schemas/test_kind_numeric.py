"""The numeric kind (agent_schemas.kinds.numeric): the grid CDF, reading percentiles, the pools and the scores,
against hand-computed values and oracles (scoringrules, numerical integration, brute-force quantile averaging)."""

from __future__ import annotations

import datetime as dt
import json
import math

import numpy as np
import pytest
import scoringrules as sr
from scipy import integrate, stats

from agent_schemas.errors import DataValidationError, ForecastParseError
from agent_schemas.kinds import KINDS, NUMERIC, NumericSpec, kind_of
from agent_schemas.kinds.numeric import grid, pools, scores
from agent_schemas.kinds.numeric.answers import FIELDS, cdf_from_percentiles
from agent_schemas.questions import Question

T = grid.LOCATIONS
CLOSED = NumericSpec(lower=0, upper=100, unit="USD")
OPEN = NumericSpec(lower=0, upper=100, open_lower=True, open_upper=True, unit="USD")
OPEN_UPPER = NumericSpec(lower=0, upper=2000, open_upper=True, unit="admissions")
LOG = NumericSpec(lower=1, upper=1000, log_scale=True)
LOG_OPEN = NumericSpec(lower=1, upper=1000, log_scale=True, open_lower=True)


def answer(*values) -> dict:
    return dict(zip(FIELDS, values))


def knots_cdf(xs, ys, shift=0.0) -> np.ndarray:
    """A grid CDF linear between knots (closed bounds), shifted right by ``shift`` in location."""
    return np.interp(T - shift, xs, ys)


def random_cdfs(rng, spec, n) -> np.ndarray:
    """``n`` CDFs of random stated percentiles (inside any closed bound)."""
    centre = rng.uniform(-20, 120, size=(n, 1))
    values = np.sort(centre + rng.normal(0, rng.uniform(2, 60, size=(n, 1)), size=(n, 7)), axis=1)
    lo = -np.inf if spec.open_lower else spec.lower
    hi = np.inf if spec.open_upper else spec.upper
    return cdf_from_percentiles(spec, np.clip(values, lo, hi))


# --- the grid ------------------------------------------------------------------------------------------


def test_grid_values_are_linear_or_geometric_and_locations_invert_them():
    assert grid.grid_values(CLOSED)[[0, 1, 100, 200]].tolist() == [0.0, 0.5, 50.0, 100.0]
    log_values = grid.grid_values(LOG)
    assert log_values[0] == 1 and log_values[-1] == 1000
    assert log_values[[100, 134]] == pytest.approx([math.sqrt(1000), 1000 ** (134 / 200)])
    assert grid.location_of(LOG, 100.0) == pytest.approx(2 / 3)
    assert grid.location_of(CLOSED, [-10, 25]).tolist() == [-0.1, 0.25]
    assert grid.value_at(LOG, grid.location_of(LOG, 42.0)) == pytest.approx(42.0)


def test_uninformed_is_metaculus_baseline_and_scores_zero_baseline():
    assert np.allclose(NUMERIC.uninformed(CLOSED), T)
    u = NUMERIC.uninformed(OPEN)
    assert (u[0], u[100], u[-1]) == pytest.approx((0.05, 0.5, 0.95))
    NUMERIC.check_forecast(OPEN, u)
    for spec, outcome in ((OPEN, -5.0), (OPEN, 37.2), (OPEN, 250.0), (CLOSED, 99.9), (OPEN_UPPER, 2001.0)):
        s = NUMERIC.score([spec], [NUMERIC.uninformed(spec)], [outcome])
        assert s["baseline_score"][0] == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize(("t", "bucket"), [
    (-0.1, 0), (0.0, 1), (0.004, 1), (0.005, 2), (0.5, 101), (0.9951, 200), (1.0, 200), (1.000001, 201), (float("nan"), -1),
])
def test_bucket_of_follows_metaculus(t, bucket):
    assert grid.bucket_of(np.array([t])).tolist() == [bucket]


def _decreasing():
    f = T.copy()
    f[50] = f[49] - 0.01
    return f


@pytest.mark.parametrize(("spec", "values", "words"), [
    (CLOSED, T[:-1], "201 values"),
    (CLOSED, np.r_[T[:100], np.nan, T[101:]], "not a number at position 100"),
    (CLOSED, np.r_[T[:-1], 1.2], "outside [0, 1] at position 200: 1.2"),
    (OPEN, np.r_[-0.01, T[1:] * 0.9], "outside [0, 1] at position 0: -0.01"),
    (CLOSED, _decreasing(), "decreases at position 50"),
    (CLOSED, np.r_[0.01, np.maximum(T[1:], 0.01)], "lower bound is closed"),
    (CLOSED, T * 0.99, "upper bound is closed"),
    (OPEN, 0.0005 + T * 0.99, "at least 0.001"),
    (OPEN, 0.01 + T * 0.9895, "at most 0.999"),
    (CLOSED, ["a"] * 201, "must be 201 numbers"),
])
def test_check_forecast_refuses_bad_cdfs(spec, values, words):
    with pytest.raises(DataValidationError) as err:
        NUMERIC.check_forecast(spec, values, name="crowd_forecast")
    assert words in str(err.value)
    assert "crowd_forecast" in str(err.value)


def test_check_forecast_removes_only_float_noise():
    f = T.copy()
    f[50] = f[49] - 1e-12
    f[-1] = 1 + 1e-12
    out = NUMERIC.check_forecast(CLOSED, f)
    assert np.all(np.diff(out) >= 0) and out[-1] == 1.0
    assert np.max(np.abs(out - f)) <= 1e-9


def test_question_checks_its_numeric_outcome_and_crowd_forecast():
    q = Question(id="q", text="How many?", forecast_date=dt.date(2025, 1, 1), spec=OPEN_UPPER, outcome=2500,
                 crowd_forecast=NUMERIC.uninformed(OPEN_UPPER).tolist())
    assert q.outcome == 2500.0 and kind_of(q.spec) is NUMERIC and KINDS["numeric"] is NUMERIC
    with pytest.raises(ValueError, match="below the closed lower bound 0"):
        Question(id="q", text="How many?", forecast_date=dt.date(2025, 1, 1), spec=OPEN_UPPER, outcome=-1)


@pytest.mark.parametrize(("spec", "outcome", "words"), [
    (CLOSED, -0.5, "below the closed lower bound"),
    (CLOSED, 100.5, "above the closed upper bound"),
    (LOG, 0.5, "below the closed lower bound"),
    (LOG_OPEN, 0.0, "must be > 0"),
    (CLOSED, float("nan"), "finite"),
    (CLOSED, True, "must be a number"),
    (CLOSED, "12", "must be a number"),
])
def test_check_outcome_refuses(spec, outcome, words):
    with pytest.raises(ValueError, match=words):
        NUMERIC.check_outcome(spec, outcome)


def test_outcome_beyond_an_open_bound_and_at_a_closed_bound_are_accepted():
    assert NUMERIC.check_outcome(OPEN, -1e6) == -1e6
    assert NUMERIC.check_outcome(CLOSED, 100) == 100.0
    assert NUMERIC.outcome_text(OPEN_UPPER, 1234.5) == "1,234.5 admissions"


# --- answers -------------------------------------------------------------------------------------------


def test_cdf_from_stated_percentiles_by_hand_closed_bounds():
    f = NUMERIC.read_answer(CLOSED, answer(10, 20, 30, 50, 70, 80, 90))
    # knots (0,0) (0.1,.05) (0.2,.1) (0.3,.25) (0.5,.5) (0.7,.75) (0.8,.9) (0.9,.95) (1,1); then 0.99 F + 0.01 t
    assert f[[0, 10, 30, 80, 100, 190, 200]] == pytest.approx(
        [0.0, 0.99 * 0.025 + 0.0005, 0.99 * 0.075 + 0.0015, 0.99 * 0.375 + 0.004, 0.5, 0.99 * 0.975 + 0.0095, 1.0])


def test_cdf_from_stated_percentiles_by_hand_open_bounds():
    f = NUMERIC.read_answer(OPEN, answer(20, 30, 40, 50, 60, 70, 80))
    # open bounds with stated values inside: knots (0, 0.025) and (1, 0.975); then 0.988 F + 0.01 t + 0.001
    assert f[0] == pytest.approx(0.988 * 0.025 + 0.001)
    assert f[20] == pytest.approx(0.988 * 0.0375 + 0.001 + 0.001)
    assert f[-1] == pytest.approx(0.988 * 0.975 + 0.011)
    # the 5th percentile beyond the open lower bound: F_0 interpolates between the stated points around it
    g = NUMERIC.read_answer(NumericSpec(lower=0, upper=100, open_lower=True), answer(-10, 10, 30, 50, 70, 80, 90))
    assert g[0] == pytest.approx(0.989 * 0.075 + 0.001)
    assert g[-1] == 1.0


def test_equal_percentiles_are_a_point_mass_in_the_bin_of_their_value():
    count = NumericSpec(lower=0, upper=10)
    f = NUMERIC.read_answer(count, answer(0, 0, 0, 1, 2, 3, 4))
    assert f[0] == 0.0  # nothing below the closed bound: the 25% at 0 sits in the first bin, where an outcome of 0 lands
    assert f[1] == pytest.approx(0.99 * (0.25 + 0.25 * 0.05) + 0.01 * 0.005)
    lq = NUMERIC.outcome_log_probability([count], [f], [0.0])
    assert math.exp(lq[0]) == pytest.approx(f[1])


def test_log_scale_percentiles_are_linear_in_log_value():
    median = 1000 ** 0.67  # on grid point 134
    f = NUMERIC.read_answer(LOG, answer(2, 5, 20, median, 300, 600, 800))
    assert f[134] == pytest.approx(0.99 * 0.5 + 0.01 * 0.67)
    t25 = math.log(20) / math.log(1000)
    assert f[120] == pytest.approx(0.99 * (0.25 + 0.25 * (0.6 - t25) / (0.67 - t25)) + 0.01 * 0.6)


def test_read_answer_returns_none_without_percentiles_and_reads_numeric_strings():
    assert NUMERIC.read_answer(CLOSED, {"p_yes": 0.3}) is None
    assert NUMERIC.read_answer(CLOSED, {f: None for f in FIELDS}) is None
    a = NUMERIC.read_answer(OPEN_UPPER, answer(900, "1,000", 1100, 1200, 1350, 1500, 1600))
    b = NUMERIC.read_answer(OPEN_UPPER, answer(900.0, 1000, 1100, 1200, 1350, 1500, 1600))
    c = NUMERIC.read_answer(OPEN_UPPER, answer(900, 1000, 1100, 1300, 1350, 1500, 1600))
    assert NUMERIC.answers_agree(OPEN_UPPER, a, b) and not NUMERIC.answers_agree(OPEN_UPPER, a, c)


@pytest.mark.parametrize(("spec", "obj", "field", "words"), [
    (CLOSED, {f: 50 for f in FIELDS[:-1]}, "percentile_95", "missing: percentile_95"),
    (CLOSED, answer(10, 20, "about 30", 50, 70, 80, 90), "percentile_25", "not a number"),
    (CLOSED, answer(10, 20, True, 50, 70, 80, 90), "percentile_25", "boolean"),
    (CLOSED, answer(10, 20, float("nan"), 50, 70, 80, 90), "percentile_25", "finite"),
    (CLOSED, answer(10, 20, 30, 50, 40, 80, 90), "percentile_75", "must not decrease"),
    (CLOSED, answer(-1, 20, 30, 50, 70, 80, 90), "percentile_5", "below the closed lower bound"),
    (CLOSED, answer(10, 20, 30, 50, 70, 80, 101), "percentile_95", "above the closed upper bound"),
    (LOG_OPEN, answer(0, 2, 3, 5, 7, 8, 9), "percentile_5", "must be > 0"),
    (LOG, answer(0.5, 2, 3, 5, 7, 8, 9), "percentile_5", "below the closed lower bound 1"),
])
def test_read_answer_refuses_what_it_cannot_stand_behind(spec, obj, field, words):
    with pytest.raises(ForecastParseError) as err:
        NUMERIC.read_answer(spec, obj, raw_text="RAW")
    assert words in str(err.value) and err.value.field == field and err.value.raw_text == "RAW"


def test_answers_beyond_an_open_bound_are_kept():
    f = NUMERIC.read_answer(OPEN, answer(150, 160, 170, 180, 190, 200, 210))  # all above the range
    assert f[-1] < 0.06 and f[0] >= 0.001
    NUMERIC.check_forecast(OPEN, f)


def test_answer_schema_is_seven_required_numbers_in_order_for_llama_grammar():
    props = NUMERIC.answer_properties(OPEN_UPPER)
    assert list(props) == list(FIELDS) == [f"percentile_{p}" for p in (5, 10, 25, 50, 75, 90, 95)]
    assert all(p["type"] == "number" and "admissions" in p["description"] for p in props.values())
    assert NUMERIC.answer_keys(OPEN_UPPER) == FIELDS
    assert NUMERIC.answer_template(OPEN_UPPER).startswith('"percentile_5": <number in admissions>, "percentile_10"')
    llama_grammar = pytest.importorskip("llama_cpp.llama_grammar")
    schema = {"type": "object", "properties": props, "required": list(props)}
    gbnf = llama_grammar.json_schema_to_gbnf(json.dumps(schema))
    root = next(line for line in gbnf.splitlines() if line.startswith("root"))
    assert [root.index(f"{f.replace('_', '-')}-kv") for f in FIELDS] == sorted(root.index(f"{f.replace('_', '-')}-kv") for f in FIELDS)


def test_prompt_texts_state_range_bounds_unit_and_scale():
    lines = NUMERIC.question_lines(OPEN_UPPER)
    assert lines == ["The answer is a number in admissions, in the range 0 to 2,000 admissions.",
                     "The lower bound is closed: the value cannot be below 0.",
                     "The upper bound is open: the value may be above 2,000."]
    assert any("logarithmic" in line for line in NUMERIC.question_lines(LOG))
    assert "percentiles 5, 10, 25, 50, 75, 90 and 95" in NUMERIC.answer_request(OPEN_UPPER)
    f = NUMERIC.read_answer(CLOSED, answer(10, 20, 30, 50, 70, 80, 90))
    assert NUMERIC.forecast_text(CLOSED, f) == "median 50; 90% in [9.901, 90.1] USD"  # the mix moves the tails out a little
    assert NUMERIC.forecast_text(OPEN, NUMERIC.uninformed(OPEN)) == "median 50; 90% in [0, 100] USD"
    far = NUMERIC.read_answer(OPEN, answer(150, 160, 170, 180, 190, 200, 210))
    assert NUMERIC.forecast_text(OPEN, far) == "median above 100; 90% in [91.81, above 100] USD"


# --- pools ---------------------------------------------------------------------------------------------


def test_pools_of_two_uniform_members():
    a, b = np.clip(2 * T, 0, 1), np.clip(2 * T - 1, 0, 1)  # uniform on [0, 0.5] and on [0.5, 1]
    out = NUMERIC.pool_many([[a, b]], list(NUMERIC.pools))
    assert np.allclose(out["mean"][0], T)  # the mixture: uniform on [0, 1]
    assert np.allclose(out["median"][0], T) and np.allclose(out["trimmed_mean"][0], T)  # two members: their mean
    assert np.allclose(out["quantile_average"][0], np.clip(2 * T - 0.5, 0, 1), atol=1e-9)  # uniform on [0.25, 0.75]
    assert np.array_equal(out["least_confident"][0], a)  # equal widths: the first member


def test_quantile_average_of_shifted_shapes_is_the_shape_at_the_mean_shift():
    xs, ys = [0.0, 0.1, 0.15, 0.3], [0.0, 0.2, 0.7, 1.0]
    stack = np.stack([knots_cdf(xs, ys, 0.1), knots_cdf(xs, ys, 0.3), knots_cdf(xs, ys, 0.35)])[None]
    vincent = NUMERIC.pool("quantile_average", stack)[0]
    assert np.max(np.abs(vincent - knots_cdf(xs, ys, 0.25))) < 1e-3
    linear = NUMERIC.pool("mean", stack)[0]
    width = pools.interval_widths(np.stack([vincent, linear])[None])[0]
    assert width[0] < width[1]  # the linear pool is wider


def test_linear_pool_of_two_point_like_members_is_bimodal_and_vincentization_is_not():
    stack = np.stack([knots_cdf([0, 0.19, 0.21, 1], [0, 0, 1, 1]), knots_cdf([0, 0.79, 0.81, 1], [0, 0, 1, 1])])[None]
    out = NUMERIC.pool_many(stack, ["mean", "quantile_average"])
    mass = {k: np.diff(v[0]) for k, v in out.items()}  # 200 bins
    assert mass["mean"][38:42].sum() == pytest.approx(0.5) and mass["mean"][158:162].sum() == pytest.approx(0.5)
    assert mass["mean"][42:158].sum() == 0  # nothing between the two modes
    assert mass["quantile_average"][98:102].sum() == pytest.approx(1.0, abs=2e-3)


def test_median_and_trimmed_mean_by_hand():
    stack = np.stack([T, T ** 2, np.sqrt(T), T ** 3, T ** 0.25])[None]
    assert np.allclose(NUMERIC.pool("median", stack[:, :3])[0], T)
    assert np.allclose(NUMERIC.pool("median", stack[:, :4])[0], (T + T ** 2) / 2)  # even: the two middle members
    assert np.allclose(NUMERIC.pool("trimmed_mean", stack)[0], (T + T ** 2 + np.sqrt(T)) / 3)  # 5 members, one cut each end


def test_trimmed_mean_and_median_match_scipy_and_numpy_with_missing_members():
    rng = np.random.default_rng(3)
    stack = random_cdfs(rng, OPEN, 6 * 13).reshape(6, 13, 201)
    stack[1, [2, 5, 7]] = np.nan
    stack[4, :] = np.nan
    trimmed, median = pools.trimmed_mean(stack), pools.median(stack)
    for q in range(6):
        members = stack[q][~np.isnan(stack[q, :, 0])]
        if len(members) == 0:
            assert np.isnan(trimmed[q]).all() and np.isnan(median[q]).all()
            continue
        assert np.allclose(trimmed[q], stats.trim_mean(members, 0.2, axis=0))
        assert np.allclose(median[q], np.median(members, axis=0))


def test_quantile_average_matches_brute_force_on_random_members_with_open_bounds():
    rng = np.random.default_rng(4)
    for spec in (OPEN, NumericSpec(lower=0, upper=100, open_upper=True)):
        stack = random_cdfs(rng, spec, 4 * 5).reshape(4, 5, 201)
        stack[2, 1] = np.nan
        out = pools.quantile_average(stack)
        levels = np.arange(1, 200_000) / 200_000
        for q in range(4):
            members = stack[q][~np.isnan(stack[q, :, 0])]
            qbar = np.mean([np.interp(levels, m, T, left=0.0, right=1.0) for m in members], axis=0)  # censored quantiles
            f0, f200 = members[:, 0].min(), members[:, -1].max()
            brute = np.interp(T, np.r_[0, qbar, 1], np.r_[f0, np.clip(levels, f0, f200), f200])
            brute[0], brute[-1] = f0, f200
            assert np.max(np.abs(out[q] - brute)) < 1e-3
            assert (out[q, 0], out[q, -1]) == (f0, f200)


def test_every_pool_gives_valid_forecasts_and_skips_missing_members():
    rng = np.random.default_rng(5)
    for spec in (CLOSED, OPEN, OPEN_UPPER, LOG):
        stack = random_cdfs(rng, spec, 5 * 7).reshape(5, 7, 201)
        stack[0, 3] = np.nan
        stack[3] = np.nan
        many = NUMERIC.pool_many(stack, list(NUMERIC.pools))
        for method in NUMERIC.pools:
            out = NUMERIC.pool(method, stack)
            assert np.array_equal(out, many[method], equal_nan=True), method
            assert np.isnan(out[3]).all(), method
            for q in (0, 1, 2, 4):
                NUMERIC.check_forecast(spec, out[q], name=method)
            without = NUMERIC.pool(method, np.delete(stack[:1], 3, axis=1))
            assert np.allclose(out[0], without[0]), method


def test_pool_refuses_bad_stacks_and_unknown_methods():
    stack = np.stack([T, T])[None]
    bad = stack.copy()
    bad[0, 1, 7] = np.nan
    with pytest.raises(DataValidationError, match="member 1 of question 0 is NaN at position 7 only in part"):
        NUMERIC.pool("mean", bad)
    bad = stack.copy()
    bad[0, 0, :5] = np.nan
    with pytest.raises(DataValidationError, match="member 0 of question 0 is NaN at position 0 but not everywhere"):
        NUMERIC.pool_many(bad, ["median"])
    with pytest.raises(DataValidationError, match="201"):
        NUMERIC.pool("median", stack[:, :, :200])
    with pytest.raises(DataValidationError, match="valid: mean, quantile_average"):
        NUMERIC.pool_many(stack, ["mode"])
    with pytest.raises(DataValidationError, match="trim"):
        pools.trimmed_mean(stack, trim=0.5)
    assert NUMERIC.default_methods == ("mean", "quantile_average", "median", "least_confident")


def test_least_confident_picks_the_widest_central_interval():
    narrow = knots_cdf([0, 0.4, 0.6, 1], [0, 0, 1, 1])
    wide = knots_cdf([0, 0.1, 0.9, 1], [0, 0, 1, 1])
    stack = np.stack([narrow, wide, np.full(201, np.nan)])[None]
    assert np.array_equal(NUMERIC.pool("least_confident", stack)[0], wide)
    assert pools.interval_widths(stack)[0, :2] == pytest.approx([0.18, 0.72])


# --- scores --------------------------------------------------------------------------------------------


def _crps_by_quad(cdf: np.ndarray, t: float) -> float:
    y = min(max(t, 0.0), 1.0)

    def f(x):
        return np.interp(x, T, cdf)

    left = integrate.quad(lambda x: f(x) ** 2, 0, y, points=T[(T > 0) & (T < y)], limit=500)[0] if y > 0 else 0.0
    right = integrate.quad(lambda x: (1 - f(x)) ** 2, y, 1, points=T[(T > y) & (T < 1)], limit=500)[0] if y < 1 else 0.0
    return left + right


def test_crps_matches_numerical_integration_and_scoringrules_quantile_form():
    rng = np.random.default_rng(6)
    specs = [OPEN] * 10 + [CLOSED] * 10
    cdfs = np.concatenate([random_cdfs(rng, OPEN, 10), random_cdfs(rng, CLOSED, 10)])
    outcomes = np.r_[rng.uniform(-30, 130, 10), rng.uniform(0, 100, 10)]
    ours = NUMERIC.score(specs, cdfs, outcomes)["crps"]
    t = outcomes / 100
    assert ours == pytest.approx([_crps_by_quad(c, y) for c, y in zip(cdfs, t)], abs=1e-9)
    # scoringrules: the quantile decomposition of the CRPS on 50,000 censored quantiles, outcomes clipped to the range
    levels = (np.arange(50_000) + 0.5) / 50_000
    quantiles = np.stack([grid.quantile_locations(np.repeat(c[None], levels.size, 0), levels) for c in cdfs])
    oracle = sr.crps_quantile(np.clip(t, 0, 1), quantiles, levels)
    assert np.max(np.abs(ours - oracle)) < 1e-6


def test_crps_is_threshold_weighted_on_the_range_whatever_lies_beyond_an_open_bound():
    rng = np.random.default_rng(8)
    cdfs = random_cdfs(rng, OPEN, 6)
    t = np.array([-0.4, -0.01, 0.3, 0.7, 1.02, 2.5])
    ours = scores.crps(cdfs, t)
    levels = (np.arange(50_000) + 0.5) / 50_000
    quantiles = np.stack([grid.quantile_locations(np.repeat(c[None], levels.size, 0), levels) for c in cdfs])
    for below, above in ((-0.5, 1.5), (-7.0, 30.0)):  # the mass beyond the bounds put anywhere beyond them
        ensemble = quantiles.copy()
        ensemble[levels[None, :] < cdfs[:, :1]] = below
        ensemble[levels[None, :] > cdfs[:, -1:]] = above
        oracle = sr.twcrps_ensemble(t, ensemble, a=0.0, b=1.0, estimator="qd")
        assert np.max(np.abs(ours - oracle)) < 1e-6


def test_crps_by_hand():
    uniform = T
    # uniform on [0, 1], outcome y: y^3/3 + (1 - y)^3/3
    assert scores.crps(uniform[None], np.array([0.3]))[0] == pytest.approx((0.3 ** 3 + 0.7 ** 3) / 3)
    # an outcome beyond the range counts at the bound it passed: below, int (1 - t)^2 = 1/3
    assert scores.crps(uniform[None], np.array([-4.0]))[0] == pytest.approx(1 / 3)
    assert np.isnan(scores.crps(uniform[None], np.array([np.nan]))[0])


def test_log_loss_and_baseline_score_by_hand():
    half = np.clip(2 * T, 0, 1)  # uniform on [0, 50]: 0.01 in each bin below 50
    s = NUMERIC.score([CLOSED] * 3, [half, half, T], [25.0, 75.0, 0.0])
    assert s["log_loss"] == pytest.approx([math.log(100), -math.log(2.220446049250313e-16), math.log(200)])
    assert s["baseline_score"][0] == pytest.approx(100 * math.log(0.01 / 0.005) / 2)
    assert s["baseline_score"][2] == pytest.approx(0.0, abs=1e-9)
    # open bounds: inner baseline (1 - 0.1) / 200; out of range 0.05
    g = 0.1 + 0.8 * T  # 10% below the range, 0.8 / 200 in each bin, 10% above
    s = NUMERIC.score([OPEN, OPEN], [g, g], [-3.0, 50.2])
    assert s["log_loss"] == pytest.approx([-math.log(0.1), -math.log(0.8 / 200)])
    assert s["baseline_score"] == pytest.approx([100 * math.log(0.1 / 0.05) / 2, 100 * math.log((0.8 / 200) / (0.9 / 200)) / 2])


def test_outcome_log_probability_feeds_peer_scores_divided_by_two():
    half = np.clip(2 * T, 0, 1)
    lq = np.column_stack([NUMERIC.outcome_log_probability([CLOSED], [half], [25.0]),
                          NUMERIC.outcome_log_probability([CLOSED], [T], [25.0])])
    assert NUMERIC.peer_divisor == 2 and NUMERIC.primary_score == "crps"
    assert NUMERIC.peer_scores(lq)[0] == pytest.approx([50 * math.log(2), -50 * math.log(2)])


def test_pit_is_uniform_and_intervals_cover_when_forecasts_are_the_truth():
    rng = np.random.default_rng(7)
    n = 4000
    cdfs = random_cdfs(rng, CLOSED, n)
    u = rng.random(n)
    outcomes = 100 * grid.quantile_locations(cdfs, u)  # drawn from each forecast itself
    d = NUMERIC.diagnostics([CLOSED] * n, cdfs, outcomes)
    assert np.max(np.abs(d["pit"] - u)) < 1e-9
    assert stats.kstest(d["pit"], "uniform").pvalue > 0.01
    for key, cover in (("in_50", 0.5), ("in_90", 0.9)):
        assert abs(d[key].mean() - cover) < 4 * math.sqrt(cover * (1 - cover) / n)


def test_pit_beyond_an_open_bound_is_the_middle_of_the_mass_there():
    g = 0.1 + 0.8 * T
    d = NUMERIC.diagnostics([OPEN] * 3, [g] * 3, [-5.0, 105.0, 50.0])
    assert d["pit"] == pytest.approx([0.05, 0.95, 0.5])
    assert d["in_90"].tolist() == [1.0, 1.0, 1.0] and d["in_50"].tolist() == [0.0, 0.0, 1.0]


def test_unresolved_outcomes_score_nan():
    s = NUMERIC.score([CLOSED, CLOSED], [T, T], [np.nan, 40.0])
    assert all(np.isnan(v[0]) and not np.isnan(v[1]) for v in s.values())


@pytest.mark.parametrize(("specs", "forecasts", "outcomes", "words"), [
    ([CLOSED], [T], [101.0], "above the question's closed upper bound"),
    ([CLOSED], [T], [np.inf], "not finite"),
    ([CLOSED, CLOSED], [T], [1.0, 2.0], "1 rows for 2 questions"),
    ([CLOSED], [T[::-1]], [1.0], "row 0"),
    ([CLOSED], [T], [1.0, 2.0], "outcomes must have shape (1,)"),
])
def test_score_refuses_bad_input(specs, forecasts, outcomes, words):
    with pytest.raises(DataValidationError) as err:
        NUMERIC.score(specs, forecasts, outcomes)
    assert words in str(err.value)


def test_score_refuses_a_spec_of_another_kind():
    with pytest.raises(DataValidationError, match=r"specs\[0\] must be a numeric question's spec; got kind 'binary'"):
        NUMERIC.score([KINDS["binary"].spec_type()], [T], [1.0])


# --- the seam's words, answer writer, spread and figures ----------------------------------------------
def test_the_numeric_kind_writes_reads_and_argues_in_its_unit():
    from matplotlib.figure import Figure

    spec = NumericSpec(lower=0, upper=100, open_upper=True, unit="admissions")
    kind = KINDS["numeric"]
    stated = {"percentile_5": 10, "percentile_10": 15, "percentile_25": 30, "percentile_50": 45,
              "percentile_75": 60, "percentile_90": 75, "percentile_95": 85}
    cdf = kind.read_answer(spec, stated)
    written = kind.answer_of(spec, cdf)
    assert written["percentile_50"] == pytest.approx(45, abs=0.5)
    assert np.abs(kind.read_answer(spec, written) - cdf).max() < 0.01  # within the minimum-slope mix applied twice
    assert kind.debate_claim(spec, "bear", cdf).startswith("the value will be LOWER than the current estimate's median, 45")
    assert kind.forecast_text(spec, None) == "failed"
    other = kind.read_answer(spec, {k: v + 20 for k, v in stated.items()})
    assert kind.spread(spec, np.stack([cdf, other])) == pytest.approx(0.20, abs=0.01)  # medians 20 apart in a range of 100
    assert kind.clip(spec, cdf, 0.01, 0.99) is not None and np.array_equal(kind.clip(spec, cdf, 0.01, 0.99), cdf)
    ax = Figure().add_subplot()
    kind.plot_forecasts(ax, spec, {"mean": cdf, "other": other}, 50)
    assert len(ax.lines) == 3
    ax = Figure().add_subplot()
    kind.plot_calibration(ax, {"mean": kind.diagnostics([spec] * 2, np.stack([cdf, cdf]), [20, 70])})
    assert [type(p).__name__ for p in ax.patches].count("StepPatch") == 1  # one PIT histogram (and the shaded central 50%)
