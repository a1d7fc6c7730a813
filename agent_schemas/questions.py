"""The forecasting question (of any kind: binary, multiple choice, numeric), and the part of it a forecaster may see.

Two models keep hindsight out of prompts by construction:

* :class:`Question` is the harness's record: everything known about the question, including what was
  only learned after the forecast date (``outcome``, the actual ``resolution_date``, ``horizon_days``
  derived from it). Loaders, baselines and scorers use it.
* :class:`VisibleQuestion` is what agents receive (:meth:`Question.visible`): the text, background,
  criteria, its kind's spec (options; range, bounds and unit), forecast date, the close/resolution date
  *fixed in advance* by the source (``scheduled_close_date``), source, URL, and the value observed at
  freeze. The crowd / market
  probability at freeze is included only when a run asks for it (``show_crowd``). Every prompt is built
  from a VisibleQuestion, so nothing the scorer holds back can reach a model.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agent_schemas.kinds import AnySpec, BinarySpec, QuestionKind, kind_of

#: What a run caps a question's searches at (``run --evidence-cutoff``): ``"forecast"``, the forecast date (every
#: run before the option), or ``"freeze"``, the question's freeze date (:meth:`Question.freeze_date`), the day the
#: crowd's price was taken, 6-10 days earlier for ForecastBench questions, so members and crowd know the same days.
EvidenceCutoff = Literal["forecast", "freeze"]
#: The values of :data:`EvidenceCutoff`, the default first.
EVIDENCE_CUTOFFS: tuple[str, ...] = get_args(EvidenceCutoff)
#: The evidence cutoff of a run that names none: the forecast date.
DEFAULT_EVIDENCE_CUTOFF: str = EVIDENCE_CUTOFFS[0]


class QuestionFacts(BaseModel):
    """The facts fixed when a question is asked: shared by :class:`Question` (the harness's record) and
    :class:`VisibleQuestion` (what a forecaster sees). Nothing here is known only after the forecast date."""

    id: str = Field(description=(
        "Question id, e.g. 'fb|2025-10-26|polymarket|0x12..|2025-11-30'. A bookkeeping key: no prompt renders "
        "it (bundled ids end with the actual resolution date)."))
    text: str = Field(min_length=1, description="The question as asked.")
    background: str = Field("", description="Background information supplied with the question.")
    resolution_criteria: str = Field("", description="How the question resolves.")
    forecast_date: dt.date = Field(description="Forecast (cutoff) date: the last day whose information may be used.")
    scheduled_close_date: dt.date | None = Field(
        None,
        description=(
            "Close or resolution date fixed in advance by the source and known on the forecast date (a "
            "market's scheduled close; a dataset question's resolution date); None when the source fixes none."
        ),
    )
    source: str = Field("unknown", description="Question source, e.g. 'polymarket', 'fred'.")
    question_type: Literal["market", "dataset", "other"] = Field("other", description="ForecastBench question type.")
    url: str | None = Field(None, description="Link to the question at its source.")
    spec: AnySpec = Field(
        default_factory=BinarySpec,
        description="What the question's kind states beyond its text: nothing for binary; the options of a "
                    "multiple-choice question; the range, bounds, unit and scale of a numeric one (agent_schemas.kinds).")

    @property
    def kind(self) -> QuestionKind:
        """The question's kind (:mod:`agent_schemas.kinds`): its answer schema, pools and scores."""
        return kind_of(self.spec)

    @property
    def cutoff_date(self) -> dt.date:
        """Alias of ``forecast_date``: the information cutoff of a backtest."""
        return self.forecast_date

    def search_cutoff(self, cutoff_date: dt.date | None = None) -> dt.date:
        """The date this question's searches are capped at: ``cutoff_date`` (a run's evidence cap, e.g.
        :meth:`Question.evidence_cutoff_date`) or, without one, the forecast date. The one rule every agent that
        searches (members, supervisor) applies; the prompt still states the forecast date.

        Raises
        ------
        ValueError
            For a ``cutoff_date`` after the forecast date (evidence the forecaster could not have had: it would leak).
        """
        cutoff = cutoff_date or self.forecast_date
        if cutoff > self.forecast_date:
            raise ValueError(f"cutoff_date {cutoff} is after the question's forecast_date {self.forecast_date}: that would leak")
        return cutoff


class Question(QuestionFacts):
    """A question with its information cutoff and (when resolved) its outcome: the harness's record.

    ``forecast_date`` is the cutoff date: no evidence published after it may reach a forecaster in a
    backtest (ForecastBench's ``forecast_due_date``). The fields below the shared :class:`QuestionFacts`
    include what is only known afterwards; agents get :meth:`visible` instead.
    """

    resolution_date: dt.date | None = Field(
        None,
        description=(
            "Date on which the question actually resolved (a market can resolve before its scheduled close). "
            "Held back from forecasters: it is known only after the fact."
        ),
    )
    outcome: int | float | None = Field(
        None, description="None if unresolved; else as the kind stores it: binary 1 (Yes) or 0 (No); multiple choice "
                          "the index of the option that happened; numeric the value, in the question's unit.")
    source_question_id: str | None = Field(None, description="Id at the source; with `source` it is the clustering key for standard errors.")
    crowd_p_yes: float | None = Field(None, ge=0, le=1, description="Crowd / market probability of Yes at freeze, in [0, 1].")
    crowd_forecast: list[float] | None = Field(
        None, description="The crowd's forecast at freeze of a non-binary question, in its kind's form (a probability "
                          "per option of a multiple-choice question, e.g. its sibling markets' prices).")
    round: str | None = Field(None, description="Question-set round (ForecastBench forecast due date of the set).")
    horizon_days: int | None = Field(
        None, description="Actual resolution date minus forecast date, in days (held back from forecasters)."
    )
    metadata: dict[str, Any] = Field(default_factory=dict, description="Free-form extra fields from the source file.")

    @model_validator(mode="after")
    def _kind_values(self) -> "Question":
        if self.outcome is not None:
            self.outcome = self.kind.check_outcome(self.spec, self.outcome)
        if self.crowd_forecast is not None:
            self.crowd_forecast = self.kind.check_forecast(self.spec, self.crowd_forecast, name="crowd_forecast").tolist()
        return self

    @model_validator(mode="after")
    def _dates_in_order(self) -> "Question":
        if self.resolution_date is not None and self.resolution_date < self.forecast_date:
            raise ValueError(
                f"resolution_date {self.resolution_date} is before forecast_date {self.forecast_date} for question {self.id!r}"
            )
        return self

    @property
    def cluster_id(self) -> str:
        """Clustering key ``source|source_question_id`` (falls back to the question id)."""
        return f"{self.source}|{self.source_question_id or self.id}"

    def freeze_date(self) -> dt.date | None:
        """The UTC date of the question's freeze (ForecastBench ``freeze_datetime`` in ``metadata``).

        Returns
        -------
        datetime.date or None
            None when the metadata holds no valid freeze date or the freeze falls after the forecast
            date (not knowable on the forecast date).
        """
        raw = self.metadata.get("freeze_datetime")
        if not raw:
            return None
        from agent_schemas.dates import utc_date  # noqa: PLC0415

        try:
            freeze = utc_date(raw, field="freeze_datetime")
        except ValueError:
            return None
        return None if freeze > self.forecast_date else freeze

    def evidence_cutoff_date(self, evidence_cutoff: EvidenceCutoff = DEFAULT_EVIDENCE_CUTOFF) -> dt.date:
        """The date a run with ``--evidence-cutoff evidence_cutoff`` caps this question's searches at: the
        forecast date (``"forecast"``) or the freeze date (``"freeze"``, :meth:`freeze_date`), on or before the
        forecast date either way (pass it to ``ForecastPipeline.arun(..., cutoff_date=...)``).

        Raises
        ------
        ValueError
            With ``"freeze"`` for a question without a freeze date (naming the question and the metadata value),
            or for an unknown setting.
        """
        if evidence_cutoff == DEFAULT_EVIDENCE_CUTOFF:
            return self.forecast_date
        if evidence_cutoff != "freeze":
            raise ValueError(f"evidence cutoff {evidence_cutoff!r} is not one of {', '.join(EVIDENCE_CUTOFFS)}")
        freeze = self.freeze_date()
        if freeze is None:
            raw = self.metadata.get("freeze_datetime")
            why = ("has no freeze_datetime" if not raw else
                   f"has freeze_datetime {raw!r}, which is not a date on or before its forecast date {self.forecast_date}")
            raise ValueError(f"question {self.id!r} {why}: --evidence-cutoff freeze caps its searches at the freeze date")
        return freeze

    def visible(self, *, show_crowd: bool = False) -> "VisibleQuestion":
        """The part of this question a forecaster may see on its forecast date.

        Parameters
        ----------
        show_crowd : bool, default False
            Include the crowd / market probability at freeze (``crowd_p_yes``; for market questions
            the freeze value is that probability). Off by default: a benchmark that shows the crowd
            measures how well models read it, not how well they forecast.

        Returns
        -------
        VisibleQuestion
            Never carries ``outcome``, the actual ``resolution_date`` or ``horizon_days``. The value
            observed at freeze of a non-market question (a dataset series' last value) is data, not a
            forecast, and is always included when known.
        """
        meta = self.metadata
        freeze_date = self.freeze_date()
        freeze_value = freeze_explanation = None
        crowd = self.crowd_p_yes if show_crowd else None
        crowd_forecast = self.crowd_forecast if show_crowd else None
        if self.question_type != "market" and self.crowd_p_yes is None and freeze_date is not None:
            raw = meta.get("freeze_value_raw")
            if raw not in (None, ""):
                freeze_value = str(raw)
                freeze_explanation = meta.get("freeze_value_explanation") or None
        return VisibleQuestion(
            **{name: getattr(self, name) for name in QuestionFacts.model_fields},  # the facts, and nothing else
            crowd_p_yes=crowd,
            crowd_forecast=crowd_forecast,
            freeze_date=freeze_date if (crowd is not None or crowd_forecast is not None or freeze_value is not None) else None,
            freeze_value=freeze_value,
            freeze_value_explanation=freeze_explanation,
        )


class VisibleQuestion(QuestionFacts):
    """What a forecaster may see of a question on its forecast date (see the module docstring): the
    :class:`QuestionFacts` and the values observed at freeze.

    Built by :meth:`Question.visible`; agents, prompts and pipeline traces only ever hold this view.
    The harness's leakage audit checks the prompts actually sent for hindsight.
    """

    model_config = ConfigDict(frozen=True)

    crowd_p_yes: float | None = Field(
        None, ge=0, le=1, description="Crowd / market probability of Yes at freeze, in [0, 1]; only when the run shows it."
    )
    crowd_forecast: list[float] | None = Field(
        None, description="The crowd's forecast at freeze of a non-binary question, in its kind's form; only when the run shows it.")
    freeze_date: dt.date | None = Field(None, description="UTC date on which the freeze value was observed (before the forecast date).")
    freeze_value: str | None = Field(None, description="Last observed value of a dataset series at freeze (data, not a forecast).")
    freeze_value_explanation: str | None = Field(None, description="What the freeze value measures.")

    @property
    def days_to_scheduled_close(self) -> int | None:
        """Scheduled close date minus forecast date, in days (None when no date is fixed in advance)."""
        return None if self.scheduled_close_date is None else (self.scheduled_close_date - self.forecast_date).days


def as_visible(question: "Question | VisibleQuestion") -> VisibleQuestion:
    """``question`` as agents may see it: a :class:`VisibleQuestion` as is, a :class:`Question` through
    :meth:`Question.visible` (no crowd value). Every agent entry point calls this first."""
    if isinstance(question, VisibleQuestion):
        return question
    if isinstance(question, Question):
        return question.visible()
    raise TypeError(f"expected a Question or VisibleQuestion, got {type(question).__name__}")
