"""Issue 38, item 3: the pages read plainly. A comparison shows method and run apart and labels only its simulated
runs; a panel's rows say why they have no tokens; every page opens with a headline (what won, how sure, what the
result cannot say); ``view runs/`` writes an index of every run and touches no run's files."""

from __future__ import annotations

import doctest
import hashlib
import json
import re
from html import unescape

import pandas as pd
import pytest
from typer.testing import CliRunner

from benchmarks.cli import app
from benchmarks.report.write import write_report
from benchmarks.viewer import headline as headline_module
from benchmarks.viewer import page
from benchmarks.viewer.headline import degenerate_share, headline
from benchmarks.report.run_index import INDEX_FILE, run_entries
from tests.benchmarks.test_report_tables import standard_records, write_run


@pytest.fixture(autouse=True)
def figures_not_built(monkeypatch):
    """The figures are drawn elsewhere (test_plots.py, test_viewer.py); here each says it was not drawn."""
    monkeypatch.setattr(page, "_figure", lambda fid, title, caption, build: page.FigureView(fid, title, caption, None, "not drawn"))


def _cells(html: str, cls: str) -> list[str]:
    """The cells of class ``cls`` of both leaderboard tables (ranked, then listed apart)."""
    tables = [html.split(f'id="{t}"', 1)[1].split("</table>", 1)[0] for t in ("board-ranked", "board-unranked") if f'id="{t}"' in html]
    return [unescape(c).strip() for t in tables for c in re.findall(rf'<td class="{cls}" title="[^"]*">([^<]*)', t)]


def test_a_comparison_shows_method_and_run_apart_and_labels_only_its_simulated_run(tmp_path):
    real = write_run(tmp_path, "real-run", standard_records())
    sim = write_run(tmp_path, "sim-run", standard_records(), specs=("sim",))
    rep = write_report([real, sim], tmp_path / "cmp", n_resamples=20)
    html = rep.html_path.read_text(encoding="utf-8")
    methods, runs = _cells(html, "label"), _cells(html, "run")
    assert len(methods) == len(runs) == len(rep.leaderboard) > 0
    assert not any(":" in m for m in methods)  # never "<run id>:single_..."
    assert set(runs) == {"real-run", "sim-run"} and methods.count("mean") == 2
    # the delta header names the baseline's method, its run below it (it wraps in its own column)
    assert re.search(r"Δ vs mean <span class=\"sub\">of real-run \[95%\]</span>", html)
    # the banner says which run is simulated, and that the other is not
    assert rep.notice.startswith("SIMULATED runs: sim-run (of 2)") and "The rows of real-run are not simulated." in rep.notice
    assert f'<span class="badge warn">simulated</span> {rep.notice}</p>' in unescape(html)
    assert "Simulated: sim-run (of 2)" in unescape(html.split('id="headline"', 1)[1].split("</section>", 1)[0])


def test_a_panels_methods_say_they_spend_no_tokens():
    board = pd.DataFrame({"label": ["h:mean", "h:crowd", "f:mean", "m:mean"], "tokens_per_question": [0.0, None, 0.0, 120.0]})
    scored = pd.DataFrame({"label": ["h:mean", "h:crowd", "f:mean", "m:mean"], "run_id": ["h", "h", "f", "m"],
                           "method": ["mean", "crowd", "mean", "mean"], "kind": ["method", "baseline", "method", "method"]})
    manifests = {"h": {"config": {"ensemble": "given"}, "question_selection": {"pool": {"name": "superforecasters"}}},
                 "f": {"config": {"ensemble": "given"}, "question_selection": {"pool": {"name": "my_panel"}}},
                 "m": {"config": {"ensemble": "forecasters"}}}
    rows = page.board_rows(board, scored, manifests)
    assert list(rows["no_tokens"]) == ["human panel: no tokens", "", "given forecasts: no tokens", ""]
    assert list(rows["method"]) == ["mean", "crowd", "mean", "mean"] and list(rows["run"]) == ["h", "h", "f", "m"]


def _board(rows):
    cols = ["label", "method", "run", "kind", "ranked", "equals", "n", "n_clusters", "too_small_to_rank", "brier", "brier_ci_low",
            "brier_ci_high", "delta_brier_vs_baseline", "delta_brier_ci_low", "delta_brier_ci_high"]
    return pd.DataFrame(rows, columns=cols)


