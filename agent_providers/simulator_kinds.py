"""The simulator on multiple-choice and numeric questions: the same simulation as for binary questions
(:mod:`agent_providers.simulator`: a calibrated anchor drawn from the outcome, agents noisy around it with a
shared and an own error, a converging debate, a supervisor with an informative confidence), written in each
kind's forecast form and answered in the kind's answer fields (:meth:`~agent_schemas.kinds.base.QuestionKind.answer_of`).
Binary questions never come here: their answers are exactly what :mod:`agent_providers.simulator` gives.

Every draw is hashed from the seed, the question and the agent, as for binary questions, so answers are
reproducible whatever the call order. Which kind a question is, and its options or range, the simulator reads
from its world's record of the question (:class:`~agent_providers.simulator.WorldRecord`), never from the prompt.

Multiple choice (``K`` options, outcome ``o``)
----------------------------------------------
* **Anchor** ``p*`` (a probability vector). ``truth``: ``p* ~ Dirichlet(k m + e_o)`` with ``m`` the uniform
  vector ``1/K``: the posterior of a ``Dirichlet(k m)`` prior after seeing ``o``, so that ``P(o = j | p*) =
  p*_j`` wherever the options happen with frequencies ``m`` (the multi-option form of the binary Beta anchor;
  drawn as normalised Gamma quantiles). ``crowd``: the question's crowd forecast (e.g. its sibling markets'
  prices), else ``m``. ``base``: ``m``.
* **Agents.** ``x_j = scale * ln p*_j + sigma * (sqrt(rho) c_j + sqrt(1 - rho) z_aj)`` with one shared draw
  ``c_j`` and one own draw ``z_aj`` per option; the agent's forecast is ``0.01 + (1 - 0.01 K) softmax(x)``
  (at least 1% on every option, as binary answers stay within [1, 99]%), answered as integer percents that
  sum to 100. ``bias`` has no meaning without a Yes and is not used. The stated confidence is read from the
  size of the agent's own error: ``sum_j (z_aj - mean z_a)^2`` is chi-square with ``K - 1`` degrees of freedom;
  its CDF ``u`` gives ``|z| = Phi^-1((1 + u) / 2)``, half-normal as the binary draw's, so "high" is again
  the better half of the draws.
* **Debate.** The bull moves the log-weight of the debate agent's leading option up by ``g / 2**(r-1)``, the
  bear down (``g = 0.5``, as binary).

Numeric (range ``[lower, upper]``, outcome ``y`` at location ``t``)
----------------------------------------------------------------------
Everything is in **locations** of the range (:func:`~agent_schemas.kinds.numeric.grid.location_of`: 0 at
``lower``, 1 at ``upper``, log space on a log scale), with the anchor's width ``w = k / 20`` (``k = 2``, the
default, gives 0.1 of the range: ``k`` is the one skill knob of every kind).

* **Anchor** ``N(mu, w^2)``. ``truth``: ``mu = t + w e``, ``e`` standard normal: calibrated by construction
  (the outcome's PIT is ``Phi(-e)``, uniform). ``crowd`` and ``base`` (no crowd distribution exists for a
  numeric question): ``mu = 0.5``, the middle of the range (for the bundled numeric questions, built around
  the series' last value on the forecast date, this is a no-change forecast).
* **Agents** ``N(mu + w (bias + sigma (sqrt(rho) c + sqrt(1 - rho) z_a)), (w / scale)^2)``: the error moves
  the median, ``scale > 1`` narrows the distribution (over-confident). The answer states its percentiles
  (:data:`~agent_schemas.kinds.numeric.answers.PERCENTILES`) in the question's unit, rounded to 6 significant
  digits and kept within a closed bound. Confidence from ``|z_a|`` as for binary.
* **Debate.** The bull moves the debate agent's median up by ``g w / 2**(r-1)``, the bear down.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

import numpy as np

from agent_schemas import BadRequest, ChatMessage
from agent_schemas.kinds import ChoiceSpec, KindSpec, NumericSpec, kind_of
from agent_schemas.kinds.numeric.answers import FIELDS, PERCENTILES
from agent_schemas.kinds.numeric.grid import location_of, value_at

if TYPE_CHECKING:
    from agent_providers.simulator import SimulatorProvider, WorldRecord

__all__ = ["KIND_SIMULATIONS", "ChoiceSimulation", "KindSimulation", "MIN_OPTION_P", "NumericSimulation", "member_forecasts",
           "numeric_width"]

#: Least probability a simulated agent gives an option (1%).
MIN_OPTION_P = 0.01
_MEMBER_ID = re.compile(r"^- (?P<id>[\w.\-]+) \(", re.M)


def numeric_width(k: float) -> float:
    """Standard deviation of the numeric anchor, in units of the range: ``k / 20``."""
    return k / 20.0


class KindSimulation:
    """The simulation of one non-binary kind. Subclasses say how an agent's forecast is drawn (:meth:`forecast`);
    the roles' answers are built here from it."""

    def anchor(self, sim: SimulatorProvider, record: WorldRecord) -> Any:
        """The anchor of one record of the question (averaged over indistinguishable records)."""
        raise NotImplementedError

    def forecast(self, sim: SimulatorProvider, spec: KindSpec, anchor: Any, key: tuple[str, str], agent: str,
                 sigma: float, shift: float = 0.0) -> tuple[np.ndarray | dict[str, Any], float]:
        """``(answer fields, own z)``: an agent's forecast as its answer states it, and a standard-normal-sized
        draw its confidence is read from. ``shift`` is the debate's push (> 0 bull, < 0 bear)."""
        raise NotImplementedError

    def topic(self, spec: KindSpec) -> str:
        """What members disagree on, in a few words (the supervisor's first answer)."""
        raise NotImplementedError

    def answer(self, sim: SimulatorProvider, role: str, records: Sequence[WorldRecord], key: tuple[str, str],
               messages: Sequence[ChatMessage], json_schema: Mapping[str, Any] | None, seed: int | None) -> str:
        """The simulated answer text of ``role`` on this kind's question (``queries`` is answered by the caller)."""
        from agent_providers.simulator import DEBATE_GAP, ROUND_PATTERN, member_key, stated_confidence  # noqa: PLC0415

        specs = {r.spec for r in records}
        if len(specs) != 1:
            raise BadRequest(f"{sim.spec}: the question {key[0][:80]!r} (forecast date {key[1]}) is held with "
                             f"{len(specs)} different specs; the simulator cannot tell which one a prompt asks",
                             provider=sim.spec, model=sim.model)
        spec = records[0].spec
        anchors = [self.anchor(sim, r) for r in records]
        anchor = anchors[0] if len(anchors) == 1 else np.mean(np.asarray(anchors, dtype=float), axis=0)
        p = sim.params
        tail = messages[-1].content
        what = kind_of(spec).label
        if role == "forecaster":
            fields, own = self.forecast(sim, spec, anchor, key, member_key(seed, tail), p.noise)
            return json.dumps({
                "rationale": f"Simulated forecaster, not a model: a seeded {what} forecast around the simulation's "
                             f"anchor (anchor={p.anchor}).",
                "key_evidence": [], "confidence": stated_confidence(own), **fields})
        if role in ("bull", "bear"):
            rnd = ROUND_PATTERN.search(tail)
            r = int(rnd.group(1)) if rnd else 1
            gap = DEBATE_GAP / 2 ** (r - 1)
            sigma = p.noise if p.debate_noise is None else p.debate_noise
            fields, _ = self.forecast(sim, spec, anchor, key, "debate", sigma, gap if role == "bull" else -gap)
            direction = "for" if role == "bull" else "against"
            return json.dumps({
                "argument": f"Simulated {role}, round {r}: argues {direction} the estimate's lead on this {what} "
                            "question (the sides converge each round).",
                "key_evidence": [], **fields})
        members = _MEMBER_ID.findall("\n".join(m.content for m in messages))
        if role == "disagreements":
            n = int((json_schema or {}).get("properties", {}).get("disagreements", {}).get("maxItems", 1))
            query = " ".join(key[0].split("\n", 1)[0].split())[:50]
            agents = [members[0][:12], members[-1][:12]] if len(members) >= 2 else [m[:12] for m in members]
            out = [{"topic": self.topic(spec)[:50], "description": f"{len(members)} member forecasts differ"[:80],
                    "agents": agents, "query": query}]
            return json.dumps({"disagreements": out[: max(1, n)]})
        sigma = p.noise if p.supervisor_noise is None else p.supervisor_noise
        fields, own = self.forecast(sim, spec, anchor, key, "supervisor", sigma)
        confidence = stated_confidence(own)
        return json.dumps({
            "rationale": f"Simulated supervisor: {len(members)} member forecasts; own draw, confidence {confidence} "
                         f"(|z|={abs(own):.2f}).",
            "key_evidence": [], "confidence": confidence, **fields})


