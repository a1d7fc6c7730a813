"""Question selection and the contamination filter, with models of known and unknown training cutoffs (issue 18).

Known cutoffs (benchmarks.protocol.model_cutoffs): local/smollm2 2024-11-30, openai/gpt-4.1-mini 2024-06-30,
anthropic/claude-haiku-4-5 2025-07-31; an openai-compatible server's model and ``*-latest`` aliases are unknown.
The providers are scripted ones that report those specs (the filter reads only the spec); nothing is called.
"""

from __future__ import annotations

import datetime as dt
import logging

import pytest

from agent_schemas import DataValidationError
from benchmarks.harness import selection as selection_module
from benchmarks.harness.config import RunConfig
from benchmarks.harness.runner import BenchmarkRunner
from tests.helpers import SpecProvider, make_question

MINI, SMOL, HAIKU = "openai/gpt-4.1-mini", "local/smollm2", "anthropic/claude-haiku-4-5"
MYSTERY = "openai-compatible/mystery@http://127.0.0.1:9/v1"
LATEST = "openai/gpt-4o-latest"
SNAPSHOT = "2026-08-20"
OFF_NOTE = "off (--include-before-cutoff): questions due before the models' training cutoffs are included and may be contaminated"


def make(specs, questions=None, **cfg) -> BenchmarkRunner:
    config = RunConfig(providers=specs, output_dir="unused", run_id="r", **cfg)
    return BenchmarkRunner(config, provider_factory=SpecProvider, questions=questions, progress=False)


# --- the contamination filter ------------------------------------------------------------------------


def test_the_latest_cutoff_of_all_models_bounds_the_questions():
    f = make([MINI, SMOL]).selection.cutoff_filter()
    assert f == {"requested": True, "model_cutoffs": {MINI: "2024-06-30", SMOL: "2024-11-30"}, "margin_days": 0,
                 "applied_after": "2024-11-30", "basis": "model_cutoffs",
                 "note": "questions due after 2024-11-30 (latest training cutoff of the models)"}


def test_the_margin_is_added_after_the_latest_cutoff():
    f = make([HAIKU, MINI], cutoff_margin_days=31).selection.cutoff_filter()
    assert (f["applied_after"], f["margin_days"]) == ("2025-08-31", 31)  # 2025-07-31 + 31 days
    assert f["note"] == "questions due after 2025-08-31 (latest training cutoff of the models + 31 days margin)"


def test_untrained_providers_are_left_out_of_the_filter():
    f = make(["scripted", "sim", MINI]).selection.cutoff_filter()
    assert f["model_cutoffs"] == {MINI: "2024-06-30"} and f["applied_after"] == "2024-06-30"
    only = make(["scripted", "sim/seed=2"]).selection.cutoff_filter()
    assert only == {"requested": True, "model_cutoffs": {}, "margin_days": 0, "applied_after": None, "basis": None,
                    "note": "no trained model in the run (scripted or simulated provider): nothing to filter"}


@pytest.mark.parametrize("specs", [[MYSTERY], [MINI, MYSTERY], [LATEST], [MYSTERY, MINI, LATEST]])
def test_an_unknown_cutoff_stops_the_run_naming_the_models_and_the_fixes(specs):
    unknown = [s for s in specs if s != MINI]
    with pytest.raises(DataValidationError) as ei:
        make(specs).selection.cutoff_filter()
    assert str(ei.value) == (f"training cutoff unknown for {', '.join(unknown)}: the contamination filter cannot be applied. "
                             "Pass --date-from YYYY-MM-DD (a date after the model's training cutoff), or "
                             "--include-before-cutoff to accept contaminated questions")
    assert (ei.value.field, ei.value.value) == ("providers", unknown)


def test_an_unknown_cutoff_with_date_from_uses_the_users_bound():
    f = make([MINI, MYSTERY, LATEST], forecast_date_from=dt.date(2025, 3, 1)).selection.cutoff_filter()
    assert f == {"requested": True, "model_cutoffs": {MINI: "2024-06-30", MYSTERY: None, LATEST: None}, "margin_days": 0,
                 "applied_after": "2025-02-28", "basis": "--date-from",
                 "note": (f"training cutoff unknown for {MYSTERY}, {LATEST}: questions due on or after 2025-03-01 (--date-from) "
                          "are used; the bound is the user's")}


def test_given_questions_record_an_unknown_cutoff_instead_of_stopping():
    f = make([MYSTERY, LATEST], questions=[make_question()]).selection.cutoff_filter(strict=False)
    assert f["applied_after"] is None and f["basis"] is None
    assert f["note"] == f"training cutoff unknown for {MYSTERY}, {LATEST}: not applied (questions given directly)"


def test_the_filter_can_be_turned_off_explicitly():
    for specs in ([MINI], [MYSTERY]):
        f = make(specs, after_model_cutoff=False).selection.cutoff_filter()
        assert (f["requested"], f["applied_after"], f["basis"], f["note"]) == (False, None, None, OFF_NOTE)


# --- what the selection records ----------------------------------------------------------------------


def test_bundled_selection_records_every_filter():
    sel = make([MINI, SMOL], forecast_date_to=dt.date(2026, 1, 31)).selection.describe()
    assert sel == {"source": "bundled ForecastBench", "forecast_date_from": "2024-12-01", "forecast_date_to": "2026-01-31",
                   "scheduled_close_to": SNAPSHOT,
                   "survivorship_rule": f"scheduled close on or before the outcome snapshot {SNAPSHOT}",
                   "contamination_filter": make([MINI, SMOL]).selection.cutoff_filter()}


