"""The relevance rule of agent_tools.relevance on a small case computed by hand."""

import datetime as dt
import doctest
import inspect

from bm25s.tokenization import Tokenizer

from agent_schemas import SearchResult
from agent_tools import relevance
from agent_tools.relevance import WORD_PATTERN, content_words, judge_results

QUESTION = "Will the ECB cut its deposit rate at its December 2025 meeting?"
DISAGREEMENT = "Inflation path before the meeting\nmember-0: inflation sticky; member-1: falling"
CUTOFF = dt.date(2025, 11, 9)


def _result(title, snippet, published):
    return SearchResult(title=title, url=f"https://ex.org/{len(title)}", snippet=snippet, published=published, source="fixed")


def test_content_words_leave_out_stop_words_numbers_dates_and_the_words_of_forecasting():
    # will, the, its, at: stop words; december, 2025: a date; nothing else is dropped
    assert content_words(QUESTION) == {"ecb", "cut", "deposit", "rate", "meeting"}
    # member, says, yes, resolves, likely: forecasting; 26th, 2025, 10: numbers; "how", "is": stop words
    assert content_words("member-0 says YES resolves likely on 2025-10-26 (26th) how is Carlsen") == {"carlsen"}
    assert content_words(DISAGREEMENT) == {"inflation", "path", "meeting", "sticky", "falling"}


def test_each_result_is_judged_by_the_words_it_shares_with_the_question_and_the_disagreement():
    results = [
        _result("ECB holds deposit rate", "Lagarde: the meeting kept rates at 2%", dt.date(2025, 10, 30)),
        _result("Rate of chess ratings", "Carlsen leads", dt.date(2025, 10, 26)),
        _result("Inflation path", "sticky services prices", dt.date(2025, 11, 1)),
        _result("ECB deposit rate cut odds", "", None),
        _result("ECB rate cut", "", dt.date(2025, 11, 10)),
        _result("2025-10-26", "December 2025 calendar, 26th", dt.date(2025, 10, 26)),
    ]
    got = judge_results(results, question=QUESTION, disagreement=DISAGREEMENT, cutoff_date=CUTOFF)
    assert [(j.shared_words, j.question_words, j.relevant, j.counted) for j in got] == [
        # holds, lagarde, kept, rates are not in the question or the disagreement ("rates" is not "rate")
        (["deposit", "ecb", "meeting", "rate"], ["deposit", "ecb", "meeting", "rate"], True, True),
        (["rate"], ["rate"], False, False),  # one word in common: chance
        (["inflation", "path", "sticky"], [], False, False),  # the disagreement's words only
        (["cut", "deposit", "ecb", "rate"], ["cut", "deposit", "ecb", "rate"], True, False),  # undated ("odds" is not content)
        (["cut", "ecb", "rate"], ["cut", "ecb", "rate"], True, False),  # after the cutoff
        ([], [], False, False),  # a date shared, in digits and in words, is not a content word
    ]
    assert [j.reason for j in got] == [
        "relevant (shares deposit, ecb, meeting, rate), dated 2025-10-30",
        "not relevant: shares 1 content word (rate), 2 needed",
        "not relevant: shares inflation, path, sticky with the disagreement, none with the question",
        "relevant (shares cut, deposit, ecb, rate) but undated: not dated evidence",
        "relevant (shares cut, ecb, rate) but dated 2025-11-10, after the cutoff 2025-11-09",
        "not relevant: shares no content word with the question and the disagreement",
    ]
    assert [(j.title, j.url, j.published) for j in got] == [(r.title, r.url, r.published) for r in results]


def test_the_words_of_a_disagreement_off_the_questions_subject_do_not_count():
    """The default embedded run: a disagreement on another subject, and a result sharing one generic word of the
    question and two of the disagreement."""
    question = "Will F1: The Movie win Best Film Editing at the 98th Academy Awards?"
    off = "The 2020-2021 season of Avatar: The Last Home\nThe 2020-2021 season of Avatar: The Last Home has changed"
    # (a news page: the same words as a question's title, "Will the Memphis Grizzlies finish with the best record in
    # the NBA?", make it another question's listing, never evidence)
    nba = _result("The Memphis Grizzlies chase the best record in the NBA", "home games this season", dt.date(2025, 12, 25))
    [j] = judge_results([nba], question=question, disagreement=off, cutoff_date=dt.date(2026, 1, 10))
    assert (j.shared_words, j.relevant) == (["best"], False)
    assert j.reason == ("not relevant: shares 1 content word (best), 2 needed; the disagreement's words do not count: "
                        "it shares none with the question")
    # the same result for a disagreement about the question: home and season count beside "best", but a page on
    # the NBA does not name the question's subject (F1), so it is still no evidence (relevance v3)
    on = "Best Film Editing this season\nmember-0: F1 is the favourite at home"
    [j] = judge_results([nba], question=question, disagreement=on, cutoff_date=dt.date(2026, 1, 10))
    assert (j.shared_words, j.question_words, j.subject, j.relevant, j.counted) == (
        ["best", "home", "season"], ["best"], ["f1"], False, False)
    assert j.reason == "not relevant: does not name the question's subject (f1); shares best, home, season"
    # a page on the film with the same words counts
    f1 = _result("F1 editors", "Best editing of the season: the F1 team at home", dt.date(2025, 12, 25))
    [j] = judge_results([f1], question=question, disagreement=on, cutoff_date=dt.date(2026, 1, 10))
    assert (j.shared_words, j.relevant, j.counted) == (["best", "editing", "f1", "home", "season"], True, True)


