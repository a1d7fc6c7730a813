"""Before spending: what a run would send, and what it would cost, without calling any provider.

``forecast-reconcile run --dry-run`` (:func:`estimate_run`) selects the run's questions exactly as the
run would (the same filters, contamination filter and seeded sample), then:

Method
------
1. **Prompts.** The run's real pipeline (the same members, personas, debate and supervisor, sized by
   the config) runs on a sample of up to :data:`SAMPLE_QUESTIONS` of those questions, with every
   provider replaced by a stand-in (:class:`FullAnswerStandIn`) that never leaves the process. Research
   runs for real on the bundled dated corpus (for ``--search ddg`` the bundled corpus stands in: no
   network in a dry run; snippets are cut to the same length). So every prompt is the one the pipeline
   builds: case facts, evidence, member summaries, debate turns, the supervisor's disagreements.
2. **Answers.** The stand-in answers every request with a *full* answer: each text field at the
   length its schema allows (a 200-character rationale, every allowed evidence item with a 120-character
   claim), the bull at 60% and the bear at 40% so that the debate plays every round. These answers feed
   the later prompts (member summaries, debate turns), so those prompts are sized for full answers too.
3. **Tokens** are counted as ``ceil(characters / 4)`` per message (OpenAI's rule of thumb for English
   text; no provider tokenizer runs offline for every provider). Chat-template overhead (a few tokens per
   message) is not counted.
4. **Calls per question** come from the config (:func:`calls_per_question`): one call per member, two
   per debate round (bull and bear; every round counted, although the debate stops at consensus), two
   supervisor calls (one when it may make no search), each on the provider the runner assigns; and the
   members' query-writing calls, counted with the forecaster role, which depend on the evidence mode
   (``--evidence``, :mod:`agent_research.evidence_modes`): with model-written queries one per member (shared)
   or one per question (split); with private evidence one per member always. **Searches per question**
   (:func:`searches_per_question`) are counted the same way: the members' (``n_queries`` per member when shared
   or private, ``n_queries`` in all when split) and the supervisor's (at most ``max_queries``); they cost no
   USD here (the bundled corpus and DuckDuckGo are free) but take time and rate limits.
5. **Output tokens** are given twice: the full answers of step 2 ("estimate"), and ``max_tokens`` per
   call (the most a provider can bill; "at most"). Reasoning models bill hidden reasoning tokens within
   ``max_tokens`` too, so for them the second figure is the one to budget.
6. **USD** per call from ``genai-prices`` (:func:`agent_providers.pricing.cost_usd`: the same prices
   the run's ledger uses, tiered per call), without prompt-cache discounts (Anthropic bills cache reads
   at 10% of the input price, so a real run costs less). ``None`` where the price is unknown
   (OpenAI-compatible servers, unpriced models).
"""

from __future__ import annotations

import json
import math
import os
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from agent_providers import Provider, choose_auto_spec, get_provider, redact_spec
from agent_providers.pricing import PRICE_SOURCE, cost_usd
from agent_research import GivenForecasts
from agent_schemas import ChatMessage, Completion, DataValidationError, Question, ReconcileError, TokenUsage, UnknownProvider
from benchmarks.harness.config import RunConfig
from benchmarks.harness.provider_stack import ProviderStack
from benchmarks.harness.selection import QuestionPool, QuestionSelection
from benchmarks.questions.browse import short_id

__all__ = ["ESTIMATE_COLUMNS", "SAMPLE_QUESTIONS", "EstimateReport", "FullAnswerStandIn", "RunEstimate", "calls_per_question",
           "count_tokens", "estimate_report", "estimate_run", "searches_per_question"]

#: Questions of the run whose prompts are built to size the others.
SAMPLE_QUESTIONS = 5
#: Percent answered by the stand-in: the bull above the bear, so the debate never reaches consensus.
_SIDE_PERCENT = {"bull": 60, "bear": 40}


