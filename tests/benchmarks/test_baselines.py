"""Baselines (crowd, superforecaster median, leak-free base rate, 0.5) and the model-cutoff table.

Reference figures from agent_tools/data/forecastbench/DATA_CARD.md; Brier via scikit-learn.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss

from agent_schemas import DataValidationError, Question
from benchmarks.protocol.baselines import BASELINES, base_rate_reference, compute_baselines
from benchmarks.protocol.model_cutoffs import MODEL_CUTOFFS, after_cutoff_mask, lookup_model, training_cutoff
from benchmarks.questions import load_forecastbench


def _q(qid: str, source: str, fdate: str, rdate: str | None = None, outcome: int | None = None, **kw) -> Question:
    return Question(id=qid, text=f"Question {qid}?", forecast_date=fdate, resolution_date=rdate, outcome=outcome,
                    source=source, source_question_id=kw.pop("sqid", qid), **kw)


@pytest.fixture(scope="module")
def all_questions() -> list[Question]:
    return load_forecastbench()


def _brier(df, method):
    sub = df[(df["method"] == method) & df["available"]]
    return brier_score_loss(sub["y"], sub["p_yes"]), len(sub)


# ---------------------------------------------------------------- shape and simple baselines


def test_baseline_names_and_frame_layout():
    assert BASELINES == ("crowd", "superforecaster_median", "base_rate", "always_0.5")
    qs = [_q("a", "fred", "2025-01-10", "2025-02-01", 1, crowd_p_yes=0.3), _q("b", "fred", "2025-01-10", "2025-02-01", 0)]
    df = compute_baselines(qs, reference_questions=[])
    assert list(df.columns) == ["question_id", "method", "p_yes", "available", "detail", "n_reference"]
    assert df.shape == (8, 6)
    assert df["question_id"].tolist() == ["a"] * 4 + ["b"] * 4
    assert df["method"].tolist() == list(BASELINES) * 2
    crowd = df[df["method"] == "crowd"]
    assert crowd["p_yes"].iloc[0] == 0.3 and bool(crowd["available"].iloc[0])
    assert np.isnan(crowd["p_yes"].iloc[1]) and not crowd["available"].iloc[1]
    assert crowd["detail"].iloc[1] == "no crowd probability for this question"
    half = df[df["method"] == "always_0.5"]
    assert (half["p_yes"] == 0.5).all() and half["available"].all()
    sf = df[df["method"] == "superforecaster_median"]
    assert sf["p_yes"].isna().all() and not sf["available"].any()


def test_methods_subset_and_unknown_method():
    qs = [_q("a", "fred", "2025-01-10")]
    df = compute_baselines(qs, reference_questions=[], methods=["always_0.5"])
    assert df["method"].tolist() == ["always_0.5"] and df["p_yes"].tolist() == [0.5]
    with pytest.raises(DataValidationError, match="unknown baseline.*'climatology'.*valid baselines: crowd"):
        compute_baselines(qs, methods=["climatology"])
    with pytest.raises(DataValidationError, match="min_reference"):
        compute_baselines(qs, min_reference=0)


def test_reference_figures_on_bundled_data(all_questions):
    poly = [q for q in all_questions if q.source == "polymarket"]
    df = compute_baselines(poly, methods=["crowd", "always_0.5"])
    df["y"] = df["question_id"].map({q.id: q.outcome for q in poly})
    brier, n = _brier(df, "crowd")
    assert n == 1020 and brier == pytest.approx(0.082, abs=5e-4)
    assert _brier(df, "always_0.5") == (pytest.approx(0.25), 1020)

    r1 = [q for q in all_questions if q.round == "2024-07-21" and q.question_type == "market"]
    df = compute_baselines(r1, methods=["superforecaster_median", "crowd"])
    df["y"] = df["question_id"].map({q.id: q.outcome for q in r1})
    assert _brier(df, "superforecaster_median") == (pytest.approx(0.083, abs=5e-4), 57)
    assert _brier(df, "crowd") == (pytest.approx(0.129, abs=5e-4), 57)
    sf = df[df["method"] == "superforecaster_median"]
    assert (sf["n_reference"] >= 1).all() and sf["detail"].str.contains("superforecasters").all()


# ---------------------------------------------------------------- base rate: hand-computed


def test_base_rate_hand_computed_with_fallbacks():
    ref = [
        _q("r1", "a", "2024-12-01", "2025-01-01", 1),
        _q("r2", "a", "2024-12-01", "2025-01-05", 0),
        _q("r2-again", "a", "2024-12-15", "2025-01-05", 0, sqid="r2"),  # same event in a later round: counted once
        _q("r3", "a", "2024-12-01", "2025-01-10", 1),  # resolves ON the forecast date below: not yet known
        _q("r4", "b", "2024-12-01", "2025-01-02", 1),
        _q("r5", "b", "2024-12-01", "2025-02-01", 0),  # after every forecast date below
        _q("open", "a", "2024-12-01", "2025-01-03", None),  # unresolved: ignored
    ]
    qs = [
        _q("qa", "a", "2025-01-10"),  # source a: r1 (1), r2 (0) -> 1/2
        _q("qc", "c", "2025-01-10"),  # no source c history -> pooled r1, r2, r4 -> 2/3
        _q("q-early", "a", "2025-01-01"),  # nothing resolved before 2025-01-01 -> NaN
    ]
    df = compute_baselines(qs, reference_questions=ref, methods=["base_rate"], min_reference=1)
    assert df["p_yes"].iloc[0] == pytest.approx(1 / 2) and df["n_reference"].iloc[0] == 2
    assert df["detail"].iloc[0] == "yes-rate of 2 a outcomes resolved before 2025-01-10"
    assert df["p_yes"].iloc[1] == pytest.approx(2 / 3) and df["n_reference"].iloc[1] == 3
    assert df["detail"].iloc[1].startswith("pooled yes-rate of 3 outcomes (all sources) resolved before 2025-01-10")
    assert np.isnan(df["p_yes"].iloc[2]) and not df["available"].iloc[2]
    assert df["detail"].iloc[2] == "no base rate: only 0 outcomes resolved before 2025-01-01 (< 1)"
    # min_reference=3: source a has only 2 -> pooled 2/3 (r1, r2, r4)
    df3 = compute_baselines(qs[:1], reference_questions=ref, methods=["base_rate"], min_reference=3)
    assert df3["p_yes"].iloc[0] == pytest.approx(2 / 3) and "only 2 a outcomes known (< 3)" in df3["detail"].iloc[0]


def test_base_rate_reference_deduplicates_events(all_questions):
    ref = base_rate_reference()
    assert not ref.duplicated(["source", "event", "resolution_date"]).any()
    assert ref["resolution_date"].is_monotonic_increasing
    frame_ref = base_rate_reference(all_questions)
    assert len(frame_ref) == len(ref) < 18021


# ---------------------------------------------------------------- base rate: leak-free on real data


def test_base_rate_never_uses_an_outcome_resolved_on_or_after_the_forecast_date(all_questions):
    """Flip every outcome that resolves on or after a round's forecast date: that round's base rates must not move."""
    rng = np.random.default_rng(0)
    rounds = ["2024-12-08", "2025-10-26", "2026-01-04", "2026-05-10", "2026-08-02"]
    for rnd in rounds:
        cutoff = dt.date.fromisoformat(rnd)
        targets = [q for q in all_questions if q.round == rnd]
        targets = [targets[i] for i in rng.choice(len(targets), size=min(60, len(targets)), replace=False)]
        flipped = [
            q.model_copy(update={"outcome": 1 - q.outcome}) if q.resolution_date >= cutoff else q for q in all_questions
        ]
        n_flipped = sum(q.resolution_date >= cutoff for q in all_questions)
        assert n_flipped > 0
        honest = compute_baselines(targets, reference_questions=all_questions, methods=["base_rate"])
        tampered = compute_baselines(targets, reference_questions=flipped, methods=["base_rate"])
        np.testing.assert_array_equal(honest["p_yes"].to_numpy(), tampered["p_yes"].to_numpy())
        np.testing.assert_array_equal(honest["n_reference"].to_numpy(), tampered["n_reference"].to_numpy())
        assert honest["available"].all()
        # and the history is not empty: flipping outcomes resolved BEFORE the cutoff does move the rates
        flipped_past = [
            q.model_copy(update={"outcome": 1 - q.outcome}) if q.resolution_date < cutoff else q for q in all_questions
        ]
        moved = compute_baselines(targets, reference_questions=flipped_past, methods=["base_rate"])
        assert not np.allclose(honest["p_yes"].to_numpy(), moved["p_yes"].to_numpy())


def test_base_rate_matches_brute_force_oracle(all_questions):
    rng = np.random.default_rng(1)
    later = [q for q in all_questions if q.round != "2024-07-21"]
    targets = [later[i] for i in rng.choice(len(later), size=25, replace=False)]
    df = compute_baselines(targets, methods=["base_rate"])  # default reference = whole bundled table
    assert df["p_yes"].tolist() == compute_baselines(targets, all_questions, methods=["base_rate"])["p_yes"].tolist()
    for q, p, n in zip(targets, df["p_yes"], df["n_reference"]):
        events = {}
        for r in all_questions:
            if r.source == q.source and r.resolution_date < q.forecast_date:
                events[(r.source_question_id, r.resolution_date)] = r.outcome
        assert len(events) >= 10, q.id
        assert n == len(events)
        assert p == pytest.approx(sum(events.values()) / len(events))


def test_first_round_has_no_base_rate(all_questions):
    first = [q for q in all_questions if q.round == "2024-07-21"][:5]
    df = compute_baselines(first, methods=["base_rate"])
    assert not df["available"].any() and df["p_yes"].isna().all()
    assert df["detail"].str.startswith("no base rate: only 0 outcomes resolved before 2024-07-21").all()


# ---------------------------------------------------------------- model cutoffs


@pytest.mark.parametrize("spec, expected", [
    ("anthropic/claude-sonnet-4-5-20250929", dt.date(2025, 7, 31)),
    ("claude-sonnet-4.5", dt.date(2025, 7, 31)),
    ("anthropic/claude-haiku-4-5", dt.date(2025, 7, 31)),
    ("anthropic/claude-opus-4-1-20250805", dt.date(2025, 3, 31)),
    ("anthropic/claude-opus-4-20250514", dt.date(2025, 3, 31)),
    ("anthropic/claude-opus-4-5", dt.date(2025, 8, 31)),
    ("openai/gpt-4.1", dt.date(2024, 6, 30)),
    ("openai/gpt-4.1-mini", dt.date(2024, 6, 30)),
    ("openai/gpt-4o-2024-08-06", dt.date(2023, 10, 31)),
    ("OpenAI/GPT-4o-mini", dt.date(2023, 10, 31)),
    ("openai/o3", dt.date(2024, 6, 30)),
    ("openai/o3-mini", dt.date(2023, 10, 31)),
    ("openai/o4-mini", dt.date(2024, 6, 30)),
    ("local/smollm2", dt.date(2024, 11, 30)),
    ("openai-compatible/smollm2-135m-instruct@http://127.0.0.1:8080/v1", dt.date(2024, 11, 30)),
    ("anthropic/claude-opus-4-6", None),  # a newer minor version is not silently given Opus 4's date
    ("anthropic/claude-sonnet-4-6", dt.date(2026, 2, 28)),  # upper bound: its release month
    ("openai/chatgpt-4o-latest", None),  # moving aliases: the cutoff moves with the alias
    ("anthropic/claude-3-5-sonnet-latest", None),
    ("openai-compatible/gpt-4o-latest@http://127.0.0.1:8080/v1", None),
    ("openai-compatible/qwen2.5@http://127.0.0.1:8080/v1", None),
    ("scripted", None),
])
def test_training_cutoff_lookup(spec, expected):
    assert training_cutoff(spec) == expected


def test_lookup_prefers_the_most_specific_name():
    assert lookup_model("openai/gpt-4o-mini").name == "GPT-4o mini"
    assert lookup_model("openai/gpt-4o").name == "GPT-4o"
    assert lookup_model("openai/o1-mini").name == "o1-mini"
    assert lookup_model("local/smollm2").name == "SmolLM2-135M-Instruct"


def test_cutoff_table_entries_are_documented():
    assert {"Claude Sonnet 4.5", "Claude Haiku 4.5", "Claude Opus 4.1", "GPT-4.1", "GPT-4.1 mini", "GPT-4o",
            "GPT-4o mini", "o3", "o4-mini", "SmolLM2-135M-Instruct"} <= {e.name for e in MODEL_CUTOFFS}
    for e in MODEL_CUTOFFS:
        assert e.source and e.patterns and dt.date(2026, 11, 30) <= e.as_of <= dt.date(2026, 12, 1)
        assert e.cutoff >= (e.reliable_knowledge_cutoff or dt.date.min)
        if not e.verified:
            assert "NOT verified" in e.source or "Upper bound" in e.note, e.name
    sonnet = lookup_model("claude-sonnet-4-5")
    assert sonnet.reliable_knowledge_cutoff == dt.date(2025, 1, 31)


def test_after_cutoff_mask_on_bundled_rounds(all_questions):
    smol = after_cutoff_mask(all_questions, "local/smollm2")
    assert len(smol) == 18021
    assert sum(not m for m in smol) == 578  # only the 2024-07-21 round predates 2024-11-30
    sonnet = after_cutoff_mask(all_questions, "anthropic/claude-sonnet-4-5")
    assert sum(sonnet) == 18021 - 578 - 122
    assert all(m == (q.forecast_date > dt.date(2025, 7, 31)) for q, m in zip(all_questions, sonnet))


def test_after_cutoff_mask_unknown_model_and_override():
    qs = [_q("a", "x", "2025-01-01"), _q("b", "x", "2025-03-01")]
    with pytest.raises(DataValidationError, match="no known training cutoff for model 'mystery/model-7'.*Claude Sonnet 4.5"):
        after_cutoff_mask(qs, "mystery/model-7")
    assert after_cutoff_mask(qs, "mystery/model-7", cutoff=dt.date(2025, 1, 31)) == [False, True]
    assert after_cutoff_mask(qs, "openai/gpt-4o") == [True, True]
