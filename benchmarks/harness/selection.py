"""Which questions a run forecasts, and every filter on the way, as its manifest records them
(``question_selection``): the forecast-date bounds, the contamination filter (each model's training cutoff,
failing closed when one is unknown), the survivorship rule of the bundled data, the seeded sample and the shard.

The questions come from the bundled ForecastBench data, a question file (``questions_file``), a
:class:`QuestionPool` a caller offers (a panel's questions: filtered as a file's), or a list given as it is.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_schemas import DataValidationError, Question
from benchmarks.harness.config import RunConfig
from benchmarks.protocol.model_cutoffs import training_cutoff
from benchmarks.questions import (
    DATA_SNAPSHOT_DATE,
    load_forecastbench,
    load_multiple_choice_questions,
    load_numeric_questions,
    load_questions_file,
)
from benchmarks.run_folder.shards import config_digest, parse_shard, selection_digest, shard_of

__all__ = ["BUNDLED_QUESTIONS", "QuestionPool", "QuestionSelection", "file_digest", "question_digest", "refuse_changed_questions"]

log = logging.getLogger(__name__)


def question_digest(q: Question) -> str:
    """SHA-256 (hex, 16 characters) of everything the harness holds of question ``q``: its facts (text, background,
    criteria, dates, source, URL), its outcome and actual resolution date, its crowd value and metadata. Two runs of
    one question agree on it exactly when they forecast and score the same question."""
    return hashlib.sha256(json.dumps(q.model_dump(mode="json"), sort_keys=True).encode("utf-8")).hexdigest()[:16]


def file_digest(path: str | Path) -> str | None:
    """SHA-256 (hex, 16 characters) of the bytes of file ``path``, or None when it cannot be read."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    except OSError:
        return None


_UNKNOWN = object()
#: Fields a question's record shows, and how to read each: the facts from the question the agents saw
#: (``trace.question``), the rest from the record itself. Used to name what changed in a resumed run's questions.
_RECORDED_FIELDS: tuple[tuple[str, Any], ...] = (
    *((name, lambda r, n=name: ((r.get("trace") or {}).get("question") or {}).get(n, _UNKNOWN))
      for name in ("text", "background", "resolution_criteria", "scheduled_close_date", "url")),
    *((name, lambda r, n=name: r.get(n, _UNKNOWN)) for name in ("forecast_date", "resolution_date", "outcome", "source", "question_type")),
    ("crowd_p_yes", lambda r: ((r.get("baselines") or {}).get("crowd") or {}).get("p_yes", _UNKNOWN)),
)


def _what_changed(q: Question, record: Mapping[str, Any] | None) -> str:
    """What differs between ``q`` and the question its ``record`` was run on, in words: the fields, or why they are
    unknown."""
    if record is None:
        return f"{q.id} (not run yet) differs"
    now = q.model_dump(mode="json")
    changed = [name for name, read in _RECORDED_FIELDS if (then := read(record)) is not _UNKNOWN and then != now.get(name)]
    return (f"{q.id} has another {', '.join(changed)}" if changed
            else f"{q.id} differs in a field its record does not show (metadata, source_question_id, round)")