def count_tokens(text: str) -> int:
    """Estimated tokens of ``text``: ``ceil(len(text) / 4)`` (see the module docstring, step 3)."""
    return math.ceil(len(text) / 4)


def _fill(schema: dict[str, Any], name: str, side: str | None, question: str) -> Any:
    """A value of ``schema`` that uses all it allows: strings at ``maxLength``, arrays at ``maxItems``."""
    kind = schema.get("type")
    if "enum" in schema:
        values = schema["enum"]
        if name.endswith("_percent"):
            return _SIDE_PERCENT.get(side or "", 50)
        return values[len(values) // 2] if name == "confidence" else values[0]
    if kind == "object":
        return {k: _fill(v, k, side, question) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [_fill(schema.get("items", {}), name, side, question) for _ in range(schema.get("maxItems", 1))]
    if kind == "string":
        n = int(schema.get("maxLength", 200))
        if name in ("query", "queries"):
            return " ".join(question.split())[:n]
        if name == "source_url":
            return ("https://example.org/" + "x" * n)[:n]
        if name in ("agents",):
            return "member-0"[:n]
        return ("lorem ipsum dolor sit amet " * (n // 27 + 1))[:n]
    if kind == "integer":
        return 50
    if kind == "number":
        return 0.5
    if kind == "boolean":
        return False
    return None


class FullAnswerStandIn(Provider):
    """Stands in for the provider of ``spec`` in a dry run: answers every request with a full answer
    (module docstring, step 2) and never leaves the process. ``spec`` and ``model`` are the real ones,
    so the runner's contamination filter, member assignment and ledger see the run's providers."""

    name = "stand-in"
    supports_json_schema = True

    def __init__(self, spec: str) -> None:
        self._spec = spec
        super().__init__(spec.partition("/")[2] or spec)

    @property
    def spec(self) -> str:
        return self._spec

    def _complete(self, messages, *, json_schema, temperature, max_tokens, seed) -> Completion:
        tail = messages[-1].content
        side = "bull" if "You are the BULL" in tail else "bear" if "You are the BEAR" in tail else None
        question = next((m.content.split("- Question: ", 1)[1].split("\n", 1)[0] for m in messages if "- Question: " in m.content), "")
        text = json.dumps(_fill(json_schema or {"type": "object", "properties": {"answer": {"type": "string"}}}, "", side, question))
        usage = TokenUsage(input_tokens=sum(count_tokens(m.content) for m in messages), output_tokens=count_tokens(text), calls=1)
        return Completion(text=text, usage=usage, model=self.model, provider=self.spec)


def calls_per_question(config: RunConfig, n_providers: int) -> dict[tuple[int, str], int]:
    """Provider calls one question makes at most, by (provider index, role), from the config.

    Members cycle over the providers (member ``i`` on provider ``i % n_providers``; none when the members are
    given, ``config.ensemble == "given"``); the debate runs on the first provider (``max_rounds`` bull and bear
    calls) and the supervisor on the last (2 calls; 1 without clarifying searches), each only when a configured
    method needs it (:meth:`benchmarks.harness.config.RunConfig.pipeline_for_methods`). The members' query-writing
    calls count as "forecaster" calls on the member's provider: with ``llm_queries`` (and ``n_queries > 1``) one per
    member, or with split evidence one per question (the first member's); with private evidence one per member
    (each writes its own queries). None without search.
    """
    pipe = config.pipeline_for_methods()
    calls: dict[tuple[int, str], int] = defaultdict(int)
    members = pipe.n_members if config.ensemble == "forecasters" else 0
    for i in range(members):
        calls[(i % n_providers, "forecaster")] += 1
    searching = members > 0 and config.search != "none" and pipe.member.n_queries > 0
    written = pipe.member.llm_queries and pipe.member.n_queries > 1
    if searching and (pipe.evidence == "private" or written):
        for i in range(1 if pipe.evidence == "split" else members):
            calls[(i % n_providers, "forecaster")] += 1
    if pipe.debate is not None:
        calls[(0, "bull")] += pipe.debate.max_rounds
        calls[(0, "bear")] += pipe.debate.max_rounds
    if pipe.supervisor is not None:
        calls[(n_providers - 1, "supervisor")] += 2 if pipe.supervisor.max_queries > 0 else 1
    return dict(calls)


def searches_per_question(config: RunConfig) -> dict[str, int]:
    """Searches one question makes at most, by who makes them: ``{"members": ..., "supervisor": ...}``.

    Members: ``n_queries`` each with shared or private evidence, ``n_queries`` in all with split evidence (one
    research pass, :mod:`agent_research.evidence_modes`); none with ``search="none"`` or given members. Supervisor:
    ``max_queries`` when a configured method needs it and there is search (it makes one per disagreement it names,
    at most that many).
    """
    pipe = config.pipeline_for_methods()
    search = config.search != "none"
    members = pipe.n_members if config.ensemble == "forecasters" and search else 0
    per_member = pipe.member.n_queries
    return {"members": per_member if pipe.evidence == "split" and members else members * per_member,
            "supervisor": pipe.supervisor.max_queries if pipe.supervisor is not None and search else 0}


@dataclass
class RunEstimate:
    """What :func:`estimate_run` found. Token and USD columns are totals over the run's questions."""

    questions: list[Question]
    providers: list[str] = field(default_factory=list)
    """Provider specs, redacted."""
    choice_reason: str = ""
    """Why these providers (``--provider``, or what ``auto_provider`` would pick and why)."""
    table: pd.DataFrame = field(default_factory=pd.DataFrame)
    """One row per (provider, role): calls, input_tokens, output_tokens (full answers), output_tokens_max,
    usd (full answers), usd_max (at max_tokens), usd_batch (full answers at batch prices, ``--batch``); USD
    None when the price is unknown."""
    n_sampled: int = 0
    """Questions whose prompts were built."""
    warnings: list[str] = field(default_factory=list)
    selection: dict[str, Any] = field(default_factory=dict)
    """The run's question selection (as its manifest would record it)."""
    searches: dict[str, int] = field(default_factory=dict)
    """Searches per question at most, by who makes them (:func:`searches_per_question`)."""
    evidence: str = "shared"
    """The run's evidence mode (``PipelineConfig.evidence``)."""

    def totals(self) -> dict[str, Any]:
        """Sums over the table (USD None when any row's price is unknown)."""
        t = self.table
        out: dict[str, Any] = {c: int(t[c].sum()) for c in ("calls", "input_tokens", "output_tokens", "output_tokens_max")}
        for c in ("usd", "usd_max", "usd_batch"):
            out[c] = None if t[c].isna().any() else float(t[c].sum())
        return out


def estimate_run(config: RunConfig, *, environ: dict[str, str] | None = None, sample: int = SAMPLE_QUESTIONS,
                 questions: list[Question] | QuestionPool | None = None, provider_factory: Any = None,
                 ensemble: GivenForecasts | None = None) -> RunEstimate:
    """Estimate calls, tokens and USD of the run ``config`` describes, calling no provider (module docstring).

    Providers are built as the run would build them (so a missing SDK or key is reported) but never
    called; the prompts come from :class:`FullAnswerStandIn` stand-ins. ``questions`` replaces the
    config's selection (the cost cap of a running run estimates its own questions); a
    ``provider_factory`` (the runner's, in tests) replaces building the real providers for that check;
    ``ensemble`` holds the given members of a config with ``ensemble="given"`` (their forecasts cost nothing). It
    builds what it needs (a :class:`~benchmarks.harness.provider_stack.ProviderStack` of stand-ins, the
    :class:`~benchmarks.harness.selection.QuestionSelection`), never a runner.

    Raises
    ------
    UnknownProvider
        For a spec no provider answers to.
    DataValidationError
        As the run would: no question matches, a malformed question file, an unknown training cutoff.
    """
    env = os.environ if environ is None else environ
    if config.providers:
        specs, reason = list(config.providers), "--provider"
    elif config.ensemble == "given":
        specs, reason = [], "none: the members are given and no method needs a model"
    else:
        choice = choose_auto_spec(env)
        specs, reason = [choice.spec], f"auto: {choice.reason}"
    warnings = []
    for spec in (specs if provider_factory is None else []):  # build each provider as the run would, and never call it
        try:
            get_provider(spec, retry=False).close()
        except UnknownProvider:
            raise
        except ReconcileError as exc:
            warnings.append(f"{redact_spec(spec)}: {exc} (the run would stop here)")
    # the stand-ins answer at once: no batch API (batch prices come from genai-prices below), no cache
    cfg = config.model_copy(update={"providers": specs, "cache": False, "batch": False})
    max_tokens = cfg.pipeline.max_tokens or 0
    search = None
    if cfg.search == "ddg":
        from agent_tools import LocalCorpusSearch

        search = LocalCorpusSearch.default()
        warnings.append("--search ddg: prompts sized with the bundled corpus standing in for DuckDuckGo (a dry run makes no network calls)")
    stack = ProviderStack(cfg, provider_factory=FullAnswerStandIn, search_client=search, rate_limit=False, ensemble=ensemble)
    chosen = QuestionSelection(cfg, stack.model_specs(), questions)
    questions = chosen.questions()
    if not questions:
        raise DataValidationError("no questions match the run's filters", field="questions", value=0)
    selection = chosen.describe()
    pipeline = stack.pipeline()
    step = max(1, len(questions) // max(1, sample))
    sampled = questions[::step][:sample]
    per_call: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    for q in sampled:
        trace = pipeline.run(q.visible(show_crowd=cfg.show_crowd))
        for call in trace.recorded_calls:
            if call.completion is not None:
                per_call[(call.provider, call.role)].append((call.completion.usage.input_tokens or 0,
                                                             call.completion.usage.output_tokens or 0))
    rows = []
    n_q = len(questions)
    order = {"forecaster": 0, "bull": 1, "bear": 2, "supervisor": 3}
    # a spec named several times (a mixed ensemble's counts, benchmarks/harness/mixed_ensemble.py) is one provider: one row per role
    first = {s: specs.index(s) for s in specs}
    merged: dict[tuple[int, str], int] = defaultdict(int)
    for (index, role), calls in calls_per_question(cfg, len(specs)).items():
        merged[(first[specs[index]], role)] += calls
    for (index, role), calls in sorted(merged.items(), key=lambda kv: (kv[0][0], order.get(kv[0][1], 9))):
        spec = specs[index]
        seen = per_call.get((spec, role)) or [(0, 0)]
        mean_in = sum(i for i, _ in seen) / len(seen)
        mean_out = min(sum(o for _, o in seen) / len(seen), max_tokens)
        one = cost_usd(spec, TokenUsage(input_tokens=round(mean_in), output_tokens=round(mean_out), calls=1))
        one_max = cost_usd(spec, TokenUsage(input_tokens=round(mean_in), output_tokens=max_tokens, calls=1))
        one_batch = cost_usd(spec, TokenUsage(input_tokens=round(mean_in), output_tokens=round(mean_out), calls=1), batch=True)
        total_calls = calls * n_q
        rows.append({"provider": redact_spec(spec), "role": role, "calls": total_calls,
                     "input_tokens": round(mean_in * total_calls), "output_tokens": round(mean_out * total_calls),
                     "output_tokens_max": max_tokens * total_calls,
                     "usd": None if one is None else one * total_calls,
                     "usd_max": None if one_max is None else one_max * total_calls,
                     "usd_batch": None if one_batch is None else one_batch * total_calls})
    table = pd.DataFrame(rows, columns=["provider", "role", "calls", "input_tokens", "output_tokens", "output_tokens_max",
                                        "usd", "usd_max", "usd_batch"])
    return RunEstimate(questions=list(questions), providers=[redact_spec(s) for s in specs], choice_reason=reason,
                       table=table, n_sampled=len(sampled), warnings=warnings, selection=selection,
                       searches=searches_per_question(cfg), evidence=cfg.pipeline.evidence)


def _usd(v: float | None) -> str:
    return "unknown" if v is None or v != v else f"${v:,.2f}" if v >= 0.995 or v == 0 else f"${v:.4f}"


#: Headers of :attr:`EstimateReport.rows`, in order.
ESTIMATE_COLUMNS = ("provider", "role", "calls", "input tokens", "output tokens", "output at most", "USD", "USD at most")


@dataclass
class EstimateReport:
    """The dry run's report in parts, for a terminal table renderer (the command line's
    :func:`benchmarks.viewer.terminal.compact_table`): plain lines, the questions and one row per (provider, role)."""

    head: list[str]
    """Lines before the tables: what was (not) done, the providers and why, the question count and filter."""
    questions: list[tuple[str, str, str, str]]
    """Short id, forecast date, source, question text (whole: the renderer wraps it), at most ``max_questions``."""
    more_questions: int
    """Questions not listed."""
    rows: list[tuple[str, ...]]
    """Cells under :data:`ESTIMATE_COLUMNS`: counts with thousands separators, USD as text (``unknown`` when the price is)."""
    tail: list[str]
    """Lines after the tables: totals, the method, warnings (``warning: ...``)."""


def _searches_line(est: RunEstimate) -> list[str]:
    if not est.searches:
        return []
    per_q = sum(est.searches.values())
    return [f"searches: at most {per_q:,} per question ({est.searches['members']:,} by the members with {est.evidence} evidence, "
            f"at most {est.searches['supervisor']:,} by the supervisor), {per_q * len(est.questions):,} in all"]


def estimate_report(est: RunEstimate, *, max_questions: int = 20) -> EstimateReport:
    """The dry run's report of ``est`` (:class:`EstimateReport`): providers, questions, calls, tokens and USD per
    provider and role, and the totals."""
    cut = est.selection.get("contamination_filter", {}).get("note", "")
    head = [f"dry run: no provider was called and nothing was written ({PRICE_SOURCE.split(' (')[0]} prices)",
            f"providers: {', '.join(est.providers)} ({est.choice_reason})",
            f"questions: {len(est.questions)}" + (f"; contamination filter: {cut}" if cut else "")]
    questions = [(short_id(q.id), q.forecast_date.isoformat(), q.source, " ".join(q.text.split())) for q in est.questions[:max_questions]]
    rows = [(str(r.provider), str(r.role), f"{r.calls:,}", f"{r.input_tokens:,}", f"{r.output_tokens:,}", f"{r.output_tokens_max:,}",
             _usd(r.usd), _usd(r.usd_max)) for r in est.table.itertuples()]
    t = est.totals()
    tail = [f"total: {t['calls']:,} calls, {t['input_tokens']:,} input tokens, {t['output_tokens']:,} output tokens "
            f"(at most {t['output_tokens_max']:,})",
            f"estimated cost {_usd(t['usd'])} (at most {_usd(t['usd_max'])}); with --batch (batch prices) {_usd(t['usd_batch'])}",
            *_searches_line(est),
            f"method: prompts built by the run's own pipeline for {est.n_sampled} sampled questions; tokens ~ characters / 4; "
            "full-length answers; no prompt-cache discount; see benchmarks/harness/estimate.py",
            *[f"warning: {w}" for w in est.warnings]]
    return EstimateReport(head, questions, max(0, len(est.questions) - max_questions), rows, tail)
