"""The per-kind seam: everything that differs between kinds of question, behind one small interface.

A question's **kind** (binary, multiple choice, numeric, ...) decides five things, and only these:

1. what the question states beyond its text (:class:`KindSpec`: the options, the range and its unit), all
   known on the forecast date, and what an outcome is (:meth:`QuestionKind.check_outcome`);
2. the **forecast form**, a 1-D float vector of :meth:`QuestionKind.size` values: ``[p_yes]`` for a binary
   question, a probability per option, a CDF on a fixed grid (:meth:`QuestionKind.check_forecast`), and how
   it is stored on a record (:meth:`QuestionKind.fields`, :meth:`QuestionKind.forecast_of`);
3. how a model is asked for it and how its answer is read (:meth:`QuestionKind.answer_properties`,
   :meth:`QuestionKind.answer_template`, :meth:`QuestionKind.read_answer`: a valid forecast or a typed
   :class:`~agent_schemas.errors.ForecastParseError`, never a silently repaired one);
4. how members' forecasts are pooled (:attr:`QuestionKind.pools`, vectorised over questions);
5. how a forecast is scored (:meth:`QuestionKind.score`, per question, vectorised).

Agents, the harness, the reports and the viewer call these methods and never test a kind's name, so a new
kind (a date, a discrete count) is one new sub-package of :mod:`agent_schemas.kinds` and one line of its
registry. Every method is pure (no I/O); arrays are float64.

Shapes used throughout: a **stack** of members' forecasts is ``(n_questions, n_members, size)`` with a member
that did not answer given as a row of NaN; a pooled or single forecast per question is ``(n_questions, size)``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict

from agent_schemas.errors import DataValidationError

__all__ = ["KindSpec", "Pool", "QuestionKind", "missing_members"]

#: A pooling rule: a stack ``(n_questions, n_members, size)`` (NaN rows: members that did not answer) to
#: ``(n_questions, size)``; a question with no member pools to a row of NaN.
Pool = Callable[[np.ndarray], np.ndarray]


class KindSpec(BaseModel):
    """What a question of one kind states beyond its text: facts fixed when it is asked, so a forecaster
    may see all of it. Each kind subclasses it with a ``kind`` literal (the discriminator)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str


def missing_members(stack: np.ndarray) -> np.ndarray:
    """``(n_questions, n_members)`` bool: True where a member gave no forecast (its row is all NaN)."""
    return np.isnan(stack).all(axis=2)


