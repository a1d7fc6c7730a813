"""A bad reply fails one member, one turn or one step, never the question; timed-out members keep what they spent."""

import asyncio
import json

import pytest

from agent_providers import Provider, ScriptedProvider
from agent_research import Ensemble, ForecasterAgent, ForecastPipeline
from agent_schemas import AgentSummary, Completion, ReconcileError, TokenUsage
from agent_specialists import DebateAgent, SupervisorAgent
from agent_tools import ToolExecutor
from tests.helpers import FixedSearch, answer, make_question

QUERIES = json.dumps({"queries": ["ECB December 2025 rate decision"]})
SUMMARIES = [AgentSummary(agent_id="member-0", p_yes=0.2, rationale="low"),
             AgentSummary(agent_id="member-1", p_yes=0.8, rationale="high")]


class HangsAfterFirstCall(Provider):
    """A provider whose first call finishes (500 tokens in, 40 out) and whose second never returns.

    Behaves like every adapter: ``_acomplete`` returns a Completion with the provider's usage."""

    name = "fake"

    def __init__(self) -> None:
        super().__init__("slow")
        self.calls = 0

    async def _acomplete(self, messages, *, json_schema, temperature, max_tokens, seed) -> Completion:
        self.calls += 1
        if self.calls == 1:
            return Completion(text=QUERIES, usage=TokenUsage(input_tokens=500, output_tokens=40, calls=1), model="slow",
                              provider="fake/slow")
        await asyncio.sleep(60)
        raise AssertionError("the deadline should have cancelled this call")


def test_member_timed_out_after_one_finished_call_keeps_its_usage():
    llm = HangsAfterFirstCall()
    member = ForecasterAgent(llm, executor=ToolExecutor(FixedSearch()), n_queries=2, llm_queries=True, agent_id="member-0")
    res = Ensemble([member], member_timeout_s=0.3).run(make_question())
    f = res.forecasts[0]
    assert llm.calls == 2  # query writing finished; the forecast call was in flight at the deadline
    assert f.status == "failed" and f.error.type == "ProviderTimeout" and f.error.details["timeout_s"] == 0.3
    # the finished call with its tokens; the one in flight at the deadline as an unanswered call (tokens unknown)
    assert f.usage == TokenUsage(input_tokens=500, output_tokens=40, calls=1, unanswered_calls=1)
    assert res.usage == f.usage
    # the searches that ran before the deadline are in the audit
    assert f.queries == ["Will the ECB cut its deposit rate at its December 2025 meeting?", "ECB December 2025 rate decision"]


def test_member_timeout_through_the_framework_client_keeps_usage_too():
    async def ask(messages, params):  # the framework implementations route the forecast call like this
        await asyncio.sleep(60)

    llm = HangsAfterFirstCall()
    member = ForecasterAgent(llm, executor=ToolExecutor(FixedSearch()), n_queries=2, llm_queries=True)
    f = asyncio.run(member.aforecast(make_question(), timeout_s=0.2, ask=ask))
    assert f.error.type == "ProviderTimeout" and f.usage.calls == 1 and f.usage.input_tokens == 500


@pytest.mark.parametrize("exc", [RuntimeError("boom"), ValueError("bad usage field"), KeyError("prompt_tokens"),
                                 json.JSONDecodeError("Expecting value", "<html>", 0), AttributeError("'NoneType' has no 'text'")])
def test_member_whose_provider_raises_a_plain_exception_fails_alone(exc):
    bad = ScriptedProvider([exc])
    good = ScriptedProvider(responder=lambda m: answer(40))
    ens = Ensemble([ForecasterAgent(bad, agent_id="a"), ForecasterAgent(good, agent_id="b"), ForecasterAgent(good, agent_id="c")])
    res = ens.run(make_question())
    a, b, c = res.forecasts
    assert (a.status, b.status, c.status) == ("failed", "ok", "ok") and res.policy_met and res.aggregate() == 0.4
    assert a.p_yes is None and a.error.type == "UnexpectedError"
    assert a.error.details["exception_type"] == type(exc).__name__
    assert a.error.message.startswith(type(exc).__name__ + ":")
    assert "forecaster.py" in a.error.details["where"] or "scripted.py" in a.error.details["where"]


