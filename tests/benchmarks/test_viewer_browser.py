"""The run viewer in a real headless browser (Debian's Chromium, driven by Playwright).

The page of a scripted run is opened from disk: no console error, no request leaves the file, the
leaderboard fits a 1,280 px wide viewport, sorting and details work, a click on a question shows its
members' rationales and debate turns, filters count what the results say, and markup in a question text
or a model's answer is shown as text and never runs. Screenshots of the leaderboard and of one question's
trace are saved in the test's tmp folder (and copied to ``$FORECAST_RECONCILE_SCREENSHOTS`` when set).

Skipped, with the reason, when no Chromium or no Playwright is installed (``.ci/run`` installs both).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.benchmarks.viewer_run import HOSTILE_RATIONALE, HOSTILE_TEXT

BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
VIEWPORT = {"width": 1280, "height": 900}


def chromium_executable() -> str | None:
    """``$FORECAST_RECONCILE_CHROMIUM``, else the first Chromium on the PATH."""
    env = os.environ.get("FORECAST_RECONCILE_CHROMIUM")
    if env:
        return env if Path(env).exists() else None
    return next((p for p in map(shutil.which, BROWSER_NAMES) if p), None)


@pytest.fixture(scope="module")
def browser():
    exe = chromium_executable()
    if exe is None:
        pytest.skip("no Chromium installed (apt-get install chromium; or set FORECAST_RECONCILE_CHROMIUM): "
                    "the run-viewer browser tests need a real browser")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright; "
                                   "no browser download is needed, the system Chromium is used)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        yield b
        b.close()


class PageWatch:
    """A page at 1,280 x 900 with every console error, page error and non-file request recorded."""

    def __init__(self, browser, page_path: Path) -> None:
        self.context = browser.new_context(viewport=VIEWPORT)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.errors.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(page_path.resolve().as_uri(), wait_until="load")

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def watch(browser, viewer_run):
    w = PageWatch(browser, viewer_run.page)
    yield w
    w.close()


def save_screenshot(locator, tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    locator.screenshot(path=str(path))
    assert path.stat().st_size > 10_000
    target = os.environ.get("FORECAST_RECONCILE_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(target) / name)
    return path


def row_of(page, question_id: str):
    return page.locator(f"#question-table tbody.item[data-search*='{question_id.lower()}']")


def test_page_opens_offline_without_errors_and_the_leaderboard_fits_1280px(watch, viewer_run, tmp_path):
    import pandas as pd

    page = watch.page
    assert watch.errors == []
    assert all(u.startswith(("file:", "data:", "about:")) for u in watch.requests), watch.requests
    widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth,"
                           " document.getElementById('board-ranked').getBoundingClientRect().right]")
    assert widths[0] <= widths[1] == 1280 and widths[2] <= 1280, widths
    board = pd.read_csv(viewer_run.run_dir / "leaderboard.csv")
    ranked = board[board["ranked"]]
    rows = page.locator("#board-ranked > tbody.item > tr.row")
    assert rows.count() == len(ranked)
    first = rows.nth(0).locator("td")
    assert first.nth(1).inner_text().split()[0] == ranked.iloc[0]["label"]
    assert first.nth(3).inner_text().startswith(f"{ranked.iloc[0]['brier']:.3f}")
    shot = save_screenshot(page.locator("#leaderboard"), tmp_path, "viewer_leaderboard.png")
    # sort by Brier: ascending, then descending
    header = page.locator("#board-ranked th[data-key='brier']")
    header.click()
    header.click()
    assert header.get_attribute("aria-sort") == "descending"
    worst = ranked.sort_values("brier", ascending=False).iloc[0]["label"]
    assert rows.nth(0).locator("td").nth(1).inner_text().split()[0] == worst
    # the details toggle shows the rest of the row
    rows.nth(0).locator("button.toggle").click()
    detail = page.locator("#board-ranked > tbody.item").nth(0).locator("tr.detail")
    assert detail.is_visible() and "coverage" in detail.inner_text()
    assert shot.exists() and watch.errors == []


def test_clicking_a_question_shows_its_members_rationales_and_debate_turns(watch, viewer_run, tmp_path):
    page = watch.page
    record = next(r for r in viewer_run.records if r["question_id"] != viewer_run.hostile_id and r["trace"]["debate"])
    item = row_of(page, record["question_id"])
    detail = item.locator("tr.detail")
    assert not detail.is_visible()
    item.locator("tr.row").click()
    assert detail.is_visible()
    members = detail.locator("article.member")
    forecasts = record["trace"]["forecasts"]
    assert members.count() == len(forecasts)
    for i, f in enumerate(forecasts):
        card = members.nth(i).inner_text()
        assert f["agent_id"] in card and f"{f['p_yes']:.2f}" in card and f["rationale"] in card
    turns = detail.locator("table.debate td.turn")
    rounds = record["trace"]["debate"]["rounds"]
    assert turns.count() == 2 * len(rounds)
    for j, r in enumerate(rounds):
        for k, side in enumerate(("bull", "bear")):
            text = turns.nth(2 * j + k).inner_text()
            assert r[side]["argument"] in text and f"{r[side]['p_yes']:.2f}" in text
    facts = detail.locator("section.facts pre").inner_text()
    assert facts.startswith("## CASE FACTS") and record["trace"]["question"]["text"] in facts
    held = detail.locator("section.heldback").inner_text()
    assert ("Yes" if record["outcome"] == 1 else "No") in held and record["resolution_date"] in held
    assert "supervisor" in detail.locator("[id$='-searches']").inner_text()
    save_screenshot(item, tmp_path, "viewer_question_trace.png")
    item.locator("tr.row").click()
    assert not detail.is_visible()
    assert watch.errors == []


def test_filters_show_the_questions_the_results_say(watch, viewer_run):
    page = watch.page
    n = len(viewer_run.records)
    count = page.locator("#f-count")
    assert count.inner_text() == f"{n} of {n} questions"
    page.select_option("#f-outcome", "1")
    yes = sum(r["outcome"] == 1 for r in viewer_run.records)
    assert count.inner_text() == f"{yes} of {n} questions"
    assert page.locator("#question-table tbody.item:not([hidden])").count() == yes
    page.select_option("#f-outcome", "")

    def method_range(r):
        ps = [m["p_yes"] for m in r["methods"].values() if m["p_yes"] is not None]
        return max(ps) - min(ps)

    page.locator("#f-range").fill("0.4")
    wide = sum(method_range(r) >= 0.4 - 1e-9 for r in viewer_run.records)
    assert count.inner_text() == f"{wide} of {n} questions"
    page.locator("#f-range").fill("0")
    page.fill("#f-text", "pwned")
    assert count.inner_text() == f"1 of {n} questions"
    assert watch.errors == []


def test_markup_in_a_question_or_an_answer_is_shown_as_text_and_never_runs(watch, viewer_run):
    page = watch.page
    item = row_of(page, viewer_run.hostile_id)
    assert item.locator("td.qtext").inner_text() == HOSTILE_TEXT
    item.locator("tr.row").click()
    detail = item.locator("tr.detail")
    assert detail.locator("h3.qtitle").inner_text() == HOSTILE_TEXT
    assert HOSTILE_TEXT in detail.locator("section.facts pre").inner_text()
    for card in detail.locator("article.member p.rationale").all():
        assert card.inner_text() == HOSTILE_RATIONALE
        card.hover()
    assert detail.locator("a[href^='javascript']").count() == 0
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    assert page.evaluate("() => document.querySelectorAll('script').length") == 1
    assert page.evaluate("() => document.querySelectorAll('.trace img, .trace b').length") == 0
    assert watch.errors == []


def test_a_comparisons_headers_never_overflow_and_method_and_run_read_apart(browser, viewer_run, tmp_path):
    """Issue 38: on a comparison of two runs with long ids, every leaderboard header fits its column (the delta
    header used to run into tokens/q) and the method and run columns hold the method and the run."""
    import json

    from benchmarks.report import write_report

    runs = []
    for rid in ("20261205T235959-scripted-members-first", "20261205T235959-scripted-members-second"):
        d = shutil.copytree(viewer_run.run_dir, tmp_path / rid)
        manifest = json.loads((d / "manifest.json").read_text())
        (d / "manifest.json").write_text(json.dumps({**manifest, "run_id": rid}))
        runs.append(d)
    rep = write_report(runs, tmp_path / "cmp", n_resamples=20)
    w = PageWatch(browser, rep.html_path)
    try:
        page = w.page
        assert w.errors == []
        overflowing = page.evaluate("() => [...document.querySelectorAll('table.board th')]"
                                    ".filter(th => th.scrollWidth > th.clientWidth + 1).map(th => th.innerText)")
        assert overflowing == []
        assert page.evaluate("() => document.documentElement.scrollWidth") <= VIEWPORT["width"]
        first = page.locator("table.board > tbody.item > tr.row").nth(0).locator("td")
        assert ":" not in first.nth(1).inner_text() and first.nth(2).get_attribute("title") in (runs[0].name, runs[1].name)
        assert first.nth(2).inner_text() in ("…first", "…second")  # the ids' common prefix left out, the full id its title
        assert page.locator("#headline .won").inner_text().startswith(("Lowest Brier score:", "No method is ranked."))
        save_screenshot(page.locator("#leaderboard"), tmp_path, "viewer_comparison_leaderboard.png")
    finally:
        w.close()


def test_a_numeric_questions_drilldown_shows_its_cdf_plot_with_the_outcome(browser, numeric_report, tmp_path):
    """Issue 36: on a numeric run's page, a click on a question shows the CDFs of its methods and members with the
    outcome marked, drawn (a visible SVG of real size), and the run page shows the PIT histogram of every method."""
    from agent_schemas.kinds import KINDS

    qs, rep = numeric_report
    q = next(q for q in qs if q.id == "nu-01")
    w = PageWatch(browser, rep / "report.html")
    try:
        page = w.page
        assert w.errors == []
        calibration = page.locator("#fig-numeric-calibration svg")
        assert calibration.is_visible() and calibration.bounding_box()["width"] > 600
        assert "in 50%:" in calibration.inner_html() and "PIT: F(outcome)" in calibration.inner_html()
        item = row_of(page, q.id)
        item.locator("tr.row").click()
        figure = item.locator("section.kind-forecasts .qfigure svg")
        assert figure.is_visible()
        box = figure.bounding_box()
        assert box["width"] > 400 and box["height"] > 150, box
        svg = figure.inner_html()
        outcome = KINDS["numeric"].outcome_text(q.spec, q.outcome)
        assert f"outcome {outcome}" in svg and "members (3)" in svg and "P(value &lt;= x)" in svg
        assert all(label in svg for label in ("mean", "quantile_average", "median", "uniform"))
        save_screenshot(item.locator("section.kind-forecasts"), tmp_path, "viewer_numeric_question.png")
        assert w.errors == []
    finally:
        w.close()
