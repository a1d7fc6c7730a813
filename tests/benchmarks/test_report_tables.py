"""The report's tables from run folders, value by value (issue 18): cost per method and per role computed by hand,
cost-effectiveness against the paired bootstrap, the audit totals, the contamination split, the fitted methods'
rows (fitted on the run and on earlier runs), and what ``write_report`` writes: the leaderboard files, every
Markdown section, the page's tables and ``fitted.jsonl``.

These are the tests ``tests/mutation/mutation.py`` runs against ``benchmarks/report/``: focused and fast
(no harness run, figures built but not drawn), so that each of the report's mutants is tested in about a second.

The run folders are written here record by record (``QuestionRecord`` of hand-built traces, rows from
``benchmarks.protocol.methods.method_rows``), so every number below is known in advance.
"""

from __future__ import annotations

import datetime as dt
import inspect
import json
import locale
import logging
import math
import re
from pathlib import Path
from html import escape, unescape

import numpy as np
import pandas as pd
import pytest

from agent_research import CombinationRule
from agent_schemas import (DataValidationError, DebateArtifact, ErrorInfo, Forecast, PipelineTrace, Question, SupervisorArtifact,
                           TokenUsage, UsageLedger)
from benchmarks import scoring
from benchmarks.protocol.fitted import FITTED_METHODS, LEARNED_MEAN, fit_runs
from benchmarks.protocol.leakage import AUDIT_KEYS
from benchmarks.protocol.methods import method_rows
from benchmarks.report import write as report
from benchmarks.report.audits import contamination_split, leakage_audit_table, simulation_note
from benchmarks.report.confidence_bands import confidence_band_table
from benchmarks.report.diversity import DECOMPOSITION_TITLE, RECONCILED_TITLE
from benchmarks.report.costs import cost_effectiveness, cost_tables, reference_note, reference_vs_mean
from benchmarks.report.frame import long_frame, methods_of, scorable
from benchmarks.report.leaderboard import ranking_note
from benchmarks.report.write import fitted_lines, write_report
from benchmarks.run_folder import QuestionRecord, ShardGroup, load_run, run_folders
from benchmarks.run_folder import load as load_module
from benchmarks.viewer import page

METHODS = ["mean", "debate", "supervisor", "pipeline"]
U = TokenUsage
ENS = {"q1": U(input_tokens=100, output_tokens=10, calls=2, cost_usd=0.01),
       "q2": U(input_tokens=300, output_tokens=30, calls=2, cost_usd=0.03),
       "q3": U(input_tokens=50, output_tokens=0, calls=2, cost_usd=0.005)}  # q3's members failed: spent anyway
BULL = U(input_tokens=40, output_tokens=4, calls=1, cost_usd=0.002)
BEAR = U(input_tokens=60, output_tokens=6, calls=1, cost_usd=0.003)
SUP = U(input_tokens=200, output_tokens=20, cache_read_tokens=50, calls=2, cost_usd=0.02)
AUDIT = {"q1": dict(zip(AUDIT_KEYS, (5, 2, 1, 0, 0, 0, 0))), "q2": dict(zip(AUDIT_KEYS, (3, 1, 4, 1, 0, 0, 1))),
         "q3": dict(zip(AUDIT_KEYS, (2, 0, 0, 0, 0, 0, 0)))}


def question(qid: str, forecast: str, outcome: int) -> Question:
    return Question(id=qid, text=f"Will {qid} happen?", forecast_date=dt.date.fromisoformat(forecast), outcome=outcome,
                    source="manifold", source_question_id=qid, question_type="market")


def record(q: Question, *, members, latencies, debate=None, supervisor=None, final=None, failed=False) -> dict:
    ledger = UsageLedger()
    ledger.record("ensemble", "forecaster", "openai/gpt-4.1-mini", ENS.get(q.id, U(input_tokens=10, output_tokens=1, calls=2)))
    forecasts = [Forecast(question_id=q.id, agent_id=f"member-{i}", p_yes=None if failed else p, latency_s=lat,
                          status="failed" if failed else "ok", error=ErrorInfo(type="RateLimited", message="429") if failed else None)
                 for i, (p, lat) in enumerate(zip(members, latencies))]
    if debate is not None:
        debate = DebateArtifact(question_id=q.id, p_yes=debate, usage=BULL + BEAR, wall_time_s=3.0)
        ledger.record("debate", "bull", "openai/gpt-4.1-mini", BULL)
        ledger.record("debate", "bear", "openai/gpt-4.1-mini", BEAR)
    if supervisor is not None:
        supervisor = SupervisorArtifact(question_id=q.id, p_yes=supervisor, confidence="high", usage=SUP, wall_time_s=4.0)
        ledger.record("supervisor", "supervisor", "openai/gpt-4.1-mini", SUP)
    mean = None if failed else sum(members) / len(members)
    trace = PipelineTrace(question=q.visible(), forecasts=forecasts, n_ok=0 if failed else len(members), aggregate_p_yes=mean,
                          aggregates={} if failed else {"mean": mean}, debate=debate, supervisor=supervisor,
                          combination_rule=CombinationRule().describe(), final_p_yes=final, final_source="aggregate",
                          ledger=ledger, status="failed" if failed else "ok",
                          error=ErrorInfo(type="EnsembleFailed", message="0 of 2 members succeeded") if failed else None)
    return QuestionRecord(question_id=q.id, status=trace.status, error=trace.error.model_dump() if trace.error else None,
                          outcome=q.outcome, source=q.source, question_type=q.question_type, cluster=q.cluster_id,
                          forecast_date=q.forecast_date.isoformat(), methods=method_rows(trace, METHODS),
                          baselines={"always_0.5": {"p_yes": 0.5, "status": "ok", "note": "constant 0.5"}},
                          ledger=ledger.to_records(), audit=AUDIT.get(q.id, dict.fromkeys(AUDIT_KEYS, 0)), wall_time_s=1.0,
                          trace=trace).model_dump(mode="json")