def test_usage_of_calls_before_the_exception_is_kept():
    # query writing is billed, then the forecast call raises something no adapter maps
    llm = ScriptedProvider([QUERIES, KeyError("usage")])
    f = ForecasterAgent(llm, executor=ToolExecutor(FixedSearch()), n_queries=2, llm_queries=True).forecast(make_question())
    assert f.status == "failed" and f.error.details["exception_type"] == "KeyError"
    assert f.usage == llm.usage_for(llm.requests[0]["messages"], QUERIES)


def test_a_failed_search_tool_fails_the_member_not_the_question():
    class BrokenSearch(FixedSearch):
        def search(self, query, *, max_results=5, cutoff_date=None):
            raise OSError("index file vanished")

    llm = ScriptedProvider([answer(30)])
    f = ForecasterAgent(llm, executor=ToolExecutor(BrokenSearch())).forecast(make_question())
    assert f.status == "failed" and f.error.details["exception_type"] == "OSError" and "index file vanished" in f.error.message
    assert llm.requests == [] and f.usage == TokenUsage()  # no call was made, none is counted


def test_cancellation_is_not_swallowed():
    async def main():
        member = ForecasterAgent(HangsAfterFirstCall(), executor=ToolExecutor(FixedSearch()), n_queries=2, llm_queries=True)
        task = asyncio.ensure_future(member.aforecast(make_question()))
        await asyncio.sleep(0.05)
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(main())


def test_debate_turn_raising_a_plain_exception_is_a_failed_turn():
    turn = lambda p: json.dumps({"argument": "a", "p_yes_percent": p, "key_evidence": []})  # noqa: E731
    llm = ScriptedProvider([RuntimeError("stream closed"), turn(40), turn(60), turn(57)])
    art = DebateAgent(llm, max_rounds=2).run(make_question(), SUMMARIES, 0.5)
    bull = art.rounds[0].bull
    assert bull.status == "failed" and bull.error.type == "UnexpectedError"
    assert bull.error.details["exception_type"] == "RuntimeError"
    assert art.status == "ok" and art.p_yes == pytest.approx((0.60 + 0.57) / 2) and art.n_failed_turns == 1


def test_supervisor_step_raising_a_plain_exception_is_a_failed_supervisor_with_its_usage():
    disagree = json.dumps({"disagreements": [{"topic": "t", "description": "d", "agents": [], "query": "q"}]})
    llm = ScriptedProvider([disagree, ValueError("bad JSON in body")])
    art = SupervisorAgent(llm, executor=FixedSearch()).run(make_question(), SUMMARIES)
    assert art.status == "failed" and art.p_yes is None and art.error.details["exception_type"] == "ValueError"
    assert art.usage == llm.usage_for(llm.requests[0]["messages"], disagree)  # the first call still counts


def test_pipeline_survives_a_specialist_that_raises_outside_its_boundaries():
    llm = ScriptedProvider(responder=lambda m: (
        json.dumps({"p_yes_percent": 70, "confidence": "high", "rationale": "r", "key_evidence": []})
        if "SUPERVISOR" in m[-1].content and '"disagreements"' not in m[-1].content
        else json.dumps({"disagreements": []}) if '"disagreements"' in m[-1].content
        else answer(20 if "base_rate" in str(m) else 60)))
    debate = DebateAgent(llm, max_rounds=1)

    def broken_artifact(*a, **k):
        raise ZeroDivisionError("division by zero")

    debate.artifact = broken_artifact
    pipe = ForecastPipeline(Ensemble.from_providers(llm, n_members=2), debate, SupervisorAgent(llm))
    trace = pipe.run(make_question())
    assert trace.status == "ok" and trace.debate.status == "failed"
    assert trace.debate.error.details["exception_type"] == "ZeroDivisionError"
    assert trace.supervisor.status == "ok" and trace.final_p_yes is not None  # the other specialist's result survives


def test_typed_errors_pass_through_unchanged():
    from agent_schemas import RateLimited, as_reconcile_error

    err = RateLimited("slow down", retry_after_s=2.0)
    assert as_reconcile_error(err) is err
    wrapped = as_reconcile_error(KeyError("x"))
    assert isinstance(wrapped, ReconcileError) and isinstance(wrapped.__cause__, KeyError)
