"""The harness's work off the event loop (issue 38) changes nothing a run writes: the question records (the leakage
audit built on the session's record thread, the response cache written by its writer thread) equal those of the
same run with the record built on the loop and every answer written through, and every answer is stored by
the time the run returns."""

from __future__ import annotations

import asyncio
import datetime as dt
import threading

from agent_providers import ResponseCache, scripted_world
from agent_schemas import Completion, SearchResult, TokenUsage
from agent_tools import LocalCorpusSearch, SearchClient
from benchmarks.harness.config import RunConfig
from benchmarks.harness.runner import BenchmarkRunner
from benchmarks.harness.session import RunSession
from benchmarks.questions import load_forecastbench
from benchmarks.run_folder import read_results

AFTER = dt.timedelta(days=20)


class PlantedSearch(SearchClient):
    """The bundled corpus, plus a page dated on the forecast date that reports the resolution (20 days later)
    and the outcome: every prompt that shows it has two findings."""

    name = "planted"

    def __init__(self) -> None:
        self.corpus = LocalCorpusSearch.default()

    def search(self, query, *, max_results=5, cutoff_date=None):
        out = self.corpus.search(query, max_results=max_results - 1, cutoff_date=cutoff_date)
        planted = SearchResult(title="Market update", url="https://news.example/update", source="news", published=cutoff_date,
                               snippet=f"Update: this market closed on {(cutoff_date + AFTER):%d %b %Y} and has already resolved NO.")
        return out.model_copy(update={"results": [planted, *out.results], "status": "ok"})


def questions(n: int = 10):
    qs = load_forecastbench(question_type="market", one_per_source_question=True, sample_n=n, seed=5)
    return [q.model_copy(update={"resolution_date": q.forecast_date + AFTER}) for q in qs]


TIMING = {"latency_s", "wall_time_s", "created_at"}


def normalised(x):
    """A record without its timings, the calls of a trace in a fixed order (members answer concurrently)."""
    if isinstance(x, dict):
        out = {k: normalised(v) for k, v in x.items() if k not in TIMING}
        if "recorded_calls" in out:
            out["recorded_calls"] = sorted(out["recorded_calls"], key=lambda c: (c["role"], c["request_key"]))
        return out
    if isinstance(x, list):
        return [normalised(v) for v in x]
    return x


def run(tmp_path, run_id: str, qs, concurrency: int = 4):
    cfg = RunConfig(output_dir=str(tmp_path), run_id=run_id, providers=["scripted"], concurrency=concurrency,
                    cache_dir=str(tmp_path / f"cache-{run_id}"))
    runner = BenchmarkRunner(cfg, provider_factory=lambda spec: scripted_world.provider(latency_s=0.002), questions=qs,
                             search_client=PlantedSearch(), progress=False, retry_sleep=lambda s: None)
    asyncio.run(runner.arun())
    return runner, {r["question_id"]: r for r in read_results(runner.run_dir / "results.jsonl")}


def test_records_built_off_the_loop_equal_those_built_on_it(tmp_path, monkeypatch):
    qs = questions()
    _, off_loop = run(tmp_path, "off", qs)

    async def on_the_loop(self, q, trace):  # as before issue 38: the record built on the loop, answers written through
        return self.record(q, trace)

    with monkeypatch.context() as m:
        m.setattr(RunSession, "arecord", on_the_loop)
        m.setattr(ResponseCache, "put_later", lambda self, key, completion: self.put(key, completion))
        _, on_loop = run(tmp_path, "on", qs)
    assert set(off_loop) == set(on_loop) == {q.id for q in qs}
    assert sum(r["audit"]["findings"] for r in off_loop.values()) >= 2 * len(qs)  # the planted page is found
    assert {k: r["audit"] for k, r in off_loop.items()} == {k: r["audit"] for k, r in on_loop.items()}
    assert {k: normalised(r) for k, r in off_loop.items()} == {k: normalised(r) for k, r in on_loop.items()}


def test_every_answer_is_in_the_cache_when_the_run_returns(tmp_path):
    qs = questions(6)
    runner, records = run(tmp_path, "r", qs, concurrency=3)
    calls = sum(len(r["trace"]["recorded_calls"]) for r in records.values())
    assert calls == runner.stack.provider_stats()["cache_misses"] > 0
    assert len(ResponseCache(tmp_path / "cache-r")) == calls  # another process's view of the folder


def test_a_queued_answer_is_served_at_once_and_stored_in_order(tmp_path, monkeypatch):
    cache = ResponseCache(tmp_path / "c")
    release = threading.Event()
    store = ResponseCache._store_batch
    monkeypatch.setattr(ResponseCache, "_store_batch", lambda self, batch: (release.wait(5), store(self, batch)))
    first = Completion(text="first", usage=TokenUsage(input_tokens=1, output_tokens=1, calls=1), model="m", provider="p/m")
    second = first.model_copy(update={"text": "second"})
    cache.put_later("k", first)
    cache.put_later("k", second)
    assert cache.get("k").text == "second"  # read your writes, while the writer waits
    assert not cache.flush(timeout_s=0.05) and len(ResponseCache(tmp_path / "c")) == 0
    release.set()
    assert cache.flush(timeout_s=5)
    assert ResponseCache(tmp_path / "c").get("k").text == "second"  # stored oldest first: the last one stays


def test_a_failing_writer_switches_the_cache_off_and_serves_nothing_queued(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    cache = ResponseCache(blocker / "cache")
    c = Completion(text="a", usage=TokenUsage(input_tokens=1, output_tokens=1, calls=1), model="m", provider="p/m")
    cache.put_later("k", c)
    assert cache.flush(timeout_s=5)
    assert not cache.enabled and cache.get("k") is None


def test_records_equal_those_of_the_plain_patterns_and_every_storage_rule(tmp_path, monkeypatch):
    """The audit's patterns written for speed (outcome statements starting with their letters, dates with a digit)
    and storable_text's fast path change nothing a run writes: the same planted-leak run with the plain patterns
    (``\\b(?:starts)``, ``\\d{4}``, ``\\d{1,2}``) and every storage rule tried on every text gives the same records."""
    import re

    from agent_providers import storable
    from benchmarks.protocol import leakage, written_dates

    qs = questions(8)
    _, fast = run(tmp_path, "fast", qs)
    plain_statements = tuple((name, words, re.compile(leakage._statement_pattern(starts, rest, fast=False)))
                             for name, words, starts, rest in leakage._STATEMENT_SOURCES)
    plain_dates = tuple((form, re.compile(rx.pattern.replace(r"\d\d{3}", r"\d{4}").replace(r"\d\d?", r"\d{1,2}")), before)
                        for form, rx, before in written_dates.DATE_FORMS)
    assert [rx.pattern for _, rx, _ in plain_dates] != [rx.pattern for _, rx, _ in written_dates.DATE_FORMS]
    with monkeypatch.context() as m:
        m.setattr(leakage, "OUTCOME_STATEMENTS", plain_statements)
        m.setattr(written_dates, "DATE_FORMS", plain_dates)
        m.setattr(storable, "storable_text", lambda text: storable._replaced(text, storable.known_secrets()))
        _, plain = run(tmp_path, "plain", qs)
    assert sum(r["audit"]["findings"] for r in fast.values()) >= 2 * len(qs)
    assert {k: r["audit"] for k, r in fast.items()} == {k: r["audit"] for k, r in plain.items()}
    assert {k: normalised(r) for k, r in fast.items()} == {k: normalised(r) for k, r in plain.items()}