def write_run(root, run_id, records, specs=("openai/gpt-4.1-mini", "openai/gpt-4o"), stats=None):
    d = root / run_id
    d.mkdir(parents=True)
    manifest = {"run_id": run_id, "providers": [{"spec": s, "model": s.split("/")[-1]} for s in specs],
                "provider_stats": stats or {"calls": 9, "retries": 2, "cache_hits": 1}}
    # as the runner writes them: UTF-8, non-ASCII text as it is
    (d / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False), encoding="utf-8")
    (d / "results.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return d


def standard_records():
    q1, q2, q3 = question("q1", "2024-05-01", 1), question("q2", "2024-08-01", 0), question("q3", "2024-09-01", 1)
    return [record(q1, members=[0.5, 0.7], latencies=[1.0, 2.0], debate=0.8, supervisor=0.9, final=0.85),
            record(q2, members=[0.2, 0.4], latencies=[0.5, 0.5], final=0.3),
            record(q3, members=[0.1, 0.1], latencies=[5.0, 5.0], failed=True)]


@pytest.fixture(autouse=True)
def figures_not_built(monkeypatch):
    """The page's figures are the viewer's part (tests/benchmarks/test_plots.py, test_viewer.py) and take most of a
    report's second: here each one says it was not drawn. What the page draws them from is in its
    ``ReportData`` (:func:`page_data`)."""
    monkeypatch.setattr(page, "_figure", lambda fid, title, caption, build: page.FigureView(fid, title, caption, None,
                                                                                           "not drawn in these tests"))


@pytest.fixture
def page_data(monkeypatch) -> list:
    """The ``ReportData`` of every page ``write_report`` renders, in order."""
    pages = []
    real = report.render_page
    monkeypatch.setattr(report, "render_page", lambda data: pages.append(data) or real(data))
    return pages


@pytest.fixture
def run_a(tmp_path):
    return write_run(tmp_path, "a", standard_records())


def section(markdown: str, title: str) -> str:
    """The body of the Markdown section ``## <title>``, up to the next section."""
    return markdown.split(f"## {title}\n\n", 1)[1].split("\n\n## ", 1)[0]


def html_tables(html: str) -> list[tuple[str, int]]:
    """(title, rows) of the page's "More tables", in order."""
    return [(unescape(t), int(n)) for t, n in re.findall(r'<summary>(.*?) <span class="muted">\((\d+) rows\)</span></summary>', html)]


# --- cost -----------------------------------------------------------------------------------------------------


def test_cost_per_method_is_the_shared_ensemble_plus_its_own_extra_usage(run_a):
    costs, roles = cost_tables([load_run(run_a)])
    table = costs.set_index("method")
    assert list(costs["method"]) == METHODS and list(costs["label"]) == METHODS and set(costs["run_id"]) == {"a"}
    # ensemble of the three questions (the failed one's members spent too): 450 in, 40 out, 6 calls, $0.045
    # debate adds q1's bull + bear (100 in, 10 out, 2 calls, $0.005); supervisor adds 200 in, 20 out, 50 cached,
    # 2 calls, $0.02; pipeline adds both. Wall time: slowest member, plus the debate (3 s), the supervisor (4 s),
    # or for the pipeline the longer of the two, on q1 only.
    expected = {
        #              in   out cached calls cost    tok/q         extra/q      wall
        "mean":       (450, 40, 0,  6,  0.045, 490 / 3, 0.0,        2.0 + 0.5 + 5.0),
        "debate":     (550, 50, 0,  8,  0.050, 600 / 3, 110 / 3,    5.0 + 0.5 + 5.0),
        "supervisor": (650, 60, 50, 8,  0.065, 710 / 3, 220 / 3,    6.0 + 0.5 + 5.0),
        "pipeline":   (750, 70, 50, 10, 0.070, 820 / 3, 330 / 3,    6.0 + 0.5 + 5.0),
    }
    cols = ["input_tokens", "output_tokens", "cached_tokens", "calls", "cost_usd", "tokens_per_question",
            "extra_tokens_per_question", "wall_time_s"]
    for method, values in expected.items():
        assert list(table.loc[method, cols]) == pytest.approx(list(values)), method
    assert (table["reasoning_tokens"] == 0).all()
    by_role = roles.set_index("role")
    assert list(roles["run_id"]) == ["a"] * 4 and set(by_role.index) == {"forecaster", "bull", "bear", "supervisor"}
    assert list(by_role.loc["forecaster", ["input_tokens", "output_tokens", "cached_tokens", "calls", "cost_usd"]]) == pytest.approx([450, 40, 0, 6, 0.045])
    assert list(by_role.loc["bull", ["input_tokens", "output_tokens", "calls", "cost_usd"]]) == pytest.approx([40, 4, 1, 0.002])
    assert list(by_role.loc["bear", ["input_tokens", "output_tokens", "calls", "cost_usd"]]) == pytest.approx([60, 6, 1, 0.003])
    assert list(by_role.loc["supervisor", ["input_tokens", "output_tokens", "cached_tokens", "calls", "cost_usd"]]) == pytest.approx([200, 20, 50, 2, 0.02])


def test_several_runs_are_labelled_by_run(run_a, tmp_path):
    b = write_run(tmp_path, "b", standard_records()[:1])
    costs, roles = cost_tables([load_run(run_a), load_run(b)])
    assert list(costs["label"]) == [f"a:{m}" for m in METHODS] + [f"b:{m}" for m in METHODS]
    assert list(costs.set_index("label").loc["b:mean", ["input_tokens", "tokens_per_question"]]) == [100, 110]  # one question
    assert roles.groupby("run_id").size().to_dict() == {"a": 4, "b": 4}


def test_unknown_costs_stay_unknown(tmp_path):
    q = question("q1", "2024-05-01", 1)
    rec = record(q, members=[0.5, 0.5], latencies=[1, 1], final=0.5)
    for e in rec["ledger"]:
        e["cost_usd"] = None
    costs, _ = cost_tables([load_run(write_run(tmp_path, "u", [rec]))])
    assert costs["cost_usd"].isna().all() and (costs["input_tokens"] == 100).all()
    for e in rec["ledger"]:  # a provider that reports no token counts: 0 tokens in the tables, never a guess
        e["input_tokens"] = e["output_tokens"] = None
    costs, roles = cost_tables([load_run(write_run(tmp_path, "none", [rec]))])
    cols = ["input_tokens", "output_tokens", "tokens_per_question", "extra_tokens_per_question"]
    assert costs[cols].to_numpy().tolist() == [[0, 0, 0.0, 0.0]] * 4
    assert roles[["role", "input_tokens", "output_tokens", "calls"]].to_numpy().tolist() == [["forecaster", 0, 0, 2]]


def test_records_without_ledger_trace_latency_or_extra_usage_count_zero(tmp_path):
    """Records written by older versions or other tools may lack these fields: they count 0 tokens and 0 s."""
    bare = record(question("q1", "2024-05-01", 1), members=[0.5, 0.7], latencies=[1.0, 2.0], final=0.6)
    del bare["ledger"], bare["trace"]
    for row in bare["methods"].values():
        del row["extra_usage"]
    one_latency = record(question("q2", "2024-08-01", 0), members=[0.2, 0.4], latencies=[3.0, 0.5], final=0.3)
    del one_latency["trace"]["forecasts"][0]["latency_s"]  # only the second member's wall time is known: 0.5 s
    no_members = record(question("x3", "2024-08-02", 0), members=[0.2], latencies=[9.0], final=0.2)
    no_members["trace"]["forecasts"] = []
    no_forecasts = record(question("x4", "2024-08-03", 0), members=[0.2], latencies=[9.0], final=0.2)
    del no_forecasts["trace"]["forecasts"]
    costs, _ = cost_tables([load_run(write_run(tmp_path, "old", [bare, one_latency, no_members, no_forecasts]))])
    mean = costs.set_index("method").loc["mean"]
    # ledgers: none for q1, q2's 300 + 30, x3's and x4's 10 + 1 each
    assert list(mean[["input_tokens", "output_tokens", "calls", "tokens_per_question", "wall_time_s"]]) == pytest.approx(
        [320, 32, 6, 352 / 4, 0.5])


def test_fitted_methods_cost_what_they_read(run_a):
    added = fit_runs({"a": load_run(run_a).records})
    costs = cost_tables([load_run(run_a)], added=added)[0].set_index("method")
    assert list(costs.index) == [*METHODS, *FITTED_METHODS]
    cols = ["input_tokens", "output_tokens", "calls", "cost_usd", "tokens_per_question", "extra_tokens_per_question", "wall_time_s"]
    for m in ("fitted_extremized", "fitted_platt", "fitted_member_weights"):  # they read the members' answers only
        assert list(costs.loc[m, cols]) == pytest.approx(list(costs.loc["mean", cols])), m
    # the blend reads the debate and the supervisor too, which run concurrently: the pipeline's cost and wall time
    assert list(costs.loc["fitted_blend", cols]) == pytest.approx([750, 70, 10, 0.070, 820 / 3, 330 / 3, 6.0 + 0.5 + 5.0])


# --- cost-effectiveness --------------------------------------------------------------------------------------


def frame(n=24):
    rows = []
    rng = np.random.default_rng(5)
    for i in range(n):
        o = int(i % 3 == 0)
        base = float(rng.uniform(0.2, 0.8))
        for m, p in (("mean", base), ("debate", 0.9 if o else 0.1), ("supervisor", 1 - base)):
            rows.append({"run_id": "a", "method": m, "label": m, "question_id": f"q{i}", "p_yes": p, "outcome": o,
                         "cluster": f"c{i // 2}"})
    return pd.DataFrame(rows)


def test_cost_effectiveness_scales_the_paired_difference_by_the_extra_tokens():
    scored = frame()
    costs = pd.DataFrame([{"run_id": "a", "method": "mean", "label": "mean", "extra_tokens_per_question": 0.0},
                          {"run_id": "a", "method": "debate", "label": "debate", "extra_tokens_per_question": 2500.0},
                          {"run_id": "a", "method": "supervisor", "label": "supervisor", "extra_tokens_per_question": 0.0}])
    out = cost_effectiveness(scored, costs, n_resamples=300, seed=4)
    assert list(out["label"]) == ["debate"]  # the reference and methods without extra tokens are left out
    row = out.iloc[0]
    d, m = scored[scored.method == "debate"], scored[scored.method == "mean"]
    bs_d = scoring.brier_score(d["p_yes"].to_numpy(), d["outcome"].to_numpy())
    bs_m = scoring.brier_score(m["p_yes"].to_numpy(), m["outcome"].to_numpy())
    mean, lo, hi = scoring.paired_difference_ci(bs_d, bs_m, d["cluster"].to_numpy(), n_resamples=300, seed=4)
    assert mean == pytest.approx(float(np.mean(bs_d - bs_m))) and lo < mean < hi  # 12 clusters: an interval
    assert (row["n"], row["delta_brier_vs_mean"], row["delta_ci_low"], row["delta_ci_high"]) == (24, pytest.approx(mean),
                                                                                               pytest.approx(lo), pytest.approx(hi))
    assert row["extra_tokens_per_question"] == 2500.0
    assert (row["delta_brier_per_1k_extra_tokens"], row["per_1k_ci_low"], row["per_1k_ci_high"]) == (
        pytest.approx(mean / 2.5), pytest.approx(lo / 2.5), pytest.approx(hi / 2.5))


def test_cost_effectiveness_only_on_questions_both_answered_and_with_a_reference():
    scored = frame()
    scored = scored[~((scored.method == "debate") & scored.question_id.isin(["q0", "q1"]))]
    costs = pd.DataFrame([{"run_id": "a", "method": "debate", "label": "debate", "extra_tokens_per_question": 1000.0}])
    row = cost_effectiveness(scored, costs, n_resamples=50).iloc[0]
    assert row["n"] == 22
    assert cost_effectiveness(scored[scored.method != "mean"], costs).empty
    assert cost_effectiveness(scored, costs, reference="supervisor").iloc[0]["label"] == "debate"
    none = pd.DataFrame([{"run_id": "a", "method": "other", "label": "other", "extra_tokens_per_question": 10.0}])
    assert cost_effectiveness(scored, none).empty  # no rows of that method: no common questions


def test_cost_effectiveness_defaults_to_1000_resamples_with_seed_0():
    scored = frame()
    costs = pd.DataFrame([{"run_id": "a", "method": "debate", "label": "debate", "extra_tokens_per_question": 2500.0}])
    got = cost_effectiveness(scored, costs)
    pd.testing.assert_frame_equal(got, cost_effectiveness(scored, costs, reference="mean", n_resamples=1000, seed=0))
    interval = ["delta_ci_low", "delta_ci_high"]
    for other in ({"n_resamples": 1000, "seed": 1}, {"n_resamples": 1001, "seed": 0}):  # the settings show
        assert list(cost_effectiveness(scored, costs, **other).loc[0, interval]) != list(got.loc[0, interval]), other


def test_cost_effectiveness_goes_on_past_a_run_without_reference_and_a_method_without_common_questions():
    scored = frame()
    without_mean = scored[scored.method != "mean"].assign(run_id="0")  # run "0" comes first and has no reference
    costs = pd.DataFrame([{"run_id": r, "method": m, "label": f"{r}:{m}", "extra_tokens_per_question": x}
                          for r in ("0", "a") for m, x in (("other", 10.0), ("debate", 1.0))])
    out = cost_effectiveness(pd.concat([without_mean, scored]), costs, n_resamples=50)
    assert list(out["label"]) == ["a:debate"]  # "other" has no rows; debate spent 1 extra token per question
    row = out.iloc[0]
    assert (row["n"], row["delta_brier_per_1k_extra_tokens"]) == (24, pytest.approx(row["delta_brier_vs_mean"] * 1000))


# --- audits and contamination ----------------------------------------------------------------------------------


def test_the_audit_table_sums_every_question_of_each_run(run_a, tmp_path):
    b = write_run(tmp_path, "b", standard_records()[:1], stats={"calls": 3}, specs=("sim/seed=2",))
    rows = leakage_audit_table([load_run(run_a), load_run(b)]).to_dict("records")
    # issue 38: a comparison's audit lists which runs are simulated
    assert [r.pop("simulated") for r in rows] == ["no", "sim/seed=2"]
    assert rows[0] == {"run_id": "a", "questions": 3, "failed_questions": 1, "prompts_scanned": 10, "evidence_in_prompt": 3,
                       "dropped_by_cutoff_guard": 5, "evidence_dated_after_cutoff": 1, "hindsight_resolution_date": 0,
                       "hindsight_outcome": 0, "findings": 1, "provider_calls": 9, "retries": 2, "cache_hits": 1}
    assert {k: v for k, v in rows[1].items() if k not in ("retries", "cache_hits")} == {
        "run_id": "b", "questions": 1, "failed_questions": 0, **AUDIT["q1"], "provider_calls": 3}
    assert math.isnan(rows[1]["retries"]) and math.isnan(rows[1]["cache_hits"])  # not in that manifest


def test_contamination_split_uses_the_latest_known_cutoff(run_a):
    df, manifests = long_frame([load_run(run_a)])
    table = contamination_split(scorable(df), manifests).set_index("label")
    # cutoffs 2024-06-30 (gpt-4.1-mini) and 2023-10-31 (gpt-4o): the latest bounds; q1 (2024-05-01) is before it
    assert table.loc["mean"].to_dict() == {"models": "openai/gpt-4.1-mini, openai/gpt-4o", "training_cutoff": "2024-06-30",
                                           "n_all": 2, "brier_all": pytest.approx((0.4 ** 2 + 0.3 ** 2) / 2),
                                           "n_after_cutoff": 1, "brier_after_cutoff": pytest.approx(0.3 ** 2)}
    assert table.loc["debate", "brier_all"] == pytest.approx((0.2 ** 2 + 0.3 ** 2) / 2)  # q2: not triggered, equals mean
    assert table.loc["always_0.5", "brier_after_cutoff"] == 0.25


def test_contamination_split_without_a_known_cutoff(tmp_path):
    d = write_run(tmp_path, "u", standard_records(), specs=("openai-compatible/m@http://127.0.0.1:9/v1", "scripted"))
    df, manifests = long_frame([load_run(d)])
    row = contamination_split(scorable(df), manifests).set_index("label").loc["mean"]
    assert (row["training_cutoff"], row["n_all"], row["n_after_cutoff"]) == ("unknown", 2, 0) and math.isnan(row["brier_after_cutoff"])


def test_contamination_split_counts_a_question_of_the_cutoff_day_as_before_it(tmp_path):
    on_the_day = record(question("q4", "2024-06-30", 0), members=[0.2, 0.2], latencies=[1, 1], final=0.2)
    d = write_run(tmp_path, "c", [*standard_records(), on_the_day])
    df, manifests = long_frame([load_run(d)])
    row = contamination_split(scorable(df), manifests).set_index("label").loc["mean"]
    assert (row["training_cutoff"], row["n_all"], row["n_after_cutoff"]) == ("2024-06-30", 3, 1)  # only q2 (2024-08-01)
    row = contamination_split(scorable(df), {"c": {"run_id": "c"}}).set_index("label").loc["mean"]  # no providers listed
    assert (row["models"], row["training_cutoff"], row["n_all"], row["n_after_cutoff"]) == ("", "unknown", 3, 0)


# --- loading -----------------------------------------------------------------------------------------------------


def test_long_frame_has_one_row_per_question_and_method_or_baseline(run_a, tmp_path):
    df, manifests = long_frame([load_run(run_a)])
    assert len(df) == 3 * (4 + 1) and set(manifests) == {"a"} and list(df["label"]) == list(df["method"])
    row = df[(df.question_id == "q1") & (df.method == "debate")].iloc[0]
    assert (row["kind"], row["p_yes"], row["status"], row["outcome"], row["source"], row["cluster"], row["forecast_date"]) == (
        "method", 0.8, "ok", 1, "manifold", "manifold|q1", "2024-05-01")
    assert df[df.method == "always_0.5"]["kind"].unique().tolist() == ["baseline"]
    failed = df[df.question_id == "q3"]
    assert failed[failed.kind == "method"]["p_yes"].isna().all() and set(failed[failed.kind == "method"]["status"]) == {"failed"}
    scored = scorable(df)
    assert len(scored) == 2 * 5 + 1 and scored["outcome"].dtype == np.int64  # q3's baseline is scored too
    b = write_run(tmp_path, "b", standard_records()[:1])
    both, _ = long_frame([load_run(run_a), load_run(b)])
    assert set(both["label"]) == {f"{r}:{m}" for r in "ab" for m in [*METHODS, "always_0.5"]}
    empty = write_run(tmp_path, "e", [])
    df_e, m_e = long_frame([load_run(empty)])
    assert df_e.empty and set(m_e) == {"e"}


def test_long_frame_scores_the_rows_added_after_the_run_with_their_notes(tmp_path):
    recs = standard_records()
    del recs[0]["methods"]["mean"]["note"]  # a row without a note
    del recs[1]["baselines"]  # a record without baselines
    d = write_run(tmp_path, "a", recs)
    added = fit_runs({"a": load_run(d).records})
    df, _ = long_frame([load_run(d)], added=added)
    assert list(df.columns) == ["run_id", "method", "kind", "p_yes", "status", "note", "question_id", "outcome", "source",
                                "question_type", "cluster", "horizon_days", "forecast_date", "label"]
    assert list(df.index) == list(range(len(df))) and df["p_yes"].dtype == np.float64
    assert list(df[df.question_id == "q1"]["method"]) == [*METHODS, *FITTED_METHODS, "always_0.5"]  # own rows, added, baselines
    assert list(df[df.question_id == "q2"]["method"]) == [*METHODS, *FITTED_METHODS]
    q1 = df[df.question_id == "q1"].set_index("method")
    assert (q1.loc["fitted_platt", "kind"], q1.loc["fitted_platt", "p_yes"], q1.loc["fitted_platt", "status"]) == ("method", 0.6, "ok")
    assert q1.loc["fitted_platt", "note"] == added["a"]["q1"]["fitted_platt"]["note"]
    assert q1.loc["fitted_platt", "note"].startswith("fallback to mean (a=1, b=0): only 0 questions (0 Yes) resolved before 2024-05-01")
    assert (q1.loc["mean", "note"], q1.loc["debate", "note"], q1.loc["always_0.5", "note"]) == ("", "", "constant 0.5")


def test_methods_of_puts_the_rows_added_for_the_question_after_the_records_own():
    rec = {"question_id": "q1", "methods": {"mean": {"p_yes": 0.6}}}
    added = {"a": {"q1": {"fitted_platt": {"p_yes": 0.7}}, "q2": {"fitted_platt": {"p_yes": 0.1}}},
             "b": {"q1": {"fitted_platt": {"p_yes": 0.2}}}}
    assert list(methods_of(rec, "a", added).items()) == [("mean", {"p_yes": 0.6}), ("fitted_platt", {"p_yes": 0.7})]
    assert methods_of(rec, "b", added)["fitted_platt"] == {"p_yes": 0.2}
    assert methods_of(rec, "c", added) == methods_of(rec, "a") == {"mean": {"p_yes": 0.6}}
    assert methods_of({"question_id": "q2"}, "a", added) == {"fitted_platt": {"p_yes": 0.1}}  # no rows of its own


def test_scored_outcomes_are_integers_when_some_questions_are_unresolved(tmp_path):
    unresolved = record(question("q4", "2024-05-02", 1).model_copy(update={"outcome": None}), members=[0.5, 0.5],
                        latencies=[1, 1], final=0.5)
    df, _ = long_frame([load_run(write_run(tmp_path, "u", [*standard_records(), unresolved]))])
    assert df["outcome"].isna().sum() == 5  # q4's four methods and its baseline
    scored = scorable(df)
    assert scored["outcome"].dtype == np.int64 and scored["outcome"].tolist() == [1] * 5 + [0] * 5 + [1]


def test_a_run_folder_reads_as_utf8_whatever_the_locale(tmp_path):
    d = write_run(tmp_path, "zürich", [record(question("qé", "2024-05-01", 1), members=[0.5, 0.5], latencies=[1, 1], final=0.5)])
    saved = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")  # ASCII: the default text encoding of many servers
    try:
        run = load_run(d)
    finally:
        locale.setlocale(locale.LC_CTYPE, saved)
    assert run.run_id == "zürich" and [r["question_id"] for r in run.records] == ["qé"]


def test_a_folder_without_manifest_is_not_a_run(tmp_path):
    with pytest.raises(FileNotFoundError, match=f"^{tmp_path} is not a run folder: no manifest.json$"):
        load_run(tmp_path)


def test_duplicated_records_keep_the_first_and_warn_once(run_a, caplog, monkeypatch):
    monkeypatch.setattr(load_module, "_WARNED_DUPLICATES", set())
    first = json.loads((run_a / "results.jsonl").read_text().splitlines()[0])
    second = {**first, "outcome": 0}
    with open(run_a / "results.jsonl", "a") as fh:
        fh.write(json.dumps(second) + "\n" + json.dumps(second) + "\n")
    with caplog.at_level(logging.WARNING, logger="benchmarks.run_folder.load"):
        run = load_run(run_a)
        load_run(str(run_a))
    manifest, records = run.manifest, run.records
    assert manifest["run_id"] == "a" and [r["question_id"] for r in records] == ["q1", "q2", "q3"] and records[0]["outcome"] == 1
    assert caplog.messages == [f"{run_a}: 2 duplicated question record(s) in results.jsonl; the report keeps the first record of each question"]


def test_run_folders_are_named_directly_or_found_inside_a_folder(run_a, tmp_path):
    b = write_run(tmp_path, "b", [])
    (tmp_path / "notes").mkdir()
    (tmp_path / "file.txt").write_text("x")
    assert run_folders([run_a]) == [run_a]
    assert run_folders([str(tmp_path)]) == [run_a, b]  # sorted, only folders with a manifest
    assert run_folders([b, run_a]) == [b, run_a]
    with pytest.raises(FileNotFoundError, match=f"^{tmp_path / 'missing'}: no such folder$"):
        run_folders([tmp_path / "missing"])
    for p in (tmp_path / "notes", tmp_path / "file.txt"):
        with pytest.raises(FileNotFoundError, match=f"^{p} is not a run folder \\(no manifest.json\\) and holds no run folder$"):
            run_folders([p])


# --- the report files ------------------------------------------------------------------------------------------------


def test_write_report_writes_the_three_files_with_every_table(run_a, tmp_path, page_data):
    out = tmp_path / "reports" / "a"  # its parent is made too
    rep = write_report([run_a], out, n_resamples=50, max_imputed=0.4)  # methods answered 2 of 3
    table = rep.leaderboard.set_index("label")
    assert table["ranked"].all() and (table["n"] == 3).all()  # q3's failed ensemble: imputed as the worst case
    assert table.loc["mean", "n_imputed"] == table.loc["debate", "n_imputed"] == 1 and table.loc["always_0.5", "n_imputed"] == 0
    assert sorted(table.index) == sorted([*METHODS, *FITTED_METHODS, "always_0.5"])
    for fitted, spends_like in (("fitted_platt", "mean"), ("fitted_blend", "pipeline")):
        assert list(table.loc[fitted, ["tokens_per_question", "extra_tokens_per_question", "cost_usd"]]) == pytest.approx(
            list(table.loc[spends_like, ["tokens_per_question", "extra_tokens_per_question", "cost_usd"]])), fitted
    # mean 0.6 on q1 (yes) and 0.3 on q2 (no): 0.16 and 0.09; q3 (yes) as the worst case, p_yes 0: 1
    assert table.loc["mean", "brier"] == pytest.approx((0.16 + 0.09 + 1.0) / 3) and table.loc["always_0.5", "brier"] == 0.25
    assert table.loc["mean", "brier_forecastbench"] == pytest.approx((0.16 + 0.09 + 0.25) / 3)  # ForecastBench's 0.5, beside
    assert table.loc["mean", "attempted"] == 3 and table.loc["mean", "failed"] == 1 and table.loc["always_0.5", "failed"] == 0
    assert table.loc["debate", "tokens_per_question"] == pytest.approx(200.0) and table.loc["mean", "cost_usd"] == pytest.approx(0.045)
    assert table.loc["debate", "extra_tokens_per_question"] == pytest.approx(110 / 3)
    # paired on all three questions: q3 has both at the worst case (difference 0)
    assert table.loc["debate", "delta_brier_vs_baseline"] == pytest.approx(((0.2 ** 2 + 0.3 ** 2) - (0.4 ** 2 + 0.3 ** 2)) / 3)
    assert rep.csv_path == out / "leaderboard.csv" and rep.markdown_path == out / "leaderboard.md"
    assert rep.html_path == out / "report.html" and rep.notice == ""
    csv = pd.read_csv(rep.csv_path)
    assert list(csv.columns) == list(rep.leaderboard.columns) and csv["label"].tolist() == rep.leaderboard["label"].tolist()
    md = rep.markdown_path.read_text()
    assert md == rep.markdown + "\n\n" + report.DATA_ATTRIBUTION + "\n" and md.startswith("## Leaderboard")
    sections = [line for line in rep.markdown.splitlines() if line.startswith("## ")]
    assert sections == ["## Leaderboard (lower Brier is better; 95% clustered bootstrap intervals; baseline for deltas: mean)",
                        "## Sensitivity: methods with imputed questions",
                        f"## {DECOMPOSITION_TITLE}",
                        f"## {RECONCILED_TITLE}",
                        "## Cost per method",
                        f"## {report.ROLES_TITLE}",
                        "## Cost-effectiveness against mean (Brier change per 1,000 extra tokens; negative is better)",
                        "## Cost-effectiveness against the learned mean (fitted_platt: the mean recalibrated walk-forward; "
                        "Brier change per 1,000 extra tokens)",
                        "## Fitted methods (walk-forward: each question fitted only on questions resolved before its forecast date)",
                        "## Brier and calibration by confidence band (does the confidence mean anything?)",
                        f"## {report.BETTING_TITLE}",
                        "## Leakage audit over the prompts actually sent (findings must be 0)"]
    board_md = rep.markdown.split("## Leaderboard")[1].split("## Cost per method")[0]
    header = next(line for line in board_md.splitlines() if line.startswith("| "))
    assert [c.strip() for c in header.strip("|").split("|")] == [  # equals: the fitted methods fell back on all 3 questions
        "rank", "label", "equals", "n", "n_answered", "n_imputed", "brier", "brier_ci_low", "brier_ci_high", "brier_index", "log_loss", "ece", "delta_brier_vs_baseline",
        "delta_brier_ci_low", "delta_brier_ci_high", "tokens_per_question", "failed"]
    audit_md = rep.markdown.split("## Leakage audit over the prompts actually sent (findings must be 0)")[1]
    assert "| a        |           3 |                  1 |" in audit_md  # run a: 3 questions, 1 failed
    cost_md = rep.markdown.split("## Cost per method")[1].split("## Cost-effectiveness")[0]
    pipeline_row = next(line for line in cost_md.splitlines() if line.startswith("| pipeline "))
    # tokens in / out, cached, reasoning, calls, unanswered calls, USD
    assert [c.strip() for c in pipeline_row.strip("|").split("|")][:8] == ["pipeline", "750", "70", "50", "0", "10", "0", "0.0700"]
    assert "run_id" not in cost_md and "| method" not in cost_md
    fitted = section(rep.markdown, report.FITTED_TITLE).split("\n\n")[1]
    assert [line.split("|")[1].strip() for line in fitted.splitlines()[2:]] == list(FITTED_METHODS)  # one run: no run prefix
    html = rep.html_path.read_text()
    # the page: every table under its title, with its rows
    assert html_tables(html) == [
        (DECOMPOSITION_TITLE, 1), (RECONCILED_TITLE, 3), ("Cost per method", 8), ("Cost-effectiveness against mean (Brier change per 1,000 extra tokens; negative is better)", 4),
        (report.LEARNED_TITLE, 4), (report.REFERENCE_TITLE, 1), (report.FITTED_TITLE, 4), (report.SOURCES_TITLE, 1), (report.BANDS_TITLE, 8), (report.BETTING_TITLE, 0), ("Tokens per role", 4),
        ("Leakage audit over the prompts actually sent (findings must be 0)", 1),
        ("Contamination split: questions due after the models' training cutoff", 9),
        ("By source", 9), ("By question type", 9), ("By horizon bucket", 9)]
    assert "Δ against mean</span>" in html and f"<small>{report.DATA_ATTRIBUTION}</small>" in unescape(html)
    bands = page_data[0].confidence_bands  # the page draws the confidence bands' figure from the table it lists
    assert len(bands) == 8 and bands is page_data[0].tables[report.BANDS_TITLE]
    assert 'class="notice"' not in html
    q1_fitted = fit_runs({"a": load_run(run_a).records})["a"]["q1"]
    for m in FITTED_METHODS:  # each question's trace shows its fitted rows
        assert q1_fitted[m]["note"] in unescape(html), m
    listed_apart = write_report([run_a], tmp_path / "out2", n_resamples=20)  # 1 of 3 imputed (33%): listed apart
    assert ("## Not ranked (more than 5% of the questions imputed, or no question every run planned; Brier on their own "
            "questions, not comparable; no paired difference, and a Brier Index only on their own runs' questions)") in listed_apart.markdown
    assert ("more than 5% of the questions imputed, or no question every run planned; Brier on their own questions, not "
            "comparable") in unescape(listed_apart.html_path.read_text())
    assert "- mean: 1 of 3 questions imputed (33%, more than 5%): not ranked; with them scored as its worst case" in listed_apart.markdown
    assert "mean: 1 of 3 questions imputed (33%, more than 5%): not ranked" in unescape(listed_apart.html_path.read_text())


def test_rows_added_by_the_caller_are_ranked_costed_and_shown_and_a_loaded_run_is_not_read_again(run_a, tmp_path):
    loaded = load_run(run_a)
    (run_a / "results.jsonl").unlink()  # the report works from what was loaded
    row = {"status": "ok", "note": "PICKED-BY-THE-CALLER", "extra_usage": U().model_dump()}
    added = {"a": {"q1": {"pick": {**row, "p_yes": 0.9}}, "q2": {"pick": {**row, "p_yes": 0.2}}}}  # q3: not answered
    extra = {"The caller's table": pd.DataFrame({"who": ["x", "y"], "value": [1, 2]})}
    rep = write_report([loaded], tmp_path / "out", n_resamples=20, added=added, extra_tables=extra)
    pick = rep.leaderboard.set_index("label").loc["pick"]
    # 2 of 3 questions (1 imputed, above 5%): listed apart on its own, (0.1^2 + 0.2^2) / 2
    assert (pick["n"], bool(pick["ranked"]), pick["brier"]) == (2, False, pytest.approx(0.025))
    assert pick["extra_tokens_per_question"] == 0  # an added row costs the ensemble, as the aggregation methods
    sections = [line for line in rep.markdown.splitlines() if line.startswith("## ")]
    # after the leaderboard, before the members' diversity and the costs
    assert sections.index("## The caller's table") == sections.index(f"## {DECOMPOSITION_TITLE}") - 1
    assert "| x     |       1 |" in section(rep.markdown, "The caller's table")
    html = unescape(rep.html_path.read_text())
    assert "PICKED-BY-THE-CALLER" in html and ("The caller's table", 2) in html_tables(rep.html_path.read_text())
    fitted = [json.loads(line) for line in (tmp_path / "out" / report.FITTED_FILE).read_text().splitlines()]
    assert all("pick" not in line["methods"] for line in fitted) and len(fitted) == 3  # fitted.jsonl: the fitted methods only
    with pytest.raises(ValueError, match="run a, question q1: rows of fitted_platt added twice"):
        write_report([loaded], tmp_path / "out2", n_resamples=20, added={"a": {"q1": {"fitted_platt": {**row, "p_yes": 0.5}}}})


def test_the_baseline_of_several_runs_is_the_first_runs_method(run_a, tmp_path):
    b = write_run(tmp_path, "b", standard_records())
    rep = write_report([run_a, b], tmp_path / "out", n_resamples=20, max_imputed=0.4)  # q3 failed: 1 of 3 imputed
    assert "baseline for deltas: a:mean)" in rep.markdown
    table = rep.leaderboard.set_index("label")
    assert table.loc["b:mean", "delta_brier_vs_baseline"] == pytest.approx(0.0)
    fitted = section(rep.markdown, report.FITTED_TITLE).split("\n\n")[1]
    assert [line.split("|")[1].strip() for line in fitted.splitlines()[2:]] == [f"{r}:{m}" for r in "ab" for m in FITTED_METHODS]
    with pytest.raises(DataValidationError) as ei:
        write_report([run_a, b], tmp_path / "out2", baseline="median")
    assert str(ei.value).startswith("baseline 'median' is not among the scored methods: a:always_0.5, a:debate, ")
    assert (ei.value.field, ei.value.value) == ("baseline", "median") and not (tmp_path / "out2").exists()


def test_the_report_bets_each_method_against_the_crowd_price(tmp_path):
    recs = standard_records()
    recs[0]["baselines"]["crowd"] = {"p_yes": 0.6, "status": "ok", "note": ""}  # q1 (Yes): mean 0.6, no edge
    recs[1]["baselines"]["crowd"] = {"p_yes": 0.4, "status": "ok", "note": ""}  # q2 (No): mean 0.3, NO at 0.6 wins 1/0.6
    rep = write_report([write_run(tmp_path, "a", recs)], tmp_path / "out", n_resamples=20, max_imputed=0.4)  # q3 failed
    rows = section(rep.markdown, report.BETTING_TITLE).split("\n\n")[1].splitlines()[2:]
    table = {c[0]: c[1:] for c in ([x.strip() for x in line.strip("|").split("|")] for line in rows)}
    assert "crowd" not in table and table["mean"][:2] == ["2", "2"]  # q3 has no price
    assert float(table["mean"][2]) == pytest.approx((0.0 + (1 / 0.6 - 1)) / 2, abs=5e-5) and table["mean"][-1] == "1"
    # always 0.5: q1 NO at 0.4, resolved Yes (-1); q2 YES at 0.4, resolved No (-1)
    assert float(table["always_0.5"][2]) == -1.0 and table["always_0.5"][-1] == "2"


def test_runs_without_scorable_forecasts_are_refused(tmp_path):
    empty = write_run(tmp_path, "e", [])
    with pytest.raises(DataValidationError, match=f"^no results in {empty}$") as ei:
        write_report([empty], tmp_path / "out")
    assert (ei.value.field, ei.value.value) == ("results.jsonl", 0)
    q = question("q1", "2024-05-01", 1).model_copy(update={"outcome": None})
    unresolved = write_run(tmp_path, "u", [record(q.model_copy(update={"id": "q1"}), members=[0.5, 0.5], latencies=[1, 1], final=0.5)])
    rec = json.loads((unresolved / "results.jsonl").read_text())
    assert rec["outcome"] is None
    with pytest.raises(report.NothingToScore, match=r"^no scorable forecasts: 0 of 1 questions have a resolved outcome; "
                       r"nothing to score until they resolve$") as ei:
        write_report([unresolved], tmp_path / "out")
    assert isinstance(ei.value, DataValidationError)
    assert (ei.value.field, ei.value.value) == ("outcome", 0) and not (tmp_path / "out").exists()


def test_ranking_note_says_what_the_ranking_rests_on():
    ranked = pd.DataFrame({"n": [40, 40], "n_clusters": [31, 31], "too_small_to_rank": [False, False]})
    assert ranking_note(ranked, 0.05) == (
        "Compared on the same 40 questions (31 clusters of related questions); a question a method gave no probability "
        "for (a failure, an unfinished question, a baseline without a value) is imputed as its worst case, the forecast "
        "opposite to the outcome (Brier 1), so that a failure never improves a standing; ForecastBench imputes 0.5, and "
        "each row gives that figure too (brier_forecastbench). A method with more than 5% of the questions imputed is "
        "listed apart, not ranked, as ForecastBench leaves it off its leaderboard. The number of imputed questions is the "
        "row's n_imputed; tied Brier scores share a rank (2=).")
    small = pd.DataFrame({"n": [12, 12], "n_clusters": [11, 11], "too_small_to_rank": [True, True]})
    assert ranking_note(small, 0.05).endswith("share a rank (2=). **Too few clusters to rank**: 11 < 50; the rows are listed "
                                              "by Brier without ranks, and the order is not evidence.")
    assert ranking_note(small, 0.05, plan_note="The runs planned different questions.").startswith("Compared on the same 12")
    assert "(2=). The runs planned different questions. **Too few" in ranking_note(small, 0.05, plan_note="The runs planned different questions.")
    assert ranking_note(ranked.iloc[0:0], 0.05, plan_note="No question in common.") == "No question in common."
    assert ranking_note(ranked.iloc[0:0], 0.05) == "Nothing is ranked: every method has more than 5% of the questions imputed."


def test_simulated_runs_carry_the_notice():
    from agent_providers.simulator import SIMULATION_NOTE

    manifests = {"a": {"providers": [{"spec": "sim/seed=2"}, {"spec": "scripted"}]}, "b": {"providers": [{"spec": "sim"}]},
                 "c": {}}
    assert simulation_note({k: manifests[k] for k in "ab"}) == f"{SIMULATION_NOTE} Providers: sim, sim/seed=2."
    # a comparison with a run that is not simulated names the simulated runs, and the others as not simulated
    assert simulation_note(manifests) == ("SIMULATED runs: a, b (of 3): their rows measure the simulator (sim, sim/seed=2), a "
                                          "seeded simulation, not any model's forecasting skill. The rows of c are not simulated.")
    # a panel of a simulated run's members (export --format panel, then aggregate) stays simulated
    panel = {"providers": [], "question_selection": {"pool": {"models": ["sim/anchor=truth", "sim/anchor=crowd"]}}}
    assert simulation_note({"p": panel}) == f"{SIMULATION_NOTE} Providers: sim/anchor=crowd, sim/anchor=truth."
    assert simulation_note({"h": {"providers": [], "question_selection": {"pool": {"models": ["local/smollm2"]}}}}) == ""
    assert simulation_note({"a": {"providers": [{"spec": "openai/gpt-4.1-mini"}]}}) == ""


def test_a_simulated_run_reports_the_notice_first(tmp_path):
    from agent_providers.simulator import SIMULATION_NOTE

    run = write_run(tmp_path, "s", standard_records(), specs=("sim",))
    rep = write_report([run], run, n_resamples=20)  # into the run folder itself, as `forecast-reconcile run` does
    assert rep.csv_path == run / "leaderboard.csv" and (run / "results.jsonl").is_file()
    assert rep.notice == f"{SIMULATION_NOTE} Providers: sim."
    assert rep.markdown.startswith(f"**{rep.notice}**\n\n## Leaderboard")
    assert f'<span class="badge warn">simulated</span> {rep.notice}</p>' in unescape(rep.html_path.read_text())


def test_a_run_in_shards_reports_as_one_run(run_a, tmp_path):
    recs = standard_records()
    shards = [write_run(tmp_path / "shards", "s-shard1of2", recs[:2]), write_run(tmp_path / "shards", "s-shard2of2", recs[2:])]
    rep = write_report([ShardGroup(shards, 2, "s")], tmp_path / "out", n_resamples=20)
    whole = write_report([run_a], tmp_path / "whole", n_resamples=20)
    cols = ["label", "n", "n_answered", "brier", "log_loss", "attempted", "failed", "tokens_per_question", "cost_usd"]
    pd.testing.assert_frame_equal(rep.leaderboard[cols], whole.leaderboard[cols])
    audit = section(rep.markdown, "Leakage audit over the prompts actually sent (findings must be 0)").splitlines()[2]
    assert [c.strip() for c in audit.strip("|").split("|")][:3] == ["s", "3", "1"]  # one run of 3 questions, 1 failed


def twelve_questions():
    """12 resolved questions in 12 clusters: enough for intervals. Members answer near the outcome; the debate
    sharpens, the supervisor blurs."""
    out = []
    for i in range(12):
        o = i % 2
        q = question(f"t{i:02d}", f"2024-{i % 9 + 1:02d}-15", o)
        lean = 0.55 + 0.03 * i if o else 0.45 - 0.03 * i
        out.append(record(q, members=[lean, lean], latencies=[1.0, 1.0], debate=min(0.99, max(0.01, lean + (0.1 if o else -0.1))),
                          supervisor=0.5, final=lean))
    return out


def test_the_report_uses_the_resampling_settings_it_is_given(tmp_path):
    d = write_run(tmp_path, "big", twelve_questions())
    rep = write_report([d], tmp_path / "out", n_resamples=40, seed=5)
    df, _ = long_frame([load_run(d)])
    scored = scorable(df)
    from benchmarks.scoring.ranking import rank_methods

    direct = rank_methods(scored, method_col="label", baseline="mean", n_resamples=40, seed=5).set_index("label")
    got = rep.leaderboard.set_index("label")
    for col in ("brier_ci_low", "brier_ci_high", "delta_brier_ci_low", "delta_brier_ci_high"):
        assert got.loc["debate", col] == pytest.approx(direct.loc["debate", col]), col
    assert not np.isnan(got.loc["debate", "brier_ci_low"])
    effect = cost_effectiveness(scored, cost_tables([load_run(d)])[0], n_resamples=40, seed=5).set_index("label")
    effect_md = section(rep.markdown, "Cost-effectiveness against mean (Brier change per 1,000 extra tokens; negative is better)")
    row = next(line for line in effect_md.splitlines() if line.startswith("| debate "))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:5] == ["debate", "12", f"{effect.loc['debate', 'delta_brier_vs_mean']:.4f}",
                         f"{effect.loc['debate', 'delta_ci_low']:.4f}", f"{effect.loc['debate', 'delta_ci_high']:.4f}"]
    # the learned-mean and confidence-band tables, with the fitted rows the report scores, use the same settings
    records = load_run(d).records
    with_fitted = scorable(long_frame([load_run(d)], added=fit_runs({"big": records}))[0])
    costs = cost_tables([load_run(d)], added=fit_runs({"big": records}))[0]
    learned = cost_effectiveness(with_fitted, costs, reference=LEARNED_MEAN, n_resamples=40, seed=5)
    assert "delta_brier_vs_fitted_platt" in learned.columns and not learned["delta_ci_low"].isna().any()
    vs_mean = reference_vs_mean(with_fitted, n_resamples=40, seed=5)
    assert section(rep.markdown, report.LEARNED_TITLE) == reference_note(vs_mean) + "\n\n" + learned.to_markdown(index=False, floatfmt=".4f")
    bands = confidence_band_table(with_fitted, {"big": records}, n_resamples=40, seed=5)
    assert not bands["brier_ci_low"].isna().all()
    assert section(rep.markdown, report.BANDS_TITLE) == bands.to_markdown(index=False, floatfmt=".4f")


