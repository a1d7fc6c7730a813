"""ForecastBench's difficulty-adjusted Brier score and Brier Index: entries that answered different
questions, compared on one scale.

A raw Brier mean rewards an entry for the questions it happened to answer: one that answered only easy
questions looks better than one that answered hard ones. ForecastBench therefore scores a question's
forecast against the question's difficulty, estimated from everyone who answered it, and reports the
result on a 0-100 scale. This module follows its leaderboard code (``src/leaderboard/main.py`` of
forecastingresearch/forecastbench, read at commit 05f612e) step by step:

1. **Brier per row** (its ``brier_score``): ``(p_yes - outcome)^2`` for each (entry, question).
2. **Question difficulty** (its ``two_way_fixed_effects``): a two-way fixed-effects regression
   ``brier[e, q] = a[e] + f[q] + u[e, q]`` (entry effect ``a``, question effect ``f``), fitted by least
   squares, separately for dataset and market questions (its ``score_models`` loops over the two types).
   ``f[q]`` is the question's difficulty in Brier units (higher: harder).
3. **Which entries the fit learns from.** ForecastBench fits on a subset and scores everyone with the
   result: it leaves out its dummy forecasters (Always 0, Always 1, Always 0.5, Random Uniform), the
   Imputed Forecaster (its own comment: it would count the market price twice, and its 0.5 on dataset
   questions), its ensembles of LLMs already in the fit (``ENSEMBLE_COMPARISON_MODELS``), external
   submissions, and LLMs released more than 365 days before the forecast due date. The reasons for the
   dummies and the ensembles are ours, read from the model: a constant forecaster pulls every difficulty
   towards its own constant Brier (in a balanced panel of ``n`` entries, adding Always 0.5 shrinks every
   difference of difficulty by ``n / (n + 1)``), and an ensemble counts its members' errors twice. Here
   the caller names the entries to leave out (``exclude_from_fit``); every question must still have at
   least one fitted entry, or its difficulty is unknown (ForecastBench stops with a ``ValueError`` too).
4. **Adjusted score per entry** (``two_way_fixed_effects`` then the per-type mean in ``score_models``):
   the mean over the entry's questions of ``brier[e, q] - f[q]``. For an entry in the fit this is its
   entry effect ``a[e]`` (least-squares residuals sum to zero per entry).
5. **Rescaling** (its ``rescale_difficulty_adjusted_brier``): every adjusted score of a type is shifted
   by one constant so that *Always 0.5* scores 0.25. ForecastBench reads that constant off its Always
   0.5 entry, which forecasts every question. Here it is computed for an Always 0.5 that answered every
   question of the type in the frame (Brier 0.25 on each): the shift is the mean difficulty of those
   questions, so the rescaled score is ``mean_{q in Q_e}(brier[e, q] - f[q]) + mean_{q in Q}(f[q])``:
   the Brier the entry would be expected to score on the average question of the frame. The same value
   as ForecastBench's when Always 0.5 answered every question (as it does there), and no such entry is
   needed. An entry that answered every question keeps its raw Brier; so does everyone in a balanced
   panel (every entry on every question). A perfect forecaster on every question scores 0.
6. **Market questions.** ForecastBench's baseline leaderboard fits market questions like dataset ones
   (``MarketQuestionAdjustment.TWO_WAY_FIXED_EFFECTS``, the default here); its tournament and preliminary
   leaderboards take a market question's difficulty to be the Brier of the market price itself (the
   Imputed Forecaster, whose forecast is the market value on the due date; ``MARKET_BRIER``). Pass
   ``market_reference`` (e.g. ``"crowd"``) for the latter: that entry's Brier on each market question is
   its difficulty, and no fit is made for markets.
7. **Overall** (end of ``score_models``): the mean of the rescaled dataset and market scores. An entry
   without questions of one type has no overall score (NaN + x there). Deliberate difference: when the
   frame holds only one type, overall is that type's score (ForecastBench's preliminary leaderboard, on
   dataset questions only, ranks by the dataset score).
8. **Brier Index** (its ``apply_brier_index_transform``): ``100 * (1 - sqrt(score))`` of each rescaled
   score: 100 is perfect, 50 is Always 0.5, 0 is a certain wrong forecast on every question; higher is
   better. Overall's index is taken of the averaged score, not averaged from the two indices (the site's
   leaderboard notes, ``src/www.forecastbench.org/_includes/leaderboard-baseline-notes.html``). The
   rescaled score can fall below 0 (an entry that did very well on questions much harder than average:
   the additive model extrapolates); ForecastBench's ``np.sqrt`` gives NaN there, and so does
   :func:`brier_index`, with a note in the table. The adjusted score still ranks such an entry.

The other choices, and where they differ from ForecastBench:

* **Solver.** ForecastBench fits with ``pyfixest.feols("brier_score ~ 1 | question_pk + model_pk")`` and
  reads the question effects from ``fixef()``, which solves the dummy-variable least-squares problem with
  ``scipy.sparse.linalg.lsqr`` at tolerance 1e-6. :func:`two_way_fixed_effects` solves the same problem
  with ``scipy.sparse.linalg.lsmr`` on a sparse CSR design (two non-zeros per observation, so memory grows
  with the number of answers, never with entries x questions), its columns scaled to unit norm (Jacobi
  preconditioning, which evens out entries and questions with very different counts: on the panel of
  ``benchmarks/perf/fixed_effects.py``, 8 iterations instead of 37, and residual sums per entry 1e-8
  instead of 2e-7), to tolerance 1e-10. LSMR rather than LSQR because its ``||A^T r||`` decreases
  monotonically, so stopping early is safe (Fong & Saunders 2011); rather than alternating projections
  (demeaning by entry, then by question, repeated) because a Krylov method needs far fewer sweeps when
  the panel is weakly connected, where plain alternating projections crawl (Guimarães & Portugal 2010
  and Correia 2016 accelerate them for that reason); and it is a well-kept library solver rather than
  our own loop. pyfixest itself would bring numba and formulaic, among others, to fit a model that
  costs two sparse mat-vecs per iteration.
* **Identification.** The effects are unique only up to a constant per connected group (add ``c`` to every
  question, subtract it from every entry). pyfixest keeps every question level and drops one entry level
  (its effect is 0), so its question effects are that entry's expected Brier. Here the entry effects of
  each group average 0, so a question's difficulty is the expected Brier of the group's average entry.
  No rescaled score depends on this choice (the shift cancels in step 5); only the published difficulties
  move by a constant.
* **Disconnected groups.** When no chain of shared questions links two sets of entries (entries A and B
  share a question, B and C another, ...), their difficulties are not comparable: the data cannot tell
  a harder question set from weaker entries. pyfixest returns one of the many least-squares solutions;
  here each group is normalised on its own (its average entry has effect 0, the convention of R's
  ``lfe::getfe``, which also reports the group), the groups are numbered by size (0 is the group with
  the most answers) in ``component_dataset`` / ``component_market``, and an entry outside group 0 gets a
  note: its adjusted score compares with group 0's only under the assumption that the two groups' average
  entries are equally skilled.
* **Entries with one question** fit exactly (their effect absorbs the residual) and do not move any
  difficulty; their adjusted score is ``brier - f[q]`` on that question, rescaled.
* **Missing values.** ForecastBench imputes 0.5 for a missing forecast (``src/resolve/_impute.py``), fits on
  the imputed rows, and leaves an entry with more than 5% imputed off its leaderboard (``get_df_info``,
  ``IMPUTED_CUTOFF_PCT``). Here, as in :func:`benchmarks.scoring.score_table`, a row with NaN ``p_yes`` is
  dropped and counted in ``n_missing`` and a row with NaN outcome (unresolved) in ``n_unresolved``: the
  caller imputes first. The leaderboard imputes each method's missing answers as its worst case and
  leaves the imputed rows out of the fit (``fit_col``), so that a failure on a hard question never raises
  its index (:func:`benchmarks.scoring.ranking.impute`, :mod:`benchmarks.report.difficulty`).
* **Question identity.** ForecastBench scores a dataset question once per resolution date (its
  ``question_pk`` joins due date, source, id and horizon) and a market question once per forecast due
  date. The caller's ``question_col`` must identify a question the same way.

References
----------
.. [1] Karger, E. et al. (2025). ForecastBench: A dynamic benchmark of AI forecasting capabilities.
   *ICLR 2025*, and its addendum on the difficulty-adjusted Brier score (forecastbench.org/docs).
.. [2] Forecasting Research Institute (2025). Introducing the Brier Index (forecastingresearch.substack.com).
.. [3] Fong, D. C.-L., & Saunders, M. (2011). LSMR: An iterative algorithm for sparse least-squares
   problems. *SIAM J. Sci. Comput.*, 33(5), 2950-2971.
.. [4] Guimarães, P., & Portugal, P. (2010). A simple feasible procedure to fit models with
   high-dimensional fixed effects. *Stata Journal*, 10(4), 628-649; Correia, S. (2016). A feasible
   estimator for linear models with multi-way fixed effects (reghdfe).
.. [5] Abowd, J. M., Creecy, R. H., & Kramarz, F. (2002). Computing person and firm effects using linked
   longitudinal employer-employee data (connected groups of a two-way fixed-effects design).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import lsmr

from agent_schemas.errors import DataValidationError, ReconcileError
from benchmarks.scoring.rules import brier_score

__all__ = [
    "ALWAYS_HALF_BRIER",
    "FIT_TOLERANCE",
    "QUESTION_TYPES",
    "ZERO_TOLERANCE",
    "TwoWayFixedEffects",
    "brier_index",
    "brier_index_table",
    "two_way_fixed_effects",
]

QUESTION_TYPES: tuple[str, ...] = ("dataset", "market")
"""The question types scored apart, in the order of the table's columns (ForecastBench's ``get_masks``)."""

ALWAYS_HALF_BRIER: float = 0.25
"""What the rescaling makes Always 0.5 score on every question type: its Brier on every question."""

FIT_TOLERANCE: float = 1e-10
"""Default ``atol`` and ``btol`` of LSMR in :func:`two_way_fixed_effects` (ForecastBench's pyfixest: 1e-6)."""

ZERO_TOLERANCE: float = 1e-12
"""A rescaled score within this of 0 is 0 for :func:`brier_index` (sums of floats leave ~1e-16 where an
exact 0 is meant, and ``sqrt`` would turn that into an index of 99.9999999 instead of 100)."""

_TABLE_COLUMNS = [
    "n", "n_dataset", "n_market", "n_missing", "n_unresolved", "in_fit", "brier",
    "adjusted_brier_dataset", "adjusted_brier_market", "adjusted_brier_overall",
    "brier_index_dataset", "brier_index_market", "brier_index_overall",
    "component_dataset", "component_market", "note",
]


@dataclass(frozen=True)
class TwoWayFixedEffects:
    """The fit of ``y[i] = entry_effects[entry[i]] + question_effects[question[i]] + u[i]``.

    Attributes
    ----------
    question_effects : ndarray of shape (n_questions,)
        Question fixed effects (difficulty, in the units of ``y``: Brier). NaN for a code with no
        observation.
    entry_effects : ndarray of shape (n_entries,)
        Entry fixed effects; within each connected group they average 0. NaN for a code with no
        observation.
    question_component, entry_component : ndarray of int64
        Connected group of each question and entry, numbered by number of observations (0: the most); -1
        for a code with no observation.
    n_components : int
        Number of connected groups with observations. Effects compare across groups only under the
        normalisation above (each group's average entry has effect 0).
    iterations : int
        LSMR iterations used.
    """

    question_effects: np.ndarray
    entry_effects: np.ndarray
    question_component: np.ndarray
    entry_component: np.ndarray
    n_components: int
    iterations: int

    def fitted(self, entry: Any, question: Any) -> np.ndarray:
        """Fitted values ``entry_effects[entry] + question_effects[question]``, shape of the codes."""
        return self.entry_effects[np.asarray(entry)] + self.question_effects[np.asarray(question)]


def _codes(x: Any, name: str, n: int | None, n_name: str) -> tuple[np.ndarray, int]:
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise DataValidationError(f"{name} must be 1-D of shape (n_observations,); got shape {arr.shape}", field=name, value=arr.shape)
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise DataValidationError(f"{name} must hold integer codes (pandas.factorize gives them); got dtype {arr.dtype}",
                                  field=name, value=str(arr.dtype))
    arr = arr.astype(np.intp, copy=False)
    if arr.size and arr.min() < 0:
        i = int(np.argmin(arr))
        raise DataValidationError(f"{name} codes must be >= 0: {int(arr[i])} at index {i}", field=name, row=i, value=int(arr[i]))
    size = int(arr.max()) + 1 if arr.size else 0
    if n is not None:
        if n < size:
            raise DataValidationError(f"{n_name}={n} but {name} has code {size - 1}", field=n_name, value=n)
        size = n
    return arr, size


def _components(entry: np.ndarray, question: np.ndarray, n_entries: int, n_questions: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Connected groups of the bipartite entry-question graph, numbered by observations (most first); -1 unobserved."""
    n_nodes = n_entries + n_questions
    graph = csr_matrix((np.ones(entry.size, dtype=np.float32), (entry, n_entries + question)), shape=(n_nodes, n_nodes))
    _, labels = connected_components(graph, directed=False)
    obs_per_label = np.bincount(labels[entry], minlength=labels.max() + 1)
    observed = np.flatnonzero(obs_per_label)
    order = observed[np.argsort(-obs_per_label[observed], kind="stable")]
    renumber = np.full(labels.max() + 1, -1, dtype=np.int64)
    renumber[order] = np.arange(order.size)
    node = renumber[labels]
    return node[:n_entries], node[n_entries:], int(order.size)


def two_way_fixed_effects(
    entry: Any,
    question: Any,
    y: Any,
    *,
    n_entries: int | None = None,
    n_questions: int | None = None,
    tol: float = FIT_TOLERANCE,
    max_iter: int | None = None,
) -> TwoWayFixedEffects:
    """Least-squares fit of ``y ~ entry fixed effect + question fixed effect`` by sparse LSMR.

    The design has one dummy column per question and per entry (two non-zeros per observation, stored as
    a CSR matrix, never dense), scaled to unit column norm; ``scipy.sparse.linalg.lsmr`` solves it. The
    effects are then normalised so that the entry effects of each connected group average 0 (the
    solution is otherwise unique only up to a constant per group). See the module docstring for the
    choice of solver and of normalisation.

    Parameters
    ----------
    entry, question : array-like of int of shape (n_observations,)
        Codes of the entry (forecaster, method) and of the question of each observation, >= 0 (e.g.
        from :func:`pandas.factorize`). At most one observation per pair is expected (a repeated pair
        counts as two observations).
    y : array-like of float of shape (n_observations,)
        The response, finite (a Brier score in [0, 1] here).
    n_entries, n_questions : int, optional
        Number of codes, when some have no observation (their effects are NaN). Default: the largest
        code + 1.
    tol : float, default=FIT_TOLERANCE (1e-10)
        LSMR's ``atol`` and ``btol``: relative tolerance of the least-squares optimality and of the residual.
    max_iter : int, optional
        LSMR iterations allowed; default ``10 * (n_entries + n_questions) + 100``.

    Returns
    -------
    TwoWayFixedEffects
        Effects in the units of ``y``, their connected groups and the iterations used.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) for codes that are not non-negative integers, shapes that differ, an empty
        input, or a non-finite ``y`` (the message names the index and value).
    ReconcileError
        If LSMR stops before converging (iteration limit or an ill-conditioned design); never returns an
        unconverged fit.

    References
    ----------
    Fong & Saunders (2011), LSMR, *SIAM J. Sci. Comput.* 33(5).

    Examples
    --------
    Two entries on two questions; the second entry is 0.2 worse on both, the second question 0.3 harder:

    >>> fit = two_way_fixed_effects([0, 0, 1, 1], [0, 1, 0, 1], [0.1, 0.4, 0.3, 0.6])
    >>> fit.entry_effects.round(6), fit.question_effects.round(6)
    (array([-0.1,  0.1]), array([0.2, 0.5]))
    """
    e, n_e = _codes(entry, "entry", n_entries, "n_entries")
    q, n_q = _codes(question, "question", n_questions, "n_questions")
    values = np.asarray(y, dtype=np.float64)
    if values.ndim != 1 or values.shape != e.shape or values.shape != q.shape:
        raise DataValidationError(f"entry, question and y must have the same shape (n_observations,): {e.shape}, {q.shape}, {values.shape}",
                                  field="y", value=values.shape)
    if values.size == 0:
        raise DataValidationError("y is empty: nothing to fit", field="y")
    if not np.isfinite(values).all():
        i = int(np.argmax(~np.isfinite(values)))
        raise DataValidationError(f"y must be finite: {float(values[i])!r} at index {i}", field="y", row=i, value=float(values[i]))

    entry_group, question_group, n_groups = _components(e, q, n_e, n_q)
    count_q = np.bincount(q, minlength=n_q)
    count_e = np.bincount(e, minlength=n_e)
    with np.errstate(divide="ignore"):
        scale = np.concatenate([1.0 / np.sqrt(count_q), 1.0 / np.sqrt(count_e)])
    scale[~np.isfinite(scale)] = 0.0  # a code with no observation: an empty column, effect NaN below
    n_obs = values.size
    columns = np.empty(2 * n_obs, dtype=np.intp)
    columns[0::2] = q
    columns[1::2] = n_q + e
    design = csr_matrix((scale[columns], columns, np.arange(0, 2 * n_obs + 1, 2)), shape=(n_obs, n_q + n_e))
    limit = 10 * (n_q + n_e) + 100 if max_iter is None else int(max_iter)
    z, istop, iterations = lsmr(design, values, atol=tol, btol=tol, conlim=0.0, maxiter=limit)[:3]
    if istop not in (0, 1, 2, 4, 5):
        why = {3: "the design's condition estimate passed its limit", 6: "the design's condition estimate passed 1/eps",
               7: f"the iteration limit ({limit}) was reached"}.get(int(istop), f"LSMR istop {istop}")
        raise ReconcileError(f"two-way fixed effects did not converge after {iterations} iterations: {why}",
                             iterations=int(iterations), istop=int(istop))
    x = z * scale
    f, a = x[:n_q], x[n_q:]
    seen_e, seen_q = count_e > 0, count_q > 0
    shift = (np.bincount(entry_group[seen_e], weights=a[seen_e], minlength=n_groups)
             / np.bincount(entry_group[seen_e], minlength=n_groups))
    a = np.where(seen_e, a - shift[entry_group], np.nan)
    f = np.where(seen_q, f + shift[question_group], np.nan)
    return TwoWayFixedEffects(f, a, question_group, entry_group, n_groups, int(iterations))


def brier_index(adjusted_brier: Any) -> Any:
    """ForecastBench's Brier Index, ``100 * (1 - sqrt(score))``, of a (rescaled, adjusted) Brier score.

    100 is a perfect forecaster, 50 is Always 0.5 (score 0.25), 0 a certain wrong forecast on every
    question (score 1); higher is better. A score within :data:`ZERO_TOLERANCE` of 0 counts as 0; a
    negative score (possible for a difficulty-adjusted score, see the module docstring) has no index: NaN.

    Parameters
    ----------
    adjusted_brier : float or array-like of float
        Score(s) in Brier units; NaN stays NaN.

    Returns
    -------
    float or ndarray of float
        The index in percent, same shape as the input.

    References
    ----------
    ForecastBench ``src/leaderboard/main.py``, ``apply_brier_index_transform``; Forecasting Research
    Institute (2025), Introducing the Brier Index.

    Examples
    --------
    >>> float(brier_index(0.25)), float(brier_index(0.0)), float(brier_index(1.0))
    (50.0, 100.0, 0.0)
    >>> brier_index([0.09, -0.01]).round(1)
    array([70., nan])
    """
    s = np.asarray(adjusted_brier, dtype=np.float64)
    s = np.where(np.abs(s) <= ZERO_TOLERANCE, 0.0, s)
    with np.errstate(invalid="ignore"):
        out = 100.0 * (1.0 - np.sqrt(s))
    return out[()] if out.ndim == 0 else out


# --- the table -----------------------------------------------------------------------------------


def _plain(x: Any) -> Any:
    """A numpy scalar as the Python value it holds, so messages read ``11``, not ``np.int64(11)``."""
    return x.item() if isinstance(x, np.generic) else x


def _fail(message: str, data: pd.DataFrame, col: str, bad: np.ndarray, values: Any) -> None:
    """Raise for the first ``bad`` row, naming the column, the row's index label and the value."""
    i = int(np.argmax(bad))
    v = _plain(values[i])
    raise DataValidationError(f"{col} {message}: {v!r} at row {_plain(data.index[i])!r}", field=col, row=i, value=v)


def _numeric(data: pd.DataFrame, col: str) -> np.ndarray:
    raw = data[col]
    x = pd.to_numeric(raw, errors="coerce").to_numpy(np.float64, na_value=np.nan)
    bad = np.isnan(x) & raw.notna().to_numpy()
    if bad.any():
        _fail("is not numeric", data, col, bad, raw.to_numpy())
    return x


def _row_briers(data: pd.DataFrame, p_col: str, outcome_col: str, brier_col: str | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: Brier (NaN when not scorable), missing forecast, unresolved question."""
    if brier_col is not None:
        b = _numeric(data, brier_col)
        bad = (b < 0) | (b > 1)
        if bad.any():
            _fail("has values outside [0, 1]", data, brier_col, bad, b)
        return b, np.isnan(b), np.zeros(b.size, dtype=bool)
    p = _numeric(data, p_col)
    o = _numeric(data, outcome_col)
    bad = (p < 0) | (p > 1)
    if bad.any():
        _fail("has values outside [0, 1]", data, p_col, bad, p)
    bad = (o != 0) & (o != 1) & ~np.isnan(o)
    if bad.any():
        _fail("must be 0 or 1 (or NaN: unresolved)", data, outcome_col, bad, o)
    unresolved = np.isnan(o)
    missing = np.isnan(p) & ~unresolved
    b = np.full(p.size, np.nan)
    ok = ~(unresolved | missing)
    if ok.any():
        b[ok] = brier_score(p[ok], o[ok])
    return b, missing, unresolved


def _check_frame(df: pd.DataFrame, entry_col: str, question_col: str, question_type_col: str, value_cols: list[str]) -> pd.DataFrame:
    needed = [entry_col, question_col, question_type_col, *value_cols]
    absent = [c for c in needed if c not in df.columns]
    if absent:
        raise DataValidationError(f"{absent[0]!r} is not a column of the data frame; columns are {list(df.columns)}",
                                  field=absent[0], value=absent[0])
    data = df[list(dict.fromkeys(needed))]
    if data.empty:
        raise DataValidationError("the data frame is empty: nothing to score", field=entry_col)
    for col in (entry_col, question_col, question_type_col):
        na = data[col].isna().to_numpy()
        if na.any():
            i = int(np.argmax(na))
            raise DataValidationError(f"{col} has a missing value at row {_plain(data.index[i])!r}", field=col, row=i)
    types = data[question_type_col].to_numpy()
    bad = ~np.isin(types, QUESTION_TYPES)
    if bad.any():
        _fail(f"must be one of {list(QUESTION_TYPES)}", data, question_type_col, bad, types)
    dup = data.duplicated([entry_col, question_col]).to_numpy()
    if dup.any():
        i = int(np.argmax(dup))
        raise DataValidationError(
            f"duplicated ({entry_col}, {question_col}) pair at row {_plain(data.index[i])!r}: "
            f"{_plain(data[entry_col].iloc[i])!r}, {_plain(data[question_col].iloc[i])!r}", field=question_col, row=i,
            value=_plain(data[question_col].iloc[i]))
    first = data.groupby(question_col, sort=False)[question_type_col].transform("first")
    bad = (data[question_type_col] != first).to_numpy()
    if bad.any():
        i = int(np.argmax(bad))
        raise DataValidationError(
            f"question {_plain(data[question_col].iloc[i])!r} has two question types: {_plain(types[i])!r} at row "
            f"{_plain(data.index[i])!r}, {_plain(first.iloc[i])!r} on an earlier row", field=question_type_col, row=i, value=_plain(types[i]))
    return data


def _per_entry_mean(values: np.ndarray, entry: np.ndarray, n_entries: int) -> tuple[np.ndarray, np.ndarray]:
    counts = np.bincount(entry, minlength=n_entries)
    sums = np.bincount(entry, weights=values, minlength=n_entries)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts, counts


def brier_index_table(
    df: pd.DataFrame,
    *,
    entry_col: str = "entry",
    question_col: str = "question_id",
    p_col: str = "p_yes",
    outcome_col: str = "outcome",
    brier_col: str | None = None,
    question_type_col: str = "question_type",
    exclude_from_fit: Collection[Any] = (),
    fit_col: str | None = None,
    market_reference: Any | None = None,
) -> pd.DataFrame:
    """ForecastBench's difficulty-adjusted Brier and Brier Index per entry, dataset and market apart.

    Each question type is fitted apart: question difficulty from a two-way fixed-effects fit of the
    per-row Brier scores (:func:`two_way_fixed_effects`) over the entries not in ``exclude_from_fit``; an
    entry's adjusted score is the mean of ``brier - difficulty`` over its questions, shifted so that an
    Always 0.5 on every question of the type scores 0.25 (:data:`ALWAYS_HALF_BRIER`); overall is the mean
    of the two types' adjusted scores; the Brier Index is :func:`brier_index` of each. The module
    docstring gives each step's ForecastBench source and the deliberate differences.

    Entries that answered different questions become comparable: an entry that answered only hard
    questions is no longer ranked below one that answered only easy ones, provided a chain of shared
    questions links them (``component_*``).

    Parameters
    ----------
    df : pandas.DataFrame
        Long format, one row per (entry, question): ``entry_col``, ``question_col``,
        ``question_type_col`` (``"dataset"`` or ``"market"``) and either ``p_col`` (p_yes in [0, 1]) with
        ``outcome_col`` (0/1), or ``brier_col``.
    entry_col, question_col, p_col, outcome_col, question_type_col : str
        Column names. ``question_col`` must identify a question as scored (a dataset question once per
        resolution date).
    brier_col : str, optional
        A column of per-row Brier scores in [0, 1] to use instead of computing them from ``p_col`` and
        ``outcome_col`` (which are then not needed); NaN is a missing forecast.
    exclude_from_fit : collection, default=()
        Entries scored with the fitted difficulties but not fitted on: constant forecasters (Always 0.5),
        ensembles of entries already in the fit, a copy of the market price (ForecastBench leaves these
        out). Every question must have at least one fitted entry.
    fit_col : str, optional
        A bool column: a row where it is False is scored with the fitted difficulties but not fitted on (an
        imputed forecast, one question of an entry fitted elsewhere); with ``exclude_from_fit``, a row is
        fitted on when its entry is not excluded and its ``fit_col`` is True. Every question must still have
        a fitted row.
    market_reference : optional
        An entry whose Brier on each market question is taken as that question's difficulty, with no fit
        for market questions (ForecastBench's tournament leaderboard, ``MARKET_BRIER``: the market price).
        It must have answered every scored market question. Default: market questions are fitted like
        dataset ones (its baseline leaderboard).

    Returns
    -------
    pandas.DataFrame
        One row per entry (in order of first appearance), a default RangeIndex and the columns
        ``entry_col``; ``n`` (scored questions), ``n_dataset``, ``n_market``, ``n_missing`` (rows with no
        forecast), ``n_unresolved`` (rows with no outcome); ``in_fit`` (bool: some row of the entry was fitted
        on); ``brier`` (raw mean Brier
        over all its scored questions); ``adjusted_brier_dataset``, ``adjusted_brier_market``,
        ``adjusted_brier_overall`` (rescaled difficulty-adjusted Brier, Brier units, lower is better; NaN
        without questions of the type); ``brier_index_dataset``, ``brier_index_market``,
        ``brier_index_overall`` (percent, higher is better); ``component_dataset``, ``component_market``
        (Int64: the entry's connected group, 0 for the group with the most answers, -1 when its questions
        lie in several groups, <NA> without questions of the type); ``note`` ("" or why a value is not
        comparable; a Brier Index missing for some entries says why: no questions of the type, overall
        without one of the two types, or an adjusted score below 0; a type the frame has no question of is
        missing for every entry, unnoted).

    Raises
    ------
    DataValidationError
        (a ``ValueError``) naming the column, row and value: a missing column, a missing entry, question
        or question type, a question type other than dataset/market, one question with two types, a
        duplicated (entry, question) pair, p_yes or Brier outside [0, 1] or not numeric, an outcome other
        than 0/1, an unknown ``exclude_from_fit`` or ``market_reference`` entry, a question answered only
        by excluded entries, or a market question the reference did not answer.
    ReconcileError
        If the fixed-effects fit does not converge (:func:`two_way_fixed_effects`).

    Examples
    --------
    ``b`` answered only question 2, the hard one, and looks worse than ``a`` raw (0.25 against 0.2);
    adjusted, it is the best: on question 2 it beat ``a`` (0.36) and ``c`` (0.49), which answered both:

    >>> df = pd.DataFrame({"entry": ["a", "a", "c", "c", "b"], "question_id": [1, 2, 1, 2, 2],
    ...                    "brier": [0.04, 0.36, 0.09, 0.49, 0.25], "question_type": "dataset"})
    >>> t = brier_index_table(df, brier_col="brier").set_index("entry")
    >>> t["brier"].round(4).tolist(), t["adjusted_brier_dataset"].round(4).tolist()
    ([0.2, 0.29, 0.25], [0.2, 0.29, 0.07])
    >>> t["brier_index_dataset"].round(1).tolist()
    [55.3, 46.1, 73.5]
    """
    value_cols = [brier_col] if brier_col is not None else [p_col, outcome_col]
    data = _check_frame(df, entry_col, question_col, question_type_col, value_cols + ([fit_col] if fit_col is not None else []))
    b, missing, unresolved = _row_briers(data, p_col, outcome_col, brier_col)
    entry_codes, entries = pd.factorize(data[entry_col], sort=False)
    n_entries = len(entries)
    for name, wanted in (("exclude_from_fit", list(exclude_from_fit)), ("market_reference", [] if market_reference is None else [market_reference])):
        unknown = [x for x in wanted if x not in entries]
        if unknown:
            some = ", ".join(repr(_plain(x)) for x in entries[:10]) + (f" and {n_entries - 10} more" if n_entries > 10 else "")
            raise DataValidationError(f"{name}: {_plain(unknown[0])!r} is not an entry of {entry_col}; entries are {some}",
                                      field=name, value=_plain(unknown[0]))
    row_fit = (~entries.isin(list(exclude_from_fit)))[entry_codes]
    if fit_col is not None:
        flags = data[fit_col].to_numpy()
        bad = ~np.isin(flags, [True, False]) | data[fit_col].isna().to_numpy()
        if bad.any():
            _fail("must be True or False", data, fit_col, bad, flags)
        row_fit = row_fit & flags.astype(bool)

    scored = ~np.isnan(b)
    types = data[question_type_col].to_numpy()
    questions = data[question_col].to_numpy()
    present = [t for t in QUESTION_TYPES if (scored & (types == t)).any()]
    out: dict[str, Any] = {}
    notes: list[list[str]] = [[] for _ in range(n_entries)]
    for t in QUESTION_TYPES:
        rows = np.flatnonzero(scored & (types == t))
        out[f"n_{t}"] = np.zeros(n_entries, dtype=np.int64)
        out[f"adjusted_brier_{t}"] = np.full(n_entries, np.nan)
        out[f"component_{t}"] = pd.array([pd.NA] * n_entries, dtype="Int64")
        if rows.size == 0:
            continue
        q_codes, q_labels = pd.factorize(questions[rows], sort=False)
        e_codes = entry_codes[rows]
        difficulty, group, n_groups = _difficulty(t, question_col, data.index, rows, q_codes, q_labels, e_codes, b[rows], entries, row_fit[rows],
                                                  market_reference)
        adjusted, counts = _per_entry_mean(b[rows] - difficulty[q_codes], e_codes, n_entries)
        out[f"n_{t}"] = counts
        always_half = np.mean(ALWAYS_HALF_BRIER - difficulty)  # Always 0.5's adjusted score: on every question of the type
        out[f"adjusted_brier_{t}"] = adjusted + (ALWAYS_HALF_BRIER - always_half)
        lo = np.full(n_entries, np.iinfo(np.int64).max)
        hi = np.full(n_entries, -1)
        np.minimum.at(lo, e_codes, group[q_codes])
        np.maximum.at(hi, e_codes, group[q_codes])
        comp = np.where(lo == hi, hi, -1)
        out[f"component_{t}"] = pd.array(comp, dtype="Int64")
        out[f"component_{t}"][counts == 0] = pd.NA
        for i in np.flatnonzero((counts > 0) & (comp != 0)):
            notes[i].append(f"{t}: its questions lie in several unlinked groups" if comp[i] < 0 else
                            f"{t}: group {comp[i]} of {n_groups}, linked to group 0 by no chain of shared questions "
                            "(compared with it only if the groups' average entries are equally skilled)")
    if len(present) == 1:
        overall = out[f"adjusted_brier_{present[0]}"].copy()
    else:
        overall = (out["adjusted_brier_dataset"] + out["adjusted_brier_market"]) / 2.0
    out["adjusted_brier_overall"] = overall
    for part in ("dataset", "market", "overall"):
        score = out[f"adjusted_brier_{part}"]
        out[f"brier_index_{part}"] = brier_index(score)
        for i in np.flatnonzero(score < -ZERO_TOLERANCE):
            notes[i].append(f"{part}: adjusted Brier {score[i]:.4f} < 0, no Brier Index")
    for i in range(n_entries):  # every missing index says why
        lacks = [t for t in present if out[f"n_{t}"][i] == 0]  # a type no entry has: the whole table's, not noted
        for t in lacks:
            notes[i].append(f"{t}: no {t} questions")
        if len(present) == 2 and len(lacks) == 1:
            notes[i].append(f"overall: no {lacks[0]} questions (the overall score is the mean of the dataset and market scores)")

    out["brier"], out["n"] = _per_entry_mean(b[scored], entry_codes[scored], n_entries)
    out["n_missing"] = np.bincount(entry_codes, weights=missing, minlength=n_entries).astype(np.int64)
    out["n_unresolved"] = np.bincount(entry_codes, weights=unresolved, minlength=n_entries).astype(np.int64)
    out["in_fit"] = np.bincount(entry_codes, weights=(row_fit & scored).astype(float), minlength=n_entries) > 0
    out["note"] = ["; ".join(x) for x in notes]
    table = pd.DataFrame({c: out[c] for c in _TABLE_COLUMNS})
    table.insert(0, entry_col, list(entries))
    return table


def _difficulty(
    qtype: str,
    question_col: str,
    index: pd.Index,
    rows: np.ndarray,
    q_codes: np.ndarray,
    q_labels: Any,
    e_codes: np.ndarray,
    b: np.ndarray,
    entries: Any,
    fit_rows: np.ndarray,
    market_reference: Any,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Difficulty (per question code) of one question type, each question's connected group, and their count."""
    n_q = len(q_labels)
    if qtype == "market" and market_reference is not None:
        ref = entries.get_loc(market_reference)
        mine = e_codes == ref
        difficulty = np.full(n_q, np.nan)
        difficulty[q_codes[mine]] = b[mine]
        if np.isnan(difficulty).any():
            j = int(np.argmax(np.isnan(difficulty)))
            raise DataValidationError(f"market_reference {_plain(market_reference)!r} has no scored forecast on market question "
                                      f"{_plain(q_labels[j])!r}: its difficulty would be unknown", field="market_reference", value=_plain(q_labels[j]))
        return difficulty, np.zeros(n_q, dtype=np.int64), 1
    covered = np.bincount(q_codes[fit_rows], minlength=n_q) > 0
    if not covered.all():
        j = int(np.argmax(~covered))
        who = sorted({str(entries[k]) for k in e_codes[q_codes == j]})
        i = int(rows[np.argmax(q_codes == j)])
        raise DataValidationError(
            f"{qtype} question {_plain(q_labels[j])!r} (first at row {_plain(index[i])!r}) was answered only by entries left out of "
            f"the fit ({', '.join(who)}): its difficulty cannot be estimated; fit on one of them or drop the question",
            field=question_col, row=i, value=_plain(q_labels[j]))
    fit = two_way_fixed_effects(e_codes[fit_rows], q_codes[fit_rows], b[fit_rows], n_entries=len(entries), n_questions=n_q)
    return fit.question_effects, fit.question_component, fit.n_components
