"""Find, list and show questions, and read the short ids every command accepts.

Short ids
---------
Bundled ids are long and contain ``|`` (``fb|2025-10-26|polymarket|0x5f…|2025-11-30``), so every shell use
needs quotes, and they end with the actual resolution date, which forecasters must not see. A question's
**short id** is the first :data:`SHORT_ID_CHARS` (8) hexadecimal characters of
``blake2b(question id, digest_size=16)``: shell-safe, stable, revealing nothing, and unique over the
bundled questions of every kind (18,021 binary, 25 multiple-choice, 15,603 numeric: a test checks it). Wherever a
command takes a question id (``forecast --question``, ``questions show``, the ``question_id`` column of a ``score``
file), it accepts (:func:`resolve_question`, which looks among the bundled questions of every kind):

1. the full id;
2. a short id;
3. (interactive commands only: ``forecast --question``, ``questions show``) any other reference of at
   least :data:`MIN_REF_CHARS` characters that fits exactly one question: a prefix of its short hash
   (``3fa9``), or a piece of its full id such as ``2025-10-26|polymarket|0x53f8`` (round, source and
   the start of the source question id). ``score`` files take full and short ids only.

A reference that fits several questions is refused with the candidates listed; one that fits none is
refused with a hint to search.
"""

from __future__ import annotations

import functools
import hashlib
import textwrap
from collections.abc import Iterable, Sequence

from agent_schemas import DataValidationError, Question
from benchmarks.questions.bundled import load_forecastbench
from benchmarks.questions.bundled_kinds import BUNDLED_LOADERS, load_bundled

__all__ = ["MIN_REF_CHARS", "SHORT_ID_CHARS", "bundled_questions", "every_bundled_question", "filter_questions", "LIST_COLUMNS",
           "list_columns", "format_question", "list_rows", "resolve_question", "short_id", "summary"]

#: Characters of a short id.
SHORT_ID_CHARS = 8
#: Fewest characters of a partial reference (a short-hash prefix or a piece of the full id).
MIN_REF_CHARS = 4
_HEX = frozenset("0123456789abcdef")


def short_id(question_id: str) -> str:
    """The short id of ``question_id``: 8 lowercase hex characters (see the module docstring).

    Examples
    --------
    >>> len(short_id("fb|2025-10-26|polymarket|0xabc|2025-11-30")), short_id("x") == short_id("x")
    (8, True)
    """
    return _digest(question_id)[:SHORT_ID_CHARS]


@functools.lru_cache(maxsize=65536)
def _digest(question_id: str) -> str:
    return hashlib.blake2b(question_id.encode("utf-8"), digest_size=16).hexdigest()


@functools.lru_cache(maxsize=1)
def _bundled() -> tuple[Question, ...]:
    return tuple(load_forecastbench())


def bundled_questions() -> list[Question]:
    """Every bundled binary ForecastBench question (read once per process)."""
    return list(_bundled())


@functools.lru_cache(maxsize=1)
def _every_bundled() -> tuple[Question, ...]:
    return tuple(q for loader in BUNDLED_LOADERS.values() for q in (_bundled() if loader is load_forecastbench else loader()))


def every_bundled_question() -> list[Question]:
    """The bundled questions of every kind (:data:`~benchmarks.questions.bundled_kinds.BUNDLED_LOADERS`): the binary
    ones of :func:`bundled_questions` first, then each other kind's (read once per process, about 1 s more)."""
    return list(_every_bundled())


def _describe(q: Question, width: int = 60) -> str:
    text = " ".join(q.text.split())
    return f"{short_id(q.id)} ({q.forecast_date} {q.source}: {text[:width - 1] + '…' if len(text) > width else text})"


def resolve_question(ref: str, questions: Sequence[Question] | None = None, *, what: str = "question") -> Question:
    """The question ``ref`` names among ``questions`` (default: the bundled questions of every kind,
    :func:`every_bundled_question`); see the module docstring.

    Raises
    ------
    DataValidationError
        When ``ref`` fits no question (with a hint to search) or several (listing up to five with their
        short ids); ``field`` is ``what``.
    """
    pool = list(_every_bundled() if questions is None else questions)
    ref = ref.strip()
    exact = [q for q in pool if q.id == ref]
    if len(exact) == 1:
        return exact[0]
    low = ref.lower()
    by_short = [q for q in pool if short_id(q.id) == low]
    if len(by_short) == 1:
        return by_short[0]
    found: dict[str, Question] = {}
    if len(ref) >= MIN_REF_CHARS:
        if set(low) <= _HEX:
            found.update((q.id, q) for q in pool if _digest(q.id).startswith(low))
        found.update((q.id, q) for q in pool if ref in q.id)
    if len(found) == 1:
        return next(iter(found.values()))
    where = "the bundled questions" if questions is None else "the given questions"
    if not found:
        hint = ("use a short id from 'forecast-reconcile questions list --search WORDS'" if questions is None
                else "use a full id, a short id or a longer piece of the id")
        too_short = f" (a partial reference needs at least {MIN_REF_CHARS} characters)" if len(ref) < MIN_REF_CHARS else ""
        raise DataValidationError(f"{what} {ref!r} matches none of {where}{too_short}; {hint}", field=what, value=ref)
    shown = sorted(found.values(), key=lambda q: (q.forecast_date, q.id))[:5]
    more = f" and {len(found) - len(shown)} more" if len(found) > len(shown) else ""
    raise DataValidationError(
        f"{what} {ref!r} matches {len(found)} of {where}: {'; '.join(_describe(q, 40) for q in shown)}{more}; "
        "give the short id", field=what, value=ref)


