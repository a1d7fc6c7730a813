"""The benchmark harness: one shared ensemble run per question, every method and baseline, durable results.

Run folder ``<output_dir>/<run_id>/``:

* ``manifest.json``: config, package version, providers and models, seed, per-question status,
  retry / cache counters, the command line (redacted), the git commit, package versions and wall time
  (``wall_time_s`` of this session, ``wall_time_s_total`` over resumed sessions); rewritten atomically (temp file + ``os.replace``) at the start, at most once
  per :data:`MANIFEST_INTERVAL_S` while questions finish, and at the end.
* ``results.jsonl``: one line per finished question (methods, baselines, usage ledger, audit and the
  full pipeline trace), appended, flushed and fsynced as each question finishes. Killing the process
  at any moment loses at most the questions in flight; a torn last line is cut off on resume.
* ``cache/``: the persistent response cache, so ``resume`` re-pays no tokens for calls already made.
* ``.lock``: held (``filelock``, an OS file lock) by the one process writing the folder, for the whole
  run or resume; a second writer fails at once with :class:`RunFolderBusy`.
* ``results.replaced.jsonl``: failed question records set aside by ``resume(retry_failed=True)``
  before their questions run again (kept for their usage; reports read ``results.jsonl`` only).

Nothing is written before the run's inputs validate (config, questions, providers); the response
cache opens at the first provider call. A question's pipeline that raises anything unexpected gives a
failed question record (status "failed", typed error) and the run goes on.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import json
import logging
import os
import random
import secrets
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from agent_providers import CachingProvider, Provider, ResponseCache, RetryingProvider, RetryPolicy, auto_provider, choose_auto_spec, get_provider, redact_spec, run_sync
from agent_providers.pricing import PRICE_SOURCE
from agent_research import ForecastPipeline
from filelock import FileLock, Timeout
from pydantic import BaseModel, Field

from agent_providers.batch import BatchCollector, BatchingProvider
from agent_providers.pricing import cost_usd
from agent_providers.ratelimit import RateLimitedProvider, RateLimits, default_limits, parse_rate_limits
from agent_schemas import DataValidationError, ErrorInfo, PipelineTrace, Question, ReconcileError, TokenUsage, as_reconcile_error
from agent_tools import ToolExecutor
from benchmarks.baselines import compute_baselines
from benchmarks.clusters import ClusterAssignment, sibling_clusters
from benchmarks.cost_cap import CostCap, MeteredProvider, SpendMeter, record_cost
from benchmarks.config import RunConfig, validate_run_id
from benchmarks.leakage import leakage_audit
from benchmarks.methods import method_rows
from benchmarks.model_cutoffs import training_cutoff
from benchmarks.provenance import git_commit, package_versions
from benchmarks.questions import DATA_SNAPSHOT_DATE, load_forecastbench, load_questions_file
from benchmarks.shards import config_digest, parse_shard, selection_digest, shard_of, shard_run_id

log = logging.getLogger(__name__)

RESULTS_FILE = "results.jsonl"
MANIFEST_FILE = "manifest.json"
LOCK_FILE = ".lock"
REPLACED_FILE = "results.replaced.jsonl"
#: Batch mode's journal of submitted batches (:mod:`agent_providers.batch.collector`).
BATCHES_FILE = "batches.jsonl"
#: The manifest is rewritten at most this often while questions finish (seconds), and at the end.
#: ``results.jsonl`` is the durable record; on resume the manifest's statuses are rebuilt from it.
MANIFEST_INTERVAL_S = 1.0


@functools.lru_cache(maxsize=1)
def package_version() -> str:
    """Installed version of forecast-reconcile ('unknown' when run from a source tree)."""
    try:
        return version("forecast-reconcile")
    except PackageNotFoundError:
        return "unknown"


# --- durable files -------------------------------------------------------------------------------


class RunFolderBusy(ReconcileError):
    """Another process holds the run folder's lock: one writer per run folder."""


class ResultsWriteError(ReconcileError):
    """A finished question's record could not be written (disk full, permissions); earlier records are intact."""


def append_jsonl(path: Path, record: "dict[str, Any] | BaseModel") -> None:
    """Append one JSON line (a dict or a pydantic model), flushed and fsynced before returning.

    Raises
    ------
    OSError
        When the write fails (e.g. ``ENOSPC``, disk full); the file is first cut back to its previous
        length, so no partial line is left for a later append to run into. ``filename`` is ``path``.
    """
    if isinstance(record, BaseModel):
        line = record.model_dump_json() + "\n"
    else:
        line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
    data = line.encode("utf-8")
    with open(path, "ab") as fh:
        start = fh.tell()
        try:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        except OSError as exc:
            try:
                fh.truncate(start)
            except OSError:  # a torn last line is still cut off by read_results(repair=True)
                pass
            raise OSError(exc.errno, exc.strerror, str(path)) from exc


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    """Write JSON to ``path`` atomically (temp file in the same folder, fsync, ``os.replace``)."""
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, default=str))


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically: a temp file in the same folder, fsync, ``os.replace``.

    On failure (``OSError``: disk full, permissions) the previous file is untouched and the temp file
    removed; the error names ``path``.
    """
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror, str(path)) from exc


def read_results(path: Path, *, repair: bool = False) -> list[dict[str, Any]]:
    """Read ``results.jsonl``. A torn last line (process killed mid-write) is ignored, and with
    ``repair=True`` cut off the file so later appends start on a clean line.

    Raises
    ------
    DataValidationError
        If a line other than the last is not valid JSON (the file was corrupted, not torn).
    """
    if not path.exists():
        return []
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    records, good_bytes = [], 0
    for i, line in enumerate(lines):
        if not line.strip():
            good_bytes += len(line) + (1 if i < len(lines) - 1 else 0)
            continue
        is_last = i == len(lines) - 1  # no trailing newline: possibly torn
        try:
            records.append(json.loads(line))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:  # a torn line may end inside a UTF-8 character
            if is_last:
                break
            raise DataValidationError(f"{path}: line {i + 1} is not valid JSON ({exc})", row=i, source=str(path)) from exc
        if is_last:
            break  # complete JSON but no newline: keep it, and the newline is added below
        good_bytes += len(line) + 1
    if repair:
        if good_bytes < len(raw):
            tail = raw[good_bytes:]
            try:
                json.loads(tail)
                with open(path, "ab") as fh:  # a complete last record without newline
                    fh.write(b"\n")
            except (json.JSONDecodeError, UnicodeDecodeError):
                with open(path, "r+b") as fh:
                    fh.truncate(good_bytes)
    return records


def set_aside_failed(run_dir: Path) -> int:
    """Move the failed question records of ``run_dir/results.jsonl`` to ``results.replaced.jsonl``.

    The kept lines are rewritten byte for byte (temp file, fsync, ``os.replace``) after the set-aside
    lines are appended and fsynced to the archive, so a crash at any point loses no record. Returns the
    number of records set aside. Call with the folder's lock held and the file repaired
    (:func:`read_results` with ``repair=True``).
    """
    path = run_dir / RESULTS_FILE
    if not path.exists():
        return 0
    keep, moved = [], []
    for line in path.read_bytes().splitlines(keepends=True):
        if not line.strip():
            continue
        line = line if line.endswith(b"\n") else line + b"\n"
        (keep if json.loads(line).get("status") == "ok" else moved).append(line)
    if not moved:
        return 0
    with open(run_dir / REPLACED_FILE, "ab") as fh:
        fh.write(b"".join(moved))
        fh.flush()
        os.fsync(fh.fileno())
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(b"".join(keep))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return len(moved)


def failure_reason(member_errors: list[ErrorInfo], question_error: ErrorInfo | None) -> str:
    """One line saying why a question failed: its members' most common error (``Type: message``), else
    the question's own error (an ensemble failure only says how many members failed)."""
    if member_errors:
        counts = Counter(e.type for e in member_errors)
        top = next(e for e in member_errors if e.type == counts.most_common(1)[0][0])
        return f"{top.type}: {top.message}"
    if question_error is not None:
        return f"{question_error.type}: {question_error.message}"
    return "unknown"