def test_a_question_with_one_content_word_needs_that_word_only():
    news = _result("Labour leadership", "Keir Starmer faces a leadership challenge", dt.date(2025, 6, 1))
    other = _result("Will Nadal win another Grand Slam?", "tennis", dt.date(2025, 6, 1))
    own = _result("Starmer out in 2025?", "", dt.date(2025, 6, 1))  # the question's own listing
    got = judge_results([news, other, own], question="Starmer out in 2025?",
                        disagreement="how likely Yes is\nmember-0 says 12%", cutoff_date=CUTOFF)
    assert [(j.shared_words, j.counted) for j in got] == [(["starmer"], True), ([], False), (["starmer"], False)]


def test_the_questions_own_listing_is_never_relevant_by_url_or_by_text():
    # a market on a site the platform table does not know: only its own URL marks its listing
    url = "https://www.markets.example/questions/123/ecb-cut/"
    same_page = [SearchResult(title="ECB page", url=u, snippet="ECB deposit rate cut, December meeting", published=CUTOFF)
                 for u in ("http://markets.example/questions/123/ecb-cut", "https://www.markets.example/questions/123/ecb-cut/?utm_source=feed#c",
                           "markets.example/questions/123/ecb-cut/")]
    other_page = SearchResult(title="ECB page", url="https://www.markets.example/questions/124/ecb-cut/",
                              snippet="ECB deposit rate cut, December meeting", published=CUTOFF)
    retitled = _result(QUESTION.upper().replace("?", " !"), "", CUTOFF)  # the same word tokens
    got = judge_results([*same_page, other_page, retitled], question=QUESTION, disagreement=DISAGREEMENT,
                        cutoff_date=CUTOFF, question_url=url)
    assert [j.counted for j in got] == [False, False, False, True, False]
    assert {j.reason for k, j in enumerate(got) if k != 3} == {relevance.OWN_LISTING_REASON}
    # without the question's URL only the text tells: the pages at its URL count again
    assert [j.counted for j in judge_results([*same_page, retitled], question=QUESTION, disagreement=DISAGREEMENT,
                                             cutoff_date=CUTOFF)] == [True, True, True, False]


def test_only_the_same_page_is_the_own_listing_and_no_url_makes_the_judgement_fail():
    doc = "ECB deposit rate cut, December meeting"

    def own(url, question_url, title="ECB page"):
        r = SearchResult(title=title, url=url, snippet=doc, published=CUTOFF)
        return judge_results([r], question=QUESTION, disagreement=DISAGREEMENT, cutoff_date=CUTOFF,
                             question_url=question_url)[0].reason == relevance.OWN_LISTING_REASON

    assert own("https://m.com/market?id=7&utm_campaign=x", "https://m.com/market?id=7")
    assert own("https://USER@M.com:443/q/7/", "http://m.com/q/7")
    assert not own("https://m.com/market?id=8", "https://m.com/market?id=7")  # another market of the same site
    assert not own("https://m.com/?utm=1", "https://m.com")  # a front page names no question
    assert not own("https://m.com:8443/q/7", "https://m.com/q/7")
    for bad in ("https://[::1/q", "", "q/7", "::::", "https://m.com:99999/q/7"):
        assert not own(bad, "https://m.com/q/7") and not own("https://m.com/q/7", bad)
    assert not own("https://m.com/q/7", None)
    # the title rule needs four word tokens: "Bitcoin?" shares its title with every page on Bitcoin
    short = SearchResult(title="Bitcoin", url="https://ex.org/btc", snippet="Bitcoin price record", published=CUTOFF)
    assert judge_results([short], question="Bitcoin?", disagreement="", cutoff_date=CUTOFF)[0].counted


def test_words_are_split_as_the_corpus_index_splits_them():
    assert inspect.signature(Tokenizer).parameters["splitter"].default == WORD_PATTERN
    result = doctest.testmod(relevance)
    assert result.attempted >= 4 and result.failed == 0
