"""What the run viewer shows of the kinds of question with their own leaderboard (multiple choice, numeric, and any
kind added later): each question's forecasts as a figure with the outcome marked, and each kind's calibration
figure on the run page.

The figures are drawn by the kind itself (:meth:`~agent_schemas.kinds.base.QuestionKind.plot_forecasts`,
:meth:`~agent_schemas.kinds.base.QuestionKind.plot_calibration`: probability bars per option and a top-label
reliability diagram; CDFs and a PIT histogram with central-interval coverage) on axes this module creates, and
saved as inline SVG the way every figure of the page is (:func:`benchmarks.viewer.plots.figure_to_svg`). This
module names no kind: a new kind brings its figures in its own folder of :mod:`agent_schemas.kinds`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from markupsafe import Markup
from matplotlib.figure import Figure

from agent_schemas.kinds import KindSpec, QuestionKind
from benchmarks.viewer.plots import figure_to_svg

__all__ = ["COMPACT_SVG", "QUESTION_FIGURE_SIZE", "KindQuestionView", "calibration_figure", "kind_question_view", "question_figure",
           "question_forecasts"]

#: Size of one question's figure, in inches (width, height).
QUESTION_FIGURE_SIZE = (6.4, 2.8)

#: Settings of a question's SVG: a short font list (each text element of the SVG carries it; matplotlib's default
#: list is ~230 characters, a third of a question figure's bytes).
COMPACT_SVG = {"font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica"]}


def _literal(text: object) -> str:
    """``text`` shown literally by matplotlib (``$`` not read as mathtext; a leading ``_`` kept visible)."""
    s = str(text).replace("$", r"\$")
    return " " + s if s.startswith("_") else s


def calibration_figure(kind: QuestionKind, diagnostics: Mapping[str, Mapping[str, np.ndarray]], *,
                       ncols: int = 4) -> Figure | None:
    """The kind's calibration figure as small multiples: one panel per label of ``diagnostics`` (in its order), each
    drawn by ``kind.plot_calibration`` with that label alone (a numeric kind's PIT histogram with its central 50% and
    90% coverage; a multiple-choice kind's top-label reliability diagram), the panel's legend entry (the label and
    what the kind writes with it) as its title.

    Parameters
    ----------
    kind : QuestionKind
    diagnostics : mapping of str to mapping of str to ndarray
        Per label, the kind's :meth:`~agent_schemas.kinds.base.QuestionKind.diagnostics` over its questions, each
        ``(n_questions,)``.
    ncols : int
        Panels per row.

    Returns
    -------
    matplotlib.figure.Figure or None
        None when ``diagnostics`` is empty.
    """
    labels = list(diagnostics)
    if not labels:
        return None
    ncols = min(ncols, len(labels))
    nrows = -(-len(labels) // ncols)
    fig = Figure(figsize=(3.0 * ncols, 2.7 * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax, label in zip(axes.flat, labels):
        kind.plot_calibration(ax, {_literal(label): diagnostics[label]})
        legend = ax.get_legend()  # one label per panel: its legend entry (the label, and what the kind adds) is the title
        entries = legend.get_texts() if legend is not None else []
        ax.set_title(entries[0].get_text() if len(entries) == 1 else _literal(label), fontsize=8)
        if legend is not None:
            legend.remove()
        ax.xaxis.label.set_fontsize(8)
        ax.yaxis.label.set_fontsize(8)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(labels):]:
        ax.set_visible(False)
    return fig


def question_figure(kind: QuestionKind, spec: KindSpec, forecasts: Mapping[str, np.ndarray],
                    members: Mapping[str, np.ndarray], outcome: int | float | None) -> Figure:
    """One question's forecasts drawn by ``kind.plot_forecasts``: ``forecasts`` (methods and baselines, by label),
    ``members`` (by member id) lighter, ``outcome`` marked when known; :data:`QUESTION_FIGURE_SIZE`."""
    fig = Figure(figsize=QUESTION_FIGURE_SIZE)
    ax = fig.add_subplot()
    kind.plot_forecasts(ax, spec, {_literal(k): v for k, v in forecasts.items()}, outcome,
                        members={_literal(k): v for k, v in members.items()})
    ax.tick_params(labelsize=7)
    _fit_margins(fig, ax)
    return fig


def _fit_margins(fig: Figure, ax: Any) -> None:
    """Margins that make room for the y tick labels on the left and a legend outside the axes on the right, from
    the lengths of their texts (~0.06 in per character at 7 pt): a page draws up to 200 of these figures, and a
    layout engine (constrained, tight) draws each twice, doubling the page's build time."""
    width = fig.get_size_inches()[0]
    ticks = max((len(t.get_text()) for t in ax.get_yticklabels()), default=0)
    left = min(0.45, (0.45 + 0.06 * ticks) / width)
    legend = ax.get_legend()
    entries = max((len(t.get_text()) for t in legend.get_texts()), default=0) if legend is not None else 0
    outside = legend is not None and legend.get_bbox_to_anchor().x0 > ax.bbox.x1 - 1
    right = 1 - min(0.45, (0.5 + 0.055 * entries) / width) if outside else 0.97
    fig.subplots_adjust(left=left, right=right, bottom=0.16, top=0.96)


def question_forecasts(kind: QuestionKind, record: Any) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The forecasts a record (:class:`~benchmarks.run_folder.record.QuestionRecord`) holds of its question:
    ``(methods and baselines by label, members by id)``, each a vector of the kind's form; rows that failed or
    gave none are left out."""
    shown: dict[str, np.ndarray] = {}
    for table in (record.methods, record.baselines):
        for label, row in table.items():
            vec = kind.forecast_of(row) if row.get("status", "ok") == "ok" else None
            if vec is not None:
                shown[label] = vec
    members = {f.agent_id: kind.vector(f.distribution) for f in record.trace.forecasts
               if f.status == "ok" and f.distribution is not None}
    return shown, members


@dataclass
class KindQuestionView:
    """A question of a kind with its own leaderboard as its drill-down shows it (:func:`kind_question_view`)."""

    kind: QuestionKind
    spec: KindSpec
    outcome_text: str
    """The outcome in words (an option's label; a value with its unit), or ``"unresolved"``."""
    rows: list[dict[str, Any]] = field(default_factory=list)
    """Every method and baseline: ``type``, ``name``, ``text`` (the forecast in words), ``score`` (the kind's primary
    score on this question, None without a forecast or an outcome), ``status``, ``note``."""
    svg: Markup | None = None
    """The question's figure (:func:`question_figure`) as inline SVG; None when not drawn (:attr:`figure_note`)."""
    figure_note: str = ""

    def text(self, values: Sequence[float]) -> str:
        """A forecast vector of the question (as a trace stores it: a list of floats) in the kind's words
        (:meth:`~agent_schemas.kinds.base.QuestionKind.forecast_text`: options' probabilities; a median and a 90%
        interval)."""
        return self.kind.forecast_text(self.spec, self.kind.vector(values))

    @property
    def score_name(self) -> str:
        """The name of :attr:`rows`' score."""
        return self.kind.primary_score


def kind_question_view(kind: QuestionKind, record: Any, *, with_figure: bool, salt: str,
                       budget_note: str = "") -> KindQuestionView:
    """What the drill-down of ``record``'s question shows of its kind (:class:`KindQuestionView`).

    Parameters
    ----------
    kind : QuestionKind
        The question's kind.
    record : QuestionRecord
        The question's validated ``results.jsonl`` line.
    with_figure : bool
        Draw the question's figure (:func:`question_figure`); else :attr:`KindQuestionView.figure_note` says
        ``budget_note``.
    salt : str
        The figure's SVG id salt (unique per page).
    """
    spec = record.trace.question.spec
    outcome = record.outcome
    shown, members = question_forecasts(kind, record)
    rows = []
    scores: dict[str, float] = {}
    if outcome is not None and shown:
        labels = list(shown)
        by_size: dict[int, list[str]] = {}
        for lab in labels:
            by_size.setdefault(len(shown[lab]), []).append(lab)
        for group in by_size.values():
            values = kind.score([spec] * len(group), np.vstack([shown[g] for g in group]), np.full(len(group), float(outcome)))
            scores.update(zip(group, (float(v) for v in values[kind.primary_score])))
    for type_, table in (("method", record.methods), ("baseline", record.baselines)):
        for name, row in table.items():
            rows.append({"type": type_, "name": name, "status": row.get("status", ""), "note": row.get("note", ""),
                         "text": kind.forecast_text(spec, shown[name]) if name in shown else
                         "failed" if row.get("status") == "failed" else "—", "score": scores.get(name)})
    view = KindQuestionView(kind=kind, spec=spec, rows=rows,
                            outcome_text="unresolved" if outcome is None else kind.outcome_text(spec, outcome))
    if not with_figure:
        view.figure_note = budget_note
    elif not shown and not members:
        view.figure_note = "not drawn: no method, baseline or member gave a forecast"
    else:
        view.svg = Markup(figure_to_svg(question_figure(kind, spec, shown, members, outcome), salt=salt, rc=COMPACT_SVG))
    return view

