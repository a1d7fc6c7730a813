"""The bundled numeric and multiple-choice questions: counts, nothing after the forecast date in a question, the
outcomes checked against the binary table they were derived from, hand-checked items, the loaders' filters."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pandas as pd
import pytest

from agent_schemas import DataValidationError
from agent_schemas.kinds import ChoiceSpec, NumericSpec
from agent_tools.datasets import load_forecastbench_kind_table, load_forecastbench_questions
from benchmarks.protocol import derived_questions
from benchmarks.questions import bundled_kinds
from benchmarks.questions.bundled_kinds import (
    choice_outcomes,
    load_bundled,
    load_multiple_choice_questions,
    load_numeric_questions,
    numeric_outcomes,
    sibling_groups,
)

OUTCOME_COLUMNS = {"outcome", "member_outcomes", "resolution_date"}


@pytest.fixture(scope="module")
def binary():
    return load_forecastbench_questions()


@pytest.fixture(scope="module")
def numeric():
    return load_numeric_questions()


@pytest.fixture(scope="module")
def choice():
    return load_multiple_choice_questions()


def test_counts(numeric, choice):
    assert len(numeric) == 15_603 and all(isinstance(q.spec, NumericSpec) for q in numeric)
    assert len({(q.source, q.source_question_id) for q in numeric}) == 760
    assert {q.source for q in numeric} == {"acled", "dbnomics", "fred", "wikipedia", "yfinance"}
    assert len(choice) == 25 and all(isinstance(q.spec, ChoiceSpec) for q in choice)
    assert sum(len(q.spec.options) for q in choice) == 73
    assert len(numeric_outcomes()) == 15_603 and len(choice_outcomes()) == 25


def test_question_files_hold_no_outcome():
    for kind in ("numeric", "multiple_choice"):
        questions = load_forecastbench_kind_table(kind, "questions")
        outcomes = load_forecastbench_kind_table(kind, "outcomes")
        assert not OUTCOME_COLUMNS & set(questions.columns), kind
        assert set(outcomes["qid"]) == set(questions["qid"])
    q = load_forecastbench_kind_table("numeric", "questions")
    o = load_forecastbench_kind_table("numeric", "outcomes").set_index("qid").loc[q["qid"]]
    # the only value a question states is the forecast round's: never the target round's (where they differ)
    changed = q["freeze_value"].to_numpy() != o["outcome"].to_numpy()
    assert changed.mean() > 0.9
    assert not any(str(v) in text for v, text, c in zip(o["outcome"], q["question"], changed) if c and abs(v) >= 10)


def test_numeric_dates_keep_the_outcome_after_the_forecast_date(numeric):
    for q in numeric:
        freeze = dt.date.fromisoformat(q.metadata["freeze_datetime"][:10])
        assert freeze <= q.forecast_date < q.scheduled_close_date == q.resolution_date
        assert q.horizon_days == (q.resolution_date - q.forecast_date).days > 0
        v = q.visible()
        assert v.freeze_date == freeze and v.freeze_value == q.metadata["freeze_value_raw"]
        assert "outcome" not in v.model_dump() and "resolution_date" not in v.model_dump()


def test_numeric_values_are_the_forecastbench_freeze_values(binary):
    """The oracle: every question's stated value is its forecast round's freeze value and its outcome the target
    round's, read afresh from the binary table; the target round's freeze is after the forecast date."""
    d = binary[binary["question_type"] == "dataset"].drop_duplicates(["source", "source_question_id", "round"])
    d = d.assign(value=pd.to_numeric(d["freeze_value_raw"], errors="coerce"))[
        ["source", "source_question_id", "round", "value", "freeze_datetime", "forecast_due_date"]]
    q = load_forecastbench_kind_table("numeric", "questions").merge(load_forecastbench_kind_table("numeric", "outcomes"), on="qid")
    a = q.merge(d, on=["source", "source_question_id", "round"], how="left", validate="many_to_one")
    b = q.merge(d.rename(columns={"round": "target_round"}), on=["source", "source_question_id", "target_round"],
                how="left", validate="many_to_one")
    np.testing.assert_array_equal(a["value"].to_numpy(), q["freeze_value"].to_numpy())
    np.testing.assert_array_equal(a["forecast_due_date"].to_numpy(), q["forecast_date"].to_numpy())
    np.testing.assert_array_equal(b["value"].to_numpy(), q["outcome"].to_numpy())
    assert (b["freeze_datetime"].str[:10] == q["target_date"]).all()
    assert (q["target_date"] > q["forecast_date"]).all()


def test_no_pair_of_a_series_known_to_be_stale_on_its_forecast_date(binary):
    """Dropped by what was observable: a series seen at >= 2 rounds up to the forecast round, never changing."""
    d = binary[binary["question_type"] == "dataset"].drop_duplicates(["source", "source_question_id", "round"])
    d = d.assign(value=pd.to_numeric(d["freeze_value_raw"], errors="coerce"))
    history = {k: g.sort_values("freeze_datetime")[["round", "value"]].to_numpy().tolist()
               for k, g in d.groupby(["source", "source_question_id"])}
    q = load_forecastbench_kind_table("numeric", "questions")
    for r in q.sample(2000, random_state=0).itertuples():
        rounds = history[(r.source, r.source_question_id)]
        seen = [v for rnd, v in rounds[: [x[0] for x in rounds].index(r.round) + 1]]
        assert len(seen) == r.n_observed_rounds
        assert len(seen) == 1 or len(set(seen)) > 1


def test_a_hand_checked_numeric_item(numeric):
    """AXON: 291.16 at the 2024-07-21 round's freeze (2024-07-12), 570.49 at the 2026-03-15 round's (2026-03-06).
    593 days; h = 0.1 + 0.5 sqrt(593/365) = 0.737311; range 291.16 e^-h .. 291.16 e^h (log scale, open)."""
    (q,) = [q for q in numeric if q.id == "fbnum|yfinance|AXON|2024-07-21|2026-03-06"]
    assert q.forecast_date == dt.date(2024, 7, 21) and q.resolution_date == dt.date(2026, 3, 6)
    assert q.outcome == 570.49 and q.horizon_days == 593 and q.metadata["freeze_value_raw"] == "291.16"
    h = 0.1 + 0.5 * math.sqrt(593 / 365)
    assert q.spec.lower == pytest.approx(139.2906, abs=1e-4) == pytest.approx(291.16 * math.exp(-h))
    assert q.spec.upper == pytest.approx(608.6134, abs=1e-4)
    assert q.spec.log_scale and q.spec.open_lower and q.spec.open_upper
    assert "as of 2026-03-06" in q.text and "AXON" in q.text


def test_a_hand_checked_choice_item(choice):
    (q,) = [q for q in choice if q.round == "2024-12-08"]
    assert q.spec.options == ("Inside Out 2", "Furiosa: A Mad Max Saga", "Deadpool 3")
    assert q.outcome == 0 and q.text == "Which of these will happen? Will '___' gross most in 2024?"
    # prices at freeze 0.895, 0.0015, 0.0035 (sum 0.9): renormalised
    assert q.metadata["member_prices"] == pytest.approx([0.895, 0.0015, 0.0035])
    assert q.crowd_forecast == pytest.approx([0.895 / 0.9, 0.0015 / 0.9, 0.0035 / 0.9])
    assert q.visible().crowd_forecast is None and q.visible(show_crowd=True).crowd_forecast == q.crowd_forecast


def test_sibling_groups_match_the_binary_markets(binary, choice):
    rows = binary.set_index("qid")
    groups = sibling_groups()
    assert [g.qid for g in groups] == [q.id for q in choice]
    for g, q in zip(groups, choice):
        members = rows.loc[list(g.member_qids)]
        assert members["outcome"].tolist() == [int(i == g.winner) for i in range(len(g.options))]
        assert q.outcome == g.winner and q.spec.options == g.options
        assert len(set(members["round"])) == 1 and members["round"].iloc[0] == q.round
        assert g.prices == pytest.approx(members["crowd_prob_at_freeze"].tolist())
        for option, text in zip(g.options, members["question"]):
            assert option in text


def test_filters_and_seeded_sample():
    a = load_numeric_questions(sources="fred", max_horizon_days=30, sample_n=50, seed=4)
    assert len(a) == 50 and {q.source for q in a} == {"fred"} and max(q.horizon_days for q in a) <= 30
    assert [q.id for q in a] == [q.id for q in load_numeric_questions(sources=["fred"], max_horizon_days=30, sample_n=50, seed=4)]
    assert [q.id for q in a] != [q.id for q in load_numeric_questions(sources="fred", max_horizon_days=30, sample_n=50, seed=5)]
    assert len(load_multiple_choice_questions(rounds="2026-03-01")) == 4
    with pytest.raises(DataValidationError, match="unknown source.*valid: acled"):
        load_numeric_questions(sources="polymarket")
    with pytest.raises(DataValidationError, match="sample_n"):
        load_multiple_choice_questions(sample_n=0)


def test_without_outcomes_the_outcome_files_are_never_read(monkeypatch):
    read = []
    real = bundled_kinds._table.__wrapped__
    monkeypatch.setattr(bundled_kinds, "_table", lambda kind, part: read.append(part) or real(kind, part))
    qs = load_numeric_questions(sources="wikipedia", with_outcomes=False) + load_multiple_choice_questions(with_outcomes=False)
    assert read == ["questions", "questions"]
    assert all(q.outcome is None and q.resolution_date is None and q.horizon_days is None for q in qs)


def test_the_build_is_deterministic_and_matches_the_bundled_files():
    assert derived_questions.main(["--check"]) == 0


def test_load_bundled_by_kind():
    assert [q.kind.name for q in load_bundled("numeric", sources="fred", sample_n=3)] == ["numeric"] * 3
    assert len(load_bundled("multiple_choice")) == 25
    assert {q.kind.name for q in load_bundled("binary", sources="infer")} == {"binary"}
    with pytest.raises(DataValidationError, match="no bundled questions of kind 'date'"):
        load_bundled("date")
    with pytest.raises(DataValidationError, match="bundled multiple_choice questions take no filter sources; they take rounds, sample_n"):
        load_bundled("multiple_choice", sources="polymarket")