def refuse_changed_questions(run_dir: Path, manifest: Mapping[str, Any], questions: Sequence[Question],
                             records: Sequence[Mapping[str, Any]]) -> None:
    """Refuse to resume the run in ``run_dir`` on other questions than it started with: one run never mixes two
    versions of a question file (two texts, two forecast dates, two outcomes).

    ``manifest`` is the run's (its ``question_ids`` and ``question_digests``, :func:`question_digest` of each,
    and ``question_selection.files``, the input files' :func:`file_digest`); ``questions`` the resumed run's
    selection; ``records`` those written so far (to name the fields that changed). A manifest written before the
    digests were recorded is checked on ids only (logged).

    Raises
    ------
    DataValidationError
        One line naming the run folder, what changed (questions no longer selected or new; the changed
        questions and their fields, or "not run yet"), the input file with its digest then and now, and the fix.
    """
    recorded_ids = manifest.get("question_ids")
    ids = [q.id for q in questions]
    files = (manifest.get("question_selection") or {}).get("files") or {}
    then_now = "; ".join(f"{f['path']}: sha256 {f['sha256']} at the start, {file_digest(f['path']) or 'unreadable'} now"
                         for f in files.values() if file_digest(f["path"]) != f.get("sha256"))
    where = f" ({then_now})" if then_now else ""
    if recorded_ids is not None and recorded_ids != ids:
        gone = [q for q in recorded_ids if q not in set(ids)]
        new = [q for q in ids if q not in set(recorded_ids)]
        what = ", ".join(part for part in (f"{len(gone)} no longer selected (first: {gone[0]})" if gone else "",
                                           f"{len(new)} new (first: {new[0]})" if new else "") if part) or "another order"
        raise DataValidationError(
            f"{run_dir}: the resumed run selects other questions than the manifest records (different providers, filters or "
            f"question file?): {what}{where}", field="question_ids", value=len(questions))
    digests = manifest.get("question_digests")
    if recorded_ids is None or digests is None:
        log.warning("%s: the manifest records no question digests (written by an older version): a question edited since "
                    "the run started cannot be detected", run_dir)
        return
    by_id = {r.get("question_id"): r for r in records}
    changed = [q for q, d in zip(questions, digests) if question_digest(q) != d]
    if changed:
        first = changed[0]
        more = f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""
        raise DataValidationError(
            f"{run_dir}: {len(changed)} of the run's questions changed since it started{where}: "
            f"{_what_changed(first, by_id.get(first.id))}{more}; resume with the questions the run started with, "
            "or start a new run", field="questions", value=first.id)


def _untrained(spec: str) -> bool:
    """Specs of providers that were trained on no data (contamination does not apply): scripted, sim."""
    return spec.split("/", 1)[0] in ("scripted", "sim")


@dataclass(frozen=True)
class QuestionPool:
    """Questions a caller offers a run to select from, e.g. a panel's (:mod:`benchmarks.panels`).

    A pool goes through the filters of a question file (:meth:`QuestionSelection.questions`): the forecast-date
    bounds, the contamination filter included, then the seeded sample of ``sample_n``; questions given as a
    list are used as they are.

    Attributes
    ----------
    questions : sequence of Question
        The candidates, in the order a sample keeps.
    source : str
        Where they come from, recorded as the manifest's ``question_selection.source``.
    facts : mapping
        JSON-serialisable facts about the pool (a panel's counts), recorded as ``question_selection.pool``.
    """

    questions: Sequence[Question]
    source: str
    facts: Mapping[str, Any] = field(default_factory=dict)


def _bundled_forecastbench(cfg: RunConfig, selection: Mapping[str, Any]) -> list[Question]:
    """The bundled ForecastBench questions (binary) through the run's filters (:meth:`QuestionSelection.describe`)."""
    date_from = dt.date.fromisoformat(selection["forecast_date_from"]) if selection["forecast_date_from"] else None
    return list(load_forecastbench(
        sources=cfg.sources, question_type=cfg.question_type, forecast_date_from=date_from,
        forecast_date_to=cfg.forecast_date_to, scheduled_close_to=selection["scheduled_close_to"],
        one_per_source_question=cfg.one_per_source_question, sample_n=cfg.sample_n, seed=cfg.seed,
    ))


def _bundled_numeric(cfg: RunConfig, selection: Mapping[str, Any]) -> list[Question]:
    """The bundled numeric questions (:func:`benchmarks.questions.load_numeric_questions`) of the run's sources,
    every one of them: :meth:`QuestionSelection.questions` applies the run's dates and sample."""
    return load_numeric_questions(sources=cfg.sources)


def _bundled_multiple_choice(cfg: RunConfig, selection: Mapping[str, Any]) -> list[Question]:
    """The bundled multiple-choice questions (:func:`benchmarks.questions.load_multiple_choice_questions`), every
    one of them: :meth:`QuestionSelection.questions` applies the run's dates and sample."""
    return load_multiple_choice_questions()


#: The bundled questions of each kind a run without ``--questions`` selects from: ``loader(config, selection) ->
#: questions`` by kind name, with whether the loader already applied the run's dates and sample (the binary
#: loader does, with its survivorship rule); the others' questions go through
#: :meth:`QuestionSelection.within_dates` as a question file's do. A kind missing here has no bundled questions,
#: and such a run stops with one line saying so (:meth:`QuestionSelection.questions`).
BUNDLED_QUESTIONS: dict[str, tuple[Callable[[RunConfig, Mapping[str, Any]], list[Question]], bool]] = {
    "binary": (_bundled_forecastbench, True),
    "numeric": (_bundled_numeric, False),
    "multiple_choice": (_bundled_multiple_choice, False),
}


