"""ForecastBench's own question-set JSON, optionally joined with its resolution-set JSON
(:func:`load_forecastbench_json`).

Question set: ``{"forecast_due_date", "question_set", "questions": [{"id", "source", "question",
"background", "resolution_criteria", "market_info_resolution_criteria", "market_info_open_datetime",
"market_info_close_datetime", "url", "freeze_datetime", "freeze_datetime_value",
"freeze_datetime_value_explanation", "source_intro", "combination_of", "resolution_dates"}, ...]}``.
Resolution set: ``{"forecast_due_date", "question_set", "resolutions": [{"id", "source", "direction",
"resolution_date", "resolved_to", "resolved"}, ...]}``. Field names checked against
``forecastingresearch/forecastbench-datasets`` (question set ``2024-12-08-human.json``, ``2026-05-10-llm.json``;
resolution set ``2024-12-08_resolution_set.json``). Only single binary questions are loaded: combination
questions (``id`` given as a list) are skipped and counted in ``QuestionList.skipped``: question sets have held
none since the 2025-10-26 round (ForecastBench's "How to submit" wiki page says to drop them from older sets),
and ForecastBench's leaderboard leaves them out before scoring.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from pathlib import Path
from typing import Any

from agent_schemas import DataValidationError, Question
from benchmarks.questions.base import DATASET_SOURCES, MARKET_SOURCES, QuestionList, scheduled_close
from benchmarks.questions.tables import cell_error, check_text_cells, check_text_fields, is_blank, parse_date_cell

logger = logging.getLogger(__name__)

__all__ = ["load_forecastbench_json", "read_forecastbench_json"]


def read_forecastbench_json(path: Path, kind: str, list_key: str) -> dict[str, Any]:
    """One of ForecastBench's JSON files (a question set, resolution set or forecast set: ``kind``) as a dict
    with a top-level ``list_key`` list.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    DataValidationError
        Naming the file: not JSON (with the line), no top-level ``list_key`` list, or text with a NUL byte, a
        control character or a lone surrogate (:func:`benchmarks.questions.tables.check_text_cells`: the entry, the
        field and the value).
    """
    if not path.is_file():
        raise FileNotFoundError(f"ForecastBench {kind} file not found: {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise DataValidationError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})", source=str(path)) from None
    if not isinstance(data, dict) or not isinstance(data.get(list_key), list):
        raise cell_error(path, None, list_key, type(data).__name__, f"a ForecastBench {kind} needs a top-level {list_key!r} list")
    check_text_fields(path, None, {k: v for k, v in data.items() if k != list_key})  # the set's own fields
    check_text_cells(path, data[list_key], where=f"{list_key}[].")
    return data


def _na(value: Any) -> bool:
    return is_blank(value) or (isinstance(value, str) and value.strip() == "N/A")


def _fill(template: str, forecast_date: dt.date, resolution_date: dt.date | None) -> str:
    text = template.replace("{forecast_due_date}", forecast_date.isoformat())
    if resolution_date is not None:
        text = text.replace("{resolution_date}", resolution_date.isoformat())
    return text


def load_forecastbench_json(
    question_set_path: str | Path,
    resolution_set_path: str | Path | None = None,
    *,
    include_unresolved: bool = False,
) -> QuestionList:
    """Load a ForecastBench question set, optionally with its resolution set.

    Question ids follow the bundled data: ``fb|<forecast_due_date>|<source>|<id>|<resolution_date>``
    (``fb|<due>|<source>|<id>`` for a market without a resolution date), so results can be joined with
    :func:`superforecaster_medians` and the bundled table.

    Parameters
    ----------
    question_set_path : str or Path
        ``<date>-llm.json`` / ``<date>-human.json`` from ``datasets/question_sets``.
    resolution_set_path : str or Path, optional
        ``<date>_resolution_set.json`` from ``datasets/resolution_sets``. Without it every question is
        returned unresolved: one per entry of ``resolution_dates`` for dataset questions, one with no
        resolution date for market questions.
    include_unresolved : bool, default False
        With a resolution set: also return rows whose ``resolved`` is false, with ``outcome=None``.

    Returns
    -------
    QuestionList
        Binary questions; ``crowd_p_yes`` is the freeze value of market questions when it lies in
        [0, 1] (dataset freeze values are series values, kept in ``metadata["freeze_value_raw"]``).
        ``skipped`` counts: ``combo`` (combination questions), ``not_in_question_set``, ``unresolved``,
        ``nonbinary`` (resolved to a value other than 0/1), ``resolved_on_or_before_due`` and
        ``duplicate``.

    Raises
    ------
    FileNotFoundError
        If a file does not exist.
    DataValidationError
        Naming the file, the entry (0-based index in ``questions`` / ``resolutions``), the field and the
        value: invalid JSON, a missing list, a missing ``id``/``source``/``question``, a bad date, or
        resolution and question sets with different ``forecast_due_date``.
    """
    qpath = Path(question_set_path)
    qdata = read_forecastbench_json(qpath, "question set", "questions")
    if _na(qdata.get("forecast_due_date")):
        raise cell_error(qpath, None, "forecast_due_date", qdata.get("forecast_due_date"), "missing forecast_due_date")
    fdate = parse_date_cell(qpath, None, "forecast_due_date", qdata["forecast_due_date"])
    round_label = fdate.isoformat()
    qset_name = qdata.get("question_set") or qpath.name
    skipped: dict[str, int] = {}

    def skip(reason: str) -> None:
        skipped[reason] = skipped.get(reason, 0) + 1

    by_key: dict[tuple[str, str], dict[str, Any]] = {}
    order: list[tuple[str, str]] = []
    for i, q in enumerate(qdata["questions"]):
        if not isinstance(q, dict):
            raise cell_error(qpath, i, None, q, "each question must be a JSON object")
        qid = q.get("id")
        if isinstance(qid, list) or isinstance(q.get("combination_of"), list):
            skip("combo")
            continue
        for col in ("id", "source", "question"):
            if _na(q.get(col)):
                raise cell_error(qpath, i, col, q.get(col), f"missing {col!r}")
        rdates: list[dt.date] = []
        if isinstance(q.get("resolution_dates"), list):
            rdates = [parse_date_cell(qpath, i, "resolution_dates", d) for d in q["resolution_dates"]]
        entry = dict(q)
        entry["_row"] = i
        entry["_rdates"] = rdates
        key = (str(q["source"]), str(qid))
        by_key[key] = entry
        order.append(key)

    def build(entry: dict[str, Any], rdate: dt.date | None, outcome: int | None, extra: dict[str, Any]) -> Question:
        source = str(entry["source"])
        qtype = "market" if source in MARKET_SOURCES else "dataset" if source in DATASET_SOURCES else "other"
        crowd = None
        raw = entry.get("freeze_datetime_value")
        if qtype == "market" and not _na(raw):
            try:
                v = float(raw)
                crowd = v if 0.0 <= v <= 1.0 else None
            except (TypeError, ValueError):
                crowd = None
        crit = "" if _na(entry.get("resolution_criteria")) else str(entry["resolution_criteria"])
        market_crit = None if _na(entry.get("market_info_resolution_criteria")) else str(entry["market_info_resolution_criteria"])
        if not crit.strip() and market_crit:
            crit = market_crit
        meta: dict[str, Any] = {
            "freeze_datetime": None if _na(entry.get("freeze_datetime")) else entry["freeze_datetime"],
            "freeze_value_raw": None if _na(raw) else str(raw),
            "freeze_value_explanation": None if _na(entry.get("freeze_datetime_value_explanation")) else entry["freeze_datetime_value_explanation"],
            "question_set": qset_name,
            "source_intro": None if _na(entry.get("source_intro")) else entry["source_intro"],
        }
        for k in ("market_info_open_datetime", "market_info_close_datetime"):
            if not _na(entry.get(k)):
                meta[k] = entry[k]
        if market_crit:
            meta["market_resolution_criteria"] = market_crit
        meta.update(extra)
        sqid = str(entry["id"])
        qid = f"fb|{round_label}|{source}|{sqid}" + (f"|{rdate.isoformat()}" if rdate is not None else "")
        close = entry.get("market_info_close_datetime")
        return Question(
            id=qid,
            text=_fill(str(entry["question"]), fdate, rdate),
            background="" if _na(entry.get("background")) else str(entry["background"]),
            resolution_criteria=crit,
            forecast_date=fdate,
            scheduled_close_date=scheduled_close(qtype, None if _na(close) else close, rdate),
            resolution_date=rdate,
            outcome=outcome,
            source=source,
            source_question_id=sqid,
            question_type=qtype,
            url=None if _na(entry.get("url")) else str(entry["url"]),
            crowd_p_yes=crowd,
            round=round_label,
            horizon_days=None if rdate is None else (rdate - fdate).days,
            metadata=meta,
        )

    out: list[Question] = []
    seen: set[str] = set()

    def add(q: Question) -> None:
        if q.id in seen:
            skip("duplicate")
            return
        seen.add(q.id)
        out.append(q)

    if resolution_set_path is None:
        for key in order:
            entry = by_key[key]
            dates = entry["_rdates"] or [None]
            for rdate in dates:
                if rdate is not None and rdate <= fdate:
                    skip("resolved_on_or_before_due")
                    continue
                add(build(entry, rdate, None, {}))
        origin = str(qpath)
    else:
        rpath = Path(resolution_set_path)
        rdata = read_forecastbench_json(rpath, "resolution set", "resolutions")
        if not _na(rdata.get("forecast_due_date")):
            rdue = parse_date_cell(rpath, None, "forecast_due_date", rdata["forecast_due_date"])
            if rdue != fdate:
                raise cell_error(rpath, None, "forecast_due_date", rdata["forecast_due_date"],
                           f"resolution set is for a different round than question set {qpath} ({fdate})")
        for j, r in enumerate(rdata["resolutions"]):
            if not isinstance(r, dict):
                raise cell_error(rpath, j, None, r, "each resolution must be a JSON object")
            if isinstance(r.get("id"), list):
                skip("combo")
                continue
            for col in ("id", "source", "resolution_date"):
                if _na(r.get(col)):
                    raise cell_error(rpath, j, col, r.get(col), f"missing {col!r}")
            entry = by_key.get((str(r["source"]), str(r["id"])))
            if entry is None:
                skip("not_in_question_set")
                continue
            rdate = parse_date_cell(rpath, j, "resolution_date", r["resolution_date"])
            if rdate <= fdate:
                skip("resolved_on_or_before_due")
                continue
            resolved = r.get("resolved") is True
            outcome: int | None = None
            if resolved:
                try:
                    val = float(r.get("resolved_to"))
                except (TypeError, ValueError):
                    val = float("nan")
                if val not in (0.0, 1.0):
                    skip("nonbinary")
                    continue
                outcome = int(val)
            elif not include_unresolved:
                skip("unresolved")
                continue
            extra = {} if _na(r.get("resolved_to")) or resolved else {"resolved_to_latest": r.get("resolved_to")}
            add(build(entry, rdate, outcome, extra))
        origin = f"{qpath} + {rpath}"

    if skipped:
        logger.info("%s: loaded %d questions; skipped %s", origin, len(out), skipped)
    return QuestionList(out, skipped=skipped, origin=origin)
