"""The run viewer without a browser: what the page holds, the trace view, the terminal table, ``view``."""

from __future__ import annotations

import datetime as dt
import doctest
import io
import re
import json
import os
import shutil
import webbrowser

import pandas as pd
import pytest
from typer.testing import CliRunner

from agent_schemas import ChatMessage, PipelineTrace, RecordedCall, RecordedSearch, SearchOutcome, SearchResult
from benchmarks.cli import app
from benchmarks.report import write_report
from benchmarks.run_folder import QuestionRecord
from benchmarks.viewer import formatting, page
from benchmarks.viewer.page import safe_url
from benchmarks.viewer import terminal
from benchmarks.viewer.terminal import MAX_WIDTH, print_compact_leaderboard, short_label
from benchmarks.viewer.trace import case_facts_sent, final_path, search_rows
from agent_providers import scripted_world
from tests.benchmarks.viewer_run import HOSTILE_RATIONALE, HOSTILE_TEXT

cli = CliRunner()


def record_of(viewer_run, pred=lambda r: True) -> QuestionRecord:
    return QuestionRecord.model_validate(next(r for r in viewer_run.records if pred(r)))


@pytest.mark.parametrize("module,n", [(formatting, 7), (terminal, 2)])
def test_doctests_pass(module, n):
    result = doctest.testmod(module)
    assert result.attempted >= n and result.failed == 0


# --- the trace view --------------------------------------------------------------------------------


def _call(role: str, user: str) -> RecordedCall:
    return RecordedCall(role=role, provider="scripted", request_key="k",
                        messages=[ChatMessage(role="system", content="sys"), ChatMessage(role="user", content=user)])


FACTS = "## CASE FACTS (pinned; restated verbatim, never summarised)\n- Question: Will X?\n- Background: a\n\nb"


def test_case_facts_are_read_from_the_prompts_sent():
    calls = [_call("forecaster", FACTS + "\n\n## EVIDENCE\n[1] t — s, 2025-01-01 — u"),
             _call("bull", FACTS + "\n\n## FORECASTERS (structured summaries)\n- member-0 ...")]
    assert case_facts_sent(calls) == (FACTS, 1)
    drifted = calls + [_call("bear", FACTS.replace("Will X?", "Will Y?") + "\n\n## YOUR ROLE")]
    assert case_facts_sent(drifted) == (FACTS, 2)
    assert case_facts_sent([_call("forecaster", "no facts here")]) == (None, 0)
    assert case_facts_sent([]) == (None, 0)


def _result(title: str, published: str | None) -> dict:
    return {"title": title, "url": f"https://example.org/{title}", "snippet": "s", "published": published,
            "source": "corpus", "flagged_undated": False}


def test_search_results_are_marked_by_what_reached_a_prompt(viewer_run):
    rec = record_of(viewer_run, lambda r: r["trace"]["supervisor"] is not None)
    trace = rec.trace
    cutoff = trace.question.forecast_date
    after = (cutoff + dt.timedelta(days=3)).isoformat()
    member_prompt = "\n".join(["## EVIDENCE", "[1] in — corpus, 2025-01-01 — https://example.org/in"])
    raw = [_result("in", "2025-01-01"), _result("late", after), _result("undated", None), _result("extra", "2024-12-01")]
    sup_query = "supervisor query"
    guarded = SearchOutcome(status="ok", attempted_query=sup_query, cutoff_date=cutoff, dropped_after_cutoff=1,
                            results=[SearchResult(title="ex…", url="https://example.org/extra", published=dt.date(2024, 12, 1))])
    t = trace.model_copy(update={
        "recorded_calls": [_call("forecaster", member_prompt)],
        "forecasts": [f.model_copy(update={"queries": ["member query"]}) for f in trace.forecasts],
        "recorded_searches": [RecordedSearch.model_validate(r) for r in [
            *[{"query": "member query", "max_results": 4, "cutoff_date": cutoff.isoformat(),
               "outcome": {"status": "ok", "attempted_query": "member query", "results": raw}}] * 3,
            {"query": sup_query, "max_results": 4, "cutoff_date": cutoff.isoformat(),
             "outcome": {"status": "ok", "attempted_query": sup_query, "results": raw}},
            {"query": "failed query", "max_results": 4, "cutoff_date": cutoff.isoformat(),
             "outcome": {"status": "failed", "attempted_query": "failed query", "failure_type": "rate_limited",
                         "error_message": "429", "results": []}},
        ]],
        "supervisor": trace.supervisor.model_copy(update={"queries": [sup_query], "search_outcomes": [guarded]}),
    })
    rows = search_rows(t)
    assert [r.query for r in rows] == ["member query", sup_query, "failed query"]  # three members, one row
    members, sup, failed = rows
    assert members.who == ", ".join(f.agent_id for f in trace.forecasts)
    assert [(r.title, r.in_prompt, r.reason) for r in members.results] == [
        ("in", True, ""), ("late", False, "published after the cutoff"), ("undated", False, "undated"),
        ("extra", False, "over the result limit")]
    assert sup.who == "supervisor" and (sup.dropped_after_cutoff, sup.dropped_undated) == (1, 0)
    assert [r.in_prompt for r in sup.results] == [False, False, False, True]  # kept by URL though the guard trimmed the title
    assert failed.status == "failed" and failed.failure == "rate_limited 429" and failed.results == []


