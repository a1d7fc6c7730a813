"""Diversity diagnostics (issue 37, item 3 and 5), value by value: the ambiguity decomposition on hand values and its
identity to 1e-12 on random data, the error correlations against pandas, the effective number of members, a
reconciler's gain split by hand, the crowd's closeness by hand, and the tables every report writes from a run's
records (hand-built records of tests/benchmarks/test_report_tables.py, so every number is known in advance)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from agent_schemas import DataValidationError
from benchmarks import scoring
from benchmarks.report.diversity import DECOMPOSITION_TITLE, RECONCILED_TITLE, diversity_report, identity_text, run_members
from benchmarks.run_folder.load import LoadedRun
from benchmarks.scoring import diversity as div
from benchmarks.viewer import plots
from tests.benchmarks.test_report_tables import question, record, standard_records


# --- the scoring core ---------------------------------------------------------------------------------------------


def test_ambiguity_terms_on_hand_values():
    # q1: 0.6, 0.9 -> Yes: members (0.16 + 0.01) / 2 = 0.085, mean 0.75 -> 0.0625, spread (0.0225 + 0.0225) / 2 = 0.0225
    # q2: 0.2, 0.4, absent -> No: members (0.04 + 0.16) / 2 = 0.1, mean 0.3 -> 0.09, spread 0.01
    # q3: one member 0.7 -> No: 0.49 = 0.49 + 0
    member, pool, spread = div.ambiguity_terms([[0.6, 0.9, np.nan], [0.2, np.nan, 0.4], [np.nan, 0.7, np.nan]], [1, 0, 0])
    assert member == pytest.approx([0.085, 0.1, 0.49], abs=1e-15)
    assert pool == pytest.approx([0.0625, 0.09, 0.49], abs=1e-15)
    assert spread == pytest.approx([0.0225, 0.01, 0.0], abs=1e-15)
    d = div.ambiguity_decomposition([[0.6, 0.9, np.nan], [0.2, np.nan, 0.4], [np.nan, 0.7, np.nan]], [1, 0, 0])
    assert (d.mean_member_brier.mean, d.pool_brier.mean, d.diversity.mean) == pytest.approx((0.675 / 3, 0.6425 / 3, 0.0325 / 3))
    assert d.members_per_question == pytest.approx(5 / 3) and d.n == 3
    assert d.identity_error < 1e-12
    assert np.isnan(d.diversity.low) and np.isnan(d.pool_brier.high)  # 3 clusters: no interval
    assert d.diversity_share == pytest.approx(0.0325 / 0.675)


def test_the_identity_holds_to_1e_12_on_random_data_and_the_intervals_are_the_toolkits():
    rng = np.random.default_rng(7)
    n, m = 600, 9
    truth = rng.uniform(0.05, 0.95, n)
    p = np.clip(truth[:, None] + rng.normal(0, 0.2, (n, m)), 0.01, 0.99)
    p[rng.random((n, m)) < 0.4] = np.nan
    p[np.isnan(p).all(axis=1), 0] = 0.5  # every question keeps one member
    o = (rng.random(n) < truth).astype(int)
    clusters = rng.integers(0, 150, n)
    member, pool, spread = div.ambiguity_terms(p, o)
    assert np.abs(member - pool - spread).max() < 1e-12
    # the definitions, written out the slow way
    pbar = np.nanmean(p, axis=1)
    assert member == pytest.approx(np.nanmean((p - o[:, None]) ** 2, axis=1), abs=1e-15)
    assert spread == pytest.approx(np.nanmean((p - pbar[:, None]) ** 2, axis=1), abs=1e-15)
    d = div.ambiguity_decomposition(p, o, clusters, n_resamples=300, seed=3)
    assert d.identity_error < 1e-12
    assert abs(d.mean_member_brier.mean - d.pool_brier.mean - d.diversity.mean) < 1e-12
    for got, values in ((d.mean_member_brier, member), (d.pool_brier, pool), (d.diversity, spread)):
        assert got == scoring.clustered_bootstrap_ci(values, clusters, n_resamples=300, seed=3)
    assert d.diversity.low < d.diversity.mean < d.diversity.high and d.diversity.low > 0


def test_error_correlation_is_pandas_pairwise_complete_and_n_eff_follows_the_formula():
    rng = np.random.default_rng(11)
    n, m = 200, 6
    common = rng.normal(0, 0.15, n)
    o = rng.integers(0, 2, n)
    p = np.clip(0.5 + common[:, None] + rng.normal(0, 0.1, (n, m)), 0, 1)
    p[rng.random((n, m)) < 0.5] = np.nan
    p[:, 5] = np.nan
    p[:8, 5] = 0.3 + 0.05 * np.arange(8)  # member 5 answers 8 questions: fewer than MIN_OVERLAP with anyone
    p[np.isnan(p).all(axis=1), 0] = 0.5
    c = div.error_correlation(p, o)
    oracle = pd.DataFrame(p - o[:, None]).corr(min_periods=div.MIN_OVERLAP).to_numpy()
    np.testing.assert_allclose(c.matrix, oracle, atol=1e-10, equal_nan=True)
    assert np.isnan(c.matrix[5]).all()
    upper = oracle[np.triu_indices(m, 1)]
    assert c.n_pairs == 10 and c.mean_correlation == pytest.approx(np.nanmean(upper))
    k = float((~np.isnan(p)).sum(axis=1).mean())
    assert c.members_per_question == pytest.approx(k)
    assert c.n_effective == pytest.approx(k / (1 + (k - 1) * np.nanmean(upper)))
    assert c.overlap[0, 1] == int((~np.isnan(p[:, 0]) & ~np.isnan(p[:, 1])).sum())


def test_effective_members_on_hand_values():
    assert div.effective_members(4, 0.0) == 4.0
    assert div.effective_members(4, 1.0) == 1.0
    assert div.effective_members(4, 0.2) == pytest.approx(4 / 1.6)
    assert div.effective_members(4, -0.5) == float("inf")  # below -1/(m-1): no equicorrelated set has it
    assert np.isnan(div.effective_members(4, float("nan")))
    # identical members: every pair correlates 1, one effective member
    p = np.tile(np.linspace(0.1, 0.9, 12)[:, None], (1, 3))
    c = div.error_correlation(p, np.arange(12) % 2)
    assert c.mean_correlation == pytest.approx(1.0) and c.n_effective == pytest.approx(1.0)


def test_a_reconcilers_gain_splits_toward_the_better_member_and_beyond_every_member():
    # members 0.6, 0.9 (mean 0.75; pool Brier 0.0625 on Yes, 0.5625 on No)
    p = [[0.6, 0.9]] * 5
    o = [1, 1, 1, 0, 1]
    r = [0.85,   # inside the range, toward the better member: 0.0625 - 0.0225 = 0.04, nothing beyond
         0.95,   # past the better member: 0.0625 - 0.01 = 0.0525 up to 0.9, 0.01 - 0.0025 = 0.0075 beyond
         0.65,   # toward the worse member: 0.0625 - 0.1225 = -0.06
         0.5,    # past the worse member on a Yes: up to 0.6: 0.0625 - 0.16 = -0.0975; beyond: 0.16 - 0.25 = -0.09
         0.75]   # the pool itself: 0
    o[3] = 1
    s = div.reconciliation_split(p, o, r)
    toward = np.array([0.04, 0.0525, -0.06, -0.0975, 0.0])
    beyond = np.array([0.0, 0.0075, 0.0, -0.09, 0.0])
    assert s.toward_better_member.mean == pytest.approx(toward.mean())
    assert s.beyond_every_member.mean == pytest.approx(beyond.mean())
    assert s.gain_vs_pool.mean == pytest.approx((toward + beyond).mean())
    assert s.spread == pytest.approx(0.0225)
    assert s.gain_vs_average_member == pytest.approx(0.0225 + (toward + beyond).mean())
    assert (s.share_toward_outcome, s.share_away, s.share_outside_range) == (0.4, 0.4, 0.4)
    assert s.mean_shift == pytest.approx((0.1 + 0.2 + 0.1 + 0.25 + 0) / 5)
    # on a No the better member is the lower one: 0.55 is beyond 0.6 toward 0
    s = div.reconciliation_split([[0.6, 0.9]], [0], [0.55])
    assert s.toward_better_member.mean == pytest.approx(0.5625 - 0.36)
    assert s.beyond_every_member.mean == pytest.approx(0.36 - 0.3025)


def test_crowd_closeness_on_hand_values():
    c = div.crowd_closeness([[0.50, 0.70], [0.20, 0.40]], [0.52, 0.21])
    assert c.n_forecasts == 4
    assert c.share_within == 0.5  # 0.02 and 0.01 are within 0.02; 0.18 and 0.19 are not
    assert c.mean_abs_distance == pytest.approx((0.02 + 0.18 + 0.01 + 0.19) / 4)
    assert c.correlation == pytest.approx(np.corrcoef([0.5, 0.7, 0.2, 0.4], [0.52, 0.52, 0.21, 0.21])[0, 1])
    assert np.isnan(div.crowd_closeness([[0.5], [0.5]], [0.3, 0.6]).correlation)  # members without variance


def test_bad_input_names_the_row_and_column():
    with pytest.raises(DataValidationError, match=r"outside \[0, 1\]: 1.2 at row 1, column 0"):
        div.ambiguity_terms([[0.5, 0.4], [1.2, 0.3]], [1, 0])
    with pytest.raises(DataValidationError, match="no forecast at row 1"):
        div.ambiguity_terms([[0.5, 0.4], [np.nan, np.nan]], [1, 0])
    with pytest.raises(DataValidationError, match="outcomes must be 0 or 1: 2.0 at index 1"):
        div.ambiguity_terms([[0.5], [0.3]], [1, 2])
    with pytest.raises(DataValidationError, match="shape"):
        div.ambiguity_terms([0.5, 0.3], [1, 0])
    with pytest.raises(DataValidationError, match="reconciled has values outside"):
        div.reconciliation_split([[0.5]], [1], [1.5])
    with pytest.raises(DataValidationError, match="min_overlap"):
        div.error_correlation([[0.5]], [1], min_overlap=1)


# --- the report -----------------------------------------------------------------------------------------------------


def loaded(records, run_id="a", **config) -> LoadedRun:
    return LoadedRun(name=run_id, manifest={"run_id": run_id, "config": config}, records=records)


def test_the_reports_tables_from_a_runs_records():
    # q1: members 0.5, 0.7 on Yes, debate 0.8, supervisor 0.9, pipeline 0.85; q2: 0.2, 0.4 on No, pipeline 0.3; q3 failed
    rep = diversity_report([loaded(standard_records())], n_resamples=200)
    d = rep.decomposition.iloc[0]
    assert (d.n, d.members_per_question) == (2, 2.0)
    assert (d.mean_member_brier, d.pool_brier, d.diversity) == pytest.approx(((0.17 + 0.1) / 2, (0.16 + 0.09) / 2, 0.01))
    assert d.identity_error < 1e-12 and np.isnan(d.diversity_ci_low)  # two clusters: no interval
    rows = rep.reconciled.set_index("method")
    assert list(rows.index) == ["debate", "supervisor", "pipeline"]
    # as scored: on q2 the members agreed, debate and supervisor did not run and their rows are the mean (no gain)
    # debate on q1: mean 0.6 -> 0.16; held at 0.7 -> 0.09; 0.8 -> 0.04
    assert (rows.loc["debate", "toward_better_member"], rows.loc["debate", "beyond_every_member"]) == pytest.approx((0.07 / 2, 0.05 / 2))
    assert rows.loc["supervisor", "gain_vs_mean"] == pytest.approx((0.16 - 0.01) / 2)
    # pipeline: q1 0.85 gains 0.07 + (0.09 - 0.0225); q2 0.3 is the mean, gains nothing
    assert rows.loc["pipeline", "n"] == 2
    assert rows.loc["pipeline", "gain_vs_mean"] == pytest.approx((0.16 - 0.0225) / 2)
    assert rows.loc["pipeline", "toward_better_member"] == pytest.approx(0.035)
    assert (rows.loc["pipeline", "share_toward_outcome"], rows.loc["pipeline", "share_outside_range"]) == (0.5, 0.5)
    assert rows.loc["pipeline", "gain_vs_average_member"] == pytest.approx(0.01 + 0.06875)
    assert rep.crowd.empty  # no crowd price
    sections = [s for s in rep.markdown_sections() if s.startswith("## ")]
    assert sections == [f"## {DECOMPOSITION_TITLE}", f"## {RECONCILED_TITLE}"]  # 2 questions: no pair correlated
    assert identity_text(d.identity_error).endswith("(< 1e-12)") and identity_text(1e-9) == "1e-09 (NOT < 1e-12)"
    lines = rep.lines()
    assert lines == ["members 0.1350 = mean 0.1250 + spread 0.0100; err corr n/a (no pair shares 10 questions)"]
    assert all(len(line) <= 100 for line in lines)


def with_crowd(records, prices):
    for r, price in zip(records, prices):
        r["baselines"]["crowd"] = {"p_yes": price, "status": "ok", "note": "crowd probability at freeze"}
    return records


def test_crowd_copying_when_the_members_were_shown_the_price():
    run = loaded(with_crowd(standard_records(), [0.52, 0.21, 0.5]), show_crowd=True)
    rep = diversity_report([run], n_resamples=200)
    c = rep.crowd.iloc[0]
    assert bool(c.crowd_shown) and c.n_forecasts == 4 and c.share_within == 0.5
    assert c.correlation == pytest.approx(np.corrcoef([0.5, 0.7, 0.2, 0.4], [0.52, 0.52, 0.21, 0.21])[0, 1])
    # mean 0.6 vs 0.52 on Yes, 0.3 vs 0.21 on No
    assert c.delta_mean_vs_crowd == pytest.approx(((0.16 - 0.2304) + (0.09 - 0.0441)) / 2)
    lines = rep.lines()
    assert len(lines) == 2 and lines[1] == "crowd shown: corr 0.83, 50% within 0.02; mean - crowd Brier -0.0122"
    assert all(len(line) <= 100 for line in lines)
    hidden = diversity_report([loaded(with_crowd(standard_records(), [0.52, 0.21, 0.5]))], n_resamples=200)
    assert not bool(hidden.crowd.iloc[0].crowd_shown) and len(hidden.lines()) == 1  # listed, not printed


def test_a_comparison_of_runs_has_a_row_per_run_and_the_matrix_when_pairs_are_estimated():
    qs = [question(f"q{i}", "2024-05-01", i % 2) for i in range(12)]
    rng = np.random.default_rng(2)
    recs = [record(q, members=list(np.round(rng.uniform(0.05, 0.95, 3), 2)), latencies=[1.0] * 3) for q in qs]
    members = run_members(loaded(recs))
    assert members.members == ["member-0", "member-1", "member-2"] and members.p.shape == (12, 3)
    rep = diversity_report([loaded(recs, "a"), loaded(standard_records(), "b")], n_resamples=200)
    assert rep.decomposition["run_id"].tolist() == ["a", "b"]
    titles = [s for s in rep.markdown_sections() if s.startswith("## ")]
    assert titles[1] == "## Correlation of the members' errors (p_yes - outcome) over the questions both answered: a"
    matrix = rep.correlations["a"].to_numpy()
    np.testing.assert_allclose(matrix, pd.DataFrame(members.p - members.outcomes[:, None]).corr().to_numpy(), atol=1e-10)
    assert rep.lines() == []  # several runs: the tables say it
    fig = plots.plot_diversity(rep.decomposition, rep.correlations)
    bars, heat = fig.axes[0], fig.axes[1]
    assert len(bars.patches) == 6  # three terms for each of two runs, term by term
    assert [round(b.get_height(), 6) for b in bars.patches[2:4]] == [round(v, 6) for v in rep.decomposition["pool_brier"]]
    assert np.asarray(heat.collections[0].get_array()).reshape(3, 3) == pytest.approx(matrix)
    svg = plots.figure_to_svg(fig)
    assert svg.startswith("<svg") and "data:image/png" not in svg  # vector, as the page's other figures
    with pytest.raises(DataValidationError, match="no run has members"):
        plots.plot_diversity(rep.decomposition.iloc[:0])


def test_the_diversity_command_prints_every_interval_and_the_identity(tmp_path):
    from typer.testing import CliRunner

    from benchmarks.cli import app
    from tests.benchmarks.test_report_tables import write_run

    qs = [question(f"q{i}", "2024-05-01", i % 2) for i in range(12)]
    rng = np.random.default_rng(5)
    folder = write_run(tmp_path, "r", [record(q, members=list(np.round(rng.uniform(0.05, 0.95, 3), 2)), latencies=[1.0] * 3)
                                       for q in qs])
    res = CliRunner().invoke(app, ["diversity", str(folder), "--n-resamples", "200"])
    assert res.exit_code == 0, res.output
    d = diversity_report([LoadedRun("r", {"run_id": "r"}, [json.loads(x) for x in (folder / "results.jsonl").read_text().splitlines()])],
                         n_resamples=200).decomposition.iloc[0]
    lines = res.output.splitlines()
    assert lines[0] == "run r: 12 questions, 3.0 members per question (95% clustered intervals, 200 resamples)"
    assert lines[1] == f"  mean member Brier     {d.mean_member_brier:.4f} [{d.mean_member_brier_ci_low:.4f}, {d.mean_member_brier_ci_high:.4f}]"
    assert lines[3].startswith(f"  diversity (spread)    {d.diversity:.4f} [{d.diversity_ci_low:.4f}, ")
    assert lines[4].endswith("(< 1e-12)")
    assert all(len(line) <= 100 for line in lines)
    bad = CliRunner().invoke(app, ["diversity", str(tmp_path / "nowhere")])
    assert bad.exit_code == 2 and "nowhere: no such folder" in bad.output


def test_each_questions_page_shows_its_decomposition():
    from benchmarks.viewer.trace import question_view

    q1, q2, failed = standard_records()
    view = question_view(q1, index=0, run_id="a", with_prompts=False)
    assert view.diversity == pytest.approx((0.17, 0.16, 0.01))  # members 0.5, 0.7 on Yes
    assert question_view(q2, index=1, run_id="a", with_prompts=False).diversity == pytest.approx((0.1, 0.09, 0.01))
    assert question_view(failed, index=2, run_id="a", with_prompts=False).diversity is None  # no member answered
    unresolved = {**q1, "outcome": None}
    assert question_view(unresolved, index=0, run_id="a", with_prompts=False).diversity is None


def test_a_large_panels_correlations_are_drawn_as_the_pairs_histogram():
    rng = np.random.default_rng(1)
    n, m = 40, 25
    p = np.clip(rng.uniform(0.1, 0.9, n)[:, None] + rng.normal(0, 0.1, (n, m)), 0.01, 0.99)
    o = rng.integers(0, 2, n)
    c = div.error_correlation(p, o)
    names = [f"f{i}" for i in range(m)]
    d = div.ambiguity_decomposition(p, o)
    row = pd.DataFrame([{"run_id": "panel", **{k: getattr(d, k).mean for k in ("mean_member_brier", "pool_brier", "diversity")},
                         **{f"{k}_ci_{s}": getattr(getattr(d, k), s) for k in ("mean_member_brier", "pool_brier", "diversity")
                            for s in ("low", "high")},
                         "mean_error_correlation": c.mean_correlation, "n_effective": c.n_effective, "members_per_question": 25.0}])
    fig = plots.plot_diversity(row, {"panel": pd.DataFrame(c.matrix, index=names, columns=names)})
    hist = fig.axes[1]
    assert sum(b.get_height() for b in hist.patches) == m * (m - 1) // 2 == c.n_pairs  # every pair counted once
    assert not hist.collections  # no mesh of 625 cells
    assert len(plots.figure_to_svg(fig)) < 100_000


def test_a_mixed_ensembles_members_are_labelled_with_their_model():
    recs = standard_records()
    for r in recs:
        for f in r["trace"]["forecasts"]:
            f["model"] = "sim" if f["agent_id"] == "member-0" else "local/smollm2"
    assert run_members(loaded(recs)).members == ["member-0 (sim)", "member-1 (local/smollm2)"]
    assert run_members(loaded(standard_records())).members == ["member-0", "member-1"]  # one model: the ids say it


def test_the_terminal_lines_stay_within_100_columns_at_their_widest():
    from benchmarks.report.diversity import DiversityReport

    widest = {"run_id": "r", "n": 100_000, "members_per_question": 100.0, "mean_member_brier": 0.9999, "pool_brier": 0.9999,
              "diversity": 0.2500, "diversity_ci_low": 0.2499, "diversity_ci_high": 0.2501, "mean_error_correlation": -0.99,
              "n_effective": 100.0}
    crowd = {"run_id": "r", "crowd_shown": True, "correlation": -0.99, "share_within": 1.0, "tolerance": 0.02,
             "delta_mean_vs_crowd": -0.9999, "delta_mean_vs_crowd_ci_low": -0.9999, "delta_mean_vs_crowd_ci_high": -0.9999}
    lines = DiversityReport(decomposition=pd.DataFrame([widest]), crowd=pd.DataFrame([crowd])).lines()
    assert len(lines) == 2 and max(map(len, lines)) <= 100, [len(x) for x in lines]
