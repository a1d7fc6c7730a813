"""Numbers formatted for reading: the one place the page and the terminal table format values.

Conventions: probabilities and scores to 3 decimals (``0.213``), differences signed with a real minus
sign (``+0.012``, ``−0.034``), token counts with thousands separators (``2,943``; ``12.3k`` where space is
short), USD to two significant decimals below one cent (``$0.0042``), and a value that is missing says so
(``unknown``, ``not available``) instead of printing ``nan`` or ``None``.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["is_missing", "fmt_count", "fmt_compact", "fmt_delta", "fmt_interval", "fmt_pct", "fmt_prob", "fmt_usd",
           "readable_digits"]

MINUS = "\u2212"
NOT_AVAILABLE = "not available"


def is_missing(x: Any) -> bool:
    """True for None, NaN and values that are not numbers."""
    if x is None:
        return True
    try:
        return math.isnan(float(x))
    except (TypeError, ValueError):
        return True


def fmt_prob(x: Any, digits: int = 3, missing: str = "—") -> str:
    """A probability or a score (Brier, log loss, ECE) with ``digits`` decimals; ``missing`` when absent.

    >>> fmt_prob(0.21349), fmt_prob(None), fmt_prob(float("nan"))
    ('0.213', '—', '—')
    """
    return missing if is_missing(x) else f"{float(x):.{digits}f}"


def fmt_delta(x: Any, digits: int = 3, missing: str = "—") -> str:
    """A signed difference (``+0.012``, ``−0.034``; a true minus sign so columns align).

    >>> fmt_delta(-0.0342), fmt_delta(0.01), fmt_delta(None)
    ('−0.034', '+0.010', '—')
    """
    if is_missing(x):
        return missing
    s = f"{float(x):+.{digits}f}"
    if s.lstrip("+-").strip("0.") == "":  # -0.000 rounds to zero: no sign
        return f"{0:.{digits}f}"
    return s.replace("-", MINUS)


#: Most decimals :func:`readable_digits` gives.
MAX_DIGITS = 6


def readable_digits(*values: Any, digits: int = 3) -> int:
    """The fewest decimals, at least ``digits`` (at most :data:`MAX_DIGITS`), at which every non-zero value
    reads non-zero and two different values read differently.

    So a real interval such as [-0.0034, +0.0012] never reads [0.00, 0.00] or [-0.00, 0.00].

    >>> readable_digits(-0.0034, 0.0012, digits=2), readable_digits(0.18, 0.251, digits=2), readable_digits(0.25, 0.25, digits=2)
    (3, 2, 2)
    >>> readable_digits(-2e-17, 3e-17, digits=2)  # floating-point noise around an exact zero
    2
    """
    # below half a unit of the last digit shown is rounding noise (a method equal to mean up to 1e-17), read as 0
    nums = [0.0 if abs(v) < 0.5 * 10.0 ** -MAX_DIGITS else v for v in (float(v) for v in values if not is_missing(v))]
    for d in range(digits, MAX_DIGITS):
        shown = [round(v, d) for v in nums]
        if all(r != 0 for v, r in zip(nums, shown) if v != 0) and len(set(shown)) == len(set(nums)):
            return d
    return MAX_DIGITS


def fmt_interval(low: Any, high: Any, digits: int = 3, *, signed: bool = False) -> str:
    """``[low, high]`` with at least ``digits`` decimals and as many more as :func:`readable_digits` needs,
    or ``not available`` when either bound is NaN (too few clusters).

    >>> fmt_interval(0.18, 0.251), fmt_interval(-0.02, 0.041, signed=True), fmt_interval(float("nan"), 0.2)
    ('[0.180, 0.251]', '[−0.020, +0.041]', 'not available')
    >>> fmt_interval(-0.0034, 0.0012, 2, signed=True)
    '[−0.003, +0.001]'
    """
    if is_missing(low) or is_missing(high):
        return NOT_AVAILABLE
    f = fmt_delta if signed else fmt_prob
    d = readable_digits(low, high, digits=digits)
    if d > digits:  # the noise read as zero prints as zero too
        low, high = (0.0 if abs(float(v)) < 0.5 * 10.0 ** -MAX_DIGITS else v for v in (low, high))
    return f"[{f(low, d)}, {f(high, d)}]"


def fmt_count(x: Any, missing: str = "—") -> str:
    """A count (tokens, calls) rounded to a whole number with thousands separators.

    >>> fmt_count(2943.3333), fmt_count(1234567), fmt_count(None)
    ('2,943', '1,234,567', '—')
    """
    return missing if is_missing(x) else f"{round(float(x)):,}"


def fmt_compact(x: Any, missing: str = "—") -> str:
    """A count in at most 6 characters: ``943``, ``2.9k``, ``12.3k``, ``1.2M``.

    >>> fmt_compact(943), fmt_compact(2943.3), fmt_compact(123456), fmt_compact(1.25e6)
    ('943', '2.9k', '123k', '1.2M')
    """
    if is_missing(x):
        return missing
    v = float(x)
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= div:
            q = v / div
            return f"{q:.1f}{suffix}" if abs(q) < 100 else f"{q:.0f}{suffix}"
    return f"{v:.0f}"


def fmt_usd(x: Any, missing: str = "unknown") -> str:
    """USD: ``$1.23``, ``$0.0042`` below one cent, ``$0`` for zero; ``unknown`` when the price is unknown.

    >>> fmt_usd(1.234), fmt_usd(0.004216), fmt_usd(0.0), fmt_usd(None)
    ('$1.23', '$0.0042', '$0', 'unknown')
    """
    if is_missing(x):
        return missing
    v = float(x)
    if v == 0:
        return "$0"
    if abs(v) >= 0.01:
        return f"${v:,.2f}"
    digits = 1 - math.floor(math.log10(abs(v)))  # two significant digits
    return f"${v:.{digits}f}"


def fmt_pct(x: Any, digits: int = 0, missing: str = "—") -> str:
    """A fraction as a percent: ``0.833`` -> ``83%``.

    >>> fmt_pct(0.8333), fmt_pct(1.0), fmt_pct(None)
    ('83%', '100%', '—')
    """
    return missing if is_missing(x) else f"{100 * float(x):.{digits}f}%"
