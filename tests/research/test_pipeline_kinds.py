"""The whole pipeline (members, debate, supervisor, combination) on a multiple-choice question, scripted by role:
every step is read and stored in the question's kind's form, and nothing falls back to a binary value."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pytest

from agent_providers import ScriptedProvider
from agent_providers.roles import call_role
from agent_research import Ensemble, ForecastPipeline
from agent_schemas import PipelineTrace, Question
from agent_schemas.kinds import ChoiceSpec
from agent_specialists import DebateAgent, SupervisorAgent

SPEC = ChoiceSpec(options=("Arsenal", "Liverpool", "Manchester City"))
QUESTION = Question(id="pl-2025", text="Which club will win the 2025-26 Premier League?", forecast_date=dt.date(2025, 8, 1),
                    spec=SPEC, outcome=0)

#: Members 0, 1, 2 by their persona (Ensemble.from_providers cycles base_rate, news, skeptic).
MEMBERS = {"historical base rates": (50, 30, 20), "most recent dated evidence": (20, 50, 30), "contrary to the obvious": (40, 40, 20)}


def answer(messages):
    role = call_role()
    if role == "forecaster":
        a, b, c = next(v for k, v in MEMBERS.items() if k in messages[-1].content)
        return json.dumps({"rationale": "form", "key_evidence": [], "confidence": "high",
                           "probabilities": {"Arsenal": a, "Liverpool": b, "Manchester City": c}})
    if role in ("bull", "bear"):
        probs = (45, 35, 20) if role == "bull" else (35, 40, 25)
        return json.dumps({"argument": f"{role} case", "key_evidence": [],
                           "probabilities": dict(zip(SPEC.options, probs))})
    if role == "disagreements":
        return json.dumps({"disagreements": [{"topic": "Arsenal's depth", "description": "m0 vs m1",
                                              "agents": ["member-0", "member-1"], "query": "Arsenal squad depth"}]})
    return json.dumps({"rationale": "settled", "key_evidence": [], "confidence": "medium",
                       "probabilities": {"Arsenal": 50, "Liverpool": 30, "Manchester City": 20}})


@pytest.fixture
def trace() -> PipelineTrace:
    llm = ScriptedProvider(responder=answer)
    pipeline = ForecastPipeline(Ensemble.from_providers(llm, n_members=3, concurrency=1),
                                DebateAgent(llm, max_rounds=1), SupervisorAgent(llm, max_queries=1))
    return pipeline.run(QUESTION)


def test_every_step_holds_a_forecast_of_the_question_kind(trace):
    assert trace.status == "ok"
    assert [f.distribution for f in trace.forecasts] == [[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.4, 0.4, 0.2]]
    assert all(f.p_yes is None for f in trace.forecasts)
    assert trace.aggregate_p_yes is None and trace.final_p_yes is None
    np.testing.assert_allclose(trace.aggregate_distribution, [1.1 / 3, 1.2 / 3, 0.7 / 3])
    assert set(trace.aggregates) == {"mean", "median", "log_pool", "extremized", "trimmed_mean", "least_confident"}
    np.testing.assert_allclose(trace.aggregates["least_confident"], [0.4, 0.4, 0.2])  # the highest entropy
    # the debate's forecast is the mean of the sides' final forecasts
    np.testing.assert_allclose(trace.debate.distribution, [0.40, 0.375, 0.225])
    assert trace.debate.bull_final_probability == [0.45, 0.35, 0.2]
    assert trace.supervisor.distribution == [0.5, 0.3, 0.2]


def test_the_final_forecast_blends_the_steps_as_the_combination_rule_says(trace):
    agg = np.array(trace.aggregate_distribution)
    after_debate = 0.5 * agg + 0.5 * np.array([0.40, 0.375, 0.225])
    supervisor = np.array([0.5, 0.3, 0.2])
    confidence = trace.supervisor.grounding.effective
    w = {"high": 1.0, "medium": 0.5, "low": 0.0}[confidence or "low"]
    expected = np.clip((1 - w) * after_debate + w * supervisor, 0.01, 0.99)
    np.testing.assert_allclose(trace.final_distribution, expected / expected.sum())
    assert abs(sum(trace.final_distribution) - 1) < 1e-12


def test_prompts_show_the_options_and_ask_for_them(trace):
    member_prompt = next(c for c in trace.recorded_calls if c.role == "forecaster").messages
    assert "forecasts multiple-choice questions" in member_prompt[0].content
    assert "  - Liverpool" in member_prompt[1].content
    assert '"probabilities": {"<option>": <integer 0-100>' in member_prompt[-1].content
    bull = next(c for c in trace.recorded_calls if c.role == "bull").messages[-1].content
    assert "'Liverpool', the estimate's leading option, is MORE likely than the current estimate's 40%" in bull
    assert "- member-0 (scripted): Arsenal 50%, Liverpool 30%, Manchester City 20%." in \
        next(c for c in trace.recorded_calls if c.role == "bull").messages[1].content


def test_the_trace_round_trips_as_json(trace):
    again = PipelineTrace.model_validate_json(trace.model_dump_json())
    assert again.question.spec == SPEC and again.final_distribution == trace.final_distribution


def test_an_answer_with_an_unknown_option_fails_the_member_never_a_default():
    def bad(messages):
        return json.dumps({"rationale": "r", "key_evidence": [], "confidence": "low",
                           "probabilities": {"Arsenal": 50, "Chelsea": 50, "Liverpool": 0}})

    result = Ensemble.from_providers(ScriptedProvider(responder=bad), n_members=2).run(QUESTION)
    assert result.n_ok == 0 and not result.policy_met
    assert all(f.status == "failed" and f.error.type == "ForecastParseError" and "Chelsea" in f.error.message
               for f in result.forecasts)
