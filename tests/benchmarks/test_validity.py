"""Issue 10: no hindsight in any prompt, a contamination filter that fails closed, dates read in UTC, a
leakage audit that can fail. Written from the user's side: runs through the harness and the CLI."""

from __future__ import annotations

import asyncio
import datetime as dt
import json

import pytest
from typer.testing import CliRunner

from agent_providers import ScriptedProvider
from agent_research import Ensemble, ForecastPipeline
from agent_schemas import DataValidationError, Question, SearchOutcome, SearchResult
from agent_specialists import DebateAgent, SupervisorAgent
from agent_tools import SearchClient, ToolExecutor, render_evidence
from agent_tools.case_facts import render_case_facts
from benchmarks.harness.config import RunConfig
from benchmarks.protocol.leakage import audit_prompts, leakage_audit
from benchmarks.questions import DATA_SNAPSHOT_DATE, load_forecastbench, load_questions_file
from benchmarks.harness.runner import BenchmarkRunner
from benchmarks.run_folder import read_results
from agent_providers.scripted_world import respond


def _prompts(trace) -> list[str]:
    return ["\n\n".join(m.content for m in c.messages) for c in trace.recorded_calls]


def _date_spellings(d: dt.date) -> list[str]:
    return [d.isoformat(), f"{d.strftime('%B')} {d.day}, {d.year}"]


# --- item 1: the visible question -------------------------------------------------------------------


def test_every_bundled_market_question_keeps_its_actual_resolution_date_out_of_the_prompts():
    """A scripted pipeline over all 2,048 bundled market questions: no prompt shows the actual resolution
    date where it differs from the scheduled close, nor the horizon derived from it."""
    questions = load_forecastbench(question_type="market")
    assert len(questions) == 2048
    llm = ScriptedProvider(responder=respond)
    pipeline = ForecastPipeline(Ensemble.from_providers(llm, n_members=2), DebateAgent(llm, max_rounds=1),
                                SupervisorAgent(llm, max_queries=1))

    async def run_all():
        return await asyncio.gather(*(pipeline.arun(q) for q in questions))

    traces = asyncio.run(run_all())
    checked = 0
    for q, trace in zip(questions, traces):
        assert trace.question.id == q.id and not hasattr(trace.question, "outcome")
        prompts = _prompts(trace)
        assert len(prompts) >= 5
        text = "\n".join(prompts)
        visible = "\n".join([q.text, q.background, q.resolution_criteria])
        if q.resolution_date != q.scheduled_close_date:
            checked += 1
            for s in _date_spellings(q.resolution_date):
                if s not in visible:  # the question's own text may name that date
                    assert s not in text, q.id
            assert f"{q.horizon_days} days" not in text.replace(f"{(q.scheduled_close_date - q.forecast_date).days} days", "")
        assert q.id not in text
    assert checked > 600  # 31% of market rows resolved early: the case the rule is for


def test_case_facts_show_the_scheduled_close_never_the_actual_resolution():
    q = next(q for q in load_forecastbench(question_type="market")
             if q.text.startswith("Will Bitcoin dip to $75,000 by December 31, 2026?") and q.round == "2026-02-01")
    assert (q.resolution_date, q.outcome) == (dt.date(2026, 2, 2), 1)  # it resolved early, Yes
    facts = render_case_facts(q)
    assert "2026-02-02" not in facts and "horizon 1 days" not in facts and "1 days" not in facts
    assert f"Scheduled close date (fixed in advance): {q.scheduled_close_date}" in facts
    assert q.scheduled_close_date > dt.date(2026, 12, 1)
    assert "resolved" not in facts.lower().replace("resolves", "")


def test_dataset_questions_show_their_fixed_resolution_date_and_the_value_at_freeze():
    q = load_forecastbench(sources="fred", rounds="2025-11-23", sample_n=1, seed=0)[0]
    facts = render_case_facts(q)
    assert q.scheduled_close_date == q.resolution_date
    assert f"Scheduled close date (fixed in advance): {q.resolution_date}" in facts
    assert f"Latest value observed on {dt.date(2025, 11, 13)}: {q.metadata['freeze_value_raw']}" in facts


