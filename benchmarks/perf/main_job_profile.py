"""Profile of the main job (``forecast-reconcile run`` with no options) on the embedded model, per stage and
role, with the settings of before issue 15 ("today") and the defaults side by side in one invocation.

Each job runs in a fresh Python process, as a user's command does (interpreter start, model load, corpus
build, the run, the report), with ``--no-progress`` and its own output folder. The child process observes
every embedded-model call (:func:`agent_providers.local_llama.observe_calls`) and attributes it to its
pipeline stage and role through the prompts recorded in the run's traces. Printed per job:

* per stage and role: calls, prompt tokens, tokens reused from the model's context (prefix reuse),
  prompt tokens processed (evaluated), the largest prompt, tokens generated, seconds on the model, and
  the share of the job's capacity (wall time x model slots: several slots compute at once);
* the other stages: model load, corpus build, searches (BM25), report, and the rest (interpreter start,
  imports, question selection, harness, idle slots);
* questions, wall time, questions per minute, failed questions and calls, leakage findings, methods scored.

Then questions per minute of each setting and the ratio to "today" (target >= 2.5), and the embedded
provider's overhead over raw llama.cpp (``provider_overhead.py --schema``, target >= 0.95; ``--overhead-rounds 0``
skips it). The machine is shared
and noisy: compare settings run in one invocation (``--repeat`` alternates them), never absolute times of
different invocations. The load average is printed before and after.

Usage::

    python benchmarks/perf/main_job_profile.py                          # today, then the default job
    python benchmarks/perf/main_job_profile.py --settings default       # the default job only
    python benchmarks/perf/main_job_profile.py --repeat 2               # today, default, today, default
    python benchmarks/perf/main_job_profile.py --extra "--n 3"          # more options for every job
    python benchmarks/perf/main_job_profile.py --setting mine="--n 12 --threads 2"   # a setting of your own
    python benchmarks/perf/main_job_profile.py --before 01f201d          # also the job as the code was then

``--before COMMIT`` also runs ``forecast-reconcile run`` of the source tree at ``COMMIT`` (a git worktree in
the work folder, on this environment's packages), first in each round. It is timed from outside and its
questions counted from its ``results.jsonl`` (older code cannot be observed per call), so it credits what
options cannot reproduce (prompt layout, answer formats). :data:`BEFORE_ISSUE_15` is the main branch when
issue 15 was filed.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

#: Options of ``forecast-reconcile run`` that reproduce the main job as it was before issue 15: 6 questions,
#: one model context of one thread (llama-cpp-python's default prompt threads: every core), one question in
#: flight, every question reconciled, llama-cpp-python's grammar sampling (the whole vocabulary filtered at
#: every token), a 2,048-token context, the packaged Q4_1 weights. (Not options: members' prompts now put
#: the persona last, and answers cite evidence by number.)
TODAY = ("--n 6 --slots 1 --threads 1 --threads-batch 2 --concurrency 1 --reconcile-min-spread 0 "
         "--grammar-sampling filter --n-ctx 2048 --weights packaged")
#: The main branch when issue 15 was filed ("Before" in its first closing note: 6 questions, 175.5 s).
BEFORE_ISSUE_15 = "01f201d"
#: The settings compared by default: name -> options of ``forecast-reconcile run``.
SETTINGS: dict[str, str] = {"today": TODAY, "default": ""}
TARGET_RATIO = 2.5


# --- the child: one job, observed -------------------------------------------------------------------

def child(options: list[str], out: Path, result_path: Path) -> None:
    """Run ``forecast-reconcile run <options>`` in this process, observed; write the raw profile as JSON."""
    t0 = time.perf_counter()
    from agent_providers.local_llama import loaded_models, observe_calls
    from agent_tools import LocalCorpusSearch
    import benchmarks.report as report
    from benchmarks.cli import app

    t_imports = time.perf_counter() - t0
    t = time.perf_counter()
    LocalCorpusSearch.default()  # built once per process; the run below reuses it
    t_corpus = time.perf_counter() - t
    report_s = [0.0]
    write_report = report.write_report

    def timed_write_report(*args: Any, **kwargs: Any) -> Any:
        t1 = time.perf_counter()
        try:
            return write_report(*args, **kwargs)
        finally:
            report_s[0] += time.perf_counter() - t1

    report.write_report = timed_write_report
    with observe_calls() as calls:
        try:
            app(["run", *options, "-o", str(out), "--run-id", "job", "--no-progress"], standalone_mode=False)
        except SystemExit as exc:  # the command exits with its code
            if exc.code not in (0, None):
                raise
    run_dir = out / "job"
    records = [json.loads(line) for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    roles = call_roles(records)
    models = loaded_models()
    result = {
        "options": options,
        "child_s": time.perf_counter() - t0,
        "imports_s": t_imports,
        "corpus_s": t_corpus,
        "model_load_s": sum(m.load_s for m in models),
        "slots": max([len(getattr(m, "slots", [m])) for m in models] or [1]),
        "report_s": report_s[0],
        "runner_s": manifest.get("wall_time_s"),
        "n_questions": len(records),
        "n_failed_questions": sum(r["status"] != "ok" for r in records),
        "findings": sum(int((r.get("audit") or {}).get("findings", 0)) for r in records),
        "methods": sorted({m for r in records for m in r.get("methods", {})}),
        "baselines": sorted({b for r in records for b in r.get("baselines", {})}),
        "search_s": sum(s["outcome"].get("latency_s", 0.0) for r in records for s in r["trace"].get("recorded_searches", [])),
        "n_searches": sum(len(r["trace"].get("recorded_searches", [])) for r in records),
        "calls": [
            {"stage": roles.get(key(c.messages), ("unattributed", "?"))[0], "role": roles.get(key(c.messages), ("unattributed", "?"))[1],
             "prompt": c.prompt_tokens, "reused": c.cached_tokens, "generated": c.output_tokens,
             "seconds": c.seconds, "wait_s": c.wait_s, "error": c.error}
            for c in calls
        ],
    }
    result_path.write_text(json.dumps(result), encoding="utf-8")


def key(messages: Any) -> str:
    """The identity of a prompt: its messages' roles and contents (dicts or ChatMessages)."""
    return json.dumps([(m["role"], m["content"]) if isinstance(m, dict) else (m.role, m.content) for m in messages])


