"""RunConfig embeds the PipelineConfig: the command line's option names map to the pipeline's names, and
manifests written with the flat options still load to the same run."""

from __future__ import annotations

import pytest

from agent_research import PipelineConfig
from benchmarks.harness.config import RUN_PIPELINE, RunConfig


def test_flat_options_land_in_the_pipeline_under_the_agents_names():
    cfg = RunConfig(n_members=5, temperature=0.3, max_tokens=256, n_queries=2, max_evidence=2, max_results=4,
                    debate_rounds=3, consensus_threshold=0.1, supervisor_queries=1, reconcile_min_spread=0.2,
                    member_timeout_s=60, min_success_fraction=0.6, seed=7)
    p = cfg.pipeline
    assert (p.n_members, p.temperatures, p.max_tokens, p.seed) == (5, [0.3], 256, 7)
    assert (p.member.n_queries, p.member.max_evidence, p.member.max_results) == (2, 2, 4)
    assert (p.debate.max_rounds, p.debate.consensus_threshold, p.supervisor.max_queries) == (3, 0.1, 1)
    assert (p.reconcile_min_spread, p.member_timeout_s, p.min_success_fraction) == (0.2, 60, 0.6)
    assert p.supervisor.max_results == 5 and cfg.seed == 7  # the supervisor's results per search are its own


def test_defaults_are_the_run_pipeline_and_an_explicit_pipeline_is_kept():
    assert RunConfig().pipeline == RUN_PIPELINE
    assert (RUN_PIPELINE.max_tokens, RUN_PIPELINE.member.max_results, RUN_PIPELINE.member.max_evidence) == (512, 2, 1)
    given = PipelineConfig(n_members=2, seed=3)
    cfg = RunConfig(pipeline=given, seed=9)
    assert cfg.pipeline == given and cfg.seed == 9  # the given pipeline keeps its own seed


def test_a_flat_manifest_config_loads_to_the_same_run():
    old = {"run_id": "r", "providers": ["scripted"], "n_members": 3, "temperature": 0.7, "max_tokens": 512, "n_queries": 1,
           "max_evidence": 1, "max_results": 2, "snippet_chars": 200, "debate_rounds": 2, "consensus_threshold": 0.05,
           "supervisor_queries": 2, "reconcile_min_spread": 0.0, "member_timeout_s": 300.0, "min_success_fraction": 0.5, "seed": 0}
    cfg = RunConfig.model_validate(old)
    assert cfg.pipeline == RUN_PIPELINE.model_copy(update={"temperatures": [0.7], "reconcile_min_spread": 0.0})
    assert RunConfig.model_validate(cfg.model_dump(mode="json")) == cfg  # the nested manifest round-trips


def test_methods_decide_which_stages_are_built():
    only_aggregates = RunConfig(methods=["mean", "median"]).pipeline_for_methods()
    assert only_aggregates.debate is None and only_aggregates.supervisor is None
    debate = RunConfig(methods=["mean", "debate"]).pipeline_for_methods()
    assert debate.debate == RUN_PIPELINE.debate and debate.supervisor is None
    assert RunConfig(methods=["pipeline"]).pipeline_for_methods() == RUN_PIPELINE


def test_bad_option_names_the_pipeline_setting():
    with pytest.raises(ValueError, match=r"pipeline.debate.max_rounds\n.*greater than or equal to 1"):
        RunConfig(debate_rounds=0)


def test_baseline_names_is_the_baselines_tuple_under_a_deprecated_name():
    from benchmarks.harness import config
    from benchmarks.protocol.baselines import BASELINES

    with pytest.warns(DeprecationWarning, match="use benchmarks.protocol.baselines.BASELINES"):
        assert config.BASELINE_NAMES is BASELINES
    assert RunConfig().baselines == list(BASELINES)
    with pytest.raises(ValueError, match="unknown baselines \\['oracle'\\]; valid: crowd, superforecaster_median"):
        RunConfig(baselines=["oracle"])


def test_embedded_model_options_reach_the_provider_only_when_set():
    assert RunConfig().local_model_options() == {}
    assert RunConfig(n_threads=1, n_slots=2, n_ctx=2048, grammar_sampling="filter", weights="packaged").local_model_options() == {
        "n_threads": 1, "n_slots": 2, "n_ctx": 2048, "weights": "packaged", "grammar_sampling": "filter"}
    with pytest.raises(ValueError, match="grammar_sampling"):
        RunConfig(grammar_sampling="fast")
    with pytest.raises(ValueError, match="weights"):
        RunConfig(weights="q4_0")


def test_the_weights_option_reaches_the_embedded_model(tmp_path, monkeypatch):
    """``run --weights packaged`` builds the embedded provider with those weights."""
    from typer.testing import CliRunner

    import benchmarks.harness.provider_stack as provider_stack
    from benchmarks.cli import app

    built = []

    def fake_get_provider(spec, retry=True, **kwargs):
        built.append((spec, kwargs))
        raise RuntimeError("stop here")  # the options are what this test is about

    monkeypatch.setattr(provider_stack, "get_provider", fake_get_provider)
    result = CliRunner().invoke(app, ["run", "-p", "local/smollm2", "--n", "1", "--weights", "packaged",
                                      "-o", str(tmp_path), "--no-progress", "--no-report"])
    assert result.exit_code != 0 and built == [("local/smollm2", {"weights": "packaged"})]
    bad = CliRunner().invoke(app, ["run", "-p", "local/smollm2", "--weights", "f16", "-o", str(tmp_path)])
    assert bad.exit_code == 2 and "'f16' is not one of 'packaged', 'q8_0'" in bad.output
