"""CombinationRule, value by value: each step, each confidence, the clip and the validation (issue 18).

Every expected probability is computed by hand in the comment next to it.
"""

from __future__ import annotations

import pytest

from agent_research import CombinationRule
from agent_research.combination import CombinationStep
from agent_schemas import CoverageNote, DebateArtifact, Disagreement, SearchOutcome, SearchResult, SupervisorArtifact


def debate(p=0.6, status="ok"):
    return DebateArtifact(question_id="q", p_yes=p, status=status)


def supervisor(p=0.9, confidence="high", status="ok"):
    """A supervisor whose stated confidence its evidence supports (one disagreement, found and supported), so
    the evidence caps of agent_research.confidence leave it as stated (they are tested in test_confidence)."""
    found = SearchOutcome(status="ok", attempted_query="q", results=[SearchResult(title="t", url="https://e.org/a", snippet="s")])
    return SupervisorArtifact(question_id="q", p_yes=p, confidence=confidence, status=status,
                              disagreements=[Disagreement(topic="t", agents=["member-0"], query="q")],
                              search_outcomes=[found], coverage=[CoverageNote(topic="t", status="supported")])


@pytest.mark.parametrize("confidence, weight, final, description", [
    # aggregate 0.3 -> debate 0.5*0.3 + 0.5*0.6 = 0.45 -> supervisor 0.9 at weight w
    ("high", 1.0, 0.9, "aggregate -> debate(w=0.5) -> supervisor(high, w=1.0)"),  # (1-1)*0.45 + 1*0.9
    ("medium", 0.5, 0.675, "aggregate -> debate(w=0.5) -> supervisor(medium, w=0.5)"),  # 0.5*0.45 + 0.5*0.9
    ("low", 0.0, 0.45, "aggregate -> debate(w=0.5)"),  # ignored
    (None, 0.0, 0.45, "aggregate -> debate(w=0.5)"),  # no confidence reads as low
])
def test_default_rule_at_each_supervisor_confidence(confidence, weight, final, description):
    rule = CombinationRule()
    p, how = rule.combine(0.3, debate(0.6), supervisor(0.9, confidence))
    assert p == pytest.approx(final) and how == description
    step = rule.steps(0.3, debate(0.6), supervisor(0.9, confidence))[2]
    assert step == CombinationStep("supervisor", "applied" if weight else "ignored", pytest.approx(0.45), pytest.approx(final),
                                   value=0.9, weight=weight, confidence=confidence, reported_confidence=confidence)


def test_default_weights_and_bounds_are_documented_values():
    rule = CombinationRule()
    assert (rule.debate_weight, rule.supervisor_weights, rule.clip_low, rule.clip_high) == (
        0.5, {"high": 1.0, "medium": 0.5, "low": 0.0}, 0.01, 0.99)
    assert rule.describe() == {"rule": "aggregate -> debate blend -> supervisor by grounded confidence -> clip", "debate_weight": 0.5,
                               "supervisor_weights": {"high": 1.0, "medium": 0.5, "low": 0.0},
                               "clip_low": 0.01, "clip_high": 0.99}


def test_every_step_is_listed_with_the_probability_before_and_after():
    rule = CombinationRule(debate_weight=0.25, supervisor_weights={"high": 0.8, "medium": 0.5, "low": 0.1})
    steps = rule.steps(0.2, debate(0.6), supervisor(0.7, "low"))
    # debate 0.75*0.2 + 0.25*0.6 = 0.3; supervisor 0.9*0.3 + 0.1*0.7 = 0.34; inside the clip bounds
    assert steps == [
        CombinationStep("aggregate", "applied", None, 0.2, value=0.2),
        CombinationStep("debate", "applied", 0.2, pytest.approx(0.3), value=0.6, weight=0.25),
        CombinationStep("supervisor", "applied", pytest.approx(0.3), pytest.approx(0.34), value=0.7, weight=0.1, confidence="low",
                        reported_confidence="low"),
        CombinationStep("clip", "ignored", pytest.approx(0.34), pytest.approx(0.34)),
    ]
    assert rule.combine(0.2, debate(0.6), supervisor(0.7, "low")) == (
        pytest.approx(0.34), "aggregate -> debate(w=0.25) -> supervisor(low, w=0.1)")


