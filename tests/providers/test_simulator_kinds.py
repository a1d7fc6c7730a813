"""The simulator on multiple-choice and numeric questions: every role answered in the kind's form through the real
pipeline, the documented simulation checked by hand and by its statistics (calibrated anchors), reproducible;
and binary answers unchanged byte for byte (hashes of a transcript recorded before the kinds were added)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from statistics import NormalDist

import jsonschema
import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaincinv

from agent_providers import SimulatorProvider, SimWorld
from agent_providers.roles import calling_as
from agent_providers.simulator import seeded_normal, seeded_uniform
from agent_providers.simulator_kinds import ChoiceSimulation, NumericSimulation, numeric_width
from agent_research import Ensemble, ForecasterAgent, ForecastPipeline
from agent_schemas import ChatMessage, Question
from agent_schemas.kinds import ChoiceSpec, NumericSpec
from agent_schemas.kinds.multiple_choice import MULTIPLE_CHOICE, integer_percents
from agent_schemas.kinds.numeric import NUMERIC
from agent_schemas.kinds.numeric.answers import FIELDS, PERCENTILES
from agent_schemas.kinds.numeric.grid import location_of, value_at
from agent_specialists import DebateAgent, SupervisorAgent
from agent_tools import ToolExecutor
from agent_tools.case_facts import render_case_facts
from tests.helpers import FixedSearch

DATE = dt.date(2025, 11, 9)
CHOICE = ChoiceSpec(options=("Arsenal", "Liverpool", "Chelsea"))
RANGE = NumericSpec(lower=50, upper=200, open_lower=True, open_upper=True, unit="index", log_scale=True)


def mc_question(i=0, outcome=1, crowd=(0.5, 0.3, 0.2)):
    return Question(id=f"mc{i}", text=f"Who will win league number {i}?", forecast_date=DATE, spec=CHOICE, outcome=outcome,
                    source="polymarket", question_type="market", crowd_forecast=list(crowd))


def numeric_question(i=0, outcome=120.5, spec=RANGE):
    return Question(id=f"nu{i}", text=f"What will series {i} be as of 2026-01-01?", forecast_date=DATE, spec=spec,
                    outcome=outcome, source="fred", question_type="dataset")


def prompt(q, tail):
    return [ChatMessage(role="system", content="sys"), ChatMessage(role="user", content=render_case_facts(q) + "\n\n" + tail)]


# --- binary answers: byte for byte as before -------------------------------------------------------------

def binary_questions():
    return [Question(id=f"b{i}", text=f"Will event number {i} happen by 2026-01-0{i + 1}?", forecast_date=DATE,
                     outcome=i % 2, source="polymarket" if i < 3 else "fred", question_type="market" if i < 3 else "dataset",
                     crowd_p_yes=0.1 * (i + 1) if i < 3 else None) for i in range(6)]


MEMBERS = "- m1 (sim): p_yes 30%. a\n- m2 (sim): p_yes 55%. b\n- m3 (sim): p_yes 70%. c\n"


def binary_transcript(params):
    def ask(llm, q, tail, schema, seed=None):
        case = f"## CASE\n- Question: {q.text}\n- Forecast date (information cutoff): {q.forecast_date.isoformat()}\n"
        return llm.answer([ChatMessage(role="system", content="sys"), ChatMessage(role="user", content=case + "\n" + tail)],
                          schema, seed)

    qs = binary_questions()
    # the world also holds questions of the other kinds, of the same sources (their outcomes are no yes-rate)
    world = SimWorld.from_questions(qs + [mc_question(9), numeric_question(9, outcome=1500.0)])
    llm = SimulatorProvider(params, world=world)
    texts = []
    for q in qs:
        for seed in (0, 1, 7):
            with calling_as("forecaster"):
                texts.append(ask(llm, q, f"persona {seed}", {"properties": {"p_yes_percent": {}}}, seed))
        for role in ("bull", "bear"):
            for r in (1, 2):
                with calling_as(role):
                    texts.append(ask(llm, q, f"Round {r} of at most 2\nEnsemble aggregate p_yes: 52%", {}))
        with calling_as("disagreements"):
            texts.append(ask(llm, q, MEMBERS, {"properties": {"disagreements": {"maxItems": 2}}}))
        with calling_as("decision"):
            texts.append(ask(llm, q, MEMBERS + "-> SUPPORTED: x\n-> GAP: y", {}))
        with calling_as("queries"):
            texts.append(ask(llm, q, "q", {}))
    return texts


@pytest.mark.parametrize("params, digest", [
    ("", "3e14eccdb4d833745c7bf28bf05260ba2b829862873d04e1b0aa2c225de95904"),
    ("anchor=crowd,noise=0.8,rho=0.5,bias=0.3,scale=1.4", "504aafe10cb9b8a755edc872ccb6da7b6969c9d21fc27ae5bd28b5cea3ffff7e"),
    ("anchor=base,seed=3", "fe6daea20c5c82712cd54c18e52cbba314fad080c1dcfced469dfa8b327fb434"),
])
def test_binary_answers_are_unchanged_byte_for_byte(params, digest):
    """The digests were computed with the simulator before it knew other kinds (commit ef8a42d)."""
    texts = binary_transcript(params)
    assert len(texts) == 60
    assert hashlib.sha256("\n".join(texts).encode()).hexdigest() == digest


# --- the pipeline on every kind ---------------------------------------------------------------------------

@pytest.mark.parametrize("question", [mc_question(), numeric_question()], ids=["multiple_choice", "numeric"])
def test_every_role_answers_in_the_kind_form_and_replays(question):
    llm = SimulatorProvider(world=SimWorld.from_questions([question]))
    executor = ToolExecutor(FixedSearch())

    def pipeline():
        return ForecastPipeline(Ensemble.from_providers(llm, n_members=3, executor=executor), DebateAgent(llm, max_rounds=2),
                                SupervisorAgent(llm, executor=executor, max_queries=2))

    trace = pipeline().run(question)
    assert trace.status == "ok"
    assert [c.role for c in trace.recorded_calls].count("forecaster") == 3
    assert {c.role for c in trace.recorded_calls} == {"forecaster", "bull", "bear", "supervisor"}
    kind = question.kind
    forecast_schema = ForecasterAgent(llm).call_params(spec=question.spec)["json_schema"]
    for call in trace.recorded_calls:
        assert call.error is None
        answer = json.loads(call.completion.text)
        if call.role == "forecaster":
            jsonschema.validate(answer, forecast_schema)
        if "disagreements" not in answer:
            kind.check_forecast(question.spec, kind.read_answer(question.spec, answer))
    assert trace.final_distribution is not None
    kind.check_forecast(question.spec, trace.final_distribution)
    replayed = pipeline().replay(trace)
    assert replayed.final_distribution == trace.final_distribution
    assert [c.completion.text for c in replayed.recorded_calls] == [c.completion.text for c in trace.recorded_calls]


def test_queries_name_the_question_without_its_options():
    q = mc_question()
    llm = SimulatorProvider(world=SimWorld.from_questions([q]))
    with calling_as("queries"):
        assert json.loads(llm.answer(prompt(q, "task"), {}, None)) == {"queries": ["Who will win league number 0?"]}


# --- the simulation by hand -------------------------------------------------------------------------------

def test_numeric_forecaster_by_hand():
    """noise 0: the median sits at the anchor t + w e, the percentiles at w * z_p around it (w = k/20 = 0.1)."""
    q = numeric_question()
    llm = SimulatorProvider("noise=0", world=SimWorld.from_questions([q]))
    with calling_as("forecaster"):
        answer = json.loads(llm.answer(prompt(q, "persona"), {}, 0))
    t = location_of(RANGE, 120.5)
    mu = t + 0.1 * seeded_normal(0, "anchor", "nu0")
    for p, field in zip(PERCENTILES, FIELDS):
        expected = float(value_at(RANGE, mu + 0.1 * NormalDist().inv_cdf(p / 100)))
        assert answer[field] == float(f"{expected:.6g}")
    assert answer["confidence"] in ("high", "medium", "low")


def test_numeric_answers_stay_within_closed_bounds():
    spec = NumericSpec(lower=0, upper=10, open_lower=False, open_upper=False)
    q = numeric_question(outcome=0.0, spec=spec)  # the anchor near the closed lower bound: low percentiles clipped
    llm = SimulatorProvider("noise=1", world=SimWorld.from_questions([q]))
    for seed in range(20):
        with calling_as("forecaster"):
            answer = json.loads(llm.answer(prompt(q, "p"), {}, seed))
        values = [answer[f] for f in FIELDS]
        assert values == sorted(values) and 0 <= values[0] and values[-1] <= 10
        NUMERIC.read_answer(spec, answer)


def test_choice_forecaster_by_hand():
    """noise 0, scale 1: 1% + 97% of the Dirichlet anchor (normalised Gamma quantiles), as integer percents."""
    q = mc_question()
    llm = SimulatorProvider("noise=0", world=SimWorld.from_questions([q]))
    with calling_as("forecaster"):
        answer = json.loads(llm.answer(prompt(q, "persona"), {}, 0))
    a = 2.0 / 3 + np.array([0.0, 1.0, 0.0])
    g = np.array([gammaincinv(a[j], seeded_uniform(0, "anchor", "mc0", j)) for j in range(3)])
    expected = 0.01 + 0.97 * g / g.sum()
    assert answer["probabilities"] == dict(zip(CHOICE.options, integer_percents(expected)))
    assert sum(answer["probabilities"].values()) == 100 and min(answer["probabilities"].values()) >= 1


def test_crowd_and_base_anchors():
    mc, nu = mc_question(), numeric_question()
    crowd = SimulatorProvider("anchor=crowd,noise=0", world=SimWorld.from_questions([mc, nu]))
    rec = crowd.world.lookup(*prompt_key(mc))[0]
    np.testing.assert_allclose(ChoiceSimulation().anchor(crowd, rec), [0.5, 0.3, 0.2])
    assert NumericSimulation().anchor(crowd, crowd.world.lookup(*prompt_key(nu))[0]) == 0.5
    base = SimulatorProvider("anchor=base", world=SimWorld.from_questions([mc]))
    np.testing.assert_allclose(ChoiceSimulation().anchor(base, base.world.lookup(*prompt_key(mc))[0]), [1 / 3] * 3)


def prompt_key(q):
    from agent_providers.simulator import world_key

    return world_key(q)


# --- the simulation's statistics -----------------------------------------------------------------------------

def test_numeric_anchors_are_calibrated():
    """The outcome's PIT under the anchor N(mu, w^2) is uniform (Kolmogorov-Smirnov), for every k."""
    rng = np.random.default_rng(0)
    qs = [numeric_question(i, outcome=float(v)) for i, v in enumerate(np.exp(rng.uniform(np.log(60), np.log(180), 2000)))]
    for k in (0.5, 2.0):
        llm = SimulatorProvider(f"k={k}", world=SimWorld.from_questions(qs))
        sim = NumericSimulation()
        pit = [stats.norm.cdf((location_of(RANGE, q.outcome) - sim.anchor(llm, llm.world.lookup(*prompt_key(q))[0]))
                              / numeric_width(k)) for q in qs]
        assert stats.kstest(pit, "uniform").pvalue > 0.01


