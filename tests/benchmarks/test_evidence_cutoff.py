"""run --evidence-cutoff freeze (issue 35, item 4 "Rankings"): the crowd's price is from the freeze, 6-10 days
before the forecast date, so a run may cap every search of its members and supervisor at the freeze date too.
Seen from the user's side: what a scripted backend holding a document dated between the freeze and the forecast
date is asked and what the agents are shown, what the manifest and the results record, the refusal of a question
without a freeze date, and the note next to the crowd."""

from __future__ import annotations

import datetime as dt
import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from agent_research import ForecastPipeline
from agent_schemas import PipelineTrace, Question, SearchResult
from benchmarks.cli import app
from benchmarks.harness.config import RunConfig
from benchmarks.harness.records import question_record
from benchmarks.harness.runner import BenchmarkRunner
from benchmarks.protocol.baselines import CROWD_FREEZE_NOTE, CROWD_TIMING_NOTE, crowd_timing_note
from benchmarks.protocol.clusters import ClusterAssignment
from benchmarks.run_folder.shards import config_digest
from tests.doubles.dated_search import DatedDocuments

cli = CliRunner()

FORECAST = dt.date(2025, 10, 26)
FREEZE = dt.date(2025, 10, 18)
EARLY = SearchResult(title="Acme and Bolt sign their merger agreement", url="https://news.example/acme-signs",
                     snippet="Acme and Bolt signed the merger agreement; regulators have 30 days to object.",
                     published=dt.date(2025, 10, 10), source="news")
LATE = SearchResult(title="Regulator clears the Acme merger without conditions", url="https://news.example/acme-cleared",
                    snippet="The competition regulator cleared the Acme and Bolt merger on Wednesday.",
                    published=dt.date(2025, 10, 22), source="news")  # after the freeze, before the forecast date


def questions() -> list[Question]:
    return [Question(id=f"acme-{i}", text=f"Will the Acme and Bolt merger close by 30 November 2025 (round {i})?",
                     forecast_date=FORECAST, resolution_date=dt.date(2025, 11, 20), outcome=1, crowd_p_yes=0.6,
                     source="polymarket", source_question_id=f"acme-{i}", question_type="market",
                     metadata={"freeze_datetime": f"{FREEZE.isoformat()}T00:00:00Z"}) for i in range(3)]


def run(tmp_path, name: str, **options) -> tuple[DatedDocuments, list[dict], dict]:
    search = DatedDocuments([EARLY, LATE])
    config = RunConfig(providers=["sim"], output_dir=str(tmp_path / name), run_id="r", n_members=3, **options)
    BenchmarkRunner(config, search_client=search, questions=questions(), progress=False).run()
    folder = tmp_path / name / "r"
    records = sorted((json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()),
                     key=lambda r: r["question_id"])
    return search, records, json.loads((folder / "manifest.json").read_text())


def prompts(record: dict, role: str) -> list[str]:
    return ["\n".join(m["content"] for m in c["messages"]) for c in record["trace"]["recorded_calls"] if c["role"] == role]


def shown_to_supervisor(record: dict) -> set[str]:
    return {r["title"] for o in record["trace"]["supervisor"]["search_outcomes"] for r in o["results"]}


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    return run(tmp_path_factory.mktemp("default"), "default")


@pytest.fixture(scope="module")
def freeze_run(tmp_path_factory):
    return run(tmp_path_factory.mktemp("freeze"), "freeze", evidence_cutoff="freeze")


def test_a_default_run_shows_members_and_supervisor_the_document_dated_after_the_freeze(default_run):
    search, records, _ = default_run
    assert search.calls and {cutoff for _, cutoff in search.calls} == {FORECAST}  # every search capped at the forecast date
    for r in records:
        assert r["status"] == "ok"
        assert all(LATE.title in p for p in prompts(r, "forecaster"))  # each member's prompt
        assert LATE.title in shown_to_supervisor(r) and any(LATE.title in p for p in prompts(r, "supervisor"))
        assert r["audit"]["findings"] == 0 and r["audit"]["dropped_by_cutoff_guard"] == 0


def test_a_freeze_run_caps_every_search_of_members_and_supervisor_at_the_freeze_date(freeze_run):
    search, records, manifest = freeze_run
    assert manifest["config"]["evidence_cutoff"] == "freeze"
    assert search.calls and {cutoff for _, cutoff in search.calls} == {FREEZE}
    for r in records:
        assert r["status"] == "ok"
        members, supervisor = prompts(r, "forecaster"), prompts(r, "supervisor")
        assert len(members) == 3 and supervisor
        assert not any(LATE.title in p for p in members + supervisor + prompts(r, "bull") + prompts(r, "bear"))
        assert all(EARLY.title in p for p in members)  # what was known at the freeze is still shown
        assert shown_to_supervisor(r) == {EARLY.title}
        assert {o["cutoff_date"] for o in r["trace"]["supervisor"]["search_outcomes"]} == {FREEZE.isoformat()}
        assert all(f"Forecast date (information cutoff): {FORECAST.isoformat()}" in p for p in members)  # the date the prompt states
        # the guard dropped the late document once per member search and per supervisor search; nothing leaked
        n_searches = sum(len(f["queries"]) for f in r["trace"]["forecasts"]) + len(r["trace"]["supervisor"]["search_outcomes"])
        assert r["audit"]["dropped_by_cutoff_guard"] == n_searches and r["audit"]["findings"] == 0


