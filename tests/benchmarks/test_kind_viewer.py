"""The run viewer on multiple-choice and numeric questions: each question's figure (CDFs over the range, bars per
option; the members lighter, the outcome marked), each kind's calibration figure (a PIT histogram with central 50%
and 90% coverage per method; a top-label reliability diagram), the drill-down's words in the kind's terms, and the
page's figure budget. The values drawn are read back from the figures and checked against hand-computed ones."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from matplotlib.patches import Rectangle, StepPatch

from agent_schemas.kinds import KINDS, ChoiceSpec, NumericSpec
from benchmarks.report import write_report
from benchmarks.viewer import kind_figures, page
from tests.benchmarks.test_kinds_harness import MC_FILE, run_kind

MC, NUM = KINDS["multiple_choice"], KINDS["numeric"]
CLOSED = NumericSpec(lower=0, upper=100, unit="admissions")
OPTIONS = ChoiceSpec(options=("Arsenal", "Liverpool", "Chelsea"))


# --- the calibration figures ----------------------------------------------------------------------------------

def test_the_numeric_calibration_figure_is_each_methods_pit_histogram_with_its_coverage():
    # A uniform CDF over a closed range [0, 100] puts the outcome y at PIT y / 100 (hand-computed; none on a bin edge).
    outcomes = [3.5, 15, 35, 55, 97]
    cdfs = np.stack([NUM.uninformed(CLOSED)] * 5)
    diag = NUM.diagnostics([CLOSED] * 5, cdfs, outcomes)
    np.testing.assert_allclose(diag["pit"], [0.035, 0.15, 0.35, 0.55, 0.97])
    # a sharp forecaster centred too low, uniform over [0, 10]: PIT 0.35 for the outcome 3.5, 1.0 for the others
    low = np.clip(np.linspace(0, 1, 201) / 0.1, 0, 1)
    sharp = NUM.diagnostics([CLOSED] * 5, np.stack([low] * 5), outcomes)
    np.testing.assert_allclose(sharp["pit"], [0.35, 1, 1, 1, 1])
    fig = kind_figures.calibration_figure(NUM, {"uniform": diag, "sharp": sharp})
    first, second = fig.axes[:2]
    hist = [p for p in first.patches if isinstance(p, StepPatch)]
    assert len(hist) == 1
    data = hist[0].get_data()  # StairData(values, edges, baseline)
    values, edges = data.values, data.edges
    # bins 0, 1, 3, 5 and 9 hold one PIT each: density 1 / (5 * 0.1) = 2
    np.testing.assert_allclose(values, [2, 2, 0, 2, 0, 2, 0, 0, 0, 2])
    np.testing.assert_allclose(edges, np.linspace(0, 1, 11))
    # central 50%: PIT in [0.25, 0.75] (0.35, 0.55): 2 of 5; central 90%: in [0.05, 0.95] (0.15, 0.35, 0.55): 3 of 5
    assert first.get_title() == "uniform\nin 50%: 40% · in 90%: 60% (n=5)"
    assert first.get_legend() is None  # the panel's one legend entry became its title
    values = [p for p in second.patches if isinstance(p, StepPatch)][0].get_data().values
    np.testing.assert_allclose(values, [0, 0, 0, 2, 0, 0, 0, 0, 0, 8])  # 1 and 4 of 5 PITs: 1 / 0.5 and 4 / 0.5
    assert second.get_title() == "sharp\nin 50%: 20% · in 90%: 20% (n=5)"
    assert second.get_ylim()[1] == pytest.approx(8.8)  # the axis reaches above the tallest bin


def test_the_multiple_choice_calibration_figure_is_a_top_label_reliability_diagram():
    forecasts = np.array([[0.2, 0.5, 0.3], [0.6, 0.2, 0.2], [0.1, 0.1, 0.8], [0.55, 0.25, 0.2]])
    diag = MC.diagnostics([OPTIONS] * 4, forecasts, [1, 0, 1, 2])
    fig = kind_figures.calibration_figure(MC, {"mean": diag})
    ax = fig.axes[0]
    line = [ln for ln in ax.lines if ln.get_marker() == "o"][0]
    # top labels 0.5 (hit), 0.6 (hit), 0.8 (missed), 0.55 (missed): bins [0.5, 0.6) twice, [0.6, 0.7), [0.8, 0.9)
    np.testing.assert_allclose(line.get_xdata(), [0.525, 0.6, 0.8])
    np.testing.assert_allclose(line.get_ydata(), [0.5, 1.0, 0.0])
    assert ax.get_title() == "mean"
    assert kind_figures.calibration_figure(MC, {}) is None


# --- each question's figure -----------------------------------------------------------------------------------

def test_a_numeric_questions_figure_draws_every_cdf_the_members_lighter_and_the_outcome():
    mean = NUM.uninformed(CLOSED)
    member = NUM.read_answer(CLOSED, {"percentile_5": 10, "percentile_10": 15, "percentile_25": 30, "percentile_50": 45,
                                      "percentile_75": 60, "percentile_90": 75, "percentile_95": 85})
    fig = kind_figures.question_figure(NUM, CLOSED, {"mean": mean}, {"member-0": member, "member-1": mean}, 42.5)
    ax = fig.axes[0]
    by_label = {ln.get_label(): ln for ln in ax.lines}
    x = np.linspace(0, 100, 201)
    np.testing.assert_allclose(by_label["mean"].get_xdata(), x)
    np.testing.assert_allclose(by_label["mean"].get_ydata(), mean)
    np.testing.assert_allclose(by_label["members (2)"].get_ydata(), member)
    assert by_label["members (2)"].get_color() == "0.55"  # grey, under one legend entry
    outcome = by_label["outcome 42.5 admissions"]
    assert list(outcome.get_xdata()) == [42.5, 42.5]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["members (2)", "mean", "outcome 42.5 admissions"]


def test_a_multiple_choice_questions_figure_has_a_bar_per_option_and_method_and_marks_what_happened():
    forecasts = {"mean": np.array([0.2, 0.5, 0.3]), "median": np.array([0.1, 0.7, 0.2])}
    fig = kind_figures.question_figure(MC, OPTIONS, forecasts, {"member-0": np.array([0.05, 0.9, 0.05])}, 1)
    ax = fig.axes[0]
    bars = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_height() < 0.45]
    assert [round(b.get_width(), 9) for b in bars] == [20, 50, 30, 10, 70, 20]  # percent, method by method
    assert [t.get_text() for t in ax.get_yticklabels()] == ["Arsenal", "Liverpool (happened)", "Chelsea"]
    ticks = [ln for ln in ax.lines if ln.get_label() == "members (1)"][0]
    np.testing.assert_allclose(ticks.get_xdata(), [5, 90, 5])


# --- the page ---------------------------------------------------------------------------------------------------

def test_the_numeric_page_shows_each_questions_cdfs_and_each_methods_pit_with_the_tables_coverage(numeric_report):
    qs, rep = numeric_report
    html = (rep / "report.html").read_text(encoding="utf-8")
    board = pd.read_csv(rep / "leaderboard_numeric.csv")
    assert 'id="fig-numeric-calibration"' in html and "Calibration: numeric questions" in html
    figure = html[html.index('id="fig-numeric-calibration"'):]
    figure = figure[:figure.index("</figure>")]
    for row in board.itertuples():  # every label's panel, with the coverage the leaderboard averages
        title = f"{row.label}</text>"
        assert title in figure
        assert f"in 50%: {100 * row.coverage_50:.0f}% · in 90%: {100 * row.coverage_90:.0f}% (n={row.n})" in figure
    sections = re.findall(r'<section class="kind-forecasts".*?</section>', html, flags=re.S)
    assert len(sections) == len(qs) == 12 and all("<svg" in s for s in sections)
    trace = drilldown(html, "nu-01")
    q = next(q for q in qs if q.id == "nu-01")
    said = NUM.outcome_text(q.spec, q.outcome)
    assert said.startswith("4.16") and f"outcome {said}" in trace and f'<strong class="outcome">{said}</strong>' in trace
    members = re.findall(r'<span class="pbig">([^<]*)</span>', trace.split("<h4>Forecasters")[1].split("</section>")[0])
    assert len(members) == 3 and all(m.startswith("median ") for m in members)  # the member's CDF in words, not "failed"
    turns = re.findall(r'<td class="turn [a-z]+ ok">\s*<span class="pbig">([^<]*)</span>', trace)
    assert turns and all(t.startswith("median ") for t in turns)  # the debaters' forecasts, not "failed"
    steps = re.findall(r'<span class="step">final</span> <span class="pbig">([^<]*)</span>', trace)
    assert steps == [NUM.forecast_text(q.spec, NUM.vector(record(rep, "nu-01")["trace"]["final_distribution"]))]


def record(rep, question_id: str) -> dict:
    """The ``results.jsonl`` line of ``question_id`` in the run the report ``rep`` was written from."""
    from benchmarks.run_folder import read_results

    path = next(rep.parent.rglob("results.jsonl"))
    return next(r for r in read_results(path) if r["question_id"] == question_id)


def drilldown(html: str, question_id: str) -> str:
    """The drill-down (the ``<template>``) of the question row whose search text holds ``question_id``."""
    start = html.index("<template>", html.index(f' {question_id.lower()}">'))  # data-search ends with the id
    return html[start:html.index("</template>", start)]


def test_question_figures_beyond_the_budget_say_so(numeric_report, monkeypatch, tmp_path):
    qs, rep = numeric_report
    monkeypatch.setattr(page, "QUESTION_FIGURE_BUDGET", 3)
    run_dir = next(p for p in rep.parent.rglob("results.jsonl")).parent
    write_report([run_dir], tmp_path, n_resamples=20)
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    sections = re.findall(r'<section class="kind-forecasts".*?</section>', html, flags=re.S)
    assert sum("<svg" in s for s in sections) == 3
    assert sum("figure not drawn: the page draws the first 3 questions" in s for s in sections) == 9


def test_a_multiple_choice_page_shows_bars_and_the_top_label_reliability(tmp_path):
    qs, run_dir, _ = run_kind(tmp_path, "multiple_choice", MC_FILE)
    write_report([run_dir], tmp_path / "rep", n_resamples=20)
    html = (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")
    assert 'id="fig-multiple_choice-calibration"' in html and "Top-label reliability" in html
    assert 'id="fig-reliability"' not in html  # no binary question: no binary figure saying "no data"
    sections = re.findall(r'<section class="kind-forecasts".*?</section>', html, flags=re.S)
    assert len(sections) == 12 and all("<svg" in s and "(happened)" in s for s in sections)
    assert "outcome Arsenal" in sections[0]  # the first question's outcome, by its option's label


@pytest.mark.parametrize("options", [("A", "B"), ("Manchester City Football Club", "Liverpool", "Other")])
def test_a_questions_figure_keeps_its_option_labels_and_legend_inside_the_figure(options):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    spec = ChoiceSpec(options=options)
    even = np.full(len(options), 1 / len(options))
    fig = kind_figures.question_figure(MC, spec, {"quantile_average": even, "least_confident": even}, {"member-0": even}, 0)
    FigureCanvasAgg(fig).draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    assert min(t.get_window_extent(renderer).x0 for t in ax.get_yticklabels()) >= 0
    legend = ax.get_legend().get_window_extent(renderer)
    assert legend.x0 >= ax.bbox.x1 and legend.x1 <= fig.bbox.x1  # beside the axes, inside the figure


def test_a_binary_figure_draws_each_members_p_yes_as_a_line():
    from agent_schemas.kinds import BinarySpec

    fig = kind_figures.question_figure(KINDS["binary"], BinarySpec(), {"mean": np.array([0.4])},
                                       {"member-0": np.array([0.3]), "member-1": np.array([0.5])}, 1)
    ax = fig.axes[0]
    assert [p.get_width() for p in ax.patches] == [pytest.approx(40.0)]
    assert sorted(ln.get_xdata()[0] for ln in ax.lines if ln.get_linestyle() == ":") == [30.0, 50.0]