def test_documented_defaults():
    def defaults(fn):
        return {k: v.default for k, v in inspect.signature(fn).parameters.items() if v.default is not inspect.Parameter.empty}

    assert defaults(write_report) == {"baseline": "mean", "n_resamples": 1000, "seed": 0, "max_imputed": 0.05, "fit_from": (),
                                      "fit_from_any_model": False, "added": None, "extra_tables": None}
    assert defaults(cost_effectiveness) == {"reference": "mean", "n_resamples": 1000, "seed": 0}


def test_older_records_and_manifests_without_audit_or_stats_count_zero(tmp_path):
    recs = standard_records()
    del recs[0]["audit"]
    recs[1]["audit"] = {"prompts_scanned": 2}  # written before the other counters existed
    d = write_run(tmp_path, "old", recs)
    manifest = json.loads((d / "manifest.json").read_text())
    del manifest["provider_stats"]
    (d / "manifest.json").write_text(json.dumps(manifest))
    row = leakage_audit_table([load_run(d)]).iloc[0]
    assert row["prompts_scanned"] == 2 + AUDIT["q3"]["prompts_scanned"] and row["findings"] == 0 and row["dropped_by_cutoff_guard"] == 0
    assert row["provider_calls"] is None and row["retries"] is None


def test_empty_tables_say_none_and_missing_values_say_nan(tmp_path):
    recs = standard_records()[:2]
    for r in recs:  # aggregation only: no method spends extra tokens, so no cost-effectiveness row
        r["methods"] = {"mean": r["methods"]["mean"]}
    d = write_run(tmp_path, "agg", recs)
    md = write_report([d], tmp_path / "out", n_resamples=20).markdown
    after = md.split("negative is better)\n\n")[1]
    assert after.startswith("(none)\n\n## Cost-effectiveness against the learned mean")
    assert after.split("Brier change per 1,000 extra tokens)\n\n")[1].startswith(
        "The reference against mean (Brier difference, 95% interval): fitted_platt +0.0000 [no interval: too few clusters] on 2 "
        "questions. Where it is positive the learned mean is worse than the mean, and each gain in this table overstates the gain "
        "against mean by as much: read the table against mean too.\n\n(none)\n\n## Fitted methods")
    leaderboard = md.split("## Cost per method")[0]
    assert " nan " in leaderboard and "NAN" not in leaderboard  # no interval for 2 clusters


