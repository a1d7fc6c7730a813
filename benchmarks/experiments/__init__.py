"""Experiments: documented grids of ordinary runs on one question set, compared pairwise on the same questions.

:mod:`benchmarks.experiments.diversity` is ``forecast-reconcile experiment diversity`` (issue 37): evidence shared or
split, members of one model or mixed, each reconciliation method, against the shared-evidence one-model mean.
"""
