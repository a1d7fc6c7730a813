"""The binary kind: a question that resolves Yes or No, forecast as ``p_yes``.

Forecast vector: ``[p_yes]`` (size 1), stored on records and artifacts as ``p_yes`` (the field's standard
term), never as a distribution. Outcome: 1 for Yes, 0 for No. Pools: :mod:`agent_schemas.kinds.binary.pools`
(mean, median, min, max, trimmed mean, geometric mean of odds, extremized). Scores: the Brier score and the
log loss (both losses), and Metaculus's baseline score (higher is better).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

import numpy as np

from agent_schemas.errors import DataValidationError, ForecastParseError
from agent_schemas.kinds.base import KindSpec, QuestionKind
from agent_schemas.kinds.binary.pools import AGGREGATORS
from agent_schemas.kinds.binary import rules
from agent_schemas.kinds.values import parse_probability, probability_schema
from agent_schemas.probabilities import check_probabilities

__all__ = ["BINARY", "BinaryKind", "BinarySpec"]

#: Field of the answer schema (an integer percent, which llama.cpp's grammar enforces), and the fraction field
#: also accepted from models that write one.
PERCENT_FIELD = "p_yes_percent"
FRACTION_FIELD = "p_yes"


class BinarySpec(KindSpec):
    """A binary question states nothing beyond its text, background and resolution criteria."""

    kind: Literal["binary"] = "binary"


def _pool(name: str):
    rule = AGGREGATORS[name]

    def pool(stack: np.ndarray) -> np.ndarray:
        return rule(stack[:, :, 0])[:, None]

    pool.__doc__ = f"The binary pool {name!r} (:data:`agent_schemas.kinds.binary.pools.AGGREGATORS`) on a stack."
    return pool


class BinaryKind(QuestionKind):
    """The binary kind (see the module docstring)."""

    name: ClassVar[str] = "binary"
    label: ClassVar[str] = "binary"
    spec_type: ClassVar[type[KindSpec]] = BinarySpec
    pools: ClassVar[Mapping[str, Any]] = {name: _pool(name) for name in AGGREGATORS}
    default_methods: ClassVar[tuple[str, ...]] = ("mean", "median", "min", "geomean_odds", "extremized")
    scores: ClassVar[Mapping[str, str]] = {
        "brier": "Brier score (p - o)^2 (Brier 1950)",
        "log_loss": "negative log-likelihood of the outcome, in nats",
        "baseline_score": "Metaculus's baseline score, 100 * (log2 q + 1), q the probability of the outcome",
    }
    higher_is_better: ClassVar[frozenset[str]] = frozenset({"baseline_score"})
    primary_score: ClassVar[str] = "brier"

    def check_outcome(self, spec: KindSpec, outcome: Any) -> int:
        if isinstance(outcome, bool) or outcome not in (0, 1):
            raise ValueError(f"outcome must be 0, 1 or None, got {outcome!r}")
        return int(outcome)

    def question_lines(self, spec: KindSpec) -> list[str]:
        return []

    def outcome_from_cell(self, spec: KindSpec, value: Any) -> int:
        """``1``/``0`` (also ``1.0``), ``yes``/``no``, ``true``/``false`` (any case)."""
        v = value
        if isinstance(v, str):
            text = v.strip().lower()
            if text in ("true", "yes"):
                return 1
            if text in ("false", "no"):
                return 0
            try:
                v = float(text)
            except ValueError:
                v = None
        if isinstance(v, (bool, np.bool_)):
            return int(v)
        if isinstance(v, (int, float, np.integer, np.floating)) and float(v) in (0.0, 1.0):
            return int(v)
        raise DataValidationError("outcome must be 0 or 1 (or yes/no, true/false)", field="outcome", value=value)

    uninformed_name: ClassVar[str] = "always_0.5"
    uninformed_note: ClassVar[str] = "constant 0.5"
    forecastbench_baselines: ClassVar[bool] = True

    def crowd(self, question: Any) -> np.ndarray | None:
        """``[question.crowd_p_yes]`` (the market or community probability at freeze), or None."""
        p = getattr(question, "crowd_p_yes", None)
        return None if p is None else np.array([float(p)])

    def worst_case(self, spec: KindSpec, outcome: int | float) -> np.ndarray:
        return np.array([1.0 - float(outcome)])

    def outcome_text(self, spec: KindSpec, outcome: int | float) -> str:
        return "Yes" if int(outcome) == 1 else "No"

    def size(self, spec: KindSpec) -> int:
        return 1

    def check_forecast(self, spec: KindSpec, values: Any, *, name: str = "forecast") -> np.ndarray:
        arr = np.atleast_1d(check_probabilities(values, name))
        if arr.shape != (1,):
            raise DataValidationError(f"{name} of a binary question is one p_yes; got {arr.shape[0]} values",
                                      field=name, value=arr.shape[0])
        return arr

    def uninformed(self, spec: KindSpec) -> np.ndarray:
        return np.array([0.5])

    def forecast_text(self, spec: KindSpec, forecast: np.ndarray | None) -> str:
        return "p_yes failed" if forecast is None else f"p_yes {100 * float(forecast[0]):.0f}%"

    def answer_properties(self, spec: KindSpec) -> dict[str, dict[str, Any]]:
        return probability_schema(PERCENT_FIELD)

    def answer_template(self, spec: KindSpec) -> str:
        return f'"{PERCENT_FIELD}": <integer 0-100>'

    def answer_request(self, spec: KindSpec, *, short: bool = False) -> str:
        phrase = "probability that the question resolves Yes as an integer percent"
        return phrase if short else f"the {phrase} from 0 to 100"

    forecast_word: ClassVar[str] = "probability"

    def estimate_text(self, spec: KindSpec, forecast: np.ndarray | None) -> str:
        return f" p_yes: {'unknown' if forecast is None else f'{100 * float(forecast[0]):.0f}%'}"

    def debate_claim(self, spec: KindSpec, side: str, estimate: np.ndarray | None) -> str:
        return f"the probability of Yes is {'HIGHER' if side == 'bull' else 'LOWER'} than the current estimate"

    def answer_keys(self, spec: KindSpec) -> tuple[str, ...]:
        return (FRACTION_FIELD, PERCENT_FIELD)

    def answer_of(self, spec: KindSpec, forecast: np.ndarray) -> dict[str, Any]:
        return {PERCENT_FIELD: int(round(100 * float(forecast[0])))}

    def read_answer(self, spec: KindSpec, obj: Mapping[str, Any], *, raw_text: str = "") -> np.ndarray | None:
        values = [parse_probability(obj[f], field=f, raw_text=raw_text) for f in (FRACTION_FIELD, PERCENT_FIELD)
                  if obj.get(f) is not None]
        if not values:
            return None
        if max(values) - min(values) > 0.005:
            raise ForecastParseError(
                f"the answer gives {len(values)} different probabilities ({', '.join(f'{v:g}' for v in values)}): "
                "refusing to pick one", raw_text=raw_text, field=FRACTION_FIELD, value=values)
        return np.array([values[-1]])

    stored_field: ClassVar[str] = "p_yes"

    def value(self, forecast: np.ndarray | None) -> float | None:
        return None if forecast is None else float(forecast[0])

    def clip(self, spec: KindSpec, forecast: np.ndarray, low: float, high: float) -> np.ndarray:
        return np.clip(np.asarray(forecast, dtype=np.float64), low, high)

    def score(self, specs: Sequence[KindSpec], forecasts: Any, outcomes: Any) -> dict[str, np.ndarray]:
        p = check_probabilities(forecasts, "forecasts", ndim=2, shape="(n_questions, 1)")[:, 0]
        o = np.asarray(outcomes, dtype=np.float64)
        return {"brier": rules.brier(p, o), "log_loss": rules.log_loss(p, o), "baseline_score": rules.baseline_score(p, o)}

    def outcome_log_probability(self, specs: Sequence[KindSpec], forecasts: Any, outcomes: Any) -> np.ndarray:
        p = check_probabilities(forecasts, "forecasts", ndim=2, shape="(n_questions, 1)")[:, 0]
        return -rules.log_loss(p, np.asarray(outcomes, dtype=np.float64))


    def diagnostics(self, specs: Sequence[KindSpec], forecasts: Any, outcomes: Any) -> dict[str, np.ndarray]:
        p = check_probabilities(forecasts, "forecasts", ndim=2, shape="(n_questions, 1)")[:, 0]
        return {"p_yes": p, "outcome": np.asarray(outcomes, dtype=np.float64)}

    # --- figures ------------------------------------------------------------------------------------
    calibration_caption: ClassVar[str] = (
        "Reliability diagram: observed frequency of Yes against the mean p_yes of each of 10 bins; on the "
        "dashed diagonal a forecaster is calibrated.")

    def plot_forecasts(self, ax: Any, spec: KindSpec, forecasts: Mapping[str, np.ndarray], outcome: int | float | None,
                       *, members: Mapping[str, np.ndarray] | None = None) -> None:
        """One bar of p_yes (%) per label, each member's p_yes a thin grey dotted vertical line."""
        labels = [str(k) for k in forecasts]
        y = np.arange(len(labels))
        ax.barh(y, [100 * float(v[0]) for v in forecasts.values()], color="C0")
        for v in (members or {}).values():
            ax.axvline(100 * float(v[0]), color="0.6", linestyle=":", linewidth=0.8)
        ax.set_yticks(y, labels=labels)
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.set_xlabel("p_yes (%)" + ("" if outcome is None else f"; resolved {self.outcome_text(spec, outcome)}"))
        if outcome is not None:
            ax.axvline(100 * int(outcome), color="0.3", linestyle="--", linewidth=1)

    def plot_calibration(self, ax: Any, diagnostics: Mapping[str, Mapping[str, np.ndarray]]) -> None:
        """Reliability diagram: observed frequency of Yes against mean p_yes in 10 equal-width bins."""
        ax.plot([0, 1], [0, 1], linestyle="--", color="0.6", linewidth=1)
        for label, d in diagnostics.items():
            p, o = np.asarray(d["p_yes"]), np.asarray(d["outcome"])
            idx = np.minimum((p * 10).astype(int), 9)
            count = np.bincount(idx, minlength=10)
            keep = count > 0
            ax.plot(np.bincount(idx, weights=p, minlength=10)[keep] / count[keep],
                    np.bincount(idx, weights=o, minlength=10)[keep] / count[keep], marker="o", label=str(label))
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("mean p_yes in bin")
        ax.set_ylabel("observed frequency of Yes")
        ax.legend(fontsize="small")


BINARY = BinaryKind()
