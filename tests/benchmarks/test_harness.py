"""The benchmark runner from the user's side (issue 18): providers as configured, the manifest, the summary,
counters, errors before anything is written, and what a resumed run keeps. Scripted providers, no network."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
import re
import sys
import time

import pytest
from filelock import FileLock

from agent_providers import CachingProvider, RetryingProvider, ScriptedProvider
from agent_providers.ratelimit import DEFAULT_LIMITS, RateLimitedProvider, RateLimits
from agent_providers.pricing import PRICE_SOURCE
from agent_schemas import DataValidationError, Question, RateLimited
from agent_tools import ToolExecutor
from benchmarks.harness import provider_stack as provider_stack_module
from benchmarks.harness import selection as selection_module
from benchmarks.harness import session as session_module
from benchmarks.protocol.clusters import ClusterAssignment
from benchmarks.harness.config import RunConfig
from benchmarks.harness.cost_cap import MeteredProvider
from benchmarks.harness.provenance import git_commit
from benchmarks.harness.provenance import package_version
from benchmarks.harness.records import baseline_table, failed_trace, question_record
from benchmarks.harness.runner import BenchmarkRunner
from benchmarks.harness.session import RunSummary
from benchmarks.run_folder import LOCK_FILE, QuestionRecord, RunFolderBusy, read_results
from agent_providers.scripted_world import respond
from tests.helpers import FixedSearch, SpecProvider, answer

MEMBER = answer(30)


def question(i: int, outcome: int | None = 1, **extra) -> Question:
    return Question(id=f"q{i}", text=f"Will event {i} happen by March 2026?", forecast_date=dt.date(2025, 11, i + 1),
                    resolution_date=dt.date(2026, 1, i + 1), scheduled_close_date=dt.date(2026, 3, 31), outcome=outcome,
                    source="polymarket", source_question_id=f"s{i}", question_type="market", crowd_p_yes=0.2 + 0.1 * i,
                    horizon_days=61, **extra)


def config(tmp_path, **cfg) -> RunConfig:
    base = dict(output_dir=str(tmp_path), run_id="r", providers=["scripted"], search="none", n_members=2,
                methods=["mean", "min"], baselines=["always_0.5", "crowd"])
    return RunConfig(**{**base, **cfg})


def make(tmp_path, qs, factory=None, **cfg) -> BenchmarkRunner:
    return BenchmarkRunner(config(tmp_path, **cfg), provider_factory=factory or (lambda spec: ScriptedProvider(responder=respond)),
                           questions=qs, progress=False, retry_sleep=lambda s: None)


def run(r: BenchmarkRunner, **kw) -> RunSummary:
    return asyncio.run(r.arun(**kw))


# --- construction and providers ------------------------------------------------------------------------------


def test_run_id_defaults_to_a_timestamp_and_the_folder_is_under_output_dir(tmp_path):
    r = BenchmarkRunner(RunConfig(output_dir=str(tmp_path)))
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{4}", r.config.run_id)
    assert r.run_dir == tmp_path / r.config.run_id and r.progress is True and r.stack.providers == []
    named = BenchmarkRunner(RunConfig(output_dir=str(tmp_path), run_id="mine"))
    assert (named.config.run_id, named.run_dir) == ("mine", tmp_path / "mine")
    assert not any(tmp_path.iterdir())  # nothing written by building a runner


def test_each_provider_is_wrapped_cache_then_retry_with_the_configured_policy(tmp_path):
    built = []

    def factory(spec):
        built.append(spec)
        return ScriptedProvider(responder=respond, model=spec.split("/")[-1])

    r = BenchmarkRunner(config(tmp_path, providers=["scripted/a", "scripted/b"], max_attempts=3, seed=5),
                        provider_factory=factory, progress=False)
    providers = r.stack.build()
    assert built == ["scripted/a", "scripted/b"] and providers == r.stack.providers
    for p, name in zip(providers, ("a", "b")):
        # cache -> spend meter -> retry -> provider (no rate limiter for scripted providers)
        assert type(p) is CachingProvider and type(p.inner) is MeteredProvider and type(p.inner.inner) is RetryingProvider
        assert p.inner.inner.inner.model == name
        assert (p.inner.inner.policy.max_attempts, p.inner.inner.policy.seed) == (3, 5)
    assert providers[0].cache is providers[1].cache and providers[0].cache.directory == tmp_path / "r" / "cache"
    assert r.stack.model_specs() == ["scripted/a", "scripted/b"]
    shared = BenchmarkRunner(config(tmp_path, cache_dir=str(tmp_path / "shared")), provider_factory=factory, progress=False)
    assert shared.stack.build()[0].cache.directory == tmp_path / "shared"
    bare = BenchmarkRunner(config(tmp_path, cache=False), provider_factory=factory, progress=False).stack.build()[0]
    assert type(bare) is MeteredProvider and type(bare.inner) is RetryingProvider and bare.inner.inner.model == "scripted"
    assert not (tmp_path / "r").exists() and not (tmp_path / "shared").exists()  # the cache opens at the first call


def test_no_configured_provider_asks_the_factory_for_scripted(tmp_path):
    seen = []
    r = BenchmarkRunner(config(tmp_path, providers=[]), provider_factory=lambda s: seen.append(s) or ScriptedProvider(),
                        progress=False)
    r.stack.build()
    assert seen == ["scripted"]


def test_without_a_factory_the_registry_builds_bare_adapters(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(provider_stack_module, "get_provider", lambda spec, **kw: calls.append((spec, kw)) or ScriptedProvider())
    monkeypatch.setattr(provider_stack_module, "auto_provider", lambda **kw: calls.append(("auto", kw)) or ScriptedProvider())
    BenchmarkRunner(config(tmp_path, providers=["local/smollm2", "openai/gpt-4.1-mini"], n_threads=2), progress=False).stack.build()
    BenchmarkRunner(config(tmp_path, providers=["local/smollm2"]), progress=False).stack.build()
    BenchmarkRunner(config(tmp_path, providers=[]), progress=False).stack.build()
    assert calls == [("local/smollm2", {"retry": False, "n_threads": 2}), ("openai/gpt-4.1-mini", {"retry": False}),
                     ("local/smollm2", {"retry": False}), ("auto", {"retry": False})]
    # the embedded model picked automatically gets its options too
    monkeypatch.setattr(provider_stack_module, "choose_auto_spec", lambda: type("Choice", (), {"spec": "local/smollm2"})())
    BenchmarkRunner(config(tmp_path, providers=[], n_threads=2), progress=False).stack.build()
    assert calls[-1] == ("auto", {"retry": False, "n_threads": 2})


def test_configured_specs_are_kept_redacted(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_COMPATIBLE_QUERY_KEY", "QSECRET")
    spec = "openai-compatible/m@http://127.0.0.1:9/v1?key=QSECRET"
    r = BenchmarkRunner(config(tmp_path, providers=[spec]), provider_factory=lambda s: ScriptedProvider(), progress=False)
    r.stack.build()
    assert r.stack.config.providers == ["openai-compatible/m@http://127.0.0.1:9/v1?key=***"]


def test_a_credential_in_a_spec_never_reaches_the_run_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_COMPATIBLE_QUERY_KEY", "QSECRET")
    spec = "openai-compatible/m@http://127.0.0.1:9/v1?key=QSECRET"
    # the real provider (its spec is what the run writes); nothing listens on port 9: the members fail, refused
    r = BenchmarkRunner(config(tmp_path, providers=[spec], max_attempts=1), questions=[question(1)], progress=False,
                        retry_sleep=lambda s: None)
    assert run(r).n_failed == 1
    manifest = json.loads((r.run_dir / "manifest.json").read_text())
    shown = "openai-compatible/m@http://127.0.0.1:9/v1?key=***"
    assert manifest["config"]["providers"] == [shown] and [p["spec"] for p in manifest["providers"]] == [shown]
    assert not [f.name for f in r.run_dir.rglob("*") if f.is_file() and b"QSECRET" in f.read_bytes()]


def test_rate_limits_are_the_provider_defaults_with_the_configured_ones_set_over_them(tmp_path):
    local_server = "openai-compatible/meta-llama/Llama-3.1-8B@http://127.0.0.1:9/v1"  # a model name with a slash
    keyed = "openai-compatible/m@http://127.0.0.1:9/v1?key=***"
    r = BenchmarkRunner(config(tmp_path, rate_limits={"anthropic": "rpm:4000,otpm:none", "openai": "rpm:100",
                                                      "openai/gpt-4.1-mini": "tpm:1000", "openai-compatible": "concurrent:4",
                                                      keyed: "concurrent:2", "local": "concurrent:1"}), progress=False)
    assert r.stack.rate_limits_for("anthropic/claude-sonnet-4-5") == RateLimits(max_concurrent=16, requests_per_minute=4000,
                                                                          input_tokens_per_minute=30_000)
    # an entry for the spec wins over the prefix's
    assert r.stack.rate_limits_for("openai/gpt-4.1-mini") == RateLimits(max_concurrent=32, requests_per_minute=500, tokens_per_minute=1000)
    assert r.stack.rate_limits_for("openai/gpt-4o") == RateLimits(max_concurrent=32, requests_per_minute=100, tokens_per_minute=200_000)
    assert r.stack.rate_limits_for(local_server) == RateLimits(max_concurrent=4)
    assert r.stack.rate_limits_for("openai-compatible/m@http://127.0.0.1:9/v1?key=QSECRET") == RateLimits(max_concurrent=2)  # by its redacted form
    assert r.stack.rate_limits_for("local/smollm2") == RateLimits(max_concurrent=1)  # no default: the configured one alone
    plain = BenchmarkRunner(config(tmp_path), progress=False)
    assert plain.stack.rate_limits_for("openai-compatible/x@http://h/v1") == DEFAULT_LIMITS["openai-compatible"]
    assert plain.stack.rate_limits_for("local/smollm2") is None and plain.stack.rate_limits_for("scripted") is None


def test_each_rate_limited_provider_has_one_limiter_for_all_its_roles_and_the_manifest_shows_it(tmp_path, monkeypatch):
    claude, server = "anthropic/claude-sonnet-4-5", "openai-compatible/m@http://127.0.0.1:9/v1?key=QSECRET"
    cfg = dict(providers=[claude, server, claude], rate_limits={"openai-compatible": "rpm:60"})
    r = BenchmarkRunner(config(tmp_path, **cfg), provider_factory=SpecProvider, progress=False)
    limiters = [p.inner.inner.inner for p in r.stack.build()]  # cache -> meter -> retry -> rate limiter -> adapter
    assert all(type(x) is RateLimitedProvider for x in limiters)
    assert limiters[0] is limiters[2] and limiters[0] is not limiters[1]  # the two roles on Claude share its limits
    assert [x.inner.spec for x in limiters] == [claude, server, claude]
    limiters[0].stats.requests, limiters[0].stats.rate_limited, limiters[0].stats.paused_s = 3, 1, 1.23456
    assert r.stack.execution_info() == {"executor": "local", "batch": False, "rate_limits": {
        claude: {**DEFAULT_LIMITS["anthropic"].to_dict(), "requests_sent": 3, "rate_limited": 1, "paused_s": 1.235},
        "openai-compatible/m@http://127.0.0.1:9/v1?key=***": {**RateLimits(max_concurrent=8, requests_per_minute=60).to_dict(),
                                                               "requests_sent": 0, "rate_limited": 0, "paused_s": 0.0}}}
    # stand-ins that call no one (the dry run) get no limiter
    dry = BenchmarkRunner(config(tmp_path, **cfg), provider_factory=SpecProvider, progress=False, rate_limit=False)
    assert [type(p.inner.inner.inner) for p in dry.stack.build()] == [SpecProvider] * 3 and dry.stack.limiters == {}


def test_retries_wait_with_the_injected_sleep_in_sync_and_async_calls(tmp_path):
    slept = []
    p = ScriptedProvider([RateLimited("busy", retry_after_s=2.5), MEMBER, RateLimited("busy", retry_after_s=1.5), MEMBER])
    r = BenchmarkRunner(config(tmp_path, cache=False), provider_factory=lambda s: p, progress=False, retry_sleep=slept.append)
    (wrapped,) = r.stack.build()
    assert wrapped.complete([{"role": "user", "content": "a"}]).text == MEMBER
    assert asyncio.run(wrapped.acomplete([{"role": "user", "content": "b"}])).text == MEMBER
    assert slept == [2.5, 1.5]
    assert r.stack.provider_stats() == {"calls": 4, "ok": 2, "retries": 2, "failures": 0, "cache_hits": 0, "cache_misses": 0}
    # without an injected sleep, retries wait for real (here the server's 10 ms) in async calls too
    p = ScriptedProvider([RateLimited("busy", retry_after_s=0.01), MEMBER])
    (real,) = BenchmarkRunner(config(tmp_path, cache=False), provider_factory=lambda s: p, progress=False).stack.build()
    assert asyncio.run(real.acomplete([{"role": "user", "content": "c"}])).text == MEMBER


def test_provider_counters_are_summed_over_every_provider(tmp_path):
    answers = {"scripted/a": [MEMBER, RateLimited("busy", retry_after_s=1.0), MEMBER], "scripted/b": [MEMBER, MEMBER]}
    r = BenchmarkRunner(config(tmp_path, providers=list(answers)), provider_factory=lambda s: ScriptedProvider(answers[s], model=s),
                        progress=False, retry_sleep=lambda s: None)
    a, b = r.stack.build()
    for p, prompts in ((a, "xyx"), (b, "zw")):  # a: 2 misses, a hit and a retry; b: 2 misses
        for text in prompts:
            p.complete([{"role": "user", "content": text}])
    assert r.stack.provider_stats() == {"calls": 5, "ok": 4, "retries": 1, "failures": 0, "cache_hits": 1, "cache_misses": 4}


def test_questions_are_handed_to_providers_that_simulate_from_them(tmp_path):
    class Binding(ScriptedProvider):
        def __init__(self):
            super().__init__(responder=respond)
            self.bound = None

        def bind_questions(self, questions):
            self.bound = [q.id for q in questions]

    adapters = []
    qs = [question(1), question(2)]
    r = make(tmp_path, qs, factory=lambda s: adapters.append(Binding()) or adapters[-1], providers=["scripted/a", "scripted/b"])
    run(r)
    assert [a.bound for a in adapters] == [["q1", "q2"], ["q1", "q2"]]


def test_the_search_backend_follows_the_config(tmp_path, monkeypatch):
    client = FixedSearch()
    given = BenchmarkRunner(config(tmp_path, snippet_chars=50, search="ddg"), search_client=client, progress=False).stack.search_executor()
    assert isinstance(given, ToolExecutor) and given.search is client and given.snippet_chars == 50
    assert BenchmarkRunner(config(tmp_path, search="none"), progress=False).stack.search_executor() is None
    from agent_tools import DuckDuckGoSearch, LocalCorpusSearch

    ddg = BenchmarkRunner(config(tmp_path, search="ddg", snippet_chars=80), progress=False).stack.search_executor()
    assert type(ddg.search) is DuckDuckGoSearch and ddg.snippet_chars == 80
    monkeypatch.setattr(LocalCorpusSearch, "default", classmethod(lambda cls: client))  # skip building the corpus
    local = BenchmarkRunner(config(tmp_path, search="local"), progress=False).stack.search_executor()
    assert local.search is client and local.snippet_chars == 200


def test_the_pipeline_has_the_stages_the_methods_need(tmp_path):
    def stages(methods):
        p = make(tmp_path, [], methods=methods, n_members=3).build_pipeline()
        return len(p.ensemble.members), p.debate is not None, p.supervisor is not None

    assert stages(["mean"]) == (3, False, False)
    assert stages(["mean", "debate"]) == (3, True, False)
    assert stages(["supervisor"]) == (3, False, True)
    assert stages(["pipeline"]) == (3, True, True)
    client = FixedSearch()
    searching = BenchmarkRunner(config(tmp_path, n_members=1), provider_factory=lambda s: ScriptedProvider(responder=respond),
                                search_client=client, progress=False).build_pipeline()
    assert searching.ensemble.members[0].executor.search.inner is client  # the members research with the run's search (recorded)


@pytest.mark.parametrize("specs, configured, expected", [
    (["local/smollm2"], None, 1), (["local/smollm2", "local/other"], None, 1), (["local/smollm2", "scripted"], None, 8),
    (["scripted"], None, 8), (["local/smollm2"], 3, 3),
])
def test_questions_in_flight(tmp_path, specs, configured, expected):
    r = BenchmarkRunner(config(tmp_path, providers=specs, concurrency=configured), provider_factory=SpecProvider, progress=False)
    assert r.stack.concurrency() == expected


def test_embedded_models_get_as_many_questions_in_flight_as_the_most_they_compute_at_once(tmp_path):
    def factory(spec):
        p = SpecProvider(spec)
        p.parallel_calls = {"local/a": 4, "local/b": 2}[spec]
        return p

    assert BenchmarkRunner(config(tmp_path, providers=["local/a", "local/b"]), provider_factory=factory, progress=False).stack.concurrency() == 4


@pytest.mark.parametrize("spec, untrained", [("scripted", True), ("scripted/x", True), ("sim", True), ("sim/seed=2", True), ("scripted/org/model", True),
                                             ("simulator/x", False), ("local/smollm2", False), ("openai/sim", False)])
def test_untrained_providers(spec, untrained):
    assert selection_module._untrained(spec) is untrained


# --- a run: records, manifest, summary ------------------------------------------------------------------------


def test_a_run_writes_its_records_manifest_and_summary(tmp_path, monkeypatch):
    qs = [question(1), question(2, outcome=0), question(3, outcome=None)]
    started = []
    r = BenchmarkRunner(config(tmp_path), provider_factory=lambda s: ScriptedProvider(responder=lambda m: MEMBER),
                        questions=qs, progress=False, on_start=started.append, command_line=["forecast-reconcile", "run"])
    t0 = time.perf_counter()
    summary = run(r)
    elapsed = time.perf_counter() - t0
    assert started == [tmp_path / "r"]
    assert (summary.run_dir, summary.n_questions, summary.n_done_before, summary.n_ok, summary.n_failed) == (tmp_path / "r", 3, 0, 3, 0)
    assert (summary.n_ok_total, summary.n_failed_total, summary.top_failure, summary.n_top_failure, summary.n_retried) == (3, 0, None, 0, 0)
    assert not summary.all_failed and 0 < summary.wall_time_s <= elapsed
    assert summary.provider_stats == {"calls": 6, "ok": 6, "retries": 0, "failures": 0, "cache_hits": 0, "cache_misses": 6}
    records = {rec["question_id"]: rec for rec in read_results(r.run_dir / "results.jsonl")}
    rec = records["q2"]
    assert (rec["status"], rec["error"], rec["outcome"], rec["source"], rec["question_type"], rec["cluster"], rec["horizon_days"],
            rec["forecast_date"], rec["resolution_date"]) == ("ok", None, 0, "polymarket", "market", "polymarket|s1", 61,
                                                              "2025-11-03", "2026-01-03")
    assert rec["methods"]["mean"]["p_yes"] == 0.3 and rec["methods"]["min"]["p_yes"] == 0.3
    assert rec["baselines"] == {"always_0.5": {"p_yes": 0.5, "status": "ok", "note": rec["baselines"]["always_0.5"]["note"]},
                                "crowd": {"p_yes": pytest.approx(0.4), "status": "ok", "note": rec["baselines"]["crowd"]["note"]}}
    assert sum(e["calls"] for e in rec["ledger"]) == 2 and rec["audit"]["prompts_scanned"] == 2
    assert rec["wall_time_s"] == rec["trace"]["wall_time_s"] and rec["trace"]["question"]["id"] == "q2"
    assert records["q3"]["outcome"] is None
    manifest = json.loads((r.run_dir / "manifest.json").read_text())
    assert manifest["run_id"] == "r" and manifest["package"] == "forecast-reconcile"
    assert manifest["package_version"] == package_version() and manifest["python"] == sys.version.split()[0]
    assert manifest["providers"] == [{"spec": "scripted", "model": "scripted"}] and manifest["prices"] == PRICE_SOURCE
    assert manifest["seed"] == 0 and manifest["config"] == r.config.model_dump(mode="json")  # the run's settings, nothing else
    assert manifest["config"]["providers"] == ["scripted"] and manifest["config"]["run_id"] == "r"
    assert manifest["question_selection"] == r.selection.describe() and manifest["question_ids"] == ["q1", "q2", "q3"]
    # one question pattern ("Will event N happen by March 2026?", same close date): one cluster of three
    assert manifest["clusters"] == r.clusters.summary() and (manifest["clusters"]["source_questions"], manifest["clusters"]["clusters"]) == (3, 1)
    assert manifest["question_status"] == {"q1": "done", "q2": "done", "q3": "done"}
    assert manifest["command_line"] == ["forecast-reconcile", "run"] and manifest["provider_stats"] == summary.provider_stats
    assert elapsed >= manifest["wall_time_s"] == manifest["wall_time_s_total"] > 0
    assert manifest["wall_time_s"] == round(manifest["wall_time_s"], 3) and manifest["wall_time_s_total"] == round(manifest["wall_time_s_total"], 3)
    assert "shard" not in manifest and manifest["stopped"] is None  # not a shard; nothing stopped the run
    assert manifest["git"] == git_commit()
    assert dt.datetime.fromisoformat(manifest["created_at"]) <= dt.datetime.fromisoformat(manifest["updated_at"])
    assert set(manifest["package_versions"]) >= {"pydantic", "numpy"} and "git" in manifest


def test_the_question_record_takes_the_cluster_of_the_run(tmp_path):
    qs = [question(1)]
    r = make(tmp_path, qs)
    trace = asyncio.run(r.build_pipeline().arun(qs[0].visible()))
    assert question_record(qs[0], trace, config=r.config, clusters=r.clusters, baselines={}).cluster == "polymarket|s1"
    clusters = ClusterAssignment({"q1": "polymarket|s0"}, 1, 1)
    rec = question_record(qs[0], trace, config=r.config, clusters=clusters, baselines={"q1": {"crowd": {"p_yes": 0.3}}})
    assert isinstance(rec, QuestionRecord) and rec.cluster == "polymarket|s0" and rec.baselines == {"crowd": {"p_yes": 0.3}}
    unresolved = Question(id="u", text="Will it?", forecast_date=dt.date(2025, 1, 1))
    rec = question_record(unresolved, trace.model_copy(update={"question": unresolved.visible()}), config=r.config, clusters=clusters,
                          baselines={})
    assert (rec.resolution_date, rec.horizon_days, rec.outcome, rec.cluster) == (None, None, None, "unknown|u")


def test_failed_questions_are_counted_with_their_most_common_reason(tmp_path):
    qs = [question(i) for i in range(1, 6)]

    def responder(messages):
        text = messages[1].content
        if "event 1 " in text:
            return "no JSON here"
        if "event 2 " in text:
            return "nothing readable either"  # another message, the same type: grouped with it
        if "event 3 " in text:
            raise KeyError("boom")  # unexpected: an UnexpectedError member failure
        return MEMBER

    summary = run(make(tmp_path, qs, factory=lambda s: ScriptedProvider(responder=responder), cache=False))
    assert (summary.n_ok, summary.n_failed, summary.n_ok_total, summary.n_failed_total) == (2, 3, 2, 3)
    assert summary.top_failure.startswith("ForecastParseError: no JSON object found in the answer")
    assert summary.n_top_failure == 2 and not summary.all_failed
    records = {rec["question_id"]: rec for rec in read_results(tmp_path / "r" / "results.jsonl")}
    assert records["q1"]["status"] == "failed" and records["q1"]["error"]["type"] == "EnsembleFailed"
    assert all(m == {"p_yes": None, "status": "failed", "note": m["note"], "extra_usage": m["extra_usage"]}
               for m in records["q1"]["methods"].values())
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["question_status"] == {"q1": "failed", "q2": "failed", "q3": "failed", "q4": "done", "q5": "done"}
    # a resumed run rebuilds the reasons from the records and keeps the failures
    again = run(make(tmp_path, qs, cache=False), resume=True)
    assert (again.n_done_before, again.n_ok, again.n_failed, again.n_ok_total, again.n_failed_total) == (5, 0, 0, 2, 3)
    assert again.top_failure == summary.top_failure and again.n_top_failure == 2


def test_all_failed_means_questions_and_no_ok_record():
    def summary(n_questions, n_ok_total):
        return RunSummary(run_dir=None, n_questions=n_questions, n_done_before=0, n_ok=0, n_failed=0, wall_time_s=0.0,
                          n_ok_total=n_ok_total)

    assert summary(2, 0).all_failed and not summary(2, 1).all_failed and not summary(0, 0).all_failed


def test_a_resumed_run_keeps_its_start_and_adds_its_wall_time(tmp_path):
    qs = [question(1), question(2)]
    run(make(tmp_path, qs))
    path = tmp_path / "r" / "manifest.json"
    first = json.loads(path.read_text())
    results = tmp_path / "r" / "results.jsonl"
    results.write_text(results.read_text().splitlines(keepends=True)[0])  # the second question was in flight
    summary = run(make(tmp_path, qs), resume=True)
    assert (summary.n_done_before, summary.n_ok, summary.n_ok_total) == (1, 1, 2)
    assert summary.provider_stats["cache_hits"] == 2  # its two member calls are replayed
    second = json.loads(path.read_text())
    assert second["created_at"] == first["created_at"]
    assert second["wall_time_s_total"] == pytest.approx(first["wall_time_s_total"] + second["wall_time_s"], abs=2e-3)


def test_a_resume_cuts_a_torn_last_line_and_appends_after_the_whole_records(tmp_path):
    qs = [question(1), question(2)]
    run(make(tmp_path, qs))
    path = tmp_path / "r" / "results.jsonl"
    first, second = path.read_text().splitlines(keepends=True)
    path.write_text(first + second[:40])  # killed while writing the second record
    summary = run(make(tmp_path, qs), resume=True)
    assert (summary.n_done_before, summary.n_ok, summary.n_ok_total) == (1, 1, 2)
    lines = path.read_text().splitlines()
    assert lines[0] == first.strip() and sorted(json.loads(line)["question_id"] for line in lines) == ["q1", "q2"]


def test_a_folder_with_a_manifest_and_no_results_runs_again_without_resume(tmp_path):
    (tmp_path / "r").mkdir()  # e.g. a run stopped by its cost cap before its first record
    (tmp_path / "r" / "manifest.json").write_text(json.dumps({"question_ids": ["other"]}))
    assert run(make(tmp_path, [question(1)])).n_ok == 1


def test_the_manifest_is_rewritten_as_questions_finish_at_most_once_per_interval(tmp_path, monkeypatch):
    writes = []
    real = session_module.write_json_atomic
    monkeypatch.setattr(session_module, "write_json_atomic", lambda p, d: (writes.append(dict(d["question_status"])), real(p, d)))
    qs = [question(1), question(2), question(3)]
    monkeypatch.setattr(session_module, "MANIFEST_INTERVAL_S", 0.0)
    run(make(tmp_path, qs, concurrency=1))
    assert writes[0] == {"q1": "pending", "q2": "pending", "q3": "pending"} and len(writes) == 1 + 3 + 1
    assert writes[1]["q1"] == "done" and writes[-1] == {q.id: "done" for q in qs}
    writes.clear()
    monkeypatch.setattr(session_module, "MANIFEST_INTERVAL_S", 3600.0)
    run(make(tmp_path / "b", qs, concurrency=1))
    assert len(writes) == 2  # at the start and at the end


def test_the_manifest_is_rewritten_when_a_question_finishes_a_whole_interval_after_the_last_write(tmp_path, monkeypatch):
    from types import SimpleNamespace

    assert session_module.MANIFEST_INTERVAL_S == 1.0
    clock = [100.0]
    monkeypatch.setattr(session_module, "time", SimpleNamespace(monotonic=lambda: clock[0], perf_counter=time.perf_counter))
    qs = [question(i) for i in range(1, 5)]
    r = make(tmp_path, qs)
    r.stack.build()
    r.run_dir.mkdir()
    session = r.session(qs, [], {}, time.perf_counter())  # the last write: at 100 s
    manifest = r.run_dir / "manifest.json"
    written = []
    for q, now in zip(qs, (100.999, 101.0, 101.5, 102.0)):
        clock[0] = now
        asyncio.run(session.finish(q, session.record(q, failed_trace(q, RuntimeError("x"), show_crowd=False))))
        written.append(json.loads(manifest.read_text())["question_status"] if manifest.exists() else None)
    assert written[0] is None and written[2] == written[1] == {"q1": "failed", "q2": "failed", "q3": "pending", "q4": "pending"}
    assert written[3] == {q.id: "failed" for q in qs}  # MANIFEST_INTERVAL_S = 1 s after the write at 101 s


def test_questions_in_flight_are_marked_and_limited_to_the_concurrency(tmp_path, monkeypatch):
    writes = []
    real = session_module.write_json_atomic
    monkeypatch.setattr(session_module, "write_json_atomic", lambda p, d: (writes.append(dict(d["question_status"])), real(p, d)))
    monkeypatch.setattr(session_module, "MANIFEST_INTERVAL_S", 0.0)
    qs = [question(i) for i in range(1, 7)]
    r = make(tmp_path, qs, concurrency=2)
    pipeline = r.build_pipeline()
    real_arun, running, most = pipeline.arun, [0], [0]

    async def arun(q, **options):
        running[0] += 1
        most[0] = max(most[0], running[0])
        try:
            await asyncio.sleep(0.02)
            return await real_arun(q, **options)
        finally:
            running[0] -= 1

    pipeline.arun = arun
    r.build_pipeline = lambda: pipeline
    run(r)
    assert most[0] == 2
    assert "in_flight" in writes[1].values() and set(writes[1].values()) <= {"pending", "in_flight", "done"}


def test_after_a_failed_append_no_other_record_is_written(tmp_path, monkeypatch):
    from benchmarks.run_folder import ResultsWriteError

    real = session_module.append_jsonl
    calls = []

    def append(path, record):
        calls.append(record.question_id)
        if len(calls) == 1:
            raise OSError(28, "No space left on device", str(path))
        real(path, record)

    monkeypatch.setattr(session_module, "append_jsonl", append)
    with pytest.raises(ResultsWriteError, match="the 0 records written before are intact"):
        run(make(tmp_path, [question(i) for i in range(1, 5)], concurrency=4))
    assert len(calls) == 1 and read_results(tmp_path / "r" / "results.jsonl") == []


def test_the_first_record_of_a_question_decides_its_status(tmp_path):
    qs = [question(1), question(2)]
    run(make(tmp_path, qs))
    path = tmp_path / "r" / "results.jsonl"
    first, second = [json.loads(line) for line in path.read_text().splitlines()]
    error = {"type": "EnsembleFailed", "message": "0 of 2", "retryable": False, "details": {}}
    failed = {**first, "status": "failed", "error": error, "trace": {**first["trace"], "forecasts": [], "status": "failed", "error": error}}
    path.write_text("".join(json.dumps(r) + "\n" for r in (first, second, failed)))  # a stray later copy, failed
    summary = run(make(tmp_path, qs), resume=True)
    assert (summary.n_ok_total, summary.n_failed_total, summary.top_failure) == (2, 0, None)
    path.write_text("".join(json.dumps(r) + "\n" for r in (failed, second, first)))
    summary = run(make(tmp_path, qs), resume=True)
    assert (summary.n_ok_total, summary.n_failed_total, summary.top_failure) == (1, 1, "EnsembleFailed: 0 of 2")


def test_a_manifest_that_cannot_be_updated_at_the_end_loses_no_result(tmp_path, monkeypatch, caplog):
    real = session_module.write_json_atomic
    n = []

    def failing_last(path, data):
        n.append(1)
        if all(v == "done" for v in data["question_status"].values()):
            raise OSError(28, "No space left on device", str(path))
        real(path, data)

    monkeypatch.setattr(session_module, "write_json_atomic", failing_last)
    with caplog.at_level(logging.WARNING, logger="benchmarks.harness.session"):
        summary = run(make(tmp_path, [question(1)]))
    assert summary.n_ok == 1 and len(read_results(tmp_path / "r" / "results.jsonl")) == 1
    assert caplog.messages == [f"could not update {tmp_path / 'r' / 'manifest.json'}: No space left on device"]


def test_the_progress_bar_goes_to_stderr(tmp_path, capsys):
    qs = [question(1), question(2), question(3)]
    r = BenchmarkRunner(config(tmp_path), provider_factory=lambda s: ScriptedProvider(responder=lambda m: MEMBER),
                        questions=qs, retry_sleep=lambda s: None)
    run(r)
    captured = capsys.readouterr()
    assert re.match(r"^questions \S+ 3/3 0:00:0\d", captured.err) and captured.out == ""
    results = tmp_path / "r" / "results.jsonl"
    done, failed, _ = [json.loads(line) for line in results.read_text().splitlines()]
    results.write_text(json.dumps(done) + "\n" + json.dumps({**failed, "status": "failed"}) + "\n")  # a failed one is finished too
    resumed = BenchmarkRunner(config(tmp_path), provider_factory=lambda s: ScriptedProvider(responder=lambda m: MEMBER),
                              questions=qs, retry_sleep=lambda s: None)
    run(resumed, resume=True)
    assert re.match(r"^questions \S+ 3/3 ", capsys.readouterr().err)  # the two finished questions count from the start


# --- refused before anything is written ----------------------------------------------------------------------


def test_existing_results_need_resume(tmp_path):
    run(make(tmp_path, [question(1)]))
    with pytest.raises(FileExistsError) as ei:
        run(make(tmp_path, [question(1)]))
    assert str(ei.value) == f"{tmp_path / 'r'} already has results; continue it with resume (--resume r)"
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "results.jsonl").write_text("")  # an empty file is no results
    assert run(make(tmp_path, [question(1)], run_id="e")).n_ok == 1


def test_retry_failed_without_resume_is_refused(tmp_path):
    with pytest.raises(ValueError) as ei:
        run(make(tmp_path, [question(1)]), retry_failed=True)
    assert str(ei.value) == "retry_failed re-runs the failed questions of an existing run: it needs resume=True (--resume)"


def test_no_questions_is_an_error_and_writes_nothing(tmp_path):
    started = []
    r = make(tmp_path, [])
    r.on_start = started.append
    with pytest.raises(DataValidationError) as ei:
        run(r)
    assert (str(ei.value), ei.value.field, ei.value.value) == ("no questions match the run's filters", "questions", 0)
    assert started == [] and not (tmp_path / "r").exists()


def test_a_resume_that_selects_other_questions_is_refused(tmp_path):
    run(make(tmp_path, [question(1), question(2)]))
    with pytest.raises(DataValidationError) as ei:
        run(make(tmp_path, [question(1), question(3)]), resume=True)
    assert str(ei.value) == (f"{tmp_path / 'r'}: the resumed run selects other questions than the manifest records "
                             "(different providers, filters or question file?): 1 no longer selected (first: q2), 1 new (first: q3)")
    assert (ei.value.field, ei.value.value) == ("question_ids", 2)
    assert run(make(tmp_path, [question(1), question(2)]), resume=True).n_done_before == 2


def test_a_held_lock_refuses_a_second_writer_at_once(tmp_path):
    (tmp_path / "r").mkdir()
    lock = FileLock(str(tmp_path / "r" / LOCK_FILE))
    lock.acquire()
    started = []
    try:
        r = make(tmp_path, [question(1)])
        r.on_start = started.append
        with pytest.raises(RunFolderBusy) as ei:
            run(r)
    finally:
        lock.release()
    assert str(ei.value) == (f"{tmp_path / 'r'} is being written by another run (its lock {tmp_path / 'r' / LOCK_FILE} is held); "
                             "wait for that run to finish or stop it, then resume")
    assert ei.value.details == {"path": str(tmp_path / "r" / LOCK_FILE)}
    assert started == [] and not (tmp_path / "r" / "results.jsonl").exists()
    assert run(make(tmp_path, [question(1)])).n_ok == 1  # the lock is free again, and released after the run
    assert FileLock(str(tmp_path / "r" / LOCK_FILE)).acquire(blocking=False)


def test_when_no_provider_is_configured_the_run_records_the_one_picked(tmp_path, monkeypatch):
    monkeypatch.setattr(provider_stack_module, "auto_provider", lambda **kw: ScriptedProvider(responder=lambda m: MEMBER, model="auto"))
    r = BenchmarkRunner(config(tmp_path, providers=[]), questions=[question(1)], progress=False)
    run(r)
    assert r.config.providers == ["scripted/auto"]
    assert json.loads((tmp_path / "r" / "manifest.json").read_text())["config"]["providers"] == ["scripted/auto"]


# --- baselines ---------------------------------------------------------------------------------------------------


def test_baseline_table_keeps_the_named_baselines_and_marks_missing_values():
    qs = [question(1), question(2).model_copy(update={"crowd_p_yes": None})]
    table = baseline_table(qs, ["crowd", "always_0.5"])
    assert set(table) == {"q1", "q2"} and set(table["q1"]) == {"crowd", "always_0.5"}
    assert table["q1"]["crowd"]["p_yes"] == pytest.approx(0.3) and table["q1"]["crowd"]["status"] == "ok"
    assert table["q2"]["crowd"] == {"p_yes": None, "status": "unavailable", "note": table["q2"]["crowd"]["note"]}
    assert table["q2"]["crowd"]["note"] != ""  # says why
    assert table["q1"]["always_0.5"] == {"p_yes": 0.5, "status": "ok", "note": "constant 0.5"}
    assert baseline_table(qs, []) == {"q1": {}, "q2": {}}
