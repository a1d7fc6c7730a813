"""Overhead of :class:`LocalLlamaProvider` over raw ``llama_cpp.Llama.create_chat_completion``.

Runs the same prompts through both paths in one process, interleaved (order alternates every round so
neither path systematically runs first), on the *same* loaded model. Before every timed call the model's
KV cache is reset (outside the timer) so neither path profits from prompt-prefix reuse. Prints generated
tokens per second for each path and their ratio (provider / raw; target >= 0.95), the median of the
per-pair ratios (each prompt runs through both paths back to back, so this is robust to other load on
the machine changing during the run), and checks that both paths produced the same text (greedy
decoding, same seed).

Usage::

    python benchmarks/perf/provider_overhead.py [--rounds 3] [--max-tokens 64] [--threads N] [--schema]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agent_providers.base import finish_completion, normalise_messages  # noqa: E402
from agent_providers.local_llama import LocalLlamaProvider, grammar_for_schema  # noqa: E402

PROMPTS = [
    "Will the price of gold be higher at the end of next year than today? Answer with a probability and one reason.",
    "Name three base rates a forecaster should check before predicting an election.",
    "Explain the Brier score in two sentences.",
    "Is it likely that a new programming language enters the top five of a popularity index within a year?",
]
SCHEMA = {
    "type": "object",
    "properties": {
        "p_yes_percent": {"type": "integer", "enum": list(range(101))},
        "rationale": {"type": "string", "maxLength": 200},
    },
    "required": ["p_yes_percent", "rationale"],
}


def run(rounds: int, max_tokens: int, threads: int | None, use_schema: bool) -> dict[str, float]:
    """Time both paths; return tokens/s per path and the ratio."""
    provider = LocalLlamaProvider(n_threads=threads)
    llm, lock = provider.llama, provider.lock
    schema = SCHEMA if use_schema else None
    totals = {"provider": [0, 0.0], "raw": [0, 0.0]}  # [generated tokens, seconds]
    mismatches = 0
    pair_ratios: list[float] = []  # provider tok/s over raw tok/s, per back-to-back pair

    def via_provider(prompt: str) -> tuple[int, str]:
        c = provider.complete([{"role": "user", "content": prompt}], json_schema=schema,
                              max_tokens=max_tokens, temperature=0.0, seed=0)
        return c.usage.output_tokens or 0, c.text

    def via_raw(prompt: str) -> tuple[int, str]:
        kwargs = dict(messages=[{"role": "user", "content": prompt}], max_tokens=max_tokens, temperature=0.0, seed=0)
        if schema is not None:
            kwargs["grammar"] = grammar_for_schema(schema)
        with lock:
            r = llm.create_chat_completion(**kwargs)
        return r["usage"]["completion_tokens"], r["choices"][0]["message"]["content"] or ""

    paths = {"provider": via_provider, "raw": via_raw}
    # warm-up (not timed)
    via_raw(PROMPTS[0])
    for rnd in range(rounds):
        for i, prompt in enumerate(PROMPTS):
            order = ["provider", "raw"] if (rnd + i) % 2 == 0 else ["raw", "provider"]
            texts, rates = {}, {}
            for name in order:
                llm.reset()
                t0 = time.perf_counter()
                try:
                    n, text = paths[name](prompt)
                except Exception as exc:  # a truncated answer still generated max_tokens tokens
                    if type(exc).__name__ != "ResponseTruncated":
                        raise
                    n, text = max_tokens, exc.text or ""
                dt = time.perf_counter() - t0
                totals[name][0] += n
                totals[name][1] += dt
                texts[name] = text
                rates[name] = n / dt
            mismatches += texts["provider"] != texts["raw"]
            pair_ratios.append(rates["provider"] / rates["raw"])
    tps = {name: tok / sec for name, (tok, sec) in totals.items()}
    # The adapter's own Python work per call (message normalisation, response -> Completion, finishing),
    # timed on a real response without generation, so it does not depend on the machine's load.
    with lock:
        llm.reset()
        raw_resp = llm.create_chat_completion(messages=[{"role": "user", "content": PROMPTS[2]}], max_tokens=max_tokens,
                                              temperature=0.0, seed=0)
    raw_resp["choices"][0]["finish_reason"] = "stop"
    n_rep = 5000
    t0 = time.perf_counter()
    for _ in range(n_rep):
        msgs = normalise_messages([{"role": "user", "content": PROMPTS[2]}])
        finish_completion(provider.to_completion(raw_resp), 0.0, provider)
    adapter_us = (time.perf_counter() - t0) / n_rep * 1e6
    del msgs
    return {
        "provider_tok_s": tps["provider"],
        "raw_tok_s": tps["raw"],
        "ratio": tps["provider"] / tps["raw"],
        "median_pair_ratio": statistics.median(pair_ratios),
        "adapter_overhead_us": adapter_us,
        "mean_call_s": totals["raw"][1] / (rounds * len(PROMPTS)),
        "provider_tokens": totals["provider"][0],
        "raw_tokens": totals["raw"][0],
        "text_mismatches": mismatches,
        "calls_per_path": rounds * len(PROMPTS),
        "threads": provider.n_threads,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3, help="passes over the prompt list")
    ap.add_argument("--max-tokens", type=int, default=64, help="generated tokens per call at most")
    ap.add_argument("--threads", type=int, default=None, help="llama.cpp CPU threads (default: cores - 1)")
    ap.add_argument("--schema", action="store_true", help="constrain answers with the forecast JSON schema")
    args = ap.parse_args(argv)
    res = run(args.rounds, args.max_tokens, args.threads, args.schema)
    print(f"threads               : {res['threads']}")
    print(f"calls per path        : {res['calls_per_path']}")
    print(f"generated tokens      : provider {res['provider_tokens']}, raw {res['raw_tokens']}")
    print(f"raw llama_cpp         : {res['raw_tok_s']:.1f} generated tok/s")
    print(f"LocalLlamaProvider    : {res['provider_tok_s']:.1f} generated tok/s")
    print(f"ratio provider / raw  : {res['ratio']:.3f} (target >= 0.95)")
    print(f"median paired ratio   : {res['median_pair_ratio']:.3f} (robust to load changes during the run)")
    print(f"text mismatches       : {res['text_mismatches']}")
    print(f"adapter overhead      : {res['adapter_overhead_us']:.0f} us per call "
          f"(vs {res['mean_call_s'] * 1e3:.0f} ms per raw call)")
    return 0 if res["median_pair_ratio"] >= 0.95 else 1


if __name__ == "__main__":
    raise SystemExit(main())
