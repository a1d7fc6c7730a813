"""A forecasting question's listing is never evidence on another question; relevance needs the question's subject
(agent_tools.listings, agent_tools.relevance v3). The rows are the cases of issue 35, item 2, and their near misses."""

import datetime as dt
import doctest

import pytest

from agent_schemas import SearchResult
from agent_tools import LocalCorpusSearch, listings
from agent_tools.listings import QUESTION_PAGES, listing_kind, platform_of
from agent_tools.relevance import judge_results, question_names, question_subject

CUTOFF = dt.date(2025, 11, 9)
MAN_UTD = "Will Manchester United finish in the top 10 of the Premier League 2025/26?"
BITCOIN = "Will Bitcoin close above $100,000 at the end of 2025?"
AXON = "Will AXON's market close price on 2025-11-16 be higher than its market close price on 2025-11-09?"
DISAGREEMENT = "how likely Yes is\nmember-0 says 30%, member-1 says 60%"


# --- each platform's question pages, and its other pages -----------------------------------------------------
@pytest.mark.parametrize("shape", QUESTION_PAGES, ids=lambda s: s.platform)
def test_each_platforms_documented_example_is_its_question_page(shape):
    assert platform_of(shape.example) == shape.platform
    # the same page written otherwise: another scheme, www., a trailing slash, tracking parameters, a fragment
    if not shape.scheme:
        bare = shape.example.split("://", 1)[1].removeprefix("www.")
        for url in (f"http://{bare}/", f"https://www.{bare}?utm_source=x#comments", bare):
            assert platform_of(url) == shape.platform, url


@pytest.mark.parametrize("url, platform", [
    # question pages: siblings and mirrors of one market are all question pages
    ("https://polymarket.com/event/premier-league-winner-2025-26", "Polymarket"),
    ("https://polymarket.com/event/premier-league-winner-2025-26/will-manchester-united-win", "Polymarket"),
    ("https://polymarket.com/market/will-bitcoin-reach-100k-in-2025", "Polymarket"),
    ("https://kalshi.com/markets/kxbtcy/bitcoin-yearly-close/kxbtcy-25dec31", "Kalshi"),
    ("https://www.predictit.org/markets/detail/8051/Which-party-will-win", "PredictIt"),
    ("https://manifold.markets/itsTomekK/premier-league-202526-will-manchest-PCQ8Oc8Edp", "Manifold"),
    ("https://manifold.markets/embed/itsTomekK/premier-league-202526-will-manchest", "Manifold"),
    ("https://www.metaculus.com/questions/40849", "Metaculus"),
    ("https://www.metaculus.com/c/risk/123/ai-incident/", "Metaculus"),
    ("https://www.infer-pub.com/questions/1285", "INFER (RAND Forecasting Initiative)"),
    ("https://www.randforecastinginitiative.org/questions/1462-will-the-sdf-collapse", "INFER (RAND Forecasting Initiative)"),
    ("https://www.gjopen.com/questions/3601-will-the-fed-cut", "Good Judgment Open"),
    ("forecastbench://polymarket/0x0784ce77446e73c4", "ForecastBench"),
    # the same platforms' other pages are not question pages
    ("https://polymarket.com/", None), ("https://polymarket.com/leaderboard", None),
    ("https://news.polymarket.com/p/the-oracle-weekly", None),
    ("https://kalshi.com/", None), ("https://www.predictit.org/markets", None),
    ("https://manifold.markets/itsTomekK", None), ("https://manifold.markets/browse/politics", None),
    ("https://www.metaculus.com/", None), ("https://www.metaculus.com/notebooks/123/an-essay/", None),
    ("https://www.metaculus.com/tournament/quarterly-cup/", None),
    ("https://www.infer-pub.com/", None), ("https://www.gjopen.com/leaderboards", None),
    ("forecastbench://source/acled", None),
    # other hosts, lookalike hosts and unreadable URLs
    ("https://notpolymarket.com/event/x", None), ("https://polymarket.com.evil.example/event/x", None),
    ("https://www.bbc.co.uk/sport/football/premier-league/table", None), ("https://[::1/q", None), ("", None),
])
def test_question_pages_are_recognised_by_host_and_path_shape(url, platform):
    assert platform_of(url) == platform


# --- the issue's cases, as a table ----------------------------------------------------------------------------
def _r(title, url, snippet="", published=dt.date(2025, 10, 30)):
    return SearchResult(title=title, url=url, snippet=snippet, published=published, source="fixed")


