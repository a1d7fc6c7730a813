"""The leakage audit: read the prompts a run actually sent and look for what was unknowable on the forecast date.

The cutoff guard (:class:`agent_tools.ToolExecutor`) and the visible question
(:meth:`agent_schemas.Question.visible`) keep hindsight out of prompts by construction. This audit checks
the result independently, from the prompts recorded in each trace (``PipelineTrace.recorded_calls``), with
the facts only the harness holds (the outcome and the actual resolution date). It reads prompts as text, not
through the prompt builders; the one layout it relies on is that of rendered evidence (a search result's
header ``[n] title — source, YYYY-MM-DD — url`` with its indented snippet line, and a member's evidence line
``- evidence [n]: claim [source, YYYY-MM-DD]``). It counts, per question:

``prompts_scanned``
    Provider requests whose messages were recorded.
``evidence_in_prompt`` / ``dropped_by_cutoff_guard``
    Search results shown in the members' prompts and the supervisor's decision prompt (each prompt shows a
    result once, :func:`agent_tools.shown_results`), and results the guard dropped.
``evidence_dated_after_cutoff``
    Evidence items rendered into a prompt with a publication date after the run's cutoff: the forecast date, or
    the freeze date in a run with ``--evidence-cutoff freeze`` (:meth:`agent_schemas.Question.evidence_cutoff_date`),
    where a document dated between the freeze and the forecast date is a finding (the date labels above).
``hindsight_resolution_date``
    Prompts that name the question's actual resolution date in a written form of
    :data:`benchmarks.protocol.written_dates.DATE_FORMS` (``2025-12-18``, ``18 December 2025``, ``Dec 18th, 2025``,
    ``12/18/2025``, ``18.12.2025``, ...) where it is not a date the question may show (below), or that state
    a horizon derived from it (``horizon 39 days``, ``39 days after the forecast date``).
``hindsight_outcome``
    Prompts that state the outcome, or that the question has resolved, next to the question (the phrase
    table below), or in a line of its own (``Outcome: Yes``, ``Resolution = NO``).

``findings`` is the sum of the last three; a clean run has 0.

Dates a question may show
-------------------------
The actual resolution date is hindsight only where a forecaster could not have known it. Never a finding:

1. a date of the visible question: its forecast date, its scheduled close (a market's close fixed in
   advance; a dataset question's resolution date), its freeze date, and every date written, in any form, in
   its text, background, resolution criteria, freeze explanation or URL (:func:`knowable_dates`). When the
   actual resolution date is one of them it is not hindsight anywhere, and neither is its horizon;
2. a written date one of whose readings is such a date: ``03/01/2026`` may be a scheduled close of 1 March
   written the US way although the question resolved on 3 January. Numeric dates are otherwise read both
   ways (month first as in the US, day first as in most other places), and a date counts if either reading
   is the actual resolution date: a planted date is found whichever convention wrote it;
3. a date that a search result dated on or before the forecast date names prospectively
   (:data:`PROSPECTIVE_CONTEXTS`):

   ===================  ===================================================================
   deadline             ``have increased by 2024-12-15``, ``before July 1, 2026``
   range end            ``between September 6 and December 31, 2025``
   future or condition  ``elections are scheduled to be held ... on April 12 2026``,
                        ``Resolve YES if Liverpool finish 1st ... on Sunday, 24 May 2026``
   question             ``Will CPT's market close price on 2024-12-15 be higher ...?``
   calendar             ``the next meeting is on 5 March 2026``, ``next meeting: 5 March
                        2026``, ``the season ends on 24 May 2026``, ``the polls open on
                        Thursday, 5 March 2026`` (a calendar in the present tense)
   ===================  ===================================================================

   Its author wrote it before the forecast date, so it was knowable. (This is the false alarm of issue 29:
   ForecastBench scores the markets of round 2024-12-08 at its 7-day horizon, 2024-12-15, the resolution
   date of every dataset question of that round, whose texts the bundled search corpus holds.) The same
   date written there as a past event (``resolved Yes on 2024-12-15``, ``On December 15, 2024 the ...``,
   ``the meeting was on 5 March 2026``, ``Today is 5 March 2026``) is a finding: that is how a page re-dated
   after the fact reads. Text written by models or by the harness gets no such allowance.

Outcome statements
------------------
:data:`OUTCOME_STATEMENTS`, matched in any case:

===================  ===============================================================================
resolved YES/NO      ``resolved Yes``, ``RESOLVED TO NO``, ``resolved as "Yes"``, ``settled at No``
closed YES/NO        ``closed YES``, ``closed at "No"``
resolved positively  ``resolved positively``, ``resolved in the negative``
already resolved     ``has already resolved``, ``has been resolved``, ``was resolved``
resolved early       ``resolved early``, ``closed ahead of schedule``, ``resolved before its close``
the answer was       ``the answer was no``, ``the answer is yes``, ``the final outcome turned out to be Yes``
outcome YES          ``outcome: yes``, ``outcome 1``
resolution: YES      ``resolution: YES``, ``Resolution = no``, ``final result: Yes``
paid out per share   ``paid out $1 per YES share``, ``redeemed at $1.00 per "No" share``
ended at 100%        ``ended trading at 100%``, ``closed at 0%``, ``settled at 100¢``
===================  ===============================================================================

A phrase governed by a modal, a negation or a condition is a rule, not a statement, and is skipped:
``will be resolved as "Yes" if``, ``may still be resolved as Yes``, ``if the market resolved Yes``,
``resolved Yes only if``, ``Resolution: YES if``. So is an opinion (``I think the answer is yes``,
``probably resolved No``): a forecaster's view, not a report. A statement counts when it follows, within 100
characters, a mention of the question (its id, source id, URL, the first 120 characters of its text, or "this
question", "this market", "the question", "the market"), or when it precedes its id, source id, URL or text on
the same line (``Resolved NO: Will the ECB ...``). A statement the question itself shows (a background
reporting how another market resolved) is not hindsight.

Direction
---------
The counts are heuristics with a known direction: they can flag a legitimate text that happens to match (a
false alarm is read in the run viewer, which shows the prompts of every question with findings), but a
planted actual resolution date in a form of the date table, an outcome statement of the phrase table next to
the question, or a late evidence item is always found, with the allowances 1-3 above (dates) and the rules
and opinions above (outcome statements) as the only exceptions.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Iterable

from agent_schemas import PipelineTrace, Question
from agent_tools import shown_results
from benchmarks.protocol.written_dates import find_dates, lowercase

__all__ = ["AUDIT_KEYS", "OUTCOME_STATEMENTS", "PROSPECTIVE_CONTEXTS", "audit_prompts", "knowable_dates", "leakage_audit"]

#: Keys of :func:`leakage_audit`, in report order.
AUDIT_KEYS: tuple[str, ...] = (
    "prompts_scanned", "evidence_in_prompt", "dropped_by_cutoff_guard", "evidence_dated_after_cutoff",
    "hindsight_resolution_date", "hindsight_outcome", "findings",
)

_ISO = r"(\d{4}-\d{2}-\d{2})"
#: A search result's header: ``agent_tools.evidence.render_evidence``. Its snippet is the indented line below.
_SEARCH_RESULT = re.compile(rf"^[ \t]*\[\d+\] .*? — .*?, {_ISO}(?: — |[ \t]*$)", re.M)
#: Date labels of rendered evidence: search results and the member summaries of
#: ``agent_specialists.prompts.render_agent_summaries``.
_EVIDENCE_DATE_RES = (_SEARCH_RESULT, re.compile(rf"^\s*- evidence(?: \[\d+\])?: .*\[[^\[\]]*, {_ISO}\]\s*$", re.M))

#: How a document names a date it does not report as past: ``(name, pattern)``. The deadline and range
#: patterns match the text just before the date; a future or conditional word may be anywhere in the clause
#: before it (``elections are scheduled to be held in Hungary on April 12 2026``, ``Resolve YES if Liverpool
#: finish 1st ... on Sunday, 24 May 2026``); a question is the sentence around the date; a calendar is a verb
#: in the present tense just before the date, after "next" or "upcoming" in its sentence (``the next meeting is
#: on``, ``next meeting:``) or a verb of a calendar (``the season ends on``, ``the polls open on Thursday,``).
PROSPECTIVE_CONTEXTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("deadline", re.compile(
        r"\b(?:by|before|until|till|through|thru|after|prior\s+to|no\s+later\s+than|not\s+later\s+than"
        r"|on\s+or\s+(?:before|after)|deadline(?:\s+(?:of|is))?|due(?:\s+(?:on|by))?|scheduled\s+(?:for|on)"
        r"|expected\s+(?:on|by)|set\s+for|between)"
        r"(?:\s+(?:the\s+)?(?:end|close|start)\s+of)?(?:\s+the)?(?:\s+[A-Za-z]+day,?)?\s*$", re.I)),
    ("range end", re.compile(r"\b(?:between|from)\b[^.;!?\n]{1,60}?(?:\b(?:and|to|through|until)\b|[-–])\s*$", re.I)),
    ("future or condition", re.compile(
        r"\b(?:will|shall|would|if|unless|whether|scheduled|expected|planned|slated|due\s+to|set\s+to|upcoming)\b", re.I)),
    ("question", re.compile(
        r"^(?:Will|Would|Is|Are|Can|Could|Should|Shall|Does|Do|Has|Have|Which|What|Who|When|How|By)\b[^?]*$", re.I)),
    ("calendar", re.compile(  # "the next meeting is on", "next meeting:", "the season ends on", "the polls open on"
        r"(?:\b(?:next|upcoming|coming)\b[^.;!?\n]{0,60}?(?:\b(?:is|are)\b(?:\s+(?:on|at|in|for|from))?|[:–-])"
        r"|\b(?:falls?|takes?\s+place|meets?|convenes?|reconvenes?|begins?|starts?|opens?|closes?|ends?|runs?"
        r"|(?:is|are)\s+held)(?:\s+(?:on|at|in|from))?)"
        r"(?:\s+the)?(?:\s+[A-Za-z]+day,?)?\s*$", re.I)),
)
_SENTENCE_BREAK = re.compile(r"[?!;]|(?<![A-Z])\.(?=\s)|\n| — ")
_ITEM_NUMBER = re.compile(r"^\s*\[\d+\]\s*")
_UNINDENTED_LINE = re.compile(r"\n(?![ \t])")

_YES_NO = (r"[\"“”'*]*\s*(?:yes|no|true|false)\b"
           r"(?!\s+(?:later|sooner|earlier|longer|more|matter|different|doubt|one|way|less|fewer)\b)")
#: Outcome statements: ``(name, words, starts, rest)``, matched on the lowercased text; see the module docstring
#: for when they count. ``words`` are groups of words of which the text must hold one of each group for the
#: pattern to be tried (a shortcut: without them no match is possible). The pattern is ``\b(?:starts...)rest``:
#: each start begins with a letter (see :func:`_statement_pattern`).
_STATEMENT_SOURCES: tuple[tuple[str, tuple[tuple[str, ...], ...], tuple[str, ...], str], ...] = (
    ("resolved YES/NO", (("resolved", "settled"),), ("resolved", "settled"),
     rf"(?:\s+(?:to|as|at|in\s+favou?r\s+of))?\s*[:=\-]?\s*{_YES_NO}"),
    ("closed YES/NO", (("closed",),), ("closed",), rf"(?:\s+(?:at|as|on))?\s+{_YES_NO}"),
    ("resolved positively", (("resolved",),), ("resolved",),
     r"\s+(?:positively|negatively|in\s+the\s+(?:affirmative|negative))\b"),
    ("already resolved", (("resolved",),),
     (r"already\s+(?:been\s+)?resolved", *(rf"{h}\s+(?:now\s+|since\s+)?(?:been\s+)?resolved" for h in ("has", "have", "had")),
      r"was\s+resolved"), r"\b"),
    ("resolved early", (("resolved", "closed", "settled", "ended"), ("early", "ahead", "before")),
     ("resolved", "closed", "settled", "ended"),
     r"\s+(?:early|ahead\s+of\s+(?:schedule|time|its|the)|before\s+(?:its|the)\s+(?:scheduled\s+)?(?:close|closing|end|deadline))\b"),
    ("the answer was", (("answer", "outcome", "result", "resolution"), ("was", "is", "turned out", "came out", "ended up")),
     ("the",),
     rf"\s+(?:final\s+|correct\s+|actual\s+)?(?:answer|outcome|result|resolution)\b[^.?!\n]{{0,60}}?"
     rf"\b(?:was|is|turned\s+out(?:\s+to\s+be)?|came\s+out(?:\s+as)?|ended\s+up(?:\s+as|\s+being)?)\s*[:\-]?\s*"
     rf"(?:{_YES_NO}|positive\b|negative\b)"),
    ("outcome YES", (("outcome",),), ("outcome",), r"\W{0,3}(?:yes|no|0|1)\b"),
    ("resolution: YES", (("resolution", "result"),), ("resolution", "result"), rf"\s*[:=]\s*{_YES_NO}"),
    ("paid out per share", (("paid", "redeemed", "settled"), ("share",)), (r"paid(?:\s+out)?", "redeemed", "settled"),
     rf"\b(?:[^.?!\n]|\.\d){{0,40}}?\bper\s+{_YES_NO}[\"“”'*]*\s+shares?\b"),
    ("ended at 100%", (("ended", "closed", "finished", "settled", "expired"), ("100", "0")),
     ("ended", "closed", "finished", "settled", "expired"),
     r"\s+(?:trading\s+)?(?:at\s+)?(?:100|0)(?:\.0+)?\s*(?:%|¢|cents?\b)"),
)


def _statement_pattern(starts: tuple[str, ...], rest: str, *, fast: bool = True) -> str:
    r"""The pattern ``\b(?:start|start...)rest``, written (``fast``) with the word boundary after each start's first
    letter ``c`` as ``c(?<!\wc)``: the same matches (before a letter, ``\b`` means no word character before it), but
    the pattern then begins with letters, which the regex engine looks for with a fast scan instead of trying every
    position of the text (10 times faster for one start, twice for several)."""
    if not fast:
        return rf"\b(?:{'|'.join(starts)}){rest}"
    return "(?:" + "|".join(rf"{a[0]}(?<!\w{a[0]}){a[1:]}" for a in starts) + ")" + rest


#: Outcome statements: ``(name, words, pattern)`` (:data:`_STATEMENT_SOURCES`, compiled).
OUTCOME_STATEMENTS: tuple[tuple[str, tuple[tuple[str, ...], ...], re.Pattern[str]], ...] = tuple(
    (name, words, re.compile(_statement_pattern(starts, rest))) for name, words, starts, rest in _STATEMENT_SOURCES)
#: A line that is only an outcome (matched on the lowercased text).
_OUTCOME_LINE = re.compile(r"^\W*(?:final\s+)?(?:outcome|resolution)\s*[:=]\s*[\"“'*]*\s*(?:yes|no|0|1|true|false)\b", re.M)
_MODAL_BEFORE = re.compile(
    r"\b(?:will|would|may|might|can|could|should|shall|must|cannot|to|not|never|yet)\b"
    r"(?:\s+(?:not|still|also|only|then|automatically|be|been|have|get|be\s+considered))*\s*$", re.I)
_CONDITION_BEFORE = re.compile(r"\b(?:if|unless|whether|in\s+case|provided|assuming|suppose)\b", re.I)
_CONDITION_AFTER = re.compile(r"^[\"”'*,]*\s*(?:if|unless|when|once|in\s+case|provided|only\s+if|should)\b", re.I)
#: An opinion before a statement: a forecaster's view, not a report.
_OPINION_BEFORE = re.compile(
    r"\b(?:(?:i|we)\s+(?:think|believe|expect|guess|suspect|predict|forecast|estimate|doubt)"
    r"|probably|likely|perhaps|maybe|arguably|presumably)\b", re.I)
_CLAUSE_BREAK = re.compile(r"[.;!?\n]")
_DEICTIC = r"\b(?:this|the)\s+(?:question|market)\b"
_NEAR = 100  # characters between a mention of the question and a statement about it


def evidence_dates(text: str) -> list[dt.date]:
    """Publication dates of the evidence items rendered in ``text`` (see the module docstring)."""
    out = []
    for rx in _EVIDENCE_DATE_RES:
        for m in rx.finditer(text):
            try:
                out.append(dt.date.fromisoformat(m.group(1)))
            except ValueError:
                continue
    return out


def knowable_dates(question: Question) -> set[dt.date]:
    """The dates ``question`` may show a forecaster (see "Dates a question may show" in the module docstring).

    Parameters
    ----------
    question : Question
        The full question record.

    Returns
    -------
    set of datetime.date
        Forecast date, scheduled close date, freeze date (when shown) and every reading of every date
        written in the visible text, background, resolution criteria, freeze explanation and URL.
    """
    visible = question.visible(show_crowd=True)
    out = {d for d in (visible.forecast_date, visible.scheduled_close_date, visible.freeze_date) if d is not None}
    for field in (visible.text, visible.background, visible.resolution_criteria, visible.freeze_value_explanation, visible.url):
        out.update(d for w in find_dates(field or "") for d in w.readings)
    return out


def _documents_before(text: str, forecast_date: dt.date) -> list[tuple[int, int]]:
    """Spans of the search results in ``text`` dated on or before ``forecast_date``: the header line and the
    indented lines below it."""
    spans = []
    for m in _SEARCH_RESULT.finditer(text):
        try:
            if dt.date.fromisoformat(m.group(1)) > forecast_date:
                continue
        except ValueError:
            continue
        end = _UNINDENTED_LINE.search(text, m.end())
        spans.append((m.start(), end.start() if end else len(text)))
    return spans


_CONTEXTS = dict(PROSPECTIVE_CONTEXTS)


def _prospective(doc: str, start: int, end: int) -> bool:
    """Whether the date at ``doc[start:end]`` is named prospectively (:data:`PROSPECTIVE_CONTEXTS`)."""
    contexts = _CONTEXTS
    before = doc[max(0, start - 120):start]
    if contexts["deadline"].search(before) or contexts["range end"].search(before):
        return True
    breaks = list(_SENTENCE_BREAK.finditer(doc, 0, start))
    sentence = _ITEM_NUMBER.sub("", doc[breaks[-1].end() if breaks else 0:start]).lstrip()
    if contexts["future or condition"].search(sentence[-150:]) or contexts["calendar"].search(sentence[-150:]):
        return True
    after = _SENTENCE_BREAK.search(doc, end)
    return after is not None and after.group() == "?" and bool(contexts["question"].match(sentence))


def _hidden_date_named(text: str, hidden: dt.date, knowable: set[dt.date], forecast_date: dt.date) -> bool:
    """Whether ``text`` writes the date ``hidden`` where it is hindsight (rules 1-3 of the module docstring)."""
    docs = None
    for w in find_dates(text):
        if hidden not in w.readings or knowable.intersection(w.readings):
            continue
        docs = _documents_before(text, forecast_date) if docs is None else docs
        doc = next(((s, e) for s, e in docs if s <= w.start < e), None)
        if doc is None or not _prospective(text[doc[0]:doc[1]], w.start - doc[0], w.end - doc[0]):
            return True
    return False


def _is_rule(text: str, start: int, end: int) -> bool:
    """Whether the phrase at ``text[start:end]`` is governed by a modal or a condition (a rule, not a statement), or
    follows an opinion (a view, not a report)."""
    breaks = list(_CLAUSE_BREAK.finditer(text, max(0, start - 80), start))
    clause = text[breaks[-1].end() if breaks else max(0, start - 80):start]
    return bool(_MODAL_BEFORE.search(clause) or _CONDITION_BEFORE.search(clause) or _OPINION_BEFORE.search(clause)
                or _CONDITION_AFTER.match(text[end:end + 30]))


#: Every word of :data:`OUTCOME_STATEMENTS`' shortcuts, each looked for once per text.
_STATEMENT_WORDS = tuple(dict.fromkeys(w for _, words, _ in OUTCOME_STATEMENTS for group in words for w in group))


def _statements(low: str) -> list[tuple[int, int]]:
    """Spans of the outcome statements in the lowercased text ``low`` that are not rules."""
    present = {w for w in _STATEMENT_WORDS if w in low}
    spans = [(m.start(), m.end()) for _, words, rx in OUTCOME_STATEMENTS
             if all(not present.isdisjoint(group) for group in words) for m in rx.finditer(low)]
    return [(s, e) for s, e in spans if not _is_rule(low, s, e)]


def _mention_patterns(question: Question) -> tuple[re.Pattern[str] | None, re.Pattern[str]]:
    """How a text names ``question`` (id, source id, first 120 characters of its text, URL), and how it names or
    points at it ("this question", "the market", ...). Both match the lowercased text."""
    ids = [a for a in {question.id, question.source_question_id or ""} if a.strip()]
    parts = [rf"(?<!\w){re.escape(lowercase(a))}(?!\w)" for a in ids]
    if question.text.strip():
        parts.append(rf"(?<!\w){re.escape(lowercase(question.text.strip()[:120]))}")
    if question.url and len(question.url) >= 12:
        parts.append(re.escape(lowercase(question.url)))
    return (re.compile("|".join(parts)) if parts else None), re.compile("|".join([*parts, _DEICTIC]))


def _about_question(low: str, statements: list[tuple[int, int]], names: re.Pattern[str] | None, mentions: re.Pattern[str]) -> bool:
    """Whether a statement follows (or holds) a mention of the question within :data:`_NEAR` characters, or
    precedes its name on the same line."""
    for m in mentions.finditer(low):
        if any(m.start() < e and s - m.end() <= _NEAR for s, e in statements):
            return True
    if names is not None:
        for _, e in statements:
            line_end = low.find("\n", e)
            if names.search(low, e, min(e + _NEAR, line_end if line_end >= 0 else len(low))):
                return True
    return False


def _shown_statements(question: Question) -> list[re.Pattern[str]]:
    """Patterns of the sentences (up to the statement) in which the visible question itself states an outcome."""
    visible = question.visible()
    out = []
    for field in (visible.text, visible.background, visible.resolution_criteria):
        text = lowercase(" ".join(field.split()))
        for s, e in _statements(text):
            breaks = list(_CLAUSE_BREAK.finditer(text, 0, s))
            words = text[breaks[-1].end() if breaks else 0:e].split()
            out.append(re.compile(r"\s+".join(re.escape(w) for w in words)))
    return out


def audit_prompts(prompts: Iterable[str], question: Question, *, cutoff_date: dt.date | None = None) -> dict[str, int]:
    """Scan prompt texts for hindsight about ``question`` (harness-side facts: outcome, actual resolution date).

    Parameters
    ----------
    prompts : iterable of str
        Each prompt as one text (its messages joined).
    question : Question
        The full question record.
    cutoff_date : date, optional
        The date the run capped the question's evidence at (default its forecast date); evidence dated after it
        counts in ``evidence_dated_after_cutoff``.

    Returns
    -------
    dict of str to int
        ``prompts_scanned``, ``evidence_dated_after_cutoff``, ``hindsight_resolution_date``,
        ``hindsight_outcome``: counts of prompts (evidence items for the second; see the module docstring).
    """
    cutoff = question.search_cutoff(cutoff_date)
    knowable = knowable_dates(question)
    rd = question.resolution_date
    hidden = rd if rd is not None and rd not in knowable else None
    hidden_horizon = None if hidden is None else _horizon_pattern((hidden - question.forecast_date).days)
    shown = _shown_statements(question)
    mention_patterns = None  # compiled when a prompt holds a statement
    counts = {"prompts_scanned": 0, "evidence_dated_after_cutoff": 0, "hindsight_resolution_date": 0, "hindsight_outcome": 0}
    for text in prompts:
        counts["prompts_scanned"] += 1
        counts["evidence_dated_after_cutoff"] += sum(d > cutoff for d in evidence_dates(text))
        if hidden is not None and (_hidden_date_named(text, hidden, knowable, question.forecast_date)
                                   or hidden_horizon.search(text)):
            counts["hindsight_resolution_date"] += 1
        low = lowercase(text)
        for rx in shown:  # a statement the question itself shows is blanked out
            low = rx.sub(lambda m: " " * len(m.group()), low)
        if ("outcome" in low or "resolution" in low) and any(
                not _is_rule(low, m.start(), m.end()) for m in _OUTCOME_LINE.finditer(low)):
            counts["hindsight_outcome"] += 1
            continue
        statements = _statements(low)
        if statements:
            mention_patterns = mention_patterns or _mention_patterns(question)
            counts["hindsight_outcome"] += _about_question(low, statements, *mention_patterns)
    return counts


@functools.lru_cache(maxsize=1024)
def _horizon_pattern(days: int) -> re.Pattern[str]:
    """A horizon of ``days`` days written out: ``horizon 39 days``, ``horizon_days: 39``, ``a 39-day horizon``, ``39 days
    after the forecast date`` (compiled once per number of days)."""
    return re.compile(
        rf"\bhorizon\W{{1,3}}{days}\s*days?\b|\bhorizon[ _]days\W{{1,3}}{days}\b(?!\.\d)"
        rf"|\b{days}[- ]days?\s+(?:horizon\b|(?:after|from|past|since)\s+the\s+(?:forecast|cutoff)\s+date)", re.I)


def leakage_audit(trace: PipelineTrace, question: Question, *, cutoff_date: dt.date | None = None) -> dict[str, int]:
    """The audit counts of one question (keys :data:`AUDIT_KEYS`), from its trace and its full record;
    ``cutoff_date`` is the run's evidence cap of the question (:func:`audit_prompts`; default its forecast date).

    Raises
    ------
    ValueError
        If ``trace`` is not a trace of ``question`` (ids differ), or ``cutoff_date`` is after its forecast date.
    """
    if trace.question.id != question.id:
        raise ValueError(f"trace of {trace.question.id!r} audited against question {question.id!r}")
    prompts = ["\n\n".join(m.content for m in call.messages) for call in trace.recorded_calls if call.messages]
    counts = audit_prompts(prompts, question, cutoff_date=cutoff_date)
    dropped = sum(f.n_evidence_dropped for f in trace.forecasts)
    in_prompt = sum(f.n_evidence_in_prompt for f in trace.forecasts)
    if trace.supervisor is not None:
        dropped += sum(o.dropped_after_cutoff + o.dropped_undated for o in trace.supervisor.search_outcomes)
        in_prompt += len(shown_results(trace.supervisor.search_outcomes))  # as the decision prompt numbers them
    findings = counts["evidence_dated_after_cutoff"] + counts["hindsight_resolution_date"] + counts["hindsight_outcome"]
    out = {"evidence_in_prompt": in_prompt, "dropped_by_cutoff_guard": dropped, **counts, "findings": findings}
    return {k: int(out[k]) for k in AUDIT_KEYS}
