"""Durable reads and writes of a run folder's files: appends that are whole lines or nothing, atomic rewrites,
a reader that survives a torn last line, and the set-aside of failed records for a retry."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from filelock import lock_descriptor, unlock_descriptor
from pydantic import BaseModel

from agent_providers.storable import storable_json, storable_text
from agent_schemas import DataValidationError, ReconcileError
from benchmarks.run_folder.layout import LOCK_FILE, REPLACED_FILE, RESULTS_FILE

__all__ = ["ResultsWriteError", "RunFolderBusy", "RunFolderLock", "RunFolderLockLost", "append_jsonl", "lock_run_folder",
           "read_results", "set_aside_failed", "write_json_atomic", "write_text_atomic"]


class RunFolderBusy(ReconcileError):
    """Another process holds the run folder's lock: one writer per run folder."""


class RunFolderLockLost(RunFolderBusy):
    """The run folder's lock file was deleted or replaced while this run held it: another process may now write the
    folder, so this run writes nothing more (:meth:`RunFolderLock.check`)."""


class ResultsWriteError(ReconcileError):
    """A finished question's record could not be written (disk full, permissions); earlier records are intact."""


class RunFolderLock:
    """The one-writer lock of a run folder: an OS lock on a descriptor of its lock file
    (:data:`~benchmarks.run_folder.layout.LOCK_FILE`) that this object owns, taken with ``filelock.lock_descriptor``
    (``flock`` on Unix, ``LockFileEx`` on Windows: the primitive of ``filelock.FileLock``, with which it contends).

    An OS lock belongs to the file, not to its name: deleting or replacing the lock file while a run holds it would
    let a second run lock a new file of the same name and write the folder too. So the lock remembers the identity
    (device and inode) of the file it locked, checks after locking that the name still points to it (a file
    replaced in between is retried), and :meth:`check` compares again before every write: a lock file that is gone
    or replaced stops this run's writing (:class:`RunFolderLockLost`). The file is kept on release (deleting it
    would let a waiting run lock a deleted file).

    Parameters
    ----------
    run_dir : Path
        The run folder (created if missing).

    Raises
    ------
    RunFolderBusy
        When another process (or another runner in this one) holds the lock.
    """

    def __init__(self, run_dir: Path) -> None:
        run_dir.mkdir(parents=True, exist_ok=True)
        self.run_dir = run_dir
        self.path = run_dir / LOCK_FILE
        self._fd: int | None = None
        for _ in range(3):  # the file replaced between opening and locking it: take the new one
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                locked = lock_descriptor(fd, blocking=False)
            except OSError:
                os.close(fd)
                raise
            if not locked:
                os.close(fd)
                raise RunFolderBusy(f"{run_dir} is being written by another run (its lock {self.path} is held); "
                                    "wait for that run to finish or stop it, then resume", path=str(self.path))
            self._fd, self._identity = fd, _identity(os.fstat(fd))
            if self._names_it():
                return
            self.release()
        raise RunFolderBusy(f"{run_dir}: its lock file {self.path} keeps being replaced; is another run starting?",
                            path=str(self.path))

    def _names_it(self) -> bool:
        try:
            return _identity(os.stat(self.path)) == self._identity
        except FileNotFoundError:
            return False

    @property
    def held(self) -> bool:
        """True until :meth:`release`."""
        return self._fd is not None

    def check(self) -> None:
        """Confirm that this run still holds the folder: the lock file's name still points to the file it locked.

        Raises
        ------
        RunFolderLockLost
            When the lock file was deleted or replaced (or the lock released): the caller must not write.
        """
        if self._fd is None or not self._names_it():
            what = "released" if self._fd is None else ("deleted" if not self.path.exists() else "replaced")
            raise RunFolderLockLost(
                f"{self.run_dir}: its lock file {self.path} was {what} while this run held it, so another run may be "
                "writing the folder; this run stopped writing (the records written so far are intact): resume it once "
                "no other run writes the folder", path=str(self.path))

    def release(self) -> None:
        """Unlock and close the descriptor (safe to call twice); the lock file stays."""
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                unlock_descriptor(fd)
            finally:
                os.close(fd)


def _identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


def lock_run_folder(run_dir: Path) -> RunFolderLock:
    """Create the run folder and take its lock (:class:`RunFolderLock` on
    :data:`~benchmarks.run_folder.layout.LOCK_FILE`) at once (no waiting): one writer per run folder. Check it
    before each write with ``.check()``; release it with ``.release()``.

    Raises
    ------
    RunFolderBusy
        When another process (or another runner in this one) holds it.
    """
    return RunFolderLock(run_dir)


def append_jsonl(path: Path, record: "dict[str, Any] | BaseModel") -> None:
    """Append one JSON line (a dict or a pydantic model), flushed and fsynced before returning. Its text is made
    storable first (:func:`agent_providers.storable.storable_json`: lone surrogates as U+FFFD, no secret).

    Raises
    ------
    OSError
        When the write fails (e.g. ``ENOSPC``, disk full); the file is first cut back to its previous
        length, so no partial line is left for a later append to run into. ``filename`` is ``path``.
    """
    data = (storable_json(record) + "\n").encode("utf-8")
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
    """Write JSON to ``path`` atomically (temp file in the same folder, fsync, ``os.replace``), made storable by
    :func:`write_text_atomic`."""
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, default=str))


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically: a temp file in the same folder, fsync, ``os.replace``. The text
    is made storable first (:func:`agent_providers.storable.storable_text`: lone surrogates as U+FFFD, no secret).

    On failure (``OSError``: disk full, permissions) the previous file is untouched and the temp file
    removed; the error names ``path``.
    """
    text = storable_text(text)
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