def test_the_errors_name_every_run(tmp_path):
    a, b = write_run(tmp_path, "a", []), write_run(tmp_path, "b", [])
    with pytest.raises(DataValidationError, match=f"^no results in {a}, {b}$"):
        write_report([f"{a}/", b], tmp_path / "out")  # a folder typed with a trailing slash is named as the folder


# --- fitted methods across runs ----------------------------------------------------------------------------------


def test_fitted_lines_is_one_json_line_per_question_with_fitted_rows():
    fitted = {"a": {"q1": {"fitted_platt": {"p_yes": 0.6, "n_fit": 0}}, "qé": {"fitted_platt": {"p_yes": None, "n_fit": 3}}},
              "b": {"q1": {"fitted_blend": {"p_yes": 0.2}}}}
    records = {"a": [{"question_id": "q1", "forecast_date": "2024-05-01"}, {"question_id": "q0", "forecast_date": "2024-05-01"},
                     {"question_id": "qé", "forecast_date": "2024-06-01"}],
               "b": [{"question_id": "q1", "forecast_date": "2024-07-01"}]}
    text = fitted_lines(fitted, records, ["runs/early", Path("runs/older")])
    assert text == (
        '{"run_id": "a", "question_id": "q1", "forecast_date": "2024-05-01", "fit_from": ["runs/early", "runs/older"], '
        '"methods": {"fitted_platt": {"p_yes": 0.6, "n_fit": 0}}}\n'
        '{"run_id": "a", "question_id": "qé", "forecast_date": "2024-06-01", "fit_from": ["runs/early", "runs/older"], '
        '"methods": {"fitted_platt": {"p_yes": null, "n_fit": 3}}}\n'
        '{"run_id": "b", "question_id": "q1", "forecast_date": "2024-07-01", "fit_from": ["runs/early", "runs/older"], '
        '"methods": {"fitted_blend": {"p_yes": 0.2}}}\n')  # q0 has no fitted rows: no line
    assert fitted_lines({}, records, []) == ""


