"""How the pipeline turns aggregate, debate and supervisor probabilities into one final ``p_yes``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent_schemas import DebateArtifact, SupervisorArtifact


@dataclass(frozen=True)
class CombinationRule:
    """A documented, configurable rule for the final probability.

    Steps (each skipped when its artifact is missing or failed):

    1. ``p = aggregate`` (the ensemble aggregate).
    2. Debate: ``p = (1 - debate_weight) * p + debate_weight * p_debate`` where ``p_debate`` is the
       midpoint of the final bull and bear probabilities.
    3. Supervisor: ``p = (1 - w) * p + w * p_supervisor`` with ``w = supervisor_weights[confidence]``;
       by default the supervisor replaces the estimate at high confidence (w=1), blends at medium
       (w=0.5) and is ignored at low confidence (w=0).
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

    def combine(
        self, aggregate_p_yes: float, debate: DebateArtifact | None, supervisor: SupervisorArtifact | None
    ) -> tuple[float, str]:
        """Return ``(final p_yes, description of the steps that decided it)``."""
        p, steps = aggregate_p_yes, ["aggregate"]
        if debate is not None and debate.status == "ok" and debate.p_yes is not None and self.debate_weight > 0:
            p = (1 - self.debate_weight) * p + self.debate_weight * debate.p_yes
            steps.append(f"debate(w={self.debate_weight})")
        if supervisor is not None and supervisor.status == "ok" and supervisor.p_yes is not None:
            w = self.supervisor_weights[supervisor.confidence or "low"]
            if w > 0:
                p = (1 - w) * p + w * supervisor.p_yes
                steps.append(f"supervisor({supervisor.confidence}, w={w})")
        clipped = min(max(p, self.clip_low), self.clip_high)
        if clipped != p:
            steps.append(f"clip[{self.clip_low}, {self.clip_high}]")
        return clipped, " -> ".join(steps)

    def describe(self) -> dict[str, Any]:
        """JSON-serialisable parameters, stored in the trace."""
        return {
            "rule": "aggregate -> debate blend -> supervisor by confidence -> clip",
            "debate_weight": self.debate_weight,
            "supervisor_weights": dict(self.supervisor_weights),
            "clip_low": self.clip_low,
            "clip_high": self.clip_high,
        }
