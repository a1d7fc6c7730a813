"""The run folder ``<output_dir>/<run_id>/``: its files and what each holds.

* ``manifest.json`` (:data:`MANIFEST_FILE`): config, package version, providers and models, seed, the question
  selection (with the question file's digest), the question ids and a digest of each question (a resume on
  edited questions is refused), per-question status, retry / cache counters, the command line (redacted), the
  git commit, package versions and wall time (``wall_time_s`` of this session, ``wall_time_s_total`` over resumed sessions); rewritten atomically (temp file +
  ``os.replace``) at the start, at most once per second while questions finish, and at the end.
* ``results.jsonl`` (:data:`RESULTS_FILE`): one line per finished question (:class:`benchmarks.run_folder.record.QuestionRecord`:
  methods, baselines, usage ledger, audit and the full pipeline trace), appended, flushed and fsynced as each
  question finishes. Killing the process at any moment loses at most the questions in flight; a torn last line is
  cut off on resume (:func:`benchmarks.run_folder.durable.read_results`). Every reader reads it through
  :func:`benchmarks.run_folder.load.read_records`, which refuses any other line that is not a record.
* ``cache/``: the persistent response cache, so ``resume`` re-pays no tokens for calls already made.
* ``.lock`` (:data:`LOCK_FILE`): held (an OS file lock, :class:`benchmarks.run_folder.durable.RunFolderLock`) by the one
  process writing the folder, for the whole run or resume; a second writer fails at once. The writer checks before
  every write that the file is still the one it locked: deleting or replacing ``.lock`` stops that writer, so a second
  run that locks a new ``.lock`` is the only one writing.
* ``results.replaced.jsonl`` (:data:`REPLACED_FILE`): failed question records set aside by a resume with
  ``retry_failed`` before their questions run again (kept for their usage; reports read ``results.jsonl`` only).
* ``batches.jsonl`` (:data:`BATCHES_FILE`): batch mode's journal of submitted batches.
* ``report.html`` (:data:`PAGE_FILE`), ``leaderboard.csv`` / ``.md`` and ``fitted.jsonl``: the report
  (:func:`benchmarks.report.write_report`).
* ``questions/<id>.html`` (:data:`QUESTION_PAGES_DIR`): the page of one question whose trace ``report.html`` does
  not embed, written on request by ``forecast-reconcile view RUN --question ID``.

Nothing is written before the run's inputs validate (config, questions, providers); the response cache opens at
the first provider call.
"""

__all__ = ["BATCHES_FILE", "LOCK_FILE", "MANIFEST_FILE", "PAGE_FILE", "QUESTION_PAGES_DIR", "REPLACED_FILE", "RESULTS_FILE",
           "question_page_name"]

#: One JSON line per finished question.
RESULTS_FILE = "results.jsonl"
#: The run's config, selection, statuses and provenance.
MANIFEST_FILE = "manifest.json"
#: The writer's lock.
LOCK_FILE = ".lock"
#: Failed records set aside by ``retry_failed``.
REPLACED_FILE = "results.replaced.jsonl"
#: Batch mode's journal of submitted batches (:mod:`agent_providers.batch.collector`).
BATCHES_FILE = "batches.jsonl"
#: File name of the run viewer's page in a run folder (written by :func:`benchmarks.report.write_report`).
PAGE_FILE = "report.html"
#: Folder of a run's question pages (one question's whole trace each), written on request by ``view --question``.
QUESTION_PAGES_DIR = "questions"


def question_page_name(question_id: str) -> str:
    """The file name of a question's page in :data:`QUESTION_PAGES_DIR`: its id with every character other than a
    letter, digit, ``.``, ``_`` or ``-`` replaced by ``_``, and ``.html``; an id that needed a replacement (or is
    empty) also gets the first 8 hex digits of its SHA-256, so two ids never share a page (``a/b`` and ``a_b``).

    >>> question_page_name("q12")
    'q12.html'
    >>> question_page_name("acled/q 12")
    'acled_q_12-6201564f.html'
    """
    import hashlib
    import re

    safe = re.sub(r"[^A-Za-z0-9._-]", "_", question_id)
    if safe == question_id and safe.strip("."):
        return safe + ".html"
    return f"{safe}-{hashlib.sha256(question_id.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}.html"
