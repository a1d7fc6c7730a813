"""How each benchmark method's row is read from one pipeline trace: values, clipping, notes, extra usage (issue 18)."""

from __future__ import annotations

import pytest

from agent_research import CombinationRule
from agent_research.aggregation import AGGREGATORS
from agent_schemas import DebateArtifact, ErrorInfo, PipelineTrace, SupervisorArtifact, TokenUsage
from benchmarks.protocol.methods import AGGREGATION_METHODS, ALL_METHODS, DEFAULT_METHODS, RECONCILIATION_METHODS, method_rows, validate_methods
from tests.helpers import make_question

DEBATE_USAGE = TokenUsage(input_tokens=100, output_tokens=20, calls=2, cost_usd=0.002)
SUPERVISOR_USAGE = TokenUsage(input_tokens=300, output_tokens=40, cache_read_tokens=50, calls=2, cost_usd=0.005)
NONE = TokenUsage().model_dump()


def trace(**fields) -> PipelineTrace:
    base = dict(question=make_question().visible(), aggregate_p_yes=0.5, combination_rule=CombinationRule().describe(),
                aggregates={"mean": 0.5, "median": 0.5, "min": 0.0, "max": 1.0, "trimmed_mean": 0.5,
                            "geomean_odds": 0.995, "extremized": 0.004},
                final_p_yes=0.62, final_source="aggregate -> debate(w=0.5)")
    return PipelineTrace(**{**base, **fields})


def test_method_names():
    assert AGGREGATION_METHODS == ("mean", "median", "min", "geomean_odds", "extremized")
    assert RECONCILIATION_METHODS == ("debate", "supervisor", "pipeline")
    assert DEFAULT_METHODS == AGGREGATION_METHODS + RECONCILIATION_METHODS
    # every kind's pooling rules (binary's first), then the reconciliation methods
    assert ALL_METHODS[: len(AGGREGATORS)] == tuple(AGGREGATORS) and ALL_METHODS[-3:] == RECONCILIATION_METHODS
    assert {"log_pool", "least_confident"} <= set(ALL_METHODS)
    assert {"mean", "median", "trimmed_mean", "geomean_odds", "extremized", "min", "max"} <= set(AGGREGATORS)


def test_validate_methods():
    assert validate_methods(("mean", "pipeline")) == ["mean", "pipeline"]
    with pytest.raises(ValueError) as ei:
        validate_methods(["mean", "majority", "vote"])
    assert str(ei.value) == f"unknown methods ['majority', 'vote']; valid: {', '.join(ALL_METHODS)}"
    with pytest.raises(ValueError, match="^methods is empty$"):
        validate_methods([])


def test_aggregates_are_clipped_to_the_rule_bounds_and_cost_nothing_extra():
    rows = method_rows(trace(), ["mean", "min", "max", "geomean_odds", "extremized"])
    assert {m: r["p_yes"] for m, r in rows.items()} == {"mean": 0.5, "min": 0.01, "max": 0.99, "geomean_odds": 0.99,
                                                          "extremized": 0.01}
    assert all(r == {"p_yes": r["p_yes"], "status": "ok", "note": "", "extra_usage": NONE} for r in rows.values())
    wide = trace(combination_rule=CombinationRule(clip_low=0.1, clip_high=0.8).describe())
    assert [method_rows(wide, [m])[m]["p_yes"] for m in ("min", "mean", "max")] == [0.1, 0.5, 0.8]


def test_without_clip_bounds_in_the_trace_probabilities_are_only_kept_in_0_1():
    rows = method_rows(trace(combination_rule={}), ["min", "max"])
    assert (rows["min"]["p_yes"], rows["max"]["p_yes"]) == (0.0, 1.0)
    off = trace(combination_rule={}, aggregates={"mean": 0.5, "max": 1.2, "min": -0.2})  # a rounding aggregator, say
    assert [method_rows(off, [m])[m]["p_yes"] for m in ("min", "max")] == [0.0, 1.0]


def test_an_aggregate_without_a_value_is_kept_as_none():
    rows = method_rows(trace(aggregates={"mean": 0.5, "median": None}), ["median"])
    assert rows["median"]["p_yes"] is None and rows["median"]["status"] == "ok"


def test_specialists_not_triggered_equal_the_clipped_mean_at_no_cost():
    rows = method_rows(trace(aggregates={"mean": 0.003}), ["debate", "supervisor"])
    assert rows == {
        "debate": {"p_yes": 0.01, "status": "ok", "note": "debate not triggered: members agreed; equals mean", "extra_usage": NONE},
        "supervisor": {"p_yes": 0.01, "status": "ok", "note": "supervisor not triggered: members agreed; equals mean",
                       "extra_usage": NONE},
    }


def test_specialists_that_ran_are_clipped_and_carry_their_usage():
    t = trace(debate=DebateArtifact(question_id="q1", p_yes=0.999, usage=DEBATE_USAGE),
              supervisor=SupervisorArtifact(question_id="q1", p_yes=0.3, confidence="high", usage=SUPERVISOR_USAGE))
    rows = method_rows(t, ["debate", "supervisor"])
    assert rows["debate"] == {"p_yes": 0.99, "status": "ok", "note": "", "extra_usage": DEBATE_USAGE.model_dump()}
    assert rows["supervisor"] == {"p_yes": 0.3, "status": "ok", "note": "", "extra_usage": SUPERVISOR_USAGE.model_dump()}