# --- item 2: the crowd value is a run option ---------------------------------------------------------


def _scripted_run(tmp_path, questions, **config):
    cfg = RunConfig(output_dir=str(tmp_path), run_id=config.pop("run_id", "r"), providers=["scripted"], n_members=2,
                    methods=["mean", "pipeline"], search="none", cache=False, **config)
    runner = BenchmarkRunner(cfg, provider_factory=lambda s: ScriptedProvider(responder=respond), questions=questions,
                             progress=False)
    asyncio.run(runner.arun())
    return runner, read_results(runner.run_dir / "results.jsonl")


@pytest.mark.parametrize("show", [False, True])
def test_show_crowd_puts_the_freeze_value_in_the_case_facts(tmp_path, show):
    qs = load_forecastbench(sources="polymarket", sample_n=2, seed=1)
    runner, records = _scripted_run(tmp_path, qs, show_crowd=show)
    manifest = json.loads((runner.run_dir / "manifest.json").read_text())
    assert manifest["config"]["show_crowd"] is show
    for q, r in zip(qs, records):
        prompts = [m["content"] for c in r["trace"]["recorded_calls"] for m in c["messages"]]
        line = f"Crowd / market probability of Yes observed on {dt.date.fromisoformat(q.metadata['freeze_datetime'][:10])}: {100 * q.crowd_p_yes:.1f}%"
        assert any(line in p for p in prompts) is show
        assert not any("Crowd / market probability" in p for p in prompts) or show


# --- item 3: the contamination filter fails closed ----------------------------------------------------


def test_unknown_cutoff_without_date_from_stops_the_run(tmp_path):
    result = CliRunner().invoke(app_for_tests(), ["run", "--provider", "openai-compatible/mystery@http://127.0.0.1:9/v1",
                                                  "-o", str(tmp_path), "--no-report", "--no-progress"])
    assert result.exit_code == 2
    assert "training cutoff unknown" in result.output and "--date-from" in result.output
    assert "--include-before-cutoff" in result.output


def test_questions_file_goes_through_the_date_filters(tmp_path):
    f = tmp_path / "qs.csv"
    f.write_text("id,question,forecast_date,outcome\nold,Will A happen?,2023-03-01,1\nnew,Will B happen?,2025-06-01,0\n")
    cfg = RunConfig(output_dir=str(tmp_path), run_id="f", providers=["openai-compatible/mystery@http://127.0.0.1:9/v1"],
                    questions_file=str(f), forecast_date_from=dt.date(2025, 1, 1), sample_n=None)
    runner = BenchmarkRunner(cfg, provider_factory=lambda s: ScriptedProvider(model="mystery", responder=respond),
                             progress=False)
    # the factory's scripted provider reports spec scripted/mystery: make the run see the configured spec
    runner.stack.providers = [_Named(ScriptedProvider(responder=respond), "openai-compatible/mystery@http://127.0.0.1:9/v1")]
    assert [q.id for q in runner.selection.questions()] == ["new"]
    sel = runner.selection.describe()
    assert sel["contamination_filter"]["basis"] == "--date-from"
    assert sel["forecast_date_from"] == "2025-01-01"


def test_known_cutoff_filter_uses_the_latest_cutoff_plus_margin():
    cfg = RunConfig(providers=["local/smollm2", "openai/gpt-4.1-mini"], cutoff_margin_days=10, sample_n=5)
    runner = BenchmarkRunner(cfg, progress=False)
    runner.stack.providers = [_Named(ScriptedProvider(), "local/smollm2"), _Named(ScriptedProvider(), "openai/gpt-4.1-mini")]
    cut = runner.selection.cutoff_filter()
    assert cut["applied_after"] == "2024-12-10"  # max(2024-11-30, 2024-06-30) + 10 days
    qs = runner.selection.questions()
    assert len(qs) == 5 and min(q.forecast_date for q in qs) > dt.date(2024, 12, 10)
    assert all(q.scheduled_close_date <= DATA_SNAPSHOT_DATE for q in qs)


