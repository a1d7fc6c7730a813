"""Dates as people write them (issue 29): each row of the table is read, with every reading it has; what is not a
date in a form of the table is not read."""

from __future__ import annotations

import datetime as dt
import doctest

import pytest

from benchmarks.protocol import written_dates
from benchmarks.protocol.written_dates import find_dates

MAR1, JAN3 = dt.date(2026, 3, 1), dt.date(2026, 1, 3)


@pytest.mark.parametrize("text, form, readings", [
    ("2026-03-01", "iso", [MAR1]), ("2026-3-1", "iso", [MAR1]), ("2026/03/01", "iso", [MAR1]),
    ("2026.03.01", "iso", [MAR1]),
    ("1 March 2026", "day_month", [MAR1]), ("1st of March, 2026", "day_month", [MAR1]), ("01-Mar-2026", "day_month", [MAR1]),
    ("1 MAR. 2026", "day_month", [MAR1]),
    ("March 1, 2026", "month_day", [MAR1]), ("Mar 1 2026", "month_day", [MAR1]), ("Mar. 1st, 2026", "month_day", [MAR1]),
    ("03/01/2026", "numeric", [MAR1, JAN3]), ("3/1/26", "numeric", [MAR1, JAN3]),  # month first, then day first
    ("01.03.2026", "numeric", [JAN3, MAR1]), ("01-03-2026", "numeric", [JAN3, MAR1]),
    ("13/01/2026", "numeric", [dt.date(2026, 1, 13)]), ("01/13/2026", "numeric", [dt.date(2026, 1, 13)]),  # one order only
    ("03/03/2026", "numeric", [dt.date(2026, 3, 3)]),  # both orders, one date
    # issue 35: compact, month-day with hyphens, a two-digit year after an apostrophe
    ("20260301", "compact", [MAR1]), ("Mar-01-2026", "month_day", [MAR1]), ("MAR-1-2026", "month_day", [MAR1]),
    ("1 Mar '26", "day_month", [MAR1]), ("1st March ’26", "day_month", [MAR1]), ("Mar 1 '26", "month_day", [MAR1]),
    ("March 1st, '26", "month_day", [MAR1]),
])
def test_each_form_is_read_with_all_its_readings(text, form, readings):
    (w,) = find_dates(f"due {text}.")
    assert (w.form, list(w.readings), f"due {text}."[w.start:w.end]) == (form, readings, text)


@pytest.mark.parametrize("text", [
    "2026-02-30", "31/04/2026", "12-34-5678",  # no such day
    "December 31", "March 2026", "the first of March",  # no year, no day, spelled out
    "version 1.2.2026.5", "1/2/2026/3", "x12 March 2026", "12024-12-15", "1.3.26",  # parts of something longer
    # issue 35, near misses of the compact form: versions, phone numbers, ids that are no date or run on
    "version 1.20260301", "build 20260301.2", "v3,20260301", "tel. +1 2026030112", "call 0020260301",
    "order 20261301", "ref 20260230", "id 120260301", "serial 18990301", "1 Mar 26",
])
def test_what_is_not_a_date_of_the_table_is_not_read(text):
    assert find_dates(text) == []


def test_dates_are_found_in_order_in_a_long_text():
    text = "Between June 21, 2025, and December 31, 2025 (see /2025/07/04/, 5 Aug 2025 and 2025-09-01T23:59:00Z)."
    assert [(w.readings[0], text[w.start:w.end]) for w in find_dates(text)] == [
        (dt.date(2025, 6, 21), "June 21, 2025"), (dt.date(2025, 12, 31), "December 31, 2025"),
        (dt.date(2025, 7, 4), "2025/07/04"), (dt.date(2025, 8, 5), "5 Aug 2025"), (dt.date(2025, 9, 1), "2025-09-01")]
    assert find_dates("İstanbul, 1 March 2026")[0].start == len("İstanbul, ")  # offsets are the text's own


def test_a_compact_date_is_read_inside_a_url_or_a_file_name():
    url = "https://www.ecb.europa.eu/press/pr/date/2026/html/ecb.mp20260305~2c5a7e.en.html"
    assert [(w.form, w.readings, url[w.start:w.end]) for w in find_dates(url)] == [
        ("compact", (dt.date(2026, 3, 5),), "20260305")]
    assert [w.readings for w in find_dates("minutes_20260305.pdf and PR-20260306")] == [
        (dt.date(2026, 3, 5),), (dt.date(2026, 3, 6),)]


def test_doctests_pass():
    assert doctest.testmod(written_dates).failed == 0
