"""The first hour of a new user (issue 16): the simulator from the command line, the README's Python example,
``forecast`` that explains itself, ``score`` with baselines, ``questions`` and short ids, ``run --dry-run``,
and a command line that rejects bad input in one line and writes nothing."""

import asyncio
import contextlib
import io
import json
import math
import re
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from agent_providers import SimulatorProvider
from agent_providers.pricing import cost_usd
from agent_research import CombinationRule
from agent_schemas import TokenUsage
from benchmarks.protocol.baselines import compute_baselines
from benchmarks.cli import app
from benchmarks.harness.config import RunConfig
from benchmarks.harness.estimate import FullAnswerStandIn, calls_per_question, count_tokens, estimate_run
from benchmarks.harness.config import RECONCILE_MIN_SPREAD
from benchmarks.protocol.methods import DEFAULT_METHODS, method_label
from benchmarks.harness.one_forecast import ForecastFile
from benchmarks.harness.provenance import redacted_command_line
from benchmarks.questions.browse import bundled_questions, resolve_question, short_id
from benchmarks.questions import load_forecastbench

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()
BASELINES = ("crowd", "superforecaster_median", "base_rate", "always_0.5")


def one_line_error(res, *needles: str) -> str:
    assert res.exit_code == 2, (res.exit_code, res.output)
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("error: ")
    text = res.output.lower()
    assert "validation error" not in text and "traceback" not in text and "╭" not in res.output
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


# --- the simulator from the command line ------------------------------------------------------------


def test_simulator_run_of_50_questions_from_the_cli_scores_every_method(tmp_path, monkeypatch):
    out = tmp_path / "runs"
    argv = ["forecast-reconcile", "run", "-p", "sim", "--n", "50", "-o", str(out), "--run-id", "s50", "--no-progress"]
    monkeypatch.setattr(sys, "argv", argv)
    res = runner.invoke(app, argv[1:])
    assert res.exit_code == 0, res.output
    assert "SIMULATED" in res.stdout and "50 ok, 0 failed" in res.stderr
    table = pd.read_csv(out / "s50" / "leaderboard.csv").set_index("label")
    for method in (*(method_label(m, RECONCILE_MIN_SPREAD) for m in DEFAULT_METHODS), "crowd", "base_rate", "always_0.5"):
        assert table.loc[method, "n_answered"] == 50 or method in ("crowd", "base_rate"), method
        # ranked unless more than 5% of the questions are imputed (base_rate has no value before 10 resolved: issue 35)
        assert 0 <= table.loc[method, "brier"] <= 1 and table.loc[method, "ranked"] == (table.loc[method, "n_imputed"] <= 2.5), method
    assert table.loc["always_0.5", "brier"] == pytest.approx(0.25)
    manifest = json.loads((out / "s50" / "manifest.json").read_text())
    assert manifest["providers"][0]["spec"] == "sim" and manifest["providers"][0]["model"].startswith("anchor=truth,k=2")
    assert manifest["command_line"] == argv and manifest["wall_time_s"] > 0
    assert manifest["package_versions"]["pydantic"] and manifest["package_versions"]["forecast-reconcile"]
    assert manifest["git"] is None or re.fullmatch(r"[0-9a-f]{40}", manifest["git"]["commit"])
    assert manifest["question_selection"]["contamination_filter"]["note"].startswith("no trained model")
    records = [json.loads(line) for line in (out / "s50" / "results.jsonl").read_text().splitlines()]
    assert len(records) == 50 and all(r["status"] == "ok" for r in records)
    # the pipeline row is the trace's final probability; the mean row its clipped mean aggregate
    r = records[0]
    assert r["methods"]["pipeline"]["p_yes"] == r["trace"]["final_p_yes"]
    assert r["methods"]["mean"]["p_yes"] == pytest.approx(min(max(r["trace"]["aggregates"]["mean"], 0.01), 0.99))
    html = (out / "s50" / "report.html").read_text()
    assert "SIMULATED" in html


