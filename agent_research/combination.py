"""How the pipeline turns aggregate, debate and supervisor forecasts into one final forecast (``p_yes`` for a
binary question; the kind's vector for the others: every step is a linear blend, which keeps a probability
vector a probability vector and a CDF a CDF)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agent_research.confidence import effective_confidence
from agent_schemas import DebateArtifact, SupervisorArtifact
from agent_schemas.kinds import BinarySpec, KindSpec, kind_of


@dataclass(frozen=True)
class CombinationStep:
    """One step of :meth:`CombinationRule.steps`: what it did to the running probability.

    ``kind`` is ``"aggregate"``, ``"debate"``, ``"supervisor"`` or ``"clip"``; ``status`` is ``"applied"``,
    ``"ignored"`` (weight 0), ``"failed"`` or ``"not run"`` (the specialist was not run); ``value`` is the
    step's own forecast (the aggregate, the debate midpoint, the supervisor's p_yes), ``weight`` its
    blend weight, ``p_after`` the running forecast after the step (probabilities in [0, 1] for a binary
    question; the kind's vector, as a list, for the others).
    For the supervisor, ``confidence`` is the effective (evidence-grounded) confidence that chose the
    weight and ``reported_confidence`` what the supervisor stated.
    """

    kind: str
    status: str
    p_before: float | list[float] | None
    p_after: float | list[float]
    value: float | list[float] | None = None
    weight: float | None = None
    confidence: str | None = None
    reported_confidence: str | None = None


@dataclass(frozen=True)
class CombinationRule:
    """A documented, configurable rule for the final probability.

    Steps (each skipped when its artifact is missing or failed):

    1. ``p = aggregate`` (the ensemble aggregate).
    2. Debate: ``p = (1 - debate_weight) * p + debate_weight * p_debate`` where ``p_debate`` is the
       midpoint of the final bull and bear probabilities.
    3. Supervisor: ``p = (1 - w) * p + w * p_supervisor`` with ``w = supervisor_weights[confidence]``,
       where ``confidence`` is the supervisor's *effective* confidence: its self-report capped by the
       evidence it found (:func:`agent_research.confidence.effective_confidence`; a supervisor whose every
       search failed is at most "low"); by default the supervisor replaces the estimate at high confidence
       (w=1), blends at medium (w=0.5) and is ignored at low confidence (w=0).
    4. Final clipping to ``[clip_low, clip_high]`` (default [0.01, 0.99]) so that a single confident
       miss cannot dominate a log loss; set both to 0 and 1 to disable. For a non-binary question the
       kind clips (:meth:`agent_schemas.kinds.base.QuestionKind.clip`: every option's probability floored
       and renormalised; a numeric CDF already has a density floor).

    On a non-binary question the blends apply to the forecast vectors (a mixture of distributions).

    The weights are this project's heuristic defaults, not taken from a published method; the
    benchmark's ``pipeline`` row measures whether they earn their tokens.

    Raises
    ------
    ValueError
        For weights outside [0, 1] or clip bounds not satisfying 0 <= clip_low < clip_high <= 1.
    """

    debate_weight: float = 0.5
    supervisor_weights: dict[str, float] = field(default_factory=lambda: {"high": 1.0, "medium": 0.5, "low": 0.0})
    clip_low: float = 0.01
    clip_high: float = 0.99

    def __post_init__(self) -> None:
        if not 0 <= self.debate_weight <= 1:
            raise ValueError(f"debate_weight must be in [0, 1], got {self.debate_weight}")
        for k in ("high", "medium", "low"):
            w = self.supervisor_weights.get(k)
            if w is None or not 0 <= w <= 1:
                raise ValueError(f"supervisor_weights[{k!r}] must be in [0, 1], got {w!r}")
        if not 0 <= self.clip_low < self.clip_high <= 1:
            raise ValueError(f"need 0 <= clip_low < clip_high <= 1, got {self.clip_low}, {self.clip_high}")

    def steps(
        self, aggregate: float | list[float], debate: DebateArtifact | None, supervisor: SupervisorArtifact | None,
        spec: KindSpec = BinarySpec(),
    ) -> list[CombinationStep]:
        """Every step of the rule on these inputs (a question of ``spec``: its aggregate in the kind's stored
        form, p_yes for binary), in order, with the forecasts before and after it."""
        kind = kind_of(spec)
        show = kind.value
        p = kind.vector(aggregate)
        out = [CombinationStep("aggregate", "applied", None, show(p), value=show(p))]
        for name, artifact in (("debate", debate), ("supervisor", supervisor)):
            value = None if artifact is None or artifact.status != "ok" else kind.forecast_of(artifact)
            if artifact is None:
                out.append(CombinationStep(name, "not run", show(p), show(p)))
                continue
            if value is None:
                out.append(CombinationStep(name, "failed", show(p), show(p)))
                continue
            confidence = effective_confidence(artifact) if name == "supervisor" else None
            w = self.debate_weight if name == "debate" else self.supervisor_weights[confidence or "low"]
            new = (1 - w) * p + w * value if w > 0 else p
            extra = dict(confidence=confidence, reported_confidence=artifact.confidence) if name == "supervisor" else {}
            out.append(CombinationStep(name, "applied" if w > 0 else "ignored", show(p), show(new), value=show(value),
                                       weight=w, **extra))
            p = new
        clipped = kind.clip(spec, p, self.clip_low, self.clip_high)
        out.append(CombinationStep("clip", "applied" if not np.array_equal(clipped, p) else "ignored", show(p), show(clipped)))
        return out

    def combine(
        self, aggregate: float | list[float], debate: DebateArtifact | None, supervisor: SupervisorArtifact | None,
        spec: KindSpec = BinarySpec(),
    ) -> tuple[float | list[float], str]:
        """Return ``(final forecast in the kind's stored form, description of the steps that decided it)``
        (from :meth:`steps`)."""
        names = []
        steps = self.steps(aggregate, debate, supervisor, spec)
        for step in steps:
            if step.status != "applied":
                continue
            if step.kind == "aggregate":
                names.append("aggregate")
            elif step.kind == "debate":
                names.append(f"debate(w={step.weight})")
            elif step.kind == "supervisor":
                stated = f", stated {step.reported_confidence}" if step.reported_confidence != step.confidence else ""
                names.append(f"supervisor({step.confidence}{stated}, w={step.weight})")
            else:
                names.append(f"clip[{self.clip_low}, {self.clip_high}]")
        return steps[-1].p_after, " -> ".join(names)

    @classmethod
    def from_description(cls, described: dict[str, Any]) -> "CombinationRule":
        """The rule :meth:`describe` described (as stored in ``PipelineTrace.combination_rule``)."""
        known = {"debate_weight", "supervisor_weights", "clip_low", "clip_high"}
        return cls(**{k: v for k, v in described.items() if k in known})

    def describe(self) -> dict[str, Any]:
        """JSON-serialisable parameters, stored in the trace."""
        return {
            "rule": "aggregate -> debate blend -> supervisor by grounded confidence -> clip",
            "debate_weight": self.debate_weight,
            "supervisor_weights": dict(self.supervisor_weights),
            "clip_low": self.clip_low,
            "clip_high": self.clip_high,
        }
