"""Reading a user's file cell by cell: a :class:`Table` of rows that knows where each row starts, and
the cell readers whose errors name the file, the row (``data row N (line M)``), the column and the value.
Question files (:mod:`benchmarks.questions.files`), ForecastBench JSON and score files
(:func:`benchmarks.report.score_file.score_forecasts_file`) are read through it.

And writing the CSV files a user opens (:func:`csv_text`: leaderboards, panels, class splits): a text cell a
spreadsheet would run as a formula is neutralised, and :func:`read_table` reads it back as it was.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import json
import math
import re
import unicodedata
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from agent_schemas import DataValidationError
from agent_schemas.dates import utc_date
from agent_schemas.kinds import DEFAULT_KIND, KINDS

__all__ = ["CSV_CELL_LIMIT", "FORMULA_TRIGGERS", "Table", "cell_error", "check_text_cells", "check_text_fields", "csv_text",
           "id_text", "neutralise_formula", "restore_formula", "is_blank", "parse_date_cell", "parse_outcome",
           "plain_value", "read_table", "text_problem"]


@dataclass
class Table:
    """The rows of a user file as dicts, and where each row starts in the file.

    Attributes
    ----------
    path : Path
    header : list of str or None
        The CSV / Parquet columns; None for JSONL and JSON (each row has its own keys).
    rows : list of dict
        One dict per data row; CSV cells are text, JSON values as written.
    lines : list of int or None
        1-based line of the file where each row starts; None for Parquet and JSON rows.
    """

    path: Path
    header: list[str] | None
    rows: list[dict[str, Any]]
    lines: list[int | None]

    def where(self, row: int) -> str:
        """``data row N (line M)`` for 0-based ``row`` (``data row N`` when the format has no lines)."""
        line = self.lines[row] if 0 <= row < len(self.lines) else None
        return f"data row {row + 1}" + (f" (line {line})" if line else "")

    def value(self, row: int, column: str) -> Any:
        """The cell of 0-based ``row`` in ``column``, or None when it is missing or blank (empty text, NaN, null)."""
        v = self.rows[row].get(column)
        return None if is_blank(v) else v

    def error(self, row: int | None, column: str | None, value: Any, problem: str) -> DataValidationError:
        """A :class:`DataValidationError` naming this file, the row (:meth:`where`), the column and the value."""
        with self.numbering():
            return cell_error(self.path, row, column, value, problem)

    @contextlib.contextmanager
    def numbering(self) -> Iterator["Table"]:
        """Within the block, errors about this file name rows as :meth:`where` does."""
        token = _NUMBERING.set(self)
        try:
            yield self
        finally:
            _NUMBERING.reset(token)


_NUMBERING: ContextVar[Table | None] = ContextVar("_NUMBERING", default=None)


def _show(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def cell_error(path: Path, row: int | None, column: str | None, value: Any, problem: str) -> DataValidationError:
    """The :class:`DataValidationError` of a bad cell: ``"<path>: <where>, column '<column>': <problem>
    (value <value>)"``. Inside :meth:`Table.numbering` of the same file the row reads ``data row N (line M)``,
    elsewhere ``row <0-based row>`` (JSON entries); ``row=None`` names no row (a file-level problem)."""
    table = _NUMBERING.get()
    if row is None:
        where = ""
    elif table is not None and table.path == path:
        where = table.where(row) + ", "
    else:
        where = f"row {row}, "
    col = f"column {column!r}: " if column is not None else ""
    return DataValidationError(f"{path}: {where}{col}{problem} (value {_show(value)})", field=column, row=row, value=value, source=str(path))


#: Code points no text of a user file may hold: the C0 control characters but tab, line feed and carriage return
#: (U+0000 NUL included), DEL, the C1 control characters and lone surrogates (a JSON ``\ud800`` escape is not a
#: character). They are never text a person wrote; they break CSV tools, terminals and the UTF-8 of every file a
#: run writes, and a prompt or a page would carry them on.
UNSTORABLE_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def text_problem(text: str) -> str | None:
    r"""What makes ``text`` unusable as a cell of a user file (:data:`UNSTORABLE_TEXT`), in words, or None.

    Examples
    --------
    >>> text_problem("Will it\x00 rain?")
    'contains a NUL byte (U+0000) at character 8'
    >>> text_problem("Will it rain?") is None
    True
    """
    m = UNSTORABLE_TEXT.search(text)
    if m is None:
        return None
    ch, at = m.group(), m.start() + 1
    if ch == "\x00":
        return f"contains a NUL byte (U+0000) at character {at}"
    if "\ud800" <= ch <= "\udfff":
        return f"contains a lone surrogate (U+{ord(ch):04X}: half of a UTF-16 pair, not a character) at character {at}"
    name = unicodedata.name(ch, "") or {"\x7f": "DELETE"}.get(ch, "a control character")
    return f"contains the control character U+{ord(ch):04X}{f' ({name})' if name != 'a control character' else ''} at character {at}"


def _text_in(value: Any) -> str | None:
    """The first problem (:func:`text_problem`) of any text in ``value`` (a cell, or a JSON list or object in one)."""
    if isinstance(value, str):
        return text_problem(value)
    if isinstance(value, dict):
        return next((p for k, v in value.items() for p in (_text_in(k), _text_in(v)) if p), None)
    if isinstance(value, (list, tuple)):
        return next((p for v in value if (p := _text_in(v))), None)
    return None


def check_text_cells(path: Path, rows: list[dict[str, Any]], header: list[str] | None = None, *, where: str = "") -> None:
    """Refuse a file with unusable text (:func:`text_problem`) in a column name or in any cell, nested JSON included.

    Call inside :meth:`Table.numbering` of the file so rows read ``data row N (line M)``; elsewhere they read
    ``row <0-based index>`` (entries of a JSON list). ``where`` prefixes the column (e.g. ``"questions[]."``).

    Raises
    ------
    DataValidationError
        The first such text: one line naming the file, the row, the column, the value and the character.
    """
    for name in header or []:
        if problem := text_problem(name):
            raise cell_error(path, None, where + name, name, f"the column name {problem}")
    for i, rec in enumerate(rows):
        if isinstance(rec, dict):
            check_text_fields(path, i, rec, where=where)


def check_text_fields(path: Path, row: int | None, record: dict[str, Any], *, where: str = "") -> None:
    """:func:`check_text_cells` of one record (``row`` None: fields of the file itself, no row)."""
    for key, value in record.items():
        if problem := text_problem(str(key)):
            raise cell_error(path, row, where + str(key), key, f"the column name {problem}")
        if problem := _text_in(value):
            raise cell_error(path, row, where + str(key), value, f"{problem}; remove it from the file")


def is_blank(value: Any) -> bool:
    """True for a cell that means "absent": None, NaN, NA or text of only white space."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    if isinstance(value, str) and not value.strip():
        return True
    try:
        return bool(pd.isna(value)) if np.ndim(value) == 0 else False
    except (TypeError, ValueError):
        return False


