"""Throughput of the embedded model under its thread, slot and batch settings, measured side by side.

One workload, the prompts of a real pipeline question (three members, bull, bear, the supervisor's two
calls) built by the scripted world's pipeline and answered under each call's own JSON schema, runs
under each setting; the settings alternate round by round, so a change of load on this shared machine
hits them alike. Every call starts from an empty context (no prefix reuse), so prompt processing and
generation are both measured. Prints per setting: wall seconds per round (median), prompt tokens per
second, generated tokens per second, and the workload's throughput relative to the first setting.

Settings are ``threads x slots / threads_batch / n_batch [/ weights]``: ``slots`` contexts each run
``threads`` threads and take calls at once (:class:`agent_providers.local_llama.LoadedModel`), on the
packaged weights or another format (:mod:`agent_providers.gguf_weights`; default ``packaged``). The
default list compares today's setting (1 thread, prompt processing on every core, 1 slot), one thread
everywhere, two threads, two slots of one thread, batch sizes, and the default Q8_0 weights.

Usage::

    python benchmarks/perf/llama_settings.py [--rounds 3] [--settings "1x1/2/512,1x2/1/512,1x2/1/512/q8_0"]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

DEFAULT_SETTINGS = "1x1/2/512,1x1/1/512,2x1/2/512,1x2/1/512,1x2/1/256,1x2/1/1024,1x1/2/512/q8_0,1x2/1/512/q8_0"


@dataclass(frozen=True)
class Setting:
    """``threads`` per context, ``slots`` contexts, prompt-processing threads, prompt batch (tokens), and
    the weight format (:data:`agent_providers.gguf_weights.WEIGHT_FORMATS`)."""

    threads: int
    slots: int
    threads_batch: int
    n_batch: int
    weights: str = "packaged"

    @classmethod
    def parse(cls, text: str) -> "Setting":
        """``"1x2/1/512"`` -> 1 thread, 2 slots, 1 prompt thread, batches of 512 tokens, packaged weights;
        ``"1x2/1/512/q8_0"`` the same on Q8_0 weights."""
        ts, tb, nb, *weights = text.split("/")
        t, s = ts.split("x")
        return cls(int(t), int(s), int(tb), int(nb), *weights)

    def __str__(self) -> str:
        tail = "" if self.weights == "packaged" else f"/{self.weights}"
        return f"{self.threads}x{self.slots}/{self.threads_batch}/{self.n_batch}{tail}"


def workload() -> list[tuple[list[dict[str, str]], dict[str, Any]]]:
    """``(messages, call options)`` of every call of one pipeline question (scripted answers, real prompts)."""
    import asyncio

    from agent_providers.local_llama import grammar_for_schema
    from agent_research import ForecastPipeline, PipelineConfig
    from agent_providers import scripted_world
    from benchmarks.harness.config import RUN_PIPELINE
    from agent_tools import LocalCorpusSearch, ToolExecutor
    from benchmarks.questions import load_forecastbench

    q = load_forecastbench(question_type="market", sample_n=1, seed=1)[0]
    provider = scripted_world.provider()
    config: PipelineConfig = RUN_PIPELINE.model_copy(update={"reconcile_min_spread": 0.0})
    pipeline = ForecastPipeline.from_config(provider, ToolExecutor(LocalCorpusSearch.default(), snippet_chars=200), config)
    trace = asyncio.run(pipeline.arun(q))
    out = []
    for call in trace.recorded_calls:
        schema = _schema_of(call.role, call.messages)
        out.append(([{"role": m.role, "content": m.content} for m in call.messages],
                    {"grammar": grammar_for_schema(schema), "max_tokens": 512, "temperature": 0.0, "seed": 0}))
    return out


def _schema_of(role: str, messages: list[Any]) -> dict[str, Any]:
    """The answer schema of a recorded call of ``role`` with ``messages`` (its evidence cites one of the
    sources the prompt numbers ``[n]``)."""
    from agent_specialists import prompts as sp
    from agent_tools.parsing import forecast_json_schema

    numbers = [int(n) for m in messages for n in re.findall(r"^\s*(?:- evidence )?\[(\d+)\]", m.content, re.M)]
    n_sources = max(numbers, default=0)
    if role == "forecaster":
        return forecast_json_schema(1, n_sources=n_sources)
    if role in ("bull", "bear"):
        return sp.debate_schema(n_sources)
    return sp.decision_schema(n_sources) if sp.SUPERVISOR_DECISION_TASK in messages[-1].content else sp.disagreement_schema(2)


def run_round(llamas: list[Any], calls: list[tuple[list[dict[str, str]], dict[str, Any]]]) -> tuple[float, int, int]:
    """Run ``calls`` on the contexts at once (each context takes the next waiting call); returns wall
    seconds, prompt tokens and generated tokens."""
    queue = list(calls)
    lock = threading.Lock()
    totals = [0, 0]

    def worker(llama: Any) -> None:
        while True:
            with lock:
                if not queue:
                    return
                messages, options = queue.pop(0)
            llama.reset()
            r = llama.create_chat_completion(messages=messages, **options)
            with lock:
                totals[0] += r["usage"]["prompt_tokens"]
                totals[1] += r["usage"]["completion_tokens"]

    threads = [threading.Thread(target=worker, args=(llama,)) for llama in llamas]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - t0, totals[0], totals[1]


def main(argv: list[str] | None = None) -> int:
    import os

    import llama_cpp

    from agent_providers.gguf_weights import weights_file
    from agent_providers.local_llama import smollm2_path

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3, help="rounds over the settings (alternating)")
    ap.add_argument("--settings", default=DEFAULT_SETTINGS, help="comma-separated threads x slots / threads_batch / n_batch")
    ap.add_argument("--n-ctx", type=int, default=2048, help="context window of each slot (tokens)")
    args = ap.parse_args(argv)
    settings = [Setting.parse(s) for s in args.settings.split(",")]
    calls = workload()
    models = {s: [llama_cpp.Llama(model_path=str(weights_file(smollm2_path(), s.weights)), n_ctx=args.n_ctx, n_threads=s.threads, n_threads_batch=s.threads_batch,
                                  n_batch=s.n_batch, verbose=False) for _ in range(s.slots)] for s in settings}
    print(f"{len(calls)} calls per round; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f}")
    results: dict[Setting, list[tuple[float, int, int]]] = {s: [] for s in settings}
    for rnd in range(args.rounds):
        order = settings if rnd % 2 == 0 else list(reversed(settings))
        for s in order:
            results[s].append(run_round(models[s], calls))
    print(f"load average after {os.getloadavg()[0]:.2f}")
    base = None
    print(f"{'setting':<14}{'wall s':>8}{'prompt tok':>11}{'gen tok':>9}{'workload/min':>14}{'vs first':>10}")
    for s in settings:
        walls = [w for w, _, _ in results[s]]
        med = statistics.median(walls)
        _, pt, ct = results[s][0]
        per_min = 60.0 / med
        base = base or per_min
        print(f"{str(s):<14}{med:>8.1f}{pt:>11,}{ct:>9,}{per_min:>14.2f}{per_min / base:>10.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
