"""The graders of notebook exercises: right within the stated tolerance, wrong with what is wrong (never the
right number or choice), not answered for a placeholder, and no exception for any answer."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from benchmarks.teaching.grading import (FunctionCase, Verdict, grade_answers, grade_choice, grade_function, grade_number,
                                         is_unanswered)

#: How a notebook test reads a verdict (tests/notebooks/test_notebooks.py).
SHOWN = re.compile(r"^Exercise (\d+): (right|wrong|not answered yet)\. ")


@pytest.mark.parametrize("status, word", [("right", "right"), ("wrong", "wrong"), ("not answered", "not answered yet")])
def test_a_verdict_shows_its_exercise_and_status(status, word):
    v = Verdict(3, status, "details")
    assert str(v) == repr(v) == f"Exercise 3: {word}. details"
    assert SHOWN.match(str(v)).groups() == ("3", word)
    assert v.right is (status == "right")


def test_grade_number_right_within_the_tolerance_and_says_it():
    for answer in (0.2456, 0.2451, 0.2461, np.float32(0.2456), 0.2456 + 5e-4):
        v = grade_number(1, answer, 0.2456, tolerance=5e-4, what="the ECE")
        assert v.status == "right", (answer, v)
    assert "tolerance ±0.0005" in str(v) and "0.2456" in str(v)
    assert grade_number(1, 45, 45.0, tolerance=0, what="calls").message == "calls = 45 (exact)."


@pytest.mark.parametrize("answer, problem", [(0.2470, "too high"), (0.2440, "too low"), ("0.2456", "not a number"),
                                             (True, "not a number"), (math.nan, "not a number"), ([0.2456], "not a number"),
                                             (math.inf, "not a number")])
def test_grade_number_wrong_says_why_but_not_the_right_value(answer, problem):
    v = grade_number(1, answer, 0.2456, tolerance=5e-4, what="the ECE", hint="one bin")
    assert v.status == "wrong" and problem in v.message and "Hint: one bin" in v.message
    assert "0.2456 " not in v.message.replace(str(answer), "") and "tolerance ±0.0005" in v.message


@pytest.mark.parametrize("placeholder", [None, ...])
def test_placeholders_are_not_answered(placeholder):
    assert grade_number(2, placeholder, 1.0, tolerance=0, what="x").status == "not answered"
    assert grade_choice(2, placeholder, "a", options=("a", "b"), what="x").status == "not answered"
    assert grade_answers(2, placeholder, {"k": 1}, what="x").status == "not answered"
    assert grade_function(2, placeholder, [FunctionCase("c", (), 1)], tolerance=0, what="f").status == "not answered"
    assert "then run this cell again" in str(grade_number(2, placeholder, 1.0, tolerance=0, what="x"))


def test_a_template_of_placeholders_is_unanswered():
    assert is_unanswered(None) and is_unanswered(...) and is_unanswered({"a": None, "b": ...})
    assert not is_unanswered({"a": None, "b": 0}) and not is_unanswered({}) and not is_unanswered(0)


def test_grade_choice_ignores_case_and_spaces_and_lists_the_options():
    assert grade_choice(1, "  Early Rounds ", "early rounds", options=("early rounds", "late rounds"), what="g").right
    wrong = grade_choice(1, "late rounds", "early rounds", options=("early rounds", "late rounds"), what="g", hint="h")
    assert wrong.status == "wrong" and "Hint: h" in wrong.message
    off = grade_choice(1, "recent", "early rounds", options=("early rounds", "late rounds"), what="g")
    assert off.status == "wrong" and "'early rounds', 'late rounds'" in off.message
    assert grade_choice(1, True, True, options=(True, False), what="b").right
    assert grade_choice(1, "True", True, options=(True, False), what="b").status == "wrong"
    with pytest.raises(ValueError, match="not among the options"):
        grade_choice(1, "a", "c", options=("a", "b"), what="g")


def test_grade_answers_grades_each_entry_by_its_type():
    expected = {"rounds": 4, "consensus": False, "midpoint": 0.625, "side": "above"}
    tol = {"midpoint": 0.005}
    right = grade_answers(1, {"rounds": 4, "consensus": False, "midpoint": 0.628, "side": "Above"}, expected, tolerance=tol)
    assert right.right and "'midpoint': tolerance ±0.005" in right.message and "'rounds': exact" in right.message
    wrong = grade_answers(1, {"rounds": 4.0, "consensus": 0, "midpoint": 0.64, "side": "above"}, expected, tolerance=tol,
                          hint="h")
    assert wrong.status == "wrong" and wrong.message.startswith("2 of 4 wrong: 'consensus' (not True or False); "
                                                                "'midpoint' (too high).")
    one_tol = grade_answers(1, {"a": 1.0, "b": 2.0}, {"a": 1.0, "b": 2.0}, tolerance=0.1)
    assert one_tol.right and one_tol.message.endswith("Numbers: tolerance ±0.1.")


def test_grade_answers_not_answered_until_every_entry_is_filled():
    expected = {"a": 1, "b": True}
    assert grade_answers(1, {"a": None, "b": None}, expected).status == "not answered"
    partly = grade_answers(1, {"a": 1, "b": None}, expected)
    assert partly.status == "not answered" and "'b'" in partly.message
    assert grade_answers(1, {"a": 1}, expected).status == "wrong"        # a key of the template was removed
    assert grade_answers(1, [1, True], expected).status == "wrong"       # not a dict
    opts = grade_answers(1, {"a": 1, "b": "maybe"}, {"a": 1, "b": "yes"}, options={"b": ("yes", "no")})
    assert opts.status == "wrong" and "is not one of 'yes', 'no'" in opts.message


def test_grade_function_calls_every_case_and_names_the_first_failure():
    cases = [FunctionCase("p on the cutoff", (5, 5), True), FunctionCase("p after", (6, 5), False),
             FunctionCase("undated", (None, 5), False)]
    assert grade_function(2, lambda p, f: p is not None and p <= f, cases, tolerance=0, what="kept").right
    strict = grade_function(2, lambda p, f: p is not None and p < f, cases, tolerance=0, what="kept", hint="h")
    assert strict.status == "wrong" and "for p on the cutoff; right: True" in strict.message and "Hint: h" in strict.message
    crash = grade_function(2, lambda p, f: p <= f, cases, tolerance=0, what="kept")
    assert crash.status == "wrong" and "raised TypeError" in crash.message and "for undated" in crash.message

    def leaves(p, f):
        raise SystemExit(3)  # a student's sys.exit() is a wrong answer, never the end of the notebook

    gone = grade_function(2, leaves, cases, tolerance=0, what="kept")
    assert gone.status == "wrong" and "raised SystemExit: 3 for p on the cutoff" in gone.message

    def stub(p, f):
        raise NotImplementedError("write the rule")

    assert grade_function(2, stub, cases, tolerance=0, what="kept").status == "not answered"
    assert grade_function(2, "p <= f", cases, tolerance=0, what="kept").status == "wrong"
    assert grade_function(2, lambda p, f: 1, cases, tolerance=0, what="kept").status == "wrong"  # 1 is not True


def test_grade_function_compares_numbers_and_arrays_within_the_tolerance():
    cases = [FunctionCase("two", (2,), (0.5, 1.0)), FunctionCase("array", (3,), np.array([1.0, np.inf]))]

    def f(x):
        return (0.5 + 1e-10, 1.0) if x == 2 else [1.0, np.inf]

    assert grade_function(1, f, cases, tolerance=1e-9, what="f").right
    assert grade_function(1, lambda x: (0.5,) if x == 2 else [1.0, np.inf], cases, tolerance=1e-9, what="f").status == "wrong"
    assert grade_function(1, lambda x: (0.5, 1.0) if x == 2 else [1.0, 5.0], cases, tolerance=1e-9, what="f").status == "wrong"
    assert grade_function(1, lambda x: "0.5", cases[:1], tolerance=1e-9, what="f").status == "wrong"