class ChoiceSimulation(KindSimulation):
    """Multiple choice (see the module docstring)."""

    def anchor(self, sim: SimulatorProvider, record: WorldRecord) -> np.ndarray:
        from agent_providers.simulator import seeded_uniform  # noqa: PLC0415
        from scipy.special import gammaincinv  # noqa: PLC0415

        p = sim.params
        k = len(record.spec.options)
        m = np.full(k, 1.0 / k)
        if p.anchor == "crowd" and record.crowd_forecast is not None:
            return np.asarray(record.crowd_forecast, dtype=float)
        if p.anchor == "truth" and record.outcome is not None:
            a = p.k * m + (np.arange(k) == int(record.outcome))
            g = np.array([gammaincinv(a[j], seeded_uniform(p.seed, "anchor", record.question_id, j)) for j in range(k)])
            return g / g.sum()
        return m

    def forecast(self, sim, spec, anchor, key, agent, sigma, shift=0.0):
        from agent_providers.simulator import ANCHOR_EPS, seeded_normal  # noqa: PLC0415

        p = sim.params
        k = len(spec.options)
        common = np.array([seeded_normal(p.seed, "common", *key, j) for j in range(k)])
        own = np.array([seeded_normal(p.seed, "agent", agent, *key, j) for j in range(k)])
        x = p.scale * np.log(np.maximum(anchor, ANCHOR_EPS)) + sigma * (math.sqrt(p.rho) * common + math.sqrt(1 - p.rho) * own)
        if shift:
            x[int(np.argmax(x))] += shift
        w = np.exp(x - x.max())
        q = MIN_OPTION_P + (1 - MIN_OPTION_P * k) * w / w.sum()
        return kind_of(spec).answer_of(spec, q), _half_normal_size(own)

    def topic(self, spec: ChoiceSpec) -> str:
        return "which option is most likely"


