"""ForecastBench's difficulty-adjusted Brier and Brier Index: hand-computed cases, a dense least-squares
oracle on explicit dummy columns, the invariances of the definition, and the inputs it refuses."""

import math

import numpy as np
import pandas as pd
import pytest

from agent_schemas.errors import DataValidationError, ReconcileError
from benchmarks.scoring import brier_index, brier_index_table, two_way_fixed_effects


def frame(rows, qtype="dataset"):
    """A long frame from ``(entry, question, brier)`` triples, every question of ``qtype``."""
    return pd.DataFrame(rows, columns=["entry", "question_id", "brier"]).assign(question_type=qtype)


def table(df, **kw):
    return brier_index_table(df, brier_col="brier", **kw).set_index("entry")


# A answered all three questions; B did not answer q3. By hand (module docstring, step 4): q3's only
# answer fits exactly, so A and B's effects come from the balanced 2x2 block on q1, q2:
# a_A - a_B = mean(.1, .3) - mean(.3, .5) = -0.2, so a = (-0.1, 0.1) (averaging 0); f_q = mean(y - a):
# f1 = mean(.2, .2) = 0.2, f2 = mean(.4, .4) = 0.4, f3 = 0.6 + 0.1 = 0.7. Mean difficulty 1.3 / 3.
UNBALANCED = [("A", "q1", 0.1), ("A", "q2", 0.3), ("A", "q3", 0.6), ("B", "q1", 0.3), ("B", "q2", 0.5)]
MEAN_F = 1.3 / 3


def test_balanced_panel_by_hand_difficulty_is_the_question_mean_and_adjusted_equals_raw():
    fit = two_way_fixed_effects([0, 0, 0, 1, 1, 1], [0, 1, 2, 0, 1, 2], [0.1, 0.3, 0.2, 0.3, 0.5, 0.1])
    # row means 0.2 and 0.3 around the grand mean 0.25; column means 0.2, 0.4, 0.15
    np.testing.assert_allclose(fit.entry_effects, [-0.05, 0.05], atol=1e-12)
    np.testing.assert_allclose(fit.question_effects, [0.2, 0.4, 0.15], atol=1e-12)
    t = table(frame([("A", 1, 0.1), ("A", 2, 0.3), ("A", 3, 0.2), ("B", 1, 0.3), ("B", 2, 0.5), ("B", 3, 0.1)]))
    np.testing.assert_allclose(t["adjusted_brier_dataset"], [0.2, 0.3], atol=1e-12)
    np.testing.assert_allclose(t["brier"], [0.2, 0.3], atol=1e-12)


def test_unbalanced_panel_by_hand():
    fit = two_way_fixed_effects([0, 0, 0, 1, 1], [0, 1, 2, 0, 1], [0.1, 0.3, 0.6, 0.3, 0.5])
    np.testing.assert_allclose(fit.entry_effects, [-0.1, 0.1], atol=1e-12)
    np.testing.assert_allclose(fit.question_effects, [0.2, 0.4, 0.7], atol=1e-12)
    t = table(frame(UNBALANCED))
    # A answered every question: its raw Brier 1/3. B: a_B + mean f = 0.1 + 1.3/3 (raw 0.4)
    np.testing.assert_allclose(t["adjusted_brier_dataset"], [1 / 3, 0.1 + MEAN_F], atol=1e-12)
    np.testing.assert_allclose(t["brier"], [1 / 3, 0.4], atol=1e-12)
    np.testing.assert_allclose(t["brier_index_dataset"], [100 * (1 - math.sqrt(1 / 3)), 100 * (1 - math.sqrt(0.1 + MEAN_F))], atol=1e-9)
    assert t["n"].tolist() == [3, 2] and t["n_dataset"].tolist() == [3, 2] and t["n_market"].tolist() == [0, 0]
    assert t["in_fit"].tolist() == [True, True] and t["component_dataset"].tolist() == [0, 0]
    assert t["component_market"].isna().all() and t["adjusted_brier_market"].isna().all()
    # one question type in the frame: overall is that type's score
    np.testing.assert_allclose(t["adjusted_brier_overall"], t["adjusted_brier_dataset"])
    assert t["note"].tolist() == ["", ""]


