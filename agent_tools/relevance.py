"""Is a search result evidence on what was searched for? Content-word overlap with the question and the
disagreement: the rule by which the supervisor's coverage notes, and so its grounded confidence, count evidence.

Why
---
A search backend returns its best matches for the query, whatever the query was: a supervisor's query of just
"2025-10-26" returned chess ratings, and a BM25 corpus returns every document that shares one query word.
Counting such hits as evidence kept supervisors "high" on pages that say nothing about their question.

The rule (:data:`RELEVANCE_RULE`)
---------------------------------
The **content words** of a text (:func:`content_words`) are its lower-cased word tokens (runs of two or more
word characters: :data:`WORD_PATTERN`, the default splitter of bm25s's tokenizer, with which
:class:`~agent_tools.LocalCorpusSearch` indexes), less

* English stop words: NLTK's list as bm25s ships it (``bm25s.stopwords.STOPWORDS_EN_PLUS``);
* numbers and dates, which pages share by coincidence: tokens without a letter ("2025", "10"), ordinals
  ("31st") and month names and their abbreviations (:data:`DATE_WORDS`);
* the words of forecasting itself, which every question, resolution text and supervisor note holds
  whatever its subject (:data:`FORECASTING_WORDS`: "yes", "resolves", "question", "member", "says", ...).

A result (its title and snippet) is **relevant** to a disagreement about a question when it shares at least
:data:`MIN_SHARED_WORDS` (2) distinct content words with the question's text (all of them when it holds
fewer: "Starmer out in 2025?" has one; a question with none has no relevant result), or with the
question's text and the disagreement's topic and description together, at least one of them from the
question's text. The disagreement's words count only when the disagreement is about the question (it
shares a content word with the question's text): the embedded model names disagreements such as "The
2020-2021 season of Avatar: The Last Home" on a question about the Academy Awards, and its own words must
not make its results relevant. Two words, because one is often shared by chance ("best", "reach", "nfl"
for a question on the NFL and ESPN); one from the question, so that a result on the disagreement's words
alone is not taken for evidence on the question. A relevant result is **counted** as evidence when it is
also dated on or before the cutoff; an undated result is never dated evidence.

**The question's own listing is not evidence on it** (:func:`is_own_listing`): a result at a market question's
own URL (read as a page: no scheme, ``www.``, default port, tracking parameters, fragment or trailing slash) or
whose title is the question's text (the same word tokens, at least four) shares every word with the question
and tells nothing the forecasters did not see. A dataset question's URL is its data source (one Wikipedia list
for 1,591 questions), whose earlier snapshots are evidence: only the title rule applies to it.
A search of a corpus built from question listings returns it first: before this rule, 416 of 534 "high"
supervisors of a 2,000-question simulated run counted it, and for 108 it was the only evidence counted.

This is this project's rule, not a published method. A count of shared words rather than a BM25 score: a
BM25 score depends on the other documents of its collection (the inverse document frequency) and has no
fixed scale, so no one threshold means the same for five web results and for a corpus; a count of shared
words reads the same everywhere and every judgement can be checked by eye (the shared words are recorded,
:class:`~agent_schemas.ResultRelevance`). Words are not stemmed ("rate" and "rates" differ), so the rule
errs towards not counting.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from agent_schemas import ResultRelevance, SearchResult

__all__ = ["DATE_WORDS", "FORECASTING_WORDS", "MIN_SHARED_WORDS", "MIN_TITLE_TOKENS", "OWN_LISTING_REASON", "RELEVANCE_RULE",
           "TRACKING_PARAMETERS", "WORD_PATTERN", "content_words", "is_own_listing", "judge_results", "word_tokens"]

#: Word tokens: runs of two or more word characters (bm25s's default ``splitter``, lower-cased before use).
WORD_PATTERN = r"(?u)\b\w\w+\b"
_WORD = re.compile(WORD_PATTERN)
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)")
#: Month names and abbreviations: a date written in words is shared by coincidence, like its digits.
DATE_WORDS = frozenset(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec".split())
#: Words of forecasting itself (question templates, resolution texts, the supervisor's disagreement notes).
FORECASTING_WORDS = frozenset(
    "yes question questions resolve resolves resolved resolution forecast forecasts forecasting date "
    "probability likely chance odds member members says would could might must".split())
#: Distinct content words a relevant result shares with the question and the disagreement (count; all the
#: question's when it holds fewer).
MIN_SHARED_WORDS = 2
#: Name and version of the relevance rule (recorded in the supervisor's grounding rule).
RELEVANCE_RULE = (f"content-word overlap v2: a result is relevant when it shares >= {MIN_SHARED_WORDS} content "
                  "words with the question (and the disagreement, when it shares one with the question), "
                  ">= 1 of them from the question; the question's own listing (a market's URL, or its text as "
                  "title) never is")


def word_tokens(text: str) -> list[str]:
    """The lower-cased word tokens of ``text`` in order (:data:`WORD_PATTERN`), repeats kept.

    Examples
    --------
    >>> word_tokens("Will the ECB cut rates on 2025-10-30?")
    ['will', 'the', 'ecb', 'cut', 'rates', 'on', '2025', '10', '30']
    """
    return _WORD.findall(str(text).lower())


def content_words(text: str) -> frozenset[str]:
    """The distinct content words of ``text`` (module docstring): word tokens less stop words, numbers,
    dates and the words of forecasting.

    Examples
    --------
    >>> sorted(content_words("Will the ECB cut rates by 31st December 2025? Resolves YES if so."))
    ['cut', 'ecb', 'rates']
    """
    not_content = _not_content()
    return frozenset(w for w in word_tokens(text)
                     if w not in not_content and any(c.isalpha() for c in w) and not _ORDINAL.fullmatch(w))


@functools.cache
def _not_content() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN_PLUS  # noqa: PLC0415 - bm25s is imported where it is used, as in local_corpus

    return frozenset(STOPWORDS_EN_PLUS) | DATE_WORDS | FORECASTING_WORDS


#: The reason a judgement gives for the question's own listing (:func:`is_own_listing`).
OWN_LISTING_REASON = "not evidence: the question's own listing (what the forecasters already see)"


#: Query parameters that track a visit and do not name a page (dropped before two URLs are compared).
TRACKING_PARAMETERS = ("utm_", "ref", "fbclid", "gclid", "mc_cid", "mc_eid")
#: Word tokens a question's text needs before a result titled with it is taken for its listing (a one-word
#: question such as "Bitcoin?" shares its title with many pages).
MIN_TITLE_TOKENS = 4


def _page(url: Any) -> str:
    """``url`` as a page: host lower-cased without ``www.``, a default port or user info; path without a trailing
    slash; query without tracking parameters; no scheme or fragment. ``''`` for no URL, an unreadable one or a
    site's front page (which names no one question)."""
    if not isinstance(url, str) or not url.strip():
        return ""
    text = url.strip()
    try:
        parts = urlsplit(text if "//" in text else f"//{text}")
        host = (parts.hostname or "").rstrip(".").removeprefix("www.")
        port = parts.port
    except ValueError:  # e.g. "https://[::1/q": an unreadable URL names no page
        return ""
    path = parts.path.rstrip("/")
    if not host or not path:
        return ""
    query = "&".join(sorted(f"{k}={v}" for k, v in parse_qsl(parts.query, keep_blank_values=True)
                            if not k.lower().startswith(TRACKING_PARAMETERS)))
    return f"{host}{f':{port}' if port not in (None, 80, 443) else ''}{path}{'?' + query if query else ''}"


