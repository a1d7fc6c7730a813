"""The sibling-cluster rule at its bounds (issue 18): each rule merges what it says and nothing else."""

from __future__ import annotations

import datetime as dt

import pytest

from agent_schemas import Question
from benchmarks.protocol.clusters import (MAX_SPAN_WORDS, MIN_BACKGROUND_CHARS, MIN_SHARED_FRACTION, MIN_SHARED_WORDS, RULE,
                                 ClusterAssignment, one_pattern, sibling_clusters)

CLOSE = dt.date(2026, 3, 1)
BACKGROUND = "This market is one of a set of markets on the winner of the 2026 award; it resolves to the named nominee."  # 105 characters


def q(qid: str, text: str = "Will it happen?", *, source="polymarket", sid=None, background="", close=CLOSE, kind="market"):
    return Question(id=qid, text=text, background=background, forecast_date=dt.date(2025, 11, 1), scheduled_close_date=close,
                    source=source, source_question_id=sid or qid, question_type=kind)


def test_documented_constants():
    assert (MIN_BACKGROUND_CHARS, MIN_SHARED_WORDS, MIN_SHARED_FRACTION, MAX_SPAN_WORDS) == (100, 5, 0.4, 8)
    assert RULE == ("same source question; or, for market questions of one source, the same background (>= 100 chars) "
                    "or one question pattern with the same scheduled close date; "
                    "or, for dataset questions of one source, the same forecast date and resolution date")


@pytest.mark.parametrize("a, b, same", [
    ("Will A win Best Picture at the Oscars?", "Will A win Best Picture at the Oscars?", True),  # identical
    ("Will A win Best Picture at the Oscars?", "Will Bee Cee win Best Picture at the Oscars?", True),  # one span
    ("Will A win the big prize?", "Will B win the big prize?", True),  # 5 shared words of 6: enough
    ("Will A win big prize?", "Will B win big prize?", False),  # 4 shared words: too few
    ("a b c d e X1 X2 X3 X4 X5 X6 X7", "a b c d e Y1 Y2 Y3 Y4 Y5 Y6 Y7", True),  # 5 of 12 = 0.42 shared
    ("a b c d e X1 X2 X3 X4 X5 X6 X7 X8", "a b c d e Y1 Y2 Y3 Y4 Y5 Y6 Y7 Y8", False),  # 5 of 13 = 0.38
    ("p q r s t u v w x y z 1 2 3 4 5 6 7 8 9", "p q r s t u v w x y z 1 2 3 4 5 6 7 8 9", True),
    ("s1 s2 s3 a b c d e f g h s4 s5 s6 s7 s8 s9 s10 s11", "s1 s2 s3 i j k l m n o p s4 s5 s6 s7 s8 s9 s10 s11", True),  # span 8
    ("s1 s2 s3 a b c d e f g h i s4 s5 s6 s7 s8 s9 s10 s11", "s1 s2 s3 j k l m n o p q r s4 s5 s6 s7 s8 s9 s10 s11", False),  # 9
    ("Will it rain in Paris on Monday?", "Will it snow in Paris on Tuesday?", False),  # two spans
    ("a b c d e", "a b c d e f", True),  # one side's span is empty
    ("x a b c d e", "a b c d e", True),
    ("a a a a a a", "a a a a a", True),  # prefix and suffix do not overlap: 5 shared
])
def test_one_pattern(a, b, same):
    assert one_pattern(a, b) is same and one_pattern(b, a) is same


def test_a_question_repeated_across_rounds_keeps_one_cluster():
    qs = [q("r1", sid="m1"), q("r2", "Another text", sid="m1", close=dt.date(2026, 5, 1)), q("o", "Something else entirely here", sid="m2")]
    ca = sibling_clusters(qs)
    assert ca.labels == {"r1": "polymarket|m1", "r2": "polymarket|m1", "o": "polymarket|m2"}
    assert (ca.n_source_questions, ca.n_clusters, ca.merged) == (2, 2, 0)


def test_siblings_sharing_a_long_background_are_merged_under_the_smallest_key():
    qs = [q("c", "Will Carol win?", sid="m3", background=BACKGROUND, close=None),
          q("a", "Does Alice take it?", sid="m1", background="  " + BACKGROUND.replace(" ", "\n", 3), close=None),
          q("b", "Is Bob the one?", sid="m2", background=BACKGROUND[:99], close=None),  # 99 characters: too short
          q("d", "Will Dan win?", sid="m4", source="kalshi", background=BACKGROUND, close=None),  # other source
          q("e", "Will Eve win?", sid="m5", background=BACKGROUND, close=None, kind="dataset")]  # not a market
    assert len(BACKGROUND) == 105 and len(BACKGROUND[:99]) == 99
    ca = sibling_clusters(qs)
    assert ca.labels == {"c": "polymarket|m1", "a": "polymarket|m1", "b": "polymarket|m2", "d": "kalshi|m4", "e": "polymarket|m5"}
    assert (ca.n_source_questions, ca.n_clusters, ca.merged) == (5, 4, 1)
    exactly = [q("x", "Will X win?", sid="x", background="b" * 100, close=None), q("y", "Will Y win?", sid="y", background="b" * 100, close=None)]
    assert len(set(sibling_clusters(exactly).labels.values())) == 1