class NumericSimulation(KindSimulation):
    """Numeric (see the module docstring)."""

    def anchor(self, sim: SimulatorProvider, record: WorldRecord) -> float:
        from agent_providers.simulator import seeded_normal  # noqa: PLC0415

        p = sim.params
        if p.anchor == "truth" and record.outcome is not None:
            t = float(location_of(record.spec, float(record.outcome)))
            return t + numeric_width(p.k) * seeded_normal(p.seed, "anchor", record.question_id)
        return 0.5

    def forecast(self, sim, spec: NumericSpec, anchor, key, agent, sigma, shift=0.0):
        from agent_providers.simulator import seeded_normal  # noqa: PLC0415

        p = sim.params
        w = numeric_width(p.k)
        common = seeded_normal(p.seed, "common", *key)
        own = seeded_normal(p.seed, "agent", agent, *key)
        mu = float(anchor) + w * (p.bias + shift + sigma * (math.sqrt(p.rho) * common + math.sqrt(1 - p.rho) * own))
        sd = w / p.scale
        return {field: _stated_value(spec, mu + sd * NormalDist().inv_cdf(level / 100))
                for level, field in zip(PERCENTILES, FIELDS)}, own

    def topic(self, spec: NumericSpec) -> str:
        return "where the median lies"


def _stated_value(spec: NumericSpec, t: float) -> float:
    """The value at location ``t`` as an answer states it: 6 significant digits, within a closed bound."""
    if not spec.open_lower and t <= 0:
        return float(spec.lower)
    if not spec.open_upper and t >= 1:
        return float(spec.upper)
    v = float(f"{float(value_at(spec, t)):.6g}")
    if not spec.open_lower:
        v = max(v, spec.lower)
    if not spec.open_upper:
        v = min(v, spec.upper)
    if spec.log_scale and v <= 0:  # 6 digits of a value > 0 are > 0; kept for safety of the log scale
        v = float(value_at(spec, t))
    return v