def test_a_default_run_writes_the_manifest_and_results_it_wrote_before_the_option(default_run, tmp_path):
    _, records, manifest = default_run
    assert "evidence_cutoff" not in manifest["config"]  # so old manifests, shard digests and resumes are unchanged
    _, explicit, explicit_manifest = run(tmp_path, "explicit", evidence_cutoff="forecast")
    assert {**explicit_manifest["config"], "output_dir": None} == {**manifest["config"], "output_dir": None}
    volatile = {"created_at", "latency_s", "wall_time_s"}

    def stable(value):
        if isinstance(value, dict):
            out = {k: stable(v) for k, v in value.items() if k not in volatile}
            for k in ("recorded_calls", "recorded_searches"):  # concurrent members record in the order they finish
                if k in out:
                    out[k] = sorted(out[k], key=lambda x: json.dumps(x, sort_keys=True))
            return out
        return [stable(v) for v in value] if isinstance(value, list) else value

    assert stable(explicit) == stable(records)
    digest = {c: config_digest(RunConfig(evidence_cutoff=c).model_dump(mode="json")) for c in ("forecast", "freeze")}
    assert digest["forecast"] == config_digest(RunConfig().model_dump(mode="json")) != digest["freeze"]
    # a manifest written before the option resumes as a forecast-date run
    old = RunConfig.model_validate({k: v for k, v in manifest["config"].items() if k != "evidence_cutoff"})
    assert old.evidence_cutoff == "forecast"


def test_the_leakage_audit_reads_the_runs_cutoff(default_run):
    """The document dated between the freeze and the forecast date is no finding in a default run and one in each
    prompt that shows it in a freeze run."""
    _, records, _ = default_run
    q = questions()[0]
    trace = PipelineTrace.model_validate(records[0]["trace"])  # the record's trace, read back as the run wrote it
    shown = sum(p.count(f"news, {LATE.published.isoformat()}") for role in ("forecaster", "supervisor") for p in prompts(records[0], role))
    assert shown >= 4  # three members and the supervisor's decision
    common = dict(clusters=ClusterAssignment(), baselines={})
    forecast = question_record(q, trace, config=RunConfig(providers=["sim"]), **common).audit
    freeze = question_record(q, trace, config=RunConfig(providers=["sim"], evidence_cutoff="freeze"), **common).audit
    assert forecast["evidence_dated_after_cutoff"] == 0 and forecast["findings"] == 0
    assert freeze["evidence_dated_after_cutoff"] == shown and freeze["findings"] == shown


def test_the_pipeline_refuses_a_cap_after_the_forecast_date_before_anything_is_called():
    from agent_providers import ScriptedProvider

    provider = ScriptedProvider([])
    pipeline = ForecastPipeline.from_config([provider])
    with pytest.raises(ValueError, match="^cutoff_date 2025-10-27 is after the question's forecast_date 2025-10-26: that would leak$"):
        pipeline.run(questions()[0], cutoff_date=FORECAST + dt.timedelta(days=1))
    assert provider.requests == []


def _file(tmp_path, freeze_cells: list[str]) -> str:
    rows = [{"id": f"q{i}", "question": f"Will event {i} happen?", "forecast_date": "2025-10-26", "resolution_date": "2025-11-20",
             "outcome": i % 2, "crowd_p_yes": 0.3 + 0.1 * i, "freeze_datetime": cell} for i, cell in enumerate(freeze_cells)]
    path = tmp_path / "questions.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return str(path)


