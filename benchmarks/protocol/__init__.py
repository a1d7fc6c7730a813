"""What a benchmark compares and how it keeps the comparison fair: the methods read from one pipeline run
(:mod:`~benchmarks.protocol.methods`), the baselines, the bootstrap clusters, the leakage audit and the dates it
reads, the models' training cutoffs, and the walk-forward fitted methods.
"""
