"""The run folder's durable files, byte by byte (issue 18): the JSONL append is fsynced before it returns, atomic
writes leave the old file or the new one, a torn last line is cut, failed records are set aside without loss."""

from __future__ import annotations

import datetime as dt
import errno
import os

import pytest

from agent_schemas import DataValidationError, ErrorInfo, TokenUsage
from benchmarks.harness import provider_stack
from benchmarks.run_folder import REPLACED_FILE, RESULTS_FILE, append_jsonl, failure_reason, read_results, set_aside_failed, write_json_atomic, write_text_atomic


class FsyncSpy:
    """Records, at each ``os.fsync``, the bytes of the file on disk as another reader sees them; may fail the nth."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.seen: list[tuple[str, bytes]] = []
        self.fail_at = fail_at
        self._real = os.fsync

    def __call__(self, fd: int) -> None:
        path = os.readlink(f"/proc/self/fd/{fd}")
        with open(path, "rb") as fh:
            self.seen.append((os.path.basename(path), fh.read()))
        if self.fail_at is not None and len(self.seen) == self.fail_at:
            raise OSError(errno.ENOSPC, "No space left on device")
        self._real(fd)


@pytest.fixture
def fsync(monkeypatch):
    spy = FsyncSpy()
    monkeypatch.setattr(os, "fsync", spy)
    return spy


# --- append_jsonl ----------------------------------------------------------------------------------


def test_append_is_flushed_and_fsynced_before_it_returns(tmp_path, fsync):
    path = tmp_path / RESULTS_FILE
    append_jsonl(path, {"question_id": "q1", "p": 0.25})
    assert fsync.seen == [(RESULTS_FILE, b'{"question_id": "q1", "p": 0.25}\n')]  # the whole line, flushed, at fsync
    append_jsonl(path, {"question_id": "q2"})
    assert [name for name, _ in fsync.seen] == [RESULTS_FILE, RESULTS_FILE]
    assert fsync.seen[1][1] == path.read_bytes() == b'{"question_id": "q1", "p": 0.25}\n{"question_id": "q2"}\n'


def test_append_writes_utf8_text_dates_as_strings_and_pydantic_models_as_their_json(tmp_path, fsync):
    path = tmp_path / RESULTS_FILE
    append_jsonl(path, {"text": "Café — ½", "day": dt.date(2025, 11, 9)})
    append_jsonl(path, TokenUsage(input_tokens=3, calls=1))
    lines = path.read_bytes().split(b"\n")
    assert lines[0] == '{"text": "Café — ½", "day": "2025-11-09"}'.encode("utf-8")  # not \\u escapes
    assert lines[1] == TokenUsage(input_tokens=3, calls=1).model_dump_json().encode() and lines[2] == b""


def test_a_failed_append_cuts_the_partial_line_and_names_the_file(tmp_path, monkeypatch):
    path = tmp_path / RESULTS_FILE
    append_jsonl(path, {"question_id": "q1"})
    before = path.read_bytes()
    spy = FsyncSpy(fail_at=1)
    monkeypatch.setattr(os, "fsync", spy)
    with pytest.raises(OSError) as ei:
        append_jsonl(path, {"question_id": "q2"})
    assert (ei.value.errno, ei.value.strerror, ei.value.filename) == (errno.ENOSPC, "No space left on device", str(path))
    assert spy.seen[0][1] == before + b'{"question_id": "q2"}\n'  # it was written, then cut back
    assert path.read_bytes() == before
    monkeypatch.setattr(os, "fsync", spy._real)
    append_jsonl(path, {"question_id": "q3"})
    assert [r["question_id"] for r in read_results(path)] == ["q1", "q3"]


# --- atomic writes -------------------------------------------------------------------------------------


def test_write_json_atomic_writes_indented_utf8_json_through_a_fsynced_temp_file(tmp_path, fsync, monkeypatch):
    replaced = []
    real_replace = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: (replaced.append((str(a), str(b))), real_replace(a, b)))
    path = tmp_path / "manifest.json"
    data = {"run_id": "r", "note": "Café", "created": dt.date(2025, 1, 2), "n": [1, 2]}
    write_json_atomic(path, data)
    expected = '{\n  "run_id": "r",\n  "note": "Café",\n  "created": "2025-01-02",\n  "n": [\n    1,\n    2\n  ]\n}'
    assert path.read_bytes() == expected.encode("utf-8")
    assert fsync.seen == [("manifest.json.tmp", expected.encode("utf-8"))]
    assert replaced == [(str(tmp_path / "manifest.json.tmp"), str(path))]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json"]


def test_a_failed_atomic_write_keeps_the_old_file_and_removes_the_temp_file(tmp_path, monkeypatch):
    path = tmp_path / "report.md"
    write_text_atomic(path, "old")
    monkeypatch.setattr(os, "fsync", FsyncSpy(fail_at=1))
    with pytest.raises(OSError) as ei:
        write_text_atomic(path, "new")
    assert (ei.value.errno, ei.value.strerror, ei.value.filename) == (errno.ENOSPC, "No space left on device", str(path))
    assert path.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]


def test_an_atomic_write_into_a_missing_folder_names_the_file(tmp_path):
    path = tmp_path / "missing" / "report.md"
    with pytest.raises(OSError) as ei:
        write_text_atomic(path, "x")
    assert (type(ei.value), ei.value.errno, ei.value.filename) == (FileNotFoundError, errno.ENOENT, str(path))


def test_write_text_atomic_keeps_the_text_as_given(tmp_path):
    path = tmp_path / "a.txt"
    write_text_atomic(path, "Übersicht\nline 2")
    write_text_atomic(path, "Zweite Fassung")
    assert path.read_bytes() == "Zweite Fassung".encode("utf-8")


# --- read_results ----------------------------------------------------------------------------------


def test_a_missing_results_file_is_no_records(tmp_path):
    assert read_results(tmp_path / RESULTS_FILE) == [] and read_results(tmp_path / RESULTS_FILE, repair=True) == []
    assert not (tmp_path / RESULTS_FILE).exists()


@pytest.mark.parametrize("raw, records, repaired", [
    (b'{"a": 1}\n{"b": 2}\n', [{"a": 1}, {"b": 2}], b'{"a": 1}\n{"b": 2}\n'),
    (b'{"a": 1}\n\n  \n{"b": 2}\n\n', [{"a": 1}, {"b": 2}], b'{"a": 1}\n\n  \n{"b": 2}\n\n'),  # blank lines are kept
    (b'{"a": 1}\n\n{"b": 2}\n{"c": ', [{"a": 1}, {"b": 2}], b'{"a": 1}\n\n{"b": 2}\n'),  # torn: cut off
    (b'{"a": 1}\n\n{"b": 2}', [{"a": 1}, {"b": 2}], b'{"a": 1}\n\n{"b": 2}\n'),  # whole but no newline: newline added
    (b'{"c": ', [], b""),
    (b'\n{"c": ', [], b"\n"),
    (b'{"a": 1}\n   ', [{"a": 1}], b'{"a": 1}\n   '),  # a blank last line is left alone
    (b'{"a": 1}\n{"t": "\xc3\xa9t\xc3', [{"a": 1}], b'{"a": 1}\n'),  # torn inside a UTF-8 character
    (b'{"a": 1}\n\xc3', [{"a": 1}], b'{"a": 1}\n'),
])
def test_read_results_and_repair(tmp_path, raw, records, repaired):
    path = tmp_path / RESULTS_FILE
    path.write_bytes(raw)
    assert read_results(path) == records
    assert path.read_bytes() == raw  # reading alone never changes the file
    assert read_results(path, repair=True) == records
    assert path.read_bytes() == repaired
    assert read_results(path, repair=True) == records and path.read_bytes() == repaired  # idempotent


def test_a_corrupt_line_before_the_last_is_an_error_naming_file_and_line(tmp_path):
    path = tmp_path / RESULTS_FILE
    raw = b'{"a": 1}\n{"b": \n{"c": 3}\n'
    path.write_bytes(raw)
    with pytest.raises(DataValidationError) as ei:
        read_results(path, repair=True)
    assert str(ei.value).startswith(f"{path}: line 2 is not valid JSON (Expecting value: line 1 column 7")
    assert (ei.value.row, ei.value.source) == (1, str(path))
    assert path.read_bytes() == raw
    path.write_bytes(b'{"a": 1}\n{"t": "\xff"}\n{"c": 3}\n')  # not UTF-8: corrupted, not torn
    with pytest.raises(DataValidationError, match=r"line 2 is not valid JSON \('utf-8' codec can't decode byte 0xff"):
        read_results(path)


# --- set_aside_failed ------------------------------------------------------------------------------


def test_failed_records_are_moved_aside_and_the_rest_kept_byte_for_byte(tmp_path, fsync):
    path = tmp_path / RESULTS_FILE
    ok1, bad1, ok2, bad2 = (b'{"question_id": "a", "status": "ok"}\n', b'{"question_id": "b", "status": "failed", "x": "\xc3\xa9"}\n',
                            b'{"question_id": "c",  "status": "ok"}\r\n', b'{"question_id": "d", "status": "failed"}')  # c: edited on Windows
    (tmp_path / REPLACED_FILE).write_bytes(b'{"question_id": "z", "status": "failed"}\n')  # an earlier retry's
    path.write_bytes(ok1 + bad1 + b"\n" + ok2 + bad2)
    assert set_aside_failed(tmp_path) == 2
    assert path.read_bytes() == ok1 + ok2
    assert (tmp_path / REPLACED_FILE).read_bytes() == b'{"question_id": "z", "status": "failed"}\n' + bad1 + bad2 + b"\n"
    # the archive is fsynced before the results are rewritten (a crash in between loses nothing)
    assert [name for name, _ in fsync.seen] == [REPLACED_FILE, RESULTS_FILE + ".tmp"]
    assert fsync.seen[1][1] == ok1 + ok2
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([REPLACED_FILE, RESULTS_FILE])


def test_nothing_to_set_aside_touches_nothing(tmp_path, fsync):
    assert set_aside_failed(tmp_path) == 0
    path = tmp_path / RESULTS_FILE
    path.write_bytes(b'{"question_id": "a", "status": "ok"}\n\n{"question_id": "b", "status": "ok"}')
    assert set_aside_failed(tmp_path) == 0
    assert path.read_bytes() == b'{"question_id": "a", "status": "ok"}\n\n{"question_id": "b", "status": "ok"}'
    assert not (tmp_path / REPLACED_FILE).exists() and fsync.seen == []


# --- why a question failed ---------------------------------------------------------------------------


def err(kind: str, message: str) -> ErrorInfo:
    return ErrorInfo(type=kind, message=message)


def test_failure_reason_is_the_most_common_member_error_with_its_first_message():
    members = [err("RateLimited", "429 first"), err("ForecastParseError", "no JSON"), err("RateLimited", "429 second"),
               err("ForecastParseError", "bad JSON"), err("ForecastParseError", "again")]
    assert failure_reason(members, err("EnsembleFailed", "0 of 5")) == "ForecastParseError: no JSON"
    assert failure_reason(members[:3], None) == "RateLimited: 429 first"
    assert failure_reason([], err("UnexpectedError", "KeyError: 'usage'")) == "UnexpectedError: KeyError: 'usage'"
    assert failure_reason([], None) == "unknown"


# --- the response cache opens at the first call ------------------------------------------------------------


def test_the_cache_folder_is_created_at_first_use_only(tmp_path):
    lazy = provider_stack._CacheOpenedOnFirstUse(tmp_path / "cache")
    assert repr(lazy) == f"ResponseCache({str(tmp_path / 'cache')!r}, opened on first use)"
    assert lazy.directory == tmp_path / "cache" and lazy._cache is None
    assert lazy.get("no such key") is None  # the first use opens it
    assert (tmp_path / "cache").is_dir() and lazy.enabled
    opened = lazy._cache
    assert opened is not None and lazy.get("other") is None and lazy._cache is opened  # opened once
