"""A panel as a run, and a run's members as a panel.

**A panel as a run.** :class:`PanelRunner` is the benchmark harness (:class:`benchmarks.runner.BenchmarkRunner`)
with the panel's forecasts as the ensemble (:class:`agent_research.GivenForecasts`): it writes a run folder
(``manifest.json``, ``results.jsonl``) whose records hold the panel's members in ``trace.forecasts`` (each
forecaster's p_yes and reasoning, shown on the question's page), every aggregation method in ``methods``, the
best, median and worst single forecaster (:mod:`benchmarks.panels.forecasters`, in-sample) and the bundled
baselines, so :func:`benchmarks.report.write_report` scores it like any run: one question set, clustered
intervals (:mod:`benchmarks.clusters`), the walk-forward fitted methods, the viewer page.

* **Without a provider** nothing is called: each question's trace is built from the pools computed for the
  whole panel in one vectorised pass (:func:`benchmarks.panels.pools.pool_probabilities`) and written to
  ``trace.aggregates`` unclipped, as the pipeline does; the method rows clip them (:mod:`benchmarks.methods`).
* **With a provider** (``aggregate -p sim``) the debate and the supervisor run on every question of the panel
  (or a seeded sample, ``--n``), reading the members' probabilities and reasoning, and ``debate``,
  ``supervisor`` and ``pipeline`` are scored next to the pools. Questions are filtered by the model's training
  cutoff as in ``run`` (the bundled panel's questions are due 2024-07-21, before every trained model's cutoff
  in :mod:`benchmarks.model_cutoffs`: such a run needs ``--include-before-cutoff`` and is contaminated).

The manifest's ``question_selection`` says where the panel came from (``panel``: name, source, counts, notes).

**A run's members as a panel.** :func:`panel_of_run` reads a run folder's successful members as panel rows
(``forecaster`` = the member's ``agent_id``, ``reasoning`` its rationale, ``date`` the question's forecast
date, ``outcome`` its outcome); :func:`benchmarks.panels.files.write_panel` writes them and
:func:`benchmarks.panels.files.read_panel` reads them back, and aggregating them gives the run's aggregates.
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from typing import Any

import pandas as pd

from agent_research import ForecastPipeline, GivenForecasts
from agent_research.pipeline import TraceRecorder
from agent_schemas import DataValidationError, PipelineTrace, Question
from benchmarks.harness.config import RunConfig
from benchmarks.panels.files import PANEL_COLUMNS, Panel
from benchmarks.panels.forecasters import MIN_PICK_QUESTIONS, forecaster_deltas, pick_forecasters, pick_notes, pick_rows
from benchmarks.panels.pools import pool_probabilities
from benchmarks.harness.runner import BenchmarkRunner
from benchmarks.run_folder.load import load_run
from benchmarks.run_folder.record import QuestionRecord

__all__ = ["PanelRunner", "panel_of_run"]

#: Questions in flight at once when nothing is called (the panel's traces are built in this process).
_OFFLINE_CONCURRENCY = 16


class PanelRunner(BenchmarkRunner):
    """The benchmark harness on a panel's forecasts (module docstring).

    Parameters
    ----------
    config : RunConfig
        The run: ``providers`` empty (nothing is called) or the provider(s) of the debate and the supervisor;
        ``methods`` the aggregation methods (and ``debate``, ``supervisor``, ``pipeline`` with a provider);
        ``sample_n`` a seeded sample of the panel's questions; ``forecast_date_from``/``to``, the training-cutoff
        filter (``after_model_cutoff``) and ``seed`` as for ``run``. The question-selection settings of the
        bundled data (sources, question type) do not apply.
    panel : Panel
        The panel (:func:`benchmarks.panels.files.read_panel`, :func:`~benchmarks.panels.files.superforecaster_panel`).
    min_pick_questions : int
        Fewest questions of a forecaster picked as best, median or worst (:data:`MIN_PICK_QUESTIONS`).
    **kwargs
        Passed to :class:`benchmarks.runner.BenchmarkRunner` (``provider_factory``, ``progress``, ``on_start``...).
    """

    def __init__(self, config: RunConfig, panel: Panel, *, min_pick_questions: int = MIN_PICK_QUESTIONS, **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        self.panel = panel
        self.min_pick_questions = min_pick_questions
        self.given = GivenForecasts(panel.given_forecasts())
        #: Every aggregation method's p_yes per selected question (unclipped), set by :meth:`select_questions`.
        self.pools = pd.DataFrame()
        self._aggregates: dict[str, dict[str, float | None]] = {}
        #: Each forecaster's Brier against the mean on its own selected questions, the picks and what their rows say.
        self.deltas = pd.DataFrame()
        self.picks: dict[str, str] = {}
        self.pick_notes: dict[str, str] = {}

    # --- what is called ----------------------------------------------------------------------------
    def build_providers(self):
        """The reconcilers' providers; none when the config names none (a panel's members need no provider)."""
        if not self.config.providers:
            self.providers = []
            return []
        return super().build_providers()

    def concurrency(self) -> int:
        """As for a run; with no provider, :data:`_OFFLINE_CONCURRENCY` questions at once."""
        if self.config.concurrency or self.model_specs():
            return super().concurrency()
        return _OFFLINE_CONCURRENCY

    def build_pipeline(self) -> ForecastPipeline:
        """The config's pipeline on the panel's given forecasts instead of forecasters."""
        c = self.config.pipeline_for_methods()
        if not self.model_specs():
            return ForecastPipeline(self.given, aggregation=c.aggregation, combination=c.combination)
        return ForecastPipeline.from_config(self.providers, self.build_executor(), c, ensemble=self.given)

    async def run_trace(self, pipeline: ForecastPipeline, q: Question) -> PipelineTrace:
        """The question's trace; with no provider, built from the vectorised pools (nothing runs)."""
        if self.model_specs():
            return await super().run_trace(pipeline, q)
        with TraceRecorder() as recorder:
            ens = self.given.result_for(q.id)
        return pipeline.trace(q.visible(show_crowd=self.config.show_crowd), ens, self._aggregates[q.id], None, None, recorder)

    # --- which questions -----------------------------------------------------------------------------
    def selection(self) -> dict[str, Any]:
        """The run's filters (as :meth:`BenchmarkRunner.selection`) and the panel's facts (``panel``)."""
        sel = {**super().selection(), "source": f"panel {self.panel.name} ({self.panel.source})", "scheduled_close_to": None,
               "survivorship_rule": "not applicable (the panel's questions)", "panel": self.panel.describe()}
        if not self.model_specs():
            sel["contamination_filter"] = {**sel["contamination_filter"], "note": "no model in the run (the panel's forecasts only): nothing to filter"}
        return sel

    def select_questions(self) -> list[Question]:
        """The panel's questions within the forecast-date bounds (the training-cutoff filter included), then a
        seeded sample of ``sample_n`` as for a question file; the pools and the picks are computed on them.

        Raises
        ------
        DataValidationError
            From the training-cutoff filter (an unknown cutoff), or when no question is left.
        """
        sel = self.selection()
        lo = dt.date.fromisoformat(sel["forecast_date_from"]) if sel["forecast_date_from"] else None
        hi = self.config.forecast_date_to
        qs = [q for q in self.panel.question_list() if (lo is None or q.forecast_date >= lo) and (hi is None or q.forecast_date <= hi)]
        if not qs:
            due = sorted(q.forecast_date for q in self.panel.questions.values())
            raise DataValidationError(f"none of the panel's {len(due)} questions (due {due[0]} to {due[-1]}) is due within the "
                                      f"run's dates ({sel['contamination_filter'].get('note')}): --include-before-cutoff accepts "
                                      "contaminated questions", field="questions", value=0)
        n = self.config.sample_n
        if n and len(qs) > n:
            keep = set(random.Random(self.config.seed).sample(range(len(qs)), n))
            qs = [q for i, q in enumerate(qs) if i in keep]
        self.prepare(qs)
        return qs

    def prepare(self, questions: list[Question]) -> None:
        """Compute the pools of ``questions`` (:attr:`pools`) and each forecaster's difference to the mean on
        them, and pick the best, median and worst forecaster (:attr:`deltas`, :attr:`picks`)."""
        ids = {q.id for q in questions}
        f = self.panel.forecasts[self.panel.forecasts["question_id"].isin(ids)]
        self.pools = pool_probabilities(f)
        self._aggregates = {q: {m: (None if v != v else float(v)) for m, v in row.items()}
                            for q, row in self.pools.to_dict("index").items()}  # a trace's aggregates (NaN: none)
        rule = self.config.pipeline.combination
        lo, hi = rule.clip_low, rule.clip_high
        members = pd.DataFrame({"question_id": f["question_id"], "forecaster": f["forecaster"], "p_yes": f["p_yes"].clip(lo, hi),
                                "outcome": [self.panel.questions[q].outcome for q in f["question_id"]]})
        self.deltas = forecaster_deltas(members, self.pools["mean"].clip(lo, hi))
        self.picks = pick_forecasters(self.deltas, self.min_pick_questions)
        self.pick_notes = pick_notes(self.picks, self.deltas, self.min_pick_questions)

    # --- records -----------------------------------------------------------------------------------
    def question_record(self, q: Question, trace: PipelineTrace, baselines: dict[str, dict[str, Any]]) -> QuestionRecord:
        """The run's record of ``q`` with the picked forecasters' rows (where they answered ``q``)."""
        record = super().question_record(q, trace, baselines)
        if trace.status == "ok":
            rule = trace.combination_rule
            members = {f.agent_id: f.p_yes for f in trace.forecasts if f.ok}
            record.methods.update(pick_rows(self.picks, self.pick_notes, members, clip=(rule["clip_low"], rule["clip_high"])))
        return record


def panel_of_run(run_dir: str | Path) -> pd.DataFrame:
    """A run's successful members as panel rows (module docstring).

    Parameters
    ----------
    run_dir : str or Path
        A run folder (a panel's or any run's).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`benchmarks.panels.files.PANEL_COLUMNS`, one row per successful member of each question
        record (failed members have no p_yes and are left out), in the records' order.

    Raises
    ------
    FileNotFoundError
        If the folder has no ``manifest.json``.
    DataValidationError
        When the run has no successful member.
    """
    records = load_run(run_dir).records
    rows = [(r["question_id"], f["agent_id"], float(f["p_yes"]), f.get("rationale") or "", dt.date.fromisoformat(r["forecast_date"]),
             r.get("outcome"))
            for r in records for f in (r.get("trace") or {}).get("forecasts", []) if f.get("status") == "ok" and f.get("p_yes") is not None]
    if not rows:
        raise DataValidationError(f"{run_dir}: no member of any question has a p_yes: nothing to export", field="results.jsonl", value=0)
    frame = pd.DataFrame(rows, columns=list(PANEL_COLUMNS))
    frame["outcome"] = frame["outcome"].astype("Int64")
    return frame
