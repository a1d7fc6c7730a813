"""The simulator provider (``sim``): every role answered with schema-valid JSON through the real pipeline,
deterministic usage, the documented simulation (checked against hand computations and its own
statistics), and the world it takes hidden data from (never the prompt)."""

import asyncio
import json
import math

import jsonschema
import numpy as np
import pytest
from scipy.special import betaincinv

from agent_providers import ScriptedProvider, SimParams, SimulatorProvider, SimWorld, auto_provider, get_provider
from agent_providers.scripted import count_tokens_approx
from agent_providers.simulator import seeded_normal, seeded_uniform, member_key
from agent_research import Ensemble, ForecastPipeline
from agent_schemas import UnknownProvider
from agent_specialists import DebateAgent, SupervisorAgent
from agent_tools import ToolExecutor
from benchmarks.questions import load_forecastbench
from tests.helpers import FixedSearch, make_question


def pipeline(llm, executor=None, members=3, rounds=2, queries=2):
    return ForecastPipeline(Ensemble.from_providers(llm, n_members=members, executor=executor),
                            DebateAgent(llm, max_rounds=rounds), SupervisorAgent(llm, executor=executor, max_queries=queries))


@pytest.fixture(scope="module")
def questions():
    return load_forecastbench(question_type="market", sample_n=4, seed=3)


@pytest.fixture(scope="module")
def bundled_world():
    return SimWorld.bundled()


def test_every_role_answers_with_deterministic_usage_and_replays(questions, bundled_world):
    llm = SimulatorProvider(world=bundled_world)
    scripted = ScriptedProvider()  # the same usage formula as the scripted provider
    trace = pipeline(llm, ToolExecutor(FixedSearch())).run(questions[0])
    assert trace.status == "ok" and trace.final_p_yes is not None
    assert [c.role for c in trace.recorded_calls].count("forecaster") == 3
    assert {c.role for c in trace.recorded_calls} == {"forecaster", "bull", "bear", "supervisor"}
    for call in trace.recorded_calls:
        assert call.error is None and call.completion.provider == "sim"
        assert call.completion.usage == scripted.usage_for(call.messages, call.completion.text).model_copy(update={"cost_usd": 0.0})
    assert trace.ledger.total().cost_usd == 0.0
    assert trace.supervisor.confidence in ("high", "medium", "low") and trace.supervisor.rationale.startswith("Simulated supervisor")
    assert trace.supervisor.disagreements[0].agents and trace.supervisor.queries
    assert pipeline(llm, ToolExecutor(FixedSearch())).replay(trace).final_p_yes == trace.final_p_yes


@pytest.mark.parametrize("role", ["forecaster", "bull", "bear", "disagreements", "decision"])
def test_every_answer_validates_against_the_schema_its_request_sent(questions, bundled_world, role):
    from agent_research import ForecasterAgent
    from agent_specialists import prompts

    llm = SimulatorProvider(world=bundled_world)
    trace = pipeline(llm, ToolExecutor(FixedSearch())).run(questions[1])
    supervisor = [c for c in trace.recorded_calls if c.role == "supervisor"]
    calls, schema = {
        "forecaster": ([c for c in trace.recorded_calls if c.role == "forecaster"], ForecasterAgent(llm).call_params()["json_schema"]),
        "bull": ([c for c in trace.recorded_calls if c.role == "bull"], prompts.debate_schema(0)),
        "bear": ([c for c in trace.recorded_calls if c.role == "bear"], prompts.debate_schema(0)),
        "disagreements": (supervisor[:1], prompts.disagreement_schema(2)),
        "decision": (supervisor[1:], prompts.decision_schema(0)),
    }[role]
    assert calls
    for call in calls:
        jsonschema.validate(json.loads(call.completion.text), schema)


