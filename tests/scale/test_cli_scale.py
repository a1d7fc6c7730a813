"""The command line of issue 14: --shard, --batch, --max-cost, --rate-limit, --executor, and leaderboard over shards."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from benchmarks.cli import app

cli = CliRunner()


def one_line_error(res, *needles: str) -> str:
    assert res.exit_code == 2, (res.exit_code, res.output)
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


@pytest.mark.parametrize("args, needles", [
    (["--shard", "3/2"], ["--shard '3/2'", "0 <= i < n"]),
    (["--shard", "x"], ["--shard 'x'"]),
    (["--batch"], ["sim has no batch mode", "Anthropic", "OpenAI"]),
    (["--rate-limit", "anthropic"], ["--rate-limit 'anthropic'", "<provider spec or prefix>=<limits>"]),
    (["--rate-limit", "openai=qps:3"], ["--rate-limit openai=qps:3", "rpm"]),
    (["--executor", "cloud"], ["--executor", "'local' or 'ray'"]),
    (["--max-cost", "-1"], ["--max-cost", "greater than 0"]),
    (["--batch", "--executor", "ray"], ["--batch", "does not run on --executor ray"]),
])
def test_bad_scale_options_are_one_line_errors_and_write_nothing(tmp_path, args, needles):
    res = cli.invoke(app, ["run", "-p", "sim", "--n", "2", "-o", str(tmp_path), "--no-progress", "--no-report", *args])
    one_line_error(res, *needles)
    assert not any(tmp_path.rglob("results.jsonl"))


def test_shards_run_from_the_command_line_and_leaderboard_merges_them(tmp_path):
    for i in range(2):
        res = cli.invoke(app, ["run", "-p", "sim", "--n", "12", "--search", "none", "-o", str(tmp_path), "--run-id", "big",
                               "--shard", f"{i}/2", "--no-progress", "--no-report"])
        assert res.exit_code == 0, res.output
    folders = sorted(p.name for p in tmp_path.iterdir())
    assert folders == ["big-shard0of2", "big-shard1of2"]
    manifests = [json.loads((tmp_path / f / "manifest.json").read_text()) for f in folders]
    assert [m["shard"]["index"] for m in manifests] == [0, 1] and manifests[0]["shard"]["n_questions_all"] == 12
    assert sum(len(m["question_ids"]) for m in manifests) == 12
    res = cli.invoke(app, ["leaderboard", str(tmp_path), "-o", str(tmp_path.parent / "board")])
    assert res.exit_code == 0, res.output
    assert "run big: 2 of 2 shards merged" in res.stderr
    assert (tmp_path.parent / "board" / "leaderboard.md").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == folders  # the comparison writes nothing among the runs


def test_max_cost_with_a_free_provider_runs_to_the_end_and_records_the_spend(tmp_path):
    res = cli.invoke(app, ["run", "-p", "sim", "--n", "3", "--search", "none", "-o", str(tmp_path), "--run-id", "c",
                           "--max-cost", "0.5", "--no-progress", "--no-report"])
    assert res.exit_code == 0, res.output
    m = json.loads((tmp_path / "c" / "manifest.json").read_text())
    assert m["spend"] == {"paid_usd_total": 0.0, "paid_usd_session": 0.0, "max_cost_usd": 0.5} and m["stopped"] is None
    assert m["execution"]["executor"] == "local" and m["execution"]["batch"] is False
