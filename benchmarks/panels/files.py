"""A panel's forecasts: read from a user's file, the bundled superforecasters or a run's members, and written as a file.

A panel file (``.csv``, ``.jsonl``, ``.json`` list of objects or ``.parquet``) has one row per forecast:

================  ========  ===========================================================================
column            required  content
================  ========  ===========================================================================
``question_id``   yes       a full or short id of a question of ``--questions`` (or of the bundled ones)
``forecaster``    yes       who forecast (any text); one row per forecaster and question
``p_yes``         yes       the forecaster's probability of Yes in [0, 1]
``reasoning``     no        the forecaster's reasoning (shown on the question's page, read by the
                            reconcilers when a provider runs them)
``date``          no        ISO date the forecast was made, on or before the question's resolution date
``model``         no        the provider-qualified model that made the forecast (a run's member's, as
                            ``export --format panel`` writes it); a panel of the simulator's members
                            (``sim``) keeps its SIMULATED label through ``aggregate``
``outcome``       no        ``1``/``0`` (``yes``/``no``, ``true``/``false``) for a question that is not
                            among the known ones, or that they know without an outcome (a question
                            set without its resolutions): the question takes it; for a known outcome
                            it must agree with it
================  ========  ===========================================================================

It is read by the forecasts-file reader ``score`` uses (:func:`benchmarks.report.score_file.read_forecast_rows`
and :func:`~benchmarks.report.score_file.match_questions`), so errors read alike: one line naming the file, the row
(``data row N (line M)``), the column and the value, for a missing column, an empty id or forecaster, a p_yes
outside [0, 1], two rows of one forecaster for one question, a question with no known outcome (unless
``skip_unknown``), an outcome other than 0/1 or one that contradicts the question's, a date that is not a
date or is after the question resolved, and a question that is neither known nor dated.

**Questions.** A known question keeps everything its record holds (text, background, dates, source, crowd
probability), and takes the panel's outcome when it has none (the panel's outcome column is what resolves it:
dropping it would leave the question unscored); its **forecast date** becomes the date of its latest forecast when the rows are dated (the pool
is formed then: what a reconciler and a walk-forward fit may know is what was known on that date), else it
stays the question's. A question that is not known needs an ``outcome`` and a ``date`` on its rows; its text
is its id and its source ``unknown``.

**A run's members as a panel.** :func:`panel_of_run` reads a run folder's successful members as panel rows
(``forecaster`` = the member's ``agent_id``, ``reasoning`` its rationale, ``date`` the question's forecast
date, ``outcome`` its outcome); :func:`write_panel` writes them and :func:`read_panel` reads them back, and
aggregating them gives the run's aggregates (``forecast-reconcile export RUN --format panel``). A run of
multiple-choice or numeric questions gives a panel of that kind (:mod:`benchmarks.panels.kind_panel`, columns
:data:`KIND_PANEL_COLUMNS`): each member's forecast exactly as the run stored and scored it, ``distribution`` (a JSON
array: a probability per option in the question's order; the 201-point CDF), and no ``outcome`` column (the questions
hold it); ``aggregate`` reads it back against the bundled questions, or the run's ``--questions`` file, and its pools
score as the run's.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from agent_research import CombinationRule, GivenForecasts
from agent_schemas import DataValidationError, Forecast, Question
from agent_schemas.kinds import DEFAULT_KIND, KINDS, kind_of
from agent_tools.datasets import load_forecastbench_human_forecasts
from benchmarks.panels.pools import POOL_METHODS, pool_probabilities
from benchmarks.protocol.clusters import sibling_clusters
from benchmarks.questions import load_forecastbench
from benchmarks.questions.tables import csv_text, parse_date_cell
from benchmarks.report.score_file import match_questions, question_pool, read_forecast_rows
from benchmarks.run_folder.durable import write_text_atomic
from benchmarks.run_folder.load import LoadedRun, load_run
from benchmarks.scoring.kind_table import spec_of_record

__all__ = ["BUNDLED_PANELS", "KIND_PANEL_COLUMNS", "PANEL_COLUMNS", "Panel", "bundled_panel", "panel_of_run", "read_panel", "superforecaster_panel", "write_panel"]

#: The columns of a panel's forecasts, in file order (the first three required).
PANEL_COLUMNS: tuple[str, ...] = ("question_id", "forecaster", "p_yes", "reasoning", "date", "model", "outcome")
#: The columns of a panel of multiple-choice or numeric forecasts as :func:`panel_of_run` writes it, in file order:
#: ``distribution`` is the member's forecast vector as JSON text (:mod:`benchmarks.panels.kind_panel` reads it).
KIND_PANEL_COLUMNS: tuple[str, ...] = ("question_id", "forecaster", "distribution", "reasoning", "date", "model")
#: Panels bundled with the package, by the name ``aggregate --panel`` takes.
BUNDLED_PANELS: tuple[str, ...] = ("superforecasters",)
_SUPER_INDIVIDUAL = "human_superforecaster_individual"


@dataclass
class Panel:
    """A panel's forecasts and the questions they answer.

    Attributes
    ----------
    name : str
        ``superforecasters`` or the file's stem; members' forecasts carry the model ``panel/<name>``.
    source : str
        Where the forecasts come from (a path, or the bundled data's description).
    forecasts : pandas.DataFrame
        One row per forecast: ``question_id`` (a full id), ``forecaster``, ``p_yes`` (in [0, 1]),
        ``reasoning`` (text, '' when absent), ``date`` (datetime.date or None), in file order.
    questions : dict of str to Question
        Every question the forecasts answer, by id, with an outcome (forecast date as in the module docstring).
    notes : list of str
        Plain lines for the user (rows skipped, questions left out, short ids matched).
    """

    name: str
    source: str
    forecasts: pd.DataFrame
    questions: dict[str, Question]
    notes: list[str] = field(default_factory=list)

    @property
    def model(self) -> str:
        """The model the members' forecasts are attributed to: ``panel/<name>``."""
        return f"panel/{self.name}"

    @property
    def label(self) -> str:
        """Where a run's questions come from when they are the panel's: ``panel <name> (<source>)`` (the source of
        its :class:`benchmarks.harness.selection.QuestionPool`, with :meth:`describe` as the pool's facts)."""
        return f"panel {self.name} ({self.source})"

    def counts(self) -> pd.Series:
        """Forecasters per question (count), indexed by question id in the panel's order."""
        return self.forecasts.groupby("question_id", sort=False).size()

    def with_min_forecasters(self, k: int) -> "Panel":
        """The panel restricted to the questions at least ``k`` forecasters answered (a note counts the rest).

        Raises
        ------
        DataValidationError
            When ``k`` < 1, or no question has ``k`` forecasters (the message gives the most any has).
        """
        if k < 1:
            raise DataValidationError(f"--min-forecasters must be at least 1, got {k}", field="--min-forecasters", value=k)
        n = self.counts()
        keep = n[n >= k].index
        if keep.empty:
            raise DataValidationError(f"{self.source}: no question has {k} forecasters (the most any has is {int(n.max())}): "
                                      "lower --min-forecasters", field="--min-forecasters", value=k)
        notes = list(self.notes)
        if len(keep) < len(n):
            notes.append(f"{len(n) - len(keep)} of {len(n)} questions have fewer than {k} forecasters and are left out "
                         "(--min-forecasters)")
        kept = set(keep)
        return replace(self, forecasts=self.forecasts[self.forecasts["question_id"].isin(kept)].reset_index(drop=True),
                       questions={q: v for q, v in self.questions.items() if q in kept}, notes=notes)

    def question_list(self) -> list[Question]:
        """The questions in the order of their first forecast."""
        return [self.questions[q] for q in pd.unique(self.forecasts["question_id"])]

    def given_forecasts(self) -> list[Forecast]:
        """Every forecast as a member's :class:`agent_schemas.Forecast` (``agent_id`` the forecaster,
        ``rationale`` the reasoning, model :attr:`model`) for :class:`agent_research.GivenForecasts`."""
        f = self.forecasts
        return [Forecast(question_id=q, agent_id=who, p_yes=float(p), rationale=why, model=self.model)
                for q, who, p, why in zip(f["question_id"], f["forecaster"], f["p_yes"], f["reasoning"])]

    def ensemble(self) -> GivenForecasts:
        """The panel as a run's members (:class:`agent_research.GivenForecasts` of :meth:`given_forecasts`), with every
        aggregation method's p_yes per question computed for the whole panel in one vectorised pass
        (:func:`benchmarks.panels.pools.pool_probabilities`, unclipped as the pipeline computes them), so that a
        run of the panel (``RunConfig(ensemble="given")``) does not aggregate question by question."""
        return GivenForecasts(self.given_forecasts(), aggregates=pool_probabilities(self.forecasts).to_dict("index"))

    def scored(self, methods: Sequence[str] = POOL_METHODS, rule: CombinationRule | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The members and the pools as a run of the panel scores them, without running it.

        The same frames as :func:`benchmarks.panels.forecasters.members_of_records` reads from the run's records, so
        that :func:`~benchmarks.panels.forecasters.pools_against_forecasters`,
        :func:`~benchmarks.panels.forecasters.forecaster_table` and :mod:`benchmarks.scoring` give the run's figures
        from the panel alone (a notebook, a quick look): every forecast clipped to the combination rule's bounds,
        each pool aggregated from the unclipped forecasts (:func:`~benchmarks.panels.pools.pool_probabilities`) and
        then clipped, as the run's method rows are, and each question's cluster by the run's rule
        (:func:`benchmarks.protocol.clusters.sibling_clusters` over :meth:`question_list`).

        Parameters
        ----------
        methods : sequence of str, default :data:`~benchmarks.panels.pools.POOL_METHODS`
            Aggregation methods (:data:`agent_research.aggregation.AGGREGATORS`).
        rule : CombinationRule, optional
            Whose ``clip_low`` / ``clip_high`` bound every probability; default ``CombinationRule()`` ([0.01, 0.99]).

        Returns
        -------
        members : pandas.DataFrame
            One row per forecast, in the panel's order: ``question_id``, ``forecaster``, ``p_yes`` (clipped),
            ``outcome`` (0/1), ``cluster``.
        pools : pandas.DataFrame of shape (n_questions, len(methods))
            Each method's p_yes (clipped) per question, indexed by ``question_id`` in the order of first forecast.

        Raises
        ------
        DataValidationError
            For an unknown method (as :func:`~benchmarks.panels.pools.pool_probabilities`).
        """
        rule = rule or CombinationRule()
        clusters = sibling_clusters(self.question_list()).labels
        f = self.forecasts
        members = pd.DataFrame({"question_id": f["question_id"], "forecaster": f["forecaster"],
                                "p_yes": f["p_yes"].astype(float).clip(rule.clip_low, rule.clip_high),
                                "outcome": f["question_id"].map(lambda q: int(self.questions[q].outcome)),
                                "cluster": f["question_id"].map(clusters)})
        pools = pool_probabilities(f, list(methods)).clip(rule.clip_low, rule.clip_high)
        return members.reset_index(drop=True), pools

    def describe(self) -> dict[str, Any]:
        """JSON-serialisable facts of the panel, for the run's manifest."""
        n = self.counts()
        models = sorted({str(m) for m in self.forecasts.get("model", pd.Series(dtype=object)).dropna() if str(m)})
        return {"name": self.name, "source": self.source, "forecasts": len(self.forecasts),
                "forecasters": int(self.forecasts["forecaster"].nunique()), "questions": len(n),
                "forecasters_per_question_median": float(n.median()), "notes": list(self.notes),
                **({"models": models} if models else {})}


def read_panel(path: str | Path, *, questions_path: str | Path | None = None, skip_unknown: bool = False) -> Panel:
    """Read a panel file (module docstring).

    Parameters
    ----------
    path : str or Path
        The panel file.
    questions_path : str or Path, optional
        A question file (:func:`benchmarks.questions.load_questions_file`) the ids name; default the bundled questions.
    skip_unknown : bool
        Leave out (and count in the notes) rows whose question has no known outcome instead of refusing.

    Returns
    -------
    Panel

    Raises
    ------
    FileNotFoundError
        If a file does not exist.
    DataValidationError
        One line naming the file, the row, the column and the value (module docstring).
    """
    found = read_forecast_rows(path, by="forecaster", extra=("reasoning", "date", "model"))
    found = match_questions(found, question_pool(questions_path), by="forecaster", skip_unknown=skip_unknown)
    table, file = found.table, found.table.path
    rows: list[dict[str, Any]] = []
    outcome_row: dict[str, dict[str, Any]] = {}
    with table.numbering():
        for r in found.rows:
            q = found.questions.get(r["question_id"])
            date = None if r["date"] is None else parse_date_cell(file, r["row"], "date", r["date"])
            if q is not None and q.outcome is not None and r["outcome"] != q.outcome:
                raise table.error(r["row"], "outcome", r["outcome"], f"the question's outcome is {q.outcome}")
            first = outcome_row.setdefault(r["question_id"], r)
            if r["outcome"] != first["outcome"]:
                raise table.error(r["row"], "outcome", r["outcome"], f"{table.where(first['row'])} gives {first['outcome']} "
                                  "for the same question")
            if q is not None and date is not None and q.resolution_date is not None and date > q.resolution_date:
                raise table.error(r["row"], "date", r["date"], f"the forecast is dated after the question resolved ({q.resolution_date})")
            rows.append({"question_id": r["question_id"], "forecaster": r["by"], "p_yes": r["p_yes"],
                         "reasoning": "" if r["reasoning"] is None else str(r["reasoning"]).strip(), "date": date,
                         "model": "" if r["model"] is None else str(r["model"]).strip(), "row": r["row"], "outcome": r["outcome"]})
        frame = pd.DataFrame(rows, columns=[*PANEL_COLUMNS, "row"])
        questions = {qid: _panel_question(table, found.questions.get(qid), g) for qid, g in frame.groupby("question_id", sort=False)}
    notes = list(found.notes)
    if found.skipped:
        notes.append(f"{len(found.skipped)} row(s) whose question has no known outcome were left out (--skip-unknown)")
    return Panel(Path(path).stem, str(path), frame[[c for c in PANEL_COLUMNS if c != "outcome"]], questions, notes)


def _panel_question(table: Any, known: Question | None, rows: pd.DataFrame) -> Question:
    """The question of one panel's rows: the known one at the date of its latest forecast (with the rows' outcome
    when it has none), or one built from the rows (module docstring)."""
    dates = [d for d in rows["date"] if d is not None]
    latest: dt.date | None = max(dates) if dates else None
    given = [o for o in rows["outcome"] if o is not None and o == o]
    if known is not None and known.outcome is None and given:
        known = known.model_copy(update={"outcome": int(given[0])})
    if known is not None:
        if latest is None or latest == known.forecast_date:
            return known
        horizon = None if known.resolution_date is None else (known.resolution_date - latest).days
        return known.model_copy(update={"forecast_date": latest, "horizon_days": horizon})
    first = int(rows["row"].iloc[0])
    if latest is None:
        raise table.error(first, "question_id", rows["question_id"].iloc[0], "this question is not among the known questions "
                          "and its rows have no date: give --questions with it, or a date column")
    return Question(id=str(rows["question_id"].iloc[0]), text=str(rows["question_id"].iloc[0]), forecast_date=latest,
                    outcome=int(rows["outcome"].iloc[0]))


def superforecaster_panel() -> Panel:
    """The bundled panel: 4,797 forecasts by 40 ForecastBench superforecasters on the 578 resolved items of round
    2024-07-21, with their reasoning (``fb_human_forecasts.parquet``, CC BY-SA 4.0, see its ``DATA_CARD.md``).

    Returns
    -------
    Panel
        Forecasts dated 2024-07-21 (the round's forecast due date, each question's forecast date); 3 to 29
        forecasters per question, median 7. The per-item medians the file also holds are the
        ``superforecaster_median`` baseline, not members.
    """
    h = load_forecastbench_human_forecasts()
    h = h[h["forecaster_type"] == _SUPER_INDIVIDUAL]
    ids = set(h["qid"])
    questions = {q.id: q for q in load_forecastbench(rounds=sorted(set(h["forecast_date"].astype(str)))) if q.id in ids}
    frame = pd.DataFrame({"question_id": h["qid"].to_numpy(dtype=object), "forecaster": h["forecaster"].to_numpy(dtype=object),
                          "p_yes": h["p_yes"].to_numpy(dtype=float),
                          "reasoning": h["reasoning"].fillna("").astype(str).str.strip().to_numpy(dtype=object),
                          "date": [dt.date.fromisoformat(str(d)[:10]) for d in h["forecast_date"]]})
    return Panel("superforecasters", "bundled ForecastBench superforecaster panel, round 2024-07-21 (fb_human_forecasts.parquet)",
                 frame, questions)


def bundled_panel(name: str) -> Panel:
    """A bundled panel by name (:data:`BUNDLED_PANELS`).

    Raises
    ------
    DataValidationError
        For an unknown name (the message lists the bundled ones).
    """
    if name != "superforecasters":
        raise DataValidationError(f"--panel {name!r}: no such bundled panel; bundled: {', '.join(BUNDLED_PANELS)}",
                                  field="--panel", value=name)
    return superforecaster_panel()


def write_panel(forecasts: pd.DataFrame, path: str | Path) -> Path:
    """Write panel rows (the columns of :data:`PANEL_COLUMNS` present; of :data:`KIND_PANEL_COLUMNS` for rows with a
    ``distribution``) as ``.csv``, ``.jsonl`` or ``.parquet`` by the path's extension, atomically; :func:`read_panel`
    (:func:`~benchmarks.panels.kind_panel.read_kind_panel`) reads it back.

    Raises
    ------
    DataValidationError
        For another extension.
    OSError
        When the file cannot be written (the previous file, if any, is left as it was).
    """
    path = Path(path)
    cols = [c for c in (KIND_PANEL_COLUMNS if "distribution" in forecasts.columns else PANEL_COLUMNS) if c in forecasts.columns]
    out = forecasts[cols].assign(**({"date": [None if d is None else str(d) for d in forecasts["date"]]} if "date" in cols else {}))
    suffix = path.suffix.lower()
    if suffix == ".csv":
        write_text_atomic(path, csv_text(out))  # no cell a spreadsheet would run; read_panel reads it back as it was
    elif suffix == ".jsonl":
        write_text_atomic(path, out.to_json(orient="records", lines=True, force_ascii=False))
    elif suffix in (".parquet", ".pq"):
        tmp = path.with_name(path.name + ".tmp")
        try:
            out.to_parquet(tmp, index=False)
            tmp.replace(path)
        except OSError:
            tmp.unlink(missing_ok=True)
            raise
    else:
        raise DataValidationError(f"{path}: a panel is written as .csv, .jsonl or .parquet, not {suffix!r}", field="--output",
                                  value=str(path))
    return path



def panel_of_run(run: str | Path | LoadedRun) -> pd.DataFrame:
    """A run's successful members as panel rows (module docstring).

    Parameters
    ----------
    run : str, Path or LoadedRun
        A run folder (a panel's or any run's), or the run already loaded.

    Returns
    -------
    pandas.DataFrame
        A run of binary questions: columns :data:`PANEL_COLUMNS`, one row per successful member of each question
        record (failed members have no p_yes and are left out), in the records' order; ``outcome`` nullable (a
        question not yet resolved). A run of another kind: columns :data:`KIND_PANEL_COLUMNS`, ``distribution`` the
        member's stored forecast as JSON text (full float precision, so that its pools score as the run's).

    Raises
    ------
    FileNotFoundError
        If the folder has no ``manifest.json``.
    DataValidationError
        When the run has no successful member, or holds questions of several kinds (a panel holds one).
    """
    loaded = load_run(run)
    kinds = {k.name: k for k in (kind_of(spec_of_record(r)) for r in loaded.records)}
    if len(kinds) > 1:
        raise DataValidationError(f"{loaded.name}: the run holds questions of {len(kinds)} kinds ({', '.join(kinds)}); a panel "
                                  "holds one kind", field="results.jsonl", value=", ".join(kinds))
    kind = next(iter(kinds.values()), KINDS[DEFAULT_KIND])
    rows = []
    for r in loaded.records:
        for f in (r.get("trace") or {}).get("forecasts", []):
            forecast = kind.forecast_of(f) if f.get("status") == "ok" else None
            if forecast is None:
                continue
            value = kind.value(forecast)
            rows.append({"question_id": r["question_id"], "forecaster": f["agent_id"],
                         kind.stored_field: value if isinstance(value, float) else json.dumps(value),
                         "reasoning": f.get("rationale") or "", "date": dt.date.fromisoformat(r["forecast_date"]),
                         "model": f.get("model") or "", "outcome": r.get("outcome")})
    if not rows:
        raise DataValidationError(f"{loaded.name}: no member of any question has a {kind.stored_field}: nothing to export",
                                  field="results.jsonl", value=0)
    frame = pd.DataFrame(rows)
    if "p_yes" not in frame.columns:  # the questions hold a kind's outcome (an option's index; a value)
        return frame[list(KIND_PANEL_COLUMNS)]
    frame = frame[list(PANEL_COLUMNS)]
    frame["outcome"] = frame["outcome"].astype("Int64")
    return frame