def test_simulator_reads_a_user_question_file_through_the_run(tmp_path):
    q = tmp_path / "q.csv"
    q.write_text("id,question,forecast_date,resolution_date,outcome\n"
                 "a,Will A happen?,2025-01-01,2025-02-01,1\nb,Will B happen?,2025-01-01,2025-02-01,0\n")
    res = runner.invoke(app, ["run", "-p", "sim", "--questions", str(q), "--search", "none", "-o", str(tmp_path / "runs"),
                              "--run-id", "own", "--no-progress", "--no-report"])
    assert res.exit_code == 0, res.output
    assert "2 ok, 0 failed" in res.stderr


# --- the README's Python example ---------------------------------------------------------------------


def readme_example() -> tuple[str, str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Using it from Python"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    printed = re.search(r"```text\n(.*?)```", section, re.S).group(1)
    return code, printed


def test_readme_python_example_runs_as_written_and_prints_what_the_readme_shows():
    code, printed = readme_example()
    assert 'assert trace.status == "ok"' in code and 'get_provider("sim")' in code
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    assert buf.getvalue() == printed


# --- forecast ------------------------------------------------------------------------------------------


def test_forecast_explains_every_step_with_the_supervisors_reasoning_and_writes_a_trace(tmp_path):
    q = load_forecastbench(question_type="market", sample_n=1, seed=0)[0]
    res = runner.invoke(app, ["forecast", "-p", "sim", "-q", short_id(q.id), "-o", str(tmp_path / "f")])
    assert res.exit_code == 0, res.output
    assert "provider: sim (--provider)" in res.stderr and "call 9 done" in res.stderr
    saved = list((tmp_path / "f").glob("*.json"))
    assert len(saved) == 1 and saved[0].name.startswith(f"{q.forecast_date}-{short_id(q.id)}-")
    assert f"trace saved: {saved[0]}" in res.stderr
    record = ForecastFile.model_validate_json(saved[0].read_text())
    trace = record.trace
    assert record.question.id == q.id and record.question.outcome == q.outcome and record.providers == ["sim"]
    assert trace.question.id == q.id and trace.status == "ok"
    assert max(map(len, res.stdout.splitlines())) <= 100  # long lines wrap to the terminal
    out = " ".join(res.stdout.split())  # read as text: wrapped lines joined
    assert f"reasoning: {trace.supervisor.rationale}" in out  # the supervisor's reasoning, verbatim
    for f in trace.forecasts:
        assert f"{f.agent_id} [{f.persona}, sim] p_yes {f.p_yes:.3f}" in out and f.rationale in out
    for rd in trace.debate.rounds:
        assert f"round {rd.round_number} bull p_yes {rd.bull.p_yes:.3f}" in out
    for d in trace.supervisor.disagreements:
        assert d.description in out and f"search {d.query!r}" in out
    # the arithmetic in words, by hand: mean -> debate blend (weight 0.5) -> supervisor by confidence -> clip
    mean, mid, sup = trace.aggregate_p_yes, trace.debate.p_yes, trace.supervisor.p_yes
    blended = 0.5 * mean + 0.5 * mid
    assert f"aggregate (mean) {mean:.3f} -> debate midpoint {mid:.3f} blended with weight 0.5 (0.5 x {mean:.3f} + 0.5 x {mid:.3f}) = {blended:.3f}" in out
    # by the supervisor's grounded confidence (what the combination reads), not the one it stated
    final = {"high": sup, "medium": 0.5 * blended + 0.5 * sup, "low": blended}[trace.supervisor.grounding.effective]
    assert trace.final_p_yes == pytest.approx(min(max(final, 0.01), 0.99))
    assert f"FINAL p_yes {trace.final_p_yes:.3f}" in out
    assert CombinationRule().combine(mean, trace.debate, trace.supervisor) == (trace.final_p_yes, trace.final_source)


def test_forecast_that_fails_exits_1_with_the_reason_and_keeps_the_trace(tmp_path):
    # the registry's scripted provider has no queued answers: every member fails
    res = runner.invoke(app, ["forecast", "-p", "scripted", "--search", "none", "-o", str(tmp_path / "f")])
    assert res.exit_code == 1
    assert res.stderr.strip().splitlines()[-1].startswith("error: the forecast failed: ScriptExhausted: ")
    assert "FINAL: failed" in res.stdout
    assert len(list((tmp_path / "f").glob("*.json"))) == 1


def test_forecast_takes_a_unique_piece_of_an_id_and_refuses_an_ambiguous_one(tmp_path):
    q = load_forecastbench(question_type="market", sample_n=1, seed=0)[0]
    piece = "|".join(q.id.split("|")[1:4])  # round, source and source question id, without the resolution date
    assert resolve_question(piece).id == q.id
    res = runner.invoke(app, ["forecast", "-p", "sim", "-q", "2025-10", "-o", str(tmp_path / "f")])
    one_line_error(res, "'2025-10' matches", "give the short id")
    assert not (tmp_path / "f").exists()


# --- score ---------------------------------------------------------------------------------------------


def test_score_of_five_rows_shows_the_crowd_row(tmp_path):
    qs = load_forecastbench(question_type="market", sample_n=5, seed=9)
    f = tmp_path / "mine.csv"
    pd.DataFrame({"question_id": [short_id(q.id) for q in qs], "p_yes": [0.3, 0.6, 0.2, 0.9, 0.5]}).to_csv(f, index=False)
    res = runner.invoke(app, ["score", str(f), "-o", str(tmp_path / "out"), "--n-resamples", "50"])
    assert res.exit_code == 0, res.output
    crowd = sum((q.crowd_p_yes - q.outcome) ** 2 for q in qs) / 5
    mine = sum((p - q.outcome) ** 2 for p, q in zip([0.3, 0.6, 0.2, 0.9, 0.5], qs)) / 5
    rows = {ln.split()[1]: ln.split() for ln in res.stdout.splitlines() if len(ln.split()) > 3}  # the compact table
    assert rows["crowd"][2:4] == ["5", f"{crowd:.3f}"]
    assert rows["mine"][2:4] == ["5", f"{mine:.3f}"] and rows["mine"][-1] == "baseline"  # deltas are against it
    base = compute_baselines(qs, methods=["base_rate"])
    assert rows["base_rate"][3] == f"{sum((p - q.outcome) ** 2 for p, q in zip(base['p_yes'], qs)) / 5:.3f}"
    assert "5 question id(s) given as short ids" in res.stderr and "too few clusters to rank" in res.stdout.lower()
    table = pd.read_csv(tmp_path / "out" / "leaderboard.csv").set_index("method")
    assert table.loc["crowd", "brier"] == pytest.approx(crowd) and table.loc["mine", "kind"] == "yours"
    assert (tmp_path / "out" / "leaderboard.md").read_text().startswith("Lower Brier")


def test_score_skips_unknown_ids_on_request_and_counts_them(tmp_path):
    qs = load_forecastbench(question_type="market", sample_n=2, seed=9)
    f = tmp_path / "f.csv"
    f.write_text("question_id,p_yes\n" + "\n".join(f"{q.id},0.4" for q in qs) + "\nnot-a-question,0.5\n")
    one_line_error(runner.invoke(app, ["score", str(f)]), "data row 3 (line 4)", "'not-a-question'", "--skip-unknown")
    res = runner.invoke(app, ["score", str(f), "--skip-unknown", "--no-baselines"])
    assert res.exit_code == 0, res.output
    assert "skipped 1 row(s) whose question has no known outcome: data row 3 (line 4): not-a-question" in res.stderr
    assert f" {sum((0.4 - q.outcome) ** 2 for q in qs) / 2:.3f} [" in res.stdout and " crowd " not in res.stdout


def test_score_hints_that_values_look_like_percentages(tmp_path):
    f = tmp_path / "f.csv"
    f.write_text("question_id,p_yes,outcome\na,30,1\nb,0.5,0\nc,72.5,1\n")
    one_line_error(runner.invoke(app, ["score", str(f)]), "data row 1 (line 2)", "'p_yes'", "look like percentages", "divide them by 100")
    g = tmp_path / "g.csv"
    g.write_text("question_id,p_yes,outcome\na,0.3,1\nb,1.2,0\nc,-5,1\n")
    line = one_line_error(runner.invoke(app, ["score", str(g)]), "data row 2 (line 3)")
    assert "percentages" not in line  # a negative value: not percentages


# --- questions and short ids ---------------------------------------------------------------------------


def test_short_ids_are_unique_shell_safe_and_accepted_by_questions_show():
    qs = bundled_questions()
    ids = {short_id(q.id) for q in qs}
    assert len(ids) == len(qs) == 18021 and all(re.fullmatch(r"[0-9a-f]{8}", i) for i in ids)
    q = next(x for x in qs if x.source == "polymarket" and x.outcome == 1)
    res = runner.invoke(app, ["questions", "show", short_id(q.id)])
    assert res.exit_code == 0, res.output
    seen, held = res.stdout.split("HELD BACK FROM FORECASTERS")
    assert f"- Question: {q.text.strip()}" in seen and f"- Forecast date (information cutoff): {q.forecast_date}" in seen
    assert "outcome: Yes (1)" in held and str(q.resolution_date) in held
    assert "Crowd / market probability" not in seen  # held back unless --show-crowd


def test_questions_list_filters_and_searches():
    res = runner.invoke(app, ["questions", "list", "--source", "polymarket", "--search", "interest RATE", "--limit", "0"])
    assert res.exit_code == 0, res.output
    rows = [line for line in res.stdout.splitlines() if re.match(r" ?[0-9a-f]{8} ", line)]  # wrapped text: more lines
    assert max(map(len, res.stdout.splitlines())) <= 100
    want = [q for q in bundled_questions() if q.source == "polymarket"
            and all(w in f"{q.text}\n{q.background}\n{q.resolution_criteria}".lower() for w in ("interest", "rate"))]
    assert len(rows) == len(want) > 5 and {r.split()[0] for r in rows} == {short_id(q.id) for q in want}
    assert f"{len(want)} of 18,021 questions match" in res.stderr
    one_line_error(runner.invoke(app, ["questions", "list", "--source", "polymarkt"]), "unknown source(s) polymarkt")
    res = runner.invoke(app, ["questions"])
    assert res.exit_code == 0 and "18,021 bundled questions" in res.stdout


# --- dry run -------------------------------------------------------------------------------------------


def _forbid_calls(monkeypatch, cls):
    calls = []

    def fail(self, *a, **k):
        calls.append(self.spec)
        raise AssertionError("a dry run called a provider")

    monkeypatch.setattr(cls, "_complete", fail, raising=False)
    monkeypatch.setattr(cls, "_acomplete", fail, raising=False)
    return calls


def test_dry_run_makes_zero_provider_calls_and_writes_nothing(tmp_path, monkeypatch):
    from agent_providers.anthropic_provider import AnthropicProvider

    calls = _forbid_calls(monkeypatch, AnthropicProvider) + _forbid_calls(monkeypatch, SimulatorProvider)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-FAKE-dry-run")
    monkeypatch.delenv("FORECAST_RECONCILE_PROVIDER", raising=False)
    res = runner.invoke(app, ["run", "--dry-run", "-o", str(tmp_path / "runs")])
    assert res.exit_code == 0, res.output
    assert calls == [] and not (tmp_path / "runs").exists()
    out = res.stdout
    assert "providers: anthropic/claude-sonnet-4-6 (auto: ANTHROPIC_API_KEY is set)" in out and "sk-ant-FAKE" not in out
    assert "questions: 12" in out and "total: 108 calls" in out and re.search(r"estimated cost \$0\.\d{4} \(at most \$\d", out)
    res = runner.invoke(app, ["run", "--dry-run", "-p", "sim", "--n", "3", "-o", str(tmp_path / "runs")])
    assert res.exit_code == 0 and calls == [] and "total: 27 calls" in res.stdout and "$0.00" in res.stdout


def test_dry_run_counts_the_prompts_the_pipeline_builds(monkeypatch):
    """Calls per question from the config equal the calls the pipeline makes; a forecaster prompt's tokens
    are ceil(characters / 4) of the prompt the run's own member builds; USD is genai-prices per call."""
    cfg = RunConfig(providers=["anthropic/claude-sonnet-4-6", "openai/gpt-4.1-mini"], sample_n=1, n_members=3, debate_rounds=3)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    est = estimate_run(cfg, sample=1)
    want = calls_per_question(cfg, 2)
    assert want == {(0, "forecaster"): 2, (1, "forecaster"): 1, (0, "bull"): 3, (0, "bear"): 3, (1, "supervisor"): 2}
    rows = est.table.set_index(["provider", "role"])
    assert rows.loc[("anthropic/claude-sonnet-4-6", "bull"), "calls"] == 3
    assert rows.loc[("openai/gpt-4.1-mini", "supervisor"), "calls"] == 2
    # the member prompt, built directly by the run's pipeline
    from benchmarks.harness.runner import BenchmarkRunner

    r = BenchmarkRunner(cfg.model_copy(update={"cache": False}), provider_factory=FullAnswerStandIn, progress=False)
    q = r.selection.questions()[0]
    member = r.build_pipeline().ensemble.members[1]  # member i is on provider i % 2
    outcomes, _ = asyncio.run(member.research(q))
    tokens = sum(count_tokens(m.content) for m in member.build_messages(q, outcomes))
    assert rows.loc[("openai/gpt-4.1-mini", "forecaster"), "input_tokens"] == tokens
    one = rows.loc[("openai/gpt-4.1-mini", "forecaster")]
    assert one["usd"] == pytest.approx(cost_usd("openai/gpt-4.1-mini", TokenUsage(input_tokens=tokens, output_tokens=one["output_tokens"], calls=1)))
    assert one["usd_max"] == pytest.approx(cost_usd("openai/gpt-4.1-mini", TokenUsage(input_tokens=tokens, output_tokens=cfg.pipeline.max_tokens, calls=1)))


# --- a command line that rejects bad input in one line and writes nothing --------------------------------


@pytest.mark.parametrize("args, needle", [
    (["run", "--search", "bing"], "'bing' is not one of 'local', 'ddg', 'none'"),
    (["run", "--question-type", "binary"], "'binary' is not one of"),
    (["run", "--methods", "mean,majority"], "unknown methods ['majority']"),
    (["run", "--n", "many"], "Invalid value for '--n'"),
    (["run", "--members", "0"], "--members: Input should be greater than or equal to 1"),
    (["run", "--no-no-cache"], "No such option: --no-no-cache"),
    (["forecast", "--search", "bing"], "'bing' is not one of"),
    (["questions", "list", "--type", "binary"], "'binary' is not one of 'market', 'dataset', 'any'"),
    (["leaderboad", "runs"], "No such command 'leaderboad'"),
])
def test_bad_choices_exit_2_in_one_line_without_validation_error_text(tmp_path, args, needle):
    out = ["-o", str(tmp_path / "out")] if args[0] in ("run", "forecast") else []
    one_line_error(runner.invoke(app, [*args, *out]), needle)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("spec, needle", [
    ("bogus/x", "unknown provider prefix 'bogus'"),
    ("sim/noise=-1", "noise must be >= 0"),
    ("anthropic/claude-sonnet-4-6", "ANTHROPIC_API_KEY"),
])
@pytest.mark.parametrize("command", ["run", "forecast"])
def test_no_folder_is_left_after_a_rejected_command(tmp_path, monkeypatch, spec, needle, command):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    out = tmp_path / "out"
    one_line_error(runner.invoke(app, [command, "-p", spec, "-o", str(out)]), needle)
    assert not out.exists()


def test_rejected_score_writes_no_report_folder(tmp_path):
    f = tmp_path / "f.csv"
    f.write_text("question_id,p_yes\nx,2\n")
    one_line_error(runner.invoke(app, ["score", str(f), "-o", str(tmp_path / "out")]), "data row 1 (line 2)")
    assert not (tmp_path / "out").exists()


def test_cache_flag_pairs_and_no_cache_writes_no_cache(tmp_path):
    base = ["run", "-p", "sim", "--n", "1", "--search", "none", "-o", str(tmp_path), "--no-progress", "--no-report"]
    assert runner.invoke(app, [*base, "--run-id", "c"]).exit_code == 0
    assert runner.invoke(app, [*base, "--run-id", "n", "--no-cache"]).exit_code == 0
    assert (tmp_path / "c" / "cache").is_dir() and not (tmp_path / "n" / "cache").exists()


# --- leaderboard of a folder of runs, help, version ------------------------------------------------------


def test_leaderboard_accepts_a_folder_of_run_folders(tmp_path):
    for run_id, seed in (("a", 1), ("b", 2)):
        res = runner.invoke(app, ["run", "-p", "sim", "--n", "4", "--seed", str(seed), "--search", "none", "-o", str(tmp_path / "runs"),
                                  "--run-id", run_id, "--no-progress", "--no-report"])
        assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["leaderboard", str(tmp_path / "runs"), "-o", str(tmp_path / "cmp"), "--n-resamples", "20"])
    assert res.exit_code == 0, res.output
    labels = set(pd.read_csv(tmp_path / "cmp" / "leaderboard.csv")["label"])
    assert {"a:mean", "b:mean", "a:pipeline", "b:crowd"} <= labels
    one_line_error(runner.invoke(app, ["leaderboard", str(tmp_path / "cmp")]), "is not a run folder", "holds no run folder")


