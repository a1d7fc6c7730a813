"""The engine that runs a benchmark: the run's config (:mod:`~benchmarks.harness.config`), the runner that validates,
locks, resumes and hands pending questions to an executor (:mod:`~benchmarks.harness.runner`), the parts it puts
together (:mod:`~benchmarks.harness.provider_stack`, :mod:`~benchmarks.harness.selection`,
:mod:`~benchmarks.harness.manifest`, :mod:`~benchmarks.harness.records`, :mod:`~benchmarks.harness.session`), the
executors, the cost cap, the dry run, one forecast, provenance and the framework comparison. Readers of runs
(:mod:`benchmarks.run_folder`, :mod:`benchmarks.report`, :mod:`benchmarks.viewer`) never import it.
"""
