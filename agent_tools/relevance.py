"""Is a search result evidence on what was searched for? Not a forecasting question's listing, naming the question's
subject and sharing content words with the question and the disagreement: the rule by which the supervisor's
coverage notes, and so its grounded confidence, count evidence.

Why
---
A search backend returns its best matches for the query, whatever the query was: a supervisor's query of just
"2025-10-26" returned chess ratings, and a BM25 corpus returns every document that shares one query word.
Counting such hits as evidence kept supervisors "high" on pages that say nothing about their question. Under
rule v2 (any two shared content words), 403 of the 404 supervisors that stayed "high" on ``run -p sim --n 2000``
counted as their only evidence the listings of forecasting questions, nearly all of *other* questions: a sibling
market, the same question on a mirror site, another question sharing two words ("Manchester City top the
table" for a Manchester United question). Under v3, 1 of the 1,112 supervisors of that run stays "high" and
none rests on a listing.

The rule (:data:`RELEVANCE_RULE`, v3)
-------------------------------------
The **content words** of a text (:func:`content_words`) are its lower-cased word tokens (runs of two or more
word characters: :data:`WORD_PATTERN`, the default splitter of bm25s's tokenizer, with which
:class:`~agent_tools.LocalCorpusSearch` indexes), less

* English stop words: NLTK's list as bm25s ships it (``bm25s.stopwords.STOPWORDS_EN_PLUS``);
* numbers and dates, which pages share by coincidence: tokens without a letter ("2025", "10"), ordinals
  ("31st") and month names and their abbreviations (:data:`DATE_WORDS`);
* the words of forecasting itself, which every question, resolution text and supervisor note holds
  whatever its subject (:data:`FORECASTING_WORDS`: "yes", "resolves", "question", "member", "says", ...).

The question's **names** (:func:`question_names`) are the runs of its content words written as names (a
capital letter anywhere in the token: "Manchester United", "ECB", "iPhone", "G20"), read in its question
sentence (the text up to its first ``?``; the notes after it are boilerplate) less its attributions
("according to Wikipedia", "according to the IAEA": a source, not the subject). A run goes on across spaces,
hyphens, a possessive ``'s`` and the lower-case connectors of :data:`NAME_CONNECTORS` ("Bank of England"), and
breaks at anything else. The question's **subject** (:func:`question_subject`) is its first name after the
question's verb when the text opens with one, at its start or after a lead clause ("Will ...", "Premier League
2025/26 - Will Manchester United ...", "[2024 Formula 1 Season] Will Sergio Perez ..."), else its first name.
A result **names** a name when its content words hold the name's last word and at least half of its words: a
person by the surname ("Messi"), "Manchester United" by "United", never by "Manchester" alone.

A result (its title and snippet) is **relevant** to a disagreement about a question when

1. it is **not a forecasting question's listing**: neither the question's own (:func:`is_own_listing`) nor any
   other question's, sibling or mirror (:func:`agent_tools.listings.listing_kind`: a platform's question page
   by host and path shape, a page with resolution criteria, a title that is a forecasting question). A listing
   tells what is asked and what the crowd thinks, not what happened;
2. it **names the question's subject**, when the question has names (a question written without a capital
   letter is judged by rule 3 alone): sharing words with the question is not enough, the result must be
   about the question's own entity ("Manchester City top the table" shares "Manchester" with a question on
   Manchester United and names another club);
3. it shares at least :data:`MIN_SHARED_WORDS` (2) distinct content words with the question's text (all of
   them when it holds fewer: "Starmer out in 2025?" has one; a question with none has no relevant result),
   or with the question's text and the disagreement's topic and description together, at least one of them
   from the question's text. The disagreement's words count only when the disagreement is about the question
   (it shares a content word with the question's text): the embedded model names disagreements such as "The
   2020-2021 season of Avatar: The Last Home" on a question about the Academy Awards, and its own words must
   not make its results relevant.

A relevant result is **counted** as evidence when it is also dated on or before the cutoff; an undated result
is never dated evidence.

**The question's own listing** (:func:`is_own_listing`) is a result at a market question's own URL (read as a
page: no scheme, ``www.``, default port, tracking parameters, fragment or trailing slash) or whose title is the
question's text (the same word tokens, at least four). A dataset question's URL is its data source (one
Wikipedia list for 1,591 questions), whose earlier snapshots are evidence: only the title rule applies to it.

This is this project's rule, not a published method. Names by capitalisation rather than a trained
named-entity tagger: a question is one short sentence, the rule can be checked by eye, and it needs no model
(the taggers' English models are not on the package registries this project installs from). A count of shared
words rather than a BM25 score: a BM25 score depends on the other documents of its collection (the inverse
document frequency) and has no fixed scale, so no one threshold means the same for five web results and for a
corpus; a count of shared words reads the same everywhere and every judgement can be checked by eye (the shared
words and the subject are recorded, :class:`~agent_schemas.ResultRelevance`). Words are not stemmed ("rate"
and "rates" differ), and a question written in title case makes every word a name, so the rule errs towards
not counting.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Sequence

from agent_schemas import ResultRelevance, SearchResult
from agent_tools.listings import TRACKING_PARAMETERS, listing_kind, url_page

__all__ = ["DATE_WORDS", "FORECASTING_WORDS", "LISTING_REASON", "MIN_SHARED_WORDS", "MIN_TITLE_TOKENS", "NAME_CONNECTORS",
           "NO_SUBJECT_REASON", "OWN_LISTING_REASON", "QUESTION_VERBS", "RELEVANCE_RULE", "TRACKING_PARAMETERS", "WORD_PATTERN",
           "content_words", "is_own_listing", "judge_results", "names_held", "question_names", "question_subject",
           "word_tokens"]

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
#: Lower-case words a name runs across ("Bank of England", "Institute for the Study of War").
NAME_CONNECTORS = frozenset("of the de du des la le von van der den del da di and for".split())
#: Verbs a yes/no question opens with; the subject is the first name after the first of them that opens the
#: text or follows a lead clause.
QUESTION_VERBS = frozenset("will would is are was were does do did has have can could should shall".split())
#: Name and version of the relevance rule (recorded in the supervisor's grounding rule).
RELEVANCE_RULE = ("relevance v3: never a forecasting question's listing (its own or another's: a platform's "
                  "question page, a page with resolution criteria, a title that is a forecasting question); names the "
                  "question's subject (its first name, by its last word); shares >= "
                  f"{MIN_SHARED_WORDS} content words with the question (and the disagreement, when it shares one "
                  "with the question), >= 1 of them from the question")
#: An attribution in a question: it names a source, not the subject.
_ATTRIBUTION = re.compile(r"\b(?:according to|as (?:reported|published|announced|stated) by)\b[^,;:?!()\[\]]*",
                          re.IGNORECASE)
#: What may stand between two words of one name: spaces, hyphens, slashes, ampersands, a possessive 's and the
#: connectors.
_NAME_GAP = re.compile(r"(?:[\s\-–/&]|['’]s\b|\b(?:" + "|".join(sorted(NAME_CONNECTORS)) + r")\b)*")
#: A lead clause's end: the question's verb may follow it ("By 31 December 2024, will ...").
_LEAD_END = re.compile(r"(?:[,:;\])]|\s[-–—])\s*$")


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


def question_names(question: str) -> tuple[tuple[str, ...], ...]:
    """The question's names (module docstring), in order of first appearance: each a tuple of its distinct
    lower-cased content words. Read in the question sentence (up to the first ``?``) less its attributions.

    Examples
    --------
    >>> question_names("Premier League 2025/26 - Will Manchester United finish in the top 10?")
    (('premier', 'league'), ('manchester', 'united'))
    >>> question_names("By 31 December 2024, will uranium be found in an Iranian facility, according to the IAEA?")
    (('iranian',),)
    >>> question_names("Will AXON's close on 2024-07-28 be higher? Stock splits are accounted for.")
    (('axon',),)
    >>> question_names("will the ecb cut rates?")
    ()
    """
    return tuple(name for _, name in _names_at(question))


def question_subject(question: str) -> tuple[str, ...]:
    """The question's subject (module docstring): its first name after the question's verb when the text opens
    with one (at its start or after a lead clause), else its first name; ``()`` for a question without names.

    Examples
    --------
    >>> question_subject("Premier League 2025/26 - Will Manchester United finish in the top 10?")
    ('manchester', 'united')
    >>> question_subject("[2024 Formula 1 Season] Will Sergio Perez finish 2nd in the Drivers Championship?")
    ('sergio', 'perez')
    >>> question_subject("What is the probability that the temperature at Lille Airport will be higher?")
    ('lille', 'airport')
    """
    named = _names_at(question)
    if not named:
        return ()
    sentence = _question_sentence(question)
    for verb in _WORD.finditer(sentence):
        if verb.group().lower() in QUESTION_VERBS and (verb.start() == 0 or _LEAD_END.search(sentence[:verb.start()])):
            after = [name for start, name in named if start > verb.start()]
            if after:
                return after[0]
            break
    return named[0][1]


def names_held(name: Sequence[str], words: frozenset[str] | set[str]) -> bool:
    """True when content ``words`` (a result's) name ``name``: they hold its last word and at least half of its
    words (a person by the surname; "Manchester United" by "united", never by "manchester" alone).

    Examples
    --------
    >>> [names_held(("manchester", "united"), frozenset(w)) for w in (["united"], ["manchester", "city"])]
    [True, False]
    """
    return bool(name) and name[-1] in words and 2 * sum(w in words for w in name) >= len(name)


def _question_sentence(question: str) -> str:
    head, mark, _ = str(question).partition("?")
    return head + mark


def _names_at(question: str) -> list[tuple[int, tuple[str, ...]]]:
    """(start offset in the question sentence, name) of each distinct name, in order."""
    sentence = _question_sentence(question)
    # an attribution names a source: blanked out (same length, so offsets hold), and it breaks a run
    text = _ATTRIBUTION.sub(lambda m: "," + " " * (len(m.group()) - 1), sentence)
    content = content_words(text)
    runs: list[tuple[int, list[str]]] = []
    last_end = None
    for token in _WORD.finditer(text):
        word = token.group()
        lower = word.lower()
        if lower not in content or word[0].isdigit() or not any(c.isupper() for c in word):
            continue
        if runs and last_end is not None and _NAME_GAP.fullmatch(text, last_end, token.start()):
            if lower not in runs[-1][1]:
                runs[-1][1].append(lower)
        else:
            runs.append((token.start(), [lower]))
        last_end = token.end()
    out: list[tuple[int, tuple[str, ...]]] = []
    for start, words in runs:
        name = tuple(words)
        if name not in (n for _, n in out):
            out.append((start, name))
    return out


#: The reason a judgement gives for the question's own listing (:func:`is_own_listing`).
OWN_LISTING_REASON = "not evidence: the question's own listing (what the forecasters already see)"
#: The reason a judgement gives for another forecasting question's listing (followed by why, in brackets:
#: :func:`agent_tools.listings.listing_kind`).
LISTING_REASON = "not evidence: another forecasting question's listing"
#: The reason a judgement gives for a result that does not name the question's subject (followed by the subject).
NO_SUBJECT_REASON = "not relevant: does not name the question's subject"


#: Word tokens a question's text needs before a result titled with it is taken for its listing (a one-word
#: question such as "Bitcoin?" shares its title with many pages).
MIN_TITLE_TOKENS = 4


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
    own = url_page(question_url)
    if own and url_page(result.url) == own:
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
        result there is its own listing (:func:`is_own_listing`), never relevant. Any other question's listing
        (:func:`agent_tools.listings.listing_kind`) is never relevant either.

    Returns
    -------
    list of ResultRelevance
        One judgement per result, in order, with the shared words, the question's subject, whether the result
        is a listing, the relevance, whether it counts and why.

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
    >>> m = SearchResult(title="ECB December cut?", url="https://polymarket.com/event/ecb-december", published=dt.date(2025, 10, 1))
    >>> judge_results([m], question="Will the ECB cut rates?", disagreement="timing of the cut",
    ...               cutoff_date=dt.date(2025, 10, 26))[0].reason
    "not evidence: another forecasting question's listing (a question page of Polymarket)"
    """
    asked = content_words(question)
    own = content_words(disagreement)
    subject = question_subject(question)
    on_topic = bool(own & asked)  # a disagreement about the question: its words count too
    about = asked | own if on_topic else asked
    needed = min(MIN_SHARED_WORDS, len(asked))  # "Starmer out in 2025?" has one content word
    off_topic = "" if on_topic or not own else "; the disagreement's words do not count: it shares none with the question"
    out = []
    for r in results:
        words = content_words(f"{r.title} {r.snippet}")
        shared = sorted(words & about)
        from_question = [w for w in shared if w in asked]
        listing = "own" if is_own_listing(r, question=question, question_url=question_url) else (listing_kind(r) or "")
        names_subject = not subject or names_held(subject, words)
        relevant = len(shared) >= needed and bool(from_question) and names_subject and not listing
        dated = r.published is not None and r.published <= cutoff_date
        listed = ", ".join(shared)
        if listing == "own":
            reason = OWN_LISTING_REASON
        elif listing:
            reason = f"{LISTING_REASON} ({listing})"
        elif not shared:
            reason = f"not relevant: shares no content word with the question{' and the disagreement' if on_topic else ''}{off_topic}"
        elif not from_question:
            reason = f"not relevant: shares {listed} with the disagreement, none with the question"
        elif len(shared) < needed:
            reason = f"not relevant: shares 1 content word ({listed}), {needed} needed{off_topic}"
        elif not names_subject:
            reason = f"{NO_SUBJECT_REASON} ({' '.join(subject)}); shares {listed}"
        elif r.published is None:
            reason = f"relevant (shares {listed}) but undated: not dated evidence"
        elif not dated:
            reason = f"relevant (shares {listed}) but dated {r.published.isoformat()}, after the cutoff {cutoff_date.isoformat()}"
        else:
            reason = f"relevant (shares {listed}), dated {r.published.isoformat()}"
        out.append(ResultRelevance(title=r.title, url=r.url, published=r.published, shared_words=shared,
                                   question_words=from_question, subject=list(subject), listing=listing,
                                   relevant=relevant, counted=relevant and dated, reason=reason))
    return out