def test_one_question_pattern_merges_markets_closing_together():
    qs = [q("a", "Will Avatar win Best Picture at the 98th Academy Awards?", sid="m2"),
          q("b", "Will One Battle After Another win Best Picture at the 98th Academy Awards?", sid="m1"),
          q("c", "Will Sinners win Best Picture at the 98th Academy Awards?", sid="m3", close=dt.date(2026, 3, 2)),  # other close
          q("d", "Will Sinners win Best Picture at the 98th Academy Awards?", sid="m4", close=None),  # no close
          q("e", "Will Hamnet win Best Picture at the 98th Academy Awards?", sid="m5", source="kalshi"),
          q("f", "Will Marty win Best Picture at the 98th Academy Awards?", sid="m6", kind="dataset")]
    ca = sibling_clusters(qs)
    assert ca.labels == {"a": "polymarket|m1", "b": "polymarket|m1", "c": "polymarket|m3", "d": "polymarket|m4",
                         "e": "kalshi|m5", "f": "polymarket|m6"}
    assert ca.summary() == {"rule": RULE, "source_questions": 6, "clusters": 5, "merged_siblings": 1}


def test_rules_apply_to_every_market_whatever_comes_first_and_only_at_their_bounds():
    short = "An event description that is shared by several markets but is only 99 characters long, so it is not"
    assert len(short) == 99
    qs = [q("z", "Will the index close higher on Friday?", sid="z", kind="dataset"),  # not a market, listed first
          q("a", "Will A win the big prize?", sid="a"), q("b", "Will B win the big prize?", sid="b"),  # 5 shared words
          q("c", "Will C win big prize?", sid="c"), q("d", "Will D win big prize?", sid="d"),  # 4 shared words: apart
          q("e", "Is event E on?", sid="e", background=short, close=None), q("f", "Is event F on?", sid="f", background=short, close=None)]
    labels = sibling_clusters(qs).labels
    assert labels == {"z": "polymarket|z", "a": "polymarket|a", "b": "polymarket|a", "c": "polymarket|c", "d": "polymarket|d",
                      "e": "polymarket|e", "f": "polymarket|f"}


def test_the_same_question_listed_twice_is_one_cluster():
    text = "Will the Fed cut rates at its June 2026 meeting?"
    qs = [q("b", text, sid="m2"), q("a", "  " + text.replace(" ", "  "), sid="m1"), q("c", text.replace("cut", "hike"), sid="m3")]
    assert sibling_clusters(qs).labels == {"b": "polymarket|m1", "a": "polymarket|m1", "c": "polymarket|m1"}


def test_rules_chain_into_one_cluster():
    qs = [q("a", "Will A win Best Director at the Awards?", sid="m3"),
          q("b", "Will B win Best Director at the Awards?", sid="m9", background=BACKGROUND),
          q("c", "Something unrelated to the others?", sid="m5", background=BACKGROUND, close=None),
          q("d", "Another question about other things?", sid="m5")]  # rule 1 with c
    ca = sibling_clusters(qs)
    assert set(ca.labels.values()) == {"polymarket|m3"} and (ca.n_source_questions, ca.n_clusters) == (3, 1)


def test_no_questions_no_clusters():
    assert sibling_clusters([]) == ClusterAssignment({}, 0, 0)
    assert ClusterAssignment().summary() == {"rule": RULE, "source_questions": 0, "clusters": 0, "merged_siblings": 0}


def test_dataset_questions_of_one_source_round_and_resolution_date_share_a_cluster():
    """Issue 29, fault 6: series of one source resolving on one day in one round move together."""
    day, later = dt.date(2026, 1, 1), dt.date(2026, 4, 1)
    qs = [q("gdp", "Will GDP rise?", source="fred", sid="GDP", close=day, kind="dataset"),
          q("cpi", "Will CPI rise?", source="fred", sid="CPI", close=day, kind="dataset"),
          q("unrate", "Will unemployment rise?", source="fred", sid="UNRATE", close=later, kind="dataset"),  # other date
          q("spy", "Will SPY close higher?", source="yfinance", sid="SPY", close=day, kind="dataset"),  # other source
          q("m", "Will a market rise?", source="fred", sid="M", close=day),  # a market: rule 4 is for datasets
          q("x", "Will X rise?", source="fred", sid="X", close=None, kind="dataset")]  # no resolution date
    other_round = Question(id="gdp2", text="Will GDP rise?", forecast_date=dt.date(2025, 12, 1), scheduled_close_date=day,
                           source="fred", source_question_id="GDP-R2", question_type="dataset")
    ca = sibling_clusters([*qs, other_round])
    assert ca.labels == {"gdp": "fred|CPI", "cpi": "fred|CPI", "unrate": "fred|UNRATE", "spy": "yfinance|SPY",
                         "m": "fred|M", "x": "fred|X", "gdp2": "fred|GDP-R2"}
    assert (ca.n_source_questions, ca.n_clusters, ca.merged) == (7, 6, 1)


def test_a_series_at_several_dates_joins_the_other_series_of_its_round_through_any_date():
    day, later = dt.date(2026, 1, 1), dt.date(2026, 4, 1)
    qs = [q("a1", source="dbnomics", sid="A", close=day, kind="dataset"),
          q("a2", source="dbnomics", sid="A", close=later, kind="dataset"),  # rule 1 with a1
          q("b2", source="dbnomics", sid="B", close=later, kind="dataset")]  # rule 4 with a2
    assert set(sibling_clusters(qs).labels.values()) == {"dbnomics|A"}
