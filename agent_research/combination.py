"""How the pipeline turns aggregate, debate and supervisor probabilities into one final ``p_yes``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent_research.confidence import effective_confidence
from agent_schemas import DebateArtifact, SupervisorArtifact


@dataclass(frozen=True)
class CombinationStep:
    """One step of :meth:`CombinationRule.steps`: what it did to the running probability.

    ``kind`` is ``"aggregate"``, ``"debate"``, ``"supervisor"`` or ``"clip"``; ``status`` is ``"applied"``,
    ``"ignored"`` (weight 0), ``"failed"`` or ``"not run"`` (the specialist was not run); ``value`` is the
    step's own probability (the aggregate, the debate midpoint, the supervisor's p_yes), ``weight`` its
    blend weight, ``p_after`` the running probability after the step (all probabilities in [0, 1]).
    For the supervisor, ``confidence`` is the effective (evidence-grounded) confidence that chose the
    weight and ``reported_confidence`` what the supervisor stated.
    """

    kind: str
    status: str
    p_before: float | None
    p_after: float
    value: float | None = None
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
       miss cannot dominate a log loss; set both to 0 and 1 to disable.

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
        self, aggregate_p_yes: float, debate: DebateArtifact | None, supervisor: SupervisorArtifact | None
    ) -> list[CombinationStep]:
        """Every step of the rule on these inputs, in order, with the probabilities before and after it."""
        p = aggregate_p_yes
        out = [CombinationStep("aggregate", "applied", None, p, value=aggregate_p_yes)]
        if debate is None:
            out.append(CombinationStep("debate", "not run", p, p))
        elif debate.status != "ok" or debate.p_yes is None:
            out.append(CombinationStep("debate", "failed", p, p))
        else:
            w = self.debate_weight
            new = (1 - w) * p + w * debate.p_yes if w > 0 else p
            out.append(CombinationStep("debate", "applied" if w > 0 else "ignored", p, new, value=debate.p_yes, weight=w))
            p = new
        if supervisor is None:
            out.append(CombinationStep("supervisor", "not run", p, p))
        elif supervisor.status != "ok" or supervisor.p_yes is None:
            out.append(CombinationStep("supervisor", "failed", p, p))
        else:
            confidence = effective_confidence(supervisor)
            w = self.supervisor_weights[confidence or "low"]
            new = (1 - w) * p + w * supervisor.p_yes if w > 0 else p
            out.append(CombinationStep("supervisor", "applied" if w > 0 else "ignored", p, new, value=supervisor.p_yes,
                                       weight=w, confidence=confidence, reported_confidence=supervisor.confidence))
            p = new
        clipped = min(max(p, self.clip_low), self.clip_high)
        out.append(CombinationStep("clip", "applied" if clipped != p else "ignored", p, clipped))
        return out

    def combine(
        self, aggregate_p_yes: float, debate: DebateArtifact | None, supervisor: SupervisorArtifact | None
    ) -> tuple[float, str]:
        """Return ``(final p_yes, description of the steps that decided it)`` (from :meth:`steps`)."""
        names = []
        steps = self.steps(aggregate_p_yes, debate, supervisor)
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
