"""A mixed ensemble as a first-class config (issue 37, item 2): ``run --ensemble "spec:count,..."`` or a TOML/JSON
file, its counts giving the ensemble's size, each provider built once, the dry run's rows one per provider and role,
the report's roles table per member model, and bad input refused in one line with exit code 2, nothing written."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from benchmarks.cli import app
from benchmarks.harness.config import RunConfig
from benchmarks.harness.estimate import estimate_run
from benchmarks.harness.mixed_ensemble import EnsembleEntry, member_specs, parse_ensemble
from benchmarks.harness.provider_stack import ProviderStack
from benchmarks.report.write import ROLES_TITLE

MIXED = "sim:2,sim/noise=0.8,rho=0.5:1"


def test_entries_from_the_option_and_from_files(tmp_path):
    assert parse_ensemble("anthropic/claude-sonnet-4-6:2, openai/gpt-4.1-mini:1,local/smollm2:1") == [
        EnsembleEntry("anthropic/claude-sonnet-4-6", 2), EnsembleEntry("openai/gpt-4.1-mini", 1), EnsembleEntry("local/smollm2", 1)]
    # the count is the text after the last colon: a port stays in the spec; a simulator's parameters keep their commas
    assert parse_ensemble("openai-compatible/qwen2.5@http://127.0.0.1:8080/v1:3") == [
        EnsembleEntry("openai-compatible/qwen2.5@http://127.0.0.1:8080/v1", 3)]
    assert parse_ensemble(MIXED) == [EnsembleEntry("sim", 2), EnsembleEntry("sim/noise=0.8,rho=0.5", 1)]
    assert member_specs(parse_ensemble(MIXED)) == ["sim", "sim", "sim/noise=0.8,rho=0.5"]
    toml = tmp_path / "m.toml"
    toml.write_text('[members]\n"anthropic/claude-sonnet-4-6" = 2\n"local/smollm2" = 1\n', encoding="utf-8")
    js = tmp_path / "m.json"
    js.write_text(json.dumps({"members": {"anthropic/claude-sonnet-4-6": 2, "local/smollm2": 1}}), encoding="utf-8")
    assert parse_ensemble(str(toml)) == parse_ensemble(str(js)) == [EnsembleEntry("anthropic/claude-sonnet-4-6", 2),
                                                                     EnsembleEntry("local/smollm2", 1)]


@pytest.mark.parametrize("value,message", [
    ("sim:2,foo/bar:1", "--ensemble entry 'foo/bar:1': unknown provider 'foo' in 'foo/bar'"),
    ("sim", "--ensemble entry 'sim': give each provider with its count of members"),
    ("sim:0", "--ensemble entry 'sim:0': the count must be a positive integer, got '0'"),
    ("sim:two", "--ensemble entry 'sim:two': give each provider with its count"),
    ("sim:1,sim:2", "--ensemble names sim twice"),
    (" , ", "--ensemble is empty"),
])
def test_bad_entries_are_named(value, message):
    with pytest.raises(ValueError) as err:
        parse_ensemble(value)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_bad_files_are_named(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[members]\nsim = 0\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.toml, members.sim: the count must be a positive integer, got 0"):
        parse_ensemble(str(bad))
    none = tmp_path / "none.json"
    none.write_text('{"member": {"sim": 1}}', encoding="utf-8")
    with pytest.raises(ValueError, match="needs a 'members' table"):
        parse_ensemble(str(none))
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    with pytest.raises(ValueError, match="broken.json: not valid JSON"):
        parse_ensemble(str(broken))
    with pytest.raises(ValueError, match="nope.toml: No such file"):
        parse_ensemble(str(tmp_path / "nope.toml"))


def test_a_spec_named_several_times_is_built_once_and_priced_in_one_row(tmp_path):
    config = RunConfig(providers=member_specs(parse_ensemble(MIXED)), n_members=3, search="none", output_dir=str(tmp_path),
                       cache=False, methods=["mean", "debate"], sample_n=3)
    built = ProviderStack(config, tmp_path / "run").build()
    assert len(built) == 3 and built[0] is built[1] and built[2] is not built[0]
    est = estimate_run(config, sample=1)
    rows = est.table.set_index(["provider", "role"])["calls"].to_dict()
    n = len(est.questions)
    # members 0 and 1 on sim, member 2 on the noisier one; the debate on the first (sim)
    assert rows == {("sim", "forecaster"): 2 * n, ("sim", "bull"): 2 * n, ("sim", "bear"): 2 * n,
                    ("sim/noise=0.8,rho=0.5", "forecaster"): n}


def test_run_with_a_mixed_ensemble_records_each_members_model_and_costs_it(tmp_path):
    res = CliRunner().invoke(app, ["run", "--ensemble", MIXED, "--n", "3", "--search", "none", "--methods", "mean,debate",
                                   "-o", str(tmp_path), "--run-id", "mixed", "--no-progress"])
    assert res.exit_code == 0, res.output
    run = tmp_path / "mixed"
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["config"]["providers"] == ["sim", "sim", "sim/noise=0.8,rho=0.5"]
    record = json.loads((run / "results.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert [(f["agent_id"], f["model"]) for f in record["trace"]["forecasts"]] == [
        ("member-0", "sim"), ("member-1", "sim"), ("member-2", "sim/noise=0.8,rho=0.5")]
    roles = (run / "leaderboard.md").read_text(encoding="utf-8").split(f"## {ROLES_TITLE}")[1].split("\n## ")[0]
    forecaster_models = [line.split("|")[2].strip() for line in roles.splitlines() if line.startswith("| forecaster")]
    assert sorted(forecaster_models) == ["sim", "sim/noise=0.8,rho=0.5"]


@pytest.mark.parametrize("args,message", [
    (["--ensemble", "sim:2", "-m", "3"], "--ensemble gives 2 members but --members 3"),
    (["--ensemble", "sim:2", "-p", "sim"], "give --provider or --ensemble, not both"),
    (["--ensemble", "sim:2,foo/bar:1"], "--ensemble entry 'foo/bar:1': unknown provider 'foo'"),
])
def test_bad_input_stops_before_anything_is_called_or_written(tmp_path, args, message):
    res = CliRunner().invoke(app, ["run", *args, "--n", "2", "-o", str(tmp_path / "runs"), "--no-progress"])
    assert res.exit_code == 2 and message in res.output
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
