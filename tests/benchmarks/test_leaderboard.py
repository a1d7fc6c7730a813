"""rank_methods at its bounds (issues 18, 29, 35): who is compared, on which questions, what a missing answer is
scored as, in which order (ties shared), with which columns, and when ranks are shown."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchmarks import scoring
from benchmarks.scoring.ranking import (IMPUTED_P_YES, MAX_IMPUTED, MIN_CLUSTERS_TO_RANK, compare, rank_labels, rank_methods,
                                        sensitivity_lines)


def frame(answers: dict[str, dict[str, float]], outcomes: dict[str, int], clusters: dict[str, str] | None = None) -> pd.DataFrame:
    rows = [{"label": m, "question_id": qid, "p_yes": p, "outcome": outcomes[qid], "cluster": (clusters or {}).get(qid, qid)}
            for m, ps in answers.items() for qid, p in ps.items()]
    return pd.DataFrame(rows)


OUT = {f"q{i}": i % 2 for i in range(5)}
TWENTY = {f"q{i}": i % 2 for i in range(20)}  # 1 missing of 20 is 5%: still ranked


def test_max_imputed_is_forecastbench_s_and_validated():
    assert MAX_IMPUTED == 0.05 and IMPUTED_P_YES == 0.5  # IMPUTED_CUTOFF_PCT = 5 and impute_missing_forecasts' 0.5
    df = frame({"a": {"q0": 0.5}}, OUT)
    for bad in (-0.1, 1, 1.5):
        with pytest.raises(ValueError, match=rf"^max_imputed must be in \[0, 1\), got {bad}$"):
            rank_methods(df, max_imputed=bad)
    assert bool(rank_methods(df, baseline=None, max_imputed=0.0, n_resamples=10)["ranked"].iloc[0])


def test_a_method_at_exactly_the_imputed_bound_is_ranked():
    full = {q: 0.5 for q in TWENTY}
    one = {q: 0.5 for q in list(TWENTY)[1:]}  # 1 of 20 imputed = 5%
    two = {q: 0.5 for q in list(TWENTY)[2:]}  # 10%
    t = rank_methods(frame({"full": full, "one": one, "two": two}, TWENTY), baseline=None, n_resamples=10).set_index("label")
    assert t["ranked"].to_dict() == {"full": True, "one": True, "two": False}
    assert t["coverage"].to_dict() == {"full": 1.0, "one": 0.95, "two": 0.9}
    assert t["n_answered"].to_dict() == {"full": 20, "one": 19, "two": 18} and t["n_answered"].dtype == np.int64
    assert t.loc["full", "n"] == t.loc["one", "n"] == 20 and t.loc["two", "n"] == 18  # one's first: imputed
    assert t["n_imputed"].to_dict() == {"full": 0, "one": 1, "two": 2} and t["n_imputed"].dtype == np.int64
    stricter = rank_methods(frame({"full": full, "one": one}, TWENTY), baseline=None, max_imputed=0.04, n_resamples=10)
    assert stricter.set_index("label")["ranked"].to_dict() == {"full": True, "one": False}


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
    assert list(t["delta_brier_vs_baseline"][:3]) == pytest.approx([-0.24, -0.09, 0.0])
    assert t["delta_brier_vs_baseline"][3:].isna().all()  # listed apart: no pairing on the questions its failures chose
    # where they would stand: lucky's 3 missing as the worst case (Brier 1 each), poor's 2
    assert list(t["brier_worst_case"]) == pytest.approx([0.01, 0.16, 0.25, 3 / 5, (0.49 + 0.49 + 0.36 + 2) / 5])
    assert list(t["rank_worst_case"]) == [1, 2, 3, 4, 4]
    assert not t["too_small_to_rank"].any()  # 5 clusters, 5 needed
    default = rank_methods(frame(answers, OUT), baseline="coin", n_resamples=20)
    assert list(default["too_small_to_rank"]) == [True, True, True, False, False]  # 5 clusters < 50
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
    assert few.loc["few", ["brier_ci_low", "brier_ci_high"]].tolist() == apart.loc["few", ["brier_ci_low", "brier_ci_high"]].tolist()
    assert not np.isnan(few.loc["few", "brier_ci_low"])  # 3 clusters, min_clusters 3: an interval
    assert np.isnan(few.loc["few", "delta_brier_ci_low"])  # listed apart: not paired
    fewer = rank_methods(frame(answers, outcomes), baseline="b", n_resamples=200, seed=3, min_clusters=21,
                         min_clusters_to_rank=21)
    assert fewer["too_small_to_rank"].iloc[:2].all() and fewer["brier_ci_low"].isna().all() and fewer["rank"].isna().all()
    by_default = rank_methods(frame(answers, outcomes), baseline="b", n_resamples=20)
    assert by_default["too_small_to_rank"].iloc[:2].all() and by_default["rank"].isna().all()  # 20 < 30
    assert not by_default["brier_ci_low"].iloc[:2].isna().any()  # intervals still show from 10 clusters


def test_ties_share_a_rank_and_keep_the_order_of_first_appearance():
    outcomes = {"t0": 1, "t1": 0}
    levels = [0.9, 0.8, 0.7]  # Brier 0.01, 0.04, 0.09 on both questions
    pattern = [2, 0, 1, 1, 2, 0, 0, 2, 1, 0, 2, 1, 1, 0, 2, 2, 0, 1, 2, 0]  # 7 of level 0, 6 of level 1, 7 of level 2
    answers = {f"m{i:02d}": {"t0": levels[k], "t1": 1 - levels[k]} for i, k in enumerate(pattern)}
    t = rank_methods(frame(answers, outcomes), baseline=None, n_resamples=10, min_clusters_to_rank=2)
    expected = sorted(answers, key=lambda m: (pattern[int(m[1:])], int(m[1:])))
    assert list(t["label"]) == expected and list(t["rank"]) == [1] * 7 + [8] * 6 + [14] * 7  # competition ranks
    assert rank_labels(t) == ["1="] * 7 + ["8="] * 6 + ["14="] * 7
    apart = rank_methods(frame({**answers, "all": {q: 0.5 for q in OUT}}, {**outcomes, **OUT}), baseline=None, n_resamples=10)
    assert list(apart["label"]) == [*expected, "all"] and not apart["ranked"].any()  # all apart: by their own Brier


def test_the_default_baseline_is_mean():
    answers = {"mean": {q: 0.5 for q in OUT}, "sharp": {q: (0.9 if o else 0.1) for q, o in OUT.items()}}
    t = rank_methods(frame(answers, OUT), n_resamples=10).set_index("label")
    assert t.loc["sharp", "delta_brier_vs_baseline"] == pytest.approx(0.01 - 0.25)


def test_the_set_is_every_question_and_a_missing_answer_is_scored_as_its_worst_case():
    one = {q: (0.9 if o else 0.1) for q, o in list(TWENTY.items())[1:]}  # Brier 0.01 on q1..q19; q0 missing
    full = {q: 0.3 for q in TWENTY}  # outcomes 0,1,...: Brier 0.09 (10 questions) and 0.49 (10)
    t = rank_methods(frame({"one": one, "full": full}, TWENTY), baseline="full", n_resamples=10).set_index("label")
    assert t["n"].to_dict() == {"one": 20, "full": 20} and t["n_imputed"].to_dict() == {"one": 1, "full": 0}
    assert t.loc["one", "brier"] == pytest.approx((1.0 + 19 * 0.01) / 20)  # q0 (outcome 0) scored as p_yes 1
    assert t.loc["one", "delta_brier_vs_baseline"] == pytest.approx((1.0 + 19 * 0.01) / 20 - (10 * 0.09 + 10 * 0.49) / 20)
    assert t.loc["one", "log_loss"] > 36 / 20  # a certain wrong forecast: -ln(eps) = 36.04 nats
    # ForecastBench's figure beside it: q0 at 0.5
    assert t.loc["one", "brier_forecastbench"] == pytest.approx((0.25 + 19 * 0.01) / 20)
    assert t.loc["one", "brier_worst_case"] == pytest.approx(t.loc["one", "brier"])
    assert rank_methods(frame({"a": full}, TWENTY), baseline=None, n_resamples=10)["rank"].dtype == "Int64"


def test_compare_imputes_only_the_compared_methods_missing_answers():
    one = {q: 0.6 for q in list(TWENTY)[:19]}
    c = compare(frame({"full": {q: 0.5 for q in TWENTY}, "one": one, "few": {"q0": 0.9}}, TWENTY))
    assert (c.compared, c.apart) == (["full", "one"], ["few"])
    filled = c.frame[c.frame["imputed"]]
    assert filled[["label", "question_id", "p_yes", "outcome", "cluster"]].values.tolist() == [["one", "q19", 0.0, 1, "q19"]]
    assert len(c.frame) == 40 and c.answered.to_dict() == {"full": 20, "one": 19, "few": 1}
    assert c.n_imputed.to_dict() == {"full": 0, "one": 1, "few": 19}


def test_a_share_within_rounding_of_the_bound_is_ranked():
    one = {q: 0.5 for q in list(TWENTY)[1:]}
    t = rank_methods(frame({"full": {q: 0.5 for q in TWENTY}, "one": one}, TWENTY), baseline=None, n_resamples=10,
                     max_imputed=0.05 - 1e-12)
    assert t["ranked"].all()


def test_methods_that_each_miss_another_question_are_all_compared_on_every_question():
    outcomes = TWENTY
    answers = {f"m{k}": {q: 0.4 for j, q in enumerate(outcomes) if j != k} for k in range(5)}  # each misses another
    t = rank_methods(frame(answers, outcomes), baseline="m0", n_resamples=10)
    assert len(t) == 5 and t["ranked"].all() and t["rank"].dtype == "Int64"
    assert list(t["n"]) == [20] * 5 and list(t["n_imputed"]) == [1] * 5 and list(t.index) == list(range(5))
    assert list(t["coverage"]) == [0.95] * 5 and t["too_small_to_rank"].all() and t["rank"].isna().all()
    # each answer scores 0.16 (outcome 0) or 0.36 (outcome 1); the missed question 1 (the worst case)
    brier = {f"m{k}": (sum(0.36 if o else 0.16 for j, o in enumerate(outcomes.values()) if j != k) + 1.0) / 20 for k in range(5)}
    assert t.set_index("label")["brier"].to_dict() == pytest.approx(brier)
    two = rank_methods(frame({"a": {"q0": 0.3, "q1": 0.3}, "b": {"q2": 0.3, "q3": 0.3}}, OUT), baseline=None, max_imputed=0.5,
                       n_resamples=10)
    assert list(two["label"]) == ["a", "b"] and two["ranked"].all()  # half of the 4 questions each: both compared
    # a: q0 (0) 0.09, q1 (1) 0.49, q2 q3 imputed 1 each; b: q2 (0) 0.09, q3 (1) 0.49, q0 q1 imputed
    assert list(two["n"]) == [4, 4] and list(two["n_imputed"]) == [2, 2] and list(two["brier"]) == pytest.approx([(0.09 + 0.49 + 2) / 4] * 2)
    assert two["rank"].isna().all()  # 4 clusters: too few to rank


def test_an_unranked_baseline_still_gives_the_others_a_paired_difference():
    answers = {"all": {q: 0.5 for q in OUT}, "base": {"q0": 0.4, "q1": 0.6}}
    t = rank_methods(frame(answers, OUT), baseline="base", n_resamples=10).set_index("label")
    assert t.loc["all", "ranked"] and not t.loc["base", "ranked"]
    assert np.isnan(t.loc["all", "delta_brier_vs_baseline"])  # the baseline is not among the ranked
    assert np.isnan(t.loc["base", "delta_brier_vs_baseline"])  # listed apart: not paired, not even with itself
    only_ranked_base = rank_methods(frame({"all": {q: 0.5 for q in OUT}, "few": {"q0": 0.0}}, OUT), baseline="all",
                                    n_resamples=10).set_index("label")
    # few answered only q0, perfectly: paired there it would read -0.25, chosen by its failures
    assert np.isnan(only_ranked_base.loc["few", "delta_brier_vs_baseline"]) and only_ranked_base.loc["all", "delta_brier_vs_baseline"] == 0
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
    assert set(c.frame["question_id"]) == {"q0", "q1", "q2"} and not c.frame["imputed"].any()
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
    c = compare(rows, max_imputed=0.5, question_cols=("cluster", "source"))  # the outcome is a question's fact even unnamed
    filled = c.frame[c.frame["imputed"]].iloc[0].to_dict()
    assert filled == {"label": "m", "run_id": "r1", "kind": "method", "question_id": "q1", "p_yes": 1.0, "outcome": 0,
                      "cluster": "c1", "source": "y", "imputed": True}
    t = rank_methods(rows, baseline=None, max_imputed=0.5, n_resamples=10)
    assert t["n_imputed"].dtype == np.int64 and t.set_index("label")["n_imputed"].to_dict() == {"m": 1, "b": 0}


def test_methods_listed_apart_use_the_same_bootstrap_settings():
    outcomes = {f"q{i}": i % 2 for i in range(40)}
    answers = {"all": {q: 0.4 for q in outcomes},
               "half": {q: (0.2 + i / 100 if o else 0.6 - i / 100) for i, (q, o) in enumerate(outcomes.items()) if i < 20}}
    t = rank_methods(frame(answers, outcomes), baseline="all", n_resamples=300, seed=7).set_index("label")
    own = scoring.score_table(frame(answers, outcomes), method_col="label", baseline="all", n_resamples=300, seed=7).set_index("label")
    assert not t.loc["half", "ranked"] and t.loc["half", "n_clusters"] == 20
    cols = ["brier_ci_low", "brier_ci_high"]
    assert t.loc["half", cols].tolist() == own.loc["half", cols].tolist() and not np.isnan(t.loc["half", cols]).any()


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


def test_where_a_method_with_imputed_questions_would_stand():
    """rank_worst_case / rank_forecastbench by hand, and the lines the report, the terminal and the page print."""
    good = {q: (0.8 if o else 0.2) for q, o in TWENTY.items()}  # Brier 0.04
    fair = {q: (0.7 if o else 0.3) for q, o in TWENTY.items()}  # 0.09
    # 'gap' answers 19 questions with Brier 0.0625 and misses q0 (outcome 0): worst case (18 * ... ) see below
    gap = {q: (0.75 if o else 0.25) for q, o in list(TWENTY.items())[1:]}
    few = {q: (0.9 if o else 0.1) for q, o in list(TWENTY.items())[:10]}  # 10 of 20: apart
    t = rank_methods(frame({"good": good, "fair": fair, "gap": gap, "few": few}, TWENTY), baseline="fair", n_resamples=10,
                     min_clusters_to_rank=20).set_index("label")
    worst, half = (19 * 0.0625 + 1.0) / 20, (19 * 0.0625 + 0.25) / 20  # 0.109375, 0.071875
    assert t.loc["gap", "brier"] == pytest.approx(worst) and t.loc["gap", "brier_forecastbench"] == pytest.approx(half)
    assert list(t["rank"][:3]) == [1, 2, 3] and pd.isna(t.loc["few", "rank"])
    assert t.loc["gap", "rank_worst_case"] == 3 and t.loc["gap", "rank_forecastbench"] == 2  # 0.0719 would beat fair's 0.09
    assert t.loc["few", "brier_worst_case"] == pytest.approx((10 * 0.01 + 10) / 20) and t.loc["few", "rank_worst_case"] == 4
    assert pd.isna(t.loc["few", "rank_forecastbench"])  # ForecastBench would not rank it at all
    assert t.loc["good", "rank_forecastbench"] == 1 and t.loc["good", "brier_forecastbench"] == pytest.approx(0.04)
    lines = sensitivity_lines(t.reset_index())
    assert lines == [
        "gap: 1 of 20 questions imputed, scored as its worst case: rank 3 (Brier 0.1094); at 0.5 (ForecastBench's rule) it would "
        "rank 2 (Brier 0.0719).",
        "few: 10 of 20 questions imputed (50%, more than 5%): not ranked; with them scored as its worst case it would rank 4 "
        "(Brier 0.5050).",
    ]
    small = rank_methods(frame({"good": good, "gap": gap, "few": few}, TWENTY), baseline=None, n_resamples=10)  # 20 < 50 clusters
    assert small["rank_worst_case"].isna().all() and small["rank_forecastbench"].isna().all()
    assert sensitivity_lines(small)[0] == ("gap: 1 of 20 questions imputed, scored as its worst case (Brier 0.1094); at 0.5 "
                                           "(ForecastBench's rule) its Brier would be 0.0719.")


def test_two_methods_with_the_same_forecasts_share_a_rank_and_the_next_skips():
    """Two members: mean and median are the same forecasts (issue 35); a method that equals another holds no place."""
    mean = {q: (0.7 if o else 0.4) for q, o in TWENTY.items()}
    answers = {"debate": {q: (0.8 if o else 0.2) for q, o in TWENTY.items()}, "mean": mean, "median": dict(mean),
               "copy": dict(mean), "min": {q: 0.5 for q in TWENTY}}
    t = rank_methods(frame(answers, TWENTY), baseline="mean", equals={"copy": "mean (not fitted: n < 30)"}, n_resamples=10,
                     min_clusters_to_rank=20)
    assert list(t["label"]) == ["debate", "mean", "median", "copy", "min"]
    assert list(t["rank"][:3]) == [1, 2, 2] and pd.isna(t["rank"].iloc[3]) and t["rank"].iloc[4] == 4
    assert rank_labels(t) == ["1", "2=", "2=", "=", "4"]


def test_a_row_without_a_probability_is_a_question_the_method_did_not_answer():
    """A NaN p_yes (a forecast set's missing forecast) puts its question in the set and is imputed, never scored as given."""
    rows = frame({"a": {q: 0.3 for q in TWENTY}, "b": {q: 0.3 for q in list(TWENTY)[1:]}}, TWENTY)
    rows = pd.concat([rows, pd.DataFrame([{"label": "b", "question_id": "q0", "p_yes": np.nan, "outcome": 0, "cluster": "q0"}])],
                     ignore_index=True)
    t = rank_methods(rows, baseline=None, n_resamples=10).set_index("label")
    assert t.loc["b", "n_imputed"] == 1 and t.loc["b", "brier"] == pytest.approx((1.0 + 9 * 0.09 + 10 * 0.49) / 20)
    only = rank_methods(pd.DataFrame([{"label": "a", "question_id": "q0", "p_yes": np.nan, "outcome": 1, "cluster": "q0"}]),
                        baseline=None, n_resamples=10)
    assert (only["n"].iloc[0], only["n_imputed"].iloc[0], bool(only["ranked"].iloc[0])) == (0, 1, False)
