"""The fitted methods in a run's report: fitted.jsonl (parameters and n per question), leaderboard labels, the
fitted-methods, confidence-band and learned-mean tables, and --fit-from from the command line."""

import datetime as dt
import json
import re
import shutil
from html import escape

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from agent_research.aggregation import extremized, fit_extremizing_factor
from benchmarks.cli import app
from benchmarks.protocol.fitted import FITTED_METHODS, _scheduled_size

runner = CliRunner()
SIM = "sim/scale=0.5,rho=0.5,noise=0.4"


def _questions(path, n, *, start, seed, per_round=10, freeze=False):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        f = start + dt.timedelta(days=7 * (i // per_round))
        r = f + dt.timedelta(days=int(rng.integers(3, 30)))
        rows.append({"id": f"{path.stem}-{i}", "question": f"Will {path.stem} event {i} happen?", "forecast_date": f.isoformat(),
                     "resolution_date": r.isoformat(), "outcome": int(rng.random() < 0.4),
                     **({"freeze_datetime": (f - dt.timedelta(days=8)).isoformat() + "T00:00:00Z"} if freeze else {})})
    pd.DataFrame(rows).to_csv(path, index=False)
    return pd.DataFrame(rows)


def _run(tmp_path, name, questions, *extra):
    res = runner.invoke(app, ["run", "-p", SIM, "--questions", str(questions), "--search", "none", "--members", "3",
                              "-o", str(tmp_path / "runs"), "--run-id", name, "--no-progress", "--n", "0", *extra])
    assert res.exit_code == 0, res.output
    lines = (tmp_path / "runs" / name / "fitted.jsonl").read_text().splitlines()
    return {(row := json.loads(line))["question_id"]: row for line in lines}


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fitted")
    qs = _questions(tmp / "early.csv", 70, start=dt.date(2025, 1, 5), seed=0)
    return tmp, qs, _run(tmp, "early", tmp / "early.csv")


def test_every_question_records_each_fitted_method_with_its_parameters_and_n(first_run):
    tmp, qs, fitted = first_run
    assert set(fitted) == set(qs["id"])
    manifest = json.loads((tmp / "runs" / "early" / "manifest.json").read_text())
    spec = "sim/noise=0.4,rho=0.5,scale=0.5"
    assert [p["spec"] for p in manifest["providers"]] == [spec]  # one provider: --provider kept its parameters together
    records = {json.loads(line)["question_id"]: json.loads(line) for line in (tmp / "runs" / "early" / "results.jsonl").read_text().splitlines()}
    n_fitted = 0
    for qid, row in fitted.items():
        f = dt.date.fromisoformat(row["forecast_date"])
        known = qs[pd.to_datetime(qs["resolution_date"]).dt.date < f]
        for m in FITTED_METHODS:
            got = row["methods"][m]
            if m == "fitted_member_weights":  # refitted on a schedule of history sizes (issue 38, benchmarks/protocol/fitted.py)
                assert got["n_fit"] == _scheduled_size(len(known), 30) and got["n_fit_yes"] <= int(known["outcome"].sum()), qid
                assert got["fallback"] == (got["n_fit"] < 30 or min(got["n_fit_yes"], got["n_fit"] - got["n_fit_yes"]) < 5)
            else:
                assert got["n_fit"] == len(known) and got["n_fit_yes"] == int(known["outcome"].sum()), (qid, m)
                assert got["fallback"] == (len(known) < 30 or min(known["outcome"].sum(), len(known) - known["outcome"].sum()) < 5)
            assert set(got["params"]) == {"fitted_extremized": {"d"}, "fitted_platt": {"a", "b"},
                                          "fitted_blend": {"mean", "debate", "supervisor"} if not got["fallback"] else set(),
                                          "fitted_member_weights": {f"member-{i}@{spec}" for i in range(3)}}[m]
        ext = row["methods"]["fitted_extremized"]
        if not ext["fallback"]:  # recompute the fit by hand from the earlier questions' member answers
            n_fitted += 1
            members = [[fc["p_yes"] for fc in records[k]["trace"]["forecasts"]] for k in known["id"]]
            d = fit_extremizing_factor(members, known["outcome"].to_numpy())
            assert ext["params"]["d"] == pytest.approx(d, rel=1e-6)
            mine = [fc["p_yes"] for fc in records[qid]["trace"]["forecasts"]]
            assert ext["p_yes"] == pytest.approx(float(np.clip(extremized([mine], d=d)[0], 0.01, 0.99)))
            assert ext["note"] == f"fitted on {len(known)} questions ({int(known['outcome'].sum())} Yes) resolved before {f}: d={d:.3g}"
    assert 10 <= n_fitted < len(qs)  # the early rounds fall back, the later ones are fitted


def test_the_report_ranks_the_fitted_methods_and_shows_their_tables(first_run):
    tmp, qs, fitted = first_run
    board = pd.read_csv(tmp / "runs" / "early" / "leaderboard.csv").set_index("label")
    for m in FITTED_METHODS:  # fitted on the later questions: a method of its own, with a rank
        assert board.loc[m, "n_answered"] == len(qs) and board.loc[m, "ranked"] and not pd.isna(board.loc[m, "rank"])
    assert board.loc["fitted_blend", "tokens_per_question"] == board.loc["pipeline", "tokens_per_question"]
    assert board.loc["fitted_platt", "tokens_per_question"] == board.loc["mean", "tokens_per_question"]
    md = (tmp / "runs" / "early" / "leaderboard.md").read_text()
    section = md[md.index("## Fitted methods"):md.index("## Brier and calibration by confidence band")]
    n_fallback = sum(fitted[q]["methods"]["fitted_platt"]["fallback"] for q in fitted)
    row = next(line for line in section.splitlines() if line.startswith("| fitted_platt"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:5] == [str(len(qs)), str(len(qs) - n_fallback), str(n_fallback), str(max(r["methods"]["fitted_platt"]["n_fit"] for r in fitted.values()))]
    assert "## Cost-effectiveness against the learned mean (fitted_platt" in md
    # under it, how far the reference itself is from mean (recomputed from the fitted rows and the records)
    records = [json.loads(line) for line in (tmp / "runs" / "early" / "results.jsonl").read_text().splitlines()]
    o = np.array([r["outcome"] for r in records])
    learned = np.array([fitted[r["question_id"]]["methods"]["fitted_platt"]["p_yes"] for r in records])
    mean = np.array([r["methods"]["mean"]["p_yes"] for r in records])
    diff = float(np.mean((learned - o) ** 2 - (mean - o) ** 2))
    assert f"The reference against mean (Brier difference, 95% interval): fitted_platt {diff:+.4f} [" in md
    assert f"] on {len(qs)} questions. Where it is positive the learned mean is worse than the mean" in md
    bands = md[md.index("## Brier and calibration by confidence band"):]
    assert "overall (weakest link)" in bands and "supervisor, grounded in its evidence" in bands
    html = (tmp / "runs" / "early" / "report.html").read_text()
    assert "Fitted methods (walk-forward" in html and "overall confidence" in html
    # each question's trace view shows every fitted method's parameters and n (its note, HTML-escaped)
    last = max(fitted.values(), key=lambda r: r["forecast_date"])
    for m in FITTED_METHODS:
        note = last["methods"][m]["note"]
        assert note.startswith(f"fitted on {last['methods'][m]['n_fit']} questions") and escape(note) in html, m
    figure = html[html.index('id="fig-confidence"'):]
    assert figure.index("<svg") < figure.index("</figure>") and "not drawn" not in figure[:figure.index("</figure>")]


def test_fit_from_an_earlier_run_gives_a_new_run_the_history_it_lacks(first_run):
    tmp, early, _ = first_run
    _questions(tmp / "later.csv", 12, start=dt.date(2025, 4, 20), seed=1, per_round=12)
    res = runner.invoke(app, ["run", "-p", SIM, "--questions", str(tmp / "later.csv"), "--search", "none", "-o", str(tmp / "runs"),
                              "--run-id", "later", "--no-progress", "--no-report", "--n", "0"])
    assert res.exit_code == 0, res.output
    # on its own the later run has no resolved history at all (its questions share one forecast date) ...
    res = runner.invoke(app, ["leaderboard", str(tmp / "runs" / "later"), "-o", str(tmp / "board"),
                              "--fit-from", str(tmp / "runs" / "early")])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in (tmp / "board" / "fitted.jsonl").read_text().splitlines()]
    known = early[pd.to_datetime(early["resolution_date"]).dt.date < dt.date(2025, 4, 20)]
    assert len(rows) == 12 and len(known) >= 30
    for r in rows:  # ... with --fit-from it learns from the earlier run's questions resolved before its forecast date
        assert r["fit_from"] == [str(tmp / "runs" / "early")]
        for m in FITTED_METHODS:
            n = _scheduled_size(len(known), 30) if m == "fitted_member_weights" else len(known)  # its refit schedule
            assert r["methods"][m]["n_fit"] == n and not r["methods"][m]["fallback"], m
    # a wrong folder is one line before anything runs
    res = runner.invoke(app, ["run", "-p", "sim", "--questions", str(tmp / "later.csv"), "-o", str(tmp / "runs"), "--run-id", "never",
                              "--fit-from", str(tmp / "nowhere")])
    assert res.exit_code == 2 and res.stderr.startswith("error: ") and "nowhere" in res.stderr
    assert not (tmp / "runs" / "never").exists()


def test_a_fitted_method_that_fell_back_everywhere_takes_no_rank_and_says_what_it_equals(tmp_path):
    # 55 questions of one round (55 clusters, enough to rank from 50): none has a question resolved before it, so every
    # fitted method is its unfitted rule under another name
    _questions(tmp_path / "one.csv", 55, start=dt.date(2025, 6, 1), seed=3, per_round=55)
    res = runner.invoke(app, ["run", "-p", "sim", "--questions", str(tmp_path / "one.csv"), "--search", "none", "-o", str(tmp_path),
                              "--run-id", "one", "--no-progress", "--n", "0"])
    assert res.exit_code == 0, res.output
    board = pd.read_csv(tmp_path / "one" / "leaderboard.csv", keep_default_na=False).set_index("label")
    assert not board["too_small_to_rank"].any() and board.loc["mean", "n_clusters"] == 55
    said = {"fitted_platt": "mean", "fitted_member_weights": "mean", "fitted_extremized": "geomean_odds", "fitted_blend": "pipeline"}
    for m, rule in said.items():
        assert board.loc[m, "rank"] == "" and board.loc[m, "equals"] == f"{rule} (not fitted: one forecast date)", m
        assert board.loc[m, "brier"] == pytest.approx(board.loc[rule, "brier"], abs=1e-12)  # it is the rule, under another name
    ranks = sorted(int(r) for r in board["rank"] if r != "")
    assert ranks == list(range(1, len(board) - len(said) + 1)) and all(board.loc[m, "rank"] != "" for m in ("mean", "geomean_odds", "pipeline"))
    # the terminal: "=" instead of a rank, what it equals in place of its Brier, why in place of its delta
    rows = {x.split()[1]: x.split() for x in res.stdout.splitlines() if len(x.split()) > 2 and x.split()[1] in board.index}
    for m, rule in said.items():
        assert rows[m][:3] == ["=", m, "55"] and rows[m][3:10] == ["=", rule, "not", "fitted:", "one", "forecast", "date"], rows[m]
    assert rows["mean"][0] == board.loc["mean", "rank"]
    md = (tmp_path / "one" / "leaderboard.md").read_text()
    cells = {c[1]: c for c in ([x.strip() for x in line.strip("|").split("|")] for line in md.splitlines() if line.startswith("| "))}
    assert cells["fitted_platt"][:3] == ["=", "fitted_platt", "mean (not fitted: one forecast date)"] and cells["mean"][:3] == [board.loc["mean", "rank"], "mean", ""]
    html = (tmp_path / "one" / "report.html").read_text()
    assert "= mean (not fitted: one forecast date)" in html and 'title="no rank: geomean_odds (not fitted: one forecast date)"' in html


def test_fit_from_a_run_of_another_model_is_refused_unless_any_model_is_given(first_run):
    tmp, early, _ = first_run
    runs = tmp / "runs"
    _questions(tmp / "other.csv", 12, start=dt.date(2025, 4, 20), seed=2, per_round=12)
    # the simulator with its default parameters: another model than the earlier run's SIM
    res = runner.invoke(app, ["run", "-p", "sim", "--questions", str(tmp / "other.csv"), "--search", "none", "-o", str(runs),
                              "--run-id", "mine", "--no-progress", "--no-report", "--n", "0"])
    assert res.exit_code == 0, res.output
    theirs = "sim/anchor=truth,k=2,noise=0.4,rho=0.5,bias=0,scale=0.5,seed=0"
    mine = "sim/anchor=truth,k=2,noise=0.5,rho=0.3,bias=0,scale=1,seed=0"
    res = runner.invoke(app, ["leaderboard", str(runs / "mine"), "-o", str(tmp / "refused"), "--fit-from", str(runs / "early")])
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr == (f"error: --fit-from {runs / 'early'} ({theirs}) is not the model of {runs / 'mine'} ({mine}): the fitted "
                          "methods would learn one model's forecasts for another's; give --fit-from-any-model to fit on it anyway\n")
    assert not (tmp / "refused").exists()
    # the case: an embedded model's run fitted on a simulated run (its manifest as the embedded model writes it)
    shutil.copytree(runs / "mine", runs / "embedded")
    manifest = json.loads((runs / "embedded" / "manifest.json").read_text())
    manifest.update(run_id="embedded", providers=[{"spec": "local/smollm2-q8_0", "model": "smollm2-q8_0"}])
    (runs / "embedded" / "manifest.json").write_text(json.dumps(manifest))
    res = runner.invoke(app, ["leaderboard", str(runs / "embedded"), "-o", str(tmp / "refused"), "--fit-from", str(runs / "mine")])
    assert res.exit_code == 2 and f"{runs / 'mine'} ({mine}) is not the model of {runs / 'embedded'} (local/smollm2-q8_0)" in res.stderr
    # run --fit-from refuses before anything is written
    res = runner.invoke(app, ["run", "-p", "sim", "--questions", str(tmp / "other.csv"), "--search", "none", "-o", str(runs),
                              "--run-id", "never-fitted", "--no-progress", "--n", "0", "--fit-from", str(runs / "early")])
    assert res.exit_code == 2 and res.stderr.startswith(f"error: --fit-from {runs / 'early'} ({theirs}) is not the model of")
    assert not (runs / "never-fitted").exists()
    # --fit-from-any-model: fitted on the other model's questions, and the report says so
    res = runner.invoke(app, ["leaderboard", str(runs / "mine"), "-o", str(tmp / "any"), "--fit-from", str(runs / "early"),
                              "--fit-from-any-model"])
    assert res.exit_code == 0, res.output
    known = early[pd.to_datetime(early["resolution_date"]).dt.date < dt.date(2025, 4, 20)]
    rows = [json.loads(line) for line in (tmp / "any" / "fitted.jsonl").read_text().splitlines()]
    assert all(r["methods"]["fitted_platt"]["n_fit"] == len(known) for r in rows)
    md = (tmp / "any" / "leaderboard.md").read_text()
    assert (f"Learned from each scored run's own questions and 1 --fit-from run(s): {runs / 'early'} ({theirs}). **Another model**: "
            f"{runs / 'early'} (accepted with --fit-from-any-model)") in md
    sources = md[md.index("Learned from"):md.index("## Brier and calibration")]
    table = [[c.strip() for c in line.strip("|").split("|")] for line in sources.splitlines() if line.startswith("| ")]
    assert table == [["run", "run_id", "learned_as", "models", "other_model"],
                     [str(runs / "mine"), "mine", "scored run", mine, "False"], [str(runs / "early"), "early", "--fit-from", theirs, "True"]]
    html = (tmp / "any" / "report.html").read_text()
    assert "Fitted methods: the runs they learned from, and their models" in html and escape(theirs) in html


def test_a_model_is_its_provider_and_name_not_its_url():
    from benchmarks.protocol.fitted import run_models

    def manifest(*providers):
        return {"providers": [{"spec": s, "model": m} for s, m in providers]}

    here = manifest(("openai-compatible/qwen@http://127.0.0.1:8000/v1", "qwen"))
    there = manifest(("openai-compatible/qwen@http://10.0.0.2:9000/v1?key=***", "qwen"))
    assert run_models(here) == run_models(there) == ("openai-compatible/qwen",)
    assert run_models(manifest(("openai/qwen", "qwen"))) == ("openai/qwen",)  # another provider: another model
    two = manifest(("sim", "anchor=truth,seed=0"), ("local/smollm2-q8_0", "smollm2-q8_0"), ("sim", "anchor=truth,seed=0"))
    assert run_models(two) == ("local/smollm2-q8_0", "sim/anchor=truth,seed=0")
    assert run_models({"providers": [{"spec": "scripted"}]}) == ("scripted",)  # an older manifest without model


@pytest.mark.parametrize("extra, setting, theirs, mine", [
    (["--show-crowd"], "--show-crowd", "False", "True"),
    (["--members", "5"], "members (-m)", "3", "5"),
    (["--evidence-cutoff", "freeze"], "--evidence-cutoff", "'forecast'", "'freeze'"),
], ids=["show-crowd", "members", "evidence-cutoff"])
def test_fit_from_a_run_made_with_other_settings_is_refused_with_the_setting_and_both_values(first_run, extra, setting, theirs, mine):
    """Issue 35: --fit-from compared only the model, so a run made with --show-crowd, or with 5 members for a
    3-member ensemble, was accepted silently as training data."""
    tmp, _, _ = first_run
    runs = tmp / "runs"
    name = "other-" + setting.strip("-").split()[0]
    _questions(tmp / f"{name}.csv", 12, start=dt.date(2025, 4, 20), seed=3, per_round=12, freeze="--evidence-cutoff" in extra)
    # run --fit-from refuses before anything is written: one line, the setting and both values, exit 2
    res = runner.invoke(app, ["run", "-p", SIM, "--questions", str(tmp / f"{name}.csv"), "--search", "none", "--members", "3",
                              "-o", str(runs), "--run-id", f"{name}-never", "--no-progress", "--n", "0", *extra,
                              "--fit-from", str(runs / "early")])
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr == (f"error: --fit-from {runs / 'early'} was made with {setting} {theirs}, the scored run "
                          f"{runs / (name + '-never')} with {mine}: the fitted methods would learn forecasts made another way "
                          "(the settings that must match: benchmarks.protocol.fitted.FIT_SETTINGS)\n")
    assert not (runs / f"{name}-never").exists()
    # leaderboard --fit-from refuses the same way, and --fit-from-any-model does not lift it (the model is the same)
    res = runner.invoke(app, ["run", "-p", SIM, "--questions", str(tmp / f"{name}.csv"), "--search", "none", "--members", "3",
                              "-o", str(runs), "--run-id", name, "--no-progress", "--no-report", "--n", "0", *extra])
    assert res.exit_code == 0, res.output
    for lift in ([], ["--fit-from-any-model"]):
        res = runner.invoke(app, ["leaderboard", str(runs / name), "-o", str(tmp / f"{name}-board"), "--fit-from", str(runs / "early"), *lift])
        assert res.exit_code == 2 and res.stderr == (
            f"error: --fit-from {runs / 'early'} was made with {setting} {theirs}, the scored run {runs / name} with {mine}: the "
            "fitted methods would learn forecasts made another way (the settings that must match: "
            "benchmarks.protocol.fitted.FIT_SETTINGS)\n")
        assert not (tmp / f"{name}-board").exists()


def test_every_setting_that_must_match_is_compared_and_a_missing_one_never_matches(first_run):
    from benchmarks.protocol.fitted import FIT_SETTINGS, fit_settings, refuse_other_settings
    from agent_schemas import DataValidationError

    tmp, _, _ = first_run
    manifest = json.loads((tmp / "runs" / "early" / "manifest.json").read_text())
    assert fit_settings(manifest) == {
        "--show-crowd": False, "members (-m)": 3, "personas": None, "temperatures": None,
        "evidence": "search=none, snippet_chars=200, llm_queries=False, max_evidence=1, max_results=2, n_queries=1",
        "--evidence-cutoff": "forecast", "question kinds": "binary", "prompt version": manifest["prompt_version"]}
    refuse_other_settings({"mine": manifest}, {"early": manifest})  # the same run: nothing to refuse
    changed = {
        "--show-crowd": lambda m: m["config"].update(show_crowd=True),
        "members (-m)": lambda m: m["config"]["pipeline"].update(n_members=5),
        "personas": lambda m: m["config"]["pipeline"].update(personas=["skeptic"]),
        "temperatures": lambda m: m["config"]["pipeline"].update(temperatures=[0.2]),
        "evidence": lambda m: m["config"].update(search="local"),
        "--evidence-cutoff": lambda m: m["config"].update(evidence_cutoff="freeze"),
        "question kinds": lambda m: m.update(question_kinds=["numeric"]),
        "prompt version": lambda m: m.update(prompt_version="0123456789ab"),
    }
    assert set(changed) == set(FIT_SETTINGS)  # a row per setting of the table
    for name, change in changed.items():
        other = json.loads(json.dumps(manifest))
        change(other)
        with pytest.raises(DataValidationError, match="^" + re.escape(f"--fit-from early was made with {name} ")):
            refuse_other_settings({"mine": manifest}, {"early": other})
    # a run written before a setting was recorded: "not recorded" differs from any value
    old = {k: v for k, v in manifest.items() if k != "prompt_version"}
    with pytest.raises(DataValidationError, match="with prompt version 'not recorded', the scored run mine with '"):
        refuse_other_settings({"mine": manifest}, {"early": old})
    other = json.loads(json.dumps(manifest))
    other["config"]["pipeline"]["member"]["max_evidence"] = 2
    with pytest.raises(DataValidationError, match="max_evidence=2"):
        refuse_other_settings({"mine": manifest}, {"early": other})
