"""The simulator's family and evidence terms (issue 37): members' error correlation as a function of model family and
of the search results they were shown, checked against its closed form over many simulated questions."""

import math

import numpy as np
import pytest

from agent_providers import SimParams, SimulatorProvider
from agent_providers.simulator import (NO_EVIDENCE, error_correlation_of, pooled_error_variance, seeded_normal,
                                       shown_evidence)
from agent_schemas import ChatMessage, SearchResult, UnknownProvider
from agent_tools import render_evidence
from agent_tools.evidence import render_member_evidence

#: Simulated questions per correlation check: the standard error of one correlation is about (1 - r^2) / sqrt(n) < 0.016.
N_KEYS = 4000
TOLERANCE = 0.05


def errors(llm: SimulatorProvider, agent: str, evidence: list[str]) -> np.ndarray:
    """An agent's standardised log-odds errors on N_KEYS questions (anchor 0.5, so x is the error itself)."""
    return np.array([llm.agent_logodds(0.5, (f"q{i}", "2025-01-01"), agent, 1.0, evidence)[0] for i in range(N_KEYS)])


def test_default_family_term_is_the_common_draw_of_before():
    llm = SimulatorProvider()
    key = ("Will it rain?", "2025-01-01")
    assert llm.family_term(key) == seeded_normal(0, "common", *key)
    x, own = llm.agent_logodds(0.4, key, "m1", 0.5)
    hand = math.log(0.4 / 0.6) + 0.5 * (math.sqrt(0.3) * seeded_normal(0, "common", *key) + math.sqrt(0.7) * own)
    assert x == pytest.approx(hand, abs=1e-15)
    assert SimulatorProvider().model == "anchor=truth,k=2,noise=0.5,rho=0.3,bias=0,scale=1,seed=0"
    assert SimulatorProvider("family=b,evidence_rho=0.2").spec == "sim/family=b,evidence_rho=0.2"


@pytest.mark.parametrize("spec_a, spec_b, ev_a, ev_b", [
    ("rho=0.3,evidence_rho=0.4", "rho=0.3,evidence_rho=0.4", ["u1", "u2"], ["u1", "u2"]),          # one family, shared: 0.7
    ("rho=0.3,evidence_rho=0.4", "rho=0.3,evidence_rho=0.4", ["u1", "u2"], ["u3", "u4"]),          # one family, split: 0.3
    ("rho=0.3,evidence_rho=0.4", "rho=0.3,evidence_rho=0.4,family=b", ["u1"], ["u1"]),             # two families, shared: 0.5
    ("rho=0.3,evidence_rho=0.4,family=c", "rho=0.3,evidence_rho=0.4,family=b", ["u1", "u2"], ["u2", "u3"]),  # 0.1 + 0.2
    ("rho=0.6,cross_family=0", "rho=0.6,cross_family=0,family=b", [], []),                         # nothing across: 0
])
def test_measured_correlation_matches_the_closed_form(spec_a, spec_b, ev_a, ev_b):
    a, b = SimulatorProvider(spec_a), SimulatorProvider(spec_b)
    expected = error_correlation_of([a.params, b.params], [ev_a, ev_b])[0][1]
    measured = np.corrcoef(errors(a, "member-a", ev_a), errors(b, "member-b", ev_b))[0, 1]
    assert abs(measured - expected) < TOLERANCE, (measured, expected)
    # every term is standard normal: the error's variance is sigma^2 = 1 whatever the family or evidence
    assert np.var(errors(b, "member-b", ev_b)) == pytest.approx(1.0, abs=0.08)


def test_closed_form_by_hand():
    p, q = SimParams(rho=0.3, evidence_rho=0.4), SimParams(rho=0.3, evidence_rho=0.4, family="b")
    m = error_correlation_of([p, p, q], [["u1", "u2"], ["u2", "u3"], []])
    assert m[0][1] == pytest.approx(0.3 + 0.4 * 1 / 2)
    assert m[0][2] == pytest.approx(0.3 / 3)  # no result shown: the pseudo-result, shared with nobody here
    assert error_correlation_of([p, p], [[], [NO_EVIDENCE]])[0][1] == pytest.approx(0.7)
    assert pooled_error_variance(0.5, 0.3, 3) == pytest.approx(0.25 * (0.3 + 0.7 / 3))
    with pytest.raises(ValueError):
        error_correlation_of([p, SimParams(rho=0.5)], [[], []])


def test_shown_evidence_reads_the_rendered_results_only():
    results = [SearchResult(title="Rain report", url="https://a.org/1", snippet="wet", source="news"),
               SearchResult(title="Untitled page", url="", snippet="dry", source="blog")]
    msgs = [ChatMessage(role="user", content="## EVIDENCE\n" + render_evidence(results) + "\n[9] not a result — x — y")]
    assert shown_evidence(msgs) == ["https://a.org/1", "Untitled page"]
    assert shown_evidence([ChatMessage(role="user", content="No research was run.")]) == []
    # what each member was shown, as the debate and the supervisor read it under split evidence
    listed = render_member_evidence({"m0": results[:1], "m1": [], "m2": results})
    assert shown_evidence([ChatMessage(role="user", content=listed)]) == ["https://a.org/1", "Untitled page"]


@pytest.mark.parametrize("text", ["evidence_rho=0.8", "rho=0.5,evidence_rho=0.6", "cross_family=1.5", "family=a b"])
def test_bad_shared_terms_are_refused(text):
    with pytest.raises(UnknownProvider):
        SimParams.parse(text)
