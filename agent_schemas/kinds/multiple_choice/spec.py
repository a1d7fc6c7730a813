"""What a multiple-choice question states: its options (mutually exclusive and exhaustive), and whether they
are in a natural order."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from agent_schemas.kinds.base import KindSpec

__all__ = ["ChoiceSpec", "MAX_OPTIONS"]

#: Most options a question may have (a prompt lists each, and an answer gives a percent for each).
MAX_OPTIONS = 30


class ChoiceSpec(KindSpec):
    """The options of a multiple-choice question.

    Exactly one option happens (mutually exclusive and exhaustive); the outcome is the index of that option
    in ``options``. ``ordered`` marks options with a natural order (``large decrease ... large increase``),
    for which the ranked probability score applies.
    """

    kind: Literal["multiple_choice"] = "multiple_choice"
    options: tuple[str, ...] = Field(description="Option labels, in the question's order (2 to 30, unique).")
    ordered: bool = Field(False, description="True when the options have a natural order (RPS applies).")

    @field_validator("options")
    @classmethod
    def _distinct_labels(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        labels = tuple(" ".join(str(o).split()) for o in v)
        if not 2 <= len(labels) <= MAX_OPTIONS:
            raise ValueError(f"a multiple-choice question needs 2 to {MAX_OPTIONS} options, got {len(labels)}")
        empty = [i for i, o in enumerate(labels) if not o]
        if empty:
            raise ValueError(f"option {empty[0]} is empty")
        seen: dict[str, int] = {}
        for i, o in enumerate(labels):
            key = o.casefold()
            if key in seen:
                raise ValueError(f"options {seen[key]} and {i} are the same label {o!r}")
            seen[key] = i
        return labels
