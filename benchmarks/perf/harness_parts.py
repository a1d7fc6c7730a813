"""The harness's per-question work off the event loop, and the cache key on it, in CPU time of this thread.

Two scripted runs of 20 bundled questions are made first (no latency; no search, and the bundled corpus), then,
three times over their records: :func:`benchmarks.protocol.leakage.leakage_audit` of each question (the record
thread), :func:`agent_providers.storable.storable_text` of each record line (the record write; 40-70 KB each),
and the two keys of each call (:func:`agent_providers.cache.cache_key` and the recorder's, from fresh message
objects as a pipeline builds them). Printed: ms per question, ms per record line, us per call. Each audit is
checked against the one the run recorded.

CPU time of one thread, so a shared machine's load moves it less than wall time; to compare two versions, run it
in each checkout in turn, alternating (``cd <checkout> && python benchmarks/perf/harness_parts.py``), as the
figures in ``benchmarks/perf/NOTES.md`` were.

Usage: ``python benchmarks/perf/harness_parts.py [--rounds 3]``
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agent_providers import scripted_world  # noqa: E402
from agent_providers.cache import cache_key  # noqa: E402
from agent_providers.recording import request_key  # noqa: E402
from agent_providers.storable import storable_text  # noqa: E402
from agent_schemas import ChatMessage, PipelineTrace  # noqa: E402
from benchmarks.harness.config import RunConfig  # noqa: E402
from benchmarks.harness.runner import BenchmarkRunner  # noqa: E402
from benchmarks.protocol.leakage import leakage_audit  # noqa: E402
from benchmarks.questions import load_forecastbench  # noqa: E402
from benchmarks.run_folder import read_results  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3, help="passes over the records (the total is divided by them)")
    args = ap.parse_args()
    qs = load_forecastbench(question_type="market", one_per_source_question=True, sample_n=20, seed=0)
    by_id = {q.id: q for q in qs}
    items, calls = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for search in ("none", "local"):
            cfg = RunConfig(output_dir=tmp, run_id=f"parts-{search}", providers=["scripted"], search=search, concurrency=4)
            runner = BenchmarkRunner(cfg, provider_factory=lambda spec: scripted_world.provider(), questions=qs, progress=False)
            asyncio.run(runner.arun())
            path = runner.run_dir / "results.jsonl"
            for record, line in zip(read_results(path), path.read_text(encoding="utf-8").splitlines()):
                trace = PipelineTrace.model_validate(record["trace"])
                items.append((trace, by_id[record["question_id"]], line, record["audit"]))
                calls += [[ChatMessage(**m) for m in c["messages"]] for c in record["trace"]["recorded_calls"]]
    for trace, q, _, audit in items:
        assert leakage_audit(trace, q) == audit, q.id
    options = dict(json_schema=None, temperature=0.7, max_tokens=800, seed=None)

    def cpu_ms(work) -> float:
        t0 = time.thread_time()
        for _ in range(args.rounds):
            work()
        return (time.thread_time() - t0) / args.rounds * 1000

    audit = cpu_ms(lambda: [leakage_audit(t, q) for t, q, _, _ in items]) / len(items)
    store = cpu_ms(lambda: [storable_text(line) for _, _, line, _ in items]) / len(items)

    def keys() -> None:
        for messages in calls:
            fresh = [m.model_copy() for m in messages]
            cache_key("openai/gpt-4.1-mini", "gpt-4.1-mini", fresh, **options)
            request_key("openai/gpt-4.1-mini", fresh, **options)

    key_us = cpu_ms(keys) / len(calls) * 1000
    size = sum(len(line) for _, _, line, _ in items) / len(items) / 1000
    print(f"{len(items)} questions, {len(calls)} calls, record lines {size:.0f} KB on average, {args.rounds} rounds")
    print(f"leakage audit {audit:.3f} ms/question; storable_text of the record line {store:.3f} ms/question; "
          f"cache key and request key {key_us:.1f} us/call")


if __name__ == "__main__":
    main()