def test_same_parameters_give_identical_traces_whatever_the_call_order(questions, bundled_world):
    a = SimulatorProvider(world=bundled_world)
    b = SimulatorProvider(world=bundled_world)

    async def both():  # two questions at once on one provider, then one at a time on the other
        return await asyncio.gather(*(pipeline(a).arun(q) for q in questions[:2]))

    together = asyncio.run(both())
    alone = [pipeline(b).run(q) for q in reversed(questions[:2])][::-1]
    for x, y in zip(together, alone):
        assert [f.p_yes for f in x.forecasts] == [f.p_yes for f in y.forecasts]
        assert x.final_p_yes == y.final_p_yes and x.ledger.total() == y.ledger.total()


def test_members_are_the_documented_draws(questions, bundled_world):
    """Member i says round(100 * sigmoid(scale*logit(p*) + bias + noise*(sqrt(rho) c + sqrt(1-rho) z_i))) percent."""
    q = questions[2]
    params = SimParams(noise=0.7, rho=0.4, bias=0.2, scale=1.3, seed=5)
    llm = SimulatorProvider(params, world=bundled_world)
    trace = pipeline(llm).run(q)
    # the anchor by hand: Beta(k m + o, k (1 - m) + 1 - o) quantile at the question's hashed uniform
    same_source = [r for r in load_forecastbench() if r.source == q.source]
    m = (sum(r.outcome for r in same_source) + 1) / (len(same_source) + 2)
    anchor = float(betaincinv(2 * m + q.outcome, 2 * (1 - m) + 1 - q.outcome, seeded_uniform(5, "anchor", q.id)))
    assert llm.latent_p(q) == pytest.approx(anchor, abs=1e-12)
    logit = math.log(anchor / (1 - anchor))
    key = (q.text.strip(), q.forecast_date.isoformat())
    member_calls = [c for c in trace.recorded_calls if c.role == "forecaster"]
    for i, (f, call) in enumerate(zip(trace.forecasts, member_calls)):
        x, z = llm.agent_logodds(anchor, key, member_key(i, call.messages[-1].content), 0.7)  # member i has seed i
        by_hand = 1.3 * logit + 0.2 + 0.7 * (math.sqrt(0.4) * seeded_normal(5, "common", *key) + math.sqrt(0.6) * z)
        assert x == pytest.approx(by_hand)
        assert f.p_yes == min(max(round(100 / (1 + math.exp(-by_hand))), 1), 99) / 100


def test_no_noise_members_equal_the_anchor_and_full_correlation_makes_them_agree(questions, bundled_world):
    q = questions[3]
    exact = SimulatorProvider(SimParams(noise=0, debate_noise=0, supervisor_noise=0), world=bundled_world)
    trace = pipeline(exact).run(q)
    want = min(max(round(100 * exact.latent_p(q)), 1), 99) / 100
    assert [f.p_yes for f in trace.forecasts] == [want] * 3
    assert trace.supervisor.p_yes == want and trace.supervisor.confidence in ("high", "medium", "low")
    correlated = SimulatorProvider(SimParams(noise=1.0, rho=1.0), world=bundled_world)
    ps = [f.p_yes for f in pipeline(correlated).run(q).forecasts]
    anchor = correlated.latent_p(q)
    shared = math.log(anchor / (1 - anchor)) + seeded_normal(0, "common", q.text.strip(), q.forecast_date.isoformat())
    assert ps == [min(max(round(100 / (1 + math.exp(-shared))), 1), 99) / 100] * 3  # one shared error, no own error
    shifted = SimulatorProvider(SimParams(noise=0, bias=1.0), world=bundled_world)
    assert all(f.p_yes > want for f in pipeline(shifted).run(q).forecasts)


def test_crowd_and_base_anchors(questions, bundled_world):
    q = questions[0]
    crowd = SimulatorProvider(SimParams(anchor="crowd", noise=0), world=bundled_world)
    assert crowd.latent_p(q) == q.crowd_p_yes
    base = SimulatorProvider(SimParams(anchor="base"), world=bundled_world)
    same_source = [r for r in load_forecastbench() if r.source == q.source]
    assert base.latent_p(q) == pytest.approx((sum(r.outcome for r in same_source) + 1) / (len(same_source) + 2))


