"""The harness on members given instead of run (issue 31's panels): ``RunConfig(ensemble="given")``, a question
pool filtered as a question file is, a provider stack without providers, the runner and the dry run.
Hand-made members and questions; scripted providers; nothing is called over the network."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging

import pytest
from pydantic import ValidationError

from agent_research import GivenForecasts
from agent_schemas import DataValidationError, Forecast, Question
from benchmarks.harness.config import RunConfig
from benchmarks.harness.estimate import calls_per_question, estimate_run
from benchmarks.harness.provider_stack import ProviderStack
from benchmarks.harness.runner import BenchmarkRunner
from benchmarks.harness.selection import QuestionPool, QuestionSelection
from benchmarks.run_folder import read_results
from agent_providers import scripted_world
from tests.helpers import SpecProvider

AGGREGATION = ["mean", "median", "min"]


def question(qid: str, forecast_date: str, outcome: int = 1) -> Question:
    return Question(id=qid, text=f"Will {qid} happen?", forecast_date=dt.date.fromisoformat(forecast_date),
                    resolution_date=dt.date(2026, 6, 1), outcome=outcome, source="manifold", source_question_id=qid,
                    question_type="market")


QUESTIONS = [question("a", "2024-03-01", 1), question("b", "2024-09-01", 0), question("c", "2025-02-01", 1)]
# members as given: a 0.1/0.5/0.9 (mean 0.5), b 0.2/0.4 (mean 0.3), c 0.7 alone
MEMBERS = [("a", "ann", 0.1), ("a", "bob", 0.5), ("a", "cy", 0.9), ("b", "ann", 0.2), ("b", "bob", 0.4), ("c", "cy", 0.7)]


def given() -> GivenForecasts:
    return GivenForecasts([Forecast(question_id=q, agent_id=who, p_yes=p, rationale=f"{who.upper()}-ON-{q}", model="panel/test")
                           for q, who, p in MEMBERS])


def config(tmp_path, **cfg) -> RunConfig:
    base = dict(output_dir=str(tmp_path), run_id="g", providers=[], ensemble="given", search="none", methods=AGGREGATION,
                baselines=["always_0.5"], sample_n=None)
    return RunConfig(**{**base, **cfg})


def pool(questions=QUESTIONS) -> QuestionPool:
    return QuestionPool(questions, source="panel test (hand-made)", facts={"forecasters": 3})


# --- the config -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cfg, needle", [
    ({"methods": ["mean", "debate", "pipeline"]}, "the methods debate, pipeline need a model: give a provider"),
    ({"max_cost_usd": 1.0}, "a given ensemble without a provider calls none"),
    ({"batch": True, "providers": ["scripted"]}, "runs in this process: not with --batch or --executor ray"),
    ({"executor": "ray", "providers": ["scripted"]}, "runs in this process"),
])
def test_a_given_ensemble_refuses_what_it_cannot_do(tmp_path, cfg, needle):
    with pytest.raises(ValidationError, match=needle):
        config(tmp_path, **cfg)
    assert config(tmp_path, providers=["scripted"], methods=["mean", "debate"]).ensemble == "given"  # with a provider: fine


def test_the_stack_and_the_config_agree_on_who_the_members_are(tmp_path):
    with pytest.raises(ValueError, match="needs both RunConfig\\(ensemble='given'\\) and their forecasts"):
        ProviderStack(config(tmp_path))
    with pytest.raises(ValueError, match="got ensemble='forecasters' and forecasts"):
        BenchmarkRunner(RunConfig(output_dir=str(tmp_path), providers=["scripted"]), ensemble=given())


# --- a question pool ----------------------------------------------------------------------------------------------


def test_a_pool_is_filtered_as_a_question_file_and_recorded_as_its_source(tmp_path, caplog):
    # a model trained up to 2024-06-30: only the questions due after it; and a sample of 1 of those two, seeded
    cfg = config(tmp_path, providers=["openai/gpt-4.1-mini"], methods=AGGREGATION)
    sel = QuestionSelection(cfg, ["openai/gpt-4.1-mini"], pool())
    assert [q.id for q in sel.questions()] == ["b", "c"]
    described = sel.describe()
    assert (described["source"], described["pool"], described["forecast_date_from"]) == ("panel test (hand-made)", {"forecasters": 3}, "2024-07-01")
    assert (described["scheduled_close_to"], described["survivorship_rule"]) == (None, "not applicable (user questions)")
    sampled = QuestionSelection(cfg.model_copy(update={"sample_n": 1, "seed": 5}), ["openai/gpt-4.1-mini"], pool())
    with caplog.at_level(logging.WARNING, logger="benchmarks.harness.selection"):
        picked = sampled.questions()
    assert len(picked) == 1 and picked[0].id in ("b", "c")
    assert caplog.messages == ["panel test (hand-made) has 2 questions after the filters; using a seeded sample of 1 (--n 0 for all)"]
    # no model: nothing to filter, every question
    none = QuestionSelection(config(tmp_path), [], pool())
    assert [q.id for q in none.questions()] == ["a", "b", "c"]
    assert none.describe()["contamination_filter"]["note"] == "no model in the run (its members are given and nothing is called): nothing to filter"
    # a list is still used as given, without a filter
    assert [q.id for q in QuestionSelection(cfg, ["openai/gpt-4.1-mini"], list(QUESTIONS)).questions()] == ["a", "b", "c"]


def test_a_pool_or_file_with_no_question_within_the_dates_names_its_dates_and_the_fix(tmp_path):
    cfg = config(tmp_path, providers=["anthropic/claude-haiku-4-5"], methods=AGGREGATION)  # trained up to 2025-07-31
    with pytest.raises(DataValidationError) as ei:
        QuestionSelection(cfg, ["anthropic/claude-haiku-4-5"], pool()).questions()
    assert str(ei.value) == ("none of the 3 questions of panel test (hand-made) (forecast dates 2024-03-01 to 2025-02-01) is within "
                             "the run's dates (2025-08-01 to any; questions due after 2025-07-31 (latest training cutoff of the "
                             "models)): --include-before-cutoff accepts contaminated questions")
    f = tmp_path / "qs.csv"
    f.write_text("id,question,forecast_date,outcome\nx,Will X?,2025-01-01,1\n")
    narrow = RunConfig(questions_file=str(f), forecast_date_from=dt.date(2025, 6, 1), providers=["scripted"])
    with pytest.raises(DataValidationError, match=r"none of the 1 questions of .*qs.csv \(forecast dates 2025-01-01 to 2025-01-01\) "
                                                  r"is within the run's dates \(2025-06-01 to any; .*\): widen --date-from / --date-to"):
        QuestionSelection(narrow, ["scripted"]).questions()


# --- the run ---------------------------------------------------------------------------------------------------------


def test_a_run_of_given_members_without_a_provider_calls_nothing_and_records_them(tmp_path):
    stack = ProviderStack(config(tmp_path), ensemble=given())
    assert (stack.built(), stack.model_specs(), stack.concurrency()) == ([], [], 8)
    r = BenchmarkRunner(config(tmp_path), questions=pool(), ensemble=given(), progress=False)
    summary = asyncio.run(r.arun())
    assert (summary.n_ok, summary.n_failed, summary.provider_stats["calls"]) == (3, 0, 0)
    records = {x["question_id"]: x for x in read_results(r.run_dir / "results.jsonl")}
    assert {q: {m: round(row["p_yes"], 12) for m, row in x["methods"].items()} for q, x in records.items()} == {
        "a": {"mean": 0.5, "median": 0.5, "min": 0.1}, "b": {"mean": 0.3, "median": 0.3, "min": 0.2},
        "c": {"mean": 0.7, "median": 0.7, "min": 0.7}}
    assert [(f["agent_id"], f["rationale"]) for f in records["a"]["trace"]["forecasts"]] == [
        ("ann", "ANN-ON-a"), ("bob", "BOB-ON-a"), ("cy", "CY-ON-a")]
    assert records["a"]["trace"]["recorded_calls"] == [] and records["b"]["baselines"]["always_0.5"]["p_yes"] == 0.5
    manifest = json.loads((r.run_dir / "manifest.json").read_text())
    assert (manifest["providers"], manifest["config"]["ensemble"], manifest["config"]["providers"]) == ([], "given", [])
    assert manifest["question_selection"]["source"] == "panel test (hand-made)" and manifest["question_ids"] == ["a", "b", "c"]


def test_given_members_are_reconciled_on_a_provider_that_reads_their_rationales(tmp_path):
    cfg = config(tmp_path, providers=["scripted"], methods=["mean", "debate", "supervisor", "pipeline"])
    r = BenchmarkRunner(cfg, questions=pool(), ensemble=given(), provider_factory=lambda s: scripted_world.provider(), progress=False)
    assert asyncio.run(r.arun()).n_ok == 3
    records = {x["question_id"]: x for x in read_results(r.run_dir / "results.jsonl")}
    a = records["a"]
    assert {m: a["methods"][m]["status"] for m in ("debate", "supervisor", "pipeline")} == dict.fromkeys(("debate", "supervisor", "pipeline"), "ok")
    roles = {c["role"] for c in a["trace"]["recorded_calls"]}
    sent = "\n".join(m["content"] for c in a["trace"]["recorded_calls"] for m in c["messages"])
    assert roles == {"bull", "bear", "supervisor"} and "CY-ON-a" in sent and "ANN-ON-b" not in sent  # its own members only
    assert all(e["input_tokens"] in (0, None) for e in a["ledger"] if e["method"] == "ensemble")  # members cost nothing


def test_the_dry_run_of_given_members_counts_only_the_reconcilers(tmp_path):
    cfg = config(tmp_path, providers=["openai/gpt-4.1-mini"], methods=["mean", "supervisor"], after_model_cutoff=False)
    assert calls_per_question(cfg, 1) == {(0, "supervisor"): 2}
    assert calls_per_question(cfg.model_copy(update={"ensemble": "forecasters"}), 1)[(0, "forecaster")] == cfg.pipeline.n_members
    est = estimate_run(cfg, questions=pool(), provider_factory=SpecProvider, ensemble=given())
    assert est.table[["role", "calls"]].to_dict("records") == [{"role": "supervisor", "calls": 6}]  # 2 calls x 3 questions
    nothing = estimate_run(config(tmp_path), questions=pool(), ensemble=given())
    assert (nothing.providers, nothing.totals()["calls"], nothing.totals()["usd"]) == ([], 0, 0.0)
