"""One end-to-end pipeline run on the embedded model (SmolLM2 via llama.cpp) on a real bundled question."""

from tests.helpers import NEEDS_LLAMA

pytestmark = NEEDS_LLAMA


def test_full_pipeline_on_the_embedded_model_returns_a_complete_trace():
    from agent_providers import get_provider
    from agent_research import Ensemble, ForecastPipeline
    from agent_schemas import PipelineTrace
    from agent_specialists import DebateAgent, SupervisorAgent
    from agent_tools import LocalCorpusSearch, ToolExecutor
    from benchmarks.questions import load_forecastbench
    from benchmarks.protocol.leakage import leakage_audit

    llm = get_provider("local/smollm2")
    question = load_forecastbench(question_type="market", sample_n=1, seed=0)[0]
    executor = ToolExecutor(LocalCorpusSearch.default(), snippet_chars=160)
    ensemble = Ensemble.from_providers(llm, n_members=2, executor=executor, seed=0)
    for m in ensemble.members:
        m.max_results, m.max_evidence, m.max_tokens = 2, 1, 512
    pipeline = ForecastPipeline(ensemble, DebateAgent(llm, max_rounds=1, max_tokens=512),
                                SupervisorAgent(llm, executor=executor, max_queries=1, max_tokens=512))
    trace = pipeline.run(question)

    # every step is in the trace: members, aggregates, debate round, supervisor with its search
    assert len(trace.forecasts) == 2
    for f in trace.forecasts:
        assert f.status == "ok" or f.error.type in {"ForecastParseError", "ResponseTruncated"}
        assert f.usage.input_tokens > 0 and f.usage.output_tokens > 0
        assert f.n_evidence_in_prompt > 0
    assert trace.debate is not None and len(trace.debate.rounds) == 1
    assert trace.supervisor is not None
    if trace.status == "ok":
        assert 0.01 <= trace.final_p_yes <= 0.99
    by_role = trace.ledger.by_role()
    assert by_role["forecaster"].calls == 2 and by_role["bull"].calls == 1 and by_role["bear"].calls == 1
    assert by_role["supervisor"].calls >= 1
    assert all((u.input_tokens or 0) > 0 for u in by_role.values())
    # the prompts actually sent hold no evidence dated after the forecast date and no hindsight
    audit = leakage_audit(trace, question)
    assert audit["prompts_scanned"] == by_role["forecaster"].calls + 2 + by_role["supervisor"].calls
    assert audit["findings"] == 0 and audit["evidence_in_prompt"] > 0
    # the trace is JSON and replays offline to the same probability
    restored = PipelineTrace.model_validate_json(trace.model_dump_json())
    assert pipeline.replay(restored).final_p_yes == trace.final_p_yes
