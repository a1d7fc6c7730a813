"""Proper scoring rules, calibration and bootstrap intervals for binary forecasts.

Per-question scores come first (:func:`brier_score`, :func:`log_loss` return one value per question);
means, calibration summaries, per-method and per-segment tables and bootstrap intervals are computed
from those arrays. All functions are vectorised numpy and validate their input first, raising
:class:`agent_schemas.DataValidationError` (a ``ValueError``) that names the argument, the index and the
offending value, e.g. ``"p_yes has values outside [0, 1]: 1.198 at index 3"``.

Conventions
-----------
* ``p_yes`` is the forecast probability of Yes in [0, 1]; ``outcomes`` are 1 (Yes) / 0 (No).
  NaN in either is an error in the array functions (a missing forecast or an unresolved question must be
  dropped by the caller); :func:`score_table` drops such rows itself and counts them.
* Brier score and log loss are losses: lower is better (the field's convention: ``*_loss`` lower-better,
  ``*_score`` higher-better, except the Brier score, a loss by tradition).
* Calibration bins are ``n_bins`` equal-width bins on [0, 1]; ``p`` goes to bin
  ``min(floor(p * n_bins), n_bins - 1)``, so 0.0 is in the first bin and 1.0 in the last. Bins are
  closed on the left: 0.2 lies in [0.2, 0.3). A value within 1e-9 bin widths below an edge counts as on
  the edge, so decimal forecasts such as 0.57 (0.56999... in binary) land in the bin they name with
  ``n_bins=100``. (:func:`sklearn.calibration.calibration_curve` closes bins on the right instead, so
  values exactly on an interior edge are binned one lower there, and it drops empty bins.)

References
----------
.. [1] Brier, G. W. (1950). Verification of forecasts expressed in terms of probability.
   *Monthly Weather Review*, 78(1), 1-3.
.. [2] Murphy, A. H. (1973). A new vector partition of the probability score. *Journal of Applied
   Meteorology*, 12(4), 595-600.
.. [3] Stephenson, D. B., Coelho, C. A. S., & Jolliffe, I. T. (2008). Two extra components in the Brier
   score decomposition. *Weather and Forecasting*, 23(4), 752-757.
.. [4] Naeini, M. P., Cooper, G. F., & Hauskrecht, M. (2015). Obtaining well calibrated probabilities
   using Bayesian binning. *AAAI* (expected calibration error).
.. [5] Efron, B., & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*, ch. 13 (percentile
   intervals); Field, C. A., & Welsh, A. H. (2007). Bootstrapping clustered data. *JRSS B*, 69(3).
.. [6] Cameron, A. C., Gelbach, J. B., & Miller, D. L. (2008). Bootstrap-based improvements for inference
   with clustered errors. *Review of Economics and Statistics*, 90(3), 414-427 (few-cluster bias).

Modules: :mod:`.rules` (per-question scores), :mod:`.calibration` (ECE, reliability, Murphy, skill),
:mod:`.summary` (everything in one pass), :mod:`.bootstrap` (clustered intervals), :mod:`.tables` (per
method and per segment), :mod:`.brier_index` (ForecastBench's difficulty-adjusted Brier and Brier Index, for
entries that answered different questions), :mod:`.betting` (Prophet Arena's return of betting against the market
price with the forecaster's probability), :mod:`.diversity` (how different an ensemble's members are: the ambiguity
decomposition of the pool's Brier score, the correlation of their errors and the effective number of members, a
reconciler's gain split, closeness to a crowd price), :mod:`.validation` (the input checks they share).
"""

import warnings as _warnings

from benchmarks.scoring.betting import betting_return, betting_table
from benchmarks.scoring.brier_index import TwoWayFixedEffects, brier_index, brier_index_table, two_way_fixed_effects
from benchmarks.scoring.bootstrap import INTERVALS, MIN_CLUSTERS_FOR_INTERVAL, BootstrapCI, clustered_bootstrap_ci, expanded_tail, paired_difference_ci
from benchmarks.scoring.diversity import (AmbiguityDecomposition, CrowdCloseness, ErrorCorrelation, ReconciliationSplit,
                                          ambiguity_decomposition, crowd_closeness, effective_members, error_correlation,
                                          reconciliation_split)
from benchmarks.scoring.calibration import MurphyDecomposition, brier_skill_score, expected_calibration_error, murphy_decomposition, reliability_diagram
from benchmarks.scoring.rules import LOG_LOSS_EPS, brier_score, log_loss, log_score
from benchmarks.scoring.summary import ScoreSummary, score_summary
from benchmarks.scoring.tables import HORIZON_BUCKETS, horizon_bucket, score_table, segment_table

__all__ = [
    "AmbiguityDecomposition",
    "BootstrapCI",
    "CrowdCloseness",
    "ErrorCorrelation",
    "ReconciliationSplit",
    "ambiguity_decomposition",
    "crowd_closeness",
    "effective_members",
    "error_correlation",
    "reconciliation_split",
    "TwoWayFixedEffects",
    "HORIZON_BUCKETS",
    "INTERVALS",
    "LOG_LOSS_EPS",
    "MIN_CLUSTERS_FOR_INTERVAL",
    "MurphyDecomposition",
    "ScoreSummary",
    "betting_return",
    "betting_table",
    "brier_index",
    "brier_index_table",
    "brier_score",
    "brier_skill_score",
    "clustered_bootstrap_ci",
    "expanded_tail",
    "expected_calibration_error",
    "horizon_bucket",
    "log_loss",
    "log_score",
    "murphy_decomposition",
    "paired_difference_ci",
    "reliability_diagram",
    "score_summary",
    "score_table",
    "segment_table",
    "two_way_fixed_effects",
]


def __getattr__(name: str):
    if name == "LOG_SCORE_EPS":  # deprecated with log_score; goes in the next release
        _warnings.warn("benchmarks.scoring.LOG_SCORE_EPS is deprecated; use LOG_LOSS_EPS", DeprecationWarning, stacklevel=2)
        return LOG_LOSS_EPS
    raise AttributeError(f"module 'benchmarks.scoring' has no attribute {name!r}")