class QuestionKind(ABC):
    """The interface every kind implements (see the module docstring).

    Class attributes
    ----------------
    name : str
        The kind's name, the ``kind`` literal of its spec (``"binary"``, ``"multiple_choice"``, ``"numeric"``).
    label : str
        The kind in words, as prompts and reports say it (``"multiple-choice"``).
    spec_type : type of KindSpec
        The kind's spec model.
    pools : mapping of str to Pool
        Pooling rules by method name. ``mean`` (the linear pool) and ``median`` exist for every kind.
    default_methods : tuple of str
        The pooling methods a benchmark run scores by default, in display order.
    scores : mapping of str to str
        Per-question scores of :meth:`score`, each with a one-line description. Every score is a loss
        (lower is better) unless its name is listed in :attr:`higher_is_better`.
    higher_is_better : frozenset of str
        Scores where higher is better (e.g. Metaculus's baseline score).
    primary_score : str
        The score leaderboards of this kind rank on.
    peer_divisor : float
        Metaculus divides the log scores of continuous questions by 2 in its baseline and peer scores (1 for
        the others).
    """

    name: ClassVar[str]
    label: ClassVar[str]
    spec_type: ClassVar[type[KindSpec]]
    pools: ClassVar[Mapping[str, Pool]]
    default_methods: ClassVar[tuple[str, ...]]
    scores: ClassVar[Mapping[str, str]]
    higher_is_better: ClassVar[frozenset[str]] = frozenset()
    primary_score: ClassVar[str]
    peer_divisor: ClassVar[float] = 1.0

    # --- the question ---------------------------------------------------------------------------------
    @abstractmethod
    def check_outcome(self, spec: KindSpec, outcome: Any) -> int | float:
        """``outcome`` as this kind stores it (0/1; an option's index; a value in the question's unit).

        Raises
        ------
        ValueError
            Naming the value and what is allowed.
        """

    @abstractmethod
    def question_lines(self, spec: KindSpec) -> list[str]:
        """What a prompt says about the question beyond its text (its options, its range and unit); may be
        empty. Everything here is known on the forecast date."""

    @abstractmethod
    def outcome_text(self, spec: KindSpec, outcome: int | float) -> str:
        """The outcome in words, for reports (``"Yes"``, an option's label, ``"1,234 admissions"``)."""

    # --- the question file (benchmarks.questions.files) ------------------------------------------------
    #: Columns of a question file that state this kind's spec (the options; the range and its unit), in the
    #: order the file reader's docstring lists them; none for binary. A row filling any of them is of this kind.
    spec_columns: ClassVar[tuple[str, ...]] = ()

    def spec_from_cells(self, cells: Mapping[str, Any]) -> KindSpec:
        """The spec a question file's row states in :attr:`spec_columns` (``cells``: the row's cells by column;
        a cell may be text, as a CSV gives it, or a JSON value). Default: the kind's spec with no field.

        Raises
        ------
        DataValidationError
            Whose ``field`` is the column and ``value`` the cell as written (the reader adds file and row).
        """
        return self.spec_type()

    @abstractmethod
    def outcome_from_cell(self, spec: KindSpec, value: Any) -> int | float:
        """The outcome a question file's ``outcome`` cell states (text or a JSON value, not blank), as
        :meth:`check_outcome` stores it: ``1``/``yes``; an option's label; a number in the question's unit.

        Raises
        ------
        DataValidationError
            With ``field="outcome"`` and the value: not an outcome of ``spec`` (an unknown option, a value beyond
            a closed bound).
        """

    # --- reference forecasts (benchmarks.protocol.baselines) --------------------------------------------
    #: Name of the baseline that forecasts :meth:`uninformed` on every question.
    uninformed_name: ClassVar[str] = "uniform"
    #: What that baseline is, in words (a record's baseline note).
    uninformed_note: ClassVar[str] = "the uninformed forecast"
    #: True for a kind whose questions have ForecastBench's own reference forecasts (superforecaster median, base
    #: rate without look-ahead: :func:`benchmarks.protocol.baselines.compute_baselines`); their baselines come from
    #: there, not from :meth:`baselines`.
    forecastbench_baselines: ClassVar[bool] = False

    def crowd(self, question: Any) -> np.ndarray | None:
        """The crowd's forecast of ``question`` at freeze in this kind's form (``question.crowd_forecast``: a
        probability per option, e.g. sibling markets' prices), or None when the question has none."""
        value = getattr(question, "crowd_forecast", None)
        return None if value is None else np.asarray(value, dtype=np.float64)

    def baseline_names(self) -> tuple[str, ...]:
        """The names :meth:`baselines` gives, in the order records hold them."""
        return ("crowd", self.uninformed_name)

    def baselines(self, question: Any) -> dict[str, tuple[np.ndarray | None, str]]:
        """Reference forecasts of ``question`` (a :class:`~agent_schemas.questions.Question`), by name
        (:meth:`baseline_names`): ``(forecast or None, note)``. The crowd at freeze (None, noted, when the question
        has none) and the uninformed forecast."""
        crowd = self.crowd(question)
        note = "crowd forecast at freeze" if crowd is not None else "no crowd forecast for this question"
        return {"crowd": (crowd, note), self.uninformed_name: (self.uninformed(question.spec), self.uninformed_note)}

    @abstractmethod
    def worst_case(self, spec: KindSpec, outcome: int | float) -> np.ndarray:
        """The worst forecast of ``outcome`` on ``spec`` a method could give (binary ``1 - outcome``; all mass on the
        option, or at the end of the range, farthest from what happened): what a method's failure on a question is
        scored as, so that a failure never improves a method's standing."""

    # --- the forecast form ----------------------------------------------------------------------------
    @abstractmethod
    def size(self, spec: KindSpec) -> int:
        """Length of the forecast vector for questions of ``spec``."""

    @abstractmethod
    def check_forecast(self, spec: KindSpec, values: Any, *, name: str = "forecast") -> np.ndarray:
        """``values`` as a valid forecast vector of shape ``(size,)``.

        Raises
        ------
        DataValidationError
            Naming ``name``, the position and the value (a probability outside [0, 1], a sum off 1 beyond
            the kind's tolerance, a CDF that decreases...). Nothing is repaired silently.
        """

    @abstractmethod
    def uninformed(self, spec: KindSpec) -> np.ndarray:
        """The forecast of someone who knows nothing (0.5; equal probabilities; a uniform density over the
        range): what a missing forecast is imputed as (ForecastBench imputes 0.5 for binary questions)."""

    @abstractmethod
    def forecast_text(self, spec: KindSpec, forecast: np.ndarray | None) -> str:
        """One line describing ``forecast`` for prompts, traces and the viewer (``"p_yes 62%"``,
        ``"Arsenal 40%, Liverpool 35%, ..."``, ``"median 1,200; 90% in [900, 1,600] admissions"``); None (a
        failed forecast) gives ``"failed"``."""

    # --- answers ----------------------------------------------------------------------------------------
    @abstractmethod
    def answer_properties(self, spec: KindSpec) -> dict[str, dict[str, Any]]:
        """JSON-schema properties (in order) through which a model gives its forecast, to merge into an answer
        schema after its reasons (grammar-constrained models write properties in order). Constrained as
        far as llama.cpp's JSON-schema grammar enforces (integer enums, required properties in order, no other
        property, JSON numbers); what it cannot enforce (a sum, an order, a bound) the kind's module docstring
        names and :meth:`read_answer` refuses."""

    @abstractmethod
    def answer_template(self, spec: KindSpec) -> str:
        """How the task text shows those properties inside the answer's JSON template, e.g.
        ``'"p_yes_percent": <integer 0-100>'``."""

    @abstractmethod
    def answer_request(self, spec: KindSpec, *, short: bool = False) -> str:
        """The words of a task asking for the forecast: the forecaster's (``"the probability that the question
        resolves Yes as an integer percent from 0 to 100"``) or, ``short``, the noun phrase a debate turn and
        the supervisor's decision use after "your" / "the" (``"probability that the question resolves Yes as
        an integer percent"``)."""

    # --- words of the reconciliation prompts ---------------------------------------------------------
    #: What the kind's forecast is called in a prompt ("move your probability" / "move your forecast").
    forecast_word: ClassVar[str] = "forecast"

    def estimate_text(self, spec: KindSpec, forecast: np.ndarray | None) -> str:
        """The ensemble's current estimate as a debate prompt states it after "Ensemble aggregate"
        (``": unknown"`` when there is none)."""
        return ": unknown" if forecast is None else f": {self.forecast_text(spec, forecast)}"

    def debate_claim(self, spec: KindSpec, side: str, estimate: np.ndarray | None) -> str:
        """What ``side`` ("bull" or "bear") argues, after "argue that": the bull that the outcome lies HIGHER
        (or is MORE likely) than the current ``estimate`` says, the bear the opposite."""
        return f"the forecast should move {'UP' if side == 'bull' else 'DOWN'} from the current estimate"

    @abstractmethod
    def read_answer(self, spec: KindSpec, obj: Mapping[str, Any], *, raw_text: str = "") -> np.ndarray | None:
        """The forecast an answer object gives, validated; None when ``obj`` gives none of
        :meth:`answer_keys` (then it is not an answer).

        Raises
        ------
        ForecastParseError
            For an answer that gives the forecast wrongly (carrying ``raw_text``, the field and the value).
        """

    @abstractmethod
    def answer_of(self, spec: KindSpec, forecast: np.ndarray) -> dict[str, Any]:
        """The answer fields a model would write for ``forecast`` (what :meth:`read_answer` reads back, up to the
        rounding of the answer's form: integer percents, stated percentiles): for the simulator, scripted
        answers and tests."""

    def answer_keys(self, spec: KindSpec) -> tuple[str, ...]:
        """Top-level keys of an answer object that give the forecast (an object with one of them is a
        candidate answer)."""
        return tuple(self.answer_properties(spec))

    def answers_agree(self, spec: KindSpec, a: np.ndarray, b: np.ndarray) -> bool:
        """Whether two forecasts read from one answer are the same answer written twice (within half a
        percentage point everywhere), not two answers."""
        return bool(np.max(np.abs(a - b)) <= 0.005)

    # --- how a forecast is stored -------------------------------------------------------------------
    #: The field a record or artifact holds the forecast in (``prefix`` + this name): ``distribution`` for
    #: every kind but binary, whose forecast is ``p_yes``.
    stored_field: ClassVar[str] = "distribution"

    def value(self, forecast: np.ndarray | None) -> Any:
        """The JSON form of ``forecast`` on a record or artifact: a list of floats (None stays None)."""
        return None if forecast is None else [float(v) for v in forecast]

    def vector(self, value: Any) -> np.ndarray | None:
        """:meth:`value` undone: the forecast vector of a stored value (None stays None)."""
        return None if value is None else np.atleast_1d(np.asarray(value, dtype=np.float64))

    def fields(self, forecast: np.ndarray | None, prefix: str = "") -> dict[str, Any]:
        """``{prefix + stored_field: value(forecast)}``: the fields of a record or artifact holding ``forecast``."""
        return {prefix + self.stored_field: self.value(forecast)}

    def forecast_of(self, obj: Any, prefix: str = "") -> np.ndarray | None:
        """The forecast an artifact, record row or mapping holds in ``prefix + stored_field`` (:meth:`fields`
        undone); None when it holds none."""
        name = prefix + self.stored_field
        return self.vector(obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None))

    def spread(self, spec: KindSpec, forecasts: np.ndarray) -> float:
        """How far members' forecasts ``(n_members, size)`` are apart, in [0, 1]: the largest difference between
        two members in any component (for binary, max - min p_yes; for multiple choice, on any option). 0.0
        for fewer than 2 members. A kind whose components are not probabilities of outcomes overrides it."""
        arr = np.asarray(forecasts, dtype=np.float64)
        if arr.shape[0] < 2:
            return 0.0
        return float(np.max(arr.max(axis=0) - arr.min(axis=0)))

    def clip(self, spec: KindSpec, forecast: np.ndarray, low: float, high: float) -> np.ndarray:
        """``forecast`` kept away from certainty as the combination rule's ``[clip_low, clip_high]`` asks, so one
        confident miss cannot dominate a log score. Default: every probability floored at ``low`` and capped
        at ``high``, then renormalised to sum 1 (a probability vector over options)."""
        x = np.clip(np.asarray(forecast, dtype=np.float64), low, high)
        return x / x.sum()

    # --- pooling -------------------------------------------------------------------------------------
    def pool(self, method: str, stack: Any) -> np.ndarray:
        """Pool members' forecasts with the rule ``method`` of :attr:`pools`.

        Parameters
        ----------
        method : str
            A key of :attr:`pools`.
        stack : array-like of shape (n_questions, n_members, size)
            Members' forecast vectors; a row of NaN for a member that did not answer.

        Returns
        -------
        ndarray of shape (n_questions, size)
            A row of NaN for a question with no member.

        Raises
        ------
        DataValidationError
            For an unknown method (naming the valid ones) or a stack that is not 3-D.
        """
        try:
            rule = self.pools[method]
        except (KeyError, TypeError):
            raise DataValidationError(f"unknown {self.name} pooling method {method!r}; valid: {', '.join(self.pools)}",
                                      field="method", value=method) from None
        arr = np.asarray(stack, dtype=np.float64)
        if arr.ndim != 3:
            raise DataValidationError(f"stack must be 3-D (n_questions, n_members, size); got shape {arr.shape}",
                                      field="stack", value=arr.shape)
        return rule(arr)

    def pool_many(self, stack: Any, methods: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """Several pools of one stack: ``{method: (n_questions, size)}`` for ``methods`` (default
        :attr:`default_methods`). A kind may override it to share work between rules."""
        return {m: self.pool(m, stack) for m in (methods or self.default_methods)}

    # --- scoring -------------------------------------------------------------------------------------
    @abstractmethod
    def score(self, specs: Sequence[KindSpec], forecasts: Any, outcomes: Any) -> dict[str, np.ndarray]:
        """Per-question scores of ``forecasts`` (shape ``(n_questions, size)``) against ``outcomes``
        (``(n_questions,)``), one array of shape ``(n_questions,)`` per name of :attr:`scores`.

        Raises
        ------
        DataValidationError
            For forecasts or outcomes that do not fit ``specs``.
        """

    @abstractmethod
    def outcome_log_probability(self, specs: Sequence[KindSpec], forecasts: Any, outcomes: Any) -> np.ndarray:
        """``(n_questions,)``: the natural log of the probability each forecast gave to what happened (the
        outcome; for a numeric question, the probability mass of the grid bin holding it). The common currency
        of the log score, Metaculus's baseline score and :meth:`peer_scores`."""

    def diagnostics(self, specs: Sequence[KindSpec], forecasts: Any, outcomes: Any) -> dict[str, np.ndarray]:
        """Per-question calibration diagnostics that are not losses (a numeric forecast's PIT value and whether
        the outcome fell in its central 50% and 90% intervals; a multiple-choice forecast's top-label
        probability and whether the top label happened), each ``(n_questions,)``. Default: none."""
        return {}

    # --- figures (drawn on an Axes the viewer creates: this package never imports matplotlib) ---------------
    #: What :meth:`plot_calibration` shows and how to read it, one or two sentences for the figure's caption.
    calibration_caption: ClassVar[str] = ""

    @abstractmethod
    def plot_forecasts(self, ax: Any, spec: KindSpec, forecasts: Mapping[str, np.ndarray], outcome: int | float | None,
                       *, members: Mapping[str, np.ndarray] | None = None) -> None:
        """Draw the forecasts of one question on ``ax`` (a matplotlib ``Axes``): one per label of ``forecasts``
        (methods, baselines), each with its legend entry, the ``members``' forecasts (by member id) lighter under one
        legend entry, and the outcome marked when known: bars per option, a CDF... The run viewer draws every
        question of a kind with its own figures this way (:mod:`benchmarks.viewer.kind_figures`)."""

    @abstractmethod
    def plot_calibration(self, ax: Any, diagnostics: Mapping[str, Mapping[str, np.ndarray]]) -> None:
        """Draw the kind's calibration figure on ``ax`` from :meth:`diagnostics` per label (a reliability diagram,
        a top-label reliability diagram, a PIT histogram)."""

    def peer_scores(self, log_q: Any) -> np.ndarray:
        """Metaculus's peer score of each entry on each question against the other entries: for entry ``i``,
        ``100 / peer_divisor * (ln q_i - mean_{j != i} ln q_j)`` (Metaculus scoring, ``score_math``: the log
        of the entry's probability over the others' geometric mean, ``n / (n - 1)`` times the log ratio to the
        geometric mean of all, which is the same). Higher is better; the entries' mean is 0 on every question.

        Parameters
        ----------
        log_q : array-like of shape (n_questions, n_entries)
            :meth:`outcome_log_probability` of every entry (NaN where an entry gave none: it is left out of
            the others' mean and its own score is NaN).

        Returns
        -------
        ndarray of shape (n_questions, n_entries)
            NaN where the entry gave no forecast or no other entry did.
        """
        lq = np.asarray(log_q, dtype=np.float64)
        present = ~np.isnan(lq)
        total = np.where(present, lq, 0.0).sum(axis=1, keepdims=True)
        n = present.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            others = (total - np.where(present, lq, 0.0)) / (n - 1)
            out = 100.0 / self.peer_divisor * (lq - others)
        return np.where(present & (n > 1), out, np.nan)