def test_final_path_follows_the_combination_rule(viewer_run):
    rec = record_of(viewer_run, lambda r: r["trace"]["final_source"] == "aggregate -> debate(w=0.5) -> supervisor(high, w=1.0)")
    t = rec.trace
    steps = final_path(t)
    assert [s.name.split()[0] for s in steps] == ["aggregate", "debate", "supervisor", "final"]
    assert steps[0].p_yes == t.aggregate_p_yes and steps[1].p_yes == t.debate.p_yes and steps[2].p_yes == t.supervisor.p_yes
    assert steps[-1].p_yes == t.final_p_yes and all(s.used for s in steps)
    assert steps[1].name == "debate (w=0.5)"
    # a low-confidence supervisor gets weight 0: shown, not used
    low = t.model_copy(update={"supervisor": t.supervisor.model_copy(update={"confidence": "low"}),
                               "final_source": "aggregate -> debate(w=0.5) -> clip[0.01, 0.99]", "debate": None})
    steps = final_path(low)
    assert [(s.name.split()[0], s.used) for s in steps] == [
        ("aggregate", True), ("debate", False), ("supervisor", False), ("clip[0.01,", True), ("final", True)]
    assert steps[1].note == "not run" and "weight 0" in steps[2].note


# --- the page --------------------------------------------------------------------------------------


def test_page_is_self_contained_and_escapes_every_text(viewer_run):
    html = viewer_run.page.read_text(encoding="utf-8")
    assert html.count("<script") == 1  # the viewer's own script, nothing else
    assert "window.__pwned" in html and "<script>window.__pwned" not in html
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in html
    assert "&lt;b onmouseover=" in html and "<b onmouseover" not in html
    assert 'href="javascript' not in html.lower()
    for remote in ("<link", "src=\"http", "src='http", "@import", "url(http"):
        assert remote not in html
    assert html.count("<svg") >= 4 and "data:image/png" not in html  # four figures, inline SVG
    assert "<template>" in html and "Prompts sent (9 calls)" in html


@pytest.mark.parametrize("url,expected", [
    ("https://example.org/a?b=1", "https://example.org/a?b=1"), ("http://x.org", "http://x.org"),
    ("javascript:alert(1)", None), (" JavaScript:alert(1)", None), ("data:text/html,hi", None),
    ("//evil.org/x", None), ("", None), (None, None), ("https://[::1", None),
])
def test_links_are_only_made_for_http_urls(url, expected):
    assert safe_url(url) == expected


def _copy_run(viewer_run, tmp_path):
    target = tmp_path / viewer_run.run_dir.name
    shutil.copytree(viewer_run.run_dir, target, ignore=shutil.ignore_patterns("cache"))
    return target