def _half_normal_size(own: np.ndarray) -> float:
    """A draw with the distribution of ``|Z|`` that grows with the size of an agent's own option errors (the
    module docstring): ``Phi^-1((1 + F_chi2(sum (z - mean z)^2; K - 1)) / 2)``."""
    from scipy.stats import chi2  # noqa: PLC0415

    r2 = float(np.sum((own - own.mean()) ** 2))
    u = float(chi2.cdf(r2, df=own.size - 1))
    return NormalDist().inv_cdf(min((1 + u) / 2, 1 - 1e-12))


#: The simulation of each non-binary kind, by kind name (binary questions take the simulator's own path).
KIND_SIMULATIONS: dict[str, KindSimulation] = {"multiple_choice": ChoiceSimulation(), "numeric": NumericSimulation()}


def member_forecasts(sim: SimulatorProvider, questions: Sequence[Any], n_members: int) -> np.ndarray:
    """Members' forecasts of non-binary ``questions`` of one kind as the simulation draws them, without prompts
    (the analogue of :meth:`~agent_providers.simulator.SimulatorProvider.member_panel`, for studies and teaching).

    Member ``i`` is the agent ``panel-i`` (the harness's member model with its own draws), and each forecast is
    what its answer says, read back by the kind (:meth:`~agent_schemas.kinds.base.QuestionKind.read_answer`:
    integer percents; seven percentiles turned into a CDF).

    Parameters
    ----------
    sim : SimulatorProvider
        Whose world holds ``questions``.
    questions : sequence of Question, length n_questions
        Questions of one non-binary kind (for multiple choice, the same number of options).
    n_members : int
        Members per question (>= 1).

    Returns
    -------
    ndarray of shape (n_questions, n_members, size)
        The stack the kind's pools take.

    Raises
    ------
    ValueError
        If ``n_members < 1``, a question is binary, or the questions mix kinds or sizes.
    BadRequest
        When the world does not hold a question.
    """
    from agent_providers.simulator import world_key  # noqa: PLC0415

    if n_members < 1:
        raise ValueError(f"n_members must be >= 1, got {n_members}")
    rows = []
    for q in questions:
        simulation = KIND_SIMULATIONS.get(q.spec.kind)
        if simulation is None:
            raise ValueError(f"question {q.id!r} is {q.spec.kind}: use SimulatorProvider.member_panel for binary questions")
        key = world_key(q)
        records = sim.world_records(key)
        anchors = [simulation.anchor(sim, r) for r in records]
        anchor = anchors[0] if len(anchors) == 1 else np.mean(np.asarray(anchors, dtype=float), axis=0)
        kind = kind_of(q.spec)
        rows.append([kind.read_answer(q.spec, simulation.forecast(sim, q.spec, anchor, key, f"panel-{i}", sim.params.noise)[0])
                     for i in range(n_members)])
    out = np.asarray(rows, dtype=np.float64)
    if out.ndim != 3:
        raise ValueError("questions must be of one kind and size (the same number of options)")
    return out