def history(n: int = 40) -> list[dict]:
    """n questions forecast in January 2024 and resolved in February, half Yes; the members lean the right way."""
    out = []
    for i in range(n):
        o = i % 2
        lean = 0.6 + 0.01 * (i % 7) if o else 0.4 - 0.01 * (i % 5)
        rec = record(question(f"e{i:02d}", f"2024-01-{i % 28 + 1:02d}", o), members=[lean, lean - 0.05], latencies=[1, 1], final=lean)
        out.append({**rec, "resolution_date": f"2024-02-{i % 28 + 1:02d}"})
    return out


def test_write_report_fits_on_the_earlier_runs_it_is_given(tmp_path):
    early = write_run(tmp_path / "history", "early", history())
    later = write_run(tmp_path, "later", [record(question(q, f, 1), members=[0.7, 0.6], latencies=[1, 1], final=0.65)
                                          for q, f in (("l1", "2024-06-01"), ("lé", "2024-06-02"))])
    rep = write_report([later], tmp_path / "out", n_resamples=20, fit_from=[tmp_path / "history"])  # a folder of runs
    expected = fit_runs({"later": load_run(later).records}, [load_run(early).records])["later"]
    text = (tmp_path / "out" / "fitted.jsonl").read_text(encoding="utf-8")
    assert "lé" in text and text.endswith("}\n")
    rows = [json.loads(line) for line in text.splitlines()]
    assert rows == [{"run_id": "later", "question_id": q, "forecast_date": f, "fit_from": [str(tmp_path / "history")],
                     "methods": expected[q]} for q, f in (("l1", "2024-06-01"), ("lé", "2024-06-02"))]
    for row in rows:  # fitted on the 40 earlier questions, not fallen back to the unfitted rule
        assert (row["methods"]["fitted_platt"]["n_fit"], row["methods"]["fitted_platt"]["fallback"]) == (40, False)
    fitted = section(rep.markdown, report.FITTED_TITLE).split("\n\n")[1]
    platt = next(line for line in fitted.splitlines() if line.startswith("| fitted_platt "))
    assert [c.strip() for c in platt.strip("|").split("|")][:5] == ["fitted_platt", "2", "2", "0", "40"]
    board = rep.leaderboard.set_index("label")
    assert board.loc["fitted_platt", "brier"] == pytest.approx(np.mean([(1 - expected[q]["fitted_platt"]["p_yes"]) ** 2 for q in expected]))


