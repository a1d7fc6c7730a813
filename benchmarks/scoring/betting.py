"""Betting return against the market price: what a bettor who takes the forecaster's probability as true earns
by betting one dollar per question at the market's price (Prophet Arena's average return).

The definition (Prophet Arena: Yang et al., "LLM-as-a-Prophet: Understanding Predictive Intelligence with Prophet
Arena", arXiv:2510.17638; Sida Li, "How We Score & Rank LLMs in Prediction Markets", the ``pm_rank`` package's
post, 2025, section "Money Earning"), for a binary question:

* The market sells a YES contract at price ``q`` (the market's probability of Yes) and a NO contract at
  ``1 - q``; each pays 1 dollar if its side happens.
* The bettor has 1 dollar for the question, believes the forecaster's ``p``, and spends it to maximise the
  expected utility :math:`U_\\gamma(w) = w^{1-\\gamma} / (1 - \\gamma)` (:math:`\\log w` at
  :math:`\\gamma = 1`) of the payoff ``w``, with risk aversion :math:`\\gamma \\in [0, 1]`.
* **Risk neutral** (:math:`\\gamma = 0`, Prophet Arena's default): the whole dollar on the side with the larger
  ``belief / price`` (the edge): YES when ``p > q``, NO when ``p < q``. The payoff is ``1 / q`` dollars if
  YES is bought and happens, ``1 / (1 - q)`` if NO is bought and happens, else 0.
* **Log utility** (:math:`\\gamma = 1`, Kelly): ``p`` dollars on YES and ``1 - p`` on NO: payoff ``p / q``
  if Yes, ``(1 - p) / (1 - q)`` if No.
* In between, the first-order condition gives payoffs :math:`x` (Yes) and :math:`y` (No) with
  :math:`x / y = r = \\left(\\frac{p (1 - q)}{(1 - p) q}\\right)^{1/\\gamma}` on the budget
  :math:`q x + (1 - q) y = 1`: :math:`y = 1 / (q r + 1 - q)`, :math:`x = r y`.

The per-question value returned is the **net return** ``payoff - 1`` per dollar (0: the dollar back; -1: all
lost). Prophet Arena's money-earning score is the mean payoff, ``1 +`` the mean return here.

Choices of ours, where the source is silent: with no edge (``p == q``) the risk-neutral bettor is indifferent
and here does not bet (return 0; every :math:`\\gamma > 0` gives 0 there too), so a forecaster that copies the
market earns exactly 0 and the metric measures edge over the market. A price of exactly 0 or 1 offers no odds
on one side (a finite stake would buy unbounded payoff) and is refused. The market price used by the harness
is the price a forecaster could know: ForecastBench's freeze value (the ``crowd`` baseline, taken about ten days
before the forecast due date), so only market questions have one.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from agent_schemas.errors import DataValidationError
from benchmarks.scoring.bootstrap import MIN_CLUSTERS_FOR_INTERVAL, clustered_bootstrap_ci
from benchmarks.scoring.tables import require_columns
from benchmarks.scoring.validation import as_1d_float, first_bad, validate_forecasts

__all__ = ["betting_return", "betting_table"]


def _check_prices(q: np.ndarray, n: int) -> None:
    if q.shape != (n,):
        raise DataValidationError(f"market_p_yes must have the shape of p_yes: {q.shape} vs ({n},)", field="market_p_yes", value=q.shape)
    bad = ~((q > 0.0) & (q < 1.0))  # NaN is bad too
    if bad.any():
        i, v = first_bad(q, bad)
        raise DataValidationError(f"market_p_yes must be a price in (0, 1): {v!r} at index {i} (a price of 0 or 1 offers no odds; "
                                  "a missing price must be dropped first)", field="market_p_yes", row=i, value=v)


def betting_return(p_yes: Any, market_p_yes: Any, outcomes: Any, *, risk_aversion: float = 0.0) -> np.ndarray:
    """Per-question net return of betting one dollar at the market price with the forecaster's probability.

    Higher is better: 0 is no edge (or no bet), -1 the whole dollar lost, ``1 / q - 1`` the most a risk-neutral
    YES bet at price ``q`` earns. The formula and its source are in the module docstring (Prophet Arena's
    average return, a CRRA bettor with risk aversion ``risk_aversion``).

    Parameters
    ----------
    p_yes : array-like of shape (n_questions,)
        The forecaster's probability of Yes, in [0, 1]; no NaN.
    market_p_yes : array-like of shape (n_questions,)
        The market's price of a YES contract (its probability of Yes) when the forecast was made, in the open
        interval (0, 1); no NaN.
    outcomes : array-like of shape (n_questions,)
        1 (Yes) / 0 (No); no NaN.
    risk_aversion : float, default=0.0
        :math:`\\gamma \\in [0, 1]`: 0 risk neutral (all on the side with the edge; Prophet Arena's default),
        1 log utility (Kelly: ``p`` on YES, ``1 - p`` on NO).

    Returns
    -------
    ndarray of shape (n_questions,)
        Payoff minus the dollar staked, per question, in dollars per dollar: in ``[-1, 1 / min(q, 1 - q) - 1]``.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) for invalid ``p_yes`` / ``outcomes`` (as :func:`brier_score`), a market price
        outside (0, 1) or NaN, mismatched shapes, or ``risk_aversion`` outside [0, 1]; the message names the
        index and value.

    References
    ----------
    Yang, Mahns, Li, Gu, Wu & Xu (2025), "LLM-as-a-Prophet: Understanding Predictive Intelligence with
    Prophet Arena", arXiv:2510.17638; S. Li (2025), "How We Score & Rank LLMs in Prediction Markets" (pm_rank).

    Examples
    --------
    >>> betting_return([0.7, 0.2, 0.5], [0.5, 0.4, 0.5], [1, 1, 0])  # YES at 0.5 won, NO at 0.6 lost, no edge
    array([ 1., -1.,  0.])
    >>> betting_return([0.8], [0.5], [1], risk_aversion=1.0).round(4)  # Kelly: 0.8 / 0.5 - 1
    array([0.6])
    """
    if isinstance(risk_aversion, bool) or not isinstance(risk_aversion, (int, float)) or not 0.0 <= risk_aversion <= 1.0:
        raise DataValidationError(f"risk_aversion must be in [0, 1]; got {risk_aversion!r}", field="risk_aversion", value=risk_aversion)
    p, o = validate_forecasts(p_yes, outcomes)
    q = as_1d_float(market_p_yes, "market_p_yes")
    _check_prices(q, p.size)
    if risk_aversion == 0.0:
        payoff_yes = np.where(p > q, 1.0 / q, np.where(p < q, 0.0, 1.0))
        payoff_no = np.where(p < q, 1.0 / (1.0 - q), np.where(p > q, 0.0, 1.0))
    else:
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            log_r = (np.log(p) + np.log1p(-q) - np.log1p(-p) - np.log(q)) / risk_aversion  # +-inf at p = 1 or 0
            payoff_no = 1.0 / (q * np.exp(log_r) + 1.0 - q)  # 0 when log_r = +inf: all on YES
            payoff_yes = 1.0 / (q + (1.0 - q) * np.exp(-log_r))  # 0 when log_r = -inf: all on NO
    return np.where(o == 1.0, payoff_yes, payoff_no) - 1.0


def betting_table(
    df: pd.DataFrame,
    *,
    method_col: str = "method",
    question_col: str = "question_id",
    p_col: str = "p_yes",
    outcome_col: str = "outcome",
    cluster_col: str | None = "cluster",
    market: str = "crowd",
    risk_aversion: float = 0.0,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: Any = 0,
    min_clusters: int = MIN_CLUSTERS_FOR_INTERVAL,
) -> pd.DataFrame:
    """Mean betting return (:func:`betting_return`) of each method against the market, with a clustered
    bootstrap interval, on the questions that have a market price.

    The market price of a question is the ``p_col`` of method ``market``'s row for it (the ``crowd`` baseline
    in a run: the market's probability at ForecastBench's freeze). Rows of questions without it, rows without a
    probability and unresolved rows are left out; ``market`` itself is not listed (it earns 0 by definition).

    Parameters
    ----------
    df : pandas.DataFrame
        Long format, one row per (method, question), as :func:`benchmarks.scoring.score_table` takes it.
    method_col, question_col, p_col, outcome_col, cluster_col : str
        Column names (``cluster_col`` None: every question its own cluster).
    market : str, default="crowd"
        The method whose probability is the market price.
    risk_aversion : float, default=0.0
        As :func:`betting_return`.
    n_resamples, confidence, seed, min_clusters
        Bootstrap settings, as :func:`benchmarks.scoring.clustered_bootstrap_ci`.

    Returns
    -------
    pandas.DataFrame
        One row per method (order of first appearance): ``method_col``, ``n`` (questions with a market price),
        ``n_clusters``, ``mean_return``, ``return_ci_low``, ``return_ci_high`` (dollars per dollar staked;
        higher is better) and ``n_bets`` (questions with a bet, ``p != price``; at ``risk_aversion > 0`` every
        question with ``p != price``). Empty (those columns) when no question has a market price.

    Raises
    ------
    DataValidationError
        For a missing column, or invalid values (as :func:`betting_return`).
    """
    require_columns(df, method_col=method_col, question_col=question_col, p_col=p_col, outcome_col=outcome_col, cluster_col=cluster_col)
    columns = [method_col, "n", "n_clusters", "mean_return", "return_ci_low", "return_ci_high", "n_bets"]
    prices = df.loc[(df[method_col] == market) & df[p_col].notna()].drop_duplicates(question_col).set_index(question_col)[p_col]
    rows = df[(df[method_col] != market) & df[p_col].notna() & df[outcome_col].notna() & df[question_col].isin(prices.index)]
    out = []
    for name, g in rows.groupby(method_col, sort=False):
        q = prices.loc[g[question_col]].to_numpy(dtype=float)
        p = g[p_col].to_numpy(dtype=float)
        r = betting_return(p, q, g[outcome_col].to_numpy(dtype=float), risk_aversion=risk_aversion)
        clusters = g[cluster_col].to_numpy() if cluster_col is not None else np.arange(len(g))
        ci = clustered_bootstrap_ci(r, clusters, n_resamples=n_resamples, confidence=confidence, seed=seed, min_clusters=min_clusters)
        out.append({method_col: name, "n": len(g), "n_clusters": len(pd.unique(clusters)), "mean_return": ci.mean,
                    "return_ci_low": ci.low, "return_ci_high": ci.high, "n_bets": int(np.count_nonzero(p != q))})
    return pd.DataFrame(out, columns=columns)
