"""Reports of runs: the leaderboard (its one writer, :mod:`~benchmarks.report.leaderboard`), the long frame every
table comes from (:mod:`~benchmarks.report.frame`), costs, audits, confidence bands, the report of runs
(:func:`write_report`, :mod:`~benchmarks.report.write`) and the scoring of forecasts made elsewhere
(:mod:`~benchmarks.report.score_file`). A reader: it loads runs (:mod:`benchmarks.run_folder`), never the engine.
"""

from benchmarks.report.write import Report, write_report

__all__ = ["Report", "write_report"]