def call_roles(records: list[dict[str, Any]]) -> dict[str, tuple[str, str]]:
    """``prompt key -> (stage, role)`` of every recorded call of the run; the supervisor's two calls are
    told apart by their task (naming disagreements, then the decision)."""
    from agent_specialists.prompts import SUPERVISOR_DECISION_TASK

    stage_of = {"forecaster": "ensemble", "bull": "debate", "bear": "debate", "supervisor": "supervisor"}
    out: dict[str, tuple[str, str]] = {}
    for r in records:
        for c in r["trace"].get("recorded_calls", []):
            role = c["role"]
            if role == "supervisor":
                role = "decision" if SUPERVISOR_DECISION_TASK in c["messages"][-1]["content"] else "disagreements"
            out[key(c["messages"])] = (stage_of.get(c["role"], c["role"]), role)
    return out


# --- the parent: jobs side by side, tables -----------------------------------------------------------

@dataclass
class Job:
    """One finished job: its setting, wall time measured from outside (seconds) and the child's profile."""

    setting: str
    wall_s: float
    profile: dict[str, Any]
    load_before: float = 0.0
    rows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def qpm(self) -> float:
        """Questions per minute."""
        return 60.0 * self.profile["n_questions"] / self.wall_s


def run_job(setting: str, options: str, workdir: Path, *, verbose: bool) -> Job:
    """Run one job in a fresh process and return it (raises RuntimeError when the command fails)."""
    out = workdir / f"{setting}-{time.strftime('%H%M%S')}"
    out.mkdir(parents=True)
    result_path = out / "profile.json"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", options, "--child-out", str(out), "--child-result", str(result_path)]
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    wall = time.perf_counter() - t0
    if verbose or proc.returncode != 0:
        sys.stderr.write(proc.stderr[-4000:])
    if proc.returncode != 0:
        raise RuntimeError(f"job {setting!r} ({options or 'no options'}) failed with exit code {proc.returncode}")
    return Job(setting, wall, json.loads(result_path.read_text(encoding="utf-8")), load_before=load)


