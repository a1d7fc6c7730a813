"""The pipeline tells the provider each request's role (``agent_providers.calling_as``), and the providers that
answer by role without a model (the simulator, the scripted world) read the label, never the prompt's wording:
rewording a prompt cannot change the zero-cost leaderboard."""

from __future__ import annotations

import asyncio
import json

import pytest

from agent_providers import CALL_ROLES, ScriptedProvider, SimulatorProvider, SimWorld, call_role, calling_as, scripted_world
from agent_providers.simulator import request_role
from agent_research import Ensemble, ForecastPipeline, MemberSettings
from agent_specialists import DebateAgent, SupervisorAgent, prompts
from agent_tools import ToolExecutor
from tests.helpers import FixedSearch, make_question


def labelled_pipeline(answer):
    """A pipeline on a scripted provider that records ``(label, messages)`` of every call and answers with ``answer``."""
    seen: list[tuple[str | None, list]] = []

    def responder(messages):
        seen.append((call_role(), list(messages)))
        return answer(messages)

    llm = ScriptedProvider(responder=responder)
    executor = ToolExecutor(FixedSearch())
    members = Ensemble.from_providers(llm, n_members=2, executor=executor, member=MemberSettings(n_queries=2, llm_queries=True))
    pipe = ForecastPipeline(members, DebateAgent(llm, max_rounds=2),
                            SupervisorAgent(llm, executor=executor, max_queries=1))
    return pipe, seen


def test_the_label_is_set_inside_the_block_only_and_travels_into_tasks_and_threads():
    assert call_role() is None
    with calling_as("bull"):
        assert call_role() == "bull"
        with calling_as("bear"):
            assert call_role() == "bear"
        assert call_role() == "bull"

        async def inside():
            return call_role(), await asyncio.to_thread(call_role), await asyncio.create_task(asyncio.sleep(0, call_role()))

        assert asyncio.run(inside()) == ("bull", "bull", "bull")
    assert call_role() is None
    with pytest.raises(ValueError, match="unknown call role 'supervisor'"):
        with calling_as("supervisor"):  # the ledger's role, not a call's
            pass


def test_every_call_of_the_pipeline_is_labelled_with_its_step():
    pipe, seen = labelled_pipeline(scripted_world.respond)
    trace = pipe.run(make_question())
    assert trace.status == "ok"
    labels = [label for label, _ in seen]
    assert None not in labels
    # two members (each: its search queries, then its forecast), the debate's two rounds, the supervisor's two steps
    assert sorted(labels[:4]) == ["forecaster", "forecaster", "queries", "queries"]
    assert labels[4:] == ["bull", "bear", "bull", "bear", "disagreements", "decision"]
    # every role but the hub supervisor's weighting of members (benchmarks/hubs/supervisor.py), not a pipeline step
    assert set(labels) == set(CALL_ROLES) - {"member_weights"}


def test_rewording_every_prompt_changes_no_answer_of_the_scripted_world():
    def reworded(messages):  # the sentences that told the roles apart before the labels, each gone
        words = ("You are the BULL", "You are the BEAR", "You are the SUPERVISOR", '"disagreements"',
                 "Reconcile the forecasts")
        out = []
        for m in messages:
            text = m.content
            for w in words:
                text = text.replace(w, "Do your part.")
            out.append(m.model_copy(update={"content": text}))
        return scripted_world.respond(out)

    plain, _ = labelled_pipeline(scripted_world.respond)
    changed, _ = labelled_pipeline(reworded)
    q = make_question()
    a, b = plain.run(q), changed.run(q)
    assert a.final_p_yes == b.final_p_yes
    assert [c.completion.text for c in a.recorded_calls] == [c.completion.text for c in b.recorded_calls]
    assert len(a.debate.rounds) == 2 and a.supervisor.disagreements[0].topic == "timing"


def test_the_simulator_answers_by_the_label_not_the_prompt():
    q = make_question()
    sim = SimulatorProvider(world=SimWorld.from_questions([q]))
    pipe = ForecastPipeline(Ensemble.from_providers(sim, n_members=2), DebateAgent(sim, max_rounds=1),
                            SupervisorAgent(sim, max_queries=0))
    trace = pipe.run(q)
    bull_call = next(c for c in trace.recorded_calls if c.role == "bull")
    schema = prompts.debate_schema(0)
    with calling_as("bull"):
        as_bull = sim.complete(bull_call.messages, json_schema=schema, seed=None).text
        reworded = [m.model_copy(update={"content": m.content.replace("BULL", "first speaker")}) for m in bull_call.messages]
        assert sim.complete(reworded, json_schema=schema, seed=None).text == as_bull
    assert as_bull == bull_call.completion.text and json.loads(as_bull)["argument"].startswith("Simulated bull")
    with calling_as("bear"):  # the same prompt, labelled the other side, argues the other way
        as_bear = json.loads(sim.complete(bull_call.messages, json_schema=schema, seed=None).text)
    assert as_bear["p_yes_percent"] < json.loads(as_bull)["p_yes_percent"]
    # unlabelled, a debate turn says no side: the simulator answers with its note, never a guessed side
    assert "note" in json.loads(sim.complete(bull_call.messages, json_schema=schema, seed=None).text)


@pytest.mark.parametrize(("fields", "role"), [({"queries"}, "queries"), ({"disagreements"}, "disagreements"),
                                              ({"p_yes_percent", "rationale"}, "forecaster"),
                                              ({"argument", "p_yes_percent"}, "other"), (set(), "other")])
def test_an_unlabelled_request_is_read_by_its_answer_schema_fields_alone(fields, role):
    assert request_role({"properties": {f: {} for f in fields}}) == role
    with calling_as("decision"):
        assert request_role({"properties": {f: {} for f in fields}}) == "decision"


def test_the_label_reaches_a_sync_provider_through_the_rate_limiter_and_run_sync_in_a_running_loop():
    """A synchronous provider's call runs on a worker thread (the rate limiter's pool; ``run_sync`` inside a running
    loop, as in a notebook): the caller's context, and so its label, goes along."""
    from agent_providers import Provider, run_sync
    from agent_providers.ratelimit import RateLimitedProvider, RateLimits
    from agent_schemas import Completion, TokenUsage

    seen = []

    class SyncOnly(Provider):  # implements the sync form only, as llama.cpp's adapter does
        name = "sync-only"

        def _complete(self, messages, **options):
            seen.append(call_role())
            return Completion(text="{}", model="m", provider=self.name, usage=TokenUsage(calls=1))

    limited = RateLimitedProvider(SyncOnly("m"), RateLimits(max_concurrent=1))
    with calling_as("bull"):
        asyncio.run(limited.acomplete([{"role": "user", "content": "x"}]))

    async def in_a_notebook_cell():
        with calling_as("decision"):
            return run_sync(limited.acomplete([{"role": "user", "content": "y"}]))

    asyncio.run(in_a_notebook_cell())
    assert seen == ["bull", "decision"]