def test_choice_anchors_are_calibrated():
    """With outcomes drawn uniformly, P(outcome = j | p*) = p*_j: the anchor's mean probability of the outcome is
    E[p*_o] = (k/K + 1) / (k + 1) = 5/9 for k = 2, K = 3, and binned by p*_j the hit rate tracks p*_j."""
    rng = np.random.default_rng(1)
    outcomes = rng.integers(0, 3, 3000)
    qs = [mc_question(i, outcome=int(o)) for i, o in enumerate(outcomes)]
    llm = SimulatorProvider(world=SimWorld.from_questions(qs))
    anchors = np.array([ChoiceSimulation().anchor(llm, llm.world.lookup(*prompt_key(q))[0]) for q in qs])
    p_outcome = anchors[np.arange(len(qs)), outcomes]
    assert p_outcome.mean() == pytest.approx(5 / 9, abs=0.015)
    p, hit = anchors.ravel(), (np.arange(3)[None, :] == outcomes[:, None]).ravel()
    for lo, hi in ((0.0, 0.2), (0.2, 0.5), (0.5, 1.0)):
        sel = (p >= lo) & (p < hi)
        assert hit[sel].mean() == pytest.approx(p[sel].mean(), abs=0.03)


def test_choice_confidence_splits_as_the_binary_one():
    qs = [mc_question(i) for i in range(400)]
    llm = SimulatorProvider(world=SimWorld.from_questions(qs))
    said = []
    for q in qs:
        with calling_as("forecaster"):
            said.append(json.loads(llm.answer(prompt(q, "persona"), {}, 3))["confidence"])
    share = {c: said.count(c) / len(said) for c in ("high", "medium", "low")}
    assert share["high"] == pytest.approx(0.5, abs=0.07) and share["low"] == pytest.approx(0.25, abs=0.06)


def test_reproducible_and_seeded():
    q = mc_question()
    a, b = (SimulatorProvider(world=SimWorld.from_questions([q])) for _ in range(2))
    other = SimulatorProvider("seed=1", world=SimWorld.from_questions([q]))
    with calling_as("forecaster"):
        first = a.answer(prompt(q, "persona"), {}, 0)
        assert first == b.answer(prompt(q, "persona"), {}, 0)
        assert first != other.answer(prompt(q, "persona"), {}, 0)
        assert first != a.answer(prompt(q, "another persona"), {}, 0)
    assert MULTIPLE_CHOICE.read_answer(CHOICE, json.loads(first)).sum() == pytest.approx(1.0)
    assert math.isclose(sum(json.loads(first)["probabilities"].values()), 100)


def test_binary_only_helpers_refuse_other_kinds():
    q = numeric_question()
    llm = SimulatorProvider(world=SimWorld.from_questions([q]))
    with pytest.raises(ValueError, match="not binary"):
        llm.member_panel([q], 3)
    with pytest.raises(ValueError, match="not binary"):
        llm.latent_p(q)
