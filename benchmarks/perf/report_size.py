"""Size and build time of the run viewer's page for a 1,000-question run, against a stated budget.

A scripted run (the deterministic scripted world, 3 members, debate, supervisor, the bundled dated corpus
as search backend, so every question has searches and kept/dropped results) of ``--n`` bundled market
questions is written first (not timed). Then :func:`benchmarks.report.write_report` builds the CSV,
Markdown and page; the page's own part (:func:`benchmarks.viewer.render_page`) is timed inside the same
call, so the two are measured side by side on one noisy machine. When Chromium and Playwright are
installed, the page is also opened headless: time to the load event and to the first trace shown.

Budget for 1,000 questions (2 cores; checked, printing PASS or MISS per line):

* page size <= 25 MB: the page embeds every trace but the full prompts only within
  :data:`benchmarks.viewer.page.PROMPT_BUDGET_CHARS` (they stay in ``results.jsonl``);
* page build (``render_page``) <= 30 s, and <= 1.5 x the rest of ``write_report`` (scoring, bootstrap
  intervals, tables): the page must not dominate the report;
* in the browser (when available): load <= 10 s, first trace shown <= 1 s.

Usage: ``python benchmarks/perf/report_size.py [--n 1000] [--keep DIR]``
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import report  # noqa: E402
from benchmarks.harness.config import RunConfig  # noqa: E402
from benchmarks.questions import load_forecastbench  # noqa: E402
from benchmarks.harness.runner import BenchmarkRunner  # noqa: E402
from agent_providers import scripted_world  # noqa: E402

BUDGET_MB = 25.0
BUDGET_BUILD_S = 30.0
BUDGET_BUILD_RATIO = 1.5
BUDGET_LOAD_S = 10.0
BUDGET_OPEN_S = 1.0


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def scripted_run(out: Path, n: int) -> Path:
    qs = load_forecastbench(question_type="market", one_per_source_question=True, sample_n=n, seed=0)
    if len(qs) < n:
        raise SystemExit(f"only {len(qs)} bundled market questions; ask for --n {len(qs)} or fewer")
    cfg = RunConfig(output_dir=str(out), run_id=f"perf-{n}", providers=["scripted"], search="local", concurrency=16)
    runner = BenchmarkRunner(cfg, provider_factory=lambda spec: scripted_world.provider(), questions=qs, progress=False)
    asyncio.run(runner.arun())
    return runner.run_dir


def timed_report(run_dir: Path, out: Path) -> tuple[Path, float, float]:
    """``write_report`` with its page rendering timed inside it: (page, total seconds, page seconds)."""
    page_s = 0.0
    render = report.render_page

    def timed_render(*args, **kwargs):
        nonlocal page_s
        t0 = time.perf_counter()
        try:
            return render(*args, **kwargs)
        finally:
            page_s += time.perf_counter() - t0

    report.render_page = timed_render
    try:
        t0 = time.perf_counter()
        rep = report.write_report([run_dir], out)
        total = time.perf_counter() - t0
    finally:
        report.render_page = render
    return rep.html_path, total, page_s


def browser_times(page: Path) -> tuple[float, float] | None:
    """(seconds to the load event, seconds to show the first trace) in headless Chromium, or None."""
    exe = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if exe is None:
        return None
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        pg = b.new_page(viewport={"width": 1280, "height": 900})
        t0 = time.perf_counter()
        pg.goto(page.resolve().as_uri(), wait_until="load", timeout=120_000)
        load = time.perf_counter() - t0
        t0 = time.perf_counter()
        pg.locator("#question-table tbody.item tr.row").first.click()
        pg.locator("#question-table tbody.item tr.detail article.member").first.wait_for()
        opened = time.perf_counter() - t0
        b.close()
    return load, opened


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000, help="questions in the scripted run")
    ap.add_argument("--keep", type=Path, default=None, help="write the run and the page here (default: a temporary folder)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        t0 = time.perf_counter()
        run_dir = scripted_run(root, args.n)
        run_s = time.perf_counter() - t0
        results_mb = (run_dir / "results.jsonl").stat().st_size / 1e6
        page, total_s, page_s = timed_report(run_dir, root / "report")
        size_mb = page.stat().st_size / 1e6
        rest_s = total_s - page_s
        print(f"scripted run: {args.n} questions in {run_s:.1f} s, results.jsonl {results_mb:.1f} MB")
        print(f"page size: {size_mb:.2f} MB (budget <= {BUDGET_MB:.0f} MB) {verdict(size_mb <= BUDGET_MB)}")
        print(f"page build: {page_s:.2f} s (budget <= {BUDGET_BUILD_S:.0f} s) {verdict(page_s <= BUDGET_BUILD_S)}")
        print(f"write_report: {total_s:.2f} s in all; page / rest of the report = {page_s:.2f} / {rest_s:.2f} = "
              f"{page_s / rest_s:.2f} (budget <= {BUDGET_BUILD_RATIO}) {verdict(page_s <= BUDGET_BUILD_RATIO * rest_s)}")
        times = browser_times(page)
        if times is None:
            print("browser: not measured (no Chromium or no Playwright installed)")
        else:
            load, opened = times
            print(f"browser load: {load:.2f} s (budget <= {BUDGET_LOAD_S:.0f} s) {verdict(load <= BUDGET_LOAD_S)}")
            print(f"first trace shown: {opened:.3f} s (budget <= {BUDGET_OPEN_S:.0f} s) {verdict(opened <= BUDGET_OPEN_S)}")
        if args.keep:
            print(f"kept: {page}")


if __name__ == "__main__":
    main()
