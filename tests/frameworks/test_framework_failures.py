"""The framework implementations share the plain pipeline's error boundary: a plain exception fails one
member or one turn, identically in all three."""

from __future__ import annotations

import pytest

from agent_research import prompts
from agent_research import PipelineConfig
from tests.frameworks.test_parity import comparable, hand_responder, run_all
from tests.helpers import make_question

pytest.importorskip("langgraph")
pytest.importorskip("agents")


def raising_responder(messages):
    user = "\n".join(m.content for m in messages[1:])
    if prompts.PERSONAS["skeptic"] in messages[-1].content:
        raise KeyError("choices")  # a reply shape no adapter maps
    if "You are the BULL" in user and "Round 1 of" in user:
        raise RuntimeError("stream closed")
    return hand_responder(messages)


def test_plain_exceptions_fail_one_member_and_one_turn_in_every_implementation():
    runs = run_all(raising_responder, make_question(), PipelineConfig(debate={"max_rounds": 2}))
    base = runs["python"][0]
    failed = [f for f in base.forecasts if f.status == "failed"]
    assert len(failed) == 1 and failed[0].error.type == "UnexpectedError"
    assert failed[0].error.details["exception_type"] == "KeyError"
    bull = base.debate.rounds[0].bull
    assert bull.status == "failed" and bull.error.details["exception_type"] == "RuntimeError"
    assert base.status == "ok" and base.final_p_yes is not None
    for fw, (trace, _) in runs.items():
        assert comparable(trace) == comparable(base), fw
