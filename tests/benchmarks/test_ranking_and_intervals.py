"""Issue 10, items 4-5: rankings on one question set, sibling markets in one cluster, flagged intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from agent_schemas import Question
from benchmarks.protocol.clusters import one_pattern, sibling_clusters
from benchmarks.scoring.ranking import rank_methods
from benchmarks.questions import load_forecastbench
from benchmarks.report.score_file import score_forecasts_file


def _frame(rows):
    return pd.DataFrame(rows, columns=["label", "question_id", "p_yes", "outcome", "cluster"])


def test_a_method_answering_two_easy_questions_cannot_outrank_one_answering_all_four():
    outcomes = {"q1": 1, "q2": 0, "q3": 1, "q4": 0}
    rows = [("steady", q, 0.7 if o else 0.3, o, q) for q, o in outcomes.items()]  # Brier 0.09 on all four
    rows += [("cherry", "q1", 1.0, 1, "q1"), ("cherry", "q2", 0.0, 0, "q2")]  # Brier 0 on the easy two
    t = rank_methods(_frame(rows), baseline="steady", n_resamples=50, min_clusters=2, min_clusters_to_rank=4).set_index("label")
    assert bool(t.loc["steady", "ranked"]) and t.loc["steady", "rank"] == 1
    assert not t.loc["cherry", "ranked"] and pd.isna(t.loc["cherry", "rank"])
    assert (t.loc["cherry", "n_answered"], t.loc["cherry", "coverage"]) == (2, 0.5)
    assert t.loc["cherry", "brier"] == 0.0  # its own n, shown apart
    assert np.isnan(t.loc["cherry", "delta_brier_vs_baseline"])  # not paired on the two questions it chose (issue 35)
    assert (t.loc["cherry", "brier_worst_case"], t.loc["cherry", "rank_worst_case"]) == (0.5, 2)  # q3, q4 as certain misses


def test_a_method_that_skipped_a_question_is_scored_on_it_as_its_worst_case_and_the_others_keep_every_question():
    rows = []
    for i in range(20):
        o = i % 2
        rows.append(("a", f"q{i}", 0.6 if o else 0.4, o, f"c{i}"))
        if i != 3:  # b skipped one question (outcome 1): 1 of 20 imputed, 5%, still compared
            rows.append(("b", f"q{i}", 0.9 if o else 0.1, o, f"c{i}"))
    t = rank_methods(_frame(rows), baseline="a", n_resamples=100).set_index("label")
    assert t.loc["a", "n"] == t.loc["b", "n"] == 20 and t.loc["a", "n_answered"] == 20 and t.loc["b", "n_imputed"] == 1
    assert t.loc["a", "brier"] == pytest.approx(0.16) and t.loc["b", "brier"] == pytest.approx((19 * 0.01 + 1.0) / 20)
    assert list(t.index) == ["b", "a"] and t.loc["a", "too_small_to_rank"]  # 20 clusters < 50: no ranks
    assert t["rank"].isna().all()
    assert t.loc["a", "brier_ci_low"] == pytest.approx(0.16) == t.loc["a", "brier_ci_high"]  # every score is 0.16
    assert t.loc["b", "delta_brier_vs_baseline"] == pytest.approx((19 * -0.15 + (1.0 - 0.16)) / 20)


def test_too_few_clusters_are_flagged_not_given_a_normal_looking_interval():
    rows = [("m", f"q{i}", 0.3, i % 2, "one-event") for i in range(6)]
    t = rank_methods(_frame(rows), baseline=None, n_resamples=50)
    assert t.loc[0, "too_small_to_rank"] and t.loc[0, "n_clusters"] == 1
    assert np.isnan(t.loc[0, "brier_ci_low"]) and np.isnan(t.loc[0, "brier_ci_high"])
    assert t.loc[0, "interval_note"] == "no interval: 1 clusters < 10"


def test_sibling_markets_share_a_cluster():
    qs = load_forecastbench(question_type="market", forecast_date_from="2025-08-01", one_per_source_question=True)
    ca = sibling_clusters(qs)
    oscars = [q for q in qs if q.text.endswith("at the 98th Academy Awards?")]
    assert len(oscars) >= 20 and len({q.source_question_id for q in oscars}) == len(oscars)
    assert len({ca.labels[q.id] for q in oscars}) <= 2  # one ceremony (two scheduled closes at most)
    top_ai = [q for q in qs if "have the top AI model on December 31?" in q.text]
    assert len(top_ai) >= 5 and len({ca.labels[q.id] for q in top_ai}) == 1
    assert ca.n_source_questions == 1097 and ca.merged == ca.n_source_questions - ca.n_clusters > 300
    # unrelated questions that share only a date phrase stay apart
    assert not one_pattern("Starmer out by June 30, 2026?", "Will Scotiabank fail by June 30, 2026?")
    # dataset questions are merged by source, round and resolution date (rule 4), never by text
    fred = load_forecastbench(sources="fred", rounds=["2025-11-09", "2025-11-23"], one_per_source_question=True)
    labels = sibling_clusters(fred).labels
    groups: dict = {}
    for q in fred:
        groups.setdefault((q.forecast_date, q.scheduled_close_date), set()).add(labels[q.id])
    assert len(fred) > 50 and len(groups) > 2 and all(len(g) == 1 for g in groups.values())
    assert len(set(labels.values())) == len(groups)  # one series per question: no chain joins two groups


def test_score_ranks_on_one_question_set_and_clusters_siblings(tmp_path):
    oscars = [q for q in load_forecastbench(question_type="market", rounds="2025-12-21")
              if q.text.endswith("at the 98th Academy Awards?") and " win " in q.text][:5]
    assert len({q.source_question_id for q in oscars}) == 5
    lines = ["question_id,method,p_yes"]
    lines += [f"{q.id},everywhere,0.2" for q in oscars]
    lines += [f"{q.id},sometimes,{q.outcome}" for q in oscars[:2]]
    f = tmp_path / "f.csv"
    f.write_text("\n".join(lines) + "\n")
    t = score_forecasts_file(f, baseline="everywhere", n_resamples=50).set_index("method")
    assert t.loc["everywhere", "ranked"] and not t.loc["sometimes", "ranked"]
    assert t.loc["everywhere", "n_clusters"] == 1  # five sibling markets, one event
    assert np.isnan(t.loc["everywhere", "brier_ci_low"])
