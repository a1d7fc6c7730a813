"""The multiple-choice kind: named options, exactly one of which happens; forecast as a probability per option.

Forecast vector: one probability per option, in the question's order, summing to 1 (stored as
``distribution``). Outcome: the index of the option that happened. Pools: :mod:`.pools` (linear pool,
median and log pool renormalised, extremized log pool, trimmed mean, the least-confident member). Scores:
the multi-category Brier score, the log loss, the ranked probability score for ordered options, and
Metaculus's baseline score.

Reading an answer (:meth:`MultipleChoiceKind.read_answer`): the model gives ``"probabilities"``, an object
with one integer percent per option, keyed by the option's label (matched ignoring case and repeated
spaces). Refused, never repaired: a missing option, a label that is not an option, two keys for one
option, a value that is not a percentage, and percentages whose sum is off 100 by more than
:data:`SUM_TOLERANCE` (2 points). Within that tolerance, the rounding of integer percents, the values are
divided by their sum.

What a grammar-constrained model (the embedded llama.cpp model) is held to: the answer schema
(:meth:`MultipleChoiceKind.answer_properties`) lists every option as a required property, in the question's
order, each an integer enum 0..100, and no other property, which llama.cpp's JSON-schema grammar enforces as
written (each label verbatim, quotes and non-ASCII characters included:
:func:`agent_providers.llama_sampling.schema_gbnf`). It cannot enforce that the percents add up to 100: an
answer whose sum is off is refused by the reader with a ForecastParseError, never renormalised. Measured on
SmolLM2-135M (``tests/providers/test_llama_kinds.py``; ``run --kind multiple_choice -p local/smollm2 --n 4``): it
gives every option a percent as the grammar says, but 10 of its 12 members' answers summed to 0% to 199% and were
refused this way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from agent_schemas.errors import DataValidationError, ForecastParseError
from agent_schemas.kinds.base import KindSpec, QuestionKind
from agent_schemas.kinds.cells import bad_cell, cell_bool, cell_options
from agent_schemas.kinds.multiple_choice import plots, pools, scores
from agent_schemas.kinds.multiple_choice.spec import ChoiceSpec
from agent_schemas.kinds.values import parse_probability, percent_schema
from agent_schemas.probabilities import check_probabilities

__all__ = ["FIELD", "MULTIPLE_CHOICE", "MultipleChoiceKind", "SUM_TOLERANCE", "ChoiceSpec"]

#: The answer's field: an object of integer percents keyed by option label.
FIELD = "probabilities"
#: How far the stated probabilities may sum from 1 (the rounding of integer percents over a few options);
#: beyond it the answer is refused.
SUM_TOLERANCE = 0.02
#: How far a stored forecast may sum from 1 (float rounding only).
STORED_SUM_TOLERANCE = 1e-6


def _label_key(label: str) -> str:
    return " ".join(str(label).split()).casefold()


class MultipleChoiceKind(QuestionKind):
    """The multiple-choice kind (see the module docstring)."""

    name: ClassVar[str] = "multiple_choice"
    label: ClassVar[str] = "multiple-choice"
    spec_type: ClassVar[type[KindSpec]] = ChoiceSpec
    pools: ClassVar[Mapping[str, Any]] = pools.POOLS
    default_methods: ClassVar[tuple[str, ...]] = ("mean", "median", "log_pool", "extremized", "trimmed_mean",
                                                  "least_confident")
    scores: ClassVar[Mapping[str, str]] = {
        "brier": "multi-category Brier score, sum over options of (p_k - o_k)^2, in [0, 2] (Brier 1950)",
        "log_loss": "negative log of the probability given to the option that happened, in nats",
        "rps": "ranked probability score of ordered options, mean over the K-1 cumulative splits (Epstein 1969); "
               "NaN for unordered options",
        "baseline_score": "Metaculus's baseline score, 100 * ln(K q) / ln K, q the probability of the outcome",
    }
    higher_is_better: ClassVar[frozenset[str]] = frozenset({"baseline_score"})
    primary_score: ClassVar[str] = "brier"

    # --- the question ---------------------------------------------------------------------------------
    def check_outcome(self, spec: KindSpec, outcome: Any) -> int:
        k = len(spec.options)
        if isinstance(outcome, bool) or not isinstance(outcome, (int, float, np.integer, np.floating)) \
                or not float(outcome).is_integer() or not 0 <= int(outcome) < k:
            raise ValueError(f"outcome of a multiple-choice question is the index of the option that happened "
                             f"(0 to {k - 1}), got {outcome!r}")
        return int(outcome)

    spec_columns: ClassVar[tuple[str, ...]] = ("options", "ordered")
    uninformed_note: ClassVar[str] = "equal probability on every option"

    def spec_from_cells(self, cells: Mapping[str, Any]) -> ChoiceSpec:
        """``options`` (labels separated by ``|``, or a JSON array) and ``ordered`` (true/false, default false)."""
        options = cell_options(cells, "options")
        ordered = cell_bool(cells, "ordered")
        try:
            return ChoiceSpec(options=options, ordered=ordered)
        except ValueError as exc:
            raise bad_cell("options", cells.get("options"), _first_error(exc)) from None

    def outcome_from_cell(self, spec: KindSpec, value: Any) -> int:
        """The label of the option that happened (matched ignoring case and repeated spaces)."""
        index = {_label_key(label): i for i, label in enumerate(spec.options)}
        i = index.get(_label_key(value))
        if i is None:
            raise bad_cell("outcome", value, f"the outcome is not an option of the question (options: {', '.join(spec.options)})")
        return i

    def worst_case(self, spec: KindSpec, outcome: int | float) -> np.ndarray:
        """All probability on the option farthest (in the question's order) from the one that happened."""
        k = len(spec.options)
        out = np.zeros(k)
        out[0 if int(outcome) >= k / 2 else k - 1] = 1.0
        return out

    def question_lines(self, spec: KindSpec) -> list[str]:
        head = "Options (exactly one will happen" + ("; they are in order" if spec.ordered else "") + "):"
        return [head, *(f"- {label}" for label in spec.options)]

    def outcome_text(self, spec: KindSpec, outcome: int | float) -> str:
        return spec.options[int(outcome)]

    # --- the forecast form ----------------------------------------------------------------------------
    def size(self, spec: KindSpec) -> int:
        return len(spec.options)

    def check_forecast(self, spec: KindSpec, values: Any, *, name: str = "forecast") -> np.ndarray:
        arr = check_probabilities(values, name, ndim=1)
        k = len(spec.options)
        if arr.shape != (k,):
            raise DataValidationError(f"{name} needs one probability per option ({k}); got {arr.shape[0]}",
                                      field=name, value=arr.shape[0])
        total = float(arr.sum())
        if abs(total - 1.0) > STORED_SUM_TOLERANCE:
            raise DataValidationError(f"{name}'s probabilities sum to {total:.6g}, not 1", field=name, value=total)
        return arr

    def uninformed(self, spec: KindSpec) -> np.ndarray:
        k = len(spec.options)
        return np.full(k, 1.0 / k)

    def forecast_text(self, spec: KindSpec, forecast: np.ndarray | None) -> str:
        if forecast is None:
            return "failed"
        order = np.argsort(-np.asarray(forecast), kind="stable")
        shown = [f"{spec.options[i]} {100 * forecast[i]:.0f}%" for i in order[:5]]
        rest = float(np.sum(np.asarray(forecast)[order[5:]]))
        return ", ".join(shown) + (f", {len(order) - 5} others {100 * rest:.0f}%" if len(order) > 5 else "")

    # --- answers ----------------------------------------------------------------------------------------
    def answer_properties(self, spec: KindSpec) -> dict[str, dict[str, Any]]:
        return {FIELD: {
            "type": "object",
            "description": "The probability of each option as an integer percent; the percents add up to 100.",
            "properties": {label: percent_schema(f"Probability of '{label}', an integer percent.") for label in spec.options},
            "required": list(spec.options),
        }}

    def answer_template(self, spec: KindSpec) -> str:
        return f'"{FIELD}": {{"<option>": <integer 0-100>, ... one per option, adding up to 100}}'

    def answer_request(self, spec: KindSpec, *, short: bool = False) -> str:
        phrase = "probability of each option as an integer percent (one per option, adding up to 100)"
        return phrase if short else f"the {phrase}"

    def debate_claim(self, spec: KindSpec, side: str, estimate: np.ndarray | None) -> str:
        if estimate is None:
            return f"the leading option is {'MORE' if side == 'bull' else 'LESS'} likely than the current estimate says"
        top = int(np.argmax(estimate))
        return (f"{spec.options[top]!r}, the estimate's leading option, is {'MORE' if side == 'bull' else 'LESS'} "
                f"likely than the current estimate's {100 * float(estimate[top]):.0f}%")

    def answer_of(self, spec: KindSpec, forecast: np.ndarray) -> dict[str, Any]:
        return {FIELD: dict(zip(spec.options, integer_percents(forecast)))}

    def read_answer(self, spec: KindSpec, obj: Mapping[str, Any], *, raw_text: str = "") -> np.ndarray | None:
        given = obj.get(FIELD)
        if given is None:
            return None

        def fail(why: str, field: str = FIELD, value: Any = given) -> ForecastParseError:
            return ForecastParseError(why, raw_text=raw_text, field=field, value=value)

        if not isinstance(given, Mapping):
            raise fail(f"{FIELD} must be an object of option: percent, got {type(given).__name__}")
        index = {_label_key(label): i for i, label in enumerate(spec.options)}
        p = np.full(len(spec.options), np.nan)
        for key, value in given.items():
            i = index.get(_label_key(key))
            if i is None:
                raise fail(f"{key!r} is not an option of the question (options: {', '.join(spec.options)})",
                           field=f"{FIELD}.{key}", value=key)
            if not np.isnan(p[i]):
                raise fail(f"option {spec.options[i]!r} is given twice", field=f"{FIELD}.{key}", value=value)
            p[i] = parse_probability(value, field=f"{FIELD}.{spec.options[i]}", raw_text=raw_text, percent=True)
        missing = [spec.options[i] for i in np.flatnonzero(np.isnan(p))]
        if missing:
            raise fail(f"the answer gives no probability for {len(missing)} option(s): {', '.join(missing)}",
                       value=missing)
        total = float(p.sum())
        if abs(total - 1.0) > SUM_TOLERANCE:
            raise fail(f"the probabilities add up to {100 * total:.4g}%, not 100% (tolerance {100 * SUM_TOLERANCE:.0f} "
                       "points): refusing to renormalise", value=round(100 * total, 6))
        return p / total

    # --- scoring -------------------------------------------------------------------------------------
    def score(self, specs: Sequence[KindSpec], forecasts: Any, outcomes: Any) -> dict[str, np.ndarray]:
        p, o = scores.checked(forecasts, outcomes)
        ordered = np.array([s.ordered for s in specs], dtype=bool)
        if ordered.shape != o.shape:
            raise DataValidationError(f"specs must give one spec per question ({o.shape[0]}); got {ordered.shape[0]}",
                                      field="specs", value=ordered.shape[0])
        rps = np.full(o.shape[0], np.nan)
        if ordered.any():
            rps[ordered] = scores.rps(p[ordered], o[ordered])
        return {
            "brier": scores.brier(p, o),
            "log_loss": scores.log_loss(p, o),
            "rps": rps,
            "baseline_score": scores.baseline_score(p, o),
        }

    def outcome_log_probability(self, specs: Sequence[KindSpec], forecasts: Any, outcomes: Any) -> np.ndarray:
        p, o = scores.checked(forecasts, outcomes)
        return -scores.log_loss(p, o)

    def diagnostics(self, specs: Sequence[KindSpec], forecasts: Any, outcomes: Any) -> dict[str, np.ndarray]:
        p, o = scores.checked(forecasts, outcomes)
        return {"top_p": p.max(axis=1), "top_hit": (np.argmax(p, axis=1) == o).astype(np.float64)}


    # --- figures ------------------------------------------------------------------------------------
    calibration_caption: ClassVar[str] = (
        "Top-label reliability (Guo et al. 2017): the probability of each forecast's most likely option, in "
        "10 bins, against how often that option happened; on the dashed diagonal a forecaster is calibrated, "
        "below it over-confident.")

    def plot_forecasts(self, ax: Any, spec: KindSpec, forecasts: Mapping[str, np.ndarray], outcome: int | float | None,
                       *, members: Mapping[str, np.ndarray] | None = None) -> None:
        plots.plot_forecasts(ax, spec.options, forecasts, None if outcome is None else int(outcome), members)

    def plot_calibration(self, ax: Any, diagnostics: Mapping[str, Mapping[str, np.ndarray]]) -> None:
        plots.plot_calibration(ax, diagnostics)


def _first_error(exc: ValueError) -> str:
    """The message of a pydantic validation error's first error (else the exception's text)."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        msg = str(errors()[0].get("msg", exc))
        return msg.removeprefix("Value error, ")
    return str(exc)


def integer_percents(p: np.ndarray) -> list[int]:
    """Probabilities as integer percents summing to exactly 100, by the largest-remainder method (Hamilton's):
    floors first, then one point each to the options with the largest remainders (ties: the first)."""
    x = 100 * np.asarray(p, dtype=float) / float(np.sum(p))
    base = np.floor(x).astype(int)
    order = np.argsort(-(x - base), kind="stable")
    base[order[: 100 - int(base.sum())]] += 1
    return base.tolist()


MULTIPLE_CHOICE = MultipleChoiceKind()