def filter_questions(questions: Iterable[Question], *, sources: Sequence[str] | None = None, question_type: str | None = None,
                     rounds: Sequence[str] | None = None, search: str | None = None, kind: str | None = None) -> list[Question]:
    """Questions whose source, type, round and kind (:mod:`agent_schemas.kinds`: ``binary``, ``multiple_choice``,
    ``numeric``) are among the given ones (None keeps all) and whose text (question, background or resolution
    criteria) contains every word of ``search`` (case-insensitive)."""
    words = [w.lower() for w in (search or "").split()]
    out = []
    for q in questions:
        if kind and q.kind.name != kind:
            continue
        if sources and q.source not in sources:
            continue
        if question_type and q.question_type != question_type:
            continue
        if rounds and (q.round or q.forecast_date.isoformat()) not in rounds:
            continue
        if words:
            hay = f"{q.text}\n{q.background}\n{q.resolution_criteria}".lower()
            if not all(w in hay for w in words):
                continue
        out.append(q)
    return out


#: Headers of :func:`list_rows`, in order (``kind`` only when a listed question is not binary).
LIST_COLUMNS = ("short id", "forecast", "source", "type", "closes", "question")


def list_columns(questions: Sequence[Question]) -> tuple[str, ...]:
    """The headers of :func:`list_rows` for ``questions``: :data:`LIST_COLUMNS`, with ``kind`` before the question
    when one of them is not binary."""
    if any(q.kind.spec_columns for q in questions):
        return (*LIST_COLUMNS[:-1], "kind", LIST_COLUMNS[-1])
    return LIST_COLUMNS


def list_rows(questions: Sequence[Question]) -> list[tuple[str, ...]]:
    """One row per question under :func:`list_columns`: short id, forecast date, source, type, scheduled close date
    (the one fixed in advance, not the actual one; ``-`` when unknown), the kind (when a question is not binary) and
    the whole question text on one line (a table renderer wraps it)."""
    kinds = "kind" in list_columns(questions)
    return [(short_id(q.id), q.forecast_date.isoformat(), q.source, q.question_type,
             q.scheduled_close_date.isoformat() if q.scheduled_close_date else "-", *((q.kind.name,) if kinds else ()),
             " ".join(q.text.split()))
            for q in questions]


def format_question(q: Question, *, width: int = 100) -> str:
    """Everything about one question: the record, then the case facts exactly as every prompt shows them,
    then what the harness holds back from forecasters (scorer only)."""
    from agent_tools.case_facts import render_case_facts

    def block(text: str) -> list[str]:
        return [textwrap.fill(p, width, initial_indent="  ", subsequent_indent="  ") if p.strip() else ""
                for p in text.strip().splitlines()] or ["  (none)"]

    visible = q.visible()
    kind, spec = q.kind, q.spec
    crowd_forecast = kind.crowd(q)
    crowd = (f"{q.crowd_p_yes:.3f}" if q.crowd_p_yes is not None
             else kind.forecast_text(spec, crowd_forecast) if crowd_forecast is not None else "none")
    outcome = "unresolved" if q.outcome is None else kind.outcome_text(spec, q.outcome)
    if q.outcome is not None and float(q.outcome).is_integer() and outcome != f"{q.outcome:g}":
        outcome += f" ({q.outcome:g})"  # as stored: 1/0, an option's index
    lines = [
        f"question {short_id(q.id)}  (full id: {q.id})",
        f"source {q.source}, type {q.question_type}, kind {kind.name}, round {q.round or '-'}, url {q.url or '-'}",
        "",
        "WHAT FORECASTERS SEE (the case facts block every prompt opens with; the crowd line appears only with --show-crowd):",
        *("  " + line for line in render_case_facts(visible).splitlines()),
        *(["", "BACKGROUND IN FULL (prompts show its first 600 characters):", *block(q.background)]
          if len(q.background.strip()) > 600 else []),
        "",
        "HELD BACK FROM FORECASTERS (the scorer only):",
        f"  outcome: {outcome}",
        f"  actual resolution date: {q.resolution_date or '-'}"
        + (f" (horizon {q.horizon_days} days)" if q.horizon_days is not None else ""),
        f"  crowd / market probability at freeze: {crowd} (shown to models only with run --show-crowd)",
        "  the full id (it ends with the actual resolution date)",
    ]
    return "\n".join(lines)


def summary(questions: Sequence[Question]) -> tuple[str, list[tuple[str, str, str]]]:
    """What ``questions`` hold: one line (count, rounds and their range) and one row per question type (type,
    count, each source with its count), for a table renderer."""
    from collections import Counter

    by_source = Counter((q.question_type, q.source) for q in questions)
    rounds = sorted({q.round or q.forecast_date.isoformat() for q in questions})
    head = (f"{len(questions):,} bundled questions (ForecastBench, resolved; CC BY-SA 4.0), "
            f"{len(rounds)} rounds from {rounds[0]} to {rounds[-1]}" if rounds else "no questions")
    rows = []
    for kind in ("market", "dataset"):
        counts = [(src, n) for (t, src), n in sorted(by_source.items()) if t == kind]
        if counts:
            rows.append((kind, f"{sum(n for _, n in counts):,}", ", ".join(f"{src} {n:,}" for src, n in counts)))
    return head, rows
