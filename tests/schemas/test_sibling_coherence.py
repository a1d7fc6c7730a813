"""Coherence of binary siblings: the incoherence measure, the projection onto the simplex (hand values, the
KKT conditions as an oracle) and its guarantee (never a higher group Brier score, on random inputs)."""

from __future__ import annotations

import numpy as np
import pytest

from agent_schemas import DataValidationError
from agent_schemas.kinds.multiple_choice.coherence import group_brier, incoherence, project_groups, project_to_simplex


def test_incoherence_hand_values():
    assert incoherence([0.5, 0.4, 0.3]) == pytest.approx(0.2)
    assert incoherence([0.2, 0.3]) == pytest.approx(-0.5)
    np.testing.assert_allclose(incoherence([[0.5, 0.5, 0.0], [1.0, 1.0, 1.0]]), [0.0, 2.0])


@pytest.mark.parametrize("p, expected", [
    ([0.9, 0.6, 0.1], [0.65, 0.35, 0.0]),        # theta = 0.25; the smallest member goes to 0
    ([0.5, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]),     # equal shares of the 0.5 excess
    ([0.2, 0.3, 0.2], [0.3, 0.4, 0.3]),           # under-round (sum 0.7): each member raised by 0.1
    ([0.7, 0.3], [0.7, 0.3]),                     # coherent: unchanged
    ([1.0, 1.0, 0.0], [0.5, 0.5, 0.0]),
    ([0.0, 0.0, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25]),
])
def test_projection_hand_values(p, expected):
    np.testing.assert_allclose(project_to_simplex(p), expected, atol=1e-12)


def test_group_brier_hand_value():
    # (0.9-1)^2 + 0.6^2 + 0.1^2 = 0.01 + 0.36 + 0.01
    assert group_brier([0.9, 0.6, 0.1], 0) == pytest.approx(0.38)
    # projected: (0.65-1)^2 + 0.35^2 = 0.245, below 0.38 by at least ||p - q||^2 = 0.0625 * 2 + 0.01 = 0.135
    assert group_brier([0.65, 0.35, 0.0], 0) == pytest.approx(0.245)
    assert 0.38 - 0.245 >= 0.135 - 1e-12


def test_projection_satisfies_kkt_on_random_inputs():
    """The oracle: q is the projection iff q is in the simplex and p - q = theta on q's support, <= theta off it."""
    rng = np.random.default_rng(7)
    for k in (2, 3, 5, 12):
        p = rng.random((500, k))
        q = project_to_simplex(p)
        assert (q >= 0).all()
        np.testing.assert_allclose(q.sum(axis=1), 1.0, atol=1e-12)
        d = p - q
        for row_d, row_q in zip(d, q):
            support = row_q > 0
            theta = row_d[support]
            np.testing.assert_allclose(theta, theta[0], atol=1e-12)
            assert (row_d[~support] <= theta[0] + 1e-12).all()


def test_projection_never_raises_the_group_brier_score():
    """The guarantee, for every possible winner of every random group, with its margin ||p - q||^2."""
    rng = np.random.default_rng(2009)
    for k in (2, 3, 4, 8, 20):
        p = rng.random((2000, k)) ** rng.uniform(0.3, 3.0)  # both over- and under-round groups
        q = project_to_simplex(p)
        for w in range(k):
            winners = np.full(p.shape[0], w)
            before, after = group_brier(p, winners), group_brier(q, winners)
            gap = ((p - q) ** 2).sum(axis=1)
            assert (after <= before - gap + 1e-12).all()
        assert (np.abs(incoherence(q)) < 1e-12).all()


def test_projection_of_coherent_groups_is_the_identity():
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(6), size=100)
    np.testing.assert_allclose(project_to_simplex(p), p, atol=1e-12)


@pytest.mark.parametrize("bad, match", [
    ([0.5, 1.2], "outside"),
    ([0.5], "k >= 2"),
    ([[0.5, np.nan]], "NaN|nan"),
])
def test_bad_input_is_refused(bad, match):
    with pytest.raises(DataValidationError, match=match):
        project_to_simplex(bad)


def test_winner_must_be_a_member():
    with pytest.raises(DataValidationError, match="winner"):
        group_brier([0.5, 0.5], 2)


def test_project_groups_projects_complete_groups_only():
    p = {"a": 0.9, "b": 0.6, "c": 0.1, "d": 0.5, "e": 0.7, "solo": 0.3}
    out = project_groups(p, [("a", "b", "c"), ("d", "e", "missing")])
    assert out["a"] == pytest.approx(0.65) and out["b"] == pytest.approx(0.35) and out["c"] == 0.0
    assert (out["d"], out["e"], out["solo"]) == (0.5, 0.7, 0.3)  # incomplete group and outsiders unchanged
    assert p["a"] == 0.9  # the input is not modified
    with pytest.raises(DataValidationError, match="in sibling groups 0 and 1"):
        project_groups(p, [("a", "b"), ("b", "c")])
    with pytest.raises(DataValidationError, match="'b' is 1.5"):
        project_groups({"a": 0.2, "b": 1.5}, [("a", "b")])