class _CacheOpenedOnFirstUse:
    """A :class:`ResponseCache` opened at the first provider call rather than when providers are built,
    so a command rejected while its inputs are validated leaves no cache folder behind."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._cache: ResponseCache | None = None
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        if self._cache is None:
            with self._lock:
                if self._cache is None:
                    self._cache = ResponseCache(self.directory)
        return getattr(self._cache, name)

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.directory)!r}, opened on first use)"


# --- the run -------------------------------------------------------------------------------------


class QuestionRecord(BaseModel):
    """One line of ``results.jsonl``: every method's and baseline's probability for one question,
    the usage ledger, the leakage audit and the full pipeline trace."""

    question_id: str
    status: str = Field(description="'ok' or 'failed' (the ensemble policy was not met).")
    error: dict[str, Any] | None = Field(None, description="ErrorInfo of a failed question.")
    outcome: int | None = Field(None, description="1 Yes, 0 No, None unresolved.")
    source: str
    question_type: str
    cluster: str = Field(description="Bootstrap cluster: related questions share one (benchmarks.clusters).")
    horizon_days: int | None = None
    forecast_date: str = Field(description="ISO date: the information cutoff.")
    resolution_date: str | None = None
    methods: dict[str, dict[str, Any]] = Field(description="method -> {p_yes, status, note, extra_usage}.")
    baselines: dict[str, dict[str, Any]] = Field(description="baseline -> {p_yes, status, note}.")
    ledger: list[dict[str, Any]] = Field(description="UsageLedger.to_records() of the question.")
    audit: dict[str, int] = Field(description="Leakage audit counts over the prompts sent (benchmarks.leakage.leakage_audit).")
    wall_time_s: float = Field(description="Wall time of the question in seconds.")
    trace: PipelineTrace


@dataclass
class RunSummary:
    """What :meth:`BenchmarkRunner.run` returns."""

    run_dir: Path
    n_questions: int
    n_done_before: int
    n_ok: int
    n_failed: int
    wall_time_s: float
    provider_stats: dict[str, Any] = field(default_factory=dict)
    #: Questions of the run whose record is "ok" / "failed", this session and earlier ones (counts; the
    #: first record of a question counts, as in the report).
    n_ok_total: int = 0
    n_failed_total: int = 0
    #: Why questions failed: the most common reason (see :func:`failure_reason`) and how many had it.
    top_failure: str | None = None
    n_top_failure: int = 0
    #: Failed records set aside for a retry (``retry_failed``).
    n_retried: int = 0
    #: Why the run stopped before every question ran (the manifest's ``stopped``: the cost cap), or None.
    stopped: dict[str, Any] | None = None

    @property
    def all_failed(self) -> bool:
        """True when the run has questions and none of them has an "ok" record."""
        return self.n_questions > 0 and self.n_ok_total == 0


ProviderFactory = Callable[[str], Provider]


class BenchmarkRunner:
    """Runs every method and baseline of a :class:`RunConfig` over its question set.

    Parameters
    ----------
    config : RunConfig
    provider_factory : callable, optional
        ``spec -> Provider`` (default :func:`agent_providers.get_provider`); tests pass scripted ones.
        Each provider is wrapped: cache (outermost) -> retry -> provider.
    search_client : SearchClient, optional
        Overrides ``config.search``.
    questions : list of Question, optional
        Overrides question selection from the config.
    progress : bool
        Show a progress bar on stderr.
    on_start : callable, optional
        ``on_start(run_dir)`` once the inputs are valid and the folder is locked, before the first
        question runs (the command line prints the folder there, so a rejected command prints only its error).
    command_line : list of str, optional
        The command that started the run, recorded in the manifest; pass it redacted
        (:func:`benchmarks.provenance.redacted_command_line`). The manifest also records the git commit,
        package versions and wall time (:mod:`benchmarks.provenance`).
    rate_limit : bool
        Wrap providers in their rate limits (:meth:`rate_limits_for`); False for stand-ins that call no one
        (the dry run).

    How questions run is the config's executor (:mod:`benchmarks.executors`: this process, provider
    batches with ``batch``, or Ray tasks); a ``max_cost_usd`` caps the spend (:mod:`benchmarks.cost_cap`);
    a ``shard`` runs one shard of the selection (:mod:`benchmarks.shards`).
    """

    def __init__(
        self,
        config: RunConfig,
        *,
        provider_factory: ProviderFactory | None = None,
        search_client=None,
        questions: list[Question] | None = None,
        progress: bool = True,
        retry_sleep: Callable[[float], Any] | None = None,
        on_start: Callable[[Path], Any] | None = None,
        command_line: list[str] | None = None,
        rate_limit: bool = True,
    ) -> None:
        self.provider_factory = provider_factory
        self.search_client = search_client
        self._questions = questions
        self.progress = progress
        self.retry_sleep = retry_sleep
        self.on_start = on_start
        self.command_line = command_line
        self.rate_limit = rate_limit
        run_id = validate_run_id(config.run_id) if config.run_id else dt.datetime.now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)
        self.config = config.model_copy(update={"run_id": run_id})
        if config.shard:
            run_id = shard_run_id(run_id, config.shard)
            self.config = self.config.model_copy(update={"run_id": run_id})
        self.run_dir = Path(config.output_dir) / run_id
        #: What this run's providers paid (USD), this session (:mod:`benchmarks.cost_cap`).
        self.spend = SpendMeter()
        #: The manifest's ``shard`` entry of a sharded run (:mod:`benchmarks.shards`), else None.
        self.shard_info: dict[str, Any] | None = None
        self.limiters: dict[str, RateLimitedProvider] = {}
        #: Batch mode's collector of calls (:mod:`agent_providers.batch`), journal ``batches.jsonl``; None otherwise.
        self.batch_collector: BatchCollector | None = None
        self.providers: list[Provider] = []
        self.clusters = ClusterAssignment()
        self._retrying: list[RetryingProvider] = []
        self._caches: list[CachingProvider] = []
        self._adapters: list[Provider] = []

    # --- set-up ----------------------------------------------------------------------------------
    def _base_provider(self, spec: str | None) -> Provider:
        """The bare adapter for ``spec`` (``retry=False``: :meth:`build_providers` adds the one retry layer)."""
        if self.provider_factory is not None:
            return self.provider_factory(spec or "scripted")
        local = (spec or choose_auto_spec().spec).startswith("local")  # the embedded model's options, also when picked automatically
        kwargs = self.config.local_model_options() if local else {}
        return get_provider(spec, retry=False, **kwargs) if spec else auto_provider(retry=False, **kwargs)

    def build_providers(self) -> list[Provider]:
        """One wrapped provider per configured spec: cache -> spend meter -> retry -> rate limits -> provider
        (batch mode: cache -> spend meter -> retry -> :class:`agent_providers.batch.BatchingProvider` -> provider;
        a provider without a batch API raises :class:`agent_providers.batch.BatchUnsupported`).

        The rate limits (:mod:`agent_providers.ratelimit`) are the provider's defaults with
        ``config.rate_limits`` set over them (:meth:`rate_limits_for`); none for scripted and simulated
        providers. The spend meter counts what each paid call cost (:mod:`benchmarks.cost_cap`).

        Credentials: the specs are built as given, then ``config.providers`` keeps only their redacted
        form (:func:`agent_providers.redact_spec`), so the manifest, logs and results never hold a URL's
        user info or secret query values. A resumed run builds from the redacted specs: each ``***``
        query value is read from ``OPENAI_COMPATIBLE_QUERY_<NAME>`` (e.g. ``?key=***`` from
        ``OPENAI_COMPATIBLE_QUERY_KEY``) and a missing variable is an :class:`AuthenticationFailed`
        naming it; API keys always come from the environment (``OPENAI_COMPATIBLE_API_KEY``, ...).
        """
        specs: list[str | None] = list(self.config.providers) or [None]
        out = []
        cache_dir = Path(self.config.cache_dir) if self.config.cache_dir else self.run_dir / "cache"
        cache = _CacheOpenedOnFirstUse(cache_dir) if self.config.cache else None
        async_sleep = _as_async(self.retry_sleep) if self.retry_sleep is not None else None
        if self.config.batch and self.batch_collector is None:
            self.batch_collector = BatchCollector(self.run_dir / BATCHES_FILE, poll_interval_s=self.config.batch_poll_s)
        for spec in specs:
            p = self._base_provider(spec)
            self._adapters.append(p)
            limits = self.rate_limits_for(p.spec) if self.rate_limit and not self.config.batch else None
            if self.batch_collector is not None:  # batch APIs have their own queues: no rate limiter
                p = BatchingProvider(p, self.batch_collector)
            elif limits is not None:  # one limiter per provider spec, shared by every role using it
                limited = self.limiters.get(p.spec) or RateLimitedProvider(p, limits)
                self.limiters[p.spec] = limited
                p = limited
            r = RetryingProvider(p, RetryPolicy(max_attempts=self.config.max_attempts, seed=self.config.seed),
                                 sleep=self.retry_sleep, async_sleep=async_sleep)
            self._retrying.append(r)
            wrapped: Provider = MeteredProvider(r, self.spend)
            if cache is not None:
                c = CachingProvider(wrapped, cache)
                self._caches.append(c)
                wrapped = c
            out.append(wrapped)
        self.providers = out
        if self.config.providers:
            self.config = self.config.model_copy(update={"providers": [redact_spec(s) for s in self.config.providers]})
        return out

    def rate_limits_for(self, spec: str) -> RateLimits | None:
        """The rate limits of provider ``spec``: its defaults (:func:`agent_providers.ratelimit.default_limits`)
        with ``config.rate_limits[spec]`` or ``config.rate_limits[<prefix>]`` set over them; None when
        neither gives one."""
        prefix = spec.split("/", 1)[0]
        text = self.config.rate_limits.get(redact_spec(spec)) or self.config.rate_limits.get(prefix)
        base = default_limits(spec)
        if text is None:
            return base
        return parse_rate_limits(text, base=base)

    def execution_info(self) -> dict[str, Any]:
        """How the run executes, for the manifest: executor, batch mode and each provider's rate limits."""
        return {"executor": self.config.executor, "batch": self.config.batch,
                "rate_limits": {redact_spec(spec): {**lim.limits.to_dict(), "requests_sent": lim.stats.requests,
                                                    "rate_limited": lim.stats.rate_limited,
                                                    "paused_s": round(lim.stats.paused_s, 3)}
                                for spec, lim in self.limiters.items()}}

    def cost_cap(self, questions: list[Question], done_records: list[dict[str, Any]]) -> CostCap:
        """The :class:`benchmarks.cost_cap.CostCap` of a run with ``max_cost_usd``: what earlier sessions paid
        (the manifest's ``spend``, else the cost of the records), the finished questions' costs and the
        dry-run estimate per question (at batch prices for a batch run).

        Raises
        ------
        DataValidationError
            When a provider's price is unknown (``openai-compatible``, an unpriced model): the cap could
            not be kept.
        """
        from benchmarks.estimate import estimate_run

        unpriced = [s for s in self.model_specs() if cost_usd(s, TokenUsage(input_tokens=1, output_tokens=1, calls=1)) is None]
        if unpriced:
            raise DataValidationError(
                f"--max-cost needs known prices, and {', '.join(redact_spec(s) for s in unpriced)} has none "
                "(genai-prices): drop --max-cost or use a priced model", field="max_cost_usd", value=self.config.max_cost_usd)
        manifest_path = self.run_dir / MANIFEST_FILE
        spend = json.loads(manifest_path.read_text(encoding="utf-8")).get("spend") if manifest_path.exists() else None
        finished = [record_cost(r) for r in done_records]
        paid_before = float(spend["paid_usd_total"]) if spend and spend.get("paid_usd_total") is not None else sum(finished)
        est = estimate_run(self.config, questions=questions, provider_factory=self.provider_factory)
        prior = (est.totals()["usd_batch" if self.config.batch else "usd"] or 0.0) / max(len(est.questions), 1)
        return CostCap(max_usd=float(self.config.max_cost_usd),  # type: ignore[arg-type]  # only called with a cap
                       paid_before_usd=paid_before, prior_per_question_usd=prior, finished_costs=finished)

    def bind_questions(self, questions: list[Question]) -> None:
        """Hand the harness's records of ``questions`` (outcomes included) to the providers that simulate
        from them (a ``bind_questions`` method: :class:`agent_providers.SimulatorProvider`); models never get them."""
        for adapter in self._adapters:
            bind = getattr(adapter, "bind_questions", None)
            if bind is not None:
                bind(questions)

    def build_executor(self) -> ToolExecutor | None:
        """The research backend behind the cutoff guard: the given client, else ``config.search``
        (``local``: :meth:`LocalCorpusSearch.default`; ``ddg``: DuckDuckGo; ``none``: no research)."""
        kw = {"snippet_chars": self.config.snippet_chars}
        if self.search_client is not None:
            return ToolExecutor(self.search_client, **kw)
        if self.config.search == "none":
            return None
        if self.config.search == "ddg":
            from agent_tools import DuckDuckGoSearch

            return ToolExecutor(DuckDuckGoSearch(), **kw)
        from agent_tools import LocalCorpusSearch

        return ToolExecutor(LocalCorpusSearch.default(), **kw)

    def build_pipeline(self) -> ForecastPipeline:
        """The pipeline every question runs: :meth:`ForecastPipeline.from_config` of the config's pipeline
        (:meth:`RunConfig.pipeline_for_methods`: debate and supervisor only when a method needs them) on the
        run's providers (members cycle over them; debate on the first, supervisor on the last) and search."""
        providers = self.providers or self.build_providers()
        return ForecastPipeline.from_config(providers, self.build_executor(), self.config.pipeline_for_methods())

    def concurrency(self) -> int:
        """Questions in flight: the config's value, else, when every provider is embedded, as many as their
        models compute at once (``parallel_calls``: one question per model context, so each question's
        calls reuse its context's prompt prefix), else 8."""
        if self.config.concurrency:
            return self.config.concurrency
        if all(s.startswith("local") for s in self.model_specs()):
            return max(getattr(a, "parallel_calls", 1) for a in self._adapters)
        return 8

    def model_specs(self) -> list[str]:
        """Specs of the run's providers (built on first use)."""
        return [p.spec for p in (self.providers or self.build_providers())]

    def cutoff_filter(self, *, strict: bool = True) -> dict[str, Any]:
        """The contamination filter this run applies, for the manifest: each model's training cutoff, the
        date questions must be due after (``applied_after``), what it rests on (``basis``) and why.

        Fails closed: when any model's cutoff is unknown (not in :mod:`benchmarks.model_cutoffs`, or a
        moving alias such as ``*-latest``), the run stops unless the user set ``forecast_date_from``
        (``--date-from``; then that date is the bound and the note says so) or turned the filter off
        explicitly (``after_model_cutoff=False``, ``--include-before-cutoff``). The scripted and simulated
        (``sim``) providers were trained on nothing and are left out of the check. ``strict=False`` records an unknown cutoff
        instead of raising (questions passed to the runner directly are not filtered).

        Raises
        ------
        DataValidationError
            For an unknown cutoff without ``forecast_date_from`` (the message names the models and the fix).
        """
        cfg = self.config
        cutoffs = {s: training_cutoff(s) for s in self.model_specs() if not _untrained(s)}
        unknown = [s for s, c in cutoffs.items() if c is None]
        info: dict[str, Any] = {"requested": cfg.after_model_cutoff,
                                "model_cutoffs": {s: (c.isoformat() if c else None) for s, c in cutoffs.items()},
                                "margin_days": cfg.cutoff_margin_days, "applied_after": None, "basis": None}
        if not cfg.after_model_cutoff:
            info["note"] = ("off (--include-before-cutoff): questions due before the models' training cutoffs are "
                            "included and may be contaminated")
        elif not cutoffs:
            info["note"] = "no trained model in the run (scripted or simulated provider): nothing to filter"
        elif unknown and cfg.forecast_date_from is None:
            if not strict:
                info["note"] = f"training cutoff unknown for {', '.join(unknown)}: not applied (questions given directly)"
                return info
            raise DataValidationError(
                f"training cutoff unknown for {', '.join(unknown)}: the contamination filter cannot be applied. "
                "Pass --date-from YYYY-MM-DD (a date after the model's training cutoff), or "
                "--include-before-cutoff to accept contaminated questions", field="providers", value=unknown)
        elif unknown:
            after = cfg.forecast_date_from - dt.timedelta(days=1)  # type: ignore[operator]
            info.update(applied_after=after.isoformat(), basis="--date-from",
                        note=(f"training cutoff unknown for {', '.join(unknown)}: questions due on or after "
                              f"{cfg.forecast_date_from} (--date-from) are used; the bound is the user's"))
        else:
            after = max(cutoffs.values()) + dt.timedelta(days=cfg.cutoff_margin_days)  # type: ignore[type-var, operator]
            info.update(applied_after=after.isoformat(), basis="model_cutoffs",
                        note=(f"questions due after {after} (latest training cutoff of the models"
                              + (f" + {cfg.cutoff_margin_days} days margin)" if cfg.cutoff_margin_days else ")")))
        return info

    def select_shard(self, questions: list[Question]) -> list[Question]:
        """The questions of this run's shard (:mod:`benchmarks.shards`); sets :attr:`shard_info` for the manifest.

        Raises
        ------
        DataValidationError
            When the shard holds no question (more shards than questions).
        """
        i, n = parse_shard(self.config.shard or "0/1")
        mine = [q for q in questions if shard_of(q.id, n) == i]
        self.shard_info = {"index": i, "count": n, "n_questions_all": len(questions),
                           "selection_digest": selection_digest([q.id for q in questions]),
                           "config_digest": config_digest(self.config.model_dump(mode="json"))}
        if not mine:
            raise DataValidationError(f"shard {i}/{n} holds none of the {len(questions)} selected questions",
                                      field="shard", value=self.config.shard)
        return mine

    def selection(self) -> dict[str, Any]:
        """Every filter the question selection applies (recorded in the manifest as ``question_selection``):
        the effective forecast-date bounds, the contamination filter and the survivorship rule."""
        cfg = self.config
        given = self._questions is not None
        cutoff = self.cutoff_filter(strict=not given)
        date_from = cfg.forecast_date_from
        if cutoff["applied_after"]:
            after = dt.date.fromisoformat(cutoff["applied_after"]) + dt.timedelta(days=1)
            date_from = max(date_from, after) if date_from else after
        bundled = self._questions is None and not cfg.questions_file
        close_to = DATA_SNAPSHOT_DATE if (bundled and cfg.close_by_snapshot) else None
        return {
            "source": "given (no filter applied)" if given else (
                " + ".join(f for f in (cfg.questions_file, cfg.resolutions_file) if f) or "bundled ForecastBench"),
            "forecast_date_from": date_from.isoformat() if date_from else None,
            "forecast_date_to": cfg.forecast_date_to.isoformat() if cfg.forecast_date_to else None,
            "scheduled_close_to": close_to.isoformat() if close_to else None,
            "survivorship_rule": (
                f"scheduled close on or before the outcome snapshot {DATA_SNAPSHOT_DATE}" if close_to else
                ("off (--include-unclosed)" if bundled else "not applicable (user questions)")),
            "contamination_filter": cutoff,
        }

    def select_questions(self) -> list[Question]:
        """The run's questions: given, from a user file, or from the bundled ForecastBench data, through the
        same filters (:meth:`selection`: forecast-date bounds including the contamination filter; for bundled
        data also the survivorship rule), then a seeded sample of ``sample_n``.

        Raises
        ------
        DataValidationError
            From :meth:`cutoff_filter` (unknown training cutoff), or a malformed question file.
        """
        if self._questions is not None:
            return list(self._questions)
        cfg = self.config
        sel = self.selection()
        date_from = dt.date.fromisoformat(sel["forecast_date_from"]) if sel["forecast_date_from"] else None
        if cfg.questions_file:
            qs = [q for q in load_questions_file(cfg.questions_file, cfg.resolutions_file)
                  if (date_from is None or q.forecast_date >= date_from)
                  and (cfg.forecast_date_to is None or q.forecast_date <= cfg.forecast_date_to)]
            if cfg.sample_n and len(qs) > cfg.sample_n:
                keep = set(random.Random(cfg.seed).sample(range(len(qs)), cfg.sample_n))
                log.warning("%s has %d questions after the filters; using a seeded sample of %d (--n 0 for all)",
                            cfg.questions_file, len(qs), cfg.sample_n)
                qs = [q for i, q in enumerate(qs) if i in keep]
            return qs
        return list(load_forecastbench(
            sources=cfg.sources, question_type=cfg.question_type, forecast_date_from=date_from,
            forecast_date_to=cfg.forecast_date_to, scheduled_close_to=sel["scheduled_close_to"],
            one_per_source_question=cfg.one_per_source_question, sample_n=cfg.sample_n, seed=cfg.seed,
        ))

    # --- manifest ----------------------------------------------------------------------------------
    def _manifest(self, questions: list[Question], status: dict[str, str], started: str, extra: dict[str, Any]) -> dict[str, Any]:
        config = self.config.model_dump(mode="json")
        config["providers"] = [redact_spec(s) for s in config.get("providers") or []]  # never a credential
        return {
            "run_id": self.config.run_id,
            "created_at": started,
            "updated_at": dt.datetime.now(dt.timezone.utc).isoformat(),
            "package": "forecast-reconcile",
            "package_version": package_version(),
            "python": sys.version.split()[0],
            "config": config,
            "providers": [{"spec": redact_spec(p.spec), "model": p.model} for p in self.providers],
            "prices": PRICE_SOURCE,
            "seed": self.config.seed,
            "question_selection": self.selection(),
            "question_ids": [q.id for q in questions],
            "clusters": self.clusters.summary(),
            "question_status": status,
            "command_line": self.command_line,
            "git": git_commit(),
            "package_versions": package_versions(),
            **extra,
        }

    def provider_stats(self) -> dict[str, Any]:
        """Retry counters (calls = ok + retries + failures) and cache hits/misses, summed over providers."""
        stats: dict[str, Any] = {"calls": 0, "ok": 0, "retries": 0, "failures": 0, "cache_hits": 0, "cache_misses": 0}
        for r in self._retrying:
            for k, v in r.stats().items():
                stats[k] += v
        for c in self._caches:
            s = c.stats()
            stats["cache_hits"] += s["hits"]
            stats["cache_misses"] += s["misses"]
        return stats

    # --- execution ---------------------------------------------------------------------------------
    def question_record(self, q: Question, trace: PipelineTrace, baselines: dict[str, dict[str, Any]]) -> "QuestionRecord":
        """The JSONL record of one finished question."""
        return QuestionRecord(
            question_id=q.id,
            status=trace.status,
            error=trace.error.model_dump() if trace.error else None,
            outcome=q.outcome,
            source=q.source,
            question_type=q.question_type,
            cluster=self.clusters.labels.get(q.id, q.cluster_id),
            horizon_days=q.horizon_days,
            forecast_date=q.forecast_date.isoformat(),
            resolution_date=q.resolution_date.isoformat() if q.resolution_date else None,
            methods=method_rows(trace, self.config.methods, min_spread=self.config.pipeline.reconcile_min_spread),
            baselines=baselines.get(q.id, {}),
            ledger=trace.ledger.to_records(),
            audit=leakage_audit(trace, q),
            wall_time_s=trace.wall_time_s,
            trace=trace,
        )

    def run(self) -> RunSummary:
        """Run the benchmark synchronously (also from a notebook's running event loop); see :meth:`arun`."""
        return run_sync(self.arun())

    async def arun(self, *, resume: bool = False, retry_failed: bool = False) -> RunSummary:
        """Run every pending question; finished ones (in ``results.jsonl``) are skipped.

        Inputs are validated first (config, question selection, providers, a resumed run's manifest);
        only then is the folder created and locked (``.lock``, held until the run ends). A question
        whose pipeline raises anything unexpected is recorded as failed with its typed error; the other
        questions go on.

        Parameters
        ----------
        resume : bool
            Continue the run in ``run_dir``: questions with a record are not run again.
        retry_failed : bool
            With ``resume``: set the failed records aside (:func:`set_aside_failed`) and run those
            questions again. The folder then holds one record per question, the latest attempt; reports
            keep the first record of a question if a folder ever holds two.

        Raises
        ------
        FileExistsError
            When the run folder already holds results and ``resume`` is False.
        RunFolderBusy
            When another process holds the run folder's lock (names the folder and the lock file).
        ResultsWriteError
            When a record cannot be written (disk full...); the run stops, earlier records are intact.
        DataValidationError
            When no question matches the filters, a question file is malformed (row, column and value
            named), or a resumed run would select other questions than its manifest records.
        ReconcileError
            From building a provider (``MissingDependency``, ``AuthenticationFailed``, ``UnknownProvider``).
        """
        t0 = time.perf_counter()
        results_path = self.run_dir / RESULTS_FILE
        manifest_path = self.run_dir / MANIFEST_FILE
        if retry_failed and not resume:
            raise ValueError("retry_failed re-runs the failed questions of an existing run: it needs resume=True (--resume)")
        self._refuse_existing_results(resume)
        # --- validate every input before anything is written --------------------------------------
        if not self.providers:
            self.build_providers()  # the response cache opens at the first call, not here
        if not self.config.providers:  # record what auto_provider() picked, so a resume uses the same models
            self.config = self.config.model_copy(update={"providers": [redact_spec(p.spec) for p in self.providers]})
        questions = self.select_questions()
        if not questions:
            raise DataValidationError("no questions match the run's filters", field="questions", value=0)
        self.clusters = sibling_clusters(questions)  # over the whole selection: a shard's records get the run's clusters
        if self.config.shard:
            questions = self.select_shard(questions)
        self.bind_questions(questions)
        if resume and manifest_path.exists():
            recorded = json.loads(manifest_path.read_text(encoding="utf-8")).get("question_ids")
            if recorded is not None and recorded != [q.id for q in questions]:
                raise DataValidationError(
                    f"{self.run_dir}: the resumed run selects other questions than the manifest records "
                    "(different providers, filters or question file?)", field="question_ids", value=len(questions))
        pipeline = self.build_pipeline()
        baselines = baseline_table(questions, self.config.baselines)
        # --- one writer from here on --------------------------------------------------------------
        lock = self._lock()
        try:
            self._refuse_existing_results(resume)  # again under the lock: another run may have written meanwhile
            if self.on_start is not None:
                self.on_start(self.run_dir)
            done_records = read_results(results_path, repair=resume)
            n_retried = set_aside_failed(self.run_dir) if retry_failed else 0
            if n_retried:
                log.info("%s: %d failed question(s) set aside in %s; running them again", self.run_dir, n_retried, REPLACED_FILE)
                done_records = read_results(results_path)
            return await self._run_pending(questions, done_records, pipeline, baselines, t0, n_retried)
        finally:
            lock.release()

    def _refuse_existing_results(self, resume: bool) -> None:
        path = self.run_dir / RESULTS_FILE
        if not resume and path.exists() and path.stat().st_size:
            raise FileExistsError(f"{self.run_dir} already has results; continue it with resume (--resume {self.run_dir.name})")

    def _lock(self) -> FileLock:
        """Create the run folder and take its lock at once (no waiting).

        Raises
        ------
        RunFolderBusy
            When another process (or another runner in this one) holds it.
        """
        self.run_dir.mkdir(parents=True, exist_ok=True)
        path = self.run_dir / LOCK_FILE
        lock = FileLock(str(path))
        try:
            lock.acquire(blocking=False)
        except Timeout:
            raise RunFolderBusy(f"{self.run_dir} is being written by another run (its lock {path} is held); "
                                "wait for that run to finish or stop it, then resume", path=str(path)) from None
        return lock

    async def run_question(self, pipeline: ForecastPipeline, q: Question, baselines: dict[str, dict[str, Any]]) -> QuestionRecord:
        """Run one question; anything its pipeline raises becomes a failed record with the typed error."""
        return self.question_record(q, await self.run_trace(pipeline, q), baselines)

    async def run_trace(self, pipeline: ForecastPipeline, q: Question) -> PipelineTrace:
        """The pipeline's trace of one question (what the agents may see of it: :meth:`Question.visible`);
        anything the pipeline raises gives a failed trace with the typed error (:meth:`failed_trace`)."""
        visible = q.visible(show_crowd=self.config.show_crowd)
        try:
            return await pipeline.arun(visible)
        except Exception as exc:
            return self.failed_trace(q, exc)

    def failed_trace(self, q: Question, exc: BaseException) -> PipelineTrace:
        """The trace of a question whose run raised ``exc`` (status "failed", the typed error); logged, the run goes on."""
        log.warning("question %s failed with an unexpected %s: %s (the run goes on)", q.id, type(exc).__name__, exc)
        return PipelineTrace(question=q.visible(show_crowd=self.config.show_crowd), status="failed",
                             error=as_reconcile_error(exc).to_info(), final_source="question failed")

    async def _run_pending(self, questions: list[Question], done_records: list[dict[str, Any]], pipeline: ForecastPipeline,
                           baselines: dict[str, dict[str, Any]], t0: float, n_retried: int) -> RunSummary:
        from benchmarks.executors import executor_for

        session = RunSession(self, questions, done_records, baselines, t0)
        session.write_manifest()
        pending = [q for q in questions if session.status[q.id] == "pending"]
        if self.config.max_cost_usd is not None:
            session.cap = self.cost_cap(questions, done_records)
            session.paid_before_usd = session.cap.paid_before_usd  # a run from before the spend was recorded: its records' cost
        try:
            await executor_for(self.config).run(self, session, pending, pipeline)
        finally:
            session.close()
        return session.summary(n_retried)