def test_help_fits_the_terminal_width_and_h_and_version_work():
    wide = runner.invoke(app, ["run", "-h"], env={"COLUMNS": "180"})
    narrow = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "90"})
    assert wide.exit_code == narrow.exit_code == 0
    assert max(map(len, wide.stdout.splitlines())) > 150 and max(map(len, narrow.stdout.splitlines())) <= 90
    assert "--cache" in wide.stdout and "--no-cache" in wide.stdout and "--no-no-cache" not in wide.stdout
    assert "--dry-run" in wide.stdout and "<local|ddg|none>" in wide.stdout
    version = runner.invoke(app, ["--version"])
    assert version.exit_code == 0 and version.stdout.startswith("forecast-reconcile ")


def test_command_lines_are_recorded_with_credentials_redacted():
    argv = ["forecast-reconcile", "run", "-p", "openai-compatible/q@http://u:pw@127.0.0.1:8/v1?key=SECRETKEY,sim",
            "--provider=openai-compatible/q@http://h/v1?api_key=sk-abc", "--questions", "a.csv"]
    red = redacted_command_line(argv)
    assert red == ["forecast-reconcile", "run", "-p", "openai-compatible/q@http://127.0.0.1:8/v1?key=***,sim",
                   "--provider=openai-compatible/q@http://h/v1?api_key=***", "--questions", "a.csv"]
    assert "SECRETKEY" not in str(red) and "pw" not in str(red)


def test_frameworks_where_every_question_failed_exits_1_with_the_reason():
    # a registry scripted provider with nothing queued: every member of every framework fails at once
    res = runner.invoke(app, ["frameworks", "-p", "scripted/empty", "--n", "1", "--search", "none"])
    assert res.exit_code == 1
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("error: every question failed (3 of 3 over the frameworks); first reason: ScriptExhausted: ")
