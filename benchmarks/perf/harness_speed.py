"""Harness throughput and the response cache, measured side by side in one run.

1. Critical path: a scripted provider with a fixed latency per call (default 50 ms), 200 bundled
   questions, the full pipeline (3 members, debate, supervisor), ``concurrency`` questions in flight.
   The ideal time is what the pipeline's structure allows: per question, members in parallel (one call)
   then debate and supervisor in parallel (the longer of the two call chains), so
   ``cp_q = latency * (1 + max(debate_calls_q, supervisor_calls_q))``; with ``c`` questions in flight the
   ideal total is ``max(sum(cp_q) / c, max(cp_q))``. Printed: ideal / actual (target >= 0.9, issue 38), and the
   harness's CPU time per provider call (target <= 0.7 ms): the process's (every thread: the event loop, the
   record thread that runs the leakage audit, the response cache's writer) and the event loop's thread alone,
   after a warm-up run of a few questions (first-use imports and caches are not per-call costs).
2. Re-run from cache: a run at a realistic API latency (default 1,000 ms per call) and the same run
   again with a new run id and the same cache folder. Printed: provider calls of the re-run (target 0)
   and time cached / uncached (target <= 0.05). At 50 ms per call the harness's own work (parsing,
   aggregation, durable writes: about 5 ms per question) dominates both runs, so the ratio says little;
   the script prints it too.

Usage: ``python benchmarks/perf/harness_speed.py [--n 200] [--latency-ms 50] [--concurrency 32] [--cache-latency-ms 1000] [--no-cache-test]``
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.harness.config import RunConfig  # noqa: E402
from benchmarks.questions import load_forecastbench  # noqa: E402
from benchmarks.harness.runner import BenchmarkRunner  # noqa: E402
from benchmarks.run_folder import read_results  # noqa: E402
from agent_providers import scripted_world  # noqa: E402


def run_once(out: Path, run_id: str, qs, latency_s: float, concurrency: int, cache_dir: Path):
    providers = []

    def factory(spec):
        p = scripted_world.provider(latency_s=latency_s)
        providers.append(p)
        return p

    cfg = RunConfig(output_dir=str(out), run_id=run_id, providers=["scripted"], search="none",
                    concurrency=concurrency, cache_dir=str(cache_dir))
    runner = BenchmarkRunner(cfg, provider_factory=factory, questions=qs, progress=False)
    t0, cpu0, loop0 = time.perf_counter(), time.process_time(), time.thread_time()
    asyncio.run(runner.arun())  # the event loop runs on this thread
    elapsed, cpu, loop_cpu = time.perf_counter() - t0, time.process_time() - cpu0, time.thread_time() - loop0
    calls = sum(len(p.requests) for p in providers)
    run_once.cpu_s, run_once.loop_cpu_s = cpu, loop_cpu  # CPU seconds of the last run: process, event-loop thread
    return runner, elapsed, calls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=200, help="questions")
    ap.add_argument("--latency-ms", type=float, default=50.0, help="scripted latency per call, ms")
    ap.add_argument("--concurrency", type=int, default=32, help="questions in flight")
    ap.add_argument("--cache-latency-ms", type=float, default=1000.0, help="latency of the uncached run of the cache test, ms")
    ap.add_argument("--no-cache-test", action="store_true", help="measure the critical path and CPU per call only")
    args = ap.parse_args()
    latency = args.latency_ms / 1000
    qs = load_forecastbench(question_type="market", one_per_source_question=True, sample_n=args.n, seed=0)
    with tempfile.TemporaryDirectory() as tmp:
        out, cache = Path(tmp), Path(tmp) / "shared-cache"
        run_once(out, "warm-up", qs[:8], 0.0, 8, Path(tmp) / "warm-up-cache")
        runner, actual, calls = run_once(out, "uncached", qs, latency, args.concurrency, cache)
        cpu_ms, loop_ms = run_once.cpu_s / calls * 1000, run_once.loop_cpu_s / calls * 1000
        cps = []
        for r in read_results(runner.run_dir / "results.jsonl"):
            t = r["trace"]
            deb = sum(1 for c in t["recorded_calls"] if c["role"] in ("bull", "bear"))
            sup = sum(1 for c in t["recorded_calls"] if c["role"] == "supervisor")
            cps.append(latency * (1 + max(deb, sup)))
        ideal = max(sum(cps) / args.concurrency, max(cps))
        if args.no_cache_test:
            cached_fast = None
        else:
            _, cached_fast, _ = run_once(out, "cached-fast", qs, latency, args.concurrency, cache)
            slow_cache = Path(tmp) / "slow-cache"
            _, uncached_slow, _ = run_once(out, "uncached-slow", qs, args.cache_latency_ms / 1000, args.concurrency, slow_cache)
            _, cached_slow, cached_calls = run_once(out, "cached-slow", qs, args.cache_latency_ms / 1000, args.concurrency, slow_cache)
    print(f"questions {len(qs)}, latency {args.latency_ms:.0f} ms/call, concurrency {args.concurrency}, provider calls {calls}")
    print(f"critical path: ideal {ideal:.2f} s, actual {actual:.2f} s, ideal/actual = {ideal / actual:.3f} (target >= 0.9)")
    print(f"CPU per provider call: {cpu_ms:.3f} ms (target <= 0.7; the event loop's thread {loop_ms:.3f} ms), "
          f"wall per call {actual / calls * 1000:.3f} ms")
    if cached_fast is None:
        return
    print(f"re-run from cache at {args.cache_latency_ms:.0f} ms/call: provider calls {cached_calls} (target 0), "
          f"{cached_slow:.2f} s vs {uncached_slow:.2f} s, cached/uncached = {cached_slow / uncached_slow:.3f} (target <= 0.05)")
    print(f"re-run from cache at {args.latency_ms:.0f} ms/call: {cached_fast:.2f} s vs {actual:.2f} s, "
          f"cached/uncached = {cached_fast / actual:.3f} (harness overhead dominates)")


if __name__ == "__main__":
    main()
