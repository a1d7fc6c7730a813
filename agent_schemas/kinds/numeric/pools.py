"""Pooling rules of the numeric kind: members' CDFs (201-point grids) into one CDF per question.

Every rule takes a **stack** of shape ``(n_questions, n_members, 201)``: each member's grid CDF
(:mod:`agent_schemas.kinds.numeric.grid`), valid (:func:`~agent_schemas.kinds.numeric.grid.check_cdf`), with a
member that did not answer given as a row of NaN. It returns ``(n_questions, 201)``; a question with no member
pools to a row of NaN. Every pooled CDF is valid for the question whose members' CDFs are (each rule keeps
monotonicity, closed ends at 0 and 1, and the least mass beyond open bounds). All are vectorised over questions
and work through the stack in chunks of about :data:`CHUNK_VALUES` values, so the temporaries stay in cache and
memory stays bounded (a 10,000 x 100 x 201 stack is 1.6 GB; ``benchmarks/perf/numeric_kind.py`` measures them).

Rules (names as in :data:`POOLS`)
---------------------------------
``mean``
    The **linear pool** (a mixture): ``F(t) = (1/m) sum_i F_i(t)``, point by point (Stone 1961). Spreads out
    as members disagree: two confident members far apart pool to a bimodal distribution.
``quantile_average``
    **Quantile averaging** (Vincentization): average the members' quantile functions,
    ``Q(a) = (1/m) sum_i Q_i(a)``, then invert to a CDF (Vincent 1912; Ratcliff 1979; Lichtendahl,
    Grushka-Cockayne & Winkler 2013, who show it is sharper than the linear pool). Keeps the common shape:
    members that are one shape shifted pool to that shape at the mean shift. Quantiles are censored at open
    bounds (mass beyond a bound sits at the bound), so the pooled mass below the range is the least of the
    members' (``F_0 = min_i F_i,0``) and so is the mass above it (``F_200 = max_i F_i,200``). The members'
    quantile functions (linear between their grid knots) are averaged **exactly** at the levels ``k / 1000``
    (:data:`VINCENT_LEVELS`; through two per-question histograms of the members' grid values, with no member
    inverted one by one) and at the ends of the pooled support; the pooled CDF is linear in the level between
    them, so within 1 / 1000 of the exact Vincentization at every grid point.
``median``
    The **point-wise median** of the CDFs, ``F(t) = median_i F_i(t)`` (the mean of the two middle members for
    an even count), as Metaculus ``forecasting-tools`` aggregates numeric forecasts (it equals the CDF of the
    members' median quantile function: the median commutes with inverting monotone functions).
``trimmed_mean``
    The point-wise mean after cutting ``floor(0.2 m)`` members from each end at each grid point, as
    :func:`scipy.stats.trim_mean` (and the binary kind's ``trimmed_mean``).
``least_confident``
    The member with the **widest central 90% interval** (``Q(0.95) - Q(0.05)`` in location, censored at the
    bounds; the first such member on ties): the numeric analogue of the binary ``min``, the forecast that
    claims to know least.

References
----------
.. [1] Stone, M. (1961). The opinion pool. *The Annals of Mathematical Statistics*, 32(4), 1339-1342.
.. [2] Vincent, S. B. (1912). The function of the vibrissae in the behavior of the white rat. *Behavior
   Monographs*, 1(5).
.. [3] Ratcliff, R. (1979). Group reaction time distributions and an analysis of distribution statistics.
   *Psychological Bulletin*, 86(3), 446-461.
.. [4] Lichtendahl, K. C., Grushka-Cockayne, Y., & Winkler, R. L. (2013). Is it better to average
   probabilities or quantiles? *Management Science*, 59(7), 1594-1611.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np

from agent_schemas.errors import DataValidationError
from agent_schemas.kinds.numeric.grid import (
    LOCATIONS,
    N_BINS,
    N_POINTS,
    first_at_least,
    quantile_locations,
)

__all__ = [
    "BATCH_VALUES", "CHUNK_VALUES", "KINK_TOLERANCE", "POOLS", "TRIM", "VINCENT_LEVELS", "check_stack", "interval_widths",
    "least_confident", "mean", "median", "pool_many", "quantile_average", "trimmed_mean",
]

TRIM: float = 0.2
"""Proportion of members cut from each end by ``trimmed_mean`` (``floor(TRIM * m)``), as the binary kind's."""

