"""LocalCorpusSearch: BM25 ranking, cutoff filtering before ranking, file loading, and the bundled corpus."""

import datetime as dt
import json
import math
import re
import time

import pandas as pd
import pytest
from bm25s.stopwords import STOPWORDS_EN

from agent_schemas import DataValidationError
from agent_tools import (
    LocalCorpusSearch,
    ToolExecutor,
    best_passage,
    forecastbench_dir,
    latest_published,
    load_forecastbench_questions,
)

DOCS = [
    {"title": "Rates", "url": "https://a.org/1", "published": "2024-07-01",
     "text": "The central bank held interest rates steady. Inflation cooled in June."},
    {"title": "Rates again", "url": "https://a.org/2", "published": "2024-07-25",
     "text": "The central bank cut interest rates. Interest rates fell by a quarter point; interest rates lower."},
    {"title": "Sport", "url": "https://a.org/3", "published": "2024-07-05",
     "text": "England reached the final of the football tournament."},
    {"title": "Undated note", "url": "https://a.org/4", "published": None,
     "text": "A note on interest rates without a date."},
]
STOP = set(STOPWORDS_EN)  # the stopword list is data; the scoring formula below is written out by hand


def reference_bm25(docs, query, k1=1.5, b=0.75):
    """Hand-written Lucene BM25: sum over query terms of idf * tf / (tf + k1 * (1 - b + b * dl / avgdl)),
    idf = ln(1 + (N - df + 0.5) / (df + 0.5)) (Kamphuis et al. 2020, "Which BM25 do you mean?")."""
    tok = [[w for w in re.findall(r"\b\w\w+\b", (d["title"] + "\n" + d["text"]).lower()) if w not in STOP] for d in docs]
    avgdl = sum(map(len, tok)) / len(tok)
    q = [w for w in re.findall(r"\b\w\w+\b", query.lower()) if w not in STOP]
    scores = []
    for t in tok:
        s = 0.0
        for w in set(q):
            df = sum(w in u for u in tok)
            if df == 0:
                continue
            tf = t.count(w)
            idf = math.log(1 + (len(tok) - df + 0.5) / (df + 0.5))
            s += idf * tf / (tf + k1 * (1 - b + b * len(t) / avgdl))
        scores.append(s)
    return scores


def test_ranking_matches_reference_bm25():
    corpus = LocalCorpusSearch(DOCS)
    out = corpus.search("interest rates", max_results=4)
    ref = reference_bm25(DOCS, "interest rates")
    expected = [DOCS[i]["url"] for i in sorted(range(4), key=lambda i: -ref[i]) if ref[i] > 0]
    assert [r.url for r in out.results] == expected == ["https://a.org/2", "https://a.org/1", "https://a.org/4"]
    assert out.results[0].published == dt.date(2024, 7, 25)
    assert out.results[0].source == "local-corpus"


def test_cutoff_filters_before_ranking():
    corpus = LocalCorpusSearch(DOCS)
    out = corpus.search("interest rates", max_results=2, cutoff_date=dt.date(2024, 7, 21))
    # the top document (2024-07-25) is excluded and two results still come back
    assert [r.url for r in out.results] == ["https://a.org/1", "https://a.org/4"]
    out = corpus.search("interest rates", max_results=5, cutoff_date="2024-07-01")
    assert [r.url for r in out.results] == ["https://a.org/1", "https://a.org/4"]  # on-cutoff and undated kept
    out = corpus.search("interest rates", max_results=5, cutoff_date="2024-06-30")
    assert [r.url for r in out.results] == ["https://a.org/4"]


def test_no_match_is_a_valid_empty_result():
    out = LocalCorpusSearch(DOCS).search("zebra quantum")
    assert out.ok and out.results == []
    with pytest.raises(ValueError, match="query"):
        LocalCorpusSearch(DOCS).search("")


def test_best_passage_snippet():
    text = ("Intro sentence about nothing. " * 20 + "The election was postponed to March. "
            + "Closing remarks follow here. " * 20)
    snip = best_passage(text, {"election", "postponed"}, 120)
    assert "The election was postponed to March." in snip and len(snip) <= 120
    corpus = LocalCorpusSearch([{"title": "t", "text": text, "published": "2024-01-01"}], snippet_chars=100)
    r = corpus.search("election postponed").results[0]
    assert "election was postponed" in r.snippet and len(r.snippet) <= 100
    assert r.url == "corpus://0"