def test_additive_data_is_fitted_exactly():
    a = np.array([-0.05, 0.0, 0.05])  # averages 0, the normalisation
    f = np.array([0.1, 0.3, 0.5, 0.2])
    answered = {0: [0, 1], 1: [1, 2, 3], 2: [0, 2, 3]}
    rows = [(e, q, a[e] + f[q]) for e, qs in answered.items() for q in qs]
    fit = two_way_fixed_effects([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
    np.testing.assert_allclose(fit.entry_effects, a, atol=1e-12)
    np.testing.assert_allclose(fit.question_effects, f, atol=1e-12)
    # adjusted = a_e + mean f = a_e + 0.275: entry 0's raw 0.15 becomes 0.225, entry 2's 0.31667 becomes 0.325
    t = table(frame(rows))
    np.testing.assert_allclose(t["adjusted_brier_dataset"], a + 0.275, atol=1e-12)
    np.testing.assert_allclose(t["brier"], [0.15, (0.3 + 0.5 + 0.2) / 3, (0.15 + 0.55 + 0.25) / 3], atol=1e-12)


# --- the independent solver: dense least squares on explicit dummies, ForecastBench's recipe -----------


def dense_question_effects(e, q, y, n_entries, n_questions):
    """pyfixest's parametrisation: a dummy for every question, for every entry but the first."""
    X = np.zeros((len(y), n_questions + n_entries - 1))
    X[np.arange(len(y)), q] = 1.0
    later = e > 0
    X[np.flatnonzero(later), n_questions + e[later] - 1] = 1.0
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    return coef[:n_questions], X @ coef


def forecastbench_recipe(e, q, y, f, n_entries):
    """Mean of (brier - f) per entry, shifted by what makes an Always 0.5 on every question score 0.25."""
    adjusted = np.array([np.mean(y[e == k] - f[q[e == k]]) for k in range(n_entries)])
    always_half = np.mean(0.25 - f)
    return adjusted + 0.25 - always_half


def random_panel(seed, n_entries=7, n_questions=25):
    rng = np.random.default_rng(seed)
    mask = rng.random((n_entries, n_questions)) < rng.uniform(0.3, 0.8, n_entries)[:, None]
    mask[0] = True  # one entry on every question: the panel is connected
    e, q = np.nonzero(mask)
    p = rng.uniform(0, 1, e.size).round(2)
    o = (rng.random(n_questions) < 0.4).astype(int)[q]
    return e, q, p, o


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_fit_matches_dense_least_squares(seed):
    e, q, p, o = random_panel(seed)
    y = (p - o) ** 2
    fit = two_way_fixed_effects(e, q, y)
    f_dense, fitted_dense = dense_question_effects(e, q, y, 7, 25)
    np.testing.assert_allclose(fit.fitted(e, q), fitted_dense, atol=1e-9)
    # identified up to one constant: the differences between question effects agree
    np.testing.assert_allclose(fit.question_effects - fit.question_effects[0], f_dense - f_dense[0], atol=1e-9)
    assert fit.n_components == 1


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_table_matches_forecastbench_recipe_on_the_dense_fit(seed):
    e, q, p, o = random_panel(seed)
    y = (p - o) ** 2
    df = pd.DataFrame({"entry": [f"m{k}" for k in e], "question_id": q, "p_yes": p, "outcome": o, "question_type": "dataset"})
    t = brier_index_table(df).set_index("entry").loc[[f"m{k}" for k in range(7)]]
    f_dense, _ = dense_question_effects(e, q, y, 7, 25)
    expected = forecastbench_recipe(e, q, y, f_dense, 7)
    np.testing.assert_allclose(t["adjusted_brier_dataset"], expected, atol=1e-9)
    np.testing.assert_allclose(t["brier_index_dataset"], 100 * (1 - np.sqrt(expected)), atol=1e-6)


def test_excluded_entry_is_scored_on_difficulties_fitted_without_it():
    e, q, p, o = random_panel(5)
    y = (p - o) ** 2
    df = pd.DataFrame({"entry": [f"m{k}" for k in e], "question_id": q, "p_yes": p, "outcome": o, "question_type": "dataset"})
    t = brier_index_table(df, exclude_from_fit=["m3"]).set_index("entry").loc[[f"m{k}" for k in range(7)]]
    keep = e != 3
    # the dense fit sees every entry but m3; m3 is scored with it (its code stays, without rows)
    f_dense, _ = dense_question_effects(e[keep], q[keep], y[keep], 7, 25)
    np.testing.assert_allclose(t["adjusted_brier_dataset"], forecastbench_recipe(e, q, y, f_dense, 7), atol=1e-9)
    assert t["in_fit"].tolist() == [True, True, True, False, True, True, True]


def test_disconnected_fit_matches_dense_least_squares_and_each_group_is_normalised():
    # entries 0-1 on questions 0-2, entries 2-4 on questions 3-6: two groups
    rng = np.random.default_rng(9)
    pairs = [(k, j) for k in (0, 1) for j in (0, 1, 2)] + [(k, j) for k in (2, 3, 4) for j in (3, 4, 5, 6) if (k, j) != (4, 6)]
    e, q = np.array(pairs).T
    y = rng.uniform(0, 1, e.size)
    fit = two_way_fixed_effects(e, q, y)
    X = np.zeros((e.size, 12))
    X[np.arange(e.size), q] = 1.0
    X[np.arange(e.size), 7 + e] = 1.0
    np.testing.assert_allclose(fit.fitted(e, q), X @ np.linalg.lstsq(X, y, rcond=None)[0], atol=1e-9)
    assert fit.n_components == 2
    assert fit.entry_component.tolist() == [1, 1, 0, 0, 0]  # the group with more answers is 0
    assert fit.question_component.tolist() == [1, 1, 1, 0, 0, 0, 0]
    assert abs(fit.entry_effects[:2].mean()) < 1e-12 and abs(fit.entry_effects[2:].mean()) < 1e-12


def test_codes_without_observations_get_nan_and_no_group():
    fit = two_way_fixed_effects([0, 0, 2, 2], [0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4], n_entries=4, n_questions=3)
    assert np.isnan(fit.entry_effects[[1, 3]]).all() and np.isnan(fit.question_effects[2])
    assert fit.entry_component.tolist() == [0, -1, 0, -1] and fit.question_component.tolist() == [0, 0, -1]
    np.testing.assert_allclose(fit.entry_effects[[0, 2]], [-0.1, 0.1], atol=1e-12)


# --- invariances -----------------------------------------------------------------------------------


def test_a_constant_added_to_one_question_moves_its_difficulty_and_no_difference_between_entries():
    e, q, p, o = random_panel(4)
    y = (p - o) ** 2
    df = pd.DataFrame({"entry": [f"m{k}" for k in e], "question_id": q, "brier": y, "question_type": "dataset"})
    c = (1 - y[q == 6].max()) / 2  # a Brier score stays in [0, 1]
    assert c > 0.05
    harder = df.assign(brier=np.where(df["question_id"] == 6, df["brier"] + c, df["brier"]))
    before, after = table(df), table(harder)
    # every adjusted score moves by the same c / 25: the reference Always 0.5 still scores 0.25 on question 6,
    # which is now c harder for everyone else; so every difference between entries is unchanged
    np.testing.assert_allclose(after["adjusted_brier_dataset"] - before["adjusted_brier_dataset"], c / 25, atol=1e-9)
    fit0, fit1 = two_way_fixed_effects(e, q, y), two_way_fixed_effects(e, q, np.where(q == 6, y + c, y))
    np.testing.assert_allclose(fit1.question_effects - fit0.question_effects, np.where(np.arange(25) == 6, c, 0.0), atol=1e-9)
    np.testing.assert_allclose(fit1.entry_effects, fit0.entry_effects, atol=1e-9)


@pytest.mark.parametrize("excluded", [(), ("half",)])
def test_always_half_on_every_question_scores_exactly_a_quarter(excluded):
    e, q, p, o = random_panel(6)
    df = pd.DataFrame({"entry": [f"m{k}" for k in e], "question_id": q, "p_yes": p, "outcome": o, "question_type": "dataset"})
    half = pd.DataFrame({"entry": "half", "question_id": range(25), "p_yes": 0.5,
                         "outcome": df.drop_duplicates("question_id").set_index("question_id")["outcome"].sort_index().to_numpy(),
                         "question_type": "dataset"})
    t = brier_index_table(pd.concat([df, half], ignore_index=True), exclude_from_fit=excluded).set_index("entry")
    assert t.loc["half", "adjusted_brier_dataset"] == pytest.approx(0.25, abs=1e-12)
    assert t.loc["half", "brier_index_dataset"] == pytest.approx(50.0, abs=1e-9)


def test_perfect_forecaster_on_every_question_has_index_100():
    e, q, p, o = random_panel(7)
    df = pd.DataFrame({"entry": [f"m{k}" for k in e], "question_id": q, "p_yes": p, "outcome": o, "question_type": "dataset"})
    outcomes = df.drop_duplicates("question_id").set_index("question_id")["outcome"].sort_index()
    oracle = pd.DataFrame({"entry": "oracle", "question_id": outcomes.index, "p_yes": outcomes.to_numpy().astype(float),
                           "outcome": outcomes.to_numpy(), "question_type": "dataset"})
    t = brier_index_table(pd.concat([df, oracle], ignore_index=True)).set_index("entry")
    assert abs(t.loc["oracle", "adjusted_brier_dataset"]) < 1e-12
    assert t.loc["oracle", "brier_index_dataset"] == 100.0


def test_different_question_sets_become_comparable():
    # three anchors answer 10 easy and 10 hard questions, 0.03 and 0.08 apart on each; X answers only the
    # hard ones (Brier 0.2025, 0.1575 better than A1 there), Y only the easy ones (0.0225, 0.0125 worse than A1)
    easy, hard = [f"e{i}" for i in range(10)], [f"h{i}" for i in range(10)]
    rows = [(a, qid, base + off) for a, off in (("A1", 0.0), ("A2", 0.03), ("A3", 0.08))
            for qs, base in ((easy, 0.01), (hard, 0.36)) for qid in qs]
    rows += [("X", qid, 0.2025) for qid in hard] + [("Y", qid, 0.0225) for qid in easy]
    t = table(frame(rows))
    raw, adjusted = t["brier"], t["adjusted_brier_dataset"]
    assert raw["Y"] < raw["A1"] < raw["X"]  # raw: Y first, X fourth
    # by hand: the average question costs A1 0.185; X scores 0.185 - 0.1575, Y 0.185 + 0.0125
    np.testing.assert_allclose(adjusted[["A1", "A2", "A3", "X", "Y"]], [0.185, 0.215, 0.265, 0.0275, 0.1975], atol=1e-12)
    assert list(adjusted.sort_values().index) == ["X", "A1", "Y", "A2", "A3"]
    assert list(t["brier_index_dataset"].sort_values(ascending=False).index) == ["X", "A1", "Y", "A2", "A3"]


def test_an_entry_with_one_question_moves_no_difficulty():
    t = table(frame(UNBALANCED + [("D", "q3", 0.5)]))
    # D's effect absorbs its only answer; A and B are as before; D: 0.5 - f3 + mean f
    np.testing.assert_allclose(t["adjusted_brier_dataset"], [1 / 3, 0.1 + MEAN_F, 0.5 - 0.7 + MEAN_F], atol=1e-12)


def test_excluding_a_constant_forecaster_keeps_the_difficulties_including_it_shrinks_them():
    half = [("C", qid, 0.25) for qid in ("q1", "q2", "q3")]
    excluded = table(frame(UNBALANCED + half), exclude_from_fit=["C"])
    np.testing.assert_allclose(excluded["adjusted_brier_dataset"], [1 / 3, 0.1 + MEAN_F, 0.25], atol=1e-12)
    included = table(frame(UNBALANCED + half))
    # fitted on, C pulls every difficulty towards 0.25: the dense fit with C, by ForecastBench's recipe
    e, q = np.array([0, 0, 0, 1, 1, 2, 2, 2]), np.array([0, 1, 2, 0, 1, 0, 1, 2])
    y = np.array([0.1, 0.3, 0.6, 0.3, 0.5, 0.25, 0.25, 0.25])
    expected = forecastbench_recipe(e, q, y, dense_question_effects(e, q, y, 3, 3)[0], 3)
    np.testing.assert_allclose(included["adjusted_brier_dataset"], expected, atol=1e-12)
    assert expected[1] < 0.1 + MEAN_F - 0.01  # B, which skipped the hard q3, gains


# --- groups, missing values, question types -----------------------------------------------------


def test_disconnected_groups_are_normalised_apart_and_flagged():
    small = [("A", "q1", 0.3), ("A", "q2", 0.5), ("B", "q1", 0.5), ("B", "q2", 0.7)]
    big = [(k, qid, v) for k, v in (("C", 0.2), ("D", 0.4), ("E", 0.3)) for qid in ("q3", "q4", "q5")]
    t = table(frame(small + big))
    # each group balanced: difficulty = question mean in its group (0.4, 0.6; 0.3 x 3), mean 1.9 / 5 = 0.38;
    # adjusted = (row mean - group mean) + 0.38
    np.testing.assert_allclose(t["adjusted_brier_dataset"], [0.28, 0.48, 0.28, 0.48, 0.38], atol=1e-12)
    assert t["component_dataset"].tolist() == [1, 1, 0, 0, 0]
    assert all("group 1 of 2" in n for n in t.loc[["A", "B"], "note"]) and t.loc[["C", "D", "E"], "note"].tolist() == [""] * 3


def test_an_excluded_entry_across_groups_is_flagged():
    small = [("A", "q1", 0.3), ("B", "q1", 0.5)]
    big = [("C", "q2", 0.2), ("D", "q2", 0.4), ("C", "q3", 0.2)]
    t = table(frame(small + big + [("Z", "q1", 0.1), ("Z", "q2", 0.1)]), exclude_from_fit=["Z"])
    assert t.loc["Z", "component_dataset"] == -1 and "several unlinked groups" in t.loc["Z", "note"]


def test_missing_forecasts_and_unresolved_questions_are_dropped_and_counted():
    base = pd.DataFrame({"entry": ["A", "A", "A", "B", "B"], "question_id": ["q1", "q2", "q3", "q1", "q2"],
                         "p_yes": [0.9, 0.3, 0.6, 0.7, 0.5], "outcome": [1, 0, 1, 1, 0], "question_type": "dataset"})
    extra = pd.DataFrame({"entry": ["B", "A", "B"], "question_id": ["q3", "q4", "q4"], "p_yes": [np.nan, 0.2, np.nan],
                          "outcome": [1, np.nan, np.nan], "question_type": "dataset"})
    clean = brier_index_table(base).set_index("entry")
    messy = brier_index_table(pd.concat([base, extra], ignore_index=True)).set_index("entry")
    cols = ["n", "brier", "adjusted_brier_dataset", "brier_index_dataset"]
    pd.testing.assert_frame_equal(messy[cols], clean[cols])
    assert messy["n_missing"].tolist() == [0, 1] and messy["n_unresolved"].tolist() == [1, 1]
    # by hand, as UNBALANCED: Brier 0.01, 0.09, 0.16 and 0.09, 0.25; a = (-0.06, 0.06); f = (0.05, 0.17, 0.16 + 0.06)
    np.testing.assert_allclose(clean["adjusted_brier_dataset"], [0.26 / 3, 0.06 + (0.05 + 0.17 + 0.22) / 3], atol=1e-12)


def test_overall_is_the_mean_of_the_types_and_its_index_is_taken_of_that_mean():
    rows = frame([("A", "d1", 0.04), ("A", "d2", 0.16), ("B", "d1", 0.16), ("B", "d2", 0.36)], "dataset")
    rows = pd.concat([rows, frame([("A", "m1", 0.36), ("B", "m1", 0.01), ("C", "m1", 0.25)], "market"),
                      frame([("C", "d1", 0.25), ("C", "d2", 0.25)], "dataset")], ignore_index=True)
    rows = pd.concat([rows, frame([("D", "d1", 0.0)], "dataset")], ignore_index=True)
    t = table(rows)
    # dataset panel balanced for A, B, C: adjusted = raw (A 0.1, B 0.26, C 0.25); market: one question each
    assert t.loc[["A", "B", "C"], "adjusted_brier_dataset"].tolist() == pytest.approx([0.1, 0.26, 0.25], abs=1e-12)
    assert t.loc[["A", "B", "C"], "adjusted_brier_market"].tolist() == pytest.approx([0.36, 0.01, 0.25], abs=1e-12)
    assert t.loc[["A", "B", "C"], "adjusted_brier_overall"].tolist() == pytest.approx([0.23, 0.135, 0.25], abs=1e-12)
    assert t.loc["A", "brier_index_overall"] == pytest.approx(100 * (1 - math.sqrt(0.23)), abs=1e-9)
    mean_of_indices = (t.loc["A", "brier_index_dataset"] + t.loc["A", "brier_index_market"]) / 2
    assert mean_of_indices - t.loc["A", "brier_index_overall"] > 2  # 52.0, not the mean of 68.4 and 40.0
    assert t.loc["A", "brier"] == pytest.approx((0.04 + 0.16 + 0.36) / 3) and t.loc["A", "n"] == 3
    # D answered no market question: no overall score
    assert math.isnan(t.loc["D", "adjusted_brier_overall"]) and math.isnan(t.loc["D", "brier_index_overall"])
    assert t.loc["D", "n_market"] == 0 and pd.isna(t.loc["D", "component_market"])


def test_market_reference_makes_the_reference_brier_the_difficulty():
    rows = pd.concat([
        frame([("A", "m1", 0.04), ("A", "m2", 0.5), ("crowd", "m1", 0.09), ("crowd", "m2", 0.36), ("crowd", "m3", 0.01),
               ("B", "m3", 0.0)], "market"),
        frame([("A", "d1", 0.2), ("B", "d1", 0.3)], "dataset"),
    ], ignore_index=True)
    t = table(rows, market_reference="crowd")
    mean_crowd = (0.09 + 0.36 + 0.01) / 3
    # A: mean(0.04 - 0.09, 0.5 - 0.36) + mean crowd; B: (0 - 0.01) + mean crowd; the crowd: its own raw Brier
    np.testing.assert_allclose(t.loc[["A", "B", "crowd"], "adjusted_brier_market"],
                               [0.045 + mean_crowd, -0.01 + mean_crowd, mean_crowd], atol=1e-12)
    assert t.loc[["A", "B"], "adjusted_brier_dataset"].tolist() == pytest.approx([0.2, 0.3], abs=1e-12)


def test_negative_adjusted_score_has_no_index_and_says_so():
    # X is perfect on the hard question only: a_X = -f2 = -0.55, mean f = 0.3, adjusted -0.25
    t = table(frame([("A", "q1", 0.0), ("A", "q2", 0.5), ("B", "q1", 0.1), ("B", "q2", 0.6), ("X", "q2", 0.0)]))
    assert t.loc["X", "adjusted_brier_dataset"] == pytest.approx(-0.25, abs=1e-12)
    assert math.isnan(t.loc["X", "brier_index_dataset"])
    assert "adjusted Brier -0.2500 < 0, no Brier Index" in t.loc["X", "note"]


def test_brier_index_values():
    assert brier_index(0.25) == 50.0 and brier_index(0.0) == 100.0 and brier_index(1.0) == 0.0
    assert brier_index(0.04) == pytest.approx(80.0)
    assert brier_index(-1e-15) == 100.0  # float noise around an exact 0
    out = brier_index([0.16, -0.01, np.nan])
    assert out[0] == pytest.approx(60.0) and np.isnan(out[1:]).all()


# --- refusals ---------------------------------------------------------------------------------------


def good_frame():
    return pd.DataFrame({"entry": ["A", "A", "B", "B"], "question_id": ["q1", "q2", "q1", "q2"], "p_yes": [0.9, 0.2, 0.6, 0.4],
                         "outcome": [1, 0, 1, 0], "question_type": "dataset"}, index=[10, 11, 12, 13])


@pytest.mark.parametrize("change, kw, field, row, message", [
    (lambda d: d.drop(columns="question_type"), {}, "question_type", None, "'question_type' is not a column"),
    (lambda d: d.assign(p_yes=[0.9, 1.2, 0.6, 0.4]), {}, "p_yes", 1, "p_yes has values outside [0, 1]: 1.2 at row 11"),
    (lambda d: d.assign(p_yes=[0.9, 0.2, "high", 0.4]), {}, "p_yes", 2, "p_yes is not numeric: 'high' at row 12"),
    (lambda d: d.assign(outcome=[1, 0, 2, 0]), {}, "outcome", 2, "outcome must be 0 or 1 (or NaN: unresolved): 2.0 at row 12"),
    (lambda d: d.assign(question_type=["dataset", "other", "dataset", "other"]), {}, "question_type", 1,
     "question_type must be one of ['dataset', 'market']: 'other' at row 11"),
    (lambda d: d.assign(question_type=["dataset", "market", "dataset", "dataset"]), {}, "question_type", 3,
     "question 'q2' has two question types: 'dataset' at row 13, 'market' on an earlier row"),
    (lambda d: d.assign(entry=["A", "A", None, "B"]), {}, "entry", 2, "entry has a missing value at row 12"),
    (lambda d: d.assign(question_id=["q1", "q1", "q1", "q2"]), {}, "question_id", 1, "duplicated (entry, question_id) pair at row 11: 'A', 'q1'"),
    (lambda d: d, {"exclude_from_fit": ["Z"]}, "exclude_from_fit", None, "exclude_from_fit: 'Z' is not an entry of entry"),
    (lambda d: d, {"exclude_from_fit": ["A", "B"]}, "question_id", 0,
     "dataset question 'q1' (first at row 10) was answered only by entries left out of the fit (A, B)"),
    (lambda d: d.assign(question_type="market").iloc[:3], {"market_reference": "B"}, "market_reference", None,
     "market_reference 'B' has no scored forecast on market question 'q2'"),
    (lambda d: d.iloc[:0], {}, "entry", None, "the data frame is empty"),
])
def test_bad_input_names_the_column_row_and_value(change, kw, field, row, message):
    with pytest.raises(DataValidationError) as err:
        brier_index_table(change(good_frame()), **kw)
    assert message in str(err.value)
    assert err.value.field == field and err.value.row == row


def test_bad_brier_column_is_refused():
    df = good_frame().assign(brier=[0.1, 1.5, 0.2, 0.3])
    with pytest.raises(DataValidationError, match=r"brier has values outside \[0, 1\]: 1.5 at row 11"):
        brier_index_table(df, brier_col="brier")


@pytest.mark.parametrize("entry, question, y, message", [
    ([0, -1], [0, 1], [0.1, 0.2], "entry codes must be >= 0: -1 at index 1"),
    ([0.0, 1.0], [0, 1], [0.1, 0.2], "entry must hold integer codes"),
    ([0, 1], [0, 1], [0.1, np.nan], "y must be finite: nan at index 1"),
    ([0, 1], [0, 1, 2], [0.1, 0.2], "must have the same shape"),
    ([0, 3], [0, 1], [0.1, 0.2], "n_entries=2 but entry has code 3"),
    ([], [], [], "y is empty"),
])
def test_solver_refuses_bad_codes_and_values(entry, question, y, message):
    with pytest.raises(DataValidationError, match=message):
        two_way_fixed_effects(np.asarray(entry, dtype=np.float64 if message.startswith("entry must") else np.int64), question, y,
                              n_entries=2 if message.startswith("n_entries") else None)


def test_solver_that_does_not_converge_raises_instead_of_returning():
    e, q, p, o = random_panel(8)
    with pytest.raises(ReconcileError, match="did not converge after 1 iterations: the iteration limit"):
        two_way_fixed_effects(e, q, (p - o) ** 2, max_iter=1)


# --- which rows are fitted on, and why an index is missing (issue 35, item 4 "Panels") ----------------------------


def test_fit_col_fits_only_the_marked_rows_and_scores_the_others_with_those_difficulties():
    df = frame(UNBALANCED + [("pool", "q1", 0.0), ("pool", "q2", 0.4), ("pool", "q3", 0.0)])
    marked = table(df.assign(fit=df["entry"] != "pool"), fit_col="fit")
    excluded = table(df, exclude_from_fit=["pool"])  # the same thing said entry by entry
    np.testing.assert_allclose(marked["adjusted_brier_dataset"], excluded["adjusted_brier_dataset"], atol=1e-12)
    assert marked["in_fit"].to_dict() == {"A": True, "B": True, "pool": False}
    # the pool, on every question, keeps its raw Brier; fitted on, it would move the difficulties and B's score
    assert marked.loc["pool", "adjusted_brier_dataset"] == pytest.approx(0.4 / 3, abs=1e-12)
    assert table(df).loc["B", "adjusted_brier_dataset"] != pytest.approx(marked.loc["B", "adjusted_brier_dataset"], abs=1e-3)
    with pytest.raises(DataValidationError, match=r"^fit must be True or False: 'yes' at row 0$"):
        table(df.assign(fit=["yes"] + [True] * (len(df) - 1)), fit_col="fit")


def test_every_missing_index_says_why():
    """The crowd of the superforecaster panel had an overall Brier Index of NaN and an empty note (issue 35)."""
    rows = [("mean", "d1", 0.1, "dataset"), ("mean", "m1", 0.2, "market"), ("crowd", "m1", 0.3, "market"),
            ("lucky", "d1", 0.0, "dataset"), ("lucky", "m1", 0.0, "market")]
    t = table(pd.DataFrame(rows, columns=["entry", "question_id", "brier", "question_type"]))
    assert np.isnan(t.loc["crowd", "brier_index_overall"]) and np.isnan(t.loc["crowd", "brier_index_dataset"])
    assert t.loc["crowd", "note"] == ("dataset: no dataset questions; overall: no dataset questions (the overall score is the "
                                      "mean of the dataset and market scores)")
    assert t.loc["mean", "note"] == ""
    for entry, r in t.iterrows():  # the kind: a NaN index anywhere has its reason in the note
        for part in ("dataset", "market", "overall"):
            if np.isnan(r[f"brier_index_{part}"]):
                assert f"{part}:" in r["note"], (entry, part, r["note"])
    only_market = table(pd.DataFrame([("crowd", "m1", 0.3, "market")], columns=["entry", "question_id", "brier", "question_type"]))
    # no dataset question at all: the table has no dataset index, and overall is the market score
    assert only_market.loc["crowd", "note"] == "" and not np.isnan(only_market.loc["crowd", "brier_index_overall"])