class QuestionSelection:
    """The question selection of a run's config on its providers' models.

    Parameters
    ----------
    config : RunConfig
    model_specs : list of str
        The run's provider specs (their training cutoffs bound the questions).
    given : list of Question or QuestionPool, optional
        A list: questions given directly (no filter applies; an unknown cutoff is then recorded, not refused).
        A :class:`QuestionPool`: candidates filtered as a question file's.
    """

    def __init__(self, config: RunConfig, model_specs: list[str], given: Sequence[Question] | QuestionPool | None = None) -> None:
        self.config = config
        self.model_specs = model_specs
        #: The pool offered by the caller, if any.
        self.pool = given if isinstance(given, QuestionPool) else None
        #: Questions given as a list (used as given), if any.
        self.given = None if self.pool is not None else given

    def cutoff_filter(self, *, strict: bool = True) -> dict[str, Any]:
        """The contamination filter this run applies, for the manifest: each model's training cutoff, the
        date questions must be due after (``applied_after``), what it rests on (``basis``) and why.

        Fails closed: when any model's cutoff is unknown (not in :mod:`benchmarks.protocol.model_cutoffs`, or a
        moving alias such as ``*-latest``), the run stops unless the user set ``forecast_date_from``
        (``--date-from``; then that date is the bound and the note says so) or turned the filter off
        explicitly (``after_model_cutoff=False``, ``--include-before-cutoff``). The scripted and simulated
        (``sim``) providers were trained on nothing and are left out of the check. ``strict=False`` records an unknown cutoff
        instead of raising (questions passed to the runner directly are not filtered).

        Raises
        ------
        DataValidationError
            For an unknown cutoff without ``forecast_date_from`` (the message names the models and the fix).
        """
        cfg = self.config
        cutoffs = {s: training_cutoff(s) for s in self.model_specs if not _untrained(s)}
        unknown = [s for s, c in cutoffs.items() if c is None]
        info: dict[str, Any] = {"requested": cfg.after_model_cutoff,
                                "model_cutoffs": {s: (c.isoformat() if c else None) for s, c in cutoffs.items()},
                                "margin_days": cfg.cutoff_margin_days, "applied_after": None, "basis": None}
        if not cfg.after_model_cutoff:
            info["note"] = ("off (--include-before-cutoff): questions due before the models' training cutoffs are "
                            "included and may be contaminated")
        elif not self.model_specs:
            info["note"] = "no model in the run (its members are given and nothing is called): nothing to filter"
        elif not cutoffs:
            info["note"] = "no trained model in the run (scripted or simulated provider): nothing to filter"
        elif unknown and cfg.forecast_date_from is None:
            if not strict:
                info["note"] = f"training cutoff unknown for {', '.join(unknown)}: not applied (questions given directly)"
                return info
            raise DataValidationError(
                f"training cutoff unknown for {', '.join(unknown)}: the contamination filter cannot be applied. "
                "Pass --date-from YYYY-MM-DD (a date after the model's training cutoff), or "
                "--include-before-cutoff to accept contaminated questions", field="providers", value=unknown)
        elif unknown:
            after = cfg.forecast_date_from - dt.timedelta(days=1)  # type: ignore[operator]
            info.update(applied_after=after.isoformat(), basis="--date-from",
                        note=(f"training cutoff unknown for {', '.join(unknown)}: questions due on or after "
                              f"{cfg.forecast_date_from} (--date-from) are used; the bound is the user's"))
        else:
            after = max(cutoffs.values()) + dt.timedelta(days=cfg.cutoff_margin_days)  # type: ignore[type-var, operator]
            info.update(applied_after=after.isoformat(), basis="model_cutoffs",
                        note=(f"questions due after {after} (latest training cutoff of the models"
                              + (f" + {cfg.cutoff_margin_days} days margin)" if cfg.cutoff_margin_days else ")")))
        return info

    def shard(self, questions: list[Question]) -> tuple[list[Question], dict[str, Any]]:
        """The questions of this run's shard (:mod:`benchmarks.run_folder.shards`) and the manifest's ``shard``
        entry (index, count, the selection's and the config's digests).

        Raises
        ------
        DataValidationError
            When the shard holds no question (more shards than questions).
        """
        i, n = parse_shard(self.config.shard or "0/1")
        mine = [q for q in questions if shard_of(q.id, n) == i]
        info = {"index": i, "count": n, "n_questions_all": len(questions),
                "selection_digest": selection_digest([q.id for q in questions]),
                "config_digest": config_digest(self.config.model_dump(mode="json"))}
        if not mine:
            raise DataValidationError(f"shard {i}/{n} holds none of the {len(questions)} selected questions",
                                      field="shard", value=self.config.shard)
        return mine, info

    def describe(self) -> dict[str, Any]:
        """Every filter the question selection applies (recorded in the manifest as ``question_selection``):
        the effective forecast-date bounds, the contamination filter and the survivorship rule; and for a question
        file (and resolution set) its path and :func:`file_digest` (``files``)."""
        cfg = self.config
        given = self.given is not None
        cutoff = self.cutoff_filter(strict=not given)
        date_from = cfg.forecast_date_from
        if cutoff["applied_after"]:
            after = dt.date.fromisoformat(cutoff["applied_after"]) + dt.timedelta(days=1)
            date_from = max(date_from, after) if date_from else after
        bundled = self.given is None and self.pool is None and not cfg.questions_file
        close_to = DATA_SNAPSHOT_DATE if (bundled and cfg.close_by_snapshot) else None
        pool = {} if self.pool is None else {"pool": dict(self.pool.facts)}
        inputs = {} if given or self.pool is not None else {
            key: {"path": path, "sha256": file_digest(path)}
            for key, path in (("questions_file", cfg.questions_file), ("resolutions_file", cfg.resolutions_file)) if path}
        files = {"files": inputs} if inputs else {}
        return {
            "source": "given (no filter applied)" if given else self.pool.source if self.pool is not None else (
                " + ".join(f for f in (cfg.questions_file, cfg.resolutions_file) if f) or "bundled ForecastBench"),
            "forecast_date_from": date_from.isoformat() if date_from else None,
            "forecast_date_to": cfg.forecast_date_to.isoformat() if cfg.forecast_date_to else None,
            "scheduled_close_to": close_to.isoformat() if close_to else None,
            "survivorship_rule": (
                f"scheduled close on or before the outcome snapshot {DATA_SNAPSHOT_DATE}" if close_to else
                ("off (--include-unclosed)" if bundled else "not applicable (user questions)")),
            "contamination_filter": cutoff,
            **files,
            **pool,
        }

    def questions(self) -> list[Question]:
        """The run's questions: given, from a pool or a user file, or from the bundled ForecastBench data, through
        the same filters (:meth:`describe`: forecast-date bounds including the contamination filter; for bundled
        data also the survivorship rule), then a seeded sample of ``sample_n``; each with the evidence cutoff the
        run needs (:meth:`refuse_without_evidence_cutoff`).

        Raises
        ------
        DataValidationError
            From :meth:`cutoff_filter` (unknown training cutoff), a malformed question file, a file or pool
            none of whose questions is within the run's dates (:meth:`within_dates`), or a question without a
            freeze date in a run with ``evidence_cutoff="freeze"``.
        """
        chosen, source, candidates = self._chosen()
        return self.refuse_without_evidence_cutoff(chosen, source, candidates)

    def _chosen(self) -> tuple[list[Question], str, Sequence[Question]]:
        """``(the run's questions, where they come from, a question file's questions in file order or ())`` (:meth:`questions`)."""
        if self.given is not None:
            return list(self.given), "the given questions", ()
        cfg = self.config
        sel = self.describe()
        if self.pool is not None:
            return self.within_dates(self.of_kind(list(self.pool.questions), self.pool.source), self.pool.source, sel), self.pool.source, ()
        if cfg.questions_file:
            loaded = load_questions_file(cfg.questions_file, cfg.resolutions_file)
            return self.within_dates(self.of_kind(loaded, cfg.questions_file), cfg.questions_file, sel), cfg.questions_file, loaded
        bundled = BUNDLED_QUESTIONS.get(cfg.kind)
        if bundled is None:
            raise DataValidationError(
                f"no bundled {cfg.question_kind.label} questions yet (bundled: {', '.join(BUNDLED_QUESTIONS)}): give a question file "
                f"with --questions FILE (a 'kind' column and the kind's columns {', '.join(cfg.question_kind.spec_columns)}; "
                "see benchmarks.questions.files)", field="kind", value=cfg.kind)
        loader, filtered = bundled
        source = f"the bundled {cfg.question_kind.label} questions"
        qs = loader(cfg, sel) if filtered else self.within_dates(loader(cfg, sel), source, sel)
        return qs, source, ()

    def refuse_without_evidence_cutoff(self, questions: list[Question], source: str,
                                       candidates: Sequence[Question] = ()) -> list[Question]:
        """``questions`` when the run can cap each one's searches at its evidence cutoff
        (:meth:`agent_schemas.Question.evidence_cutoff_date` of ``RunConfig.evidence_cutoff``: every question can
        with ``"forecast"``; with ``"freeze"`` each needs a freeze date).

        Raises
        ------
        DataValidationError
            For the first question without one: one line naming ``source`` (the question file), its data row
            among ``candidates`` (the file's questions in order, when given), the question's id and the value of
            its ``freeze_datetime`` (field ``freeze_datetime``).
        """
        for q in questions:
            try:
                q.evidence_cutoff_date(self.config.evidence_cutoff)
            except ValueError as exc:
                row = next((i for i, c in enumerate(candidates) if c.id == q.id), None)
                where = f"data row {row + 1}, " if row is not None else ""
                raise DataValidationError(f"{source}: {where}{exc}; give it a freeze date (column 'freeze_datetime'), leave "
                                          "it out, or run with --evidence-cutoff forecast", field="freeze_datetime", row=row,
                                          value=q.metadata.get("freeze_datetime"), source=source) from None
        return questions

    def of_kind(self, candidates: Sequence[Question], source: str) -> list[Question]:
        """The ``candidates`` of the run's kind (``RunConfig.kind``), in their order.

        Raises
        ------
        DataValidationError
            When candidates were there and none is of the run's kind: one line naming the source, the kinds it
            holds and the ``--kind`` that would run them.
        """
        kind = self.config.kind
        mine = [q for q in candidates if q.kind.name == kind]
        if candidates and not mine:
            held = sorted({q.kind.name for q in candidates})
            raise DataValidationError(f"{source} holds no {self.config.question_kind.label} question (its questions are "
                                      f"{', '.join(held)}): run it with --kind {held[0]}", field="kind", value=kind)
        if len(mine) < len(candidates):
            log.warning("%s: %d of its %d questions are %s; the %d of other kinds are left out", source, len(mine),
                        len(candidates), kind, len(candidates) - len(mine))
        return mine

    def within_dates(self, candidates: Sequence[Question], source: str, selection: Mapping[str, Any]) -> list[Question]:
        """The ``candidates`` (a question file's or a pool's) whose forecast date is within the bounds of
        ``selection`` (:meth:`describe`: the contamination filter included), in their order, then a seeded
        sample of ``sample_n`` (logged).

        Raises
        ------
        DataValidationError
            When candidates were there and none is within the dates: one line naming the source, the
            candidates' forecast dates, the run's bounds and the fix.
        """
        cfg = self.config
        date_from = dt.date.fromisoformat(selection["forecast_date_from"]) if selection["forecast_date_from"] else None
        qs = [q for q in candidates if (date_from is None or q.forecast_date >= date_from)
              and (cfg.forecast_date_to is None or q.forecast_date <= cfg.forecast_date_to)]
        if not qs and candidates:
            due = sorted(q.forecast_date for q in candidates)
            cutoff = selection["contamination_filter"]
            fix = ("--include-before-cutoff accepts contaminated questions" if cutoff.get("basis") == "model_cutoffs"
                   else "widen --date-from / --date-to")
            raise DataValidationError(
                f"none of the {len(due)} questions of {source} (forecast dates {due[0]} to {due[-1]}) is within the run's dates "
                f"({date_from or 'any'} to {cfg.forecast_date_to or 'any'}; {cutoff.get('note')}): {fix}", field="questions", value=0)
        if cfg.sample_n and len(qs) > cfg.sample_n:
            keep = set(random.Random(cfg.seed).sample(range(len(qs)), cfg.sample_n))
            log.warning("%s has %d questions after the filters; using a seeded sample of %d (--n 0 for all)", source, len(qs), cfg.sample_n)
            qs = [q for i, q in enumerate(qs) if i in keep]
        elif cfg.sample_n and len(qs) < cfg.sample_n:
            log.warning("%s has %d questions after the filters, fewer than --n %d: all are used", source, len(qs), cfg.sample_n)
        return qs