def test_the_headline_says_what_won_how_sure_and_what_it_cannot_say():
    board = _board([
        ["median", "median", "r", "method", True, "", 578, 55, False, 0.112, 0.100, 0.125, -0.0017, -0.0030, -0.0004],
        ["mean", "mean", "r", "method", True, "", 578, 55, False, 0.1137, 0.101, 0.127, 0.0, 0.0, 0.0],
        ["fitted_platt", "fitted_platt", "r", "method", False, "mean (not fitted: one forecast date)", 578, 55, False,
         0.1137, 0.101, 0.127, None, None, None],
    ])
    h = headline(board, baseline="mean", records={"r": []})
    assert h.won == "Lowest Brier score: median, 0.112 (95% interval [0.100, 0.125]) on 578 questions in 55 clusters."
    assert h.sure == ("How sure: median is better than mean by −0.002 in Brier, 95% interval [−0.0030, −0.0004], which "
                      "excludes 0.")
    assert h.limits == []
    # an interval that includes 0; members that answer 0% or 100%; a simulated run; too few clusters
    board.loc[0, ["delta_brier_ci_high", "n_clusters", "too_small_to_rank"]] = [0.001, 12, True]
    board.loc[1, ["n_clusters", "too_small_to_rank"]] = [12, True]
    members = [{"trace": {"forecasts": [{"status": "ok", "p_yes": p} for p in (0.0, 1.0, 1.0, 0.3)]}}]
    assert degenerate_share(members) == (0.75, 4)
    h = headline(board, baseline="mean", records={"r": members}, notice="SIMULATED: the 'sim' provider is ...")
    assert h.sure.startswith("How sure: not sure. median differs from mean by −0.002") and "includes 0" in h.sure
    assert [line.split(":")[0] for line in h.limits] == ["Simulated", "Degenerate members", "Few clusters"]
    assert "75% of their 4 answers are 0% or 100%" in h.limits[1]


def _digest(folder) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_view_of_a_folder_of_runs_writes_an_index_and_touches_no_run(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    a = write_run(runs, "a", standard_records())
    write_run(runs, "b-sim", standard_records(), specs=("sim",))
    write_report([a], a, n_resamples=20)  # a has its report; b-sim not yet
    before = _digest(runs)
    res = CliRunner().invoke(app, ["view", str(runs), "--no-open"])
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == str((runs / INDEX_FILE).resolve())
    assert _digest(runs) == {**before, INDEX_FILE: _digest(runs)[INDEX_FILE]}  # only the index is new
    entries = {e.run_id: e for e in run_entries(runs)}
    board = pd.read_csv(a / "leaderboard.csv")
    best = board[board["ranked"]].sort_values("brier").iloc[0]
    assert entries["a"].best == f"{best['label']} {best['brier']:.3f}" and entries["a"].page == "a/report.html"
    assert (entries["a"].kind, entries["a"].models, entries["a"].n_questions) == ("models", "openai/gpt-4.1-mini (gpt-4.1-mini), openai/gpt-4o (gpt-4o)", 0)
    assert (entries["b-sim"].kind, entries["b-sim"].page, entries["b-sim"].best) == ("simulated", None, "no report yet")
    html = (runs / INDEX_FILE).read_text(encoding="utf-8")
    assert '<a href="a/report.html">report</a>' in html and "forecast-reconcile view b-sim" in html
    assert json.loads((a / "manifest.json").read_text())["run_id"] == "a"


@pytest.mark.parametrize("module,n", [(page, 5), (headline_module, 1)])
def test_doctests_pass(module, n):
    result = doctest.testmod(module)
    assert result.attempted >= n and result.failed == 0


def test_a_comparisons_markdown_and_csv_give_method_and_run_apart(tmp_path):
    real = write_run(tmp_path, "real-run", standard_records())
    sim = write_run(tmp_path, "sim-run", standard_records(), specs=("sim",))
    rep = write_report([real, sim], tmp_path / "cmp", n_resamples=20)
    board = pd.read_csv(rep.csv_path)
    assert (board["label"] == board["run"] + ":" + board["method"]).all() and set(board["run"]) == {"real-run", "sim-run"}
    header = next(line for line in rep.markdown.splitlines() if line.startswith("| rank"))
    assert [c.strip() for c in header.strip("|").split("|")][1:3] == ["method", "run"] and "label" not in header
    alone = write_report([real], tmp_path / "one", n_resamples=20)
    assert "run" not in alone.leaderboard.columns and "| rank   | label" in alone.markdown
