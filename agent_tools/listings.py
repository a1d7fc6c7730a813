"""Is a search result a forecasting question's listing? A question page of a forecasting platform (any question:
the same one, a sibling market, another question that shares its words) or a page shaped like one elsewhere.

Why
---
A question's listing says what is asked, how it resolves and, on a market, what the crowd thinks: what the
forecasters already see, not evidence about the world. A search of a corpus built from listings (the bundled
ForecastBench corpus) or of the web (markets rank high for their own words) returns listings first: on ``run -p sim
--n 2000``, 403 of the 404 supervisors that stayed "high" under relevance rule v2 counted as their only evidence
listings (1,624 counted items from polymarket.com, 365 from metaculus.com, 291 from manifold.markets, ...): a
sibling market, the same question on a mirror site, another question sharing two words.
:func:`agent_tools.relevance.judge_results` never counts a listing as evidence.

The rule (:func:`listing_kind`)
-------------------------------
A result is a question's listing when

1. **its URL is a platform's question page** (:data:`QUESTION_PAGES`: the platform's hosts, ``www.`` and other
   subdomains included, and the path shape of its question pages; a platform's front page, leaderboard, user
   profile or blog is not a question page); or
2. **its page reads like a question page** (a mirror, an aggregator, a corpus built from listings, whatever the
   host): its title or snippet holds the resolution boilerplate of question pages (:data:`RESOLUTION_LANGUAGE`:
   "This market will resolve to Yes if", "This question resolves as YES", "resolved as No"); or
3. **its title is a forecasting question** (:func:`is_forecasting_title`): read up to its first ``?`` (all of it
   when a search backend cut it short), it opens with "Will" or "What is the probability" (:data:`QUESTION_OPENER`,
   at its start or after a lead clause: "By 31 December 2024, will", "[2024 Formula 1 Season] Will", "Premier
   League 2025/26 - Will"), or it is a question naming a time frame (:data:`TIME_FRAME`: a year, an ISO date, a
   month, "end of the season": "Bitcoin above $100k by 2025?"). That is the shape of a question's title on any
   site, and of the corpus documents titled with ForecastBench questions.

Rule 3 also takes a news headline written as a forecasting question ("Will the Fed cut rates in September?")
for a listing: the rule errs towards not counting, as :mod:`agent_tools.relevance` does. A question headline
that neither opens with "Will" nor names a time frame ("Is the Fed done cutting?") stays evidence.

This is this project's rule, not a published method. The path shapes of the platform table were read from the
platforms' question URLs and the bundled ForecastBench data; each entry carries one example URL, which is tested.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from agent_schemas import SearchResult

__all__ = ["QUESTION_OPENER", "QUESTION_PAGES", "RESOLUTION_LANGUAGE", "TIME_FRAME", "TRACKING_PARAMETERS",
           "QuestionPageShape", "is_forecasting_title", "listing_kind", "platform_of", "url_page"]


@dataclass(frozen=True)
class QuestionPageShape:
    """The question pages of one forecasting platform.

    Attributes
    ----------
    platform : str
        The platform's name, as a judgement names it.
    hosts : tuple of str
        Its hosts without ``www.`` (a subdomain of one matches too). A host without a dot is a scheme's
        document id (``forecastbench://<source>/<id>``): ``scheme`` must match then.
    path : str
        A regular expression the page's path (no trailing slash) must match in full.
    example : str
        One question page's URL, as the platform writes it (tested).
    scheme : str
        A URL scheme the page must have (``""``: any).
    """

    platform: str
    hosts: tuple[str, ...]
    path: str
    example: str
    scheme: str = ""


#: Forecasting platforms and the path shapes of their question pages (read from the platforms' question URLs and
#: the bundled ForecastBench data). Manifold's question pages are ``/<user>/<slug>``: its two-segment section pages
#: are left out by name.
QUESTION_PAGES: tuple[QuestionPageShape, ...] = (
    QuestionPageShape("Polymarket", ("polymarket.com",), r"/(?:event|market|markets)/[^/]+(?:/[^/]+)?",
                      "https://polymarket.com/event/fed-decision-in-december/fed-decreases-interest-rates-by-25-bps"),
    QuestionPageShape("Kalshi", ("kalshi.com",), r"/(?:markets|events)/[^/]+(?:/[^/]+)*",
                      "https://kalshi.com/markets/kxfeddecision/fed-meeting/kxfeddecision-25dec"),
    QuestionPageShape("PredictIt", ("predictit.org",), r"/markets/detail/\d+(?:/[^/]+)?",
                      "https://www.predictit.org/markets/detail/8051/Which-party-will-win-the-2024-US-presidential-election"),
    QuestionPageShape("Manifold", ("manifold.markets",),
                      r"/(?:embed/)?(?!(?:browse|news|topic|topics|leaderboards?|about|home|notifications|messages|"
                      r"leagues?|explore|search|create|questions|markets|users?|api)/)[^/]+/[^/]+",
                      "https://manifold.markets/itsTomekK/premier-league-202526-will-manchest-PCQ8Oc8Edp"),
    QuestionPageShape("Metaculus", ("metaculus.com",), r"/(?:questions|c/[^/]+)/\d+(?:/[^/]+)?",
                      "https://www.metaculus.com/questions/17179/infrastructure-disaster-from-ai-before-2025/"),
    QuestionPageShape("INFER (RAND Forecasting Initiative)", ("infer-pub.com", "randforecastinginitiative.org"),
                      r"/questions/\d+(?:-[^/]*)?", "https://www.randforecastinginitiative.org/questions/1290"),
    QuestionPageShape("Good Judgment Open", ("gjopen.com",), r"/questions/\d+(?:-[^/]*)?",
                      "https://www.gjopen.com/questions/3601-will-the-fed-cut-rates-before-1-july-2025"),
    QuestionPageShape("ForecastBench", ("acled", "dbnomics", "fred", "infer", "manifold", "metaculus", "polymarket",
                                        "wikipedia", "yfinance"),
                      r"/[^/]+", "forecastbench://polymarket/0x0784ce77", scheme="forecastbench"),
)

#: The resolution boilerplate of question pages (case-insensitive): a page that says how *it* resolves is a
#: question's page, whatever its host.
RESOLUTION_LANGUAGE = re.compile(
    r"\bthis (?:market|question|contract|prediction)\b[^.?!]{0,40}?\bresol(?:ve|ves|ved|ution)\b"
    r"|\bresol(?:ve|ves|ved)\s+(?:to\s+|as\s+)?[\"'“”‘’*]{0,2}(?:yes|no)\b"
    r"|\bresolution criteria\b",
    re.IGNORECASE)
#: The openers of a forecasting question's title (case-insensitive), at its start or after a lead clause.
QUESTION_OPENER = re.compile(r"(?:will|what\s+(?:is|are)\s+the\s+(?:probability|chance|odds|likelihood))\b", re.IGNORECASE)
_LEAD_END = re.compile(r"[,:;\])]\s*|\s[-–—]\s*")
_MONTHS = ("January|February|March|April|May|June|July|August|September|October|November|December|"
           "Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec")
#: A time frame in a question's title: a year, an ISO date, a month (capitalised), or "end of"/"this"/"next" a
#: period.
TIME_FRAME = re.compile(
    rf"(?<!\d)(?:19|20)\d\d(?!\d)|\b(?:{_MONTHS})\b\.?"
    r"|(?i:\b(?:end of|this|next)\s+(?:the\s+)?(?:year|month|week|season|quarter|decade)\b)")

#: Query parameters that track a visit and do not name a page (dropped before two URLs are compared).
TRACKING_PARAMETERS = ("utm_", "ref", "fbclid", "gclid", "mc_cid", "mc_eid")


def _split(url: Any) -> tuple[str, str, str, int | None, str] | None:
    """(scheme, host, path, port, query) of ``url``: host lower-cased without ``www.``, a trailing dot or user
    info; path without trailing slash. None for no URL or an unreadable one."""
    if not isinstance(url, str) or not url.strip():
        return None
    text = url.strip()
    try:
        parts = urlsplit(text if "//" in text else f"//{text}")
        host = (parts.hostname or "").rstrip(".").removeprefix("www.")
        port = parts.port
    except ValueError:  # e.g. "https://[::1/q": an unreadable URL names no page
        return None
    return parts.scheme.lower(), host, parts.path.rstrip("/"), port, parts.query


def url_page(url: Any) -> str:
    """``url`` as a page: host lower-cased without ``www.``, a default port or user info; path without a trailing
    slash; query without tracking parameters; no scheme or fragment. ``''`` for no URL, an unreadable one or a
    site's front page (which names no one question).

    Examples
    --------
    >>> url_page("https://USER@www.M.com:443/q/7/?utm_source=x&id=3#c")
    'm.com/q/7?id=3'
    >>> [url_page(u) for u in ("https://m.com/", "https://[::1/q", None)]
    ['', '', '']
    """
    split = _split(url)
    if split is None:
        return ""
    _, host, path, port, query = split
    if not host or not path:
        return ""
    kept = "&".join(sorted(f"{k}={v}" for k, v in parse_qsl(query, keep_blank_values=True)
                           if not k.lower().startswith(TRACKING_PARAMETERS)))
    return f"{host}{f':{port}' if port not in (None, 80, 443) else ''}{path}{'?' + kept if kept else ''}"


_COMPILED = tuple((shape, re.compile(shape.path)) for shape in QUESTION_PAGES)


def platform_of(url: Any) -> str | None:
    """The platform (:data:`QUESTION_PAGES`) whose question page ``url`` is, else None (not a question page, or an
    unreadable URL).

    Examples
    --------
    >>> platform_of("https://www.metaculus.com/questions/17179/infrastructure-disaster/")
    'Metaculus'
    >>> [platform_of(u) for u in ("https://www.metaculus.com/", "https://manifold.markets/itsTomekK",
    ...                           "forecastbench://source/acled", "https://polymarket.com/leaderboard")]
    [None, None, None, None]
    """
    split = _split(url)
    if split is None:
        return None
    scheme, host, path, _, _ = split
    for shape, pattern in _COMPILED:
        if shape.scheme and scheme != shape.scheme:
            continue
        if any(host == h or host.endswith(f".{h}") for h in shape.hosts) and pattern.fullmatch(path):
            return shape.platform
    return None


def is_forecasting_title(title: str) -> bool:
    """True when ``title`` is a forecasting question's title (rule 3 of the module docstring): up to its first
    ``?`` (all of it when it has none), it opens with :data:`QUESTION_OPENER` at its start or after a lead
    clause, or it ends with ``?`` and names a time frame (:data:`TIME_FRAME`).

    Examples
    --------
    >>> [is_forecasting_title(t) for t in ("By 31 December 2024, will uranium be discovered in Iran?",
    ...                                     "Will the effective yield of the ICE BofA US High Yield Index have increased by…",
    ...                                     "Bitcoin above $100k by 2025?", "Premier League 2025/26 - Will Arsenal win?")]
    [True, True, True, True]
    >>> [is_forecasting_title(t) for t in ("Is the Fed done cutting?", "Fed cuts rates in September",
    ...                                     "Why markets fell? Traders blame the Fed in 2025", "Willow Smith tours")]
    [False, False, False, False]
    """
    head, mark, _ = str(title).partition("?")
    if mark and TIME_FRAME.search(head):
        return True
    starts = [len(head) - len(head.lstrip()), *(m.end() for m in _LEAD_END.finditer(head))]
    return any(QUESTION_OPENER.match(head, start) for start in starts)


def listing_kind(result: SearchResult) -> str | None:
    """Why ``result`` is a forecasting question's listing (the rule of the module docstring), or None when it is
    not one: ``"a question page of <platform>"``, ``"a page with resolution criteria"`` or ``"titled as a
    forecasting question"``.

    Examples
    --------
    >>> listing_kind(SearchResult(title="Fed decision", url="https://polymarket.com/event/fed-decision"))
    'a question page of Polymarket'
    >>> listing_kind(SearchResult(title="Fed odds", url="https://mirror.example/fed",
    ...                           snippet='This market will resolve to "Yes" if the Fed cuts.'))
    'a page with resolution criteria'
    >>> listing_kind(SearchResult(title="Fed cuts rates by 25bp", url="https://news.example/fed",
    ...                           snippet="The Fed cut its policy rate on Wednesday."))
    """
    platform = platform_of(result.url)
    if platform is not None:
        return f"a question page of {platform}"
    if RESOLUTION_LANGUAGE.search(result.title) or RESOLUTION_LANGUAGE.search(result.snippet):
        return "a page with resolution criteria"
    if is_forecasting_title(result.title):
        return "titled as a forecasting question"
    return None