def test_from_jsonl(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_text("\n".join(json.dumps(d) for d in DOCS) + "\n")
    corpus = LocalCorpusSearch.from_file(p)
    assert len(corpus) == 4
    assert corpus.search("football", max_results=1).results[0].url == "https://a.org/3"


def test_from_jsonl_bad_date_names_row_column_value(tmp_path):
    p = tmp_path / "c.jsonl"
    rows = [DOCS[0], {**DOCS[1], "published": "last week"}]
    p.write_text("\n".join(json.dumps(d) for d in rows))
    with pytest.raises(DataValidationError) as ei:
        LocalCorpusSearch.from_file(p)
    assert (ei.value.row, ei.value.field, ei.value.value) == (1, "published", "last week")
    p.write_text(json.dumps(DOCS[0]) + "\n{not json\n")
    with pytest.raises(DataValidationError) as ei:
        LocalCorpusSearch.from_file(p)
    assert ei.value.row == 1


def test_from_parquet(tmp_path):
    p = tmp_path / "c.parquet"
    pd.DataFrame(DOCS).to_parquet(p)
    assert len(LocalCorpusSearch.from_file(p)) == 4
    bad = pd.DataFrame([DOCS[0], {**DOCS[2], "text": "  "}])
    bad.to_parquet(p)
    with pytest.raises(DataValidationError) as ei:
        LocalCorpusSearch.from_file(p)
    assert (ei.value.row, ei.value.field, ei.value.value) == (1, "text", "  ")
    pd.DataFrame([{"title": "x"}]).to_parquet(p)
    with pytest.raises(DataValidationError) as ei:
        LocalCorpusSearch.from_file(p)
    assert ei.value.field == "text"


# --- the bundled ForecastBench corpus -------------------------------------------------------------

QID = "fb|2024-07-21|polymarket|0x4ac4849343a847d75cff15174a139ef9c4bc89bdb8c8bcdd7bee61204912d549|2024-12-31"  # "GPT-5 announced in Q4 2024?"


@pytest.fixture(scope="module")
def default_corpus():
    t0 = time.perf_counter()
    corpus = LocalCorpusSearch.default()
    build_s = time.perf_counter() - t0
    print(f"\nLocalCorpusSearch.default(): {len(corpus)} documents built in {build_s:.2f} s")
    return corpus


def test_default_corpus_is_cached_dated_and_deduplicated(default_corpus):
    assert LocalCorpusSearch.default() is default_corpus
    docs = default_corpus.documents
    assert len(docs) > 3000
    assert all(d.published is not None and d.url for d in docs)
    assert len({d.text for d in docs}) == len(docs)
    assert {d.kind for d in docs} == {"background", "market_resolution_criteria", "source_intro", "freeze_value_explanation"}
    assert (forecastbench_dir() / "fb_questions.parquet").is_file()


def test_default_corpus_with_executor_returns_no_evidence_after_forecast_date(default_corpus):
    df = load_forecastbench_questions()
    row = df[df["qid"] == QID].iloc[0]
    assert row["question_type"] == "market"
    due = dt.date.fromisoformat(row["forecast_due_date"])
    # without a cutoff, the corpus holds later-round texts that match this question
    leaky = default_corpus.search(row["question"], max_results=10)
    n_after_unguarded = sum(r.published > due for r in leaky.results)
    assert n_after_unguarded >= 5

    ex = ToolExecutor(default_corpus)
    out = ex.execute_search(row["question"], max_results=5, cutoff_date=due)
    print(f"\n{QID}: due {due}; unguarded top-10 dated after due: {n_after_unguarded}; "
          f"guarded: {len(out.results)} results, latest {latest_published(out.results)}, "
          f"dropped_after_cutoff={out.dropped_after_cutoff}, dropped_undated={out.dropped_undated}")
    assert out.ok and len(out.results) == 5
    assert all(r.published is not None and r.published <= due for r in out.results)
    assert latest_published(out.results) <= due
    assert out.dropped_after_cutoff == 0 and out.dropped_undated == 0  # filtered inside the corpus, before ranking
    # the question's own background (frozen 2024-07-12) is among the dated evidence
    assert row["url"] in [r.url for r in out.results]
    assert dt.date(2024, 7, 12) in {r.published for r in out.results}
    assert ex.audit["searches"] == 1 and ex.audit["results_returned"] == 5