def test_the_default_resampling_is_1000_resamples_with_seed_0(tmp_path):
    d = write_run(tmp_path, "big", twelve_questions())
    got = write_report([d], tmp_path / "out").leaderboard.set_index("label")
    scored = scorable(long_frame([load_run(d)])[0])
    from benchmarks.scoring.ranking import rank_methods

    def debate_interval(**kw):
        t = rank_methods(scored, method_col="label", baseline="mean", **kw).set_index("label")
        return [t.loc["debate", c] for c in ("brier_ci_low", "brier_ci_high")]

    assert [got.loc["debate", c] for c in ("brier_ci_low", "brier_ci_high")] == pytest.approx(debate_interval(n_resamples=1000, seed=0))
    assert debate_interval(n_resamples=1000, seed=1) != pytest.approx(debate_interval(n_resamples=1000, seed=0))  # the settings show



def test_the_horizon_table_buckets_each_question_and_keeps_unknown_horizons_apart(tmp_path, page_data):
    horizons = {"t00": 5, "t01": 5, "t02": 100, "t03": None}  # the others: unknown too
    records = [{**r, "horizon_days": horizons.get(r["question_id"])} for r in twelve_questions()]
    write_report([write_run(tmp_path, "h", records)], tmp_path / "out", n_resamples=20)
    (data,) = page_data
    table = data.tables["By horizon bucket"]
    mean = table[table["label"] == "mean"].set_index("horizon_bucket")["n"].to_dict()
    assert mean == {"<=7d": 2, "91-180d": 1, "unknown": 9}


