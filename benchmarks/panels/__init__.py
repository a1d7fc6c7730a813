"""Panels: aggregate any panel of forecasts (``forecast-reconcile aggregate``), e.g. the bundled 40 superforecasters.

A panel is many forecasters' forecasts on resolved questions, each forecaster answering some of them. The
``aggregate`` command turns it into a run folder and writes the same report and viewer page as a run, so every
aggregation method (mean, median, min, trimmed mean, geometric mean of odds, extremized, the walk-forward fitted
ones including member weights) is scored against the best, median and worst single forecaster, the crowd and
the bundled baselines on one question set with clustered bootstrap intervals; a question's page shows each
forecaster's p_yes and reasoning. With a provider (``-p sim``) the debate and the supervisor reconcile the
panel's members, reading their reasoning.

Modules, one concept each:

* :mod:`.files`: a panel's forecasts read from a file (columns, errors) or the bundled data, and written back;
* :mod:`.pools`: every aggregation method's probability per question, vectorised;
* :mod:`.forecasters`: single forecasters against the pools, each on its own questions (best, median, worst,
  the average member);
* :mod:`.runs`: a panel as a run (:class:`~benchmarks.panels.runs.PanelRunner`) and a run's members as a panel;
* :mod:`.report`: the panel's tables in the run's report.
"""

from benchmarks.panels.files import BUNDLED_PANELS, PANEL_COLUMNS, Panel, bundled_panel, read_panel, superforecaster_panel, write_panel
from benchmarks.panels.forecasters import MIN_PICK_QUESTIONS, PICKS, forecaster_table, pick_forecasters, pick_label, pools_against_forecasters
from benchmarks.panels.pools import POOL_METHODS, PanelMatrix, panel_matrix, pool_probabilities
from benchmarks.panels.report import panel_summary, panel_tables
from benchmarks.panels.runs import PanelRunner, panel_of_run

__all__ = [
    "BUNDLED_PANELS", "MIN_PICK_QUESTIONS", "PANEL_COLUMNS", "PICKS", "POOL_METHODS", "Panel", "PanelMatrix", "PanelRunner",
    "bundled_panel", "forecaster_table", "panel_matrix", "panel_of_run", "panel_summary", "panel_tables", "pick_forecasters", "pick_label",
    "pool_probabilities", "pools_against_forecasters", "read_panel", "superforecaster_panel", "write_panel",
]
