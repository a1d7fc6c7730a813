"""Question loading: the bundled ForecastBench subset, user files, ForecastBench JSON.

Reference figures come from agent_tools/data/forecastbench/DATA_CARD.md; Brier scores use scikit-learn's
brier_score_loss as the oracle.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import brier_score_loss

from agent_schemas import DataValidationError, Question
from benchmarks.questions import (
    QuestionList,
    forecastbench_frame,
    load_forecastbench,
    load_forecastbench_json,
    load_questions_file,
    superforecaster_medians,
)

from tests.benchmarks.forecastbench_round import write_round

FIXTURES = Path(__file__).parent / "fixtures"

# DATA_CARD.md "Counts" table: rows, unique questions, yes-rate per source.
CARD_COUNTS = {
    "acled": (3260, 921, 0.102), "dbnomics": (3117, 53, 0.642), "fred": (3223, 164, 0.524),
    "wikipedia": (3148, 325, 0.243), "yfinance": (3225, 464, 0.560), "polymarket": (1020, 765, 0.267),
    "manifold": (537, 244, 0.354), "metaculus": (309, 138, 0.294), "infer": (182, 33, 0.154),
}


@pytest.fixture(scope="module")
def all_questions() -> list[Question]:
    return load_forecastbench()


# ---------------------------------------------------------------- bundled data: counts and figures


def test_bundled_counts_match_data_card(all_questions):
    assert len(all_questions) == 18021
    assert len({q.id for q in all_questions}) == 18021
    by_source = Counter(q.source for q in all_questions)
    for source, (rows, unique, yes_rate) in CARD_COUNTS.items():
        assert by_source[source] == rows, source
        qs = [q for q in all_questions if q.source == source]
        assert len({q.source_question_id for q in qs}) == unique, source
        assert np.mean([q.outcome for q in qs]) == pytest.approx(yes_rate, abs=5e-4), source
    assert np.mean([q.outcome for q in all_questions]) == pytest.approx(0.398, abs=5e-4)
    assert len({q.round for q in all_questions}) == 23


def test_market_rows_have_crowd_probability_dataset_rows_do_not(all_questions):
    market = [q for q in all_questions if q.question_type == "market"]
    dataset = [q for q in all_questions if q.question_type == "dataset"]
    assert len(market) == 2048 and len(dataset) == 18021 - 2048
    assert all(q.crowd_p_yes is not None and 0.0 <= q.crowd_p_yes <= 1.0 for q in market)
    assert all(q.crowd_p_yes is None for q in dataset)
    assert len(load_forecastbench(require_crowd=True)) == 2048
    assert len(load_forecastbench(sources="polymarket")) == 1020


@pytest.mark.parametrize("source, expected", [("polymarket", 0.082), ("manifold", 0.086), ("metaculus", 0.139), ("infer", 0.079)])
def test_crowd_brier_per_market_source_matches_data_card(source, expected):
    qs = load_forecastbench(sources=source)
    y = [q.outcome for q in qs]
    p = [q.crowd_p_yes for q in qs]
    assert brier_score_loss(y, p) == pytest.approx(expected, abs=5e-4)


def test_superforecaster_median_beats_crowd_on_2024_07_21_market_items():
    med = superforecaster_medians()
    assert len(med) == 578
    assert all(0.0 <= v <= 1.0 for v in med.values())
    qs = load_forecastbench(rounds="2024-07-21", question_type="market")
    assert len(qs) == 57
    assert all(q.id in med for q in qs)
    y = [q.outcome for q in qs]
    assert brier_score_loss(y, [med[q.id] for q in qs]) == pytest.approx(0.083, abs=5e-4)
    assert brier_score_loss(y, [q.crowd_p_yes for q in qs]) == pytest.approx(0.129, abs=5e-4)


def test_field_mapping_of_one_known_row():
    (q,) = [x for x in load_forecastbench(sources="infer", rounds="2024-07-21") if x.source_question_id == "1285"]
    assert q.id == "fb|2024-07-21|infer|1285|2025-01-01"
    assert q.text.startswith("Will a JCPOA participant country begin the process")
    assert q.forecast_date == dt.date(2024, 7, 21) and q.resolution_date == dt.date(2025, 1, 1)
    assert q.horizon_days == 164 and q.outcome == 0
    assert q.crowd_p_yes == pytest.approx(0.0186)
    assert q.question_type == "market" and q.round == "2024-07-21"
    assert q.url == "https://www.infer-pub.com/questions/1285"
    assert q.resolution_criteria == "Resolves to the outcome of the question found at https://www.infer-pub.com/questions/1285."
    assert q.metadata["freeze_datetime"] == "2024-07-12T00:00:00+00:00"
    assert q.freeze_date() == dt.date(2024, 7, 12)  # 9 days before the forecast date
    assert q.model_copy(update={"metadata": {}}).freeze_date() is None
    late = q.model_copy(update={"metadata": {"freeze_datetime": "2024-07-22T00:00:00+00:00"}})
    assert late.freeze_date() is None  # after the forecast date: not knowable
    assert q.metadata["freeze_value_explanation"] == "The crowd forecast."
    assert q.metadata["question_set"] == "2024-07-21-human.json"


def test_null_background_becomes_empty_string_and_market_criteria_kept(all_questions):
    frame = forecastbench_frame()
    null_bg = set(frame.loc[frame["background"].isna(), "qid"])
    assert len(null_bg) == 93
    assert all(q.background == "" for q in all_questions if q.id in null_bg)
    with_market_crit = [q for q in all_questions if "market_resolution_criteria" in q.metadata]
    assert len(with_market_crit) == 350


# ---------------------------------------------------------------- filters and sampling


def test_filters_are_inclusive_and_combine():
    r = load_forecastbench(rounds="2024-12-08")
    assert len(r) == 122 and {q.horizon_days for q in r} == {7}  # DATA_CARD caveat 3
    assert len(load_forecastbench(rounds=["2024-07-21", "2024-12-08"])) == 578 + 122
    mid = load_forecastbench(min_horizon_days=30, max_horizon_days=90)
    assert mid and all(30 <= q.horizon_days <= 90 for q in mid)
    assert {30, 90} <= {q.horizon_days for q in mid}
    dated = load_forecastbench(forecast_date_from="2026-07-19", forecast_date_to=dt.date(2026, 8, 2))
    assert len(dated) == 288 + 263
    assert {q.forecast_date for q in dated} == {dt.date(2026, 7, 19), dt.date(2026, 8, 2)}
    both = load_forecastbench(sources=["fred", "polymarket"], question_type="market")
    assert len(both) == 1020 and {q.source for q in both} == {"polymarket"}
    assert load_forecastbench(sources="fred", question_type="market") == []


def test_one_per_source_question_keeps_earliest_round_then_shortest_horizon(all_questions):
    one = load_forecastbench(one_per_source_question=True)
    assert len(one) == sum(u for _, u, _ in CARD_COUNTS.values()) == 3107
    assert len({(q.source, q.source_question_id) for q in one}) == 3107
    earliest: dict[tuple[str, str], tuple[dt.date, dt.date]] = {}
    for q in all_questions:
        key = (q.source, q.source_question_id)
        earliest[key] = min(earliest.get(key, (dt.date.max, dt.date.max)), (q.forecast_date, q.resolution_date))
    for q in one:
        assert (q.forecast_date, q.resolution_date) == earliest[(q.source, q.source_question_id)]
    assert [q.id for q in load_forecastbench(one_per_source_question=True)] == [q.id for q in one]


def test_seeded_sample_is_reproducible_and_order_independent():
    a = load_forecastbench(sources=["fred", "polymarket"], sample_n=50, seed=7)
    b = load_forecastbench(sources=["polymarket", "fred"], sample_n=50, seed=7)
    c = load_forecastbench(sources=("polymarket", "fred"), sample_n=50, seed=8)
    assert len(a) == 50 and [q.id for q in a] == [q.id for q in b]
    assert {q.id for q in a} != {q.id for q in c}
    pool = {q.id for q in load_forecastbench(sources=["fred", "polymarket"])}
    assert {q.id for q in a} <= pool
    # the same filtered set reached by different filters gives the same sample
    via_round = load_forecastbench(rounds="2026-08-02", sample_n=20, seed=3)
    via_dates = load_forecastbench(forecast_date_from="2026-08-01", sample_n=20, seed=3)
    assert [q.id for q in via_round] == [q.id for q in via_dates]


def test_sample_larger_than_pool_returns_everything():
    assert len(load_forecastbench(rounds="2024-12-08", sample_n=1000)) == 122


@pytest.mark.parametrize("kwargs, field, needle", [
    ({"sources": ["polymarket", "kalshi"]}, "sources", "valid sources: acled, dbnomics, fred, infer, manifold, metaculus, polymarket"),
    ({"rounds": "2025-01-01"}, "rounds", "valid rounds: 2024-07-21, 2024-12-08"),
    ({"question_type": "markets"}, "question_type", "'markets'"),
    ({"sample_n": 0}, "sample_n", "positive integer"),
    ({"min_horizon_days": -1}, "min_horizon_days", "non-negative"),
    ({"forecast_date_from": "26/10/2025"}, "forecast_date_from", "26/10/2025"),
])
def test_bad_arguments_raise_typed_errors(kwargs, field, needle):
    with pytest.raises(DataValidationError) as err:
        load_forecastbench(**kwargs)
    assert err.value.field == field
    assert needle in str(err.value)


def test_unknown_source_error_names_the_bad_value():
    with pytest.raises(DataValidationError, match="kalshi") as err:
        load_forecastbench(sources="kalshi")
    assert err.value.value == "kalshi"


# ---------------------------------------------------------------- user question files


def _check_sample(qs: list[Question]) -> None:
    assert [q.id for q in qs] == ["q-001", "q-002", "q-003", "q-004"]
    q1, q2, q3, q4 = qs
    assert q1.text == "Will the ECB cut its deposit rate at its next meeting?"
    assert q1.background == "Rate was 2.00%, unchanged since June."
    assert q1.resolution_criteria.startswith("Resolves Yes if the ECB")
    assert q1.forecast_date == dt.date(2025, 10, 1) and q1.resolution_date == dt.date(2025, 10, 30)
    assert q1.horizon_days == 29 and q1.outcome == 0 and q1.crowd_p_yes == pytest.approx(0.12)
    assert (q1.source, q1.source_question_id, q1.question_type, q1.round) == ("manifold", "ecb-cut-oct", "market", "2025-10-01")
    assert q1.url == "https://example.org/q/1" and q1.metadata == {"analyst": "alice"}
    assert q2.text == "Will daily COVID cases in country X exceed 1,000 on 2025-11-15?"
    assert q2.outcome == 1 and q2.crowd_p_yes is None and q2.question_type == "dataset" and q2.horizon_days == 45
    assert q3.outcome is None and q3.crowd_p_yes == 0.5 and q3.round is None and q3.metadata == {"analyst": "bob"}
    assert q4.forecast_date == dt.date(2025, 10, 1)  # ISO datetime cut to its date
    assert q4.resolution_date is None and q4.horizon_days is None and q4.outcome is None
    assert (q4.source, q4.question_type, q4.url, q4.background) == ("unknown", "other", None, "")


def test_load_csv_sample():
    qs = load_questions_file(FIXTURES / "questions_sample.csv")
    assert isinstance(qs, QuestionList)
    _check_sample(qs)


def test_load_jsonl_sample_equals_csv():
    qs = load_questions_file(FIXTURES / "questions_sample.jsonl")
    _check_sample(qs)
    csv_qs = load_questions_file(FIXTURES / "questions_sample.csv")
    assert [q.model_dump() for q in qs] == [q.model_dump() for q in csv_qs]


def test_load_parquet_equals_csv(tmp_path):
    df = pd.read_csv(FIXTURES / "questions_sample.csv")  # NaN for empty cells, float outcome / crowd columns
    path = tmp_path / "qs.parquet"
    df.to_parquet(path)
    qs = load_questions_file(path)
    csv_qs = load_questions_file(FIXTURES / "questions_sample.csv")
    assert [q.model_dump() for q in qs] == [q.model_dump() for q in csv_qs]


GOOD_HEADER = "id,question,forecast_date,resolution_date,outcome,crowd_p_yes\n"
GOOD_ROW = "a,Will A happen?,2025-01-01,2025-02-01,1,0.3\n"


@pytest.mark.parametrize("bad_row, column, value, needle", [
    ("b,Will B happen?,2025-13-01,,,\n", "forecast_date", "2025-13-01", "not an ISO date"),
    ("b,Will B happen?,2025-01-01,soon,,\n", "resolution_date", "soon", "not an ISO date"),
    ("b,Will B happen?,2025-01-01,2025-02-01,2,\n", "outcome", "2", "outcome must be 0 or 1"),
    ("b,Will B happen?,2025-01-01,2025-02-01,maybe,\n", "outcome", "maybe", "outcome must be 0 or 1"),
    ("b,Will B happen?,2025-01-01,2025-02-01,1,1.5\n", "crowd_p_yes", "1.5", "[0, 1]"),
    ("b,Will B happen?,2025-01-01,2025-02-01,1,-0.1\n", "crowd_p_yes", "-0.1", "[0, 1]"),
    ("b,Will B happen?,2025-01-01,2025-02-01,1,high\n", "crowd_p_yes", "high", "not a number"),
    ("a,Will A happen again?,2025-01-01,,,\n", "id", "a", "duplicate id (first used in data row 1 (line 2))"),
    ("b,,2025-01-01,,,\n", "question", "", "empty"),
    ("b,Will B happen?,2025-03-01,2025-02-01,,\n", "resolution_date", "2025-02-01", "before forecast_date 2025-03-01"),
])
def test_bad_csv_row_error_names_file_row_column_value(tmp_path, bad_row, column, value, needle):
    path = tmp_path / "bad.csv"
    path.write_text(GOOD_HEADER + GOOD_ROW + bad_row)
    with pytest.raises(DataValidationError) as err:
        load_questions_file(path)
    e = err.value
    msg = str(e)
    assert (e.row, e.field, e.value) == (1, column, value)
    # the row as an editor shows it: the second data row is line 3 (line 1 is the header)
    assert str(path) in msg and "data row 2 (line 3)" in msg and repr(column) in msg and repr(value) in msg and needle in msg


def test_missing_required_column(tmp_path):
    path = tmp_path / "nodate.csv"
    path.write_text("id,question\na,Will A happen?\n")
    with pytest.raises(DataValidationError, match="missing required column 'forecast_date'") as err:
        load_questions_file(path)
    assert err.value.field == "forecast_date" and err.value.row is None and str(path) in str(err.value)


def test_jsonl_errors_name_the_row(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "a", "question": "Q?", "forecast_date": "2025-01-01"}\n\n{"id": "b", "question": "Q2?"}\n')
    with pytest.raises(DataValidationError) as err:
        load_questions_file(path)
    assert (err.value.row, err.value.field) == (1, "forecast_date")
    path.write_text('{"id": "a", "question": "Q?", "forecast_date": "2025-01-01"}\n{"id": "b",\n')
    with pytest.raises(DataValidationError, match=r"data row 2 \(line 2\): invalid JSON"):
        load_questions_file(path)
    path.write_text('{"id": "a", "question": "Q?", "forecast_date": "2025-01-01", "outcome": 0.5}\n')
    with pytest.raises(DataValidationError, match=r"data row 1 \(line 1\), column 'outcome': outcome must be 0 or 1 \(or yes/no, true/false\) \(value 0.5\)"):
        load_questions_file(path)


def test_bad_parquet_value(tmp_path):
    path = tmp_path / "bad.parquet"
    pd.DataFrame({"id": ["a", "b"], "question": ["A?", "B?"], "forecast_date": ["2025-01-01", "2025-01-02"],
                  "crowd_p_yes": [0.2, 3.0]}).to_parquet(path)
    with pytest.raises(DataValidationError, match=r"data row 2, column 'crowd_p_yes'.*\(value 3.0\)"):
        load_questions_file(path)


def test_unsupported_empty_and_missing_files(tmp_path):
    txt = tmp_path / "qs.txt"
    txt.write_text("hello")
    with pytest.raises(DataValidationError, match="unsupported question file type '.txt'"):
        load_questions_file(txt)
    empty = tmp_path / "empty.csv"
    empty.write_text("id,question,forecast_date\n")
    with pytest.raises(DataValidationError, match="no question rows"):
        load_questions_file(empty)
    with pytest.raises(FileNotFoundError, match="nope.csv"):
        load_questions_file(tmp_path / "nope.csv")


# ---------------------------------------------------------------- ForecastBench JSON


def test_forecastbench_json_with_resolutions():
    qs = load_forecastbench_json(FIXTURES / "fb_question_set_sample.json", FIXTURES / "fb_resolution_set_sample.json")
    assert [q.id for q in qs] == [
        "fb|2025-10-26|manifold|mf1|2025-12-31",
        "fb|2025-10-26|polymarket|0xabc|2025-11-30",
        "fb|2025-10-26|fred|T10Y2Y|2025-11-02",
        "fb|2025-10-26|fred|T10Y2Y|2025-11-25",
    ]
    assert [q.outcome for q in qs] == [1, 0, 1, 0]
    assert qs.skipped == {"combo": 2, "unresolved": 2, "not_in_question_set": 1, "resolved_on_or_before_due": 1,
                          "nonbinary": 1, "duplicate": 1}
    mf, pm, fred1, fred2 = qs
    assert mf.crowd_p_yes == 0.25 and pm.crowd_p_yes == 0.8 and fred1.crowd_p_yes is None
    assert mf.resolution_criteria == "Resolves YES if the rocket reaches orbit before 2026-01-01."  # market fallback
    assert mf.question_type == "market" and fred1.question_type == "dataset"
    assert fred1.text == "Will the sample spread be higher on 2025-11-02 than on 2025-10-26?"
    assert fred2.horizon_days == 30 and fred2.round == "2025-10-26" and fred2.source_question_id == "T10Y2Y"
    assert fred1.metadata["freeze_value_raw"] == "0.52" and fred1.metadata["question_set"] == "2025-10-26-llm.json"
    assert mf.metadata["market_info_close_datetime"] == "2025-12-31T23:59:00+00:00"


def test_forecastbench_json_include_unresolved():
    qs = load_forecastbench_json(FIXTURES / "fb_question_set_sample.json", FIXTURES / "fb_resolution_set_sample.json",
                                 include_unresolved=True)
    unresolved = [q for q in qs if q.outcome is None]
    assert [q.id for q in unresolved] == ["fb|2025-10-26|fred|T10Y2Y|2026-01-24", "fb|2025-10-26|metaculus|123|2026-03-01"]
    assert "unresolved" not in qs.skipped and len(qs) == 6


def test_forecastbench_json_question_set_only():
    qs = load_forecastbench_json(FIXTURES / "fb_question_set_sample.json")
    assert [q.id for q in qs] == [
        "fb|2025-10-26|manifold|mf1",
        "fb|2025-10-26|polymarket|0xabc",
        "fb|2025-10-26|fred|T10Y2Y|2025-11-02",
        "fb|2025-10-26|fred|T10Y2Y|2025-11-25",
        "fb|2025-10-26|fred|T10Y2Y|2026-01-24",
        "fb|2025-10-26|metaculus|123",
        "fb|2025-10-26|yfinance|AAPL|2025-11-02",
    ]
    assert all(q.outcome is None for q in qs)
    assert qs[0].resolution_date is None and qs[0].horizon_days is None
    assert qs.skipped == {"combo": 1}


def test_forecastbench_json_round_trip_reproduces_bundled_rows(tmp_path):
    """Rebuild a real round's question and resolution sets from the bundled table: the loader must give back the same questions."""
    q_path, r_path, sel = write_round(tmp_path)
    got = {q.id: q for q in load_forecastbench_json(q_path, r_path)}
    want = {q.id: q for q in load_forecastbench(rounds="2025-10-26") if q.id in set(sel["qid"])}
    assert len(want) == len(sel) >= 30 and set(got) == set(want)
    for qid, w in want.items():
        g = got[qid]
        for field in ("text", "background", "resolution_criteria", "forecast_date", "resolution_date", "outcome", "source",
                      "source_question_id", "question_type", "url", "crowd_p_yes", "round", "horizon_days"):
            assert getattr(g, field) == getattr(w, field), (qid, field)


