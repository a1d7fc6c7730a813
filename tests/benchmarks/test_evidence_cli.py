"""``run --evidence shared|split|private`` from the command line (issue 37, item 1): the bad-input lines, the
manifest (the mode recorded only when not shared), the records' trace, and the dry run's searches and calls."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from benchmarks.cli import app
from benchmarks.harness.config import RunConfig
from benchmarks.harness.estimate import calls_per_question, searches_per_question

runner = CliRunner()


@pytest.mark.parametrize("mode", ["split", "private"])
def test_dividing_evidence_without_search_is_one_line_exit_2_and_nothing_written(tmp_path, mode):
    out = tmp_path / "runs"
    res = runner.invoke(app, ["run", "-p", "sim", "--evidence", mode, "--search", "none", "-o", str(out), "--no-progress"])
    assert res.exit_code == 2
    lines = res.output.strip().splitlines()
    assert lines == [f"error: --evidence {mode} gives each member its own search results, but --search none makes no search: "
                     "give --search local or ddg, or use --evidence shared"]
    assert not out.exists() or not any(out.iterdir()), "nothing is written, nothing called"


def test_dividing_evidence_with_zero_queries_is_refused():
    with pytest.raises(ValueError, match=r"--evidence private gives each member its own search results, but .* 0 queries \(member.n_queries = 0\)"):
        RunConfig(evidence="private", n_queries=0)


def test_unknown_mode_is_one_line_exit_2(tmp_path):
    res = runner.invoke(app, ["run", "-p", "sim", "--evidence", "pooled", "-o", str(tmp_path), "--no-progress"])
    assert res.exit_code == 2 and "pooled" in res.output and "Traceback" not in res.output


def test_manifest_records_the_mode_only_when_not_shared(tmp_path):
    res = runner.invoke(app, ["run", "-p", "sim", "--evidence", "split", "--n", "2", "--run-id", "s", "-o", str(tmp_path),
                              "--no-progress", "--no-report"])
    assert res.exit_code == 0, res.output
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert manifest["config"]["pipeline"]["evidence"] == "split"
    records = [json.loads(line) for line in (tmp_path / "s" / "results.jsonl").read_text().splitlines()]
    for r in records:
        ev = r["trace"]["member_evidence"]
        shares = list(ev["shown"].values())
        assert ev["mode"] == "split" and sorted(u for s in shares for u in s) == sorted(ev["pool"])
        assert len({u for s in shares for u in s}) == sum(len(s) for s in shares), "disjoint"
    shared = RunConfig().model_dump(mode="json")
    assert "evidence" not in shared["pipeline"], "a shared run's manifest is the one written before evidence modes"
    assert RunConfig.model_validate(shared).pipeline.evidence == "shared"
    assert RunConfig.model_validate(manifest["config"]).pipeline.evidence == "split", "a resume reads the mode back"


@pytest.mark.parametrize("mode, members_searches, forecaster_calls", [
    ("shared", 3, 3),   # each member searches the question text; one forecast call each
    ("split", 1, 3),    # one research pass for the question
    ("private", 3, 6),  # each member writes its own query (one call) and searches it
])
def test_searches_and_calls_each_mode_makes(mode, members_searches, forecaster_calls):
    config = RunConfig(providers=["sim"], evidence=mode)
    assert searches_per_question(config) == {"members": members_searches, "supervisor": 2}
    calls = calls_per_question(config, 1)
    assert calls[(0, "forecaster")] == forecaster_calls and calls[(0, "bull")] == 2 and calls[(0, "supervisor")] == 2
    # with model-written queries (3 per member): shared writes them per member, split once per question
    written = RunConfig(providers=["sim"], pipeline={**RunConfig().pipeline.model_dump(), "evidence": mode,
                                                     "member": {"n_queries": 3, "llm_queries": True}})
    per_mode = {"shared": (9, 6), "split": (3, 4), "private": (9, 6)}[mode]
    assert (searches_per_question(written)["members"], calls_per_question(written, 1)[(0, "forecaster")]) == per_mode


@pytest.mark.parametrize("mode, searches", [("shared", 5), ("split", 3), ("private", 5)])
def test_dry_run_prints_the_searches_of_the_mode(tmp_path, mode, searches):
    res = runner.invoke(app, ["run", "--dry-run", "-p", "sim", "--n", "2", "--evidence", mode, "-o", str(tmp_path)])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert f"searches: at most {searches} per question" in text and f"with {mode} evidence" in text
    assert f"{searches * 2} in all" in text
    assert not any(tmp_path.iterdir())


def test_fit_from_reads_the_mode_as_part_of_the_evidence_setting():
    from benchmarks.protocol.fitted import FIT_SETTINGS

    shared = {"config": RunConfig().model_dump(mode="json")}
    split = {"config": RunConfig(evidence="split").model_dump(mode="json")}
    read = FIT_SETTINGS["evidence"]
    assert read(split) == read(shared) + ", evidence=split"
    assert ", evidence=" not in read(shared), "a shared run reads as it did before evidence modes"


def test_the_comparison_page_names_each_runs_evidence_mode_cutoff_and_pipeline(tmp_path):
    """Two runs side by side on one page: a reader tells the split, freeze-capped run from the shared one by its
    settings (read from the manifest's pipeline, where members, debate rounds and the rest live)."""
    runs = tmp_path / "runs"
    for run_id, extra in (("a", []), ("b", ["--evidence", "split", "--evidence-cutoff", "freeze", "--debate-rounds", "3"])):
        res = runner.invoke(app, ["run", "-p", "sim", "--n", "2", "--run-id", run_id, "-o", str(runs), "--no-progress",
                                  "--no-report", *extra])
        assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["leaderboard", str(runs / "a"), str(runs / "b"), "-o", str(tmp_path / "cmp"), "--n-resamples", "20"])
    assert res.exit_code == 0, res.output
    page = (tmp_path / "cmp" / "report.html").read_text(encoding="utf-8")
    cards = dict(re.findall(r"<h3><code>(\w+)</code>.*?<dt>settings</dt><dd>(.*?)</dd>", page, re.S))
    assert cards == {
        "a": "n_members 3 · search local · evidence shared · evidence_cutoff forecast · show_crowd False · debate_rounds 2 · "
             "supervisor_queries 2 · reconcile_min_spread 0.0 · max_tokens 512 · seed 0",
        "b": "n_members 3 · search local · evidence split · evidence_cutoff freeze · show_crowd False · debate_rounds 3 · "
             "supervisor_queries 2 · reconcile_min_spread 0.0 · max_tokens 512 · seed 0",
    }