def _with_crowd(rec: dict, p: float) -> dict:
    rec["baselines"]["crowd"] = {"p_yes": p, "status": "ok", "note": "market at freeze"}
    return rec


def test_runs_on_different_questions_are_compared_by_brier_index_linked_by_the_crowd(tmp_path):
    """Issue 31: the Brier Index lets entries that answered different questions be compared. Run "easy" holds
    questions the crowd gets nearly right (Brier 0.01; the run's mean 0.04), run "hard" questions where the
    crowd says 0.5 (0.25; the mean 0.16). By hand: the fit gives easy:mean = crowd + 0.03 and hard:mean =
    crowd - 0.09; shifted so that Always 0.5 scores 0.25, the adjusted scores are 0.16 and 0.04: Brier Index
    100 (1 - sqrt(0.16)) = 60 and 100 (1 - sqrt(0.04)) = 80, the other order than raw Brier (0.04 < 0.16)."""
    easy = [_with_crowd(record(question(f"e{i}", "2025-01-01", i % 2), members=[0.8, 0.8] if i % 2 else [0.2, 0.2],
                               latencies=[1, 1], final=None), 0.9 if i % 2 else 0.1) for i in range(4)]
    hard = [_with_crowd(record(question(f"h{i}", "2025-01-01", i % 2), members=[0.6, 0.6] if i % 2 else [0.4, 0.4],
                               latencies=[1, 1], final=None), 0.5) for i in range(4)]
    runs = [write_run(tmp_path, "easy", easy), write_run(tmp_path, "hard", hard)]
    t = write_report(runs, tmp_path / "out", n_resamples=20).leaderboard.set_index("label")
    assert not t["ranked"].any()  # no question in common: every row apart, on its own questions
    assert (t["n_answered"] == 4).all() and (t["n"] == 4).all() and (t["n_imputed"] == 0).all()  # issue 38: not 0 of 4
    assert (t.loc["easy:mean", "brier"], t.loc["hard:mean", "brier"]) == pytest.approx((0.04, 0.16))
    assert (t.loc["easy:mean", "brier_index"], t.loc["hard:mean", "brier_index"]) == pytest.approx((60.0, 80.0))
    assert (t.loc["easy:mean", "adjusted_brier"], t.loc["hard:mean", "adjusted_brier"]) == pytest.approx((0.16, 0.04))
    assert t.loc["easy:crowd", "brier_index"] == t.loc["hard:crowd", "brier_index"] == pytest.approx(100 * (1 - 0.13 ** 0.5))
    assert t.loc["easy:always_0.5", "brier_index"] == pytest.approx(50.0)
    assert (t["brier_index_market"] == t["brier_index"]).all() and t["brier_index_dataset"].isna().all()
    md = (tmp_path / "out" / "leaderboard.md").read_text()
    assert "brier_index" in md and "a Brier Index only on their own runs' questions" in md


