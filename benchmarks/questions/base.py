"""What every question loader shares: the result list, the ForecastBench source names and the outcome
snapshot date of the bundled data, and the close date a forecaster may see."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any

from agent_schemas import Question
from agent_schemas.dates import utc_date

__all__ = ["DATASET_SOURCES", "DATA_SNAPSHOT_DATE", "MARKET_SOURCES", "QuestionList", "scheduled_close"]

#: ForecastBench market sources (crowd / market probability available at freeze).
MARKET_SOURCES: frozenset[str] = frozenset({"infer", "manifold", "metaculus", "polymarket"})
#: ForecastBench dataset sources (freeze value is the last observed series value, not a probability).
DATASET_SOURCES: frozenset[str] = frozenset({"acled", "dbnomics", "fred", "wikipedia", "yfinance"})

#: Date of the bundled outcomes (ForecastBench resolution sets as of this day; DATA_CARD.md). Only
#: questions resolved by then are bundled, so a market that could still be open on this day is in the
#: data only if it resolved early, and early resolutions are mostly Yes ("will X happen by <date>"): in
#: late rounds the bundled yes-rate is inflated. Selecting questions whose *scheduled* close date (known
#: on the forecast date) is on or before this day removes that outcome-dependent selection; see
#: :func:`load_forecastbench` (``scheduled_close_to``) and README "Scoring conventions".
DATA_SNAPSHOT_DATE = dt.date(2026, 8, 20)


class QuestionList(list):
    """A ``list[Question]`` that also records what was skipped while loading.

    Attributes
    ----------
    skipped : dict[str, int]
        Count of skipped entries per reason, e.g. ``{"combo": 12, "unresolved": 3}``.
    origin : str
        The file(s) the questions came from.
    """

    def __init__(self, items: Iterable[Question] = (), *, skipped: Mapping[str, int] | None = None, origin: str = ""):
        super().__init__(items)
        self.skipped: dict[str, int] = dict(skipped or {})
        self.origin = origin


def scheduled_close(question_type: str, market_close: Any, resolution_date: Any) -> dt.date | None:
    """The close date a forecaster may see: a market's scheduled close (UTC date of
    ``market_close_datetime``, frozen with the question set before the forecast date), a dataset
    question's resolution date (fixed by the question template). Never a market's actual resolution date."""
    if question_type == "market":
        return None if market_close is None else utc_date(market_close, field="market_close_datetime")
    return None if resolution_date is None else utc_date(resolution_date, field="resolution_date")
