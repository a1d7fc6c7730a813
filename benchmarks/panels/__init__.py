"""Panels: aggregate any panel of forecasts (``forecast-reconcile aggregate``), e.g. the bundled 40 superforecasters.

A panel is many forecasters' forecasts on resolved questions, each forecaster answering some of them. The
``aggregate`` command runs it as a benchmark run whose members are given, not run (the harness's
``RunConfig(ensemble="given")``, ``BenchmarkRunner(questions=QuestionPool(...), ensemble=panel.ensemble())``), so
it gets the same run folder, report and viewer page as a run: every aggregation method (mean, median, min, trimmed
mean, geometric mean of odds, extremized, the walk-forward fitted ones including member weights) is scored against
the best, median and worst single forecaster, the crowd and the bundled baselines on one question set with clustered
bootstrap intervals; a question's page shows each forecaster's p_yes and reasoning. With a provider (``-p sim``) the
debate and the supervisor reconcile the panel's members, reading their reasoning.

This package reads, pools and compares; it never imports the engine (``benchmarks.harness``), which runs the
panel through its own seams. Modules, one concept each:

* :mod:`.files`: a panel's forecasts read from a file (columns, errors), the bundled data or a run's members, and
  written as a file; :meth:`.files.Panel.ensemble` gives them to a run, :meth:`.files.Panel.scored` scores them as a run would;
* :mod:`.pools`: every aggregation method's probability per question, vectorised;
* :mod:`.forecasters`: single forecasters against the pools, each on its own questions (best, median, worst as
  method rows added to the report, the average member);
* :mod:`.report`: what a panel's run adds to its report (the picks' rows, the panel's tables), wherever it is written.
"""

from benchmarks.panels.files import BUNDLED_PANELS, PANEL_COLUMNS, Panel, bundled_panel, panel_of_run, read_panel, superforecaster_panel, write_panel
from benchmarks.panels.forecasters import (MIN_PICK_QUESTIONS, PICKS, forecaster_table, pick_forecasters, pick_label, pick_methods,
                                           pools_against_forecasters)
from benchmarks.panels.pools import POOL_METHODS, PanelMatrix, panel_matrix, pool_probabilities
from benchmarks.panels.report import is_panel_run, panel_additions, panel_summary, panel_tables

__all__ = [
    "BUNDLED_PANELS", "MIN_PICK_QUESTIONS", "PANEL_COLUMNS", "PICKS", "POOL_METHODS", "Panel", "PanelMatrix",
    "bundled_panel", "forecaster_table", "is_panel_run", "panel_additions", "panel_matrix", "panel_of_run", "panel_summary", "panel_tables", "pick_forecasters",
    "pick_label", "pick_methods", "pool_probabilities", "pools_against_forecasters", "read_panel", "superforecaster_panel",
    "write_panel",
]