def test_forecastbench_json_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(DataValidationError, match="bad.json: not valid JSON"):
        load_forecastbench_json(bad)
    bad.write_text(json.dumps({"forecast_due_date": "2025-10-26", "items": []}))
    with pytest.raises(DataValidationError, match="'questions'"):
        load_forecastbench_json(bad)
    bad.write_text(json.dumps({"forecast_due_date": "2025-10-26", "questions": [{"id": "x", "source": "fred"}]}))
    with pytest.raises(DataValidationError, match=r"row 0, column 'question'") as err:
        load_forecastbench_json(bad)
    assert err.value.row == 0 and err.value.field == "question"
    other_round = tmp_path / "r.json"
    other_round.write_text(json.dumps({"forecast_due_date": "2025-11-09", "resolutions": []}))
    with pytest.raises(DataValidationError, match="different round"):
        load_forecastbench_json(FIXTURES / "fb_question_set_sample.json", other_round)
    bad_date = tmp_path / "r2.json"
    bad_date.write_text(json.dumps({"forecast_due_date": "2025-10-26", "resolutions": [
        {"id": "mf1", "source": "manifold", "resolution_date": "2025-02-30", "resolved_to": 1.0, "resolved": True}]}))
    with pytest.raises(DataValidationError, match=r"row 0, column 'resolution_date'.*2025-02-30"):
        load_forecastbench_json(FIXTURES / "fb_question_set_sample.json", bad_date)
