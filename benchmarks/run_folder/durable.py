"""Durable reads and writes of a run folder's files: appends that are whole lines or nothing, atomic rewrites,
a reader that survives a torn last line, and the set-aside of failed records for a retry."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout
from pydantic import BaseModel

from agent_schemas import DataValidationError, ReconcileError
from benchmarks.run_folder.layout import LOCK_FILE, REPLACED_FILE, RESULTS_FILE

__all__ = ["ResultsWriteError", "RunFolderBusy", "append_jsonl", "lock_run_folder", "read_results", "set_aside_failed",
           "write_json_atomic", "write_text_atomic"]


class RunFolderBusy(ReconcileError):
    """Another process holds the run folder's lock: one writer per run folder."""


class ResultsWriteError(ReconcileError):
    """A finished question's record could not be written (disk full, permissions); earlier records are intact."""


def lock_run_folder(run_dir: Path) -> FileLock:
    """Create the run folder and take its lock (:data:`~benchmarks.run_folder.layout.LOCK_FILE`) at once (no
    waiting): one writer per run folder. Release it with ``.release()``.

    Raises
    ------
    RunFolderBusy
        When another process (or another runner in this one) holds it.
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / LOCK_FILE
    lock = FileLock(str(path))
    try:
        lock.acquire(blocking=False)
    except Timeout:
        raise RunFolderBusy(f"{run_dir} is being written by another run (its lock {path} is held); "
                            "wait for that run to finish or stop it, then resume", path=str(path)) from None
    return lock


def append_jsonl(path: Path, record: "dict[str, Any] | BaseModel") -> None:
    """Append one JSON line (a dict or a pydantic model), flushed and fsynced before returning.

    Raises
    ------
    OSError
        When the write fails (e.g. ``ENOSPC``, disk full); the file is first cut back to its previous
        length, so no partial line is left for a later append to run into. ``filename`` is ``path``.
    """
    if isinstance(record, BaseModel):
        line = record.model_dump_json() + "\n"
    else:
        line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
    data = line.encode("utf-8")
    with open(path, "ab") as fh:
        start = fh.tell()
        try:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        except OSError as exc:
            try:
                fh.truncate(start)
            except OSError:  # a torn last line is still cut off by read_results(repair=True)
                pass
            raise OSError(exc.errno, exc.strerror, str(path)) from exc


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    """Write JSON to ``path`` atomically (temp file in the same folder, fsync, ``os.replace``)."""
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, default=str))


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically: a temp file in the same folder, fsync, ``os.replace``.

    On failure (``OSError``: disk full, permissions) the previous file is untouched and the temp file
    removed; the error names ``path``.
    """
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror, str(path)) from exc


def read_results(path: Path, *, repair: bool = False, check: Callable[[Any], str | None] | None = None) -> list[Any]:
    """Read a JSON-lines file of records (``results.jsonl``). A torn last line (process killed mid-write) is
    ignored, and with ``repair=True`` cut off the file so later appends start on a clean line. ``check(value)``
    says what is wrong with a parsed line (None: nothing); the run folder's readers pass
    :func:`benchmarks.run_folder.record.record_problem` (:func:`benchmarks.run_folder.load.read_records`).

    Raises
    ------
    DataValidationError
        If a line other than the last is not valid JSON (the file was corrupted, not torn), or a complete line
        fails ``check``: one line naming the file, the line number and what is wrong (``row`` is the 0-based line).
    """
    if not path.exists():
        return []
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    records, good_bytes = [], 0
    for i, line in enumerate(lines):
        if not line.strip():
            good_bytes += len(line) + (1 if i < len(lines) - 1 else 0)
            continue
        is_last = i == len(lines) - 1  # no trailing newline: possibly torn
        try:
            records.append(json.loads(line))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:  # a torn line may end inside a UTF-8 character
            if is_last:
                break
            raise DataValidationError(f"{path}: line {i + 1} is not valid JSON ({exc})", row=i, source=str(path)) from exc
        problem = check(records[-1]) if check is not None else None
        if problem is not None:  # complete JSON of the wrong shape is never a torn line
            raise DataValidationError(
                f"{path}: line {i + 1} is not a question record: {problem}; a run never writes such a line: repair or "
                "remove it (the other records are intact)", row=i, value=line[:200].decode("utf-8", "replace"), source=str(path))
        if is_last:
            break  # complete JSON but no newline: keep it, and the newline is added below
        good_bytes += len(line) + 1
    if repair:
        if good_bytes < len(raw):
            tail = raw[good_bytes:]
            try:
                json.loads(tail)
                with open(path, "ab") as fh:  # a complete last record without newline
                    fh.write(b"\n")
            except (json.JSONDecodeError, UnicodeDecodeError):
                with open(path, "r+b") as fh:
                    fh.truncate(good_bytes)
    return records


def set_aside_failed(run_dir: Path) -> int:
    """Move the failed question records of ``run_dir/results.jsonl`` to ``results.replaced.jsonl``.

    The kept lines are rewritten byte for byte (temp file, fsync, ``os.replace``) after the set-aside
    lines are appended and fsynced to the archive, so a crash at any point loses no record. Returns the
    number of records set aside. Call with the folder's lock held and the file repaired
    (:func:`read_results` with ``repair=True``).
    """
    path = run_dir / RESULTS_FILE
    if not path.exists():
        return 0
    keep, moved = [], []
    for line in path.read_bytes().splitlines(keepends=True):
        if not line.strip():
            continue
        line = line if line.endswith(b"\n") else line + b"\n"
        (keep if json.loads(line).get("status") == "ok" else moved).append(line)
    if not moved:
        return 0
    with open(run_dir / REPLACED_FILE, "ab") as fh:
        fh.write(b"".join(moved))
        fh.flush()
        os.fsync(fh.fileno())
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(b"".join(keep))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return len(moved)