def test_an_unreadable_record_is_listed_and_the_page_still_renders(viewer_run, tmp_path):
    run = _copy_run(viewer_run, tmp_path)
    broken = json.loads(json.dumps(viewer_run.records[1]))
    broken["question_id"] = "broken-1"
    broken["trace"]["question"] = {"id": "broken-1"}  # an older, incompatible trace format
    with open(run / "results.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(broken) + "\n")
    html = write_report([run], tmp_path / "out", n_resamples=50).html_path.read_text(encoding="utf-8")
    assert "unreadable record (trace.question.text: Field required)" in html
    assert html.count('class="item" id="q-') == len(viewer_run.records) + 1


def test_prompts_are_embedded_within_the_budget_and_always_for_audit_findings(viewer_run, tmp_path, monkeypatch):
    run = _copy_run(viewer_run, tmp_path)
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    records[2]["audit"]["findings"] = 1
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    html = write_report([run], tmp_path / "all", n_resamples=50).html_path.read_text(encoding="utf-8")
    assert html.count("Prompts sent (") == len(records)
    monkeypatch.setattr(page, "PROMPT_BUDGET_CHARS", 0)
    html = write_report([run], tmp_path / "few", n_resamples=50).html_path.read_text(encoding="utf-8")
    assert html.count("Prompts sent (") == 1 and "1 finding(s)" in html


# --- the terminal table ------------------------------------------------------------------------------


def _print(board, baseline="mean") -> list[str]:
    buf = io.StringIO()
    print_compact_leaderboard(board, baseline=baseline, files="leaderboard.md, leaderboard.csv, report.html", file=buf)
    return buf.getvalue().splitlines()


def test_compact_leaderboard_fits_100_columns_one_line_per_method(viewer_run):
    board = pd.read_csv(viewer_run.run_dir / "leaderboard.csv")
    long = "20261201-014230-ab12:" + board["label"]
    board = board.assign(label=long)
    extra = board.iloc[[0]].assign(label="[bold]20261201-014230-ab12:sf_median", ranked=False, rank=float("nan"),
                                   brier_ci_low=float("nan"), brier_ci_high=float("nan"))
    lines = _print(pd.concat([board, extra], ignore_index=True), baseline=long[board["label"].str.endswith(":mean")].item())
    assert max(map(len, lines)) <= MAX_WIDTH
    assert "Brier [95%]" in lines[1] and "tokens/q" in lines[1]
    assert "Δ vs mean" in lines[1]
    def shown(label: str, line: str) -> bool:  # the run id may be shortened to fit; the method stays whole
        return f":{label.split(':')[1]} " in line and line.split()[1].startswith(label[:4])

    body = [ln for ln in lines if any(shown(lab, ln) for lab in [*board["label"], *extra["label"]])]
    assert len(body) == len(board) + 1  # one line per method, long labels shortened, methods kept whole
    for label in board["label"]:
        assert sum(shown(label, ln) for ln in body) == 1
    assert any("not ranked" in ln for ln in lines)
    unranked = body[-1]
    assert unranked.lstrip().startswith("-") and "[bold]" in unranked and "[n/a]" in unranked
    base = next(ln for ln in body if ":mean" in ln)
    assert "baseline" in base
    mean_row = board[board["label"].str.endswith(":mean")].iloc[0]
    assert f"{mean_row['brier']:.3f} [{mean_row['brier_ci_low']:.2f}, {mean_row['brier_ci_high']:.2f}]" in base
    assert f"{round(mean_row['tokens_per_question']):,}" in base


def test_compact_leaderboard_shows_shared_ranks_imputed_counts_and_where_each_would_stand():
    """Issue 35: ties read 2=, a compared row with imputed questions answered+imputed, a row listed apart
    answered/questions, and the caption says where each method with imputed questions would stand."""
    from benchmarks.scoring.ranking import rank_methods

    outcomes = {f"q{i}": i % 2 for i in range(40)}
    answers = {"debate": {q: (0.8 if o else 0.2) for q, o in outcomes.items()},
               "mean": {q: (0.7 if o else 0.4) for q, o in outcomes.items()},
               "supervisor": {q: (0.9 if o else 0.1) for q, o in list(outcomes.items())[2:]},  # 2 of 40 imputed: ranked
               "lucky": {q: (0.99 if o else 0.01) for q, o in list(outcomes.items())[:20]}}  # 20 of 40: listed apart
    answers["median"] = dict(answers["mean"])
    rows = pd.DataFrame([{"label": m, "question_id": q, "p_yes": p, "outcome": outcomes[q], "cluster": q}
                         for m, ps in answers.items() for q, p in ps.items()])
    board = rank_methods(rows, baseline="mean", n_resamples=20, min_clusters_to_rank=30)
    lines = _print(board)
    row = {ln.split()[1]: ln.split() for ln in lines if len(ln.split()) > 2 and ln.split()[1] in answers}
    # Brier: debate 0.04; supervisor (38 x 0.01 + 2 x 1) / 40 = 0.0595; mean = median 0.125; lucky apart
    assert row["mean"][0] == row["median"][0] == "3=" and row["debate"][0] == "1" and row["supervisor"][0] == "2"
    assert row["supervisor"][2] == "38+2" and row["lucky"][:3] == ["-", "lucky", "20/40"]
    text = " ".join(" ".join(lines).split())
    assert ("supervisor: 2 of 40 questions imputed, scored as its worst case: rank 2 (Brier 0.0595); at 0.5 "
            "(ForecastBench's rule) it would rank 1 (Brier 0.0220).") in text
    assert "lucky: 20 of 40 questions imputed (50%, more than 5%): not ranked; with them scored as its worst case it would rank 5" in text
    assert "n = answered+imputed: a question a method gave no probability for" in text


def test_with_two_members_mean_and_median_share_a_rank_in_every_output(tmp_path):
    """Issue 35: with two members the median is the mean, and they ranked 6 and 7."""
    res = cli.invoke(app, ["run", "-p", "sim", "--n", "70", "-m", "2", "-o", str(tmp_path), "--run-id", "two", "--no-progress"])
    assert res.exit_code == 0, res.output
    out = tmp_path / "two"
    csv = pd.read_csv(out / "leaderboard.csv").set_index("label")
    assert csv.loc["mean", "brier"] == csv.loc["median", "brier"] and not csv["too_small_to_rank"].any()
    k = int(csv.loc["mean", "rank"])
    assert int(csv.loc["median", "rank"]) == k and (csv["rank"] == k + 1).sum() == 0  # the next rank is skipped
    terminal_rows = [ln.split() for ln in res.stdout.splitlines() if ln.split()[1:2] in (["mean"], ["median"])]
    assert [r[0] for r in terminal_rows] == [f"{k}="] * 2
    md = (out / "leaderboard.md").read_text()
    assert sum(ln.startswith(f"| {k}=") for ln in md.splitlines()) == 2
    html = (out / "report.html").read_text(encoding="utf-8")
    assert html.count(f'title="tied: the same Brier score as another method">{k}=</span>') == 2


def test_run_prints_the_compact_table_not_the_markdown(tmp_path, monkeypatch):
    monkeypatch.setattr("benchmarks.harness.provider_stack.get_provider", lambda spec, **kw: scripted_world.provider())
    res = cli.invoke(app, ["run", "-p", "scripted", "--n", "4", "--search", "none", "-o", str(tmp_path),
                           "--run-id", "r", "--no-progress"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert max(map(len, lines)) <= MAX_WIDTH
    # 4 questions: listed by Brier without ranks, and the caption says why
    assert any(ln.split()[:2] == ["-", "pipeline"] for ln in lines)
    assert not any(ln.strip()[:1].isdigit() for ln in lines if "pipeline" in ln or "mean " in ln)
    assert "Too few clusters to rank: 4 < 50" in res.stdout
    assert "| mean" not in res.stdout and "Full tables: leaderboard.md" in res.stdout
    for name in ("leaderboard.csv", "leaderboard.md", "report.html"):
        assert (tmp_path / "r" / name).stat().st_size > 0


# --- forecast-reconcile view ---------------------------------------------------------------------------


def test_view_writes_the_page_once_and_prints_its_path(viewer_run, tmp_path, monkeypatch):
    run = _copy_run(viewer_run, tmp_path)
    (run / "report.html").unlink()
    opened = []
    monkeypatch.setattr(webbrowser, "open", lambda uri: opened.append(uri) or True)
    res = cli.invoke(app, ["view", "viewer", "-o", str(tmp_path)])
    assert res.exit_code == 0, res.output
    page_path = run / "report.html"
    assert res.stdout.strip() == str(page_path.resolve()) and opened == [page_path.resolve().as_uri()]
    built = page_path.stat().st_mtime_ns
    assert cli.invoke(app, ["view", str(run), "--no-open"]).exit_code == 0
    assert page_path.stat().st_mtime_ns == built and len(opened) == 1  # current: not rebuilt, not opened
    later = page_path.stat().st_mtime + 5
    os.utime(run / "results.jsonl", (later, later))  # results changed after the page: rebuilt
    assert cli.invoke(app, ["view", str(run), "--no-open"]).exit_code == 0
    assert page_path.stat().st_mtime_ns > built


@pytest.mark.parametrize("failure", ["none", "error"])
def test_view_never_fails_for_lack_of_a_browser(viewer_run, tmp_path, monkeypatch, failure):
    run = _copy_run(viewer_run, tmp_path)

    def no_browser(uri):
        if failure == "error":
            raise webbrowser.Error("could not locate runnable browser")
        return False

    monkeypatch.setattr(webbrowser, "open", no_browser)
    res = cli.invoke(app, ["view", str(run)])
    assert res.exit_code == 0, res.output
    assert str((run / "report.html").resolve()) in res.stdout and "no web browser available" in res.output


def test_view_of_a_missing_run_is_one_clean_error(tmp_path):
    res = cli.invoke(app, ["view", "nope", "-o", str(tmp_path)])
    assert res.exit_code == 2 and "nope: no such run folder" in res.output and "Traceback" not in res.output
    (tmp_path / "empty").mkdir()
    res = cli.invoke(app, ["view", str(tmp_path / "empty")])
    assert res.exit_code == 2 and "manifest.json" in res.output


def test_hostile_fixture_is_what_the_page_shows(viewer_run):
    rec = record_of(viewer_run, lambda r: r["question_id"] == viewer_run.hostile_id)
    assert rec.trace.question.text == HOSTILE_TEXT
    assert {f.rationale for f in rec.trace.forecasts} == {HOSTILE_RATIONALE}


def test_the_page_says_too_few_clusters_to_rank_and_shows_no_ranks(viewer_run):
    board = pd.read_csv(viewer_run.run_dir / "leaderboard.csv")
    assert board.loc[board["ranked"], "too_small_to_rank"].all() and board["rank"].isna().all()
    html = viewer_run.page.read_text(encoding="utf-8")
    assert "too few clusters to rank</span>" in html and "too small to rank" not in html
    ranked = html.split('id="board-ranked"')[1].split("</table>")[0]
    rank_cells = re.findall(r'<tr class="row">\s*<td class="num">([^<]*)</td>', ranked)
    copies = board["ranked"] & board["equals"].fillna("").astype(bool)  # a fitted method that fell back: "=", not a rank
    assert len(rank_cells) == board["ranked"].sum() - copies.sum() and set(rank_cells) == {"—"}
    assert ranked.count('<span class="muted" title="no rank: ') == copies.sum()


def test_the_terminal_shows_a_small_paired_interval_with_the_digits_it_needs(viewer_run):
    board = pd.read_csv(viewer_run.run_dir / "leaderboard.csv")
    row = board.index[board["label"] == "median"][0]
    board.loc[row, ["delta_brier_vs_baseline", "delta_brier_ci_low", "delta_brier_ci_high"]] = [-0.001, -0.0034, 0.0012]
    line = next(ln for ln in _print(board) if " median " in ln)
    assert "−0.001 [−0.003, +0.001]" in line and "[0.00, 0.00]" not in line and "[−0.00, +0.00]" not in line


def test_the_supervisor_section_shows_which_results_counted_as_evidence_and_why(viewer_run):
    """Each clarifying result's judgement (agent_tools.relevance): counted or not, with the shared words."""
    from markupsafe import escape

    html = viewer_run.page.read_text(encoding="utf-8")
    notes = [c for r in viewer_run.records if (r["trace"] or {}).get("supervisor")
             for c in r["trace"]["supervisor"]["coverage"] if c.get("evidence")]
    judged = [e for c in notes for e in c["evidence"]]
    assert any(e["counted"] for e in judged) and not all(e["counted"] for e in judged)
    for e in judged:
        badge = "counted" if e["counted"] else "not counted"
        assert f"{badge}</span> {escape(e['title'] or e['url'])} <span class=\"muted\">— {escape(e['reason'])}</span>" in html
    assert any(str(escape(e["reason"])).startswith("relevant (shares ") for e in judged)


def test_each_rows_details_show_its_brier_index(viewer_run):
    board = pd.read_csv(viewer_run.run_dir / "leaderboard.csv")
    html = viewer_run.page.read_text(encoding="utf-8")
    shown = re.findall(r"<dt>Brier Index</dt><dd>(\d+\.\d)", html)
    assert len(shown) == board["brier_index"].notna().sum() > 0
    assert sorted(shown) == sorted(f"{v:.1f}" for v in board["brier_index"].dropna())


def test_every_comparison_with_the_crowd_says_its_price_is_from_the_freeze(viewer_run):
    """Issue 35: the crowd baseline is the price at the freeze, 6-10 days before the forecast date, while members
    search up to the forecast date: the report, the terminal and the page say so wherever the crowd is compared."""
    from benchmarks.protocol.baselines import CROWD_TIMING_NOTE

    def flat(text: str) -> str:
        return " ".join(text.split())

    board = pd.read_csv(viewer_run.run_dir / "leaderboard.csv")
    assert "crowd" in set(board["label"])
    assert CROWD_TIMING_NOTE in flat(" ".join(_print(board)))
    assert CROWD_TIMING_NOTE in flat((viewer_run.run_dir / "leaderboard.md").read_text(encoding="utf-8"))
    assert CROWD_TIMING_NOTE in flat(viewer_run.page.read_text(encoding="utf-8"))
    # several runs: labels <run>:crowd; without the crowd there is nothing to say
    assert CROWD_TIMING_NOTE in flat(" ".join(_print(board.assign(label="r1:" + board["label"]), baseline="r1:mean")))
    assert "freeze" not in flat(" ".join(_print(board[board["label"] != "crowd"])))