@pytest.mark.parametrize("cell, why", [
    ("", "has no freeze_datetime"),
    ("2025-10-30T00:00:00Z", "has freeze_datetime '2025-10-30T00:00:00Z', which is not a date on or before its forecast date 2025-10-26"),
    ("soon", "has freeze_datetime 'soon', which is not a date on or before its forecast date 2025-10-26"),
], ids=["missing", "after-the-forecast-date", "unreadable"])
def test_a_freeze_run_refuses_a_question_without_a_freeze_date_in_one_line_before_anything_is_called(tmp_path, cell, why):
    path = _file(tmp_path, ["2025-10-18T00:00:00Z", cell, "2025-10-17"])
    res = cli.invoke(app, ["run", "-p", "sim", "--questions", path, "--search", "none", "--n", "0", "-o", str(tmp_path / "runs"),
                           "--run-id", "never", "--no-progress", "--evidence-cutoff", "freeze"])
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr == (f"error: {path}: data row 2, question 'q1' {why}: --evidence-cutoff freeze caps its searches at the "
                          "freeze date; give it a freeze date (column 'freeze_datetime'), leave it out, or run with "
                          "--evidence-cutoff forecast\n")
    assert not (tmp_path / "runs").exists()
    res = cli.invoke(app, ["run", "-p", "sim", "--questions", path, "--search", "none", "--n", "0", "-o", str(tmp_path / "runs"),
                           "--run-id", "forecast", "--no-progress", "--no-report"])
    assert res.exit_code == 0, res.output  # the default cap needs no freeze date


def test_a_freeze_runs_report_says_the_members_knew_what_the_crowd_knew(tmp_path):
    path = _file(tmp_path, ["2025-10-18T00:00:00Z"] * 4)
    runs = tmp_path / "runs"
    res = cli.invoke(app, ["run", "-p", "sim", "--questions", path, "--search", "none", "--n", "0", "-o", str(runs),
                           "--no-progress", "--no-report", "--run-id", "freeze", "--evidence-cutoff", "freeze"])
    assert res.exit_code == 0, res.output
    res = cli.invoke(app, ["leaderboard", str(runs / "freeze"), "-o", str(tmp_path / "one"), "--n-resamples", "50"])
    assert res.exit_code == 0, res.output
    board, flat = (tmp_path / "one" / "leaderboard.md").read_text(), " ".join(res.stdout.split())
    assert CROWD_FREEZE_NOTE in board and CROWD_FREEZE_NOTE in flat
    assert CROWD_TIMING_NOTE not in board and CROWD_TIMING_NOTE not in flat
    assert CROWD_FREEZE_NOTE in " ".join((tmp_path / "one" / "report.html").read_text().split())


def test_the_crowd_note_follows_each_runs_cutoff():
    assert crowd_timing_note(["mean", "crowd"]) == CROWD_TIMING_NOTE
    assert crowd_timing_note(["mean", "crowd"], {"r": "forecast"}) == CROWD_TIMING_NOTE
    assert crowd_timing_note(["mean", "crowd"], {"r": "freeze"}) == CROWD_FREEZE_NOTE
    assert crowd_timing_note(["a:mean", "a:crowd", "b:crowd"], {"a": "freeze", "b": "freeze"}) == CROWD_FREEZE_NOTE
    assert crowd_timing_note(["a:crowd", "b:crowd"], {"a": "freeze", "b": "forecast"}) == (
        f"{CROWD_TIMING_NOTE} Except in a, whose searches were capped at the freeze date (--evidence-cutoff freeze): there "
        "they had the same days of news as the crowd.")
    assert crowd_timing_note(["mean", "median"], {"r": "freeze"}) == ""


def test_a_freeze_batch_run_caps_every_search_as_a_run_call_by_call_does(tmp_path):
    """The batch executor runs members and supervisor stage by stage, not through the pipeline's arun: its searches
    take the same cap (a loopback fake of the provider's batch API, tests.doubles.fake_api)."""
    from agent_providers.anthropic_provider import AnthropicProvider
    from tests.doubles.fake_api import FakeProviderAPI

    server = FakeProviderAPI()
    try:
        search = DatedDocuments([EARLY, LATE])
        config = RunConfig(providers=["anthropic/claude-haiku-4-5"], output_dir=str(tmp_path), run_id="batch", n_members=2,
                           batch=True, batch_poll_s=0.01, rate_limits={"anthropic": "rpm:none,itpm:none,otpm:none"},
                           evidence_cutoff="freeze")
        key = "sk-" "test-FAKE-evidence-0123456789"
        BenchmarkRunner(config, provider_factory=lambda spec: AnthropicProvider(spec.partition("/")[2], api_key=key,
                                                                                base_url=server.url),
                        search_client=search, questions=questions()[:2], progress=False, retry_sleep=lambda s: None).run()
    finally:
        server.close()
    records = [json.loads(line) for line in (tmp_path / "batch" / "results.jsonl").read_text().splitlines()]
    assert len(records) == 2 and all(r["status"] == "ok" for r in records)
    assert {cutoff for _, cutoff in search.calls} == {FREEZE}
    for r in records:
        sent = prompts(r, "forecaster") + prompts(r, "supervisor")
        assert len(prompts(r, "forecaster")) == 2 and not any(LATE.title in p for p in sent)
        assert {o["cutoff_date"] for o in r["trace"]["supervisor"]["search_outcomes"]} == {FREEZE.isoformat()}