def is_own_listing(result: SearchResult, *, question: str, question_url: str | None = None) -> bool:
    """True when ``result`` is the question's own listing: at ``question_url`` (both read as pages: host without
    ``www.``, a default port or user info, path without trailing slash, query without tracking parameters, no
    scheme or fragment; a site's front page matches nothing), or titled with the question's text (the same word
    tokens, at least :data:`MIN_TITLE_TOKENS` of them).

    Pass ``question_url`` only when it is the question's own page (a market's listing): a dataset question's URL
    is its data source (one Wikipedia list, one ACLED page for thousands of questions), whose earlier snapshots
    are evidence.

    Examples
    --------
    >>> q = "Will the ECB cut rates in December?"
    >>> is_own_listing(SearchResult(title="will the ECB cut rates in december", snippet=""), question=q)
    True
    >>> is_own_listing(SearchResult(title="ECB minutes", url="https://www.m.com/q/7/?utm_source=x#c"), question=q,
    ...                question_url="http://m.com:80/q/7")
    True
    >>> [is_own_listing(SearchResult(title="ECB", url=u), question=q, question_url="https://m.com/market?id=7")
    ...  for u in ("https://m.com/market?id=8", "https://[::1/q", "https://m.com/")]
    [False, False, False]
    """
    own = _page(question_url)
    if own and _page(result.url) == own:
        return True
    title = word_tokens(result.title)
    return len(title) >= MIN_TITLE_TOKENS and title == word_tokens(question)


