"""A run's providers and research backend: each provider wrapped once (cache -> spend meter -> retry -> rate
limits or batch -> adapter), their counters, and the pipeline built on them.

A run whose members are given (``RunConfig.ensemble == "given"``: a panel's forecasts, an
:class:`agent_research.GivenForecasts`) builds its pipeline on them; its providers run only the debate and the
supervisor, and a config without providers has none: nothing is called.

The runner, the dry run (:mod:`benchmarks.harness.estimate`), the ``forecast`` command
(:mod:`benchmarks.harness.one_forecast`) and every Ray worker (:mod:`benchmarks.harness.executors.ray_executor`)
build one :class:`ProviderStack` from the run's config: none of them needs a runner for it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_providers import CachingProvider, Provider, ResponseCache, RetryingProvider, RetryPolicy, auto_provider, choose_auto_spec, get_provider, redact_spec
from agent_providers.batch import BatchCollector, BatchingProvider
from agent_providers.ratelimit import RateLimitedProvider, RateLimits, default_limits, parse_rate_limits
from agent_research import ForecastPipeline, GivenForecasts
from agent_schemas import Question
from agent_tools import ToolExecutor
from benchmarks.harness.config import RunConfig
from benchmarks.harness.cost_cap import MeteredProvider, SpendMeter
from benchmarks.run_folder.layout import BATCHES_FILE

__all__ = ["ProviderFactory", "ProviderStack"]

ProviderFactory = Callable[[str], Provider]


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


def _as_async(sleep: Callable[[float], Any]) -> Callable[[float], Any]:
    """An awaitable form of a sync ``sleep(seconds)`` (tests inject a no-op)."""

    async def async_sleep(seconds: float) -> None:
        sleep(seconds)

    return async_sleep


class ProviderStack:
    """The providers of a run's config, wrapped once, with what they paid and counted.

    Parameters
    ----------
    config : RunConfig
        The run's config; :attr:`config` is it with the provider specs redacted once :meth:`build` ran.
    run_dir : Path, optional
        The run folder: the response cache's default folder (``<run_dir>/cache``) and batch mode's journal.
        None where nothing is written (the dry run); a config that caches or batches then needs ``cache_dir``.
    provider_factory : callable, optional
        ``spec -> Provider`` (default :func:`agent_providers.get_provider`); tests pass scripted ones.
    search_client : SearchClient, optional
        Overrides ``config.search`` (:meth:`search_executor`).
    retry_sleep : callable, optional
        ``sleep(seconds)`` of the retry layer (tests pass a no-op).
    rate_limit : bool
        Wrap providers in their rate limits (:meth:`rate_limits_for`); False for stand-ins that call no one
        (the dry run).
    ensemble : GivenForecasts, optional
        The members' forecasts of a config with ``ensemble="given"`` (required then, refused otherwise).

    Raises
    ------
    ValueError
        When ``ensemble`` is given and the config's ``ensemble`` is not "given", or the other way round.
    """

    def __init__(self, config: RunConfig, run_dir: Path | None = None, *, provider_factory: ProviderFactory | None = None,
                 search_client: Any = None, retry_sleep: Callable[[float], Any] | None = None, rate_limit: bool = True,
                 ensemble: GivenForecasts | None = None) -> None:
        if (config.ensemble == "given") != (ensemble is not None):
            raise ValueError("a run of given members needs both RunConfig(ensemble='given') and their forecasts "
                             f"(ensemble=GivenForecasts(...)); got ensemble={config.ensemble!r} and "
                             f"{'forecasts' if ensemble is not None else 'no forecasts'}")
        self.config = config
        #: The given members (``config.ensemble == "given"``), else None: the config's forecasters run.
        self.ensemble = ensemble
        self.run_dir = run_dir
        self.provider_factory = provider_factory
        self.search_client = search_client
        self.retry_sleep = retry_sleep
        self.rate_limit = rate_limit
        #: What this run's providers paid (USD), this session (:mod:`benchmarks.harness.cost_cap`).
        self.spend = SpendMeter()
        self.limiters: dict[str, RateLimitedProvider] = {}
        #: Batch mode's collector of calls (:mod:`agent_providers.batch`), journal ``batches.jsonl``; None otherwise.
        self.batch_collector: BatchCollector | None = None
        #: The wrapped providers, one per configured spec (empty until :meth:`build`).
        self.providers: list[Provider] = []
        #: The bare adapters under them.
        self.adapters: list[Provider] = []
        self._retrying: list[RetryingProvider] = []
        self._caches: list[CachingProvider] = []

    def _base_provider(self, spec: str | None) -> Provider:
        """The bare adapter for ``spec`` (``retry=False``: :meth:`build` adds the one retry layer)."""
        if self.provider_factory is not None:
            return self.provider_factory(spec or "scripted")
        local = (spec or choose_auto_spec().spec).startswith("local")  # the embedded model's options, also when picked automatically
        kwargs = self.config.local_model_options() if local else {}
        return get_provider(spec, retry=False, **kwargs) if spec else auto_provider(retry=False, **kwargs)

    def _folder(self, what: str) -> Path:
        if self.run_dir is None:
            raise ValueError(f"{what} needs a run folder: give the provider stack a run_dir")
        return self.run_dir

    def build(self) -> list[Provider]:
        """One wrapped provider per configured spec (the automatic choice when none is configured, none for a given
        ensemble without providers; a spec given several times, as a mixed ensemble's counts give it, is built once
        and appears as often): cache -> spend meter -> retry -> rate limits -> provider
        (batch mode: cache -> spend meter -> retry -> :class:`agent_providers.batch.BatchingProvider` -> provider;
        a provider without a batch API raises :class:`agent_providers.batch.BatchUnsupported`).

        The rate limits (:mod:`agent_providers.ratelimit`) are the provider's defaults with
        ``config.rate_limits`` set over them (:meth:`rate_limits_for`); none for scripted and simulated
        providers. The spend meter counts what each paid call cost (:mod:`benchmarks.harness.cost_cap`).

        Credentials: the specs are built as given, then ``config.providers`` keeps only their redacted
        form (:func:`agent_providers.redact_spec`), so the manifest, logs and results never hold a URL's
        user info or secret query values. A resumed run builds from the redacted specs: each ``***``
        query value is read from ``OPENAI_COMPATIBLE_QUERY_<NAME>`` (e.g. ``?key=***`` from
        ``OPENAI_COMPATIBLE_QUERY_KEY``) and a missing variable is an :class:`AuthenticationFailed`
        naming it; API keys always come from the environment (``OPENAI_COMPATIBLE_API_KEY``, ...).
        """
        specs: list[str | None] = list(self.config.providers) or ([] if self.ensemble is not None else [None])
        out = []
        cache = None
        if self.config.cache and specs:  # no provider, nothing to cache
            cache = _CacheOpenedOnFirstUse(Path(self.config.cache_dir) if self.config.cache_dir else self._folder("the response cache") / "cache")
        async_sleep = _as_async(self.retry_sleep) if self.retry_sleep is not None else None
        if self.config.batch and self.batch_collector is None:
            self.batch_collector = BatchCollector(self._folder("batch mode") / BATCHES_FILE, poll_interval_s=self.config.batch_poll_s)
        once: dict[str | None, Provider] = {}  # a spec named several times (a mixed ensemble's counts) is built once
        for spec in specs:
            if spec in once:
                out.append(once[spec])
                continue
            p = self._base_provider(spec)
            self.adapters.append(p)
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
            once[spec] = wrapped
            out.append(wrapped)
        self.providers = out
        if self.config.providers:
            self.config = self.config.model_copy(update={"providers": [redact_spec(s) for s in self.config.providers]})
        return out

    def flush_caches(self) -> None:
        """Wait until every answer queued for the response cache is stored (:meth:`agent_providers.ResponseCache.flush`:
        the asynchronous calls store their answers on the cache's writer thread)."""
        for cache in {id(c.cache): c.cache for c in self._caches}.values():
            cache.flush()

    def close_caches(self) -> None:
        """Store what is queued and close every response cache (:meth:`agent_providers.ResponseCache.close`; a cache
        reopens on next use) when the run ends, rather than when the cache is garbage-collected. diskcache closes the
        calling thread's connection; a connection another thread opened closes when that thread ends (sqlite may
        then fold its write-ahead log into the database file, in the run's own ``cache/``)."""
        for cache in {id(c.cache): c.cache for c in self._caches}.values():
            cache.close()

    def built(self) -> list[Provider]:
        """The wrapped providers, built on first use (:meth:`build`; with no provider to build, each use finds none)."""
        return self.providers or self.build()

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

    def bind_questions(self, questions: list[Question]) -> None:
        """Hand the harness's records of ``questions`` (outcomes included) to the providers that simulate
        from them (a ``bind_questions`` method: :class:`agent_providers.SimulatorProvider`); models never get them."""
        for adapter in self.adapters:
            bind = getattr(adapter, "bind_questions", None)
            if bind is not None:
                bind(questions)

    def model_specs(self) -> list[str]:
        """Specs of the run's providers (built on first use)."""
        return [p.spec for p in self.built()]

    def concurrency(self) -> int:
        """Questions in flight: the config's value, else, when every provider is embedded, as many as their
        models compute at once (``parallel_calls``: one question per model context, so each question's
        calls reuse its context's prompt prefix), else 8 (also with no provider)."""
        if self.config.concurrency:
            return self.config.concurrency
        specs = self.model_specs()
        if specs and all(s.startswith("local") for s in specs):
            return max(getattr(a, "parallel_calls", 1) for a in self.adapters)
        return 8

    def search_executor(self) -> ToolExecutor | None:
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

    def pipeline(self) -> ForecastPipeline:
        """The pipeline every question runs: :meth:`ForecastPipeline.from_config` of the config's pipeline
        (:meth:`RunConfig.pipeline_for_methods`: debate and supervisor only when a method needs them) on the
        providers (members cycle over them; debate on the first, supervisor on the last) and search; on the
        given members (:attr:`ensemble`) when there are, searching only for the supervisor."""
        config = self.config.pipeline_for_methods()
        searches = self.ensemble is None or config.supervisor is not None
        return ForecastPipeline.from_config(self.built(), self.search_executor() if searches else None, config, ensemble=self.ensemble)
