"""Forecast hubs (issue 40): scores against hand values, pools against oracles (numpy, scipy, bisection), the
walk-forward weights against leakage, a hand-made hubverse folder read end to end, each bad input of the issue as
one line with exit 2, and the data card's reference figures on the bundled FluSight panel."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

from benchmarks.cli import app
from benchmarks.hubs import pools, read_flusight, read_hub, run_hub
from benchmarks.hubs.events import option_events, quantile_events, season_of
from benchmarks.hubs.scores import coverage, option_score_table, quantile_score_table, wis, wis_parts

runner = CliRunner()
LEVELS = np.array([0.05, 0.25, 0.5, 0.75, 0.95])


# --- scores -----------------------------------------------------------------------------------------------------------


def test_wis_and_its_parts_by_hand():
    # y = 11 above the 50% interval [3, 7] and the median 5, inside the 90% interval [1, 12]:
    # widths 0.05 x 11 + 0.25 x 4 = 1.55; under-prediction (11 - 7) + 0.5 (11 - 5) = 7; total 8.55 / 2.5 intervals
    q = np.array([1.0, 3, 5, 7, 12])
    parts = wis_parts(q, np.array(11.0), LEVELS)
    assert parts["wis"] == pytest.approx(3.42)
    assert parts["dispersion"] == pytest.approx(0.62)
    assert parts["underprediction"] == pytest.approx(2.8)
    assert parts["overprediction"] == 0.0
    # y = 0 below every quantile: over-prediction (1 - 0) + (3 - 0) + 0.5 x 5 = 6.5; widths 1.55
    low = wis_parts(q, np.array(0.0), LEVELS)
    assert low["overprediction"] == pytest.approx(6.5 / 2.5) and low["dispersion"] == pytest.approx(1.55 / 2.5)
    assert low["wis"] == pytest.approx(sum(low[k] for k in ("dispersion", "overprediction", "underprediction")))


def test_wis_is_bracher_interval_form_and_nan_for_a_missing_forecast():
    rng = np.random.default_rng(3)
    q = np.sort(rng.gamma(2.0, 50.0, size=(200, 5)), axis=1)
    y = rng.gamma(2.0, 50.0, size=200)
    m, (l90, l50, u50, u90) = q[:, 2], (q[:, 0], q[:, 1], q[:, 3], q[:, 4])

    def interval(lo, hi, alpha):  # Gneiting & Raftery 2007, eq. 43
        return (hi - lo) + 2 / alpha * (lo - y) * (y < lo) + 2 / alpha * (y - hi) * (y > hi)

    bracher = (0.5 * np.abs(y - m) + 0.05 * interval(l90, u90, 0.1) + 0.25 * interval(l50, u50, 0.5)) / 2.5
    np.testing.assert_allclose(wis(q, y[:, None][:, 0], LEVELS), bracher)
    q[3] = np.nan
    table = quantile_score_table(q, y, LEVELS)
    assert np.isnan(table["wis"][3]) and np.isnan(table["cover90"][3]) and not np.isnan(table["wis"][2])


def test_coverage_counts_the_ends():
    q = np.array([[1.0, 3, 5, 7, 12]] * 4)
    np.testing.assert_array_equal(coverage(q, np.array([1.0, 0.5, 12.0, 12.5]), LEVELS, 0.05, 0.95), [1, 0, 1, 0])
    np.testing.assert_array_equal(coverage(q, np.array([3.0, 2.9, 7.0, 7.1]), LEVELS, 0.25, 0.75), [1, 0, 1, 0])


def test_option_scores_by_hand():
    p = np.array([[0.1, 0.2, 0.4, 0.2, 0.1], [np.nan] * 5])
    out = option_score_table(p, np.array([2, 0]))
    # cumulative 0.1 0.3 0.7 0.9 vs 0 0 1 1: (0.01 + 0.09 + 0.09 + 0.01) / 4
    assert out["rps"][0] == pytest.approx(0.05)
    assert out["brier"][0] == pytest.approx(0.01 + 0.04 + 0.36 + 0.04 + 0.01)
    assert out["log_loss"][0] == pytest.approx(-np.log(0.4))
    assert np.isnan(out["rps"][1])


# --- pools ------------------------------------------------------------------------------------------------------------


def _members(seed=0, events=40, members=7):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.gamma(3.0, 30.0, size=(events, members, LEVELS.size)), axis=2)
    x[rng.random((events, members)) < 0.3] = np.nan  # skipped events
    x[0] = np.nan  # an event nobody forecast
    return x


def test_median_mean_trimmed_against_numpy_and_scipy():
    x = _members()
    med, avg, trim = pools.median(x), pools.mean(x), pools.trimmed_mean(x)
    assert np.isnan(med[0]).all() and np.isnan(avg[0]).all() and np.isnan(trim[0]).all()
    for e in range(1, x.shape[0]):
        ok = ~np.isnan(x[e, :, 0])
        if not ok.any():
            continue
        np.testing.assert_allclose(med[e], np.median(x[e, ok], axis=0))
        np.testing.assert_allclose(avg[e], x[e, ok].mean(axis=0))
        np.testing.assert_allclose(trim[e], stats.trim_mean(x[e, ok], pools.TRIM, axis=0))


def test_linear_pool_by_hand_and_against_bisection():
    # two members, uniform on [-1, 3] and [9, 13] with their tails: the mixture's quartiles are 1 and 11
    two = np.array([[[0.0, 1, 2], [10.0, 11, 12]]])
    np.testing.assert_allclose(pools.linear_pool(two, np.array([0.25, 0.5, 0.75])), [[1.0, 3.0, 11.0]])
    x = _members(seed=1)
    x[5, 2] = [4.0, 4.0, 4.0, 9.0, 30.0]  # a point mass
    got = pools.linear_pool(x, LEVELS)
    assert np.isnan(got[0]).all()
    for e in range(1, x.shape[0]):
        xe = x[e][~np.isnan(x[e, :, 0])]
        if not len(xe):
            continue
        knots, taus = pools._knots(xe, LEVELS)

        def cdf(v):
            total = 0.0
            for k in knots:
                j = np.searchsorted(k, v, side="right")
                total += 0.0 if j == 0 else 1.0 if j == len(k) else taus[j - 1] + (taus[j] - taus[j - 1]) * (v - k[j - 1]) / (k[j] - k[j - 1])
            return total / len(knots)

        for tau, value in zip(LEVELS, got[e]):
            lo, hi = knots.min(), knots.max()
            for _ in range(70):
                mid = 0.5 * (lo + hi)
                lo, hi = (lo, mid) if cdf(mid) >= tau else (mid, hi)
            assert value == pytest.approx(hi, abs=1e-6)


def test_walk_forward_weights_never_see_a_later_outcome():
    rng = np.random.default_rng(0)
    n, m = 120, 4
    ref = np.datetime64("2024-01-06") + 7 * (np.arange(n) // 4).astype("timedelta64[D]")
    end = ref + 7 * (np.arange(n) % 4).astype("timedelta64[D]")
    member = rng.gamma(2.0, 10.0, size=(n, m))
    member[:, 0] *= 0.5  # member 0 is twice as good
    base = rng.gamma(2.0, 10.0, size=n)
    w = pools.walk_forward_weights(member, base, ref, end)
    e = n - 1
    known = end <= ref[e] - np.timedelta64(pools.REPORTING_LAG_DAYS, "D")
    changed = member.copy()
    changed[~known] = 1e6  # outcomes not yet observed at the event's reference date
    assert np.array_equal(pools.walk_forward_weights(changed, base, ref, end)[e], w[e])
    assert w[e, 0] > w[e, 1:].max()
    assert (w[:8] == 1.0).all()  # no member has MIN_PAST_EVENTS past events yet: equal weights


# --- a hubverse hub folder, end to end --------------------------------------------------------------------------------


def _write_hub(root: Path, *, tasks=True) -> Path:
    """Two locations, two rounds, horizons 0-1; models A and B (designated), the baseline, the hub's ensemble E, and
    C (not designated: left out). Quantile target 'inc' (levels 0.05-0.95) and pmf target 'trend'."""
    (root / "model-metadata").mkdir(parents=True)
    meta = {"team-A": (True, False), "team-B": (True, False), "hub-baseline": (False, False), "hub-ensemble": (False, True),
            "team-C": (False, False)}
    for model, (designated, hub_pool) in meta.items():
        team, abbr = model.split("-")
        licence = "" if model == "team-C" else "license: CC-BY-4.0\n"
        (root / "model-metadata" / f"{model}.yml").write_text(
            f"team_abbr: {team}\nmodel_abbr: {abbr}\n{licence}designated_model: {str(designated).lower()}\n"
            f"ensemble_of_hub_models: {str(hub_pool).lower()}\nmethods: a method\n")
    shift = {"team-A": 0.0, "team-B": 10.0, "hub-baseline": 30.0, "hub-ensemble": 5.0, "team-C": -50.0}
    for model, s in shift.items():
        rows = []
        for rnd in ("2024-11-02", "2024-11-09"):
            for loc in ("US", "06"):
                for h in (0, 1):
                    end = (pd.Timestamp(rnd) + pd.Timedelta(days=7 * h)).date()
                    for lv, base in zip(LEVELS, (80, 90, 100, 110, 120)):
                        rows.append([rnd, "inc", h, loc, end, "quantile", lv, base + s])
                    for cat, p in (("down", 0.2), ("flat", 0.5), ("up", 0.3)):
                        rows.append([rnd, "trend", h, loc, end, "pmf", cat, p if model != "hub-baseline" else 1 / 3])
                    rows.append([rnd, "inc", h, loc, end, "mean", "", 100 + s])
        (root / "model-output" / model).mkdir(parents=True, exist_ok=True)
        frame = pd.DataFrame(rows, columns=["reference_date", "target", "horizon", "location", "target_end_date", "output_type",
                                            "output_type_id", "value"])
        for rnd, part in frame.groupby("reference_date"):
            part.to_csv(root / "model-output" / model / f"{rnd}-{model}.csv", index=False)
    oracle = []
    for end in ("2024-11-02", "2024-11-09", "2024-11-16"):
        for loc in ("US", "06"):
            oracle.append([end, loc, "inc", "quantile", "", 104.0, ""])
            for h in (0, 1):
                for cat in ("down", "flat", "up"):
                    oracle.append([end, loc, "trend", "pmf", cat, 1.0 if cat == "up" else 0.0, h])
    (root / "target-data").mkdir()
    pd.DataFrame(oracle, columns=["target_end_date", "location", "target", "output_type", "output_type_id", "oracle_value", "horizon"]).to_csv(
        root / "target-data" / "oracle-output.csv", index=False)
    if tasks:
        (root / "hub-config").mkdir()
        (root / "hub-config" / "tasks.json").write_text(json.dumps({"rounds": [{"model_tasks": [
            {"task_ids": {"target": {"required": ["inc"]}}, "output_type": {"quantile": {}}},
            {"task_ids": {"target": {"required": ["trend"]}}, "output_type": {"pmf": {"output_type_id": {"required": ["down", "flat", "up"]}}}},
        ]}]}))
    return root


def test_a_hub_folder_read_and_scored_end_to_end(tmp_path):
    hub = read_hub(_write_hub(tmp_path / "hub"))
    assert hub.option_order == {"trend": ["down", "flat", "up"]}
    assert any("mean 40" in n for n in hub.notes)  # the 'mean' output rows, counted and left out
    assert any("licence missing" in n and "team-C" in n for n in hub.notes)
    ev = quantile_events(hub, "inc")
    assert ev.n == 8 and ev.values.shape == (8, 5, 5) and (ev.outcome == 104.0).all()
    res = run_hub(hub, tmp_path / "out", target="inc", n_resamples=50)
    board = res.leaderboard.set_index("row")
    # members A (median 100) and B (110): the median pool's quantiles are A's + 5, the hub's ensemble's exactly
    assert board.loc["median", "wis"] == pytest.approx(board.loc["hub:hub-ensemble", "wis"])
    assert board.loc["hub:hub-baseline", "relative_wis"] == 1.0
    q = np.array([85.0, 95, 105, 115, 125])
    assert board.loc["median", "wis"] == pytest.approx(float(wis(q, np.array(104.0), LEVELS)))
    assert board.loc["median", "relative_wis"] == pytest.approx(float(wis(q, np.array(104.0), LEVELS) / wis(q + 25, np.array(104.0), LEVELS)))
    assert "team-C" not in set(res.members["row"]) and set(res.members["row"]) == {"team-A", "team-B"}
    assert all(len(line) <= 100 for line in res.lines if line.startswith(("row", "-", "median", "hub:", "mean")))
    assert (tmp_path / "out" / "leaderboard.csv").is_file() and "licence missing" in (tmp_path / "out" / "report.md").read_text()
    opt = run_hub(hub, tmp_path / "out2", target="trend", n_resamples=50).leaderboard.set_index("row")
    # members give (0.2, 0.5, 0.3), the outcome is 'up': RPS = (0.2^2 + 0.7^2) / 2
    assert opt.loc["mean", "rps"] == pytest.approx((0.04 + 0.49) / 2)
    base = ((1 / 3) ** 2 + (2 / 3) ** 2) / 2
    assert opt.loc["mean", "relative_rps"] == pytest.approx(0.265 / base)


def test_cli_reads_a_hub_folder_and_needs_a_target_when_there_are_several(tmp_path):
    root = _write_hub(tmp_path / "hub")
    res = runner.invoke(app, ["aggregate", str(root), "--target", "inc", "-o", str(tmp_path / "o"), "--n-resamples", "50"])
    assert res.exit_code == 0, res.output
    assert "hub:hub-ensemble" in res.stdout and (tmp_path / "o" / "hub-hub-inc" / "leaderboard.csv").is_file()
    res = runner.invoke(app, ["aggregate", str(root), "-o", str(tmp_path / "o")])
    assert res.exit_code == 2 and "several targets" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    res = runner.invoke(app, ["aggregate", str(root), "--target", "inc", "--location", "US", "--horizon", "0", "-o", str(tmp_path / "o"),
                              "--run-id", "us0", "--n-resamples", "20"])
    assert res.exit_code == 0, res.output
    board = pd.read_csv(tmp_path / "o" / "us0" / "leaderboard.csv")
    assert (board.loc[board["row"] == "median", "n_events"] == 2).all()  # US, horizon 0, two rounds
    assert all(len(line) <= 100 for line in res.stdout.splitlines())


def _one_line(res, *needles):
    assert res.exit_code == 2, res.output
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def _edit_csv(path: Path, row: int, col: str, value) -> None:
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame.loc[row, col] = value
    frame.to_csv(path, index=False)


@pytest.mark.parametrize("case", ["level", "decreasing", "pmf_sum", "file_name", "oracle_target", "yaml"])
def test_each_bad_input_is_one_line_naming_file_row_column_value(tmp_path, case):
    root = _write_hub(tmp_path / "hub")
    a = root / "model-output" / "team-A" / "2024-11-02-team-A.csv"
    if case == "level":
        _edit_csv(a, 2, "output_type_id", "1.5")
        needles = [str(a), "data row 3 (line 4)", "output_type_id", "'1.5'", "(0, 1)"]
    elif case == "decreasing":
        _edit_csv(a, 3, "value", "50")
        needles = [str(a), "data row 4 (line 5)", "column value", "'50'", "decrease"]
    elif case == "pmf_sum":
        _edit_csv(a, 6, "value", "0.9")
        needles = [str(a), "data row 6 (line 7)", "column value", "1.4", "sum"]
    elif case == "file_name":
        a.rename(root / "model-output" / "team-A" / "2024-11-02-team-B.csv")
        needles = ["2024-11-02-team-B.csv", "team-A", "file name"]
    elif case == "oracle_target":
        _edit_csv(root / "target-data" / "oracle-output.csv", 4, "target", "deaths")
        needles = ["oracle-output.csv", "data row 5 (line 6)", "column target", "'deaths'", "unknown target"]
    else:
        (root / "model-metadata" / "team-B.yml").write_text("team_abbr: team\nmodel_abbr: [B\n")
        needles = ["team-B.yml", "line 3", "not YAML"]
    out = tmp_path / "o"
    _one_line(runner.invoke(app, ["aggregate", str(root), "--target", "inc", "-o", str(out)]), *needles)
    assert not out.exists() or not any(out.iterdir())  # failed before anything was written


# --- the bundled FluSight panel: the data card's reference figures ----------------------------------------------------


@pytest.fixture(scope="module")
def flusight():
    return read_flusight()


def test_seasons():
    assert list(season_of(pd.Series(pd.to_datetime(["2023-10-07", "2024-07-31", "2024-08-01"])))) == ["2023-24", "2023-24", "2024-25"]


def test_flusight_reproduces_the_data_card(flusight, tmp_path):
    board = run_hub(flusight, tmp_path, horizons=[0, 1, 2, 3], n_resamples=20).leaderboard.set_index(["season", "row"])
    card = {("2023-24", 1320, 213.53, 295.74, 0.722, 0.719, 0.728, 0.707), ("2024-25", 1188, 618.68, 928.70, 0.666, 0.666, 0.625, 0.622)}
    for season, n, ens, base, rel, med, avg, lop in card:
        assert board.loc[(season, "hub:FluSight-ensemble"), "n_events"] == n
        assert board.loc[(season, "hub:FluSight-ensemble"), "wis"] == pytest.approx(ens, abs=0.005)
        assert board.loc[(season, "hub:FluSight-baseline"), "wis"] == pytest.approx(base, abs=0.005)
        assert board.loc[(season, "hub:FluSight-ensemble"), "relative_wis"] == pytest.approx(rel, abs=0.0005)
        assert board.loc[(season, "median"), "relative_wis"] == pytest.approx(med, abs=0.0005)
        assert board.loc[(season, "mean"), "relative_wis"] == pytest.approx(avg, abs=0.0005)
        assert board.loc[(season, "hub:FluSight-lop_norm"), "relative_wis"] == pytest.approx(lop, abs=0.0005)
    opt = run_hub(flusight, tmp_path / "o", target="wk flu hosp rate change", n_resamples=20).leaderboard.set_index("row")
    assert opt.loc["hub:FluSight-ensemble", "rps"] == pytest.approx(0.1056, abs=5e-5)
    assert opt.loc["hub:FluSight-baseline_cat", "rps"] == pytest.approx(0.2027, abs=5e-5)
    assert opt.loc["hub:FluSight-ensemble", "n_events"] == 1188


def test_flusight_members_are_the_data_cards(flusight):
    ev = quantile_events(flusight, "wk inc flu hosp", horizons=[0, 1, 2, 3])
    from benchmarks.hubs.leaderboard import roles

    r = roles(flusight, ev.models, "FluSight-baseline")
    member = np.isin(ev.models, r.members)
    for season, n in (("2023-24", 28), ("2024-25", 37)):
        sm = (ev.events["season"] == season).to_numpy()
        assert (ev.complete[sm] & member).any(axis=0).sum() == n
    assert "FluSight-ensemble" in r.hub_rows and "ISU_NiemiLab-GPE" in r.members
    opts = option_events(flusight, "wk flu hosp rate change")
    assert opts.options == ["large_decrease", "decrease", "stable", "increase", "large_increase"]


def test_figures_are_written_for_a_quantile_target(tmp_path):
    hub = read_hub(_write_hub(tmp_path / "hub"))
    res = run_hub(hub, tmp_path / "out", target="inc", n_resamples=20)
    pngs = sorted(p.name for p in (tmp_path / "out" / "figures").glob("*.png"))
    # over time, and one fan chart per season x location (one season, two locations here)
    assert pngs == ["fan_06_2024-11-02.png", "fan_US_2024-11-02.png", "over_time.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in (tmp_path / "out" / "figures").glob("*.png"))
    assert (tmp_path / "out" / "figures" / "over_time.png") in res.files
    opt = run_hub(hub, tmp_path / "opt", target="trend", n_resamples=20)
    assert not (tmp_path / "opt" / "figures").exists() and len(opt.files) == 3


def test_a_folder_that_is_no_hub_is_one_line(tmp_path):
    """A folder given as the panel is a hub only with hub-config/ or model-output/; any other folder is refused in
    one line naming it (exit 2), and nothing is written."""
    (tmp_path / "plain").mkdir()
    res = runner.invoke(app, ["aggregate", str(tmp_path / "plain"), "-o", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert res.output.strip() == (f"error: PANEL_FILE {tmp_path / 'plain'} is a folder, not a panel file nor a forecast hub "
                                  "(no hub-config/ or model-output/)")
    assert not (tmp_path / "o").exists()
