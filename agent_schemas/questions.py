"""The binary forecasting question."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator


class Question(BaseModel):
    """A binary question with its information cutoff and (when resolved) its outcome.

    ``forecast_date`` is the cutoff date: no evidence published after it may reach a forecaster in a
    backtest (ForecastBench's ``forecast_due_date``).
    """

    id: str = Field(description="Unique question id, e.g. 'fb|2025-10-26|polymarket|0x12..|2025-11-30'.")
    text: str = Field(min_length=1, description="The question as asked.")
    background: str = Field("", description="Background information supplied with the question.")
    resolution_criteria: str = Field("", description="How the question resolves.")
    forecast_date: dt.date = Field(description="Forecast (cutoff) date: the last day whose information may be used.")
    resolution_date: dt.date | None = Field(None, description="Date on which the question resolves.")
    outcome: int | None = Field(None, description="1 if it resolved Yes, 0 if No, None if unresolved.")
    source: str = Field("unknown", description="Question source, e.g. 'polymarket', 'fred'.")
    source_question_id: str | None = Field(None, description="Id at the source; with `source` it is the clustering key for standard errors.")
    question_type: Literal["market", "dataset", "other"] = Field("other", description="ForecastBench question type.")
    url: str | None = Field(None, description="Link to the question at its source.")
    crowd_p_yes: float | None = Field(None, ge=0, le=1, description="Crowd / market probability of Yes at freeze, in [0, 1].")
    round: str | None = Field(None, description="Question-set round (ForecastBench forecast due date of the set).")
    horizon_days: int | None = Field(None, description="Resolution date minus forecast date, in days.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Free-form extra fields from the source file.")

    @field_validator("outcome")
    @classmethod
    def _binary_outcome(cls, v: int | None) -> int | None:
        if v is not None and v not in (0, 1):
            raise ValueError(f"outcome must be 0, 1 or None, got {v!r}")
        return v

    @model_validator(mode="after")
    def _dates_in_order(self) -> "Question":
        if self.resolution_date is not None and self.resolution_date < self.forecast_date:
            raise ValueError(
                f"resolution_date {self.resolution_date} is before forecast_date {self.forecast_date} for question {self.id!r}"
            )
        return self

    @property
    def cutoff_date(self) -> dt.date:
        """Alias of ``forecast_date``: the information cutoff of a backtest."""
        return self.forecast_date

    @property
    def cluster_id(self) -> str:
        """Clustering key ``source|source_question_id`` (falls back to the question id)."""
        return f"{self.source}|{self.source_question_id or self.id}"
