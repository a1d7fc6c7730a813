"""Teaching: gradable notebook exercises and a class-competition split of the bundled questions.

* :mod:`.grading`: the graders (a number within a tolerance, a choice, a dict of answers, a function on
  cases) and their :class:`~benchmarks.teaching.grading.Verdict`: right, wrong with a hint, or not answered yet.
* :mod:`.exercises`: one module of checks per notebook.
* :mod:`.lessons`: :func:`~benchmarks.teaching.lessons.run_lesson`, with which a solutions notebook runs
  its lesson's code first, so that both work on the same data.
* :mod:`.class_split`: questions for students with the outcomes held back, and the teacher's file with
  them, graded by ``forecast-reconcile score`` (``forecast-reconcile classroom split``).
"""
