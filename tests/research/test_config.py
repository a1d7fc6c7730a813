"""One PipelineConfig builds the pipeline: every agent gets its settings at construction, roles as named."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agent_providers import ScriptedProvider
from agent_research import CombinationRule, Ensemble, ForecastPipeline, MemberSettings, PipelineConfig, RoleProviders
from agent_tools import ToolExecutor
from tests.helpers import FixedSearch


def test_from_config_sets_every_agent_from_the_config():
    a, b, sup = ScriptedProvider(model="a"), ScriptedProvider(model="b"), ScriptedProvider(model="s")
    ex = ToolExecutor(FixedSearch())
    config = PipelineConfig(n_members=4, seed=10, personas=["news", None], temperatures=[0.1, 0.9], concurrency=None,
                            member_timeout_s=12.5, min_success_fraction=0.75, max_tokens=333,
                            member={"n_queries": 2, "max_results": 3, "llm_queries": True, "max_evidence": 1},
                            debate={"max_rounds": 4, "consensus_threshold": 0.1, "temperature": 0.2},
                            supervisor={"max_queries": 1, "max_results": 7},
                            aggregation="median", combination=CombinationRule(debate_weight=0.25), reconcile_min_spread=0.2)
    pipe = ForecastPipeline.from_config(RoleProviders(members=[a, b], supervisor=sup), ex, config)
    ens = pipe.ensemble
    assert (ens.concurrency, ens.member_timeout_s, ens.min_success_fraction) == (4, 12.5, 0.75)
    got = [(m.llm.inner.model, m.persona, m.temperature, m.seed, m.n_queries, m.max_results, m.llm_queries, m.max_evidence,
            m.max_tokens, m.executor is ex) for m in ens.members]
    assert got == [("a", "news", 0.1, 10, 2, 3, True, 1, 333, True), ("b", None, 0.9, 11, 2, 3, True, 1, 333, True),
                   ("a", "news", 0.1, 12, 2, 3, True, 1, 333, True), ("b", None, 0.9, 13, 2, 3, True, 1, 333, True)]
    d, s = pipe.debate, pipe.supervisor
    assert (d.max_rounds, d.consensus_threshold, d.temperature, d.max_tokens, d.seed) == (4, 0.1, 0.2, 333, 10)
    assert {side: p.inner.model for side, p in d.llms.items()} == {"bull": "a", "bear": "a"}  # the first member provider
    assert (s.llm.inner.model, s.max_queries, s.max_results, s.max_tokens, s.seed, s.executor is ex) == ("s", 1, 7, 333, 10, True)
    assert (pipe.aggregation, pipe.combination.debate_weight, pipe.reconcile_min_spread) == ("median", 0.25, 0.2)


def test_stages_left_out_and_defaults():
    p = ScriptedProvider()
    pipe = ForecastPipeline.from_config(p, None, PipelineConfig(debate=None, supervisor=None))
    assert pipe.debate is None and pipe.supervisor is None and len(pipe.ensemble.members) == 3
    default = ForecastPipeline.from_config([p])
    assert default.debate.max_rounds == 2 and default.supervisor.max_queries == 2 and default.supervisor.llm.inner is p
    assert default.ensemble.concurrency == 4 and [m.max_tokens for m in default.ensemble.members] == [400] * 3


def test_config_rejects_unknown_and_out_of_range_settings():
    with pytest.raises(ValidationError, match="max_round"):
        PipelineConfig(debate={"max_round": 2})
    with pytest.raises(ValidationError, match="unknown aggregation 'avg'"):
        PipelineConfig(aggregation="avg")
    with pytest.raises(ValidationError, match="n_queries"):
        PipelineConfig(member={"n_queries": -1})


def test_ensemble_from_providers_takes_member_settings():
    ens = Ensemble.from_providers(ScriptedProvider(), n_members=2, member=MemberSettings(n_queries=0, max_evidence=0), max_tokens=99)
    assert [(m.n_queries, m.max_evidence, m.max_tokens, m.max_results) for m in ens.members] == [(0, 0, 99, 5)] * 2
