import json

import pytest

from agent_providers import ScriptedProvider
from agent_schemas import AgentSummary, TokenUsage
from agent_specialists import DebateAgent
from tests.helpers import make_question


def turn(p, argument="arg"):
    return json.dumps({"argument": argument, "p_yes_percent": p, "key_evidence": []})


SUMMARIES = [AgentSummary(agent_id="member-0", p_yes=0.2, rationale="low"),
             AgentSummary(agent_id="member-1", p_yes=0.8, rationale="high")]


def test_debate_stops_early_at_consensus_and_reports_midpoint():
    llm = ScriptedProvider([turn(70, "bull r1"), turn(40, "bear r1"), turn(60, "bull r2"), turn(57, "bear r2")])
    art = DebateAgent(llm, max_rounds=3, consensus_threshold=0.05).run(make_question(), SUMMARIES, 0.5)
    assert len(art.rounds) == 2
    assert [r.consensus for r in art.rounds] == [False, True]
    assert art.consensus_reached and art.early_termination
    assert art.bull_final_probability == 0.60 and art.bear_final_probability == 0.57
    assert art.p_yes == pytest.approx(0.585)
    assert llm.remaining == 0
    # usage sums exactly over the four scripted calls
    expected = TokenUsage.sum(llm.usage_for(r["messages"], t) for r, t in zip(llm.requests, [turn(70, "bull r1"), turn(40, "bear r1"), turn(60, "bull r2"), turn(57, "bear r2")]))
    assert art.usage == expected
    assert art.usage_by_role["bull"].calls == 2 and art.usage_by_role["bear"].calls == 2


def test_each_side_answers_the_others_last_argument():
    llm = ScriptedProvider([turn(70, "BULL-ONE"), turn(40, "BEAR-ONE"), turn(65, "BULL-TWO"), turn(45, "BEAR-TWO")])
    DebateAgent(llm, max_rounds=2).run(make_question(), SUMMARIES, 0.5)
    prompts = ["\n".join(m.content for m in r["messages"]) for r in llm.requests]
    assert "BEAR-ONE" not in prompts[0] and "BULL-ONE" in prompts[1]  # bear answers bull of same round
    assert "BEAR-ONE" in prompts[2]  # bull round 2 answers bear round 1
    assert "BULL-TWO" in prompts[3]
    assert "CASE FACTS" in prompts[0] and "member-1" in prompts[0]
    assert "You are the BULL" in prompts[0] and "You are the BEAR" in prompts[1]
    # both sides share the cached prefix (system + case facts + summaries) exactly
    assert llm.requests[0]["messages"][:2] == llm.requests[1]["messages"][:2]
    assert llm.requests[0]["messages"][1].cache


def test_unparseable_round_is_recorded_failed_not_filled_with_aggregate():
    llm = ScriptedProvider(["I think it will probably happen", turn(40), turn(55), turn(52)])
    art = DebateAgent(llm, max_rounds=3).run(make_question(), SUMMARIES, 0.5)
    r1 = art.rounds[0]
    assert r1.bull.status == "failed" and r1.bull.p_yes is None
    assert r1.bull.error.type == "ForecastParseError"
    assert "probably happen" in r1.bull.error.details["raw_text"]
    assert art.n_failed_turns == 1
    assert art.bull_final_probability == 0.55 and art.bear_final_probability == 0.52
    assert art.p_yes == pytest.approx(0.535)
    assert art.rounds[1].consensus and art.early_termination


def test_debate_without_any_bull_answer_fails_without_probability():
    llm = ScriptedProvider(["no json", turn(40), "still no json", turn(35)])
    art = DebateAgent(llm, max_rounds=2).run(make_question(), SUMMARIES, 0.5)
    assert art.status == "failed" and art.p_yes is None
    assert art.bull_final_probability is None and art.bear_final_probability == 0.35
    assert not art.consensus_reached and not art.early_termination
    assert "bull" in art.error.message


def test_out_of_range_probability_is_a_failed_turn():
    llm = ScriptedProvider([json.dumps({"argument": "a", "p_yes_percent": 12489}), turn(40), turn(50), turn(48)])
    art = DebateAgent(llm, max_rounds=2).run(make_question(), SUMMARIES, 0.5)
    assert art.rounds[0].bull.status == "failed"
    assert art.p_yes == pytest.approx(0.49)


@pytest.mark.parametrize("kwargs", [{"max_rounds": 0}, {"consensus_threshold": 0.0}, {"consensus_threshold": 1.5}])
def test_invalid_parameters(kwargs):
    with pytest.raises(ValueError):
        DebateAgent(ScriptedProvider(), **kwargs)
