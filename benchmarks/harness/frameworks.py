"""Benchmark: the same reconciliation pipeline in plain Python, LangGraph and the OpenAI Agents SDK.

A library; its command line is ``forecast-reconcile frameworks`` (:mod:`benchmarks.cli`). It runs the three
implementations of :mod:`agent_research.frameworks` on the same seeded sample of bundled, resolved
ForecastBench market questions, with the same providers and the same search tool (the bundled dated
corpus behind the cutoff guard), and returns one comparison table.

Measurements (per implementation, summed over the sample unless stated)
-----------------------------------------------------------------------
calls
    Provider calls (count), from the usage ledger.
tok_forecaster, tok_bull, tok_bear, tok_supervisor
    Input + output tokens per role, from the usage ledger keyed (method, role, model).
wall_s
    Wall time of ``arun(question)`` over the sample (seconds); questions run one after the other.
    The pipeline object is built and warmed up on one question first (not counted), so one-time costs
    (imports, graph compilation) are reported separately as ``build_s``.
provider_s, tool_s
    Time during which at least one provider call (resp. search) was in flight, measured at our
    Provider / SearchClient boundary by :class:`agent_research.frameworks.bridge.ProviderClock`, the
    same layer for every implementation (seconds).
overhead_ms_per_q
    Framework overhead per question: (wall - time covered by provider or search calls) / questions,
    in milliseconds. It includes our own parsing and aggregation, which are the same code in all three,
    so differences between rows are the frameworks' cost.
max_abs_dp
    Largest |final p_yes - plain Python's final p_yes| over the sample (probability units); 0 when
    the implementations agree.
ledger_equal
    Whether every question's usage ledger equals plain Python's exactly.
brier
    Mean Brier score of the final p_yes against the resolved outcomes (lower is better).
loc_module, loc_total
    Lines of code, counted by :func:`logical_lines`: non-blank lines that are not comments or
    docstrings. ``loc_module`` counts the module(s) that express the orchestration (plain Python:
    ``pipeline.py``, ``ensemble.py``, ``debate.py``, ``supervisor.py``, which hold the agents' runs
    and the public steps every implementation calls); ``loc_total`` adds the support a framework
    implementation needs on top (the ``frameworks/bridge.py`` adapters). Prompts and parsers are
    shared and counted nowhere.

With the scripted provider every answer is a deterministic function of the prompt, so any difference
in final probabilities or ledgers would mean the prompts or the flow differ.
"""

from __future__ import annotations

import ast
import io
import time
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from agent_providers import Provider, get_provider
from agent_research import PipelineConfig, RoleProviders
from agent_research.frameworks import FRAMEWORKS, build_pipeline
from agent_research.frameworks.bridge import ProviderClock, TimedProvider, disable_telemetry
from agent_schemas import PipelineTrace, Question
from agent_tools import SearchClient, ToolExecutor
from agent_providers import scripted_world
from benchmarks.questions import load_forecastbench

ROOT = Path(__file__).resolve().parents[2]

#: Source files counted per implementation (paths relative to the repository root); see module doc.
LOC_FILES: dict[str, dict[str, list[str]]] = {
    "python": {"module": ["agent_research/pipeline.py", "agent_research/ensemble.py",
                          "agent_specialists/debate.py", "agent_specialists/supervisor.py"], "support": []},
    "langgraph": {"module": ["agent_research/frameworks/langgraph_pipeline.py"],
                  "support": ["agent_research/frameworks/bridge.py"]},
    "openai-agents": {"module": ["agent_research/frameworks/agents_sdk_pipeline.py"],
                      "support": ["agent_research/frameworks/bridge.py"]},
}

ROLES = ("forecaster", "bull", "bear", "supervisor")


def logical_lines(source: str) -> int:
    """Lines of code: non-blank lines holding at least one token that is not a comment, excluding
    docstrings (string-expression statements that open a module, class or function body).

    Examples
    --------
    >>> logical_lines("'''doc'''\\n\\n# comment\\nx = 1  # note\\ndef f():\\n    '''doc\\n    more'''\\n    return x\\n")
    3
    """
    tree = ast.parse(source)
    doc_lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                doc_lines.update(range(first.lineno, first.end_lineno + 1))  # type: ignore[operator]
    code: set[int] = set()
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in skip:
            code.update(range(tok.start[0], tok.end[0] + 1))
    return len(code - doc_lines)


def lines_of_code(framework: str, root: Path = ROOT) -> tuple[int, int]:
    """``(loc_module, loc_total)`` of an implementation (see :data:`LOC_FILES`)."""
    files = LOC_FILES[framework]
    own = sum(logical_lines((root / f).read_text()) for f in files["module"])
    return own, own + sum(logical_lines((root / f).read_text()) for f in files["support"])


class TimedSearch(SearchClient):
    """Wrap a search client and record the interval of every search in ``clock``."""

    def __init__(self, inner: SearchClient, clock: ProviderClock) -> None:
        self.inner, self.clock = inner, clock
        self.name = inner.name  # type: ignore[misc]

    def search(self, query, *, max_results=5, cutoff_date=None):
        t0 = time.perf_counter()
        try:
            return self.inner.search(query, max_results=max_results, cutoff_date=cutoff_date)
        finally:
            self.clock.add(t0, time.perf_counter())

    async def asearch(self, query, *, max_results=5, cutoff_date=None):
        t0 = time.perf_counter()
        try:
            return await self.inner.asearch(query, max_results=max_results, cutoff_date=cutoff_date)
        finally:
            self.clock.add(t0, time.perf_counter())


@dataclass
class FrameworkRun:
    """Traces and timings of one implementation over the sample."""

    framework: str
    traces: list[PipelineTrace] = field(default_factory=list)
    wall_s: float = 0.0
    busy_s: float = 0.0
    provider_s: float = 0.0
    tool_s: float = 0.0
    build_s: float = 0.0


