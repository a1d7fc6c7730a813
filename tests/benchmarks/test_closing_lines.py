"""Issue 38, item 4 and the closing line of item 2: what ``run`` says when it ends.

The closing line counts the provider calls in words (never a Python dict). When the members are degenerate
(SmolLM2-135M answers 0% or 100%), one sentence says what they did (the share of 0%/100% answers and the
median spread across members) and points to ``aggregate --panel superforecasters``. Members scripted to answer
0, 100 and 100 on every question give 100% extreme answers and a spread of 100 points on every question.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from agent_providers import scripted_world
from agent_providers.roles import call_role
from agent_providers.scripted import ScriptedProvider
from agent_research.prompts import PERSONAS
from benchmarks.cli import app
from benchmarks.report.members import member_behaviour
from benchmarks.run_folder.load import load_run

cli = CliRunner()


def degenerate(messages, role=None):
    """Members answer 0% (the base-rate persona) or 100% (every other persona); the debate and the supervisor
    answer as in the scripted world."""
    role = role or call_role()
    if role in ("bull", "bear", "disagreements", "decision"):
        return scripted_world.respond(messages, role)
    text = "\n".join(m.content for m in messages)
    p = 0 if PERSONAS["base_rate"] in text else 100
    return json.dumps({"rationale": "certain", "key_evidence": [], "p_yes_percent": p})


def run(tmp_path, monkeypatch, responder, rid: str):
    if responder is not None:
        monkeypatch.setattr("benchmarks.harness.provider_stack.get_provider",
                            lambda spec, **kw: ScriptedProvider(responder=responder))
    res = cli.invoke(app, ["run", "-p", "scripted" if responder else "sim", "--n", "4", "--search", "none", "-o", str(tmp_path),
                           "--run-id", rid, "--no-progress"], env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    return res, json.loads((tmp_path / rid / "manifest.json").read_text())


def test_degenerate_members_are_named_in_one_sentence_with_the_way_out(tmp_path, monkeypatch):
    res, manifest = run(tmp_path, monkeypatch, degenerate, "deg")
    b = member_behaviour(load_run(tmp_path / "deg").records)
    assert (b.n_answers, b.n_extreme, b.n_questions, b.median_spread) == (12, 12, 4, 1.0)  # 3 members x 4 questions
    text = " ".join(res.stdout.split())
    assert ("The members answered 0% or 100% in 12 of 12 forecasts (100%), and on the median question they differed "
            "by 100 points (max - min p_yes)") in text
    assert text.count("forecast-reconcile aggregate --panel superforecasters") == 1
    assert max(map(len, (res.stdout + res.stderr).splitlines())) <= 100


def test_the_closing_line_counts_calls_in_words_and_a_sane_run_has_no_member_note(tmp_path, monkeypatch):
    res, manifest = run(tmp_path, monkeypatch, None, "sim")
    stats = manifest["provider_stats"]
    err = " ".join(res.stderr.split())
    assert "{'calls'" not in res.stderr and "provider calls {" not in res.stderr
    none = lambda n: f"{n:,}" if n else "none"  # noqa: E731
    assert (f"4 questions (0 already done): 4 ok, 0 failed in" in err and
            f"; {stats['calls']:,} provider calls ({none(stats['ok'])} answered, {none(stats['retries'])} retried, "
            f"{none(stats['failures'])} failed)" in err)
    assert stats["calls"] == stats["ok"] + stats["retries"] + stats["failures"] > 0
    assert "The members answered" not in res.stdout  # the simulator's members are not degenerate
    b = member_behaviour(load_run(tmp_path / "sim").records)
    assert b.n_answers == 12 and not b.degenerate


def test_a_panel_of_degenerate_forecasters_gets_the_same_sentence(tmp_path):
    """A panel file (e.g. a weak model's members exported with `export --format panel`) whose forecasters answer
    0 or 1: 3 forecasters x 4 questions, 12 answers, all extreme; spreads 1, 1, 0, 1 (q3: both answered 1), median 1."""
    from tests.benchmarks.test_panels import write_panel_files

    panel = ("question_id,forecaster,p_yes\n"
             "q1,a,0\nq1,b,1\nq1,c,1\nq2,a,1\nq2,b,0\nq2,c,0\nq3,b,1\nq3,c,1\nq4,a,0\nq4,b,1\nq4,c,0\nq1,d,0.5\n")
    path, questions = write_panel_files(tmp_path, panel)
    res = cli.invoke(app, ["aggregate", str(path), "--questions", str(questions), "-o", str(tmp_path / "runs"), "--no-progress",
                           "--n-resamples", "20", "--min-pick-questions", "1"], env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    text = " ".join(res.stdout.split())
    # 12 answers: 11 at 0 or 1, d's 0.5 not; spreads q1 1, q2 1, q3 0, q4 1: median 1
    assert ("The members answered 0% or 100% in 11 of 12 forecasts (92%), and on the median question they differed "
            "by 100 points") in text and "aggregate --panel superforecasters" in text
