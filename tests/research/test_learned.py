"""Weighted linear pools and their fitted weights (agent_research.learned) against hand values and an
independent optimiser."""

import warnings

import numpy as np
import pytest
from scipy import optimize

from agent_research.learned import fit_pool_weights, weighted_pool
from agent_schemas import DataValidationError


def test_weighted_pool_renormalises_over_the_inputs_present():
    p = [[0.2, 0.8, 0.5], [0.2, np.nan, 0.5], [np.nan, np.nan, np.nan]]
    got = weighted_pool(p, [2, 1, 1])
    # (0.4 + 0.8 + 0.5) / 4 = 0.425; (0.4 + 0.5) / 3 = 0.3; no input: NaN
    assert got[:2] == pytest.approx([0.425, 0.3]) and np.isnan(got[2])
    assert np.isnan(weighted_pool([[np.nan, 0.4]], [1, 0])[0])  # the only input present has weight 0


def test_fitted_weights_are_the_penalised_likelihood_optimum():
    rng = np.random.default_rng(0)
    n = 1500
    truth = rng.normal(0, 1.5, n)
    o = (rng.random(n) < 1 / (1 + np.exp(-truth))).astype(float)
    noisy = lambda shift, sd: 1 / (1 + np.exp(-(truth + shift + rng.normal(0, sd, n))))  # noqa: E731
    p = np.column_stack([noisy(0, 0.5), noisy(0, 1.2), noisy(1.5, 0.5)])
    p[rng.random(p.shape) < 0.1] = np.nan
    some = ~np.isnan(p).all(axis=1)
    p, o = p[some], o[some]
    w = fit_pool_weights(p, o, penalty=10.0)

    def objective(v):  # the documented objective, minimised by Nelder-Mead on unnormalised weights
        ww = np.abs(v) / np.abs(v).sum()
        q = np.clip(weighted_pool(p, ww), 1e-4, 1 - 1e-4)
        return -np.sum(o * np.log(q) + (1 - o) * np.log1p(-q)) + 10.0 * np.sum((ww - 1 / 3) ** 2)

    ref = optimize.minimize(objective, [1 / 3] * 3, method="Nelder-Mead", options={"xatol": 1e-9, "fatol": 1e-10, "maxiter": 8000}).x
    assert w == pytest.approx(np.abs(ref) / np.abs(ref).sum(), abs=1e-4)
    assert w.sum() == pytest.approx(1.0) and w[0] > w[1] > w[2]  # sharp and unbiased > noisy > biased


def test_the_penalty_pulls_towards_equal_weights_and_inputs_are_validated():
    good = np.array([0.8, 0.3, 0.7, 0.2] * 10)
    o = np.array([1, 0, 1, 0] * 10)
    p = np.column_stack([good, 1 - good])
    assert fit_pool_weights(p, o, penalty=0.0)[0] > fit_pool_weights(p, o, penalty=1000.0)[0] > 0.5
    with pytest.raises(DataValidationError, match="both outcomes"):
        fit_pool_weights(p, np.ones(40))
    with pytest.raises(DataValidationError, match=r"outside \[0, 1\]: 1.5 at \(row 0, column 1\)"):
        fit_pool_weights([[0.2, 1.5], [0.3, 0.4]], [1, 0])
    with pytest.raises(DataValidationError, match="outcomes must be 0 or 1: 2.0 at index 1"):
        fit_pool_weights(p[:2], [1, 2])
    with pytest.raises(DataValidationError, match="weights must be 2"):
        weighted_pool(p, [1, -1])


def test_a_sparse_panel_fits_without_dividing_by_zero_and_pools_every_question():
    # 40 members each answering 15% of the questions, as in a panel of people: the fitted weights of the poor members
    # used to underflow to 0.0, then a question answered only by them pooled 0 / 0 (a RuntimeWarning during the fit,
    # and no probability for 146 of its 300 questions afterwards)
    rng = np.random.default_rng(3)
    n, k = 300, 40
    truth = rng.normal(0, 1.5, n)
    o = (rng.random(n) < 1 / (1 + np.exp(-truth))).astype(float)
    noise_sd = rng.uniform(0.3, 2.0, k)  # members from sharp to noisy
    p = 1 / (1 + np.exp(-(truth[:, None] + rng.normal(0, 1, (n, k)) * noise_sd)))
    p = np.round(p, 2).clip(0.01, 0.99)
    p[rng.random((n, k)) > 0.15] = np.nan
    keep = ~np.isnan(p).all(axis=1)
    p, o = p[keep], o[keep]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a 0 / 0 in the fit fails the test
        w = fit_pool_weights(p, o)
    pooled = weighted_pool(p, w)
    assert np.isfinite(pooled).all() and w.min() > 0

    def objective(ww):
        q = np.clip(weighted_pool(p, ww), 1e-4, 1 - 1e-4)
        return -np.sum(o * np.log(q) + (1 - o) * np.log1p(-q)) + 10.0 * np.sum((ww - 1 / k) ** 2)

    assert objective(w) < objective(np.full(k, 1 / k)) - 1.0  # the fit beats equal weights on its own objective
