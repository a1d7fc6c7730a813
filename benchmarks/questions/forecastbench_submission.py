"""A ForecastBench forecast set (the submission file of a live round): written from a run, checked the way
ForecastBench reads it, and turned back into rows to score against the round's resolution set.

The format
----------
What ForecastBench reads, from its code (``forecastingresearch/forecastbench``: ``src/orchestration/_io.py``
``read_forecast_file``, ``src/resolve/_prepare.py`` ``check_and_prepare_forecast_file`` and
``set_resolution_dates``, ``src/_schemas.py`` ``ForecastFrame``, ``src/resolve/_impute.py``,
``src/leaderboard/main.py``) and its wiki page "How to submit to ForecastBench" (download the question set at
0:00 UTC on the forecast due date, upload the forecast set by 23:59:59 UTC the same day; from the 2025-10-26
round on, question sets hold no combination questions)::

    {"organization": "<your team>", "model": "<your model's name>", "model_organization": "<who made the model>",
     "question_set": "<date>-llm.json", "forecast_due_date": "<date>",
     "forecasts": [{"id": "<question id>", "source": "<source>", "forecast": 0.62,
                    "resolution_date": "<date>" or null, "reasoning": "..."}, ...]}

* ``organization``, ``model``, ``model_organization``, ``question_set`` and a non-empty ``forecasts`` are
  required (a file missing one is not read); the due date is read from ``question_set``'s name.
* One row per **market** question (``resolution_date`` null: ForecastBench ignores it and scores the one
  forecast at every resolution date of the market) and one per (**dataset** question, resolution date),
  the date being the due date plus one of ForecastBench's horizons (:data:`FORECAST_HORIZONS_DAYS`); a
  dataset row at another date is dropped, a repeated one fails the whole file.
* ``id`` and ``source`` exactly as in the question set; ``forecast`` a probability in [0, 1] (a row
  outside it is dropped); ``reasoning`` optional and not scored. ``direction`` belongs to combination
  questions only (one of +1/-1 per component), which this toolkit does not forecast: none are written.
* A question without a forecast is imputed 0.5, and a forecast set with more than
  :data:`IMPUTED_LIMIT` (5%) of its questions imputed is left off the leaderboard. ``forecast-reconcile score``
  leaves such a question to the leaderboard's one imputation rule
  (:func:`benchmarks.scoring.ranking.impute`: the worst case, with ForecastBench's 0.5 figure beside it).

ForecastBench's leaderboard scores resolved dataset rows and resolved market rows; the loader
(:func:`benchmarks.questions.load_forecastbench_json`) keeps the same rows, so scoring a forecast set
against its resolution set (:func:`forecast_set_table`, ``forecast-reconcile score``) gives the run's
numbers when the run was made on the same question and resolution sets.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_schemas import DataValidationError, Question
from benchmarks.questions.base import DATASET_SOURCES, MARKET_SOURCES
from benchmarks.questions.files import load_questions_file
from benchmarks.questions.forecastbench_json import read_forecastbench_json
from benchmarks.questions.tables import Table, cell_error, is_blank

__all__ = ["FORECAST_HORIZONS_DAYS", "IMPUTED_LIMIT", "IMPUTED_P_YES", "Submission", "build_forecast_set", "check_forecast_set",
           "forecast_set_table", "is_forecast_set", "read_forecast_set", "run_question_sets", "submission_file_name"]

#: Days after the forecast due date at which ForecastBench resolves dataset questions (its constants).
FORECAST_HORIZONS_DAYS: tuple[int, ...] = (7, 30, 90, 180, 365, 1095, 1825, 3650)
#: What ForecastBench scores a question without a forecast as (probability of Yes).
IMPUTED_P_YES = 0.5
#: Largest share of imputed forecasts with which ForecastBench still ranks a forecast set.
IMPUTED_LIMIT = 0.05
# (the leaderboard's own: benchmarks.scoring.ranking.IMPUTED_P_YES and MAX_IMPUTED; questions may not import scoring)
#: Keys a forecast row may have (ForecastBench drops the others).
ROW_KEYS = ("id", "source", "direction", "forecast", "resolution_date", "reasoning")
#: Top-level keys ForecastBench requires, each non-empty.
REQUIRED_KEYS = ("organization", "model", "model_organization", "question_set", "forecasts")
#: Methods whose reasoning is the supervisor's rationale (the debate's and the ensemble's have none of their own).
SUPERVISED = ("supervisor", "pipeline", "supervisor_gated", "pipeline_gated")


def _key(source: str, qid: str, rdate: str | None) -> tuple[str, str, str | None]:
    """A forecast's key: market questions by (source, id), dataset questions also by resolution date."""
    return (source, qid, rdate if source in DATASET_SOURCES else None)


