"""Runs at scale, measured side by side in one run: rate-limited throughput and the Ray executor's overhead.

1. **Throughput under rate limits.** The whole harness (:class:`BenchmarkRunner`, 3 members, a 2-round
   debate, the supervisor: 11 calls per question) on the OpenAI adapter against the loopback fake server
   (:mod:`tests.doubles.fake_api`) answering after 50 ms, which refuses (HTTP 429) anything over its
   requests-per-minute limit. Time is scaled: a "minute" lasts ``--minute-s`` seconds (default 4) for
   the server and the limiter alike, so a 240-per-minute limit is 60 requests per second here. Three
   scenarios, each with one binding limit: requests per minute; tokens per minute (the limiter's
   estimate of each request: prompt characters / 4 + ``max_tokens``); requests in flight (``concurrent``
   / 50 ms). Printed: the binding limit's ideal rate, the rate reached, their ratio (target >= 0.9; the
   limiter paces at 95 % of a per-minute limit by design) and the 429s (target 0).
   **Where a call's time goes** (printed after the table): the OpenAI adapter against the same fake, one call at a
   time, against a bare ``httpx.Client`` posting the same body: wall time per call beyond the latency and CPU per
   call (the calling thread's, and the process's, which includes the fake server's thread). With 2 requests in
   flight each call's own overhead is added to its 50 ms, so this is what keeps the ``concurrent`` scenario from
   its ideal; the rest is a loaded machine's wake-up delays.
2. **Ray overhead per question.** The same scripted questions (no latency, no search: the harness's own
   work) with the local executor and with ``--executor ray`` on a local 2-CPU cluster, 2 questions in
   flight each. Printed: seconds per question of each, Ray's extra per question, and the cluster's
   start-up time (paid once per run, not per question).

Usage: ``python benchmarks/perf/scale.py [--n 40] [--minute-s 4] [--ray-n 80] [--no-ray]``
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agent_providers.openai_provider import OpenAIProvider  # noqa: E402
from agent_providers import scripted_world  # noqa: E402
from benchmarks.harness.config import RunConfig  # noqa: E402
from tests.doubles.fake_api import FakeProviderAPI  # noqa: E402
from benchmarks.questions import load_forecastbench  # noqa: E402
from benchmarks.harness.runner import BenchmarkRunner  # noqa: E402

LATENCY_S = 0.05
KEY = "sk-perf-FAKE"


class ScaledRunner(BenchmarkRunner):
    """The runner with every rate limit on the scaled clock (a minute of ``minute_s`` seconds): its provider
    stack's :meth:`~benchmarks.harness.provider_stack.ProviderStack.rate_limits_for` (which builds the limiters)
    scaled. (Until issue 38 this overrode a method of the runner that nothing called any more, so the
    per-minute scenarios ran at real-minute rates, 1/15 of the scaled ones.)"""

    minute_s = 60.0

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        unscaled = self.stack.rate_limits_for

        def scaled(spec: str):
            limits = unscaled(spec)
            return None if limits is None else dataclasses.replace(limits, minute_s=self.minute_s)

        self.stack.rate_limits_for = scaled  # type: ignore[method-assign]


def throughput(out: Path, qs, *, minute_s: float, server_rpm: int, limits: str, label: str) -> dict:
    server = FakeProviderAPI(latency_s=LATENCY_S, requests_per_minute=server_rpm, minute_s=minute_s)
    try:
        cfg = RunConfig(output_dir=str(out), run_id=label, search="none", providers=["openai/gpt-4.1-mini"],
                        concurrency=32, max_tokens=128, rate_limits={"openai": limits})
        runner = ScaledRunner(cfg, provider_factory=lambda s: OpenAIProvider("gpt-4.1-mini", api_key=KEY, base_url=server.url + "/v1"),
                              questions=qs, progress=False)
        runner.minute_s = minute_s
        t0 = time.perf_counter()
        asyncio.run(runner.arun())
        wall = time.perf_counter() - t0
        limiter = runner.stack.limiters["openai/gpt-4.1-mini"]
        times = sorted(server.accepted)
        span = times[-1] - times[0]
        calls = len(times)
        lim = limiter.limits
        rates = {}
        if lim.requests_per_minute:
            rates["requests per minute"] = lim.requests_per_minute / minute_s
        if lim.tokens_per_minute:
            rates["tokens per minute"] = lim.tokens_per_minute / minute_s / (limiter.stats.tokens_estimated / max(limiter.stats.requests, 1))
        if lim.max_concurrent:
            rates["requests in flight"] = lim.max_concurrent / LATENCY_S
        binding = min(rates, key=rates.get)
        reached = (calls - 1) / span if span > 0 else float("nan")
        return {"label": label, "binding": binding, "ideal": rates[binding], "reached": reached, "ratio": reached / rates[binding],
                "calls": calls, "refused": server.refused, "wall": wall}
    finally:
        server.close()


def one_call_at_a_time(n: int = 40) -> dict:
    """Wall seconds per call beyond the latency and CPU seconds per call, the adapter and a bare httpx client
    posting the adapter's request body, ``n`` calls each after 3 warm-up calls (see the module docstring)."""
    import httpx

    from agent_schemas import ChatMessage

    server = FakeProviderAPI(latency_s=LATENCY_S)
    try:
        provider = OpenAIProvider("gpt-4.1-mini", api_key=KEY, base_url=server.url + "/v1")
        messages = [ChatMessage(role="system", content="You forecast. " * 60), ChatMessage(role="user", content="Will it rain? " * 60)]
        options = dict(json_schema=None, temperature=0.0, max_tokens=128, seed=None)
        body = {"model": "gpt-4.1-mini", "messages": [{"role": m.role, "content": m.content} for m in messages],
                "temperature": 0.0, "max_tokens": 128}
        out = {}
        with httpx.Client() as client:
            calls = {"adapter": lambda: provider.complete(messages, **options),
                     "httpx": lambda: client.post(server.url + "/v1/chat/completions", json=body,
                                                  headers={"Authorization": f"Bearer {KEY}"}).raise_for_status()}
            for name, call in calls.items():
                for _ in range(3):
                    call()
                w0, c0, t0 = time.perf_counter(), time.process_time(), time.thread_time()
                for _ in range(n):
                    call()
                out[name] = ((time.perf_counter() - w0) / n - LATENCY_S, (time.thread_time() - t0) / n, (time.process_time() - c0) / n)
        return out
    finally:
        server.close()


