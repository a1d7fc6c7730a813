"""rank_methods at its bounds (issue 18): who is ranked, on which questions, in which order, with which columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchmarks import scoring
from benchmarks.leaderboard import MIN_COVERAGE, rank_methods


def frame(answers: dict[str, dict[str, float]], outcomes: dict[str, int], clusters: dict[str, str] | None = None) -> pd.DataFrame:
    rows = [{"label": m, "question_id": qid, "p_yes": p, "outcome": outcomes[qid], "cluster": (clusters or {}).get(qid, qid)}
            for m, ps in answers.items() for qid, p in ps.items()]
    return pd.DataFrame(rows)


OUT = {f"q{i}": i % 2 for i in range(5)}


def test_min_coverage_is_documented_and_validated():
    assert MIN_COVERAGE == 0.8
    df = frame({"a": {"q0": 0.5}}, OUT)
    for bad in (0, -0.1, 1.01):
        with pytest.raises(ValueError, match=rf"^min_coverage must be in \(0, 1\], got {bad}$"):
            rank_methods(df, min_coverage=bad)
    assert bool(rank_methods(df, baseline=None, min_coverage=1.0, n_resamples=10)["ranked"].iloc[0])


def test_a_method_at_exactly_the_coverage_bound_is_ranked():
    full = {q: 0.5 for q in OUT}
    four = {q: 0.5 for q in list(OUT)[:4]}  # 4 of 5 = 0.8
    three = {q: 0.5 for q in list(OUT)[:3]}  # 0.6
    t = rank_methods(frame({"full": full, "four": four, "three": three}, OUT), baseline=None, n_resamples=10).set_index("label")
    assert t["ranked"].to_dict() == {"full": True, "four": True, "three": False}
    assert t["coverage"].to_dict() == {"full": 1.0, "four": 0.8, "three": 0.6}
    assert t["n_answered"].to_dict() == {"full": 5, "four": 4, "three": 3} and t["n_answered"].dtype == np.int64
    assert t.loc["full", "n"] == t.loc["four", "n"] == 4 and t.loc["three", "n"] == 3
    stricter = rank_methods(frame({"full": full, "four": four}, OUT), baseline=None, min_coverage=0.81, n_resamples=10)
    assert stricter.set_index("label")["ranked"].to_dict() == {"full": True, "four": False}


def test_ranked_rows_come_first_by_brier_with_ranks_and_unranked_after_by_their_own_brier():
    answers = {
        "good": {q: (0.9 if o else 0.1) for q, o in OUT.items()},  # Brier 0.01
        "fair": {q: (0.6 if o else 0.4) for q, o in OUT.items()},  # 0.16
        "coin": {q: 0.5 for q in OUT},  # 0.25
        "lucky": {"q0": 0.0, "q1": 1.0},  # 0.0 on 2 of 5: unranked
        "poor": {"q0": 0.7, "q1": 0.3, "q2": 0.6},  # unranked: 0.49, 0.49, 0.36 -> 0.4467
    }
    t = rank_methods(frame(answers, OUT), baseline="coin", n_resamples=20)
    assert list(t["label"]) == ["good", "fair", "coin", "lucky", "poor"]
    assert list(t["ranked"]) == [True, True, True, False, False]
    assert t["rank"].dtype == "Int64" and list(t["rank"][:3]) == [1, 2, 3] and t["rank"][3:].isna().all()
    assert list(t["brier"]) == pytest.approx([0.01, 0.16, 0.25, 0.0, (0.49 + 0.49 + 0.36) / 3])
    assert list(t["delta_brier_vs_baseline"]) == pytest.approx([-0.24, -0.09, 0.0, -0.25, (0.49 + 0.49 + 0.36) / 3 - 0.25])
    assert list(t["too_small_to_rank"]) == [True, True, True, False, False]  # 5 clusters < 10
    assert list(t.columns[:2]) == ["label", "n"] and {"coverage", "n_answered", "interval_note"} <= set(t.columns)


def test_enough_clusters_make_a_ranking_with_intervals():
    outcomes = {f"q{i}": i % 2 for i in range(20)}
    answers = {"a": {q: (0.7 if o else 0.3) for q, o in outcomes.items()}, "b": {q: 0.5 for q in outcomes}}
    t = rank_methods(frame(answers, outcomes), baseline="b", n_resamples=200, seed=3)
    assert not t["too_small_to_rank"].any() and list(t["label"]) == ["a", "b"]
    direct = scoring.score_table(frame(answers, outcomes), method_col="label", baseline="b", n_resamples=200, seed=3)
    assert t.set_index("label").loc["a", "brier_ci_low"] == direct.set_index("label").loc["a", "brier_ci_low"]
    fewer = rank_methods(frame(answers, outcomes), baseline="b", n_resamples=200, seed=3, min_clusters=21)
    assert fewer["too_small_to_rank"].all() and fewer["brier_ci_low"].isna().all()


def test_an_unranked_baseline_still_gives_the_others_a_paired_difference():
    answers = {"all": {q: 0.5 for q in OUT}, "base": {"q0": 0.4, "q1": 0.6}}
    t = rank_methods(frame(answers, OUT), baseline="base", n_resamples=10).set_index("label")
    assert t.loc["all", "ranked"] and not t.loc["base", "ranked"]
    assert np.isnan(t.loc["all", "delta_brier_vs_baseline"])  # the baseline is not among the ranked
    assert t.loc["base", "delta_brier_vs_baseline"] == 0.0
    only_ranked_base = rank_methods(frame({"all": {q: 0.5 for q in OUT}, "few": {"q0": 0.0}}, OUT), baseline="all",
                                    n_resamples=10).set_index("label")
    assert only_ranked_base.loc["few", "delta_brier_vs_baseline"] == pytest.approx(0.0 - 0.25)  # paired on q0
    assert list(only_ranked_base.index) == ["all", "few"]
    no_base = rank_methods(frame({"all": {q: 0.5 for q in OUT}, "few": {"q0": 0.0}}, OUT), baseline="gone", n_resamples=10)
    assert no_base["delta_brier_vs_baseline"].isna().all()


def test_other_column_names_and_no_rows():
    df = frame({"m": {q: 0.5 for q in OUT}}, OUT).rename(columns={"label": "system", "question_id": "item"})
    t = rank_methods(df, method_col="system", question_col="item", baseline=None, n_resamples=10)
    assert list(t["system"]) == ["m"] and t.loc[0, "n"] == 5 and t.loc[0, "n_answered"] == 5
    empty = rank_methods(frame({}, OUT).reindex(columns=["label", "question_id", "p_yes", "outcome", "cluster"]), baseline=None)
    assert empty.empty