def question_key(q: Question) -> tuple[str, str, str | None]:
    """The forecast-set key of a question loaded from a ForecastBench question set."""
    return _key(q.source, q.source_question_id or "", q.resolution_date.isoformat() if q.resolution_date else None)


# --- reading and checking --------------------------------------------------------------------------


def is_forecast_set(path: str | Path) -> bool:
    """True when ``path`` is a ``.json`` file holding one object with a ``forecasts`` key (a forecast set);
    False for anything else (a table of forecasts, a missing or unreadable file: those fail where they are read)."""
    p = Path(path)
    if p.suffix.lower() != ".json" or not p.is_file():
        return False
    try:
        data = json.loads(p.read_text(encoding="utf-8-sig"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False
    return isinstance(data, dict) and "forecasts" in data


def read_forecast_set(path: str | Path, questions: Sequence[Question] | None = None) -> dict[str, Any]:
    """Read a forecast set and check it (:func:`check_forecast_set`).

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    DataValidationError
        For a file that is not JSON or has no ``forecasts`` list, or any problem :func:`check_forecast_set` finds.
    """
    p = Path(path)
    data = read_forecastbench_json(p, "forecast set", "forecasts")
    check_forecast_set(data, questions, path=p)
    return data


def _due_date(path: Path, data: Mapping[str, Any]) -> dt.date:
    """The round's due date: the date in ``question_set``'s name, which ``forecast_due_date`` must equal."""
    found = re.search(r"\d{4}-\d{2}-\d{2}", str(data["question_set"]))
    if found is None:
        raise cell_error(path, None, "question_set", data["question_set"], "ForecastBench reads the forecast due date from the "
                         "question set's name: it must hold a date (YYYY-MM-DD), e.g. 2025-10-26-llm.json")
    try:
        due = dt.date.fromisoformat(found.group(0))
    except ValueError:
        raise cell_error(path, None, "question_set", data["question_set"], "the date in the question set's name is not a date") from None
    if not is_blank(data.get("forecast_due_date")) and str(data["forecast_due_date"])[:10] != due.isoformat():
        raise cell_error(path, None, "forecast_due_date", data["forecast_due_date"],
                         f"differs from the due date in question_set ({due})")
    return due


def check_forecast_set(data: Any, questions: Sequence[Question] | None = None, *, path: str | Path = "<forecast set>") -> None:
    """Check a forecast set (a parsed JSON object) the way ForecastBench reads it (module docstring), stricter
    where ForecastBench silently drops rows: a row it would drop is an error here, so nothing is lost unseen.

    Parameters
    ----------
    data : object
        The parsed JSON.
    questions : sequence of Question, optional
        The question set's questions (:func:`benchmarks.questions.load_forecastbench_json`): each row must
        then name one of them (a dataset row at one of its resolution dates), and the due dates must agree.
    path : str or Path
        Named in the messages.

    Raises
    ------
    DataValidationError
        Naming the file, the row of ``forecasts`` (0-based), the field and the value: a missing or empty
        required key, a question set name without a date, a due date that differs from it, an unknown key
        or source, a forecast that is not a probability in [0, 1], a market row with a resolution date, a
        dataset row whose resolution date is not the due date plus a ForecastBench horizon, a combination
        row, a repeated row, or (with ``questions``) a row for no question of the set.
    """
    path = Path(path)
    if not isinstance(data, dict):
        raise cell_error(path, None, None, type(data).__name__, "a forecast set is one JSON object")
    for key in REQUIRED_KEYS:
        if is_blank(data.get(key)) or (key == "forecasts" and (not isinstance(data[key], list) or not data[key])):
            raise cell_error(path, None, key, data.get(key), f"a ForecastBench forecast set needs a non-empty {key!r}")
    due = _due_date(path, data)
    valid_dates = {(due + dt.timedelta(days=h)).isoformat() for h in FORECAST_HORIZONS_DAYS}
    known: dict[tuple[str, str, str | None], Question] | None = None
    if questions is not None:
        known = {question_key(q): q for q in questions}
        rounds = {q.forecast_date for q in questions}
        if rounds and rounds != {due}:
            raise cell_error(path, None, "question_set", data["question_set"],
                             f"the questions are of round {', '.join(sorted(d.isoformat() for d in rounds))}, not {due}")
    sources = DATASET_SOURCES | MARKET_SOURCES
    seen: set[tuple[str, str, str | None]] = set()
    for i, row in enumerate(data["forecasts"]):
        if not isinstance(row, dict):
            raise cell_error(path, i, None, row, "each forecast must be a JSON object")
        unknown = sorted(set(row) - set(ROW_KEYS))
        if unknown:
            raise cell_error(path, i, unknown[0], row[unknown[0]], f"not a forecast field (fields: {', '.join(ROW_KEYS)})")
        if isinstance(row.get("id"), list) or not is_blank(row.get("direction")):
            raise cell_error(path, i, "id", row.get("id"), "a combination question (id list with a direction): none are "
                             "forecast here, and ForecastBench's leaderboard leaves them out")
        for col in ("id", "source"):
            if is_blank(row.get(col)) or not isinstance(row[col], str):
                raise cell_error(path, i, col, row.get(col), f"{col} must be the question set's text")
        if row["source"] not in sources:
            raise cell_error(path, i, "source", row["source"], f"not a ForecastBench source ({', '.join(sorted(sources))})")
        p = row.get("forecast")
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not math.isfinite(p) or not 0.0 <= p <= 1.0:
            raise cell_error(path, i, "forecast", p, "forecast must be a probability in [0, 1]")
        rdate = row.get("resolution_date")
        if row["source"] in MARKET_SOURCES:
            if not is_blank(rdate):
                raise cell_error(path, i, "resolution_date", rdate, "a market question has one forecast and no resolution date "
                                 "(null): ForecastBench scores it at every resolution date of the market")
            rdate = None
        elif not isinstance(rdate, str) or rdate[:10] not in valid_dates:
            raise cell_error(path, i, "resolution_date", rdate, f"a dataset forecast's resolution date is the due date {due} "
                             f"plus {', '.join(map(str, FORECAST_HORIZONS_DAYS))} days")
        else:
            rdate = rdate[:10]
        key = _key(row["source"], row["id"], rdate)
        if key in seen:
            raise cell_error(path, i, "id", row["id"], "a second forecast of the same question"
                             + (f" at {rdate}" if rdate else "") + ": ForecastBench refuses the whole file")
        seen.add(key)
        if known is not None and key not in known:
            raise cell_error(path, i, "id", row["id"], f"no question of the question set is {row['source']} {row['id']}"
                             + (f" at {rdate}" if rdate else ""))
        if not isinstance(row.get("reasoning", ""), str):
            raise cell_error(path, i, "reasoning", row.get("reasoning"), "reasoning must be text")


# --- writing from a run ----------------------------------------------------------------------------


@dataclass
class Submission:
    """A forecast set built from a run (:func:`build_forecast_set`) and what the user must know about it."""

    data: dict[str, Any]
    """The forecast set, checked (:func:`check_forecast_set`), ready to write as JSON."""
    n_questions: int = 0
    """Forecastable items of the question set: each market question once, each dataset question per resolution date."""
    n_written: int = 0
    """Forecast rows written."""
    n_fallback: int = 0
    """Rows whose method gave no probability, written as the run's ensemble mean (what the pipeline does when a
    reconciler fails; the leaderboard imputes such a question as the method's worst case,
    :func:`benchmarks.scoring.ranking.impute`, so the file can score better than the method's row)."""
    missing: list[str] = field(default_factory=list)
    """Items with no forecast (not run, or the question failed): ForecastBench imputes them 0.5."""
    notes: list[str] = field(default_factory=list)
    """Plain lines for the user."""


def submission_file_name(forecast_due_date: str, organization: str, model: str) -> str:
    """``<due date>.<organization>.<model>.json``, as ForecastBench names forecast files (names made file-safe)."""
    def safe(text: str) -> str:
        return re.sub(r"[^A-Za-z0-9_-]+", "-", text.strip().lower()).strip("-") or "x"

    return f"{forecast_due_date}.{safe(organization)}.{safe(model)}.json"


def _reasoning(record: Mapping[str, Any], method: str) -> str:
    supervisor = (record.get("trace") or {}).get("supervisor") or {}
    if method in SUPERVISED and supervisor.get("status", "ok") == "ok":
        return " ".join(str(supervisor.get("rationale") or "").split())
    return ""


def run_question_sets(manifest: Mapping[str, Any], question_set: str | Path | None = None,
                      resolution_set: str | Path | None = None) -> tuple[list[Question], list[Question]]:
    """The questions of a run made on a ForecastBench question set: ``(as the run loaded them, every item of
    the set)`` (the second without the resolution set: each market question once, each dataset question at
    each resolution date). ``question_set`` / ``resolution_set`` replace the files the run's manifest names
    (for a run folder moved from where it ran).

    Raises
    ------
    DataValidationError
        When the run was not made on a ForecastBench question set (``run --questions <date>-llm.json``).
    FileNotFoundError
        When a question or resolution set file is not found (the message says how to give it).
    """
    config = manifest.get("config") or {}
    qfile = question_set or config.get("questions_file")
    rfile = resolution_set or config.get("resolutions_file")
    run_id = manifest.get("run_id")
    if not qfile or Path(qfile).suffix.lower() != ".json":
        made_on = f"question file {qfile}" if qfile else "the bundled questions"
        raise DataValidationError(f"run {run_id} was made on {made_on}, not on a ForecastBench question set: a submission needs a "
                                  "run made with `run --questions <date>-llm.json`", field="questions_file", value=qfile)
    for f, option in ((qfile, "--question-set"), (rfile, "--resolution-set")):
        if f and not Path(f).is_file():
            raise FileNotFoundError(f"{f}: not found (the file run {run_id} was made on; give it with {option})")
    return list(load_questions_file(qfile, rfile)), list(load_questions_file(qfile))


def build_forecast_set(
    manifest: Mapping[str, Any],
    records: Sequence[Mapping[str, Any]],
    questions: Sequence[Question],
    question_set: Sequence[Question] | None = None,
    *,
    organization: str,
    model: str,
    model_organization: str,
    method: str = "pipeline",
    reasoning: bool = True,
) -> Submission:
    """The forecast set of one method of a run on a ForecastBench question set.

    Parameters
    ----------
    manifest, records : the run (:func:`benchmarks.report.load_run`).
    questions, question_set : sequence of Question
        The run's questions as the run loaded them, and every item of its question set (default
        ``questions``): :func:`run_question_sets`. The rows follow the set's order; items of the set with no
        row are listed in ``missing``.
    organization, model, model_organization : str
        Your team as ForecastBench knows it, the name your entry gets, and who made the model(s).
    method : str
        Whose ``p_yes`` is submitted (a method label of the run's records, e.g. ``pipeline``, ``mean``).
    reasoning : bool
        Write the supervisor's rationale as ``reasoning`` for the supervisor and pipeline methods (else "").

    Returns
    -------
    Submission
        Rows in the question set's order. A question whose ``method`` gave no probability gets the run's
        ensemble mean (what the pipeline does when a reconciler fails; the run's leaderboard imputes it as the
        method's worst case, :func:`benchmarks.scoring.ranking.impute`, so the file can score better than the
        method's row there); one whose ensemble failed, or that the run did not forecast, gets no row
        (ForecastBench imputes it 0.5) and is listed in ``missing``.
        A market question forecast at several resolution dates (a backtest on a resolution set with
        several rows of it) keeps the forecast of its earliest date, said in ``notes``.

    Raises
    ------
    DataValidationError
        When a required name is empty, ``method`` is not a method of the run (the message lists them), a
        record's question is not in ``questions``, or the set fails :func:`check_forecast_set`.
    """
    for name, value in (("organization", organization), ("model", model), ("model_organization", model_organization)):
        if not value or not value.strip():
            raise DataValidationError(f"--{name.replace('_', '-')} is empty: ForecastBench needs your {name.replace('_', ' ')}",
                                      field=name, value=value)
    methods = list(dict.fromkeys(m for r in records for m in r.get("methods", {})))
    if method not in methods:
        raise DataValidationError(f"--method {method!r} is not a method of run {manifest.get('run_id')}: {', '.join(methods) or 'none'}",
                                  field="method", value=method)
    by_id = {q.id: q for q in questions}
    items = list(question_set if question_set is not None else questions)
    order: dict[tuple[str, str, str | None], int] = {}
    for i, q in enumerate(items):
        order.setdefault(question_key(q), i)
    chosen: dict[tuple[str, str, str | None], tuple[Question, Mapping[str, Any]]] = {}
    repeated = 0
    for r in records:
        q = by_id.get(r["question_id"])
        if q is None:
            raise DataValidationError(f"run {manifest.get('run_id')}: question {r['question_id']} is not in the question set "
                                      f"(was the set changed after the run?)", field="question_id", value=r["question_id"])
        key = question_key(q)
        if key in chosen:
            repeated += 1
            if (q.resolution_date or dt.date.max) >= (chosen[key][0].resolution_date or dt.date.max):
                continue
        chosen[key] = (q, r)
    rows: list[tuple[int, dict[str, Any]]] = []
    n_fallback = 0
    answered: set[tuple[str, str, str | None]] = set()
    for key, (q, r) in chosen.items():
        row = r["methods"].get(method) or {}
        p, note = row.get("p_yes"), ""
        if row.get("status") != "ok" or p is None:
            mean = r["methods"].get("mean") or {}
            if mean.get("status") != "ok" or mean.get("p_yes") is None:
                continue
            p, note = mean["p_yes"], f"No {method} probability for this question: the ensemble mean, the run's fallback."
            n_fallback += 1
        text = " ".join(t for t in (note, _reasoning(r, method) if reasoning and not note else "") if t)
        rows.append((order.get(key, len(order)), {"id": q.source_question_id, "source": q.source, "forecast": float(p),
                                  "resolution_date": key[2], "reasoning": text}))
        answered.add(key)
    rows.sort(key=lambda t: t[0])
    qset = next((str(q.metadata.get("question_set")) for q in items if q.metadata.get("question_set")), "")
    due = next(iter({q.forecast_date for q in items}), None)
    data = {"organization": organization.strip(), "model": model.strip(), "model_organization": model_organization.strip(),
            "question_set": qset, "forecast_due_date": due.isoformat() if due else "", "forecasts": [row for _, row in rows]}
    check_forecast_set(data, items, path=f"forecast set of run {manifest.get('run_id')}")
    missing = [f"{s} {i}" + (f" at {d}" if d else "") for s, i, d in order if (s, i, d) not in answered]
    notes = []
    if repeated:
        notes.append(f"{repeated} forecast(s) of market questions at later resolution dates were left out: ForecastBench takes "
                     "one forecast per market question (the earliest date's is written)")
    return Submission(data, n_questions=len(order), n_written=len(rows), n_fallback=n_fallback, missing=missing, notes=notes)


# --- scoring a forecast set ------------------------------------------------------------------------


def forecast_set_table(path: str | Path, questions: Sequence[Question],
                       question_set: Sequence[Question] | None = None) -> tuple[Table, list[str], list[str]]:
    """The rows of a forecast set to score against ``questions`` (its question set joined with its resolution
    set: the resolved questions), as :func:`benchmarks.report.score_file.score_file` reads a forecasts table.
    ``question_set`` (every item of the set, :func:`run_question_sets`) is what the file is checked against.

    A resolved question the file forecasts gets one row ``{question_id, p_yes, method}`` (``method`` is the
    file's ``model``): the market forecast for every resolved row of that market, the dataset forecast of
    that resolution date. A resolved question without a forecast gets no row: its id is returned, and the
    leaderboard imputes it (:func:`benchmarks.scoring.ranking.impute`; ForecastBench imputes
    :data:`IMPUTED_P_YES`). Forecasts of questions not resolved (yet) are not scored.

    Returns
    -------
    (Table, list of str, list of str)
        The rows, plain lines saying what is missing and left unscored, and the ids of the resolved questions
        without a forecast.

    Raises
    ------
    DataValidationError
        As :func:`read_forecast_set` (checked against ``question_set``), or when no question is resolved.
    """
    p = Path(path)
    data = read_forecast_set(p, question_set)
    given = {_key(r["source"], r["id"], None if is_blank(r.get("resolution_date")) else str(r["resolution_date"])[:10]): float(r["forecast"])
             for r in data["forecasts"]}
    resolved = [q for q in questions if q.outcome is not None]
    if not resolved:
        raise DataValidationError(f"{p}: none of the questions is resolved: give the round's resolution set (--resolutions)",
                                  source=str(p))
    rows, missing = [], []
    for q in resolved:
        f = given.get(question_key(q))
        if f is None:
            missing.append(q.id)
        else:
            rows.append({"question_id": q.id, "p_yes": f, "method": str(data["model"])})
    used = {question_key(q) for q in resolved}
    notes = [f"{data['model']}: {len(given)} forecasts, {len(resolved)} resolved questions scored"]
    if missing:
        notes.append(f"{len(missing)} resolved question(s) had no forecast ({len(missing) / len(resolved):.1%}): imputed by the "
                     f"leaderboard's rule; ForecastBench imputes {IMPUTED_P_YES} and leaves a set with more than {IMPUTED_LIMIT:.0%} "
                     "imputed off its leaderboard")
    unscored = sum(k not in used for k in given)
    if unscored:
        notes.append(f"{unscored} forecast(s) of questions not resolved in the resolution set were not scored")
    return Table(p, ["question_id", "p_yes", "method"], rows, [None] * len(rows)), notes, missing
