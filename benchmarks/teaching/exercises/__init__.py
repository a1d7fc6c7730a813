"""The checks of the teaching notebooks' exercises: one module per notebook, named after it.

Each ``check_*`` function takes the student's answer (and the notebook's data or code it needs), computes
the right value itself and returns a :class:`benchmarks.teaching.grading.Verdict`; see
:mod:`benchmarks.teaching.grading` for how answers are compared.
"""