def test_truth_anchor_is_calibrated_with_its_expected_brier(bundled_world):
    """p* ~ Beta(k m + o, k (1 - m) + 1 - o) is the posterior of a Beta(k m, k (1 - m)) prior: over a source
    whose yes-rate is m, mean p* = m and Brier(p*) = E[p(1-p)] = k m (1-m) / (k + 1) in expectation."""
    qs = load_forecastbench(sources="manifold")
    llm = SimulatorProvider(SimParams(k=2.0), world=bundled_world)
    p = np.array([llm.latent_p(q) for q in qs])
    o = np.array([q.outcome for q in qs])
    m = (o.sum() + 1) / (len(o) + 2)
    assert p.mean() == pytest.approx(o.mean(), abs=0.01)
    expected_brier = 2.0 * m * (1 - m) / 3.0
    se = ((p - o) ** 2).std() / math.sqrt(len(o))
    assert abs(((p - o) ** 2).mean() - expected_brier) < 3 * se
    for lo, hi in ((0.0, 0.2), (0.2, 0.5), (0.5, 1.0)):  # calibrated: the outcome rate follows p* in each bin
        sel = (p >= lo) & (p < hi)
        assert abs(o[sel].mean() - p[sel].mean()) < 3 * math.sqrt(p[sel].mean() * (1 - p[sel].mean()) / sel.sum()) + 0.01


def test_a_question_outside_the_world_fails_the_member_with_its_text_and_binding_fixes_it():
    q = make_question("own-1")
    llm = SimulatorProvider(world=SimWorld())
    trace = pipeline(llm).run(q)
    assert trace.status == "failed"
    err = trace.forecasts[0].error
    assert err.type == "BadRequest" and "not in the simulator's world" in err.message and "ECB" in err.message
    llm.bind_questions([q])
    assert pipeline(llm).run(q).status == "ok"


def test_the_prompt_is_never_the_source_of_the_outcome(bundled_world):
    """Two questions with the same visible text and forecast date but opposite outcomes get one anchor
    (their mean): nothing in a prompt tells them apart, and the simulator reads nothing else from it."""
    yes, no = make_question("a", outcome=1), make_question("b", outcome=0)
    llm = SimulatorProvider(SimParams(k=0.5), world=SimWorld.from_questions([yes, no]))
    assert llm.latent_p(yes) == llm.latent_p(no)
    alone = SimulatorProvider(SimParams(k=0.5), world=SimWorld.from_questions([yes]))
    assert alone.latent_p(yes) != llm.latent_p(yes)


def test_spec_parameters_round_trip_and_bad_specs_are_one_line():
    llm = get_provider("sim/anchor=crowd, noise=0.8,rho=0.5")
    assert isinstance(llm, SimulatorProvider) and llm.spec == "sim/anchor=crowd,noise=0.8,rho=0.5"
    assert llm.model == "anchor=crowd,k=2,noise=0.8,rho=0.5,bias=0,scale=1,seed=0"
    assert get_provider("sim").spec == "sim" and get_provider(llm.spec).params == llm.params
    for bad, needle in [("sim/noise=-1", "noise must be >= 0"), ("sim/color=red", "'color=red' is not name=value"),
                        ("sim/rho=lots", "rho='lots' is not a number"), ("sim/anchor=oracle", "anchor must be truth, crowd or base")]:
        with pytest.raises(UnknownProvider, match=needle):
            get_provider(bad)