#: (case, question, result, counted, reason). Every listing row was counted under relevance v2.
CASES = [
    ("a sibling market", MAN_UTD,
     _r("Premier League Winner 2025/26", "https://polymarket.com/event/premier-league-winner-2025-26",
        "Manchester United, Manchester City and Arsenal in the Premier League title race. Volume $4m"),
     False, "not evidence: another forecasting question's listing (a question page of Polymarket)"),
    ("the same question on another platform", MAN_UTD,
     _r("Premier League 2025/26 - Will Manchester United finish in the top 10?",
        "https://manifold.markets/itsTomekK/premier-league-202526-will-manchest-PCQ8Oc8Edp",
        "Manchester United finish position in the Premier League"),
     False, "not evidence: another forecasting question's listing (a question page of Manifold)"),
    ("the same question on a mirror site: its resolution criteria", MAN_UTD,
     _r("Man Utd top-10 finish odds", "https://odds-aggregator.example/football/man-utd-top-10",
        'This market will resolve to "Yes" if Manchester United finish 10th or better in the 2025/26 Premier League.'),
     False, "not evidence: another forecasting question's listing (a page with resolution criteria)"),
    ("a different question sharing two words, on a mirror site: its title", MAN_UTD,
     _r("Will Manchester City top the table at Christmas 2025?", "https://odds-aggregator.example/q/8812",
        "Manchester City top the table in the Premier League"),
     False, "not evidence: another forecasting question's listing (titled as a forecasting question)"),
    ("another club sharing the words, on a news site: not the question's subject", MAN_UTD,
     _r("Manchester City top the table", "https://www.bbc.co.uk/sport/football/1",
        "City lead the Premier League after beating Arsenal"),
     False, ("not relevant: does not name the question's subject (manchester united); shares league, manchester, "
             "premier, top")),
    ("the question's subject on a news site", MAN_UTD,
     _r("United slump to 14th", "https://www.bbc.co.uk/sport/football/2",
        "Manchester United lost again and sit 14th in the Premier League"),
     True, "relevant (shares league, manchester, premier, united), dated 2025-10-30"),
    ("a 2021 Bitcoin question for a 2025 Bitcoin question", BITCOIN,
     _r("Will Bitcoin close 2021 above $46,000?", "https://manifold.markets/someone/will-bitcoin-close-2021-above-46000",
        "Bitcoin closed 2021 near $46,000; this market ended at the end of the year"),
     False, "not evidence: another forecasting question's listing (a question page of Manifold)"),
    ("the same 2021 question on a mirror site", BITCOIN,
     _r("Bitcoin above $46,000 at the end of 2021?", "https://odds-aggregator.example/q/77",
        "Bitcoin closed 2021 near $46,000"),
     False, "not evidence: another forecasting question's listing (titled as a forecasting question)"),
    ("Bitcoin on a news site", BITCOIN,
     _r("Bitcoin slides below $90,000", "https://news.example/markets/btc",
        "Bitcoin fell 8% this week; traders now see a close near $95,000 at the end of the year"),
     True, "relevant (shares bitcoin, close, end), dated 2025-10-30"),
    ("a sibling dataset question, titled with its text at the data source's URL", AXON,
     _r("Will AXON's market close price on 2025-11-09 be higher than its market close price on 2025-11-02?",
        "https://finance.yahoo.com/quote/AXON", "Axon Enterprise develops TASER devices and body cameras."),
     False, "not evidence: another forecasting question's listing (titled as a forecasting question)"),
    ("the data source itself", AXON,
     _r("AXON stock price | Axon Enterprise", "https://finance.yahoo.com/quote/AXON",
        "Axon Enterprise market close 412.30, up 2%"),
     True, "relevant (shares axon, close, market, price), dated 2025-10-30"),
    ("a platform's essay page: not a question page, judged by its words", BITCOIN,
     _r("Notes on Bitcoin's end-of-year close", "https://www.metaculus.com/notebooks/123/bitcoin-close/",
        "How Bitcoin's close has moved in past Decembers"),
     True, "relevant (shares bitcoin, close, end), dated 2025-10-30"),
]


@pytest.mark.parametrize("case, question, result, counted, reason", CASES, ids=[c[0] for c in CASES])
def test_the_issues_cases(case, question, result, counted, reason):
    [j] = judge_results([result], question=question, disagreement=DISAGREEMENT, cutoff_date=CUTOFF)
    assert (j.counted, j.reason) == (counted, reason)
    assert j.listing == ("" if not reason.startswith("not evidence") else reason.split("(", 1)[1].rstrip(")"))


def test_names_and_subjects_of_the_bundled_question_shapes():
    assert question_names(MAN_UTD) == (("manchester", "united"), ("premier", "league"))
    assert question_subject("Premier League 2025/26 - Will Manchester United finish in the top 10?") == ("manchester", "united")
    # an attribution names a source, not the subject
    assert question_names("According to Wikipedia, will Koneru Humpy have an Elo rating on 2024-07-28 that's at least "
                          "1% higher than on 2024-07-21?") == (("koneru", "humpy"), ("elo",))
    assert question_subject("Will Russia start a second mobilization wave before 2025, according to the Institute for "
                            "the Study of War?") == ("russia",)
    # a name runs across connectors; the notes after the question's "?" are not read
    assert question_names("Will the Bank of England cut rates? Stock splits are accounted for.") == (("bank", "england"),)
    # a question written without capitals names nothing: judged by its content words alone
    assert question_subject("will the ecb cut rates in december?") == ()
    [j] = judge_results([_r("ecb cut rates", "https://news.example/ecb", "")], question="will the ecb cut rates in december?",
                        disagreement="", cutoff_date=CUTOFF)
    assert (j.subject, j.counted) == ([], True)


def test_every_question_document_of_the_bundled_corpus_is_a_listing():
    """The bundled corpus is built from question listings: every document titled with a question is one; only the
    ForecastBench source descriptions (forecastbench://source/...) are not."""
    docs = LocalCorpusSearch.default().documents
    not_listings = [d for d in docs if listing_kind(SearchResult(title=d.title, url=d.url, snippet=d.text[:300])) is None]
    assert len(docs) > 4000 and not_listings
    assert {d.url.rsplit("/", 1)[0] for d in not_listings} == {"forecastbench://source"}


def test_the_modules_examples():
    result = doctest.testmod(listings)
    assert result.attempted >= 8 and result.failed == 0
