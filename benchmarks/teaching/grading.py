"""Grading a notebook exercise: right, wrong (with a hint) or not answered yet, never an exception.

An exercise in a teaching notebook has an **answer cell** (``answer_1 = None``, a dict of ``None`` values
to fill in, or a function stub that raises ``NotImplementedError``) and a **check cell** right after it,
which calls the notebook's check function (:mod:`benchmarks.teaching.exercises`). The check computes the
right value itself, from the notebook's own data and code (or an independent reference such as
scikit-learn), and hands both to one of the graders here, which return a :class:`Verdict`.

The graders never raise on a student's answer: a placeholder (``None``, ``...``, a stub raising
``NotImplementedError``) is "not answered yet", anything else that is not the right value (a wrong number,
a string where a number is due, a function that raises) is "wrong" with what was wrong and a hint. So a
notebook with no answers still runs top to bottom. A number is compared with an absolute tolerance that
every message states; booleans, integers given with tolerance 0 and texts (case and surrounding spaces
ignored) must match exactly.

A wrong message says what is wrong (too high or too low, which entries, the first failing input of a
function) but not the right value of a number or a choice; a right message shows the value it checked.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

__all__ = ["FunctionCase", "STATUS_TEXT", "Verdict", "grade_answers", "grade_choice", "grade_function", "grade_number",
           "is_placeholder", "is_unanswered", "not_answered"]

Status = Literal["right", "wrong", "not answered"]
#: How a verdict names its status (the word a notebook test looks for after ``Exercise N:``).
STATUS_TEXT: dict[str, str] = {"right": "right", "wrong": "wrong", "not answered": "not answered yet"}


@dataclass(frozen=True)
class Verdict:
    """The result of checking one exercise.

    Attributes
    ----------
    exercise : int
        The exercise's number in its notebook.
    status : {"right", "wrong", "not answered"}
    message : str
        One line: what was checked (right), what is wrong and a hint (wrong), or what to fill in.

    Its text, ``Exercise N: right. ...`` (or ``wrong.``, ``not answered yet.``), is what a check cell shows.
    """

    exercise: int
    status: Status
    message: str

    @property
    def right(self) -> bool:
        """True when the answer is right."""
        return self.status == "right"

    def __str__(self) -> str:
        return f"Exercise {self.exercise}: {STATUS_TEXT[self.status]}. {self.message}"

    __repr__ = __str__


@dataclass(frozen=True)
class FunctionCase:
    """One input of a function exercise and the value the function must return for it.

    Attributes
    ----------
    label : str
        The input in words, shown when the function gets it wrong (e.g. ``"5 members, 3 ok, fraction 0.6"``).
    args : tuple
        Positional arguments.
    expected : Any
        The right return value: a number or array of numbers (compared within the tolerance), or a bool,
        an int compared exactly, or a text.
    kwargs : dict
        Keyword arguments.
    """

    label: str
    args: tuple
    expected: Any
    kwargs: dict[str, Any] = field(default_factory=dict)


def is_placeholder(answer: Any) -> bool:
    """True for an answer left as its placeholder: ``None`` or ``...`` (Ellipsis)."""
    return answer is None or answer is Ellipsis


def is_unanswered(answer: Any) -> bool:
    """True for a placeholder (:func:`is_placeholder`) or a dict whose every entry is still one: a check that
    has to run something costly to grade tests this first."""
    return is_placeholder(answer) or (isinstance(answer, Mapping) and bool(answer)
                                      and all(is_placeholder(v) for v in answer.values()))


def not_answered(exercise: int, what: str) -> Verdict:
    """The verdict for an answer still at its placeholder; ``what`` says what to fill in."""
    return Verdict(exercise, "not answered", f"Fill in {what}, then run this cell again.")


def _with_hint(text: str, hint: str) -> str:
    return f"{text} Hint: {hint}" if hint else text


def _tolerance_text(tolerance: float) -> str:
    return "exact" if tolerance == 0 else f"tolerance ±{tolerance:g}"


def _as_number(value: Any) -> float | None:
    """``value`` as a finite float, or None when it is not a real number (bools and texts are not)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None
    x = float(value)
    return x if math.isfinite(x) else None


def _same(answer: Any, expected: Any, tolerance: float) -> tuple[bool, str]:
    """Whether ``answer`` is ``expected`` (within ``tolerance`` for numbers), and what is wrong with it if not
    (``"too high"``, ``"too low"``, ``"not a number"``, ``"not True or False"``, ``""`` for a plain mismatch)."""
    if isinstance(expected, (bool, np.bool_)):
        if not isinstance(answer, (bool, np.bool_)):
            return False, "not True or False"
        return bool(answer) == bool(expected), ""
    if isinstance(expected, str):
        if not isinstance(answer, str):
            return False, "not a text"
        return answer.strip().lower() == expected.strip().lower(), ""
    x, e = _as_number(answer), float(expected)
    if x is None:
        return False, "not a number"
    if abs(x - e) <= tolerance + 1e-12 * max(1.0, abs(e)):
        return True, ""
    return False, "too high" if x > e else "too low"