# --- item 7: time zones ------------------------------------------------------------------------------


def test_a_forecast_date_with_a_time_zone_is_read_in_utc_everywhere(tmp_path):
    f = tmp_path / "tz.csv"
    f.write_text("id,question,forecast_date\nq,Will it?,2024-06-01T01:00:00+09:00\n")
    q = load_questions_file(f)[0]
    assert q.forecast_date == dt.date(2024, 5, 31)  # 2024-05-31T16:00Z
    doc = SearchResult(title="t", url="u", snippet="s", published=dt.date(2024, 6, 1))
    ex = ToolExecutor(_Fixed([doc]))
    # the same string as a cutoff, and the question's own cutoff, drop a document dated 2024-06-01
    assert ex.execute_search("x", cutoff_date="2024-06-01T01:00:00+09:00").dropped_after_cutoff == 1
    assert ex.execute_search("x", cutoff_date=q.forecast_date).dropped_after_cutoff == 1
    bad = tmp_path / "bad.csv"
    bad.write_text("id,question,forecast_date\nq,Will it?,June 1st\n")
    with pytest.raises(DataValidationError, match=r"data row 1 \(line 2\), column 'forecast_date'"):
        load_questions_file(bad)


# --- item 8: the audit can fail ----------------------------------------------------------------------


class _Fixed(SearchClient):
    name = "fixed"

    def __init__(self, results):
        self.results = results

    def search(self, query, *, max_results=5, cutoff_date=None):
        return SearchOutcome(status="ok", attempted_query=query, results=self.results[:max_results])


class _Named:
    """A provider reporting a given spec (to drive the cutoff filter without building the real adapter)."""

    def __init__(self, inner, spec):
        self.inner, self.spec, self.model = inner, spec, spec.split("/", 1)[-1]


def app_for_tests():
    from benchmarks.cli import app

    return app


def test_audit_finds_a_planted_actual_resolution_date_and_outcome():
    q = next(q for q in load_forecastbench(question_type="market")
             if q.resolution_date != q.scheduled_close_date and q.outcome == 1)
    planted = SearchResult(title="Market news", url="https://news.example/x", published=q.forecast_date,
                           snippet=f"Update: this market resolved Yes on {q.resolution_date.isoformat()}.")
    llm = ScriptedProvider(responder=respond)
    ex = ToolExecutor(_Fixed([planted]))
    pipe = ForecastPipeline(Ensemble.from_providers(llm, n_members=2, executor=ex), None, None)
    trace = pipe.run(q)
    audit = leakage_audit(trace, q)
    assert audit["hindsight_resolution_date"] == 2 and audit["findings"] >= 2  # both members' prompts
    # the same run with an honest snippet is clean
    honest = SearchResult(title="Market news", url="https://news.example/x", published=q.forecast_date, snippet="Nothing yet.")
    pipe2 = ForecastPipeline(Ensemble.from_providers(llm, n_members=2, executor=ToolExecutor(_Fixed([honest]))), None, None)
    assert leakage_audit(pipe2.run(q), q)["findings"] == 0


def test_audit_counts_late_evidence_and_outcome_statements_in_prompts():
    q = load_forecastbench(sources="polymarket", sample_n=1, seed=5)[0]
    late = SearchResult(title="t", url="u", snippet="s", published=q.forecast_date + dt.timedelta(days=1), source="news")
    on_time = late.model_copy(update={"published": q.forecast_date})
    counts = audit_prompts([render_evidence([late, on_time]), f"{q.text}\nThis question resolved No.", "Outcome: 1"], q)
    assert counts == {"prompts_scanned": 3, "evidence_dated_after_cutoff": 1, "hindsight_resolution_date": 0,
                      "hindsight_outcome": 2}
