"""The benchmark harness: one shared ensemble run per question, every method and baseline, durable results.

:class:`BenchmarkRunner` validates a run's inputs (config, providers, question selection, a resumed run's
manifest), locks the run folder (:mod:`benchmarks.run_folder`), resumes what is there and hands the pending
questions to the config's executor (:mod:`benchmarks.harness.executors`), which reports each to the session
(:class:`benchmarks.harness.session.RunSession`). The parts it puts together are objects of their own: the
provider stack (:mod:`benchmarks.harness.provider_stack`), the question selection
(:mod:`benchmarks.harness.selection`), the manifest (:mod:`benchmarks.harness.manifest`) and the records
(:mod:`benchmarks.harness.records`).

Nothing is written before the run's inputs validate (config, questions, providers); the response
cache opens at the first provider call. A question's pipeline that raises anything unexpected gives a
failed question record (status "failed", typed error) and the run goes on.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_providers import redact_spec, run_sync
from agent_providers.pricing import cost_usd
from agent_research import ForecastPipeline, GivenForecasts
from agent_schemas import DataValidationError, Question, TokenUsage
from benchmarks.harness.config import RunConfig
from benchmarks.harness.cost_cap import CostCap, record_cost
from benchmarks.harness.estimate import estimate_run
from benchmarks.harness.executors import executor_for
from benchmarks.harness.manifest import RunManifest
from benchmarks.harness.provider_stack import ProviderFactory, ProviderStack
from benchmarks.harness.records import baseline_table
from benchmarks.harness.selection import QuestionPool, QuestionSelection, refuse_changed_questions
from benchmarks.harness.session import RunSession, RunSummary
from benchmarks.protocol.clusters import ClusterAssignment, sibling_clusters
from benchmarks.run_folder.durable import RunFolderLock, lock_run_folder, set_aside_failed
from benchmarks.run_folder.layout import MANIFEST_FILE, REPLACED_FILE, RESULTS_FILE
from benchmarks.run_folder.load import read_records

__all__ = ["BenchmarkRunner"]

log = logging.getLogger(__name__)


class BenchmarkRunner:
    """Runs every method and baseline of a :class:`RunConfig` over its question set.

    Parameters
    ----------
    config : RunConfig
    provider_factory : callable, optional
        ``spec -> Provider`` (default :func:`agent_providers.get_provider`); tests pass scripted ones.
        Each provider is wrapped (:class:`benchmarks.harness.provider_stack.ProviderStack`).
    search_client : SearchClient, optional
        Overrides ``config.search``.
    questions : list of Question or QuestionPool, optional
        Overrides question selection from the config: a list is used as given; a
        :class:`~benchmarks.harness.selection.QuestionPool` (a panel's questions) is filtered as a question file is.
    ensemble : GivenForecasts, optional
        The members' forecasts, given instead of run, of a config with ``ensemble="given"`` (a panel's:
        :meth:`benchmarks.panels.Panel.ensemble`); the providers, if any, run only the debate and the supervisor.
    progress : bool
        Show a progress bar on stderr.
    on_start : callable, optional
        ``on_start(run_dir)`` once the inputs are valid and the folder is locked, before the first
        question runs (the command line prints the folder there, so a rejected command prints only its error).
    command_line : list of str, optional
        The command that started the run, recorded in the manifest; pass it redacted
        (:func:`benchmarks.harness.provenance.redacted_command_line`). The manifest also records the git commit,
        package versions and wall time (:mod:`benchmarks.harness.provenance`).
    rate_limit : bool
        Wrap providers in their rate limits; False for stand-ins that call no one.

    Raises
    ------
    ValueError
        When ``ensemble`` is given without ``config.ensemble == "given"``, or the other way round.

    How questions run is the config's executor (:mod:`benchmarks.harness.executors`: this process, provider
    batches with ``batch``, or Ray tasks); a ``max_cost_usd`` caps the spend (:mod:`benchmarks.harness.cost_cap`);
    a ``shard`` runs one shard of the selection (:mod:`benchmarks.run_folder.shards`).
    """

    def __init__(
        self,
        config: RunConfig,
        *,
        provider_factory: ProviderFactory | None = None,
        search_client=None,
        questions: list[Question] | QuestionPool | None = None,
        ensemble: GivenForecasts | None = None,
        progress: bool = True,
        retry_sleep: Callable[[float], Any] | None = None,
        on_start: Callable[[Path], Any] | None = None,
        command_line: list[str] | None = None,
        rate_limit: bool = True,
    ) -> None:
        self._questions = questions
        self.progress = progress
        self.on_start = on_start
        self.command_line = command_line
        self.config = config.with_run_id()
        self.run_dir = self.config.run_folder()
        #: The run's providers, their meter and counters, and its research backend.
        self.stack = ProviderStack(self.config, self.run_dir, provider_factory=provider_factory, search_client=search_client,
                                   retry_sleep=retry_sleep, rate_limit=rate_limit, ensemble=ensemble)
        self.clusters = ClusterAssignment()
        #: The manifest's ``shard`` entry of a sharded run (:mod:`benchmarks.run_folder.shards`), else None.
        self.shard_info: dict[str, Any] | None = None

    @property
    def selection(self) -> QuestionSelection:
        """The run's question selection, on its providers' models (built on first use)."""
        return QuestionSelection(self.config, self.stack.model_specs(), self._questions)

    def build_pipeline(self) -> ForecastPipeline:
        """The pipeline every question runs (:meth:`benchmarks.harness.provider_stack.ProviderStack.pipeline`)."""
        return self.stack.pipeline()

    def cost_cap(self, questions: list[Question], done_records: list[dict[str, Any]]) -> CostCap:
        """The :class:`benchmarks.harness.cost_cap.CostCap` of a run with ``max_cost_usd``: what earlier sessions paid
        (the manifest's ``spend``, else the cost of every record written, set-aside ones included), the finished
        questions' costs and the dry-run estimate per question (at batch prices for a batch run).

        Raises
        ------
        DataValidationError
            When a provider's price is unknown (``openai-compatible``, an unpriced model): the cap could
            not be kept.
        """
        unpriced = [s for s in self.stack.model_specs() if cost_usd(s, TokenUsage(input_tokens=1, output_tokens=1, calls=1)) is None]
        if unpriced:
            raise DataValidationError(
                f"--max-cost needs known prices, and {', '.join(redact_spec(s) for s in unpriced)} has none "
                "(genai-prices): drop --max-cost or use a priced model", field="max_cost_usd", value=self.config.max_cost_usd)
        manifest_path = self.run_dir / MANIFEST_FILE
        spend = json.loads(manifest_path.read_text(encoding="utf-8")).get("spend") if manifest_path.exists() else None
        finished = [record_cost(r) for r in done_records]
        set_aside = sum(record_cost(r) for r in read_records(self.run_dir / REPLACED_FILE))  # paid as well
        paid_before = float(spend["paid_usd_total"]) if spend and spend.get("paid_usd_total") is not None else sum(finished) + set_aside
        est = estimate_run(self.config, questions=questions, provider_factory=self.stack.provider_factory, ensemble=self.stack.ensemble)
        prior = (est.totals()["usd_batch" if self.config.batch else "usd"] or 0.0) / max(len(est.questions), 1)
        return CostCap(max_usd=float(self.config.max_cost_usd),  # type: ignore[arg-type]  # only called with a cap
                       paid_before_usd=paid_before, prior_per_question_usd=prior, finished_costs=finished)

    def session(self, questions: list[Question], done_records: list[dict[str, Any]],
                baselines: dict[str, dict[str, dict[str, Any]]], t0: float, lock: RunFolderLock | None = None) -> RunSession:
        """A session of this run over ``questions`` (the run's, or its shard's), with the records already written;
        ``lock`` is the run folder's, checked before every write."""
        manifest = RunManifest(self.config, self.stack.providers, self.selection.describe(), questions, self.clusters,
                               self.command_line, self.shard_info)
        return RunSession(self.config, self.run_dir, self.stack, manifest, questions, done_records, baselines, t0,
                          progress=self.progress, lock=lock)

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
            With ``resume``: set the failed records aside (:func:`benchmarks.run_folder.durable.set_aside_failed`)
            and run those questions again. The folder then holds one record per question, the latest attempt;
            reports keep the first record of a question if a folder ever holds two.

        Raises
        ------
        FileExistsError
            When the run folder already holds results and ``resume`` is False.
        RunFolderBusy
            When another process holds the run folder's lock (names the folder and the lock file);
            :class:`benchmarks.run_folder.durable.RunFolderLockLost` when its lock file is deleted or replaced during
            the run (the run stops writing: another may be writing the folder).
        ResultsWriteError
            When a record cannot be written (disk full...); the run stops, earlier records are intact.
        DataValidationError
            When no question matches the filters, a question file is malformed (row, column and value
            named), or a resumed run would select other questions than its manifest records, or questions
            that changed since it started (another text, date or outcome:
            :func:`benchmarks.harness.selection.refuse_changed_questions`).
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
        providers = self.stack.built()  # the response cache opens at the first call, not here
        self.config = self.stack.config  # the provider specs redacted
        if not self.config.providers:  # record what auto_provider() picked, so a resume uses the same models
            self.config = self.config.model_copy(update={"providers": [redact_spec(p.spec) for p in providers]})
        selection = self.selection
        questions = selection.questions()
        if not questions:
            raise DataValidationError("no questions match the run's filters", field="questions", value=0)
        self.clusters = sibling_clusters(questions)  # over the whole selection: a shard's records get the run's clusters
        if self.config.shard:
            questions, self.shard_info = selection.shard(questions)
        self.stack.bind_questions(questions)
        if resume and manifest_path.exists():  # the questions the run started with, unchanged
            refuse_changed_questions(self.run_dir, json.loads(manifest_path.read_text(encoding="utf-8")), questions,
                                     read_records(results_path))
        pipeline = self.build_pipeline()
        baselines = baseline_table(questions, self.config.baselines)
        # --- one writer from here on --------------------------------------------------------------
        lock = lock_run_folder(self.run_dir)
        try:
            self._refuse_existing_results(resume)  # again under the lock: another run may have written meanwhile
            if self.on_start is not None:
                self.on_start(self.run_dir)
            done_records = read_records(results_path, repair=resume)
            if retry_failed:
                lock.check()
            n_retried = set_aside_failed(self.run_dir) if retry_failed else 0
            if n_retried:
                log.info("%s: %d failed question(s) set aside in %s; running them again", self.run_dir, n_retried, REPLACED_FILE)
                done_records = read_records(results_path)
            return await self._run_pending(questions, done_records, pipeline, baselines, t0, n_retried, lock)
        finally:
            lock.release()

    def _refuse_existing_results(self, resume: bool) -> None:
        path = self.run_dir / RESULTS_FILE
        if not resume and path.exists() and path.stat().st_size:
            raise FileExistsError(f"{self.run_dir} already has results; continue it with resume (--resume {self.run_dir.name})")

    async def _run_pending(self, questions: list[Question], done_records: list[dict[str, Any]], pipeline: ForecastPipeline,
                           baselines: dict[str, dict[str, Any]], t0: float, n_retried: int, lock: RunFolderLock) -> RunSummary:
        session = self.session(questions, done_records, baselines, t0, lock)
        session.write_manifest()
        pending = [q for q in questions if session.status[q.id] == "pending"]
        if self.config.max_cost_usd is not None:
            session.cap = self.cost_cap(questions, done_records)
            session.paid_before_usd = session.cap.paid_before_usd  # a run from before the spend was recorded: its records' cost
        try:
            await executor_for(self.config).run(session, self.stack, pending, pipeline)
        finally:
            session.close()
        return session.summary(n_retried)