def plain_value(value: Any) -> Any:
    """Plain Python value (numpy scalars -> Python; pandas Timestamp -> ISO string)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def parse_date_cell(path: Path, row: int | None, column: str, value: Any) -> dt.date:
    """A date cell as a UTC calendar date (:func:`agent_schemas.dates.utc_date`)."""
    try:
        return utc_date(value, field=column)
    except ValueError:
        raise cell_error(path, row, column, value, "not an ISO date (expected YYYY-MM-DD, or a date-time read in UTC)") from None


def parse_outcome(path: Path, row: int | None, value: Any) -> int:
    """Outcome cell of a binary question as 1 (Yes) or 0 (No): ``1``/``0`` (also ``1.0``), ``yes``/``no``,
    ``true``/``false`` (any case), as the binary kind reads it
    (:meth:`agent_schemas.kinds.binary.BinaryKind.outcome_from_cell`).

    Raises
    ------
    DataValidationError
        For any other value (names the file, row, column and value).
    """
    binary = KINDS[DEFAULT_KIND]
    try:
        return int(binary.outcome_from_cell(binary.spec_type(), value))
    except DataValidationError as exc:
        raise cell_error(path, row, "outcome", value, exc.message) from None


#: First characters that make a spreadsheet (Excel, LibreOffice, Google Sheets) read a CSV cell as a formula: the
#: OWASP rule against CSV injection (https://owasp.org/www-community/attacks/CSV_Injection).
FORMULA_TRIGGERS: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def neutralise_formula(value: Any) -> Any:
    r"""``value`` as a CSV cell no spreadsheet runs: text that starts with a :data:`FORMULA_TRIGGERS` character gets
    a leading ``'`` (shown as text, never evaluated), unless it is a plain number (``-0.0132``, ``+3e-05``), which
    stays a number; anything that is not text is returned as it is.

    Examples
    --------
    >>> neutralise_formula('=HYPERLINK("http://x.example","click")')
    '\'=HYPERLINK("http://x.example","click")'
    >>> neutralise_formula("-0.0132"), neutralise_formula(-0.0132), neutralise_formula("mean")
    ('-0.0132', -0.0132, 'mean')
    """
    if isinstance(value, str) and value.startswith(FORMULA_TRIGGERS) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def restore_formula(value: Any) -> Any:
    """The text :func:`neutralise_formula` neutralised, as it was (``'=x`` -> ``=x``); any other value as it is."""
    if isinstance(value, str) and value.startswith("'") and neutralise_formula(value[1:]) == value:
        return value[1:]
    return value


def csv_text(table: pd.DataFrame, *, lineterminator: str = "\n") -> str:
    """``table`` as CSV text (``DataFrame.to_csv(index=False)``, rows ending in ``lineterminator``) safe to open in a
    spreadsheet: every text cell and column name through :func:`neutralise_formula`; numeric columns are written as
    numbers. The one writer of the CSV files the toolkit writes (leaderboards, panels, class splits);
    :func:`read_table` reads a cell it neutralised back as it was (:func:`restore_formula`).

    A cell holding a carriage return or a line feed is always quoted (``to_csv`` quotes only the characters of its
    line terminator, so a bare carriage return would otherwise split the row).
    """
    safe = table.rename(columns=lambda c: neutralise_formula(str(c)))
    for column in safe.columns:
        if pd.api.types.is_object_dtype(safe[column]) or pd.api.types.is_string_dtype(safe[column]):
            safe[column] = safe[column].map(neutralise_formula, na_action="ignore")
    text = safe.to_csv(index=False, lineterminator="\r\n")  # quotes every cell with \r or \n
    if lineterminator == "\r\n":
        return text
    parts = text.split('"')  # even parts lie outside quotes (a doubled "" in a cell leaves an empty even part)
    return '"'.join(part.replace("\r\n", lineterminator) if k % 2 == 0 else part for k, part in enumerate(parts))


#: CSV cells up to this many characters are read (Python's csv module stops at 131,072 by default).
CSV_CELL_LIMIT = 2**31 - 1


def id_text(value: Any) -> str:
    """A question id as text: ids are compared as strings everywhere. ``"007"`` stays ``"007"``; an id
    that a JSON or Parquet file stores as the number ``7`` or ``7.0`` becomes ``"7"``."""
    value = plain_value(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


def read_table(path: str | Path) -> Table:
    """Read a user file (``.csv``, ``.jsonl``, ``.json`` list of objects, ``.parquet``) as a :class:`Table`.

    UTF-8 with or without a byte-order mark; CSV cells are text of any length (up to
    :data:`CSV_CELL_LIMIT`). Rows are not validated here beyond their shape and their text: no column name or cell
    may hold a NUL byte, another control character or a lone surrogate (:func:`check_text_cells`).

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    DataValidationError
        Naming the file and the line for a malformed row (invalid JSON, a row with more cells than the
        header), the row, column and value of a cell with a NUL byte, a control character or a lone surrogate
        (:func:`text_problem`), a file that is not UTF-8, or an unsupported extension.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"file not found: {path}")
    try:
        table = _read_table(path)
    except UnicodeDecodeError as exc:
        raise DataValidationError(f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); "
                                  "save it as UTF-8", source=str(path)) from None
    with table.numbering():
        check_text_cells(path, table.rows, table.header)
    return table


def _bad_line(path: Path, row: int, line: int, value: Any, problem: str) -> DataValidationError:
    """A malformed row found while reading (before the :class:`Table` exists to number it)."""
    return DataValidationError(f"{path}: data row {row + 1} (line {line}): {problem} (value {_show(value)})",
                               row=row, value=value, source=str(path))


class _RepeatedKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _object_once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are distinct (``json.loads`` would keep the last of a repeated key silently)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _RepeatedKey(key)
        out[key] = value
    return out


def _read_table(path: Path) -> Table:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        old_limit = csv.field_size_limit()
        csv.field_size_limit(CSV_CELL_LIMIT)
        try:
            with path.open(newline="", encoding="utf-8-sig") as fh:
                reader = csv.DictReader(fh)
                try:
                    header = [restore_formula(h.strip()) for h in (reader.fieldnames or [])]
                    twice = sorted({h for h in header if header.count(h) > 1})
                    if twice:  # DictReader would keep the last cell of a repeated name without a word
                        raise cell_error(path, None, twice[0], twice[0], f"column {twice[0]!r} appears "
                                         f"{header.count(twice[0])} times in the header (line 1); a column is read once")
                    rows, lines = [], []
                    for rec in reader:
                        # line_num is the record's last line; a quoted cell may span several
                        line = reader.line_num - sum(v.count("\n") for v in rec.values() if isinstance(v, str))
                        if None in rec:
                            raise _bad_line(path, len(rows), line, rec[None], f"more cells than the {len(header)} header columns")
                        rows.append({restore_formula(k.strip()): restore_formula(v) for k, v in rec.items()})
                        lines.append(line)
                except csv.Error as exc:
                    raise cell_error(path, None, None, None, f"line {reader.line_num + 1} is not a valid CSV row ({exc})") from None
            return Table(path, header, rows, lines)
        finally:
            csv.field_size_limit(old_limit)
    if suffix == ".jsonl":
        rows, lines = [], []
        with path.open(encoding="utf-8-sig") as fh:
            for number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line, object_pairs_hook=_object_once)
                except json.JSONDecodeError as exc:
                    raise _bad_line(path, len(rows), number, line.strip(), f"invalid JSON ({exc.msg})") from None
                except _RepeatedKey as exc:
                    raise _bad_line(path, len(rows), number, exc.key, f"key {exc.key!r} appears twice in the "
                                    "object; a cell is read once") from None
                if not isinstance(rec, dict):
                    raise _bad_line(path, len(rows), number, rec, "each JSONL line must be a JSON object")
                rows.append(rec)
                lines.append(number)
        return Table(path, None, rows, lines)
    if suffix == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8-sig"), object_pairs_hook=_object_once)
        except json.JSONDecodeError as exc:
            raise DataValidationError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})", source=str(path)) from None
        except _RepeatedKey as exc:
            raise cell_error(path, None, exc.key, exc.key, f"key {exc.key!r} appears twice in one object; a cell "
                             "is read once") from None
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise cell_error(path, None, None, type(data).__name__, "a JSON file must hold a list of objects, one per row")
        return Table(path, None, data, [None] * len(data))
    if suffix in (".parquet", ".pq"):
        df = pd.read_parquet(path)
        header = [str(c) for c in df.columns]
        data = {c: df[c].tolist() for c in df.columns}
        rows = [{str(c): plain_value(data[c][i]) for c in df.columns} for i in range(len(df))]
        return Table(path, header, rows, [None] * len(rows))
    raise DataValidationError(
        f"{path}: unsupported file type {suffix!r}; use .csv, .jsonl or .parquet",
        field="path", value=str(path), source=str(path),
    )
