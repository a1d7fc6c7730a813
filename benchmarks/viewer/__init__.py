"""The run viewer: a self-contained HTML page per run or comparison, a compact terminal leaderboard, and
opening the page in a browser.

* :func:`render_page` (:mod:`benchmarks.viewer.page`): the page, rendered with Jinja2 from the report
  data (:class:`ReportData`), with inline SVG figures and a drill-down per question
  (:mod:`benchmarks.viewer.trace`);
* :func:`compact_leaderboard` (:mod:`benchmarks.viewer.terminal`): the leaderboard in at most 100
  terminal columns;
* :func:`open_page` and :func:`page_is_current` (:mod:`benchmarks.viewer.launch`).
"""

from benchmarks.viewer.launch import open_page, page_is_current
from benchmarks.viewer.page import ReportData, render_page
from benchmarks.viewer.terminal import compact_leaderboard

__all__ = ["ReportData", "compact_leaderboard", "open_page", "page_is_current", "render_page"]