def run_commit_job(commit: str, workdir: Path, *, verbose: bool) -> Job:
    """Run ``forecast-reconcile run`` (no options) of the source tree at ``commit`` in a fresh process, from a
    git worktree under ``workdir``; timed from outside, questions counted from its results (raises
    RuntimeError when git or the command fails)."""
    repo = Path(__file__).resolve().parents[2]
    tree = workdir / f"tree-{commit}"
    if not tree.exists():
        subprocess.run(["git", "-C", str(repo), "worktree", "add", "--detach", str(tree), commit], check=True,
                       capture_output=True, text=True)
    out = workdir / f"before-{commit}-{time.strftime('%H%M%S')}"
    code = "import sys; from benchmarks.cli import app; app(sys.argv[1:])"
    cmd = [sys.executable, "-c", code, "run", "-o", str(out), "--run-id", "job", "--no-progress"]
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(tree)})
    wall = time.perf_counter() - t0
    if verbose or proc.returncode != 0:
        sys.stderr.write(proc.stderr[-4000:])
    if proc.returncode != 0:
        raise RuntimeError(f"the job at {commit} failed with exit code {proc.returncode}")
    records = [json.loads(line) for line in (out / "job" / "results.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    profile = {"n_questions": len(records), "n_failed_questions": sum(r["status"] != "ok" for r in records),
               "n_calls": sum(len(r["trace"].get("recorded_calls", [])) for r in records)}
    return Job(f"before {commit}", wall, profile, load_before=load)


def table(job: Job) -> str:
    """The per-stage profile of ``job`` as aligned text."""
    p = job.profile
    capacity = job.wall_s * p["slots"]
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for c in p["calls"]:
        groups[(c["stage"], c["role"])].append(c)
    order = {"ensemble": 0, "debate": 1, "supervisor": 2}
    lines = [f"{'stage':<11}{'role':<22}{'calls':>6}{'prompt':>9}{'reused':>9}{'processed':>10}{'max prompt':>11}"
             f"{'generated':>10}{'seconds':>9}{'share':>7}"]
    used = 0.0
    totals = defaultdict(float)
    for (stage, role), cs in sorted(groups.items(), key=lambda kv: (order.get(kv[0][0], 9), kv[0][1])):
        prompt = sum(c["prompt"] for c in cs)
        reused = sum(c["reused"] for c in cs)
        gen = sum(c["generated"] for c in cs)
        sec = sum(c["seconds"] for c in cs)
        used += sec
        for k, v in (("calls", len(cs)), ("prompt", prompt), ("reused", reused), ("generated", gen), ("seconds", sec)):
            totals[k] += v
        failed = sum(c["error"] is not None for c in cs)
        label = role + (f" ({failed} failed)" if failed else "")
        lines.append(f"{stage:<11}{label:<22}{len(cs):>6}{prompt:>9,}{reused:>9,}{prompt - reused:>10,}"
                     f"{max(c['prompt'] for c in cs):>11,}{gen:>10,}{sec:>9.1f}{sec / capacity:>7.0%}")
    lines.append(f"{'model total':<33}{int(totals['calls']):>6}{int(totals['prompt']):>9,}{int(totals['reused']):>9,}"
                 f"{int(totals['prompt'] - totals['reused']):>10,}{'':>11}{int(totals['generated']):>10,}"
                 f"{totals['seconds']:>9.1f}{totals['seconds'] / capacity:>7.0%}")
    others = [("model load", p["model_load_s"]), ("corpus build", p["corpus_s"]),
              (f"search x{p['n_searches']}", p["search_s"]), ("report", p["report_s"])]
    for name, sec in others:
        lines.append(f"{name:<33}{'':>64}{sec:>9.1f}{sec / capacity:>7.0%}")
    rest = capacity - used - sum(sec for _, sec in others)
    lines.append(f"{'start, harness, idle':<33}{'':>64}{rest:>9.1f}{rest / capacity:>7.0%}")
    return "\n".join(lines)


def summary_line(job: Job) -> str:
    p = job.profile
    return (f"{p['n_questions']} questions ({p['n_failed_questions']} failed) in {job.wall_s:.1f} s "
            f"= {job.qpm:.2f} questions/min; {p['slots']} model slot(s); "
            f"{sum(c['error'] is not None for c in p['calls'])} failed calls; leakage findings {p['findings']}; "
            f"{len(p['methods'])} methods + {len(p['baselines'])} baselines scored; load before {job.load_before:.2f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--settings", default=",".join(SETTINGS), help=f"settings to run, in order (known: {', '.join(SETTINGS)})")
    ap.add_argument("--setting", action="append", default=[], metavar="NAME=OPTIONS", help="add a setting of your own")
    ap.add_argument("--extra", default="", help="options added to every job")
    ap.add_argument("--repeat", type=int, default=1, help="rounds over the settings (alternating)")
    ap.add_argument("--keep", type=Path, default=None, help="keep the run folders here (default: a temporary folder)")
    ap.add_argument("--verbose", action="store_true", help="show each job's stderr")
    ap.add_argument("--before", default=None, metavar="COMMIT", help=f"also run the job of the source tree at COMMIT (e.g. {BEFORE_ISSUE_15}, the main branch when issue 15 was filed), timed from outside")
    ap.add_argument("--overhead-rounds", type=int, default=2, help="rounds of provider_overhead.py --schema at the end (0: skip)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--child-out", type=Path, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--child-result", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child is not None:
        child(shlex.split(args.child), args.child_out, args.child_result)
        return 0
    settings = dict(SETTINGS)
    for s in args.setting:
        name, _, options = s.partition("=")
        settings[name] = options
    names = [n.strip() for n in args.settings.split(",") if n.strip()] + [s.partition("=")[0] for s in args.setting]
    unknown = [n for n in names if n not in settings]
    if unknown:
        ap.error(f"unknown settings {unknown}; known: {', '.join(settings)}")
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="main-job-profile-"))
    print(f"load average before: {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores; run folders in {workdir}")
    jobs: list[Job] = []
    for rnd in range(args.repeat):
        if args.before:
            job = run_commit_job(args.before, workdir, verbose=args.verbose)
            jobs.append(job)
            p = job.profile
            print(f"\n== {job.setting} (round {rnd + 1}): forecast-reconcile run of the tree at {args.before}")
            print(f"{p['n_questions']} questions ({p['n_failed_questions']} failed) in {job.wall_s:.1f} s = "
                  f"{job.qpm:.2f} questions/min; {p['n_calls']} calls; load before {job.load_before:.2f}")
        for name in names:
            options = " ".join(x for x in (settings[name], args.extra) if x)
            job = run_job(name, options, workdir, verbose=args.verbose)
            jobs.append(job)
            print(f"\n== {name} (round {rnd + 1}): forecast-reconcile run {options}".rstrip())
            print(table(job))
            print(summary_line(job))
    if args.before:  # the worktree's files may stay with --keep; git forgets it
        repo = Path(__file__).resolve().parents[2]
        subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(workdir / f"tree-{args.before}")],
                       check=False, capture_output=True)
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    order = ([f"before {args.before}"] if args.before else []) + names
    qpm = {name: [j.qpm for j in jobs if j.setting == name] for name in order}
    print("\nquestions per minute: " + "; ".join(f"{n} {' '.join(f'{q:.2f}' for q in v)}" for n, v in qpm.items()))
    for base_name in [n for n in (f"before {args.before}" if args.before else None, "today") if n in qpm]:
        base = sum(qpm[base_name]) / len(qpm[base_name])
        for name, v in qpm.items():
            if name not in (base_name, f"before {args.before}"):
                target = "" if name == "today" else f" (target >= {TARGET_RATIO})"
                print(f"ratio {name} / {base_name}: {(sum(v) / len(v)) / base:.2f}{target}")
    if args.overhead_rounds > 0:
        print("\nprovider overhead vs raw llama.cpp (benchmarks/perf/provider_overhead.py --schema):", flush=True)
        script = Path(__file__).resolve().parent / "provider_overhead.py"
        subprocess.run([sys.executable, str(script), "--rounds", str(args.overhead_rounds), "--schema"], check=False,
                       env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