class RunSession:
    """One session of a run: the questions' statuses, the durable writing of their records (``results.jsonl``
    appended and fsynced, the manifest rewritten at most once per :data:`MANIFEST_INTERVAL_S`), the cost
    cap and why the run stopped. Every executor (:mod:`benchmarks.executors`) reports to it; it alone writes.

    Parameters
    ----------
    runner : BenchmarkRunner
    questions : list of Question
        Every question of the run (shard).
    done_records : list of dict
        Records already in ``results.jsonl``.
    baselines : dict
        :func:`baseline_table` of the questions.
    t0 : float
        ``time.perf_counter()`` of the session's start.
    """

    def __init__(self, runner: BenchmarkRunner, questions: list[Question], done_records: list[dict[str, Any]],
                 baselines: dict[str, dict[str, Any]], t0: float) -> None:
        self.runner = runner
        self.questions = questions
        self.baselines = baselines
        self.t0 = t0
        self.results_path = runner.run_dir / RESULTS_FILE
        self.manifest_path = runner.run_dir / MANIFEST_FILE
        self.n_done_before = len({r["question_id"] for r in done_records})
        self.status = {q.id: "pending" for q in questions}
        self.reasons: dict[str, str] = {}
        for r in reversed(done_records):  # the first record of a question wins (see benchmarks.report.load_run)
            ok = r["status"] == "ok"
            self.status[r["question_id"]] = "done" if ok else "failed"
            if not ok:
                trace = r.get("trace") or {}
                self.reasons[r["question_id"]] = failure_reason(
                    [ErrorInfo.model_validate(f["error"]) for f in trace.get("forecasts", []) if f.get("error")],
                    ErrorInfo.model_validate(trace["error"]) if trace.get("error") else None)
        previous = json.loads(self.manifest_path.read_text(encoding="utf-8")) if self.manifest_path.exists() else {}
        #: The run's start (ISO, UTC; kept over resumed sessions), the wall time of its earlier sessions (s) and
        #: what they paid (USD), from the manifest of a resumed run.
        self.started = previous.get("created_at") or dt.datetime.now(dt.timezone.utc).isoformat()
        self.earlier_s = float(previous.get("wall_time_s_total") or 0.0)
        self.paid_before_usd = float((previous.get("spend") or {}).get("paid_usd_total") or 0.0)
        self.n_ok = self.n_failed = 0
        #: USD paid this session by providers outside this process (Ray workers report it with each record).
        self.remote_paid_usd = 0.0
        self.cap: CostCap | None = None
        #: Why the run stopped before every question ran (the manifest's ``stopped``), or None.
        self.stopped: dict[str, Any] | None = None
        #: Extra manifest entries an executor keeps up to date (e.g. ``batches``).
        self.extra: dict[str, Any] = {}
        self._last_manifest = time.monotonic()
        self._write_lock = asyncio.Lock()
        self._write_failed: list[OSError] = []
        self._bar = _progress(len(questions), sum(v in ("done", "failed") for v in self.status.values()),
                              enabled=runner.progress)

    # --- accounting --------------------------------------------------------------------------------
    @property
    def paid_now_usd(self) -> float:
        """USD paid this session: the run's providers here (:class:`benchmarks.cost_cap.SpendMeter`) and remote workers."""
        return self.runner.spend.paid_usd + self.remote_paid_usd

    @property
    def n_in_flight(self) -> int:
        return sum(v == "in_flight" for v in self.status.values())

    def may_start(self, in_flight: int | None = None) -> bool:
        """True when the cost cap (if any) lets one more question start (:meth:`CostCap.may_start`)."""
        if self.cap is None:
            return True
        self.cap.paid_now_usd = self.paid_now_usd
        return self.cap.may_start(self.n_in_flight if in_flight is None else in_flight)

    def cap_exhausted(self) -> bool:
        """True once the money paid reached the cost cap (in-flight questions are then cancelled)."""
        if self.cap is None:
            return False
        self.cap.paid_now_usd = self.paid_now_usd
        return self.cap.exhausted()

    def stop_for_cost(self, n_cancelled: int = 0) -> None:
        """Record that the cost cap stopped the run (the manifest's ``stopped``), once."""
        if self.cap is None:
            return
        self.cap.paid_now_usd = self.paid_now_usd
        n_not_started = sum(v == "pending" for v in self.status.values())
        if self.stopped is None:
            self.stopped = self.cap.stop_record(n_not_started=n_not_started, n_cancelled=n_cancelled)
            log.warning("%s: %s", self.runner.run_dir, self.stopped["note"])
        else:
            self.stopped.update(n_not_started=n_not_started, n_cancelled=self.stopped["n_cancelled"] + n_cancelled,
                                paid_usd=round(self.cap.paid_usd, 6))

    # --- questions ---------------------------------------------------------------------------------
    def start(self, q: Question) -> None:
        """Mark ``q`` in flight."""
        self.status[q.id] = "in_flight"

    def unstart(self, q: Question) -> None:
        """Put an in-flight question back to pending (it was cancelled; a resume runs it)."""
        if self.status.get(q.id) == "in_flight":
            self.status[q.id] = "pending"

    async def finish(self, q: Question, record: QuestionRecord, *, paid_usd: float | None = None) -> None:
        """Append ``record`` to ``results.jsonl`` (fsynced off the event loop) and update the statuses and,
        at most once per :data:`MANIFEST_INTERVAL_S`, the manifest. ``paid_usd``: what a remote worker
        paid for it.

        Raises
        ------
        ResultsWriteError
            When the record cannot be written; no other record is written after it (the run is stopping).
        """
        async with self._write_lock:  # appends stay whole lines; fsync runs off the event loop
            if self._write_failed:
                return
            try:
                await asyncio.to_thread(append_jsonl, self.results_path, record)
            except OSError as exc:
                self._write_failed.append(exc)
                saved = sum(v in ("done", "failed") for v in self.status.values())
                raise ResultsWriteError(
                    f"could not append the record of question {q.id} to {self.results_path} ({exc.strerror}); "
                    f"the {saved} records written before are intact: fix the cause and resume the run",
                    path=str(self.results_path)) from exc
        if paid_usd:
            self.remote_paid_usd += paid_usd
        ok = record.status == "ok"
        self.status[q.id] = "done" if ok else "failed"
        self.n_ok += ok
        self.n_failed += not ok
        if self.cap is not None:
            from benchmarks.cost_cap import record_cost

            self.cap.finished_costs.append(record_cost(record.model_dump(include={"ledger"})))
        if not ok:
            self.reasons[q.id] = failure_reason([f.error for f in record.trace.forecasts if f.error], record.trace.error)
        if time.monotonic() - self._last_manifest >= MANIFEST_INTERVAL_S:
            self.write_manifest()
        self._bar.advance()

    # --- manifest and summary ----------------------------------------------------------------------
    def timing(self) -> dict[str, float]:
        now = time.perf_counter() - self.t0
        return {"wall_time_s": round(now, 3), "wall_time_s_total": round(self.earlier_s + now, 3)}

    def write_manifest(self) -> None:
        """Rewrite the manifest atomically with the current statuses, spend, stop reason and executor extras."""
        r = self.runner
        extra = {"provider_stats": r.provider_stats(), **self.timing(),
                 "spend": {"paid_usd_total": round(self.paid_before_usd + self.paid_now_usd, 6),
                           "paid_usd_session": round(self.paid_now_usd, 6),
                           "max_cost_usd": r.config.max_cost_usd},
                 "stopped": self.stopped, "execution": r.execution_info(), **self.extra}
        if r.shard_info is not None:
            extra["shard"] = r.shard_info
        write_json_atomic(self.manifest_path, r._manifest(self.questions, self.status, self.started, extra))
        self._last_manifest = time.monotonic()

    def close(self) -> None:
        """Stop the progress bar and write the final manifest (a failure to write it is logged: ``results.jsonl``
        is the durable record and the manifest is rebuilt from it on resume)."""
        self._bar.close()
        try:
            self.write_manifest()
        except OSError as exc:
            log.warning("could not update %s: %s", self.manifest_path, exc.strerror)

    def summary(self, n_retried: int) -> RunSummary:
        questions, status = self.questions, self.status
        failed_now = [self.reasons[q.id] for q in questions if status[q.id] == "failed" and q.id in self.reasons]
        top = Counter(r.split(":", 1)[0] for r in failed_now).most_common(1)
        top_reason = next((r for r in failed_now if r.split(":", 1)[0] == top[0][0]), None) if top else None
        return RunSummary(self.runner.run_dir, len(questions), self.n_done_before, self.n_ok, self.n_failed,
                          time.perf_counter() - self.t0, self.runner.provider_stats(),
                          n_ok_total=sum(v == "done" for v in status.values()),
                          n_failed_total=sum(v == "failed" for v in status.values()),
                          top_failure=top_reason, n_top_failure=top[0][1] if top else 0, n_retried=n_retried,
                          stopped=self.stopped)