@pytest.mark.parametrize("artifact_fields, note", [
    ({"status": "failed", "error": ErrorInfo(type="RateLimited", message="slow down")}, "failed: slow down"),
    ({"status": "failed", "p_yes": 0.4}, "failed: no probability"),  # a failed artifact's leftover value is not used
    ({"status": "ok", "p_yes": None}, "failed: no probability"),
])
def test_a_failed_specialist_is_a_failed_row_that_keeps_its_usage(artifact_fields, note):
    t = trace(debate=DebateArtifact(question_id="q1", usage=DEBATE_USAGE, **artifact_fields),
              supervisor=SupervisorArtifact(question_id="q1", usage=SUPERVISOR_USAGE, **artifact_fields))
    rows = method_rows(t, ["debate", "supervisor"])
    assert rows["debate"] == {"p_yes": None, "status": "failed", "note": f"debate {note}", "extra_usage": DEBATE_USAGE.model_dump()}
    assert rows["supervisor"] == {"p_yes": None, "status": "failed", "note": f"supervisor {note}",
                                  "extra_usage": SUPERVISOR_USAGE.model_dump()}


def test_pipeline_row_is_the_final_probability_with_both_specialists_usage():
    t = trace(debate=DebateArtifact(question_id="q1", p_yes=0.7, usage=DEBATE_USAGE),
              supervisor=SupervisorArtifact(question_id="q1", p_yes=0.6, confidence="low", usage=SUPERVISOR_USAGE))
    row = method_rows(t, ["pipeline"])["pipeline"]
    both = TokenUsage(input_tokens=400, output_tokens=60, cache_read_tokens=50, calls=4, cost_usd=0.007)
    assert row["p_yes"] == 0.62 and row["status"] == "ok" and row["note"] == "aggregate -> debate(w=0.5)"
    assert row["extra_usage"] == pytest.approx(both.model_dump())
    only_debate = method_rows(trace(debate=DebateArtifact(question_id="q1", p_yes=0.7, usage=DEBATE_USAGE)), ["pipeline"])
    assert only_debate["pipeline"]["extra_usage"] == DEBATE_USAGE.model_dump()
    only_sup = method_rows(trace(supervisor=SupervisorArtifact(question_id="q1", p_yes=0.7, usage=SUPERVISOR_USAGE)), ["pipeline"])
    assert only_sup["pipeline"]["extra_usage"] == SUPERVISOR_USAGE.model_dump()
    assert method_rows(trace(), ["pipeline"])["pipeline"]["extra_usage"] == NONE


@pytest.mark.parametrize("failed, note", [
    (("debate",), "aggregate -> supervisor(low, w=0.0) (debate failed: left out)"),
    (("supervisor",), "aggregate -> supervisor(low, w=0.0) (supervisor failed: left out)"),
    (("debate", "supervisor"), "aggregate -> supervisor(low, w=0.0) (debate and supervisor failed: left out)"),
])
def test_pipeline_note_says_which_specialist_failed(failed, note):
    status = {name: ("failed" if name in failed else "ok") for name in ("debate", "supervisor")}
    t = trace(final_source="aggregate -> supervisor(low, w=0.0)",
              debate=DebateArtifact(question_id="q1", p_yes=None if "debate" in failed else 0.5, status=status["debate"], usage=DEBATE_USAGE),
              supervisor=SupervisorArtifact(question_id="q1", p_yes=None if "supervisor" in failed else 0.5,
                                            status=status["supervisor"], usage=SUPERVISOR_USAGE))
    row = method_rows(t, ["pipeline"])["pipeline"]
    assert row["note"] == note and row["status"] == "ok" and row["extra_usage"]["calls"] == 4


@pytest.mark.parametrize("fields, note", [
    ({"status": "failed", "error": ErrorInfo(type="EnsembleFailed", message="1 of 3 members succeeded"), "aggregate_p_yes": None},
     "ensemble failed: 1 of 3 members succeeded"),
    ({"status": "failed", "aggregate_p_yes": None}, "ensemble failed: no members"),
    ({"status": "ok", "aggregate_p_yes": None}, "ensemble failed: no members"),  # no aggregate: nothing to read
    ({"status": "failed", "aggregate_p_yes": 0.5}, "ensemble failed: no members"),
])
def test_a_failed_ensemble_fails_every_method(fields, note):
    rows = method_rows(trace(**fields), list(ALL_METHODS))
    binary = [m for m in ALL_METHODS if m in AGGREGATORS or m in RECONCILIATION_METHODS]  # other kinds' pools: no row
    assert rows == {m: {"p_yes": None, "status": "failed", "note": note, "extra_usage": NONE} for m in binary}


def test_an_unknown_method_is_an_error():
    with pytest.raises(ValueError, match="^unknown method 'vote'$"):
        method_rows(trace(), ["mean", "vote"])