@pytest.mark.parametrize("date_from, expected", [
    (dt.date(2024, 3, 1), "2024-12-01"),  # the contamination filter is later: it wins
    (dt.date(2025, 2, 1), "2025-02-01"),  # the user's bound is later: it wins
    (dt.date(2024, 12, 1), "2024-12-01"),
])
def test_the_later_of_the_users_bound_and_the_filter_is_applied(date_from, expected):
    assert make([SMOL], forecast_date_from=date_from).selection.describe()["forecast_date_from"] == expected


def test_without_a_filter_the_users_bounds_are_recorded_as_given():
    sel = make(["scripted"], forecast_date_from=dt.date(2025, 1, 2), close_by_snapshot=False).selection.describe()
    assert (sel["forecast_date_from"], sel["forecast_date_to"], sel["scheduled_close_to"], sel["survivorship_rule"]) == (
        "2025-01-02", None, None, "off (--include-unclosed)")
    assert make(["scripted"]).selection.describe()["forecast_date_from"] is None


def test_given_questions_and_question_files_are_labelled(tmp_path):
    given = make([MYSTERY], questions=[make_question()]).selection.describe()
    assert given["source"] == "given (no filter applied)"
    assert (given["scheduled_close_to"], given["survivorship_rule"]) == (None, "not applicable (user questions)")
    f = tmp_path / "qs.csv"
    f.write_text("id,question,forecast_date,outcome\na,Will A?,2025-01-01,1\n")
    from_file = make([MINI], questions_file=str(f)).selection.describe()
    assert (from_file["source"], from_file["forecast_date_from"], from_file["scheduled_close_to"]) == (str(f), "2024-07-01", None)
    assert from_file["survivorship_rule"] == "not applicable (user questions)"


# --- the questions selected --------------------------------------------------------------------------------


def test_given_questions_are_used_as_given():
    qs = [make_question("a", "2020-01-01"), make_question("b")]
    r = make([MYSTERY], questions=qs)
    got = r.selection.questions()
    assert got == qs and got is not qs


def test_a_question_file_goes_through_the_date_bounds_inclusively(tmp_path):
    f = tmp_path / "qs.csv"
    f.write_text("id,question,forecast_date,outcome\n"
                 "before,Will A?,2024-06-30,1\nfirst,Will B?,2024-07-01,0\nlast,Will C?,2025-03-31,1\nafter,Will D?,2025-04-01,0\n")
    r = make([MINI], questions_file=str(f), forecast_date_to=dt.date(2025, 3, 31), sample_n=None)
    assert [q.id for q in r.selection.questions()] == ["first", "last"]  # after 2024-06-30, up to 2025-03-31
    everything = make([MINI], questions_file=str(f), sample_n=None, after_model_cutoff=False)
    assert [q.id for q in everything.selection.questions()] == ["before", "first", "last", "after"]


def test_a_question_file_is_sampled_with_the_seed_and_says_so(tmp_path, caplog):
    f = tmp_path / "qs.csv"
    f.write_text("id,question,forecast_date,outcome\n" + "".join(f"q{i},Will {i}?,2025-01-{i + 1:02d},1\n" for i in range(10)))
    with caplog.at_level(logging.WARNING, logger="benchmarks.harness.selection"):
        picked = [q.id for q in make(["scripted"], questions_file=str(f), sample_n=4, seed=3).selection.questions()]
    assert caplog.messages == [f"{f} has 10 questions after the filters; using a seeded sample of 4 (--n 0 for all)"]
    assert len(picked) == 4 and picked == sorted(picked, key=lambda i: int(i[1:]))  # file order kept
    assert picked == [q.id for q in make(["scripted"], questions_file=str(f), sample_n=4, seed=3).selection.questions()]
    others = {tuple(q.id for q in make(["scripted"], questions_file=str(f), sample_n=4, seed=s).selection.questions()) for s in range(6)}
    assert len(others) > 1  # the seed decides
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="benchmarks.harness.selection"):
        assert len(make(["scripted"], questions_file=str(f), sample_n=10).selection.questions()) == 10
    assert caplog.messages == []  # exactly the sample size: nothing sampled, nothing said
    with caplog.at_level(logging.WARNING, logger="benchmarks.harness.selection"):
        assert len(make(["scripted"], questions_file=str(f), sample_n=50).selection.questions()) == 10
    assert caplog.messages == [f"{f} has 10 questions after the filters, fewer than --n 50: all are used"]


def test_bundled_questions_are_loaded_with_every_filter(monkeypatch):
    calls = []
    real = selection_module.load_forecastbench

    def spy(**kwargs):
        calls.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(selection_module, "load_forecastbench", spy)
    r = make([SMOL], sources=["polymarket", "manifold"], forecast_date_to=dt.date(2026, 2, 1), sample_n=5, seed=7,
             one_per_source_question=False)
    qs = r.selection.questions()
    assert calls == [{"sources": ["polymarket", "manifold"], "question_type": "market",
                      "forecast_date_from": dt.date(2024, 12, 1), "forecast_date_to": dt.date(2026, 2, 1),
                      "scheduled_close_to": SNAPSHOT, "one_per_source_question": False, "sample_n": 5, "seed": 7}]
    assert len(qs) == 5 and all(q.source in ("polymarket", "manifold") for q in qs)
    assert all(dt.date(2024, 12, 1) <= q.forecast_date <= dt.date(2026, 2, 1) for q in qs)
    assert all(q.scheduled_close_date <= dt.date(2026, 8, 20) for q in qs)


def test_an_unknown_cutoff_stops_selection_before_anything_is_written(tmp_path):
    with pytest.raises(DataValidationError, match="training cutoff unknown for"):
        make([MYSTERY]).selection.questions()
