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
])
def test_each_form_is_read_with_all_its_readings(text, form, readings):
    (w,) = find_dates(f"due {text}.")
    assert (w.form, list(w.readings), f"due {text}."[w.start:w.end]) == (form, readings, text)


@pytest.mark.parametrize("text", [
    "2026-02-30", "31/04/2026", "12-34-5678",  # no such day
    "December 31", "March 2026", "the first of March",  # no year, no day, spelled out
    "version 1.2.2026.5", "1/2/2026/3", "x12 March 2026", "12024-12-15", "1.3.26",  # parts of something longer
])
def test_what_is_not_a_date_of_the_table_is_not_read(text):
    assert find_dates(text) == []


def test_dates_are_found_in_order_in_a_long_text():
    text = "Between June 21, 2025, and December 31, 2025 (see /2025/07/04/, 5 Aug 2025 and 2025-09-01T23:59:00Z)."
    assert [(w.readings[0], text[w.start:w.end]) for w in find_dates(text)] == [
        (dt.date(2025, 6, 21), "June 21, 2025"), (dt.date(2025, 12, 31), "December 31, 2025"),
        (dt.date(2025, 7, 4), "2025/07/04"), (dt.date(2025, 8, 5), "5 Aug 2025"), (dt.date(2025, 9, 1), "2025-09-01")]
    assert find_dates("İstanbul, 1 March 2026")[0].start == len("İstanbul, ")  # offsets are the text's own


def test_doctests_pass():
    assert doctest.testmod(written_dates).failed == 0
