"""Every numeric pooling rule against a straightforward reference: one question and one member at a time, in
plain Python and numpy, written from the rules' definitions (agent_schemas.kinds.numeric.pools' docstring), to
1e-12 on random and hand-made stacks: ties, flat CDF segments (point masses, flat starts and ends), closed and
open bounds, missing members, a question with none, one and two members, odd and even counts.

The rules are vectorised over questions, chunked and tuned for speed; these references are neither, so a speed
change that changes a result fails here."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agent_schemas.kinds import NUMERIC, NumericSpec
from agent_schemas.kinds.numeric import pools
from agent_schemas.kinds.numeric.answers import cdf_from_percentiles

N = 201
H = 1.0 / 200
TOL = 1e-12
CLOSED = NumericSpec(lower=0, upper=100)
OPEN = NumericSpec(lower=0, upper=100, open_lower=True, open_upper=True)
OPEN_UPPER = NumericSpec(lower=0, upper=100, open_upper=True)


# --- the references -------------------------------------------------------------------------------------


def crossing(cdf: np.ndarray, a: float, j: int) -> float:
    """Where F, linear between points, reaches ``a`` in location, ``j`` the first point at or above it (0 below
    the range, 1 when none)."""
    if j == 0:
        return 0.0
    if j == N:
        return 1.0
    return (j - 1 + (a - cdf[j - 1]) / (cdf[j] - cdf[j - 1])) / 200


def quantile(cdf: np.ndarray, a: float) -> float:
    """The censored quantile in location: the measure of {t in [0, 1] : F(t) < a}."""
    return crossing(cdf, a, int(np.searchsorted(cdf, a, side="left")))    # the first point with F >= a


def measure_at_most(cdf: np.ndarray, a: float) -> float:
    """The measure of {t in [0, 1] : F(t) <= a}: the quantile's limit from above at ``a``."""
    return crossing(cdf, a, int(np.searchsorted(cdf, a, side="right")))   # the first point with F > a


def ref_mean(members: np.ndarray) -> np.ndarray:
    return np.array([math.fsum(members[:, j]) / len(members) for j in range(N)])


