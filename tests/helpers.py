"""Test helpers shared by several test folders: real questions and scripted search clients."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json

import pytest

from agent_providers import ScriptedProvider
from agent_schemas import Question, SearchOutcome, SearchResult
from agent_tools import SearchClient

#: Marks of a module that runs the real embedded llama.cpp model: the ``llama`` marker, and skipped (saying
#: why) only when llama-cpp-python is not installed. Use as ``pytestmark = NEEDS_LLAMA``.
NEEDS_LLAMA = [
    pytest.mark.llama,
    pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                       reason='llama-cpp-python is not installed: pip install "forecast-reconcile[local]"'),
]


def make_question(qid: str = "q1", forecast_date: str = "2025-11-09", outcome: int | None = 1) -> Question:
    return Question(
        id=qid,
        text="Will the ECB cut its deposit rate at its December 2025 meeting?",
        background="The ECB deposit facility rate was 2.00% after the June 2025 meeting.",
        resolution_criteria="Resolves Yes if the ECB announces a cut of the deposit facility rate on 2025-12-18.",
        forecast_date=dt.date.fromisoformat(forecast_date),
        resolution_date=dt.date(2025, 12, 18),
        outcome=outcome,
        source="polymarket",
        source_question_id=qid,
        question_type="market",
        crowd_p_yes=0.1,
    )


def answer(p_percent: int, rationale: str = "because", **extra) -> str:
    return json.dumps({"p_yes_percent": p_percent, "rationale": rationale, "key_evidence": [], **extra})


class FixedSearch(SearchClient):
    """Returns the same results (or the same failure) for every query; records queries and cutoffs."""

    name = "fixed"

    def __init__(self, results: list[SearchResult] | None = None, failure: str | None = None) -> None:
        self.results = results or []
        self.failure = failure
        self.calls: list[tuple[str, dt.date | None]] = []

    def search(self, query, *, max_results=5, cutoff_date=None) -> SearchOutcome:
        self.calls.append((query, cutoff_date))
        if self.failure:
            return SearchOutcome(status="failed", attempted_query=query, failure_type=self.failure,
                                 is_transient=self.failure in ("rate_limited", "timeout"), attempts=3,
                                 error_message=f"injected {self.failure}")
        return SearchOutcome(status="ok", attempted_query=query, results=self.results[:max_results])


class SpecProvider(ScriptedProvider):
    """A scripted provider that reports another provider's spec (``"openai/gpt-4.1-mini"``): for code that reads
    only the spec, such as the contamination filter or the runner's concurrency default. Answers as the
    scripted world."""

    def __init__(self, spec: str) -> None:
        from agent_providers.scripted_world import respond

        super().__init__(responder=respond)
        self._spec = spec

    @property
    def spec(self) -> str:
        return self._spec


def one_line_error(res, *needles: str) -> str:
    """A CLI result (typer.testing) refused as bad input: exit code 2, exactly one line on stderr, starting with 'error:', with every needle in it."""
    assert res.exit_code == 2, (res.exit_code, res.output)
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("error: ") and "Traceback" not in res.output
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]