def _shown(value: Any) -> str:
    if isinstance(value, (bool, np.bool_, str)):
        return repr(bool(value) if isinstance(value, np.bool_) else value)
    x = _as_number(value)
    return f"{x:.6g}" if x is not None else repr(value)


def grade_number(exercise: int, answer: Any, expected: float, *, tolerance: float, what: str, hint: str = "") -> Verdict:
    """Grade a number against the right value within an absolute tolerance.

    Parameters
    ----------
    exercise : int
        The exercise's number.
    answer : Any
        The student's answer; ``None`` or ``...`` is not answered yet.
    expected : float
        The right value, computed by the check.
    tolerance : float
        Largest accepted absolute difference (0: exact), stated in every message.
    what : str
        What the number is, e.g. ``"the ECE of always 0.5"``.
    hint : str
        Shown when the answer is wrong.

    Returns
    -------
    Verdict
        Right with the value checked; wrong with "too high" / "too low" / "not a number" and the hint.
    """
    if is_placeholder(answer):
        return not_answered(exercise, what)
    ok, problem = _same(answer, expected, tolerance)
    if ok:
        return Verdict(exercise, "right", f"{what} = {_shown(expected)} ({_tolerance_text(tolerance)}).")
    return Verdict(exercise, "wrong", _with_hint(f"{what}: {_shown(answer)} is {problem or 'not it'} "
                                                  f"({_tolerance_text(tolerance)}).", hint))


def grade_choice(exercise: int, answer: Any, expected: Any, *, options: Sequence[Any], what: str, hint: str = "") -> Verdict:
    """Grade one choice among ``options`` (texts, compared without case and surrounding spaces, or bools).

    Parameters
    ----------
    exercise : int
    answer : Any
        The student's choice; ``None`` or ``...`` is not answered yet.
    expected : str or bool
        The right choice, computed by the check; one of ``options``.
    options : sequence
        The valid choices, listed when the answer is not one of them.
    what : str
        What is chosen, e.g. ``"the group whose naive results leak more"``.
    hint : str
        Shown when the answer is wrong.

    Raises
    ------
    ValueError
        If ``expected`` is not one of ``options`` (a fault of the check, not of the answer).
    """
    if not any(_same(expected, o, 0.0)[0] for o in options):
        raise ValueError(f"exercise {exercise}: the right choice {expected!r} is not among the options {list(options)}")
    if is_placeholder(answer):
        return not_answered(exercise, f"{what} (one of {', '.join(map(_shown, options))})")
    if not any(_same(answer, o, 0.0)[0] for o in options):
        return Verdict(exercise, "wrong", f"{what}: {_shown(answer)} is not one of {', '.join(map(_shown, options))}.")
    if _same(answer, expected, 0.0)[0]:
        return Verdict(exercise, "right", f"{what}: {_shown(expected)}.")
    return Verdict(exercise, "wrong", _with_hint(f"{what}: not {_shown(answer)}.", hint))


