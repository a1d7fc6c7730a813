"""A scripted benchmark run for the run-viewer tests: bundled questions plus one hostile question.

The scripted world (:mod:`tests.agent_providers.scripted_world`) answers every role; the run goes through
:class:`benchmarks.harness.runner.BenchmarkRunner` with the bundled dated corpus as search backend, so the page
has members, debate turns, supervisor searches and kept/dropped results to show. The bundled corpus is made of
question listings, which are never evidence (:mod:`agent_tools.listings`): one dated news report per question
(:func:`news_reports`) is added so that some clarifying results count. The hostile question
carries markup in its text, background and URL, and its members answer with markup in their rationales:
the page must show all of it as text and run none of it.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path

from agent_providers import ScriptedProvider
from agent_tools import CorpusDocument, LocalCorpusSearch
from benchmarks.harness.config import RunConfig
from benchmarks.questions import load_forecastbench
from benchmarks.report import write_report
from benchmarks.harness.runner import BenchmarkRunner
from benchmarks.run_folder import read_results
from agent_providers import scripted_world

HOSTILE_TEXT = 'Will <script>window.__pwned = 1</script> <img src=x onerror="window.__pwned = 2"> happen by 2026?'
HOSTILE_BACKGROUND = "</template><script>window.__pwned = 3</script> A background that tries to close the template."
HOSTILE_RATIONALE = '<b onmouseover="window.__pwned = 4">bold</b> & <script>window.__pwned = 5</script>'


def _respond(messages) -> str:
    """The scripted world's answer; a forecaster on the hostile question answers with markup in its rationale."""
    answer = scripted_world.respond(messages)
    text = "\n".join(m.content for m in messages)
    data = json.loads(answer)
    if "<script>window.__pwned = 1</script>" in text and "rationale" in data and "confidence" not in data:
        data["rationale"] = HOSTILE_RATIONALE
        return json.dumps(data)
    return answer


@dataclass(frozen=True)
class ViewerRun:
    """The run folder, its page and records, and the hostile question's id."""

    run_dir: Path
    page: Path
    records: list[dict]
    hostile_id: str


def news_reports(questions) -> list[CorpusDocument]:
    """One news report per question, dated three days before its forecast date: its text is the question's
    sentence as a statement (so it names the question's subject and shares its words), its title is no question."""
    return [CorpusDocument(title=f"Wire report {i}", url=f"https://news.example/report-{i}",
                           text="Reporters wrote: " + q.text.partition("?")[0] + ".",
                           published=q.forecast_date - dt.timedelta(days=3), kind="news")
            for i, q in enumerate(questions)]


def make_viewer_run(root: Path, *, n: int = 12, seed: int = 3) -> ViewerRun:
    """Run ``n`` bundled market questions and the hostile one with the scripted world; write the report."""
    qs = load_forecastbench(question_type="market", one_per_source_question=True, sample_n=n, seed=seed)
    hostile = qs[0].model_copy(update={
        "id": "hostile-question-1", "source_question_id": "hostile-1", "text": HOSTILE_TEXT,
        "background": HOSTILE_BACKGROUND, "url": "javascript:window.__pwned = 6",
    })
    config = RunConfig(output_dir=str(root), run_id="viewer", providers=["scripted"], search="local")
    search = LocalCorpusSearch([*LocalCorpusSearch.default().documents, *news_reports(qs)])
    runner = BenchmarkRunner(config, provider_factory=lambda spec: ScriptedProvider(responder=_respond), search_client=search,
                             questions=[*qs, hostile], progress=False, retry_sleep=lambda s: None)
    asyncio.run(runner.arun())
    report = write_report([runner.run_dir], runner.run_dir, n_resamples=200)
    return ViewerRun(runner.run_dir, report.html_path, read_results(runner.run_dir / "results.jsonl"), hostile.id)
