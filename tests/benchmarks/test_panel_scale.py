"""Issue 38 item 5: ``aggregate`` on large panels gives what it gave before it was made fast, and its page stays
bounded while listing every question.

The frozen scores were written by the code before the vectorised walk-forward fits and the bounded page (commit
27b3f1f), on the generated panel of ``benchmarks/perf/panel_aggregate.py`` (120 questions x 8 forecasters, forecast
dates spread over a year, so that every fitted method fits on most questions)."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from benchmarks.cli import app
from benchmarks.perf.panel_aggregate import panel_files, synthetic
from benchmarks.run_folder.layout import QUESTION_PAGES_DIR, question_page_name

runner = CliRunner()

# label -> (brier, brier_ci_low, brier_ci_high, log_loss), 200 resamples, written by commit 27b3f1f
FROZEN = {"always_0.5": [0.25, 0.25, 0.25, 0.6931471806], "base_rate": [0.2820872567, 0.2359249132, 0.3276881174, 0.7607970971],
          "extremized": [0.1681819229, 0.1243952066, 0.2204292821, 0.5331704184],
          "fitted_blend": [0.1688907552, 0.1358956721, 0.2082989867, 0.5109346967],
          "fitted_extremized": [0.1681651923, 0.1306791645, 0.2130236717, 0.515592794],
          "fitted_member_weights": [0.1697604657, 0.1343051751, 0.2108910282, 0.5149522754],
          "fitted_platt": [0.1720839348, 0.1376528057, 0.2133440299, 0.5220742909],
          "geomean_odds": [0.1676042161, 0.132552723, 0.2097534426, 0.5098536736],
          "mean": [0.1688907552, 0.1358956721, 0.2082989867, 0.5109346967],
          "median": [0.1680939583, 0.1327660414, 0.2101044997, 0.5105052935],
          "min": [0.2051491667, 0.16342511, 0.2538931307, 0.5988478653],
          "single_best_in_sample": [0.16903, 0.1310209003, 0.2132715787, 0.5099390032],
          "single_median_in_sample": [0.17894, 0.1374425361, 0.2251179446, 0.5256104572],
          "single_worst_in_sample": [0.2018025, 0.1615614794, 0.2489117703, 0.6022282561],
          "trimmed_mean": [0.168620162, 0.1340151789, 0.2098498268, 0.5121632257]}


@pytest.fixture(scope="module")
def generated_run(tmp_path_factory) -> tuple[Path, str]:
    tmp = tmp_path_factory.mktemp("scale")
    panel, questions = panel_files(synthetic(120, 8, seed=3), tmp, seed=3)
    res = runner.invoke(app, ["aggregate", str(panel), "--questions", str(questions), "-o", str(tmp / "runs"), "--run-id", "frozen",
                              "--no-progress", "--n-resamples", "200", "--min-pick-questions", "30"])
    assert res.exit_code == 0, res.output
    return tmp / "runs" / "frozen", res.stdout


def test_a_generated_panel_scores_as_before_the_speed_work(generated_run):
    run, _ = generated_run
    board = pd.read_csv(run / "leaderboard.csv").set_index("label")
    assert sorted(board.index) == sorted(FROZEN)
    for label, values in FROZEN.items():
        got = [float(board.loc[label, c]) for c in ("brier", "brier_ci_low", "brier_ci_high", "log_loss")]
        assert got == pytest.approx(values, abs=1e-9), label
    fitted = [json.loads(line) for line in (run / "fitted.jsonl").read_text().splitlines()]
    fits = [row for line in fitted for row in line["methods"].values() if not row["fallback"]]
    assert len(fits) > 300  # the fitted methods fitted on most of the 120 questions, not fell back


def test_a_panels_terminal_table_says_it_spent_no_tokens(generated_run):
    _, out = generated_run
    text = " ".join(out.split())
    assert "tokens/q none: given forecasts: no tokens (the forecasts were given, no model was called)." in text
    rows = [line.split() for line in out.splitlines() if line.strip().startswith(("1 ", "2 "))]
    assert rows and all(r[-2:] == ["none", "—"] for r in rows)
    md = (generated_run[0] / "leaderboard.md").read_text()
    assert "| no_tokens" in md and "given forecasts: no tokens" in md


def test_the_page_lists_every_question_and_embeds_a_bounded_number_of_traces(generated_run, monkeypatch):
    from benchmarks.viewer import page

    run, _ = generated_run
    monkeypatch.setattr(page, "PAGE_TRACE_FORECASTS", 8 * 25)  # 25 questions of 8 forecasters
    res = runner.invoke(app, ["view", str(run), "--rebuild", "--no-open"])
    assert res.exit_code == 0, res.output
    html = (run / "report.html").read_text()
    assert len(re.findall(r'<tbody class="item" id="q-\d+"', html)) == 120  # every question listed
    assert html.count('<div class="trace" data-question=') == 25
    assert html.count('class="muted not-embedded"') == 95
    assert "This page embeds the whole trace of 25 of the 120 questions" in unescape(html)
    # a question not embedded: its page on request, with every forecaster's p_yes
    results = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    last = results[-1]
    assert f"view frozen --question {last['question_id']}" in unescape(html)
    res = runner.invoke(app, ["view", str(run), "--question", last["question_id"], "--no-open"])
    assert res.exit_code == 0, res.output
    qpage = run / QUESTION_PAGES_DIR / question_page_name(last["question_id"])
    assert res.stdout.strip() == str(qpage.resolve())
    text = qpage.read_text()
    assert text.count('<div class="trace" data-question=') == 1 and last["trace"]["question"]["text"] in unescape(text)
    for f in last["trace"]["forecasts"]:
        assert f["agent_id"] in text
    bad = runner.invoke(app, ["view", str(run), "--question", "no-such-question", "--no-open"])
    assert bad.exit_code == 2 and "no question 'no-such-question'" in bad.output and "results.jsonl" in bad.output


def test_question_page_names_never_collide():
    """Two ids that read alike once unsafe characters are replaced get two pages (``a/b`` and ``a_b``)."""
    ids = ["a/b", "a_b", "a b", "a?b", "", ".", "..", "q12"]
    names = [question_page_name(i) for i in ids]
    assert len(set(names)) == len(ids)
    assert question_page_name("q12") == "q12.html"  # a safe id keeps its plain name
    assert question_page_name("a_b") == "a_b.html"
    assert question_page_name("a/b").startswith("a_b-") and question_page_name("a/b").endswith(".html")
