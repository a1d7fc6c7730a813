"""Executes notebooks/14_pooling_distributions.ipynb and its solutions offline: every check of the lesson says
"not answered yet", every one of the solutions "right", and the lesson prints the figures its text states (the
CRPS three ways agree, quantile averaging wins on the bundled numeric questions with an interval clear of 0, the
projection never raises a group's Brier score). It runs in well under a minute (the measured time is in
notebooks/README.md)."""

from __future__ import annotations

import re

import pytest

from tests.notebooks.test_notebooks import (NOTEBOOK_DIR, check_verdicts, count_images, execute_notebook,
                                            lesson_exercises, read_lesson, solutions_path)

NAME = "14_pooling_distributions"


def _checks() -> list[str]:
    return [check for _, _, check in lesson_exercises(read_lesson(NAME), NAME)[1]]


def check_nb14_figures(text: str) -> None:
    """The lesson's printed claims: the two pools by hand, who wins on the numeric questions, the coherence theorem."""
    assert "linear pool = (F_a + F_b) / 2: True" in text and "quantile average = N(0.5, 0.05): True" in text
    assert re.search(r"quantile averaging scores better for outcomes in 3\d\.\d-6\d\.\d points", text), text[:2000]
    assert "best: quantile_average" in text
    coherence = re.search(r"(\d+) groups; mean \|sum - 1\| (\d\.\d+); group Brier (\d\.\d+) -> (\d\.\d+); "
                          r"never higher: (True|False)", text)
    assert coherence, "the lesson did not print its coherence line"
    assert int(coherence.group(1)) == 25 and float(coherence.group(4)) < float(coherence.group(3))
    assert coherence.group(5) == "True"


def test_the_nb14_figure_check_can_fail():
    good = ("linear pool = (F_a + F_b) / 2: True\nquantile average = N(0.5, 0.05): True\n"
            "quantile averaging scores better for outcomes in 39.0-61.0 points\nbest: quantile_average\n"
            "25 groups; mean |sum - 1| 0.205; group Brier 0.3836 -> 0.3285; never higher: True\n")
    check_nb14_figures(good)
    for bad in (good.replace("best: quantile_average", "best: mean"),
                good.replace("never higher: True", "never higher: False"),
                good.replace("-> 0.3285", "-> 0.3900"),
                good.replace("(F_a + F_b) / 2: True", "(F_a + F_b) / 2: False")):
        with pytest.raises(AssertionError):
            check_nb14_figures(bad)


@pytest.mark.notebook
def test_nb14_runs_offline_and_every_check_says_not_answered(kernel_spec_manager, tmp_path, monkeypatch):
    nb, text = execute_notebook(NOTEBOOK_DIR / f"{NAME}.ipynb", kernel_spec_manager, tmp_path, monkeypatch)
    assert count_images(nb) >= 1, f"{NAME} drew no plot"
    check_verdicts(nb, _checks(), "not answered yet")
    check_nb14_figures(text)


@pytest.mark.notebook
def test_nb14_solutions_say_right(kernel_spec_manager, tmp_path, monkeypatch):
    nb, _ = execute_notebook(solutions_path(NAME), kernel_spec_manager, tmp_path, monkeypatch)
    check_verdicts(nb, _checks(), "right")
