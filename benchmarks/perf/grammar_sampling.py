"""Grammar-constrained sampling side by side: llama-cpp-python's chain ("filter": the grammar tests every
vocabulary token at every step) against :mod:`agent_providers.llama_sampling` ("resample": the sampled token
is checked, the vocabulary filtered only on rejection).

The workload is the calls of one real pipeline question (``llama_settings.workload``: members, bull, bear,
the supervisor's two calls, each under its own JSON schema), on one context of one thread, every call from
an empty context. Both modes alternate round by round (this machine is shared and noisy). Per mode it prints
wall seconds per round (median), generated tokens, seconds per generated token after subtracting the
prompt-processing time measured in the same round (a 1-token call of every prompt), and the share of tokens
resampled; then the ratio of generation speeds and whether the greedy answers (temperature 0) are the same
text in both modes.

Usage::

    python benchmarks/perf/grammar_sampling.py [--rounds 3] [--temperature 0.7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

MODES = ("filter", "resample")


def run_calls(llama: Any, calls: list, temperature: float, *, prompt_only: bool = False) -> tuple[float, int, int, list[str]]:
    """Run ``calls`` one after another from an empty context: ``(seconds, generated tokens, resampled
    tokens, answer texts)``. ``prompt_only`` generates 1 token without a grammar (prompt processing time)."""
    t0 = time.perf_counter()
    generated = resampled = 0
    texts = []
    for messages, options in calls:
        opts = dict(options, temperature=temperature)
        if prompt_only:
            opts.pop("grammar")
            opts["max_tokens"] = 1
        llama.reset()
        r = llama.create_chat_completion(messages=messages, **opts)
        generated += r["usage"]["completion_tokens"]
        resampled += getattr(getattr(llama, "last_sampler", None), "resampled", 0)
        texts.append(r["choices"][0]["message"]["content"])
    return time.perf_counter() - t0, generated, resampled, texts


def main(argv: list[str] | None = None) -> int:
    from agent_providers.llama_sampling import llama_class
    from agent_providers.local_llama import smollm2_path
    from llama_settings import workload

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3, help="rounds over both modes (alternating order)")
    ap.add_argument("--temperature", type=float, default=0.7, help="temperature of the timed rounds (members' default)")
    args = ap.parse_args(argv)
    calls = workload()
    path = str(smollm2_path())
    llamas = {m: llama_class(m)(model_path=path, n_ctx=2048, n_threads=1, n_threads_batch=1, verbose=False) for m in MODES}
    print(f"{len(calls)} calls per round, 1 thread; load average {os.getloadavg()[0]:.2f}")
    rows: dict[str, list[tuple[float, float, int, int]]] = {m: [] for m in MODES}
    for rnd in range(args.rounds):
        for m in (MODES if rnd % 2 == 0 else MODES[::-1]):
            prompt_s = run_calls(llamas[m], calls, 0.0, prompt_only=True)[0]
            wall, gen, res, _ = run_calls(llamas[m], calls, args.temperature)
            rows[m].append((wall, wall - prompt_s, gen, res))
    print(f"load average after {os.getloadavg()[0]:.2f}")
    print(f"{'mode':<10}{'wall s':>8}{'gen tokens':>11}{'ms/gen token':>14}{'resampled':>11}")
    speed = {}
    for m in MODES:
        wall = statistics.median(r[0] for r in rows[m])
        per_token = statistics.median(r[1] / max(1, r[2]) for r in rows[m])
        gen = sum(r[2] for r in rows[m]) // len(rows[m])
        res = sum(r[3] for r in rows[m]) / max(1, sum(r[2] for r in rows[m]))
        speed[m] = per_token
        print(f"{m:<10}{wall:>8.1f}{gen:>11,}{1000 * per_token:>14.1f}{res:>10.0%}")
    print(f"generation speed resample / filter: {speed['filter'] / speed['resample']:.2f}x")
    greedy = {m: run_calls(llamas[m], calls, 0.0)[3] for m in MODES}
    same = sum(a == b for a, b in zip(greedy["filter"], greedy["resample"]))
    print(f"greedy answers identical: {same} of {len(calls)}")
    return 0 if same == len(calls) else 1


if __name__ == "__main__":
    raise SystemExit(main())