def _untrained(spec: str) -> bool:
    """Specs of providers that were trained on no data (contamination does not apply): scripted, sim."""
    return spec.split("/", 1)[0] in ("scripted", "sim")


def _as_async(sleep: Callable[[float], Any]) -> Callable[[float], Any]:
    """An awaitable form of a sync ``sleep(seconds)`` (tests inject a no-op)."""

    async def async_sleep(seconds: float) -> None:
        sleep(seconds)

    return async_sleep


def baseline_table(questions: list[Question], names: list[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """Baseline probabilities per question: ``{qid: {name: {"p_yes", "status", "note"}}}``."""
    df = compute_baselines(questions)
    out: dict[str, dict[str, dict[str, Any]]] = {q.id: {} for q in questions}
    for qid, method, p_yes, detail in zip(df["question_id"], df["method"], df["p_yes"], df["detail"]):
        if method not in names:
            continue
        p = None if p_yes != p_yes else float(p_yes)  # NaN: not available
        out[qid][method] = {"p_yes": p, "status": "ok" if p is not None else "unavailable", "note": detail}
    return out


class _progress:
    """A rich progress bar on stderr (disabled for tests and when not wanted)."""

    def __init__(self, total: int, completed: int, *, enabled: bool) -> None:
        self._p = None
        if enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._p = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                               console=Console(stderr=True))
            self._p.start()
            self._task = self._p.add_task("questions", total=total, completed=completed)

    def advance(self) -> None:
        if self._p is not None:
            self._p.advance(self._task)

    def close(self) -> None:
        if self._p is not None:
            self._p.stop()