def judge_results(results: Sequence[SearchResult], *, question: str, disagreement: str,
                  cutoff_date: dt.date, question_url: str | None = None) -> list[ResultRelevance]:
    """Judge each search result as evidence for a disagreement about a question (the rule of the module
    docstring): relevant, and counted when also dated on or before ``cutoff_date``.

    Parameters
    ----------
    results : sequence of SearchResult
        The results of the disagreement's search (after the cutoff guard), in order.
    question : str
        The question's text.
    disagreement : str
        The disagreement's topic and description.
    cutoff_date : date
        The search's cutoff: a counted result is dated on or before it.
    question_url : str, optional
        The URL of the question's own page (a market's listing; not a dataset question's data source): a
        result there is its own listing (:func:`is_own_listing`), never relevant.

    Returns
    -------
    list of ResultRelevance
        One judgement per result, in order, with the shared words, the relevance, whether it counts and why.

    Examples
    --------
    >>> r = SearchResult(title="FIDE ratings list", snippet="Carlsen tops the October ratings", published=dt.date(2025, 10, 1))
    >>> j = judge_results([r], question="Will the ECB cut rates?", disagreement="timing of the cut",
    ...                   cutoff_date=dt.date(2025, 10, 26))[0]
    >>> (j.relevant, j.counted, j.reason)
    (False, False, 'not relevant: shares no content word with the question and the disagreement')
    >>> j = judge_results([r], question="Will the ECB cut rates?", disagreement="chess ratings",
    ...                   cutoff_date=dt.date(2025, 10, 26))[0]
    >>> (j.shared_words, j.relevant, j.reason)  # doctest: +NORMALIZE_WHITESPACE
    ([], False, "not relevant: shares no content word with the question; the disagreement's words do not count:
    it shares none with the question")
    """
    asked = content_words(question)
    own = content_words(disagreement)
    on_topic = bool(own & asked)  # a disagreement about the question: its words count too
    about = asked | own if on_topic else asked
    needed = min(MIN_SHARED_WORDS, len(asked))  # "Starmer out in 2025?" has one content word
    off_topic = "" if on_topic or not own else "; the disagreement's words do not count: it shares none with the question"
    out = []
    for r in results:
        shared = sorted(content_words(f"{r.title} {r.snippet}") & about)
        from_question = [w for w in shared if w in asked]
        own_listing = is_own_listing(r, question=question, question_url=question_url)
        relevant = len(shared) >= needed and bool(from_question) and not own_listing
        dated = r.published is not None and r.published <= cutoff_date
        listed = ", ".join(shared)
        if own_listing:
            reason = OWN_LISTING_REASON
        elif not shared:
            reason = f"not relevant: shares no content word with the question{' and the disagreement' if on_topic else ''}{off_topic}"
        elif not from_question:
            reason = f"not relevant: shares {listed} with the disagreement, none with the question"
        elif not relevant:
            reason = f"not relevant: shares 1 content word ({listed}), {needed} needed{off_topic}"
        elif r.published is None:
            reason = f"relevant (shares {listed}) but undated: not dated evidence"
        elif not dated:
            reason = f"relevant (shares {listed}) but dated {r.published.isoformat()}, after the cutoff {cutoff_date.isoformat()}"
        else:
            reason = f"relevant (shares {listed}), dated {r.published.isoformat()}"
        out.append(ResultRelevance(title=r.title, url=r.url, published=r.published, shared_words=shared,
                                   question_words=from_question, relevant=relevant, counted=relevant and dated,
                                   reason=reason))
    return out