def make_provider(spec: str, latency_s: float) -> Provider:
    """``"scripted"`` -> the scripted world (:func:`agent_providers.scripted_world.provider`) answering after
    ``latency_s`` seconds; anything else -> :func:`agent_providers.get_provider`."""
    if spec == "scripted":
        return scripted_world.provider(latency_s=latency_s)
    return get_provider(spec)


async def run_framework(framework: str, questions: list[Question], provider: Provider, search: SearchClient | None,
                        config: PipelineConfig, *, warmup: bool = True) -> FrameworkRun:
    """Run one implementation over ``questions`` sequentially, timing provider, search and wall time."""
    pclock, sclock = ProviderClock(), ProviderClock()
    timed = TimedProvider(provider, pclock)
    executor = ToolExecutor(TimedSearch(search, sclock)) if search is not None else None
    t0 = time.perf_counter()
    pipe = build_pipeline(framework, RoleProviders.single(timed), executor, config)
    if warmup and questions:
        await pipe.arun(questions[0])
    run = FrameworkRun(framework, build_s=time.perf_counter() - t0)
    for q in questions:
        start = time.perf_counter()
        run.traces.append(await pipe.arun(q))
        end = time.perf_counter()
        run.wall_s += end - start
        run.provider_s += pclock.busy_s(start, end)
        run.tool_s += sclock.busy_s(start, end)
        both = ProviderClock()
        both.intervals = pclock.intervals + sclock.intervals
        run.busy_s += both.busy_s(start, end)  # union: a search and a call may overlap
    return run


def comparison_table(runs: dict[str, FrameworkRun], questions: list[Question]) -> pd.DataFrame:
    """One row per implementation (columns documented in the module docstring)."""
    base = runs.get("python")
    outcomes = np.array([q.outcome for q in questions], dtype=float)
    rows = []
    for fw, run in runs.items():
        ledger = sum((t.ledger for t in run.traces[1:]), run.traces[0].ledger) if run.traces else None
        by_role = ledger.by_role() if ledger else {}
        p = np.array([np.nan if t.final_p_yes is None else t.final_p_yes for t in run.traces], dtype=float)
        row: dict[str, Any] = {"framework": fw, "questions": len(run.traces), "ok": sum(t.status == "ok" for t in run.traces),
                               "calls": ledger.total().calls if ledger else 0}
        for role in ROLES:
            row[f"tok_{role}"] = by_role[role].total_tokens or 0 if role in by_role else 0
        n = max(1, len(run.traces))
        row.update(wall_s=run.wall_s, provider_s=run.provider_s, tool_s=run.tool_s,
                   overhead_ms_per_q=1000 * (run.wall_s - run.busy_s) / n, build_s=run.build_s)
        if base is not None:
            pb = np.array([np.nan if t.final_p_yes is None else t.final_p_yes for t in base.traces], dtype=float)
            row["max_abs_dp"] = float(np.nanmax(np.abs(p - pb))) if np.isfinite(p - pb).any() else float("nan")
            row["ledger_equal"] = all(a.ledger == b.ledger for a, b in zip(run.traces, base.traces))
        ok = np.isfinite(p) & np.isfinite(outcomes)
        row["brier"] = float(np.mean((p[ok] - outcomes[ok]) ** 2)) if ok.any() else float("nan")
        row["loc_module"], row["loc_total"] = lines_of_code(fw)
        rows.append(row)
    return pd.DataFrame(rows)


def sample_questions(n: int, seed: int) -> list[Question]:
    """The seeded sample: ``n`` resolved market questions of the bundled ForecastBench subset."""
    return load_forecastbench(question_type="market", sample_n=n, seed=seed)


async def arun_benchmark(*, provider: str = "scripted", n: int = 20, seed: int = 0, latency_s: float = 0.02,
                         frameworks: tuple[str, ...] = FRAMEWORKS, config: PipelineConfig | None = None,
                         search: str = "local", warmup: bool = True) -> tuple[pd.DataFrame, dict[str, FrameworkRun]]:
    """Run the comparison; returns ``(table, runs by framework)``.

    Parameters
    ----------
    provider : str
        ``"scripted"`` (deterministic, ``latency_s`` seconds per call) or any provider spec, e.g. ``"local/smollm2"``.
    n, seed : int
        Sample size and seed of :func:`sample_questions`.
    frameworks : tuple of str
        Implementations to run (plain Python is the reference for ``max_abs_dp``).
    search : {"local", "none"}
        The bundled dated corpus (:meth:`agent_tools.LocalCorpusSearch.default`) or no research.

    Raises
    ------
    ValueError
        For an unknown framework or search option, or an empty sample.
    """
    disable_telemetry()
    unknown = [f for f in frameworks if f not in FRAMEWORKS]
    if unknown:
        raise ValueError(f"unknown frameworks {unknown}; valid: {', '.join(FRAMEWORKS)}")
    if search not in ("local", "none"):
        raise ValueError(f"search must be 'local' or 'none', got {search!r}")
    questions = sample_questions(n, seed)
    if not questions:
        raise ValueError(f"the sample is empty (n={n})")
    config = config or PipelineConfig(seed=seed)
    client = None
    if search == "local":
        from agent_tools import LocalCorpusSearch

        client = LocalCorpusSearch.default()
    runs = {}
    for fw in frameworks:
        prov = make_provider(provider, latency_s)
        runs[fw] = await run_framework(fw, questions, prov, client, config, warmup=warmup)
    return comparison_table(runs, questions), runs


def format_table(table: pd.DataFrame) -> str:
    """Markdown of the comparison table."""
    return table.to_markdown(index=False, floatfmt=".4g")