def grade_answers(exercise: int, answer: Any, expected: Mapping[str, Any], *, tolerance: float | Mapping[str, float] = 0.0,
                  options: Mapping[str, Sequence[Any]] | None = None, what: str = "", hint: str = "") -> Verdict:
    """Grade a dict of answers, one entry per key of ``expected``.

    Each entry is graded as :func:`grade_number` (numbers, within its tolerance) or :func:`grade_choice`
    (bools, texts) would grade it. The answer is not answered yet while every entry is still ``None``
    (or ``...``); with some filled in, the remaining ones are named.

    Parameters
    ----------
    exercise : int
    answer : Any
        The student's dict.
    expected : mapping of str to Any
        The right value of every entry, computed by the check.
    tolerance : float or mapping of str to float
        Absolute tolerance for the numeric entries (one for all, or per key; missing keys: 0, exact).
    options : mapping of str to sequence, optional
        The valid choices of text entries, listed when an answer is not one of them.
    what : str
        What the dict holds, shown in the messages.
    hint : str
        Shown when an entry is wrong.

    Returns
    -------
    Verdict
        Right when every entry is; wrong naming the wrong entries (and why, for a malformed one).
    """
    what = what or "the entries of your answer"
    keys = list(expected)
    if is_placeholder(answer):
        return not_answered(exercise, f"{what} ({', '.join(map(repr, keys))})")
    if not isinstance(answer, Mapping):
        return Verdict(exercise, "wrong", f"expected a dict with the keys {', '.join(map(repr, keys))}, got {type(answer).__name__}.")
    missing = [k for k in keys if k not in answer]
    if missing:
        return Verdict(exercise, "wrong", f"the answer has no entry {', '.join(map(repr, missing))} (keep the keys of the template).")
    if is_unanswered(answer):
        return not_answered(exercise, f"{what} ({', '.join(map(repr, keys))})")
    blank = [k for k in keys if is_placeholder(answer[k])]
    if blank:
        return not_answered(exercise, f"the entries still None: {', '.join(map(repr, blank))}")
    tol = tolerance if isinstance(tolerance, Mapping) else {k: tolerance for k in keys}
    wrong = []
    for k in keys:
        valid = (options or {}).get(k)
        if valid is not None and not any(_same(answer[k], o, 0.0)[0] for o in valid):
            wrong.append(f"{k!r} ({_shown(answer[k])} is not one of {', '.join(map(_shown, valid))})")
            continue
        ok, problem = _same(answer[k], expected[k], float(tol.get(k, 0.0)))
        if not ok:
            wrong.append(f"{k!r}" + (f" ({problem})" if problem else ""))
    numeric = {k: float(tol.get(k, 0.0)) for k in keys
               if _as_number(expected[k]) is not None and not isinstance(expected[k], (bool, np.bool_))}
    if len(set(numeric.values())) == 1:
        tolerances = f" Numbers: {_tolerance_text(next(iter(numeric.values())))}."
    else:
        tolerances = "".join(f" {k!r}: {_tolerance_text(t)}." for k, t in numeric.items())
    if not wrong:
        shown = ", ".join(f"{k}: {_shown(expected[k])}" for k in keys)
        return Verdict(exercise, "right", f"{what}: {shown}.{tolerances}")
    return Verdict(exercise, "wrong", _with_hint(f"{len(wrong)} of {len(keys)} wrong: {'; '.join(wrong)}.{tolerances}", hint))


def _results_match(got: Any, expected: Any, tolerance: float) -> bool:
    if isinstance(expected, (bool, np.bool_, str)):
        return _same(got, expected, 0.0)[0]
    if isinstance(got, (bool, np.bool_, str)):  # True is not 1 here, nor "0.5" a number
        return False
    try:
        g = np.asarray(got, dtype=float)
        e = np.asarray(expected, dtype=float)
    except (TypeError, ValueError):
        return False
    if g.shape != e.shape:
        return False
    return bool(np.all(np.isfinite(g) == np.isfinite(e)) and np.allclose(g[np.isfinite(e)], e[np.isfinite(e)],
                                                                          rtol=0.0, atol=tolerance + 1e-12))


def grade_function(exercise: int, function: Callable[..., Any], cases: Sequence[FunctionCase], *, tolerance: float,
                   what: str, hint: str = "") -> Verdict:
    """Grade a function by calling it on every case and comparing with the case's right value.

    Parameters
    ----------
    exercise : int
    function : callable
        The student's function. A stub that raises ``NotImplementedError`` is not answered yet.
    cases : sequence of FunctionCase
        Inputs with their right values (computed by the check, edge cases included).
    tolerance : float
        Absolute tolerance for numeric results (element-wise for arrays; shapes must match).
    what : str
        What the function does, e.g. ``"your policy rule"``.
    hint : str
        Shown when a case fails.

    Returns
    -------
    Verdict
        Right when every case is; wrong naming the first failing input, what it returned (or raised) and
        what was due there.
    """
    if is_placeholder(function):
        return not_answered(exercise, what)
    if not callable(function):
        return Verdict(exercise, "wrong", f"{what} must be a function, got {type(function).__name__}.")
    for case in cases:
        try:
            got = function(*case.args, **case.kwargs)
        except NotImplementedError:
            return not_answered(exercise, f"{what} (replace the NotImplementedError with your code)")
        except (Exception, SystemExit) as exc:  # noqa: BLE001 -- any error of the student's code (a sys.exit too) is a wrong answer, shown
            return Verdict(exercise, "wrong", _with_hint(f"{what} raised {type(exc).__name__}: {exc} for {case.label}.", hint))
        if not _results_match(got, case.expected, tolerance):
            return Verdict(exercise, "wrong", _with_hint(
                f"{what} returned {_shown(got)} for {case.label}; right: {_shown(case.expected)} "
                f"({_tolerance_text(tolerance)}).", hint))
    return Verdict(exercise, "right", f"{what} is right on all {len(cases)} inputs ({_tolerance_text(tolerance)}): "
                                      f"{'; '.join(c.label for c in cases)}.")