VINCENT_LEVELS: int = 1000
"""``quantile_average`` averages the members' quantile functions exactly at the levels ``k / VINCENT_LEVELS``;
the pooled CDF is linear in the level between them, so it is within ``1 / VINCENT_LEVELS`` of the exact
Vincentization at every grid point (and exact where the pooled quantile function is linear between levels)."""

KINK_TOLERANCE: float = 1e-14
"""A knot where a member's CDF bends by less than this much, ``|F_{j+1} - 2 F_j + F_{j-1}| < 1e-14`` (rounding
bends a straight piece by ~1e-16), is not a kink of its quantile function: ``quantile_average`` takes the chord
between the kinks on either side (through two of the member's own knots, so within rounding of the member's
piecewise-linear quantile function on a straight piece). CDFs read from stated percentiles are straight between
their ~9 knots, so most of their 201 grid points are not kinks."""

_BEND_STENCIL = np.array([1.0, -2.0, 1.0]) / KINK_TOLERANCE

CHUNK_VALUES: int = 1 << 18
"""Values (float64: 2 MiB) of the stack handled at a time."""

BATCH_VALUES: int = 1 << 22
"""Values (float64: 32 MiB) of the stack whose questions ``quantile_average`` pools at once: its passes over the
values go :data:`CHUNK_VALUES` at a time, and its work on the kinks (a few percent of the values) and on the
levels is done once per batch, not once per chunk (each numpy call costs microseconds)."""


def check_stack(stack: np.ndarray) -> np.ndarray:
    """``stack`` as a float64 array of shape ``(n_questions, n_members, 201)``.

    Raises
    ------
    DataValidationError
        For another shape, or a member row that is NaN only in part (a missing member is a whole row of NaN).
    """
    arr = np.asarray(stack, dtype=np.float64)
    if arr.ndim != 3 or arr.shape[2] != N_POINTS:
        raise DataValidationError(f"a numeric stack has shape (n_questions, n_members, {N_POINTS}); got {arr.shape}",
                                  field="stack", value=arr.shape)
    return arr


def _bad_row(chunk: np.ndarray, present: np.ndarray, start: int) -> DataValidationError | None:
    """The error for the chunk's first member row that is NaN only in part (a missing member is a whole row of NaN),
    or None; ``start`` is the chunk's first question."""
    sums = np.add.reduce(chunk, axis=2)  # NaN if any value is: one read, no temporary of the chunk's size
    partial = np.isnan(sums) & present
    if partial.any():
        q, i = (int(v) for v in np.argwhere(partial)[0])
        j = int(np.argmax(np.isnan(chunk[q, i])))
        return DataValidationError(f"member {i} of question {start + q} is NaN at position {j} only in part; a member that did not "
                                   "answer is a whole row of NaN", field="stack", row=start + q, value=(i, j))
    if not present.all():
        whole = np.isnan(chunk[~present]).all(axis=1)
        if not whole.all():
            q, i = (int(v) for v in np.argwhere(~present)[int(np.argmin(whole))])
            return DataValidationError(f"member {i} of question {start + q} is NaN at position 0 but not everywhere; a member that "
                                       "did not answer is a whole row of NaN", field="stack", row=start + q, value=(i, 0))
    return None


def _refuse(chunk: np.ndarray, present: np.ndarray, start: int) -> DataValidationError:
    """The error for a chunk in which a rule met a NaN in a member present (:func:`_bad_row`'s)."""
    return _bad_row(chunk, present, start) or DataValidationError(
        f"a member of questions {start} to {start + chunk.shape[0] - 1} is NaN in part", field="stack", row=start)


