"""Coherence of binary siblings: a group of binary questions about one event whose outcomes are mutually
exclusive and exhaustive (sibling markets: "Will A win?", "Will B win?", ...) is also one multiple-choice
question, and its members' ``p_yes`` should then sum to 1.

Two functions, vectorised over groups of the same size (pad nothing: call once per group size), and
:func:`project_groups`, which applies the projection to a method's forecasts keyed by question id (so a
coherent variant of any method can be scored next to it):

``incoherence``
    How far a group's binary forecasts are from coherent: ``sum_k p_k - 1`` (signed: > 0 when the group
    gives more than certainty in total, the usual overround of sibling markets; < 0 when it gives less).
``project_to_simplex``
    The reconciliation: the Euclidean (least-squares) projection of the group's vector onto the probability
    simplex ``{q : q_k >= 0, sum_k q_k = 1}``, ``q_k = max(p_k - theta, 0)`` with the one ``theta`` that makes
    the sum 1 (Held, Wolfe & Crowder 1974; the sort-based algorithm of Duchi, Shalev-Shwartz, Singer & Chandra
    2008, also Wang & Carreira-Perpinan 2013). It moves every member by the same amount (an equal share of
    the excess), and a member that would go negative to 0.

Why the projection cannot raise the group's Brier score
--------------------------------------------------------
For an exhaustive, mutually exclusive group the outcome vector ``o`` (1 for the member that resolved Yes, 0
for the others) is a vertex of the simplex ``S``. The group's Brier score, the sum of its members' binary
Brier scores, is ``||p - o||^2``. ``S`` is closed and convex, so the projection ``q = P_S(p)`` satisfies the
obtuse-angle inequality ``<p - q, s - q> <= 0`` for every ``s`` in ``S``, hence (Pythagoras)

    ||p - o||^2 >= ||p - q||^2 + ||q - o||^2,

so ``Brier(q) <= Brier(p) - ||p - q||^2``: never worse, whatever the outcome, and strictly better whenever
``p`` was incoherent. This is the result of Predd, Seiringer, Lieb, Osherson, Poor & Kulkarni (2009) for
the quadratic score (an incoherent forecast is dominated, and its projection onto the coherent set
dominates it), and the "coherent approximation principle" of Osherson & Vardi (2006). Nothing is
guaranteed when the group is not exhaustive (no member might resolve Yes) or not exclusive.

References
----------
Held, M., Wolfe, P. & Crowder, H. P. (1974). Validation of subgradient optimization. *Math. Programming* 6.
Duchi, J., Shalev-Shwartz, S., Singer, Y. & Chandra, T. (2008). Efficient projections onto the l1-ball for
learning in high dimensions. *ICML 2008*. Osherson, D. & Vardi, M. Y. (2006). Aggregating disparate estimates
of chance. *Games Econ. Behav.* 56(1). Predd, J. B., Seiringer, R., Lieb, E. H., Osherson, D. N., Poor, H. V.
& Kulkarni, S. R. (2009). Probabilistic coherence and proper scoring rules. *IEEE Trans. Inf. Theory* 55(10).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from agent_schemas.errors import DataValidationError
from agent_schemas.probabilities import check_probabilities

__all__ = ["group_brier", "incoherence", "project_groups", "project_to_simplex"]


def _groups(p_yes: Any, name: str) -> np.ndarray:
    arr = check_probabilities(p_yes, name)
    if arr.ndim not in (1, 2) or arr.shape[-1] < 2:
        raise DataValidationError(f"{name} must be of shape (k,) or (n_groups, k) with k >= 2 members; got {arr.shape}",
                                  field=name, value=arr.shape)
    return arr


def incoherence(p_yes: Any) -> np.ndarray | float:
    """How far a group's binary forecasts are from coherent: ``sum_k p_k - 1``.

    Parameters
    ----------
    p_yes : array-like of shape (k,) or (n_groups, k)
        Each member's probability of Yes, in [0, 1]; one row per group of ``k >= 2`` sibling questions.

    Returns
    -------
    float or ndarray of shape (n_groups,)
        Signed, in [-1, k - 1]: 0 for a coherent group; > 0 when the members give more than certainty in
        total (overround), < 0 when less. ``abs`` of it is the distance in total probability.

    Raises
    ------
    DataValidationError
        For a value outside [0, 1] or NaN (naming its position), or fewer than 2 members.

    Examples
    --------
    >>> round(incoherence([0.5, 0.4, 0.3]), 6)
    0.2
    """
    arr = _groups(p_yes, "p_yes")
    out = arr.sum(axis=-1) - 1.0
    return float(out) if arr.ndim == 1 else out


def project_to_simplex(p_yes: Any) -> np.ndarray:
    """Euclidean projection of each group's binary forecasts onto the probability simplex (the module docstring
    gives the algorithm, its sources and its guarantee).

    Parameters
    ----------
    p_yes : array-like of shape (k,) or (n_groups, k)
        Each member's probability of Yes, in [0, 1].

    Returns
    -------
    ndarray of the same shape
        ``q_k = max(p_k - theta, 0)``, each row summing to 1 (to float rounding): the coherent forecast nearest
        ``p`` in squared distance. A coherent row is returned unchanged.

    Raises
    ------
    DataValidationError
        As :func:`incoherence`.

    Examples
    --------
    >>> project_to_simplex([0.9, 0.6, 0.1]).round(6).tolist()
    [0.65, 0.35, 0.0]
    """
    arr = _groups(p_yes, "p_yes")
    rows = np.atleast_2d(arr)
    k = rows.shape[1]
    u = -np.sort(-rows, axis=1)  # descending
    css = np.cumsum(u, axis=1) - 1.0
    j = np.arange(1, k + 1)
    # rho: the largest j with u_j - css_j / j > 0 (always true for j = 1)
    cond = u - css / j > 0
    rho = k - np.argmax(cond[:, ::-1], axis=1)
    theta = css[np.arange(rows.shape[0]), rho - 1] / rho
    out = np.maximum(rows - theta[:, None], 0.0)
    return out[0] if arr.ndim == 1 else out


def group_brier(p_yes: Any, winner: Any) -> np.ndarray | float:
    """The group's Brier score: the sum over its members of their binary Brier scores, ``sum_k (p_k - o_k)^2``
    with ``o`` 1 for the member that resolved Yes (the multi-category Brier score of the group read as one
    multiple-choice question; Brier 1950).

    Parameters
    ----------
    p_yes : array-like of shape (k,) or (n_groups, k)
        Members' probabilities of Yes, in [0, 1] (coherent or not).
    winner : int or array-like of int of shape (n_groups,)
        Index of the member that resolved Yes.

    Returns
    -------
    float or ndarray of shape (n_groups,)
        In [0, k]; lower is better.

    Examples
    --------
    >>> round(group_brier([0.9, 0.6, 0.1], 0), 6)
    0.38
    """
    arr = _groups(p_yes, "p_yes")
    rows = np.atleast_2d(arr)
    w = np.atleast_1d(np.asarray(winner))
    if w.shape != (rows.shape[0],) or not np.isin(w, np.arange(rows.shape[1])).all():
        raise DataValidationError(f"winner must give one member index in [0, {rows.shape[1] - 1}] per group; got {winner!r}",
                                  field="winner", value=str(winner))
    o = np.zeros_like(rows)
    o[np.arange(rows.shape[0]), w.astype(int)] = 1.0
    out = ((rows - o) ** 2).sum(axis=1)
    return float(out[0]) if arr.ndim == 1 else out


def project_groups(p_yes: Mapping[str, float], groups: Iterable[Sequence[str]]) -> dict[str, float]:
    """A method's binary forecasts with every complete sibling group projected onto the simplex.

    Parameters
    ----------
    p_yes : mapping of str to float
        The method's probability of Yes per question id, in [0, 1].
    groups : iterable of sequences of str
        Each a group of sibling question ids (mutually exclusive and exhaustive), e.g. the ``member_qids`` of
        :func:`benchmarks.questions.sibling_groups`.

    Returns
    -------
    dict of str to float
        ``p_yes`` with the members of each group that the method forecast in full replaced by their projection
        (:func:`project_to_simplex`); a group with a member missing is left as it is (projecting a part of a
        group has no guarantee), and so is every question outside the groups.

    Raises
    ------
    DataValidationError
        For a probability outside [0, 1], naming the question id; or a question id in two groups.
    """
    out = dict(p_yes)
    seen: dict[str, int] = {}
    for g, ids in enumerate(groups):
        ids = list(ids)
        for qid in ids:
            if qid in seen:
                raise DataValidationError(f"question {qid!r} is in sibling groups {seen[qid]} and {g}", field="groups", value=qid)
            seen[qid] = g
        if len(ids) < 2 or any(out.get(qid) is None for qid in ids):
            continue
        values = [out[qid] for qid in ids]
        bad = [qid for qid, v in zip(ids, values) if not 0.0 <= float(v) <= 1.0]
        if bad:
            raise DataValidationError(f"p_yes of {bad[0]!r} is {out[bad[0]]!r}, outside [0, 1]", field="p_yes", value=out[bad[0]])
        out.update(zip(ids, (float(v) for v in project_to_simplex(values))))
    return out