def test_missing_and_failed_specialists_leave_the_probability_alone():
    rule = CombinationRule()
    assert rule.steps(0.4, None, None) == [
        CombinationStep("aggregate", "applied", None, 0.4, value=0.4),
        CombinationStep("debate", "not run", 0.4, 0.4),
        CombinationStep("supervisor", "not run", 0.4, 0.4),
        CombinationStep("clip", "ignored", 0.4, 0.4),
    ]
    # failed with a probability left over, or ok without one: both are failures, never blended
    for d, s in [(debate(0.9, "failed"), supervisor(0.9, "high", "failed")), (debate(None), supervisor(None))]:
        steps = rule.steps(0.4, d, s)
        assert [(x.kind, x.status, x.p_before, x.p_after, x.value, x.weight) for x in steps[1:3]] == [
            ("debate", "failed", 0.4, 0.4, None, None), ("supervisor", "failed", 0.4, 0.4, None, None)]
        assert rule.combine(0.4, d, s) == (0.4, "aggregate")


def test_zero_weights_ignore_the_specialists_and_full_weights_replace():
    ignore = CombinationRule(debate_weight=0.0, supervisor_weights={"high": 0.0, "medium": 0.0, "low": 0.0})
    steps = ignore.steps(0.3, debate(0.8), supervisor(0.9, "high"))
    assert [(x.status, x.p_after, x.weight) for x in steps[1:3]] == [("ignored", 0.3, 0.0), ("ignored", 0.3, 0.0)]
    replace = CombinationRule(debate_weight=1.0)
    assert replace.combine(0.3, debate(0.8), None) == (0.8, "aggregate -> debate(w=1.0)")


@pytest.mark.parametrize("p, final, how", [
    (0.999, 0.99, "aggregate -> clip[0.01, 0.99]"),
    (0.0, 0.01, "aggregate -> clip[0.01, 0.99]"),
    (0.99, 0.99, "aggregate"),  # on the bound: nothing to clip
    (0.01, 0.01, "aggregate"),
])
def test_final_clip(p, final, how):
    assert CombinationRule().combine(p, None, None) == (final, how)
    clip = CombinationRule().steps(p, None, None)[-1]
    assert (clip.kind, clip.status, clip.p_before, clip.p_after) == ("clip", "applied" if p != final else "ignored", p, final)


def test_clipping_can_be_turned_off_with_bounds_zero_and_one():
    rule = CombinationRule(clip_low=0.0, clip_high=1.0)
    assert rule.combine(1.0, None, None) == (1.0, "aggregate") and rule.combine(0.0, None, None) == (0.0, "aggregate")


def test_from_description_restores_the_rule_and_ignores_other_keys():
    rule = CombinationRule(debate_weight=0.3, supervisor_weights={"high": 0.9, "medium": 0.4, "low": 0.2}, clip_low=0.05, clip_high=0.9)
    described = {**rule.describe(), "reconcile_min_spread": 0.1}  # as stored in a trace
    assert CombinationRule.from_description(described) == rule
    assert CombinationRule.from_description({}) == CombinationRule()


@pytest.mark.parametrize("kwargs, message", [
    ({"debate_weight": -0.01}, r"debate_weight must be in \[0, 1\], got -0.01"),
    ({"debate_weight": 1.01}, r"debate_weight must be in \[0, 1\], got 1.01"),
    ({"supervisor_weights": {"high": 1.5, "medium": 0.5, "low": 0.0}}, r"supervisor_weights\['high'\] must be in \[0, 1\], got 1.5"),
    ({"supervisor_weights": {"high": 1.0, "medium": -0.5, "low": 0.0}}, r"supervisor_weights\['medium'\] must be in \[0, 1\], got -0.5"),
    ({"supervisor_weights": {"high": 1.0, "medium": 0.5}}, r"supervisor_weights\['low'\] must be in \[0, 1\], got None"),
    ({"clip_low": 0.5, "clip_high": 0.5}, r"need 0 <= clip_low < clip_high <= 1, got 0.5, 0.5"),
    ({"clip_low": -0.1}, r"got -0.1, 0.99"),
    ({"clip_high": 1.1}, r"got 0.01, 1.1"),
])
def test_out_of_range_parameters_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        CombinationRule(**kwargs)


def test_bounds_of_the_valid_ranges_are_accepted():
    rule = CombinationRule(debate_weight=0.0, supervisor_weights={"high": 1.0, "medium": 0.0, "low": 1.0}, clip_low=0.0, clip_high=1.0)
    assert rule.combine(0.2, debate(0.8), supervisor(0.6, "low")) == (0.6, "aggregate -> supervisor(low, w=1.0)")
    assert CombinationRule(debate_weight=1.0).debate_weight == 1.0
