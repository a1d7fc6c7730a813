"""rank_methods at its bounds (issues 18, 29): who is compared, on which questions, what a missing answer is scored
as, in which order, with which columns, and when ranks are shown."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchmarks import scoring
from benchmarks.scoring.ranking import FALLBACK_P_YES, MIN_CLUSTERS_TO_RANK, MIN_COVERAGE, compare, rank_methods


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
    assert t.loc["full", "n"] == t.loc["four", "n"] == 5 and t.loc["three", "n"] == 3  # four's fifth: its fallback
    assert t["n_fallback"].to_dict() == {"full": 0, "four": 1, "three": 0}
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
    t = rank_methods(frame(answers, OUT), baseline="coin", n_resamples=20, min_clusters_to_rank=5)
    assert list(t["label"]) == ["good", "fair", "coin", "lucky", "poor"]
    assert list(t["ranked"]) == [True, True, True, False, False]
    assert t["rank"].dtype == "Int64" and list(t["rank"][:3]) == [1, 2, 3] and t["rank"][3:].isna().all()
    assert list(t["brier"]) == pytest.approx([0.01, 0.16, 0.25, 0.0, (0.49 + 0.49 + 0.36) / 3])
    assert list(t["delta_brier_vs_baseline"]) == pytest.approx([-0.24, -0.09, 0.0, -0.25, (0.49 + 0.49 + 0.36) / 3 - 0.25])
    assert not t["too_small_to_rank"].any()  # 5 clusters, 5 needed
    default = rank_methods(frame(answers, OUT), baseline="coin", n_resamples=20)
    assert list(default["too_small_to_rank"]) == [True, True, True, False, False]  # 5 clusters < 30
    assert default["rank"].isna().all() and list(default["label"]) == list(t["label"])  # listed by Brier, no ranks
    assert list(t.columns[:2]) == ["label", "n"] and {"coverage", "n_answered", "interval_note"} <= set(t.columns)


def test_enough_clusters_make_a_ranking_with_intervals():
    outcomes = {f"q{i}": i % 2 for i in range(20)}
    answers = {"a": {q: (0.55 + i / 50 if o else 0.45 - i / 50) for i, (q, o) in enumerate(outcomes.items())},
               "b": {q: 0.5 for q in outcomes}, "few": {"q0": 0.2, "q1": 0.9, "q2": 0.4}}
    t = rank_methods(frame(answers, outcomes), baseline="b", n_resamples=200, seed=3, min_clusters_to_rank=20)
    assert not t["too_small_to_rank"].any() and list(t["label"]) == ["a", "b", "few"] and list(t["rank"][:2]) == [1, 2]
    assert list(t.index) == [0, 1, 2] and "index" not in t.columns
    ranked = scoring.score_table(frame({k: answers[k] for k in ("a", "b")}, outcomes), method_col="label", baseline="b",
                                 n_resamples=200, seed=3).set_index("label")
    got = t.set_index("label")
    assert got.loc["a", ["brier_ci_low", "brier_ci_high"]].tolist() == ranked.loc["a", ["brier_ci_low", "brier_ci_high"]].tolist()
    apart = scoring.score_table(frame({k: answers[k] for k in ("b", "few")}, outcomes), method_col="label", baseline="b",
                                n_resamples=200, seed=3, min_clusters=3).set_index("label")
    few = rank_methods(frame(answers, outcomes), baseline="b", n_resamples=200, seed=3, min_clusters=3).set_index("label")
    assert few.loc["few", ["brier_ci_low", "delta_brier_ci_low"]].tolist() == apart.loc["few", ["brier_ci_low", "delta_brier_ci_low"]].tolist()
    assert not np.isnan(few.loc["few", "brier_ci_low"])  # 3 clusters, min_clusters 3: an interval
    fewer = rank_methods(frame(answers, outcomes), baseline="b", n_resamples=200, seed=3, min_clusters=21,
                         min_clusters_to_rank=21)
    assert fewer["too_small_to_rank"].iloc[:2].all() and fewer["brier_ci_low"].isna().all() and fewer["rank"].isna().all()
    by_default = rank_methods(frame(answers, outcomes), baseline="b", n_resamples=20)
    assert by_default["too_small_to_rank"].iloc[:2].all() and by_default["rank"].isna().all()  # 20 < 30
    assert not by_default["brier_ci_low"].iloc[:2].isna().any()  # intervals still show from 10 clusters


def test_ties_keep_the_order_of_first_appearance():
    outcomes = {"t0": 1, "t1": 0}
    levels = [0.9, 0.8, 0.7]  # Brier 0.01, 0.04, 0.09 on both questions
    pattern = [2, 0, 1, 1, 2, 0, 0, 2, 1, 0, 2, 1, 1, 0, 2, 2, 0, 1, 2, 0]
    answers = {f"m{i:02d}": {"t0": levels[k], "t1": 1 - levels[k]} for i, k in enumerate(pattern)}
    t = rank_methods(frame(answers, outcomes), baseline=None, n_resamples=10, min_clusters_to_rank=2)
    expected = sorted(answers, key=lambda m: (pattern[int(m[1:])], int(m[1:])))
    assert list(t["label"]) == expected and list(t["rank"]) == list(range(1, 21))
    apart = rank_methods(frame({**answers, "all": {q: 0.5 for q in OUT}}, {**outcomes, **OUT}), baseline=None, n_resamples=10)
    assert list(apart["label"]) == [*expected, "all"] and not apart["ranked"].any()  # all apart: by their own Brier


def test_the_default_baseline_is_mean():
    answers = {"mean": {q: 0.5 for q in OUT}, "sharp": {q: (0.9 if o else 0.1) for q, o in OUT.items()}}
    t = rank_methods(frame(answers, OUT), n_resamples=10).set_index("label")
    assert t.loc["sharp", "delta_brier_vs_baseline"] == pytest.approx(0.01 - 0.25)


def test_the_set_is_every_question_and_a_missing_answer_is_scored_as_the_fallback():
    four = {q: (0.9 if o else 0.1) for q, o in list(OUT.items())[1:]}  # Brier 0.01 on q1..q4; q0 missing
    full = {q: 0.3 for q in OUT}  # outcomes 0,1,0,1,0: Brier 0.09, 0.49, 0.09, 0.49, 0.09
    t = rank_methods(frame({"four": four, "full": full}, OUT), baseline="full", n_resamples=10).set_index("label")
    assert FALLBACK_P_YES == 0.5 and t["n"].to_dict() == {"four": 5, "full": 5}
    assert t.loc["four", "brier"] == pytest.approx((0.25 + 4 * 0.01) / 5)  # q0 scored at 0.5
    assert t.loc["four", "delta_brier_vs_baseline"] == pytest.approx((0.25 + 4 * 0.01) / 5 - (3 * 0.09 + 2 * 0.49) / 5)
    assert t["n_fallback"].to_dict() == {"four": 1, "full": 0}
    given = rank_methods(frame({"four": four, "full": full}, OUT), baseline="full", n_resamples=10,
                         fallbacks={("four", "q0"): 0.3}).set_index("label")
    assert given.loc["four", "brier"] == pytest.approx((0.09 + 4 * 0.01) / 5)  # the fallback given for q0
    assert rank_methods(frame({"a": full}, OUT), baseline=None, n_resamples=10)["rank"].dtype == "Int64"


def test_compare_fills_only_the_compared_methods_missing_answers():
    four = {q: 0.6 for q in list(OUT)[:4]}
    c = compare(frame({"full": {q: 0.5 for q in OUT}, "four": four, "one": {"q0": 0.9}}, OUT),
                fallbacks={("four", "q4"): 0.2})
    assert (c.compared, c.apart) == (["full", "four"], ["one"])
    filled = c.frame[c.frame["fallback"]]
    assert filled[["label", "question_id", "p_yes", "outcome", "cluster"]].values.tolist() == [["four", "q4", 0.2, 0, "q4"]]
    assert len(c.frame) == 10 and c.answered.to_dict() == {"full": 5, "four": 4, "one": 1}


def test_a_coverage_within_rounding_of_the_bound_is_ranked():
    four = {q: 0.5 for q in list(OUT)[:4]}
    t = rank_methods(frame({"full": {q: 0.5 for q in OUT}, "four": four}, OUT), baseline=None, n_resamples=10,
                     min_coverage=0.8 + 1e-12)
    assert t["ranked"].all()


def test_methods_that_each_miss_another_question_are_all_compared_on_every_question():
    outcomes = {f"q{i}": i % 2 for i in range(5)}
    answers = {f"m{k}": {q: 0.4 for j, q in enumerate(outcomes) if j != k} for k in range(5)}  # each misses another
    t = rank_methods(frame(answers, outcomes), baseline="m0", n_resamples=10)
    assert len(t) == 5 and t["ranked"].all() and t["rank"].dtype == "Int64"
    assert list(t["n"]) == [5] * 5 and list(t["n_fallback"]) == [1] * 5 and list(t.index) == list(range(5))
    assert list(t["coverage"]) == [0.8] * 5 and t["too_small_to_rank"].all() and t["rank"].isna().all()
    # each answer scores 0.16 (outcome 0) or 0.36 (outcome 1); the missed question 0.25
    brier = {f"m{k}": (sum(0.36 if o else 0.16 for j, o in enumerate(outcomes.values()) if j != k) + 0.25) / 5 for k in range(5)}
    assert t.set_index("label")["brier"].to_dict() == pytest.approx(brier)
    two = rank_methods(frame({"a": {"q0": 0.3, "q1": 0.3}, "b": {"q2": 0.3, "q3": 0.3}}, OUT), baseline=None, min_coverage=0.5,
                       n_resamples=10)
    assert list(two["label"]) == ["a", "b"] and two["ranked"].all()  # half of the 4 questions each: both compared
    assert list(two["n"]) == [4, 4] and list(two["n_fallback"]) == [2, 2] and list(two["brier"]) == pytest.approx([(0.09 + 0.49 + 2 * 0.25) / 4] * 2)


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
    df = frame({"m": {q: 0.5 for q in OUT}, "part": {"q0": 0.4, "q1": 0.4}}, OUT).rename(
        columns={"label": "system", "question_id": "item"})
    t = rank_methods(df, method_col="system", question_col="item", baseline=None, n_resamples=10)
    assert list(t["system"]) == ["m", "part"] and list(t["n"]) == [5, 2] and list(t["n_answered"]) == [5, 2]
    empty = rank_methods(frame({}, OUT).reindex(columns=["label", "question_id", "p_yes", "outcome", "cluster"]), baseline=None)
    assert empty.empty


def test_a_set_the_caller_fixes_is_the_only_one_compared_on():
    """Several runs: the questions every run planned (benchmarks.report.frame.planned_questions)."""
    answers = {"a": {q: 0.5 for q in OUT}, "b": {"q0": 0.3, "q1": 0.3, "q2": 0.3}, "out": {"q3": 0.9, "q4": 0.9}}
    c = compare(frame(answers, OUT), questions={"q0", "q1", "q2", "elsewhere"})  # an unanswered id counts for nothing
    assert (c.compared, c.apart) == (["a", "b"], ["out"])
    assert c.answered.to_dict() == {"a": 3, "b": 3, "out": 0} and c.coverage.to_dict() == {"a": 1.0, "b": 1.0, "out": 0.0}
    assert set(c.frame["question_id"]) == {"q0", "q1", "q2"} and not c.frame["fallback"].any()
    t = rank_methods(frame(answers, OUT), baseline=None, questions={"q0", "q1", "q2"}, n_resamples=10).set_index("label")
    assert t["n"].to_dict() == {"a": 3, "b": 3, "out": 2}  # listed apart on its own questions, outside the set
    assert t["n_answered"].to_dict() == {"a": 3, "b": 3, "out": 0}
    none = compare(frame(answers, OUT), questions=set())
    assert none.compared == [] and none.apart == ["a", "b", "out"] and (none.coverage == 0.0).all()
    t = rank_methods(frame(answers, OUT), baseline=None, questions=set(), n_resamples=10)
    assert not t["ranked"].any() and list(t["label"]) == ["b", "a", "out"] and list(t["n"]) == [3, 5, 2]  # by own Brier
    assert (t["coverage"] == 0.0).all() and t["rank"].isna().all() and t["rank"].dtype == "Int64"


def test_a_filled_row_takes_the_questions_facts_and_the_methods_own_columns():
    rows = pd.DataFrame([
        {"label": "m", "run_id": "r1", "kind": "method", "question_id": "q0", "p_yes": 0.8, "outcome": 1, "cluster": "c0", "source": "x"},
        {"label": "b", "run_id": "r2", "kind": "baseline", "question_id": "q0", "p_yes": 0.5, "outcome": 1, "cluster": "c0", "source": "x"},
        {"label": "b", "run_id": "r2", "kind": "baseline", "question_id": "q1", "p_yes": 0.5, "outcome": 0, "cluster": "c1", "source": "y"},
    ])
    c = compare(rows, min_coverage=0.5, question_cols=("outcome", "cluster", "source"), fallbacks={("m", "q1"): 0.1})
    filled = c.frame[c.frame["fallback"]].iloc[0].to_dict()
    assert filled == {"label": "m", "run_id": "r1", "kind": "method", "question_id": "q1", "p_yes": 0.1, "outcome": 0,
                      "cluster": "c1", "source": "y", "fallback": True}
    t = rank_methods(rows, baseline=None, min_coverage=0.5, n_resamples=10)
    assert t["n_fallback"].dtype == np.int64 and t.set_index("label")["n_fallback"].to_dict() == {"m": 1, "b": 0}


def test_methods_listed_apart_use_the_same_bootstrap_settings():
    outcomes = {f"q{i}": i % 2 for i in range(40)}
    answers = {"all": {q: 0.4 for q in outcomes},
               "half": {q: (0.2 + i / 100 if o else 0.6 - i / 100) for i, (q, o) in enumerate(outcomes.items()) if i < 20}}
    t = rank_methods(frame(answers, outcomes), baseline="all", n_resamples=300, seed=7).set_index("label")
    own = scoring.score_table(frame(answers, outcomes), method_col="label", baseline="all", n_resamples=300, seed=7).set_index("label")
    assert not t.loc["half", "ranked"] and t.loc["half", "n_clusters"] == 20
    cols = ["brier_ci_low", "brier_ci_high", "delta_brier_ci_low", "delta_brier_ci_high"]
    assert t.loc["half", cols].tolist() == own.loc["half", cols].tolist()


def test_a_method_equal_to_another_is_scored_with_the_ranked_but_takes_no_rank():
    answers = {
        "good": {q: (0.9 if o else 0.1) for q, o in OUT.items()},  # Brier 0.01
        "coin": {q: 0.5 for q in OUT},  # 0.25
        "copy": {q: 0.5 for q in OUT},  # the coin under another name
        "fair": {q: (0.6 if o else 0.4) for q, o in OUT.items()},  # 0.16
    }
    t = rank_methods(frame(answers, OUT), baseline="coin", equals={"copy": "coin (not fitted: n < 30)"}, min_clusters_to_rank=1,
                     n_resamples=20)
    assert list(t["label"]) == ["good", "fair", "coin", "copy"] and t["ranked"].all()
    assert list(t["rank"][:3]) == [1, 2, 3] and pd.isna(t["rank"].iloc[3])  # no gap: the copy holds no place
    assert list(t["equals"]) == ["", "", "", "coin (not fitted: n < 30)"]
    assert t["brier"].iloc[3] == pytest.approx(0.25) and t["n"].iloc[3] == 5
    assert (rank_methods(frame(answers, OUT), baseline="coin", min_clusters_to_rank=1, n_resamples=20)["equals"] == "").all()
    # too few clusters to rank: nobody has a rank, the copy still says what it is
    small = rank_methods(frame(answers, OUT), baseline="coin", equals={"copy": "coin (not fitted: n < 30)"}, n_resamples=20)
    assert small["rank"].isna().all() and list(small["equals"])[3] == "coin (not fitted: n < 30)"
