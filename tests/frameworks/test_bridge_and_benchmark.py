"""Bridge adapters (messages, options and exact usage through each framework), the provider clock, and
the benchmark table and CLI."""

from __future__ import annotations

import asyncio

import pytest
from typer.testing import CliRunner

from agent_providers import ScriptedProvider
from agent_research.frameworks.bridge import (
    ProviderClock,
    TimedProvider,
    agents_sdk_model,
    agents_sdk_usage,
    from_agents_input,
    from_langchain_messages,
    langchain_model,
    langchain_usage,
    to_agents_input,
    to_langchain_messages,
)
from agent_schemas import ChatMessage, Completion, ResponseTruncated, TokenUsage
from benchmarks.harness.frameworks import sample_questions

pytest.importorskip("langgraph")
pytest.importorskip("agents")

MSGS = [ChatMessage(role="system", content="sys", cache=True), ChatMessage(role="user", content="facts", cache=True),
        ChatMessage(role="user", content="task")]
USAGE = TokenUsage(input_tokens=120, output_tokens=30, cache_read_tokens=100, cache_write_tokens=None, reasoning_tokens=5,
                   calls=1, cost_usd=0.0042)


def rich_provider(**kw):
    return ScriptedProvider(responder=lambda m: Completion(text='{"ok": 1}', usage=USAGE, model="m", provider="scripted"), **kw)


def test_message_conversions_round_trip_with_cache_flags():
    assert from_langchain_messages(to_langchain_messages(MSGS)) == MSGS
    system, items = to_agents_input(MSGS)
    assert system == "sys" and items == [{"role": "user", "content": "facts", "cache": True}, {"role": "user", "content": "task"}]
    assert from_agents_input(system, items) == MSGS
    with pytest.raises(ValueError, match="only text messages"):
        from_agents_input(None, [{"type": "function_call", "name": "x"}])


def test_langchain_bridge_passes_options_and_exact_usage():
    p = rich_provider()
    reply = asyncio.run(langchain_model(p).ainvoke(to_langchain_messages(MSGS), json_schema={"type": "object"}, temperature=0.3, max_tokens=50, seed=7))
    assert reply.content == '{"ok": 1}'
    assert langchain_usage(reply) == USAGE  # cost and None fields survive
    assert reply.usage_metadata["input_tokens"] == 120 and reply.usage_metadata["input_token_details"]["cache_read"] == 100
    req = p.requests[0]
    assert req["messages"] == MSGS and (req["json_schema"], req["temperature"], req["max_tokens"], req["seed"]) == ({"type": "object"}, 0.3, 50, 7)
    with pytest.raises(ValueError, match="unsupported call options"):
        asyncio.run(langchain_model(p).ainvoke(to_langchain_messages(MSGS), stop=["x"], top_p=0.5))


def test_agents_sdk_bridge_passes_options_and_exact_usage():
    from agents import Agent, ModelSettings, RunConfig, Runner

    p = rich_provider()
    system, items = to_agents_input(MSGS)
    agent = Agent(name="a", instructions=system, model=agents_sdk_model(p),
                  model_settings=ModelSettings(temperature=0.2, max_tokens=40, extra_args={"json_schema": {"type": "object"}, "seed": 3}))
    result = asyncio.run(Runner.run(agent, input=items, run_config=RunConfig(tracing_disabled=True)))
    assert result.final_output == '{"ok": 1}'
    assert agents_sdk_usage(result) == USAGE
    native = result.context_wrapper.usage  # the SDK's own counters agree
    assert (native.requests, native.input_tokens, native.output_tokens, native.input_tokens_details.cached_tokens) == (1, 120, 30, 100)
    req = p.requests[0]
    assert req["messages"] == MSGS and (req["temperature"], req["max_tokens"], req["seed"]) == (0.2, 40, 3)


def test_provider_errors_propagate_unchanged_through_both_frameworks():
    from agents import Agent, RunConfig, Runner

    trunc = Completion(text="{", usage=TokenUsage(input_tokens=3, output_tokens=9, calls=1), model="m", provider="scripted", stop_reason="length")
    with pytest.raises(ResponseTruncated) as e:
        asyncio.run(langchain_model(ScriptedProvider([trunc])).ainvoke(to_langchain_messages(MSGS)))
    assert e.value.usage.output_tokens == 9
    with pytest.raises(ResponseTruncated):
        asyncio.run(Runner.run(Agent(name="a", model=agents_sdk_model(ScriptedProvider([trunc]))), input="hi",
                               run_config=RunConfig(tracing_disabled=True)))


def test_provider_clock_measures_the_union_of_overlapping_calls():
    clock = ProviderClock()
    for a, b in [(0.0, 1.0), (0.5, 2.0), (3.0, 4.0), (3.5, 3.6)]:
        clock.add(a, b)
    assert clock.busy_s() == pytest.approx(3.0)  # [0, 2] and [3, 4]
    assert clock.busy_s(1.5, 3.5) == pytest.approx(1.0)  # [1.5, 2] and [3, 3.5]
    assert clock.n_calls == 4


def test_timed_provider_records_each_call_and_keeps_the_spec():
    clock = ProviderClock()
    p = TimedProvider(ScriptedProvider(["a", "b"], latency_s=0.01), clock)
    asyncio.run(p.acomplete(MSGS))
    p.complete(MSGS)
    assert p.spec == "scripted" and clock.n_calls == 2 and clock.busy_s() >= 0.02


def test_logical_lines_rule():
    from benchmarks.harness.frameworks import logical_lines

    src = '"""module doc"""\n\nimport os  # why\n# only a comment\n\nclass A:\n    """doc\n    two lines"""\n\n    x = (1,\n         2)\n'
    assert logical_lines(src) == 4  # import, class, and the two lines of x


def test_benchmark_table_has_identical_results_across_frameworks():
    from benchmarks.harness.frameworks import arun_benchmark

    table, runs = asyncio.run(arun_benchmark(n=3, latency_s=0.005, search="none"))
    assert list(table["framework"]) == ["python", "langgraph", "openai-agents"]
    # scripted bull >= 55 % and bear <= 44 %: never consensus, 2 rounds; 3 members + 4 turns + 2 supervisor calls
    assert (table["calls"] == 3 * 9).all() and (table["ok"] == 3).all()
    assert (table["max_abs_dp"] == 0).all() and table["ledger_equal"].all()
    assert table["brier"].nunique() == 1 and 0 <= table["brier"].iloc[0] <= 1
    assert (table["provider_s"] >= 3 * 9 * 0.005 / 3).all()  # at least the sequential part of the latency
    assert (table["loc_module"] > 0).all() and (table["loc_total"] >= table["loc_module"]).all()
    by_id = {q.id: q for q in sample_questions(3, 0)}
    outcomes = [by_id[t.question.id].outcome for t in runs["python"].traces]
    p = [t.final_p_yes for t in runs["python"].traces]
    assert table["brier"].iloc[0] == pytest.approx(sum((a - b) ** 2 for a, b in zip(p, outcomes)) / 3)


def test_cli_prints_the_comparison_table():
    from benchmarks.cli import app

    res = CliRunner().invoke(app, ["frameworks", "--n", "2", "--latency-ms", "0", "--search", "none"])
    assert res.exit_code == 0, res.output
    assert "openai-agents" in res.output and "max_abs_dp" in res.output
    bad = CliRunner().invoke(app, ["frameworks", "--search", "web"])
    assert bad.exit_code == 2
