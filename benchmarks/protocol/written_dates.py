"""Calendar dates as people write them in English text: every date a text names, with all its readings.

The leakage audit (:mod:`benchmarks.protocol.leakage`) asks of each prompt "does it name this date?", whatever form
the writer chose. :func:`find_dates` reads the forms in :data:`DATE_FORMS`, a finite table of regular
expressions, one row per form:

=============  ================================================  ==============================================
form           examples                                          reading
=============  ================================================  ==============================================
``iso``        ``2026-03-01``, ``2026-3-1``, ``2026/03/01``,     year, month, day (a year-first date is never
               ``2026.03.01``, ``2026-03-01T12:00Z``, a URL's    read day-first)
               ``/2026/03/01/``
``compact``    ``20260305``, a press release's                   year (19xx or 20xx), month, day: eight digits
               ``ecb.mp20260305~1a2b.en.html``,                  that run on into no other digit, a dot or a
               ``report_20260305.pdf``                           comma (a version, a phone number or a longer
                                                                 id is not read), and that make a valid date
``day_month``  ``1 March 2026``, ``1st of March, 2026``,         day, month name or abbreviation, year
               ``01-Mar-2026``, ``1 Sept. 2026``,
               ``5 Mar '26`` (an apostrophe's two-digit year)
``month_day``  ``March 1, 2026``, ``Mar 1 2026``,                month name or abbreviation, day, year
               ``March 1st, 2026``, ``Sunday, Mar. 1, 2026``,
               ``Mar-05-2026``, ``Mar 5 '26``
``numeric``    ``03/01/2026``, ``3/1/2026``, ``03.01.2026``,     both orders: month first (the US) and day
               ``03-01-2026``, ``3/1/26`` (two-digit year: with  first (most other places); ``26`` is 2026
               slashes only)
=============  ================================================  ==============================================

Month names and abbreviations (``Jan`` ... ``Dec``, ``Sept``, with or without a dot) are English, in any
case; ordinals ``st``/``nd``/``rd``/``th`` are accepted; a year has four digits except in the slashed numeric
form and after an apostrophe (``'26`` is 2026). A numeric date whose two numbers can both be a month (``03/01/2026``) has two readings (1 March and
3 January 2026); one that only one order makes a date (``13/01/2026``, ``01/13/2026``) has that one; what an
ambiguous date means is the caller's decision (the audit's is in :mod:`benchmarks.protocol.leakage`). Not read: dates
without a year (``December 31``), months without a day (``March 2026``), spelled-out numbers (``the first
of March``), a two-digit year without an apostrophe (``5 Mar 26``), other languages, and digits that run on
(``1.2.2026.5``, ``2026030512``, ``v1.20260305``). The table is the specification; its
tests (``tests/benchmarks/test_written_dates.py``) have a row per form.

Why a table and not a parser: ``dateutil.parser`` (installed with pandas) reads one date from a string that
is a date, filling missing parts from a default (``"March 2026"`` becomes today's day of March); it does not
find the dates in a text (``fuzzy=True`` fails on two dates in one string), and it reads ``03/01/2026`` one
way, chosen by ``dayfirst``. A finite table finds every date in a prompt and says exactly what is read.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

__all__ = ["DATE_FORMS", "WrittenDate", "find_dates", "lowercase"]

_MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4, "may": 5,
    "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9, "sept": 9, "sep": 9,
    "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\b\.?"
_ORDINAL = r"(?:st|nd|rd|th)?"
_NOT_AFTER = r"(?!\d|[.\-/]\d)"  # a date does not run on into more digits
#: A written year: four digits, or two after an apostrophe (``'26``: 2026).
_YEAR = r"(?:(?P<year>\d{4})|['‘’](?P<short_year>\d{2}))(?!\d)"

#: The forms read: ``(name, pattern, characters that may not precede it)``, matched on the lowercased text.
#: Named groups ``year`` (or ``short_year``, two digits), ``month`` and ``day`` (a month name or a number), or
#: ``a`` and ``b`` for the two numbers of a numeric date. See the module docstring. (The preceding-character rule
#: is checked outside the pattern: a pattern that starts with a digit or a letter is found much faster, and so a
#: leading number is written ``\d\d{3}`` or ``\d\d?``, not ``\d{4}`` or ``\d{1,2}``: the same matches, but a
#: pattern that starts with a repeat is tried at every position of the text instead of only at its digits.)
DATE_FORMS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("iso", re.compile(rf"(?P<year>\d\d{{3}})(?P<sep>[-/.])(?P<month>\d{{1,2}})(?P=sep)(?P<day>\d{{1,2}}){_NOT_AFTER}"), "0123456789."),
    ("compact", re.compile(r"(?P<year>(?:19|20)\d\d)(?P<month>0[1-9]|1[0-2])(?P<day>0[1-9]|[12]\d|3[01])(?!\d|[.,]\d)"),
     "0123456789.,+"),
    ("day_month", re.compile(rf"(?P<day>\d\d?){_ORDINAL}(?:\s+of)?[\s\-]+{_MONTH},?[\s\-]+{_YEAR}"),
     "0123456789.-/_abcdefghijklmnopqrstuvwxyz"),
    ("month_day", re.compile(rf"{_MONTH}[\s\-]+(?P<day>\d{{1,2}}){_ORDINAL},?[\s\-]+{_YEAR}"),
     "0123456789_abcdefghijklmnopqrstuvwxyz"),
    ("numeric", re.compile(rf"(?P<a>\d\d?)(?P<sep>[/.\-])(?P<b>\d{{1,2}})(?P=sep)(?P<year>\d{{4}}){_NOT_AFTER}"), "0123456789.-/"),
    ("numeric", re.compile(rf"(?P<a>\d\d?)/(?P<b>\d{{1,2}})/(?P<year>\d{{2}}){_NOT_AFTER}"), "0123456789.-/"),
)


def lowercase(text: str) -> str:
    """``text`` in lower case, character for character (same length, so offsets carry over)."""
    low = text.lower()
    if len(low) != len(text):  # a character whose lower case is longer (e.g. 'İ'): keep it as it is
        low = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    return low


@dataclass(frozen=True)
class WrittenDate:
    """One date written in a text.

    Attributes
    ----------
    start, end : int
        Character offsets of the written date in the text (``text[start:end]``).
    form : str
        The row of :data:`DATE_FORMS` that read it.
    readings : tuple of datetime.date
        The calendar dates it may name: one, or two for a numeric date whose numbers can be read in either
        order (month first, then day first).
    """

    start: int
    end: int
    form: str
    readings: tuple[dt.date, ...]


def _date(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def _readings(form: str, m: re.Match[str]) -> tuple[dt.date, ...]:
    groups = m.groupdict()
    year = int(m["year"]) if groups.get("year") else 2000 + int(m["short_year"])
    if form == "numeric":
        year += 2000 if len(m["year"]) == 2 else 0
        a, b = int(m["a"]), int(m["b"])
        candidates = (_date(year, a, b), _date(year, b, a))  # month first (US), then day first
    else:
        month = int(m["month"]) if m["month"].isdigit() else _MONTHS[m["month"]]
        candidates = (_date(year, month, int(m["day"])),)
    return tuple(dict.fromkeys(d for d in candidates if d is not None))


def find_dates(text: str) -> list[WrittenDate]:
    """Every date written in ``text`` in a form of :data:`DATE_FORMS`, in order of position.

    Parameters
    ----------
    text : str
        Any text (a prompt, a question's background).

    Returns
    -------
    list of WrittenDate
        One per written date that names at least one valid calendar date (``2026-02-30`` is not a date).

    Examples
    --------
    >>> [(w.form, [d.isoformat() for d in w.readings]) for w in find_dates("Due 1st March 2026, not 03/01/2026.")]
    [('day_month', ['2026-03-01']), ('numeric', ['2026-03-01', '2026-01-03'])]
    """
    low = lowercase(text)
    found: dict[tuple[int, int], WrittenDate] = {}
    for form, rx, not_before in DATE_FORMS:
        m = rx.search(low)
        while m is not None:
            if m.start() > 0 and low[m.start() - 1] in not_before:
                m = rx.search(low, m.start() + 1)  # as a lookbehind would: try again one character on
                continue
            readings = _readings(form, m)
            if readings and not any(s <= m.start() < e or m.start() <= s < m.end() for s, e in found):
                found[(m.start(), m.end())] = WrittenDate(m.start(), m.end(), form, readings)
            m = rx.search(low, m.end())
    return sorted(found.values(), key=lambda w: w.start)
