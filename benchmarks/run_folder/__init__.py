"""The run folder format: what a benchmark run writes and every reader reads. It imports nothing else of
``benchmarks``, so reports and viewers read runs without the engine that wrote them.

* :mod:`~benchmarks.run_folder.layout`: the folder's files and what each holds;
* :mod:`~benchmarks.run_folder.record`: one line of ``results.jsonl`` (:class:`QuestionRecord`);
* :mod:`~benchmarks.run_folder.durable`: appends, atomic rewrites, the torn-line-safe reader, the writer's lock;
* :mod:`~benchmarks.run_folder.shards`: the shard contract (which shard a question is in, what makes shards one run);
* :mod:`~benchmarks.run_folder.load`: a run loaded once (:func:`load_run`), folders of runs, shard groups;
* :mod:`~benchmarks.run_folder.comparison`: where a comparison of runs writes (never into a run folder).
"""

from benchmarks.run_folder.durable import (ResultsWriteError, RunFolderBusy, RunFolderLock, RunFolderLockLost, append_jsonl,
                                           lock_run_folder, read_results, set_aside_failed, write_json_atomic,
                                           write_text_atomic)
from benchmarks.run_folder.layout import BATCHES_FILE, LOCK_FILE, MANIFEST_FILE, PAGE_FILE, REPLACED_FILE, RESULTS_FILE
from benchmarks.run_folder.load import LoadedRun, ShardGroup, group_shards, load_run, read_records, run_folders
from benchmarks.run_folder.record import QuestionRecord, failure_reason, record_problem

__all__ = ["BATCHES_FILE", "LOCK_FILE", "MANIFEST_FILE", "PAGE_FILE", "REPLACED_FILE", "RESULTS_FILE", "LoadedRun",
           "QuestionRecord", "ResultsWriteError", "RunFolderBusy", "RunFolderLock", "RunFolderLockLost", "ShardGroup",
           "append_jsonl", "failure_reason", "group_shards", "load_run", "lock_run_folder", "read_records", "read_results",
           "record_problem", "run_folders", "set_aside_failed", "write_json_atomic", "write_text_atomic"]
