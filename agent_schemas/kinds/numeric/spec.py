"""What a numeric question states: the range of its answer, whether each bound is open, its unit and scale."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, model_validator

from agent_schemas.kinds.base import KindSpec

__all__ = ["NumericSpec"]


class NumericSpec(KindSpec):
    """The range, bounds, unit and scale of a numeric question.

    A **closed** bound means the outcome cannot lie beyond it (a count cannot be negative); an **open** bound
    means it can, and a forecast gives some probability to the outcome lying beyond it (Metaculus's convention).
    ``log_scale`` places the forecast grid evenly in log space (``lower`` must then be > 0).
    """

    kind: Literal["numeric"] = "numeric"
    lower: float = Field(description="Lower end of the range, in the question's unit.")
    upper: float = Field(description="Upper end of the range, in the question's unit (> lower).")
    open_lower: bool = Field(False, description="True when the outcome may lie below `lower`.")
    open_upper: bool = Field(False, description="True when the outcome may lie above `upper`.")
    unit: str = Field("", description="Unit of the value, as the question states it (e.g. 'USD', 'admissions').")
    log_scale: bool = Field(False, description="True for a range evenly spaced in log space (lower > 0).")

    @model_validator(mode="after")
    def _range(self) -> "NumericSpec":
        if not (math.isfinite(self.lower) and math.isfinite(self.upper)):
            raise ValueError(f"the range must be finite, got [{self.lower}, {self.upper}]")
        if not self.lower < self.upper:
            raise ValueError(f"lower must be below upper, got [{self.lower}, {self.upper}]")
        if self.log_scale and self.lower <= 0:
            raise ValueError(f"a log-scaled range needs lower > 0, got {self.lower}")
        return self