def per_question(out: Path, qs, run_id: str, **cfg) -> float:
    config = RunConfig(output_dir=str(out), run_id=run_id, search="none", providers=["scripted"], concurrency=2, **cfg)
    runner = BenchmarkRunner(config, provider_factory=lambda s: scripted_world.provider(), questions=qs, progress=False)
    t0 = time.perf_counter()
    asyncio.run(runner.arun())
    return (time.perf_counter() - t0) / len(qs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=40, help="questions per throughput scenario (11 calls each)")
    ap.add_argument("--minute-s", type=float, default=4.0, help="seconds in a scaled minute")
    ap.add_argument("--ray-n", type=int, default=80, help="questions of the Ray comparison")
    ap.add_argument("--no-ray", action="store_true", help="skip the Ray comparison")
    args = ap.parse_args()
    qs = load_forecastbench(question_type="market", one_per_source_question=True, sample_n=args.n, seed=3)
    m = args.minute_s
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        rows = [
            throughput(out, qs, minute_s=m, server_rpm=240, limits="rpm:240,tpm:none,concurrent:64", label="rpm"),
            throughput(out, qs, minute_s=m, server_rpm=240, limits="rpm:none,tpm:150000,concurrent:64", label="tpm"),
            throughput(out, qs, minute_s=m, server_rpm=10**6, limits="rpm:none,tpm:none,concurrent:2", label="concurrent"),
        ]
        print(f"1. throughput under rate limits: OpenAI adapter -> loopback fake at {LATENCY_S * 1000:.0f} ms per call, "
              f"{len(qs)} questions x 11 calls, a minute scaled to {m:g} s")
        print(f"{'scenario':<11} {'binding limit':<20} {'ideal /s':>9} {'reached /s':>11} {'reached/ideal':>14} {'429s':>5} {'wall s':>7}")
        for r in rows:
            print(f"{r['label']:<11} {r['binding']:<20} {r['ideal']:>9.1f} {r['reached']:>11.1f} {r['ratio']:>14.3f} {r['refused']:>5} {r['wall']:>7.1f}")
        print("target: reached/ideal >= 0.9 and no 429 (the limiter paces per-minute limits at 95 %)")
        costs = one_call_at_a_time()
        print(f"one call at a time at {LATENCY_S * 1000:.0f} ms: " + "; ".join(
            f"{name} {w * 1000:.1f} ms beyond the latency, CPU {t * 1000:.2f} ms in the caller's thread, {c * 1000:.2f} ms in the process"
            for name, (w, t, c) in costs.items()))
        if args.no_ray:
            return
        try:
            import ray
        except ImportError:
            print("2. Ray: not installed (pip install 'forecast-reconcile[ray]'); skipped")
            return
        rqs = load_forecastbench(question_type="market", one_per_source_question=True, sample_n=args.ray_n, seed=4)
        t0 = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        start_s = time.perf_counter() - t0
        try:
            per_question(out, rqs[:4], "ray-warm", executor="ray")  # workers start and build their providers once
            local = per_question(out, rqs, "local")
            remote = per_question(out, rqs, "ray", executor="ray")
        finally:
            ray.shutdown()
        print(f"2. Ray overhead: {len(rqs)} scripted questions (no latency, no search), 2 in flight, local 2-CPU cluster")
        print(f"local executor {local * 1000:.1f} ms/question; Ray executor {remote * 1000:.1f} ms/question; "
              f"Ray's extra {1000 * (remote - local):+.1f} ms/question ({remote / local:.2f}x); cluster start-up {start_s:.1f} s once")


if __name__ == "__main__":
    main()