def test_truncated_answer_and_non_forecasting_requests(questions, bundled_world):
    llm = SimulatorProvider(world=bundled_world)
    trace = ForecastPipeline(Ensemble.from_providers(llm, n_members=2)).run(questions[0])
    for m in trace.forecasts:
        assert m.ok
    short = SimulatorProvider(world=bundled_world)
    ens = Ensemble.from_providers(short, n_members=1)
    ens.members[0].max_tokens = 5
    f = ens.run(questions[0]).forecasts[0]
    assert f.status == "failed" and f.error.type == "ResponseTruncated" and f.usage.output_tokens > 5
    c = llm.complete([{"role": "user", "content": "Say hi"}])
    assert "not a language model" in c.text and c.usage.cost_usd == 0.0


def test_auto_provider_override_picks_the_simulator():
    llm = auto_provider({"FORECAST_RECONCILE_PROVIDER": "sim/seed=3"})
    assert isinstance(llm, SimulatorProvider) and llm.params.seed == 3
    assert llm.auto_choice.reason == "FORECAST_RECONCILE_PROVIDER is set"


def test_simulator_parameters_stay_one_spec_in_a_provider_list():
    from agent_providers import split_specs
    from benchmarks.harness.one_forecast import provider_reason

    assert split_specs("sim/scale=0.6,rho=0.5, local/smollm2,sim,scripted") == [
        "sim/scale=0.6,rho=0.5", "local/smollm2", "sim", "scripted"]
    assert split_specs("openai-compatible/m@http://h:1/v1,sim/noise=0.8") == ["openai-compatible/m@http://h:1/v1", "sim/noise=0.8"]
    assert provider_reason("sim/scale=0.6,rho=0.5", environ={}) == (["sim/scale=0.6,rho=0.5"], "--provider")


def test_member_panel_draws_the_member_model(questions, bundled_world):
    """member_panel: member i says the documented draw for agent 'panel-i'; with rho=1 (no own error) it
    equals the members of a harness run; with noise=0 every member is the anchor; errors correlate by rho."""
    q = questions[2]
    params = SimParams(noise=0.7, rho=0.4, bias=0.2, scale=1.3, seed=5)
    llm = SimulatorProvider(params, world=bundled_world)
    anchor = llm.latent_p(q)
    key = (q.text.strip(), q.forecast_date.isoformat())
    logit = math.log(anchor / (1 - anchor))
    by_hand = [1.3 * logit + 0.2 + 0.7 * (math.sqrt(0.4) * seeded_normal(5, "common", *key)
                                          + math.sqrt(0.6) * seeded_normal(5, "agent", f"panel-{i}", *key)) for i in range(4)]
    assert llm.member_panel([q], 4) == [[min(max(round(100 / (1 + math.exp(-x))), 1), 99) / 100 for x in by_hand]]
    assert llm.member_panel(questions, 4)[2] == llm.member_panel([q], 4)[0]  # a question's draws do not depend on the others

    correlated = SimulatorProvider(SimParams(noise=1.0, rho=1.0), world=bundled_world)
    assert correlated.member_panel([q], 3) == [[f.p_yes for f in pipeline(correlated).run(q).forecasts]]
    exact = SimulatorProvider(SimParams(noise=0), world=bundled_world)
    assert exact.member_panel(questions, 2) == [[min(max(round(100 * exact.latent_p(x)), 1), 99) / 100] * 2 for x in questions]

    many = load_forecastbench(question_type="market", sample_n=600, seed=1)
    half = SimulatorProvider(SimParams(anchor="base", noise=1.0, rho=0.5), world=bundled_world)
    x = np.log(np.asarray(half.member_panel(many, 2)))
    x = x - np.log(1 - np.exp(x))
    centred = x - np.array([[math.log(half.latent_p(m) / (1 - half.latent_p(m)))] for m in many])
    assert np.corrcoef(centred[:, 0], centred[:, 1])[0, 1] == pytest.approx(0.5, abs=0.1)
    with pytest.raises(ValueError, match="n_members must be >= 1"):
        llm.member_panel([q], 0)
