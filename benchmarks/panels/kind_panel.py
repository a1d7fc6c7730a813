"""A panel of multiple-choice or numeric forecasts (``forecast-reconcile aggregate PANEL [--questions QS]`` with a
panel file that has no ``p_yes`` column), given to a run as its members.

The file has one row per forecast: ``question_id`` (an id of ``--questions``, or without it of the bundled questions of
every kind), ``forecaster`` (required), optionally ``reasoning`` and ``model`` (the model that made it: a panel of the
simulator's members, ``sim``, keeps its SIMULATED label), and the forecast as a forecasts file of the kind gives it (the kind's answer form, ``probabilities``
or ``percentile_5`` ... ``percentile_95``, or ``distribution``: :mod:`benchmarks.report.kind_score_file`, whose
reader this is, so errors read alike: one line naming the file, the row, the column and the value). A panel holds
questions of one kind; the run pools the members by that kind's rules and scores them on its leaderboard
(``leaderboard_<kind>.csv``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_research import GivenForecasts
from agent_schemas import DataValidationError, Forecast, Question
from agent_schemas.kinds import QuestionKind
from benchmarks.questions.tables import is_blank
from benchmarks.report.kind_score_file import read_kind_rows

__all__ = ["KindPanel", "read_kind_panel"]


@dataclass
class KindPanel:
    """A panel of one kind of question: its forecasts as members' and its questions."""

    name: str
    """The file's stem; members' forecasts carry the model ``panel/<name>``."""
    kind: QuestionKind
    questions: list[Question]
    """The questions answered, in the order of their first forecast."""
    forecasts: list[Forecast]
    skipped: list[str]
    """Rows left out by ``skip_unknown``."""
    models: set[str] = field(default_factory=set)
    """The models the file's ``model`` column names (empty without one)."""

    def ensemble(self) -> GivenForecasts:
        """The panel as a run's members (the pipeline pools them by the kind's rules)."""
        return GivenForecasts(self.forecasts)

    def describe(self) -> dict[str, Any]:
        """Counts for the manifest's ``question_selection.pool``, and the models the ``model`` column names (as a
        binary panel's: :meth:`benchmarks.panels.files.Panel.describe`)."""
        models = sorted(self.models)
        return {"panel": self.name, "kind": self.kind.name, "n_questions": len(self.questions), "n_forecasts": len(self.forecasts),
                "n_forecasters": len({f.agent_id for f in self.forecasts}), **({"models": models} if models else {})}


def read_kind_panel(path: str | Path, questions_path: str | Path | None, *, skip_unknown: bool = False) -> KindPanel:
    """Read a panel of multiple-choice or numeric forecasts (module docstring) of the questions of ``questions_path``
    (None: the bundled questions of every kind).

    Raises
    ------
    FileNotFoundError
        If a file does not exist.
    DataValidationError
        One line naming the file, row, column and value: as :func:`~benchmarks.report.kind_score_file.read_kind_rows`
        (an empty ``forecaster`` included), and a panel mixing kinds of question (at its first row of a second kind).
    """
    path = Path(path)
    rows, skipped = read_kind_rows(path, questions_path, by="forecaster", by_default=None, skip_unknown=skip_unknown)
    if not rows:
        raise DataValidationError(f"{path}: no forecast left ({len(skipped)} skipped: no outcome)", source=str(path))
    kind = rows[0]["question"].kind
    other = next((r for r in rows if r["question"].kind is not kind), None)
    if other is not None:
        raise DataValidationError(
            f"{path}: {other['where']}, column 'question_id': a panel holds one kind of question; question {other['question'].id} is "
            f"{other['question'].kind.name}, the panel's first is {kind.name} (value {other['question'].id!r})",
            field="question_id", row=other["row"], value=other["question"].id, source=str(path))
    model = f"panel/{path.stem}"
    forecasts = [Forecast(question_id=r["question"].id, agent_id=r["who"], model=model,
                          rationale="" if is_blank(r["cells"].get("reasoning")) else str(r["cells"]["reasoning"]).strip(),
                          **kind.fields(r["forecast"]))
                 for r in rows]
    questions = list({r["question"].id: r["question"] for r in rows}.values())
    models = {str(r["cells"]["model"]).strip() for r in rows if not is_blank(r["cells"].get("model"))}
    return KindPanel(path.stem, kind, questions, forecasts, skipped, models)