def test_two_runs_on_the_same_questions_each_show_the_crowds_one_index(tmp_path):
    """Issue 38: with a third run "easy2" on easy's questions, the crowd is one entry (the same prices on the same
    questions), and easy2:crowd and easy2:always_0.5 had no Brier Index (their rows were dropped as duplicates
    before each label found its entry). Every run's crowd reads the crowd's index; the values of the test above hold."""
    def easy_run():
        return [_with_crowd(record(question(f"e{i}", "2025-01-01", i % 2), members=[0.8, 0.8] if i % 2 else [0.2, 0.2],
                                   latencies=[1, 1], final=None), 0.9 if i % 2 else 0.1) for i in range(4)]
    hard = [_with_crowd(record(question(f"h{i}", "2025-01-01", i % 2), members=[0.6, 0.6] if i % 2 else [0.4, 0.4],
                               latencies=[1, 1], final=None), 0.5) for i in range(4)]
    runs = [write_run(tmp_path, "easy", easy_run()), write_run(tmp_path, "easy2", easy_run()), write_run(tmp_path, "hard", hard)]
    t = write_report(runs, tmp_path / "out", n_resamples=20).leaderboard.set_index("label")
    crowd = 100 * (1 - 0.13 ** 0.5)
    assert [t.loc[f"{r}:crowd", "brier_index"] for r in ("easy", "easy2", "hard")] == pytest.approx([crowd] * 3)
    assert [t.loc[f"{r}:always_0.5", "brier_index"] for r in ("easy", "easy2", "hard")] == pytest.approx([50.0] * 3)
    assert t["brier_index"].notna().sum() == len(t) - t["brier_index_note"].astype(str).str.startswith("no Brier Index").sum()


def test_the_brier_index_of_methods_compared_on_every_question_is_their_brier_rescaled(run_a, tmp_path):
    t = write_report([run_a], tmp_path / "out", n_resamples=20, max_imputed=0.4).leaderboard.set_index("label")
    compared = t[t["ranked"]]
    assert len(compared) >= 5  # one question set, every row on every question: no difficulty to adjust for
    assert list(compared["brier_index"]) == pytest.approx([100 * (1 - b ** 0.5) for b in compared["brier"]])


def test_the_difficulties_are_fitted_on_the_individual_forecasters_only(tmp_path):
    """Issue 35: the fit learned from the pools, the reconcilers and the fitted methods that equal mean, which
    ForecastBench leaves out (its ENSEMBLE_COMPARISON_MODELS, dummies and copies). Runs a (q1-q4) and b (q3-q6)
    share q3, q4; the difficulties are fitted on each run's two members only, by hand below."""
    outcomes = [1, 0, 1, 0, 1, 0]
    qs = [question(f"q{i + 1}", "2025-01-01", o) for i, o in enumerate(outcomes)]
    members = {"a": [[0.9, 0.6], [0.3, 0.2], [0.8, 0.4], [0.5, 0.1]], "b": [[0.6, 0.7], [0.2, 0.6], [0.9, 0.9], [0.4, 0.3]]}
    runs = {"a": [record(q, members=m, latencies=[1, 1], debate=0.5, final=None) for q, m in zip(qs[:4], members["a"])],
            "b": [record(q, members=m, latencies=[1, 1], supervisor=0.35, final=None) for q, m in zip(qs[2:], members["b"])]}
    t = write_report([write_run(tmp_path, rid, recs) for rid, recs in runs.items()], tmp_path / "out", n_resamples=20,
                     max_imputed=0.5).leaderboard.set_index("label")
    # the oracle: every member an entry fitted on; each run's methods scored on their run's questions, not fitted on
    rows = [(f"{rid}:member-{k}", q.id, p, q.outcome, True)
            for rid, ids in (("a", qs[:4]), ("b", qs[2:])) for q, ps in zip(ids, members[rid]) for k, p in enumerate(ps)]
    labels = ["a:mean", "a:debate", "a:fitted_platt", "b:mean", "b:supervisor"]
    for lab in labels:
        rid, method = lab.split(":")
        ids = qs[:4] if rid == "a" else qs[2:]
        for q, ps in zip(ids, members[rid]):
            p = {"mean": sum(ps) / 2, "fitted_platt": sum(ps) / 2, "debate": 0.5, "supervisor": 0.35}[method]
            rows.append((lab, q.id, p, q.outcome, False))
    oracle = pd.DataFrame(rows, columns=["entry", "question_id", "p_yes", "outcome", "fit"]).assign(question_type="market")
    by_hand = scoring.brier_index_table(oracle, fit_col="fit").set_index("entry")
    for lab in labels:
        assert t.loc[lab, "brier_index"] == pytest.approx(by_hand.loc[lab, "brier_index_overall"], abs=1e-9), lab
    # fitted on the methods too (the old fit), b:mean's index moves: the fit's composition is what this test checks
    everyone = scoring.brier_index_table(oracle.assign(fit=True), fit_col="fit").set_index("entry")
    assert abs(everyone.loc["b:mean", "brier_index_overall"] - t.loc["b:mean", "brier_index"]) > 0.1
    assert t.loc["a:fitted_platt", "equals"].startswith("mean") and t.loc["a:fitted_platt", "brier_index"] == pytest.approx(t.loc["a:mean", "brier_index"])


def test_a_label_over_the_imputed_cutoff_on_one_type_keeps_the_other_types_index():
    """ForecastBench checks its 5% cutoff overall and within each type: the crowd has no dataset price."""
    from benchmarks.report.difficulty import brier_index_columns

    rows = []
    for i in range(20):
        qid, qtype, o = f"q{i}", "market" if i < 10 else "dataset", i % 2
        rows.append(("mean", "method", qid, qtype, 0.7 if o else 0.3, o, False))
        rows.append(("crowd", "baseline", qid, qtype, (0.8 if o else 0.2) if i < 10 else 1.0 - o, o, i >= 10))
    frame = pd.DataFrame(rows, columns=["label", "kind", "question_id", "question_type", "p_yes", "outcome", "imputed"])
    t = brier_index_columns(frame.assign(method=frame["label"])).set_index("label")
    assert t.loc["crowd", "brier_index_market"] == pytest.approx(100 * (1 - 0.04 ** 0.5))  # every market question: raw Brier
    assert np.isnan(t.loc["crowd", "brier_index_dataset"]) and np.isnan(t.loc["crowd", "brier_index"])
    assert t.loc["crowd", "brier_index_note"].startswith("dataset: 10 of 10 dataset questions imputed (more than 5%), no dataset index; overall: no index")
    assert t.loc["mean", "brier_index"] == pytest.approx(100 * (1 - 0.09 ** 0.5)) and t.loc["mean", "brier_index_note"] == ""


def test_a_label_without_market_or_dataset_questions_says_why_it_has_no_index(tmp_path):
    recs = standard_records()[:2]
    for r in recs:
        r["question_type"] = "other"
    t = write_report([write_run(tmp_path, "a", recs)], tmp_path / "out", n_resamples=20).leaderboard
    assert t["brier_index"].isna().all()
    assert (t["brier_index_note"] == "no Brier Index: none of its questions is a market or dataset question").all()