def _chunks(arr: np.ndarray, *, checked: bool = True, values: int | None = None) -> Iterator[tuple[slice, np.ndarray, np.ndarray]]:
    """``(questions, chunk, present)`` over the stack; ``present`` ``(q, m)`` bool. Checks each member row is
    all NaN (missing) or has none (:func:`_bad_row`). With ``checked=False`` only chunks with a missing member are
    checked here (a pass over the chunk): the rule meets any NaN of a member present in its own arithmetic and
    raises :func:`_refuse`'s error. ``values``: about how many values a chunk holds (default :data:`CHUNK_VALUES`)."""
    nq, m, _ = arr.shape
    step = max(1, (values or CHUNK_VALUES) // max(1, m * N_POINTS))
    for s in range(0, nq, step):
        chunk = arr[s:s + step]
        present = ~np.isnan(chunk[:, :, 0])
        if checked or not present.all():
            bad = _bad_row(chunk, present, s)
            if bad is not None:
                raise bad
        yield slice(s, s + chunk.shape[0]), chunk, present


class _Workspace:
    """Work vectors for the chunks of one pooling call, allocated once and reused (a fresh multi-megabyte array per
    chunk costs page faults that, on a virtual machine, take longer than the arithmetic)."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}

    def vector(self, name: str, size: int, dtype: type = np.float64) -> np.ndarray:
        """The first ``size`` values of the work vector ``name`` (grown when too small; its values are garbage)."""
        arr = self.arrays.get(name)
        if arr is None or arr.size < size:
            arr = self.arrays[name] = np.empty(size, dtype=dtype)
        return arr[:size]


# --- the linear pool -----------------------------------------------------------------------------------


def _mean_chunk(chunk: np.ndarray, present: np.ndarray, work: _Workspace) -> np.ndarray:
    if present.all():
        return chunk.mean(axis=1)
    n = present.sum(axis=1)
    zeroed = work.vector("zeroed", chunk.size).reshape(chunk.shape)
    np.copyto(zeroed, chunk)
    zeroed[~present] = 0.0                                           # a missing member adds nothing
    with np.errstate(invalid="ignore", divide="ignore"):
        out = zeroed.sum(axis=1) / n[:, None]
    out[n == 0] = np.nan
    return out


def mean(stack: np.ndarray) -> np.ndarray:
    """Linear pool: the point-wise mean of the members' CDFs (the mixture; Stone 1961).

    Parameters
    ----------
    stack : array-like of shape (n_questions, n_members, 201)
        Members' grid CDFs; a row of NaN for a member that did not answer.

    Returns
    -------
    ndarray of shape (n_questions, 201)
        NaN for a question with no member.

    Raises
    ------
    DataValidationError
        For a stack of another shape or a member row NaN in part.

    Examples
    --------
    >>> a, b = np.linspace(0, 1, 201), np.r_[np.zeros(100), np.ones(101)]
    >>> mean([[a, b]])[0, [0, 50, 100, 150, 200]].tolist()
    [0.0, 0.125, 0.75, 0.875, 1.0]
    """
    arr = check_stack(stack)
    out = np.full(arr.shape[::2], np.nan)
    if arr.shape[1] == 0:
        return out
    work = _Workspace()
    for rows, chunk, present in _chunks(arr, checked=False):
        pooled = _mean_chunk(chunk, present, work)
        if np.isnan(pooled[present.any(axis=1)]).any():             # a NaN of a member present reaches its mean
            raise _refuse(chunk, present, rows.start)
        out[rows] = pooled
    return out


# --- order statistics at each grid point ---------------------------------------------------------------


def _sorted_members(chunk: np.ndarray, buf: np.ndarray) -> np.ndarray:
    """The chunk's members sorted at each grid point, shape ``(q, 201, m)`` (NaN last), in ``buf``."""
    view = buf[: chunk.shape[0]]
    np.copyto(view, chunk.transpose(0, 2, 1))
    view.sort(axis=2)
    return view


def _by_count(n: np.ndarray) -> Iterator[tuple[int, slice | np.ndarray]]:
    """``(count, questions)`` for each number of members present in a chunk (0 excluded): the members present
    sort first, so questions with the same count read the same positions."""
    if n.size and n[0] > 0 and (n == n[0]).all():                   # the usual chunk: one count (no np.unique)
        yield int(n[0]), slice(None)
        return
    for count in np.unique(n[n > 0]):
        same = n == count
        yield int(count), (slice(None) if same.all() else np.nonzero(same)[0])


def _median_sorted(ordered: np.ndarray, n: np.ndarray) -> np.ndarray:
    out = np.full(ordered.shape[:2], np.nan)
    for count, which in _by_count(n):
        sub = ordered[which]
        out[which] = (sub[:, :, (count - 1) // 2] + sub[:, :, count // 2]) / 2
    return out


def _trimmed_sorted(ordered: np.ndarray, n: np.ndarray, trim: float) -> np.ndarray:
    out = np.full(ordered.shape[:2], np.nan)
    for count, which in _by_count(n):
        cut = int(np.floor(trim * count))   # = int(proportiontocut * nobs) in scipy.stats.trim_mean
        kept = ordered[which].reshape(-1, ordered.shape[2])[:, cut:count - cut]
        out[which] = (kept @ np.full(count - 2 * cut, 1.0 / (count - 2 * cut))).reshape(-1, N_POINTS)  # BLAS: short rows
    return out


def _sorted_pool(stack: np.ndarray, finish: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    arr = check_stack(stack)
    nq, m, _ = arr.shape
    out = np.full((nq, N_POINTS), np.nan)
    if m == 0:
        return out
    buf = np.empty((max(1, CHUNK_VALUES // (m * N_POINTS)), N_POINTS, m))
    for rows, chunk, present in _chunks(arr, checked=False):
        ordered = _sorted_members(chunk, buf)
        if present.all() and np.isnan(ordered[:, :, -1]).any():      # NaN sorts last: a member present has one
            raise _refuse(chunk, present, rows.start)
        out[rows] = finish(ordered, present.sum(axis=1))
    return out


def median(stack: np.ndarray) -> np.ndarray:
    """Point-wise median of the members' CDFs (the mean of the two middle members for an even count), as
    Metaculus ``forecasting-tools`` aggregates numeric forecasts (``NumericReport.aggregate_predictions``).

    Parameters
    ----------
    stack : array-like of shape (n_questions, n_members, 201)
        Members' grid CDFs; a row of NaN for a member that did not answer.

    Returns
    -------
    ndarray of shape (n_questions, 201)
        NaN for a question with no member.

    Raises
    ------
    DataValidationError
        For a stack of another shape or a member row NaN in part.

    Examples
    --------
    >>> t = np.linspace(0, 1, 201)
    >>> median([[t, t ** 2, np.sqrt(t)]])[0, 100].round(4)  # t at 0.5: between 0.25 and 0.7071
    np.float64(0.5)
    """
    return _sorted_pool(stack, _median_sorted)


def trimmed_mean(stack: np.ndarray, trim: float = TRIM) -> np.ndarray:
    """Point-wise trimmed mean of the members' CDFs: at each grid point, the mean after cutting
    ``floor(trim * m)`` members from each end (``m`` the members present), as :func:`scipy.stats.trim_mean`.

    Parameters
    ----------
    stack : array-like of shape (n_questions, n_members, 201)
        Members' grid CDFs; a row of NaN for a member that did not answer.
    trim : float, default=0.2
        Proportion cut from each end, in [0, 0.5).

    Returns
    -------
    ndarray of shape (n_questions, 201)
        NaN for a question with no member.

    Raises
    ------
    DataValidationError
        For a stack of another shape, a member row NaN in part, or ``trim`` outside [0, 0.5).
    """
    if not 0 <= trim < 0.5:
        raise DataValidationError(f"trim must be in [0, 0.5); got {trim!r}", field="trim", value=trim)
    return _sorted_pool(stack, lambda ordered, n: _trimmed_sorted(ordered, n, trim))


# --- quantile averaging ----------------------------------------------------------------------------------


def _members_rows(chunk: np.ndarray, present: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The present members of a chunk as rows ``(r, 201)`` and their question (0-based in the chunk)."""
    q, m, _ = chunk.shape
    if present.all():
        return chunk.reshape(q * m, N_POINTS), np.repeat(np.arange(q), m)
    qi, _ = np.nonzero(present)
    return chunk[present], qi


def _kinks(rows: np.ndarray, work: _Workspace) -> np.ndarray:
    """Flat indices into ``rows`` ``(r, 201)`` (C-contiguous) of each row's first and last knot and of every knot
    where the CDF bends by at least :data:`KINK_TOLERANCE` (and of every NaN), increasing: one pass of
    :func:`numpy.convolve` over the rows laid back to back, then a truncation, a comparison and a compaction."""
    knots = rows.reshape(-1)
    n = knots.size
    bend = np.convolve(knots, _BEND_STENCIL, mode="valid")           # (F_{j+1} - 2 F_j + F_{j-1}) / tol at knot j + 1
    bend[N_BINS - 1::N_POINTS] = 1.0                                 # each row's last knot and (below) its first: kinks
    bend[N_POINTS - 1::N_POINTS] = 1.0                               # (the bends across two rows are garbage)
    np.trunc(bend, out=bend)                                         # 0 where |bend| < tol; a NaN stays, so is kept
    keep = np.not_equal(bend, 0.0, out=work.vector("keep", n - 2, np.bool_))
    return np.concatenate(([0], np.flatnonzero(keep) + 1, [n - 1]))


def _average_quantiles(rows: np.ndarray, question: np.ndarray, n_questions: int, levels: int,
                       work: _Workspace) -> np.ndarray | None:
    """``(n_questions, levels + 3)``: the sum over each question's members of their quantile function
    ``Q_i(k / levels)`` (in location, censored at the bounds), ``k = 0..levels + 2`` (only ``1..levels - 1`` are
    used), exactly for CDFs linear between grid points; None when a row holds a NaN. ``rows``: ``(r, 201)``
    C-contiguous, the members' CDFs; ``question``: ``(r,)`` the question (0-based) of each row.

    A member's quantile function is linear between its **kinks**: the knots where its CDF's slope changes by at
    least :data:`KINK_TOLERANCE` per bin (:func:`_kinks`), and the first and last knot of its row. Between consecutive kinks ``p <
    q`` its inverse slope is the chord's, ``u = (q - p) / (F_q - F_p)`` bins per unit of probability (a chord
    with ``F_q - F_p <= 1e-12`` is flat: the quantile jumps by ``q - p`` bins at the level ``F_p``), so the
    function is a sum of ramps and steps at the kinks: ``Q_i(a) / h = sum_k (u_k - u_{k-1}) max(a - F_k, 0) +
    sum_flat (q - p) [a > F_p]`` (``h = 1/200``; ``u`` 0 before the first knot and after the last). Sampled at
    the levels ``k / L``, a ramp starting at ``p = L F_k`` has second differences ``1 - frac(p)`` at ``floor(p)
    + 1`` and ``frac(p)`` at ``floor(p) + 2`` (a step: ``+1`` and ``-1`` there), so every member's quantile
    function at every level is the double cumulative sum of two weighted histograms of its kinks, summed over
    the question's members in the same two histograms: two passes of :func:`numpy.bincount`, no member inverted
    one by one. Anchoring each piece at two knots keeps rounding local: a straight piece's float noise (its
    slope changes by ~1e-16) never accumulates into the levels above it.
    """
    width = levels + 3
    v = work.vector
    per_pass = max(1, CHUNK_VALUES // N_POINTS)                      # rows whose bends fit in cache at once
    found, values = [], []
    for s in range(0, rows.shape[0], per_pass):
        part = rows[s:s + per_pass].reshape(-1)
        at = _kinks(part, work)
        values.append(part[at])                                      # read while the rows are in cache
        at += s * N_POINTS
        found.append(at)
    k = sum(a.size for a in found)                                   # the batch's kinks; its work vectors are reused
    kinks = np.concatenate(found, out=v("kinks", k, np.intp))        # (fresh ones of a megabyte page-fault on a VM)
    f = np.concatenate(values, out=v("f", k))
    if np.isnan(f).any():
        return None
    row = np.floor_divide(kinks, N_POINTS, out=v("row", k, np.intp))
    j = np.multiply(row, N_POINTS, out=v("j", k, np.intp))
    np.subtract(kinks, j, out=j)                                     # the kink's knot in its row
    bins = np.subtract(j[1:], j[:-1], out=v("bins", k - 1, np.intp))  # < 0 from one row's end to the next row's start
    rise = np.subtract(f[1:], f[:-1], out=v("rise", k - 1))
    inrow = np.greater(bins, 0, out=v("inrow", k - 1, np.bool_))
    steep = np.greater(rise, 1e-12, out=v("steep", k - 1, np.bool_))
    np.logical_and(steep, inrow, out=steep)
    flat = np.logical_xor(steep, inrow, out=inrow)                   # in a row and not steep: a flat chord
    inv = v("inv", k - 1)
    inv.fill(0.0)
    np.multiply(rise, levels, out=rise)
    np.divide(bins, rise, out=inv, where=steep)                      # the chord's u / L after each kink
    slope = v("slope", k)                                            # (u_k - u_{k-1}) / L
    slope[:-1] = inv
    slope[-1] = 0.0
    slope[1:] -= inv
    jump = v("jump", k)
    jump.fill(0.0)
    np.copyto(jump[:-1], bins, where=flat)                           # a flat chord's bins
    pos = np.multiply(f, levels, out=v("pos", k))
    cell = v("cell", k, np.intp)
    np.copyto(cell, pos, casting="unsafe")                           # floor: positive
    second = np.subtract(pos, cell, out=pos)                         # frac(L F_k), whatever the question
    second *= slope                                                  # the ramp's share at floor + 2 (floor + 1: the rest)
    second -= jump                                                   # a flat chord's step: +jump at floor + 1, -jump at floor + 2
    first = np.take(question, row, out=v("first", k, np.intp), mode="clip")  # the kink's question (indices valid: no check)
    first *= width
    first += 1
    cell += first                                                    # the first level above each kink, per question
    size = n_questions * width                                       # at floor + 1: slope - second; at floor + 2: second
    hist = np.bincount(cell, slope, minlength=size)
    moved = np.bincount(cell, second, minlength=size)
    hist -= moved
    hist[1:] += moved[:-1]
    return np.cumsum(np.cumsum(hist.reshape(n_questions, width), axis=1), axis=1) / N_BINS


def _invert_quantiles(qbar: np.ndarray, ends: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], levels: int) -> np.ndarray:
    """``(q, 201)``: the CDF ``F(t) = sup{a : Q(a) <= t}`` of the mean quantile function ``qbar`` (``(q, levels +
    3)`` from :func:`_average_quantiles` divided by the member count) on the grid, linear between the knots
    ``(0, f0)``, ``(Q(f0+), f0)``, ``(Q(k / L), k / L)`` for ``f0 < k / L < f200``, ``(Q(f200-), f200)``,
    ``(1, f200)``; ``ends`` is ``(f0, Q(f0+), Q(f200-), f200)``, each ``(q,)``."""
    f0, q_lo, q_hi, f200 = ends
    q = qbar.shape[0]
    k = levels + 3
    knots_t = np.empty((q, k))                                        # knot i has the level clip((i - 1) / L, f0, f200)
    knots_t[:, 0] = 0.0
    knots_t[:, 1] = q_lo
    np.clip(qbar[:, 1:levels], q_lo[:, None], q_hi[:, None], out=knots_t[:, 2:levels + 1])
    knots_t[:, levels + 1] = q_hi
    knots_t[:, levels + 2] = 1.0
    np.maximum.accumulate(knots_t, axis=1, out=knots_t)
    offset = 2.0 * np.arange(q)[:, None]                              # one sorted array for every question
    i = np.searchsorted((knots_t + offset).ravel(), (LOCATIONS[None, :] + offset).ravel(), side="right").reshape(q, N_POINTS)
    i -= np.arange(q)[:, None] * k                                    # knots with Q <= t, in 1..k
    rows = np.arange(q)[:, None]
    lo, hi = i - 1, np.minimum(i, k - 1)
    t0, t1 = knots_t[rows, lo], knots_t[rows, hi]
    a0 = np.clip((lo - 1) / levels, f0[:, None], f200[:, None])
    a1 = np.clip((hi - 1) / levels, f0[:, None], f200[:, None])
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(t1 > t0, (LOCATIONS[None, :] - t0) / (t1 - t0), 0.0)
    out = a0 + (a1 - a0) * np.clip(frac, 0.0, 1.0)
    out[:, 0], out[:, -1] = f0, f200
    return out


def _flat_ends(chunk: np.ndarray, present: np.ndarray, f0: np.ndarray, f200: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(q,)`` each: the sums over members of ``Q_i(f0+)`` and ``Q_i(f200-)``, the mean quantile function's limits
    at the ends of its levels. A member whose CDF starts flat at ``f0`` has its quantile jump from 0 to the flat's
    end there (``measure{F_i <= f0}``); one that ends flat at ``f200`` has ``Q_i(f200-) = measure{F_i < f200}``;
    every other member has 0 and 1. Only the few members whose CDF is flat at an end are inverted."""
    q = chunk.shape[0]
    low = np.zeros(q)
    high = present.sum(axis=1).astype(np.float64)
    starts = present & (chunk[:, :, 0] == f0[:, None]) & (chunk[:, :, 1] == chunk[:, :, 0])
    if starts.any():
        qi, mi = np.nonzero(starts)
        j = first_at_least(chunk[qi, mi], np.nextafter(f0[qi], np.inf))   # the first point above f0
        np.add.at(low, qi, (j - 1) / N_BINS)
    ends = present & (chunk[:, :, -1] == f200[:, None]) & (chunk[:, :, -2] == chunk[:, :, -1])
    if ends.any():
        qi, mi = np.nonzero(ends)
        np.add.at(high, qi, quantile_locations(chunk[qi, mi], f200[qi]) - 1.0)
    return low, high


def _quantile_average_chunk(chunk: np.ndarray, present: np.ndarray, levels: int, work: _Workspace) -> np.ndarray | None:
    """The chunk's pooled CDFs, or None when a member row holds a NaN (the caller checks the rows). Any number of
    questions: the bends are found a cache-sized block of rows at a time, the rest in one go for the chunk."""
    q = chunk.shape[0]
    n = present.sum(axis=1)
    has = n > 0
    out = np.full((q, N_POINTS), np.nan)
    if not has.any():
        return out
    rows, question = _members_rows(chunk, present)
    summed = _average_quantiles(rows, question, q, levels, work)
    if summed is None:
        return None
    f0 = np.fmin.reduce(chunk[:, :, 0], axis=1)     # missing members are NaN, which fmin / fmax skip
    f200 = np.fmax.reduce(chunk[:, :, -1], axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        qbar = summed / n[:, None]
        low, high = (v / n for v in _flat_ends(chunk, present, f0, f200))
    out[has] = _invert_quantiles(qbar[has], (f0[has], low[has], high[has], f200[has]), levels)
    return out


def quantile_average(stack: np.ndarray, levels: int = VINCENT_LEVELS) -> np.ndarray:
    """Quantile averaging (Vincentization): the CDF of the mean of the members' quantile functions (Vincent
    1912; Ratcliff 1979; Lichtendahl, Grushka-Cockayne & Winkler 2013). See the module docstring for the
    censoring at open bounds and the levels.

    Parameters
    ----------
    stack : array-like of shape (n_questions, n_members, 201)
        Members' grid CDFs; a row of NaN for a member that did not answer.
    levels : int, default=1000
        The quantile functions are averaged exactly at the levels ``k / levels``; the pooled CDF is linear in the
        level between them.

    Returns
    -------
    ndarray of shape (n_questions, 201)
        NaN for a question with no member.

    Raises
    ------
    DataValidationError
        For a stack of another shape, a member row NaN in part, or ``levels < 2``.

    Examples
    --------
    Two members uniform on [0, 0.5] and on [0.5, 1] pool to the uniform on [0.25, 0.75] (their linear pool is the
    uniform on [0, 1]):

    >>> t = np.linspace(0, 1, 201)
    >>> a, b = np.clip(2 * t, 0, 1), np.clip(2 * t - 1, 0, 1)
    >>> quantile_average([[a, b]])[0, [40, 75, 100, 125, 160]].round(6).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    if int(levels) != levels or levels < 2:
        raise DataValidationError(f"levels must be an integer >= 2; got {levels!r}", field="levels", value=levels)
    arr = check_stack(stack)
    out = np.full(arr.shape[::2], np.nan)
    if arr.shape[1] == 0:
        return out
    work = _Workspace()
    for rows, chunk, present in _chunks(arr, checked=False, values=BATCH_VALUES):
        pooled = _quantile_average_chunk(chunk, present, int(levels), work)
        if pooled is None:
            raise _refuse(chunk, present, rows.start)
        out[rows] = pooled
    return out


# --- the least confident member ------------------------------------------------------------------------------


def _widths(chunk: np.ndarray, present: np.ndarray, coverage: float) -> np.ndarray:
    """``(q, m)``: each member's central ``coverage`` interval width in location (NaN for a missing member); both
    quantiles of every member found in one bisection over the chunk's rows, while the chunk is in cache."""
    q, m, _ = chunk.shape
    rows = np.ascontiguousarray(chunk).reshape(q * m, N_POINTS)
    levels = np.repeat([0.5 - coverage / 2, 0.5 + coverage / 2], q * m)
    both = quantile_locations(rows, levels, np.tile(np.arange(q * m), 2))
    width = (both[q * m:] - both[:q * m]).reshape(q, m)
    width[~present] = np.nan
    return width


def interval_widths(stack: np.ndarray, coverage: float = 0.9) -> np.ndarray:
    """``(n_questions, n_members)``: the width of each member's central ``coverage`` interval in location,
    ``Q(1/2 + coverage/2) - Q(1/2 - coverage/2)`` (quantiles censored at the bounds); NaN for a missing member.

    Raises
    ------
    DataValidationError
        For a stack of another shape or a member row NaN in part.
    """
    arr = check_stack(stack)
    out = np.empty(arr.shape[:2])
    for rows, chunk, present in _chunks(arr):
        out[rows] = _widths(chunk, present, coverage)
    return out


def _least_confident_chunk(chunk: np.ndarray, present: np.ndarray) -> np.ndarray:
    width = _widths(chunk, present, 0.9)
    pick = np.argmax(np.where(present, width, -np.inf), axis=1)
    out = chunk[np.arange(chunk.shape[0]), pick]
    out[~present.any(axis=1)] = np.nan
    return out


def least_confident(stack: np.ndarray) -> np.ndarray:
    """The member with the widest central 90% interval (``Q(0.95) - Q(0.05)`` in location, censored at the
    bounds; the first such member on ties): the numeric analogue of the binary ``min``.

    Parameters
    ----------
    stack : array-like of shape (n_questions, n_members, 201)
        Members' grid CDFs; a row of NaN for a member that did not answer.

    Returns
    -------
    ndarray of shape (n_questions, 201)
        That member's CDF; NaN for a question with no member.

    Raises
    ------
    DataValidationError
        For a stack of another shape or a member row NaN in part.
    """
    arr = check_stack(stack)
    out = np.full(arr.shape[::2], np.nan)
    if arr.shape[1] == 0:
        return out
    for rows, chunk, present in _chunks(arr):
        out[rows] = _least_confident_chunk(chunk, present)
    return out


# --- several rules at once ---------------------------------------------------------------------------------


POOLS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "mean": mean,
    "quantile_average": quantile_average,
    "median": median,
    "trimmed_mean": trimmed_mean,
    "least_confident": least_confident,
}
"""Every numeric pooling rule by method name."""


def pool_many(stack: np.ndarray, methods: Sequence[str]) -> dict[str, np.ndarray]:
    """Several pools of one stack in one pass over it: ``{method: (n_questions, 201)}``, each equal to its
    function in :data:`POOLS`. The rows are checked once, and the members sorted once at each grid point for
    both ``median`` and ``trimmed_mean``.

    Raises
    ------
    DataValidationError
        For an unknown method (naming the valid ones), a stack of another shape or a member row NaN in part.
    """
    for method in methods:
        if method not in POOLS:
            raise DataValidationError(f"unknown numeric pooling method {method!r}; valid: {', '.join(POOLS)}",
                                      field="method", value=method)
    arr = check_stack(stack)
    nq, m, _ = arr.shape
    out = {method: np.full((nq, N_POINTS), np.nan) for method in methods}
    if m == 0:
        return out
    wanted = set(methods)
    work = _Workspace()
    buf = np.empty((max(1, CHUNK_VALUES // (m * N_POINTS)), N_POINTS, m)) if wanted & {"median", "trimmed_mean"} else None
    for rows, chunk, present in _chunks(arr):
        n = present.sum(axis=1)
        if "mean" in wanted:
            out["mean"][rows] = _mean_chunk(chunk, present, work)
        if "quantile_average" in wanted:
            pooled = _quantile_average_chunk(chunk, present, VINCENT_LEVELS, work)
            if pooled is None:                                   # the rows were checked: cannot happen
                raise _refuse(chunk, present, rows.start)
            out["quantile_average"][rows] = pooled
        if "least_confident" in wanted:
            out["least_confident"][rows] = _least_confident_chunk(chunk, present)
        if buf is not None:
            ordered = _sorted_members(chunk, buf)
            if "median" in wanted:
                out["median"][rows] = _median_sorted(ordered, n)
            if "trimmed_mean" in wanted:
                out["trimmed_mean"][rows] = _trimmed_sorted(ordered, n, TRIM)
    return out