def ref_median(members: np.ndarray) -> np.ndarray:
    out = np.empty(N)
    for j in range(N):
        v = sorted(members[:, j])
        m = len(v)
        out[j] = v[m // 2] if m % 2 else (v[m // 2 - 1] + v[m // 2]) / 2
    return out


def ref_trimmed(members: np.ndarray, trim: float = 0.2) -> np.ndarray:
    out = np.empty(N)
    m = len(members)
    cut = int(math.floor(trim * m))
    for j in range(N):
        kept = sorted(members[:, j])[cut:m - cut]
        out[j] = math.fsum(kept) / len(kept)
    return out


def ref_least_confident(members: np.ndarray) -> np.ndarray:
    widths = [quantile(c, 0.95) - quantile(c, 0.05) for c in members]
    return members[int(np.argmax(widths))]


def ref_quantile_average(members: np.ndarray, levels: int = 1000) -> np.ndarray:
    """Vincentization as the module docstring defines it: the members' quantile functions averaged at the levels
    k / L inside (F0, F200) and at the ends of the support; the pooled CDF linear in the level between those
    knots, read at each grid point as sup{a : Q(a) <= t}."""
    f0, f200 = min(c[0] for c in members), max(c[-1] for c in members)
    m = len(members)
    knots = [(0.0, f0), (sum(measure_at_most(c, f0) for c in members) / m, f0)]
    for k in range(1, levels):
        a = k / levels
        if f0 < a < f200:
            knots.append((math.fsum(quantile(c, a) for c in members) / m, a))
    knots += [(sum(quantile(c, f200) for c in members) / m, f200), (1.0, f200)]
    ts, as_ = np.maximum.accumulate([t for t, _ in knots]), [a for _, a in knots]
    out = np.empty(N)
    for j in range(N):
        t = j / 200
        i = int(np.searchsorted(ts, t, side="right")) - 1     # the last knot at or left of t
        if i + 1 < len(ts) and ts[i + 1] > ts[i]:
            out[j] = as_[i] + (as_[i + 1] - as_[i]) * min(1.0, (t - ts[i]) / (ts[i + 1] - ts[i]))
        else:
            out[j] = as_[i]
    out[0], out[-1] = f0, f200
    return out


REFERENCES = {"mean": ref_mean, "median": ref_median, "trimmed_mean": ref_trimmed,
              "least_confident": ref_least_confident, "quantile_average": ref_quantile_average}


def check_against_reference(stack: np.ndarray) -> None:
    many = NUMERIC.pool_many(stack, list(NUMERIC.pools))
    for method, reference in REFERENCES.items():
        out = NUMERIC.pool(method, stack)
        assert np.array_equal(out, many[method], equal_nan=True), method
        for q in range(stack.shape[0]):
            members = stack[q][~np.isnan(stack[q, :, 0])]
            if len(members) == 0:
                assert np.isnan(out[q]).all(), (method, q)
                continue
            expected = reference(members)
            worst = np.max(np.abs(out[q] - expected))
            assert worst <= TOL, f"{method}, question {q}: {worst:.3g} from the reference"


# --- stacks -----------------------------------------------------------------------------------------------


def stated(rng: np.random.Generator, spec: NumericSpec, q: int, m: int) -> np.ndarray:
    """``(q, m, 201)``: members' CDFs of seven stated percentiles around a per-question centre."""
    centre = rng.uniform(-10, 110, (q, 1, 1)) + rng.normal(0, 8, (q, m, 1))
    values = np.sort(centre + rng.normal(0, rng.uniform(1, 40, (q, m, 1)), (q, m, 7)), axis=2)
    lo = -np.inf if spec.open_lower else spec.lower
    hi = np.inf if spec.open_upper else spec.upper
    return cdf_from_percentiles(spec, np.clip(values, lo, hi))


def rough(rng: np.random.Generator, q: int, m: int, open_ends: bool) -> np.ndarray:
    """``(q, m, 201)``: CDFs with random increments, a third of them 0 (flat segments), some rows all steps."""
    inc = rng.random((q, m, N - 1)) * (rng.random((q, m, N - 1)) > 0.33)
    inc[:, ::4, :] *= rng.random((q, (m + 3) // 4, N - 1)) < 0.03           # point masses and long flats
    inc[inc.sum(axis=2) == 0, 100] = 1.0
    cdf = np.concatenate([np.zeros((q, m, 1)), np.cumsum(inc, axis=2)], axis=2)
    cdf /= cdf[:, :, -1:]
    if open_ends:
        below = rng.uniform(0.001, 0.2, (q, m, 1))
        above = rng.uniform(0.001, 0.2, (q, m, 1))
        cdf = below + (1 - below - above) * cdf
    return cdf


@pytest.mark.parametrize("spec", [CLOSED, OPEN, OPEN_UPPER], ids=["closed", "open", "open_upper"])
def test_rules_equal_the_reference_on_stated_percentiles(spec):
    rng = np.random.default_rng(11)
    stack = stated(rng, spec, 6, 9)
    stack[1, [0, 4]] = np.nan                                  # missing members
    stack[3] = np.nan                                          # no member
    check_against_reference(stack)
    check_against_reference(stated(rng, spec, 3, 10))          # an even count


@pytest.mark.parametrize("open_ends", [False, True], ids=["closed", "open"])
def test_rules_equal_the_reference_on_rough_cdfs_with_flat_segments_and_point_masses(open_ends):
    rng = np.random.default_rng(12)
    stack = rough(rng, 5, 8, open_ends)
    stack[2, 5:] = np.nan
    check_against_reference(stack)
    check_against_reference(rough(rng, 4, 1, open_ends))       # one member
    check_against_reference(rough(rng, 4, 2, open_ends))       # two members


def test_rules_equal_the_reference_on_ties_flat_ends_and_bounds():
    t = np.linspace(0, 1, N)
    step_at = lambda x: (t > x).astype(float)                  # a point mass just above x  # noqa: E731
    uniform = t.copy()
    flat_start = np.clip((t - 0.3) / 0.4, 0, 1)                # flat at F0 = 0 until 0.3, flat at 1 from 0.7
    open_flat = 0.05 + 0.9 * flat_start                        # open bounds with flat ends at 0.05 and 0.95
    open_other = 0.02 + 0.96 * np.clip((t - 0.1) / 0.5, 0, 1)
    questions = [
        [uniform, uniform, uniform],                           # identical members: every order statistic tied
        [uniform, flat_start, uniform, flat_start],            # pairs of ties, an even count
        [step_at(0.25), step_at(0.25), step_at(0.75), uniform],  # point masses at the same place
        [flat_start, step_at(0.5), np.clip(2 * t, 0, 1), uniform, step_at(0.9)],
        [open_flat, open_other, open_flat, 0.001 + 0.998 * t],  # open bounds, flat ends at the pooled ends
        [open_flat, open_flat, open_flat, open_flat],          # identical with flat ends
        [np.full(N, 0.4), open_flat, open_other],             # all the mass beyond the bounds
    ]
    m = max(len(q) for q in questions)
    stack = np.full((len(questions), m, N), np.nan)
    for i, members in enumerate(questions):
        stack[i, :len(members)] = members
    check_against_reference(stack)
    # equal widths: the first widest member; identical widths under a shift of whole grid steps
    shifted = np.stack([np.clip((t - s) / 0.3, 0, 1) for s in (0.2, 0.1, 0.3, 0.1)])[None]
    assert np.array_equal(NUMERIC.pool("least_confident", shifted)[0], ref_least_confident(shifted[0]))


def test_rules_equal_the_reference_across_chunks():
    rng = np.random.default_rng(13)
    stack = stated(rng, OPEN, 40, 7)
    stack[::3, 2] = np.nan
    stack[5] = np.nan
    old = pools.CHUNK_VALUES, pools.BATCH_VALUES
    try:
        pools.CHUNK_VALUES = 3 * 7 * N                         # three questions a chunk: 14 chunks, the last short
        pools.BATCH_VALUES = 8 * 7 * N                         # quantile_average: 5 batches of 8, each in 3 passes
        check_against_reference(stack)
    finally:
        pools.CHUNK_VALUES, pools.BATCH_VALUES = old
