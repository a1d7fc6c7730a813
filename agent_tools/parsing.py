"""Read a forecast out of a model's answer: the intended JSON object and a validated probability.

Models wrap JSON in code fences, put reasoning before it (``<think>…</think>``), leave trailing
commas, or write braces and backticks inside strings. :func:`extract_json_objects` is a real scanner:
it tries :meth:`json.JSONDecoder.raw_decode` at each top-level ``{`` (so braces and backticks inside
strings are handled by the JSON parser itself), and only when that fails repairs the balanced span
(string-aware) by removing trailing commas and quoting bare percentages (``70%`` -> ``"70%"``), or
reads it as a Python literal (single quotes, True/False/None). Objects inside reasoning channels are
never used: the answer is what follows them. :data:`REASONING_CHANNELS` is the table of every channel the
parser knows (``<think>`` and its kin, Mistral's ``[THINK]``, gpt-oss's harmony ``<|channel|>analysis``,
Seed-OSS's ``<seed:think>``, Kimi, Command A, Granite, Apriel...); a channel cut off before its close is
reasoning to the end, so an answer cut off in its reasoning is an error, never the draft's value.

Never a value it cannot stand behind: one answer, or a :class:`ForecastParseError` saying why.

* An object that cannot be read even after repair is skipped *as a whole*: the scanner never looks
  inside it, so an object quoted in a broken answer's string (``"rationale": "member 2 wrote
  {"p_yes_percent": 90}"`` with unescaped quotes) is not read as the answer. An unclosed object ends
  the scan. If nothing readable is left, :class:`ForecastParseError` is raised.
* The *candidates* are the readable top-level objects of the answer part that carry the answer's keys
  (:func:`parse_forecast`: the probability field; :func:`parse_json`: its ``required_keys``, every object
  without them). They must be one answer. Beside a *broken* candidate, a readable one may be a format
  example, a draft or a quoted object, so a readable candidate is refused when the answer also has

  - an object that never closes (a final answer cut off after a format example, a revision cut off
    after a first answer), or
  - an object that cannot be read and gives the probability field (a required key) a value: an answer
    broken by unescaped quotes, before or after an example or a draft; a key in any quotes (typographic
    ``“p_yes”``, ``‘p_yes’``, guillemets ``«p_yes»``, CJK, full-width, backticks) gives a value, or
  - an object that ends early: the text after it, before the next object, gives the probability field
    (a required key) a value in quotes (``{"rationale": "the "x} y", "p_yes_percent": 20}``: the ``}`` in
    the broken string closed the span, and the answer's key follows it). A template's placeholder
    (``"p_yes_percent": <integer 0-100>``, ``...``, ``null``) is no value: a model that echoes the
    prompt's template and then answers is read.

  Prose braces that give no such key (``{Yes, No}``) are not candidates. Drafts inside reasoning blocks
  are removed before all this (:func:`strip_reasoning`), so a readable final answer after a
  ``<think>`` draft is read, and a broken one is an error, never the draft's value.
* A key given twice with different values (``"p_yes_percent": 90, ... "p_yes_percent": 20``) in a
  candidate, at any depth (an evidence item's ``source``, the ``confidence``), is an error: RFC 8259
  (section 4) calls such an object unpredictable, and :func:`json.loads` silently keeps the last value.
  The same key with the same value is read.
* :func:`parse_forecast` reads the probability of every candidate. If they disagree (two fields of one
  object such as ``p_yes: 0.35`` and ``p_yes_percent: 40``, or several objects with different values),
  it raises; equal values are one answer (the last object gives the rationale). :func:`parse_json`
  requires its candidates to be equal objects.
* Values outside [0, 1] (e.g. 1.198, 12489), NaN, infinities, booleans and non-numeric strings raise
  :class:`ForecastParseError` carrying ``raw_text``, ``field`` and ``value``. Accepted forms: a number in
  [0, 1]; a percentage string (``"35.4%"`` -> 0.354); a ``*_percent`` field in [0, 100]
  (``p_yes_percent: 35`` -> 0.35, ``35.4`` -> 0.354), the form the grammar-constrained schema asks for;
  there a non-integer in [0, 1] (``0.35``: a fraction or 0.35 %?) is ambiguous and rejected.
"""

from __future__ import annotations

import ast
import dataclasses
import datetime as dt
import functools
import json
import re
from dataclasses import dataclass, field as dc_field
from collections.abc import Sequence
from typing import Any

import numpy as np

from agent_schemas import EvidenceItem, ForecastParseError, SearchResult
from agent_schemas.kinds import BinarySpec, KindSpec, kind_of
from agent_schemas.kinds.values import parse_probability, probability_schema  # noqa: F401 - re-exported: the binary kind owns them
from agent_tools.provenance import source_url

@dataclass(frozen=True)
class ReasoningChannel:
    """One way a model marks text that is reasoning, not its answer (a row of :data:`REASONING_CHANNELS`).

    Attributes
    ----------
    name : str
        Short name (the models that write it).
    opens, closes : str
        The markers as the model writes them (documentation and tests).
    open_re, close_re : re.Pattern
        What :func:`strip_reasoning` matches (variants of case, spacing and attributes included).
    opened_by_template : bool
        Whether a chat template may write the opening marker into the prompt, so that the answer holds only the
        close: then everything before the last close is reasoning. False where a lone close follows an answer
        (harmony's ``<|end|>`` also ends the final message).
    at_start : bool
        Whether the opening marker counts only at the very start of the answer (markers that are ordinary words).
    needs : str or None
        A character that both patterns match only literally (``<`` of a tag): a text without it holds neither
        marker, and :func:`strip_reasoning` skips the channel's scans. None when there is no such character.
    """

    name: str
    opens: str
    closes: str
    open_re: re.Pattern[str]
    close_re: re.Pattern[str]
    opened_by_template: bool = True
    at_start: bool = False
    needs: str | None = None


def _tag_channel(tag: str, name: str) -> ReasoningChannel:
    """An XML-like tag pair ``<tag>…</tag>``: any case, spaces inside the brackets, attributes on the opening tag;
    ``tag`` may carry a namespace (``seed:think``)."""
    t = re.escape(tag).replace(":", r"\s*:\s*")
    return ReasoningChannel(name, f"<{tag}>", f"</{tag}>", re.compile(rf"<\s*{t}(?![\w:-])[^>]*>", re.I),
                            re.compile(rf"<\s*/\s*{t}\s*>", re.I), needs="<")


def _token_channel(name: str, opens: str, closes: str, *, open_re: str | None = None, close_re: str | None = None,
                   flags: int = re.I, **kw: Any) -> ReasoningChannel:
    """A channel of special tokens or fixed phrases (matched literally unless a pattern is given)."""
    return ReasoningChannel(name, opens, closes, re.compile(open_re or re.escape(opens), flags),
                            re.compile(close_re or re.escape(closes), flags), **kw)


#: Every reasoning channel the parser may meet; the text inside one is never an answer (:func:`strip_reasoning`).
#: A new model family's channel is a row here (and is then tested by tests/tools/test_parsing_channels.py).
REASONING_CHANNELS: tuple[ReasoningChannel, ...] = (
    # DeepSeek-R1, Qwen3, QwQ, GLM-4.5, Phi-4-reasoning, Nemotron, MiniMax-M1, Hunyuan, Magistral 2506: <think>
    *(_tag_channel(tag, f"<{tag}>") for tag in (
        "think", "thinking", "thought",  # thought: EXAONE Deep
        "thoughts", "reasoning", "reflection", "scratchpad", "analysis")),
    _tag_channel("seed:think", "ByteDance Seed-OSS <seed:think>"),
    _token_channel("Mistral Magistral [THINK]", "[THINK]", "[/THINK]",
                   open_re=r"\[\s*THINK\s*\]", close_re=r"\[\s*/\s*THINK\s*\]", needs="["),
    # gpt-oss (OpenAI harmony format): a channel other than "final" (analysis, commentary) is not the answer; it
    # ends with <|end|> (or <|call|> for a tool call). The final channel's header stays: it has no braces.
    _token_channel("gpt-oss harmony analysis/commentary", "<|channel|>analysis<|message|>", "<|end|>",
                   open_re=r"<\|channel\|>\s*(?!final\b)\w+[^<]*(?:<\|constrain\|>[^<]*)?<\|message\|>",
                   close_re=r"<\|(?:end|call)\|>", opened_by_template=False, needs="<"),
    # gpt-oss served with special tokens skipped: "analysisWe need ...assistantfinal{...}"
    _token_channel("gpt-oss harmony, special tokens skipped", "analysisWe need to answer. ", "assistantfinal",
                   open_re=r"\A\s*analysis(?=[A-Z])", close_re=r"assistantfinal", flags=0, at_start=True),
    _token_channel("Kimi ◁think▷", "◁think▷", "◁/think▷", needs="◁"),
    _token_channel("Cohere Command A reasoning", "<|START_THINKING|>", "<|END_THINKING|>", needs="<"),
    _token_channel("OpenThoughts / Sky-T1", "<|begin_of_thought|>", "<|end_of_thought|>", needs="<"),
    _token_channel("IBM Granite 3.2 thinking", "Here is my thought process:", "Here is my response:",
                   open_re=r"\A\s*Here is my thought process:", opened_by_template=False, at_start=True),
    _token_channel("ServiceNow Apriel", "Here are my reasoning steps:", "[BEGIN FINAL RESPONSE]",
                   open_re=r"\A\s*Here are my reasoning steps:", at_start=True),
)


# --- JSON extraction ------------------------------------------------------------------------------
def strip_reasoning(text: str) -> str:
    """Return the answer part of ``text``: every reasoning channel of :data:`REASONING_CHANNELS` removed.

    For each channel in turn: complete blocks (opening marker to the next closing one) are removed; if a
    closing marker remains without its opening one and the channel's opening marker may be written by the chat
    template, everything before the last one is dropped; if an opening marker remains unclosed (reasoning cut
    off before the answer), everything from it on is dropped, so a draft is never an answer.
    """
    s = text
    for ch in REASONING_CHANNELS:
        s = _strip_channel(s, ch)
    return s


def _strip_channel(s: str, ch: ReasoningChannel) -> str:
    """``s`` without the reasoning of channel ``ch`` (see :func:`strip_reasoning`)."""
    if ch.needs is not None and ch.needs not in s:  # neither marker can be in it
        return s
    out, pos, cut = [], 0, False
    while (m := ch.open_re.search(s, pos)) is not None:
        out.append(s[pos:m.start()])
        close = ch.close_re.search(s, m.end())
        if close is None:  # cut off: the rest is reasoning
            cut = True
            break
        pos = close.end()
        if ch.at_start:
            break
    if not cut:
        out.append(s[pos:])
    s = "\n".join(out)
    if ch.opened_by_template:
        closes = list(ch.close_re.finditer(s))
        if closes:
            s = s[closes[-1].end():]
    return s


def _segments(text: str) -> list[tuple[int, int, bool]]:
    """``(start, end, quoted)`` spans that cover ``text``: quoted strings (``"..."`` or ``'...'``, their quotes
    and backslash escapes included; an unclosed one runs to the end) and the unquoted text between them.

    The one string-aware scan of this module: bracket matching and the repairs only look at unquoted spans.
    """
    spans: list[tuple[int, int, bool]] = []
    quote: str | None = None
    seg = i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                spans.append((seg, i + 1, True))
                seg, quote = i + 1, None
        elif c in "\"'":
            if i > seg:
                spans.append((seg, i, False))
            seg, quote = i, c
        i += 1
    if seg < n:
        spans.append((seg, n, quote is not None))
    return spans


def _balanced_end(text: str, start: int) -> int | None:
    """Index after the bracket closing the one at ``start``, skipping quoted strings; None if unbalanced."""
    depth = 0
    for a, b, quoted in _segments(text[start:]):
        if quoted:
            continue
        for k in range(a, b):
            c = text[start + k]
            if c in "{[":
                depth += 1
            elif c in "}]":
                depth -= 1
                if depth == 0:
                    return start + k + 1
    return None


_TRAILING_COMMA_RE = re.compile(r",(\s*)(?=[}\]])")
_BARE_PERCENT_RE = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?)\s*%")


def _repair(s: str) -> str:
    """Outside strings: drop commas that directly precede ``}`` or ``]``, and write a bare percentage (``70%``,
    ``35.5 %``) as the string ``"70%"``. ``s`` is a balanced span (it ends with its closing bracket)."""
    spans = _segments(s)
    out = []
    for a, b, quoted in spans:
        part = s[a:b]
        if not quoted:
            part = _TRAILING_COMMA_RE.sub(r"\1", part)
            part = _BARE_PERCENT_RE.sub(r'"\1%"', part)
        out.append(part)
    return "".join(out)


_UNREADABLE = object()


@dataclass(frozen=True)
class _Span:
    """One top-level ``{`` of an answer and what it reads as.

    ``text`` runs to the span's closing brace, or to the end of the answer when it never closes (``closed``
    False). ``value`` is the decoded value, ``_UNREADABLE`` when the span cannot be read even after repair (a
    key given twice keeps its last value there, as in :func:`json.loads`); ``duplicates`` lists, at any depth,
    each key given more than once with different values, as ``(key, its values in order)``. ``tail`` is the
    text after a closed span up to the next span (or the end): where an answer goes on when a ``}`` inside its
    broken string closed its span early.
    """

    text: str
    value: Any = _UNREADABLE
    closed: bool = True
    duplicates: tuple[tuple[Any, tuple[Any, ...]], ...] = ()
    tail: str = ""

    @property
    def is_object(self) -> bool:
        return isinstance(self.value, dict)


def _dict_noting_duplicates(pairs: Any, found: list[tuple[Any, tuple[Any, ...]]]) -> dict[Any, Any]:
    """The dict of the ``(key, value)`` ``pairs`` (a repeated key keeps its last value, as :func:`json.loads`
    does); appends to ``found`` each key given more than once with different values. An ``object_pairs_hook``."""
    obj: dict[Any, Any] = {}
    values: dict[Any, list[Any]] = {}
    for key, value in pairs:
        values.setdefault(key, []).append(value)
        obj[key] = value
    found.extend((key, tuple(vs)) for key, vs in values.items() if any(v != vs[0] for v in vs[1:]))
    return obj


def _literal_eval(s: str) -> tuple[Any, list[tuple[Any, tuple[Any, ...]]]]:
    """``s`` read as a Python literal (single quotes, True/False/None) and its keys given twice with different values.

    Raises what :func:`ast.parse` and :func:`ast.literal_eval` raise."""
    tree = ast.parse(s, mode="eval")
    value = ast.literal_eval(tree)
    found: list[tuple[Any, tuple[Any, ...]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            _dict_noting_duplicates(((ast.literal_eval(k), ast.literal_eval(v)) for k, v in zip(node.keys, node.values)), found)
    return value, found


def _decode_at(text: str, i: int) -> _Span:
    """The span of the bracket at ``i``: read as JSON (raw newlines and tabs inside strings are read, not
    rejected), else repaired (:func:`_repair`) and read as JSON or as a Python literal; unreadable if none works."""
    found: list[tuple[Any, tuple[Any, ...]]] = []
    hook = functools.partial(_dict_noting_duplicates, found=found)
    try:
        value, end = json.JSONDecoder(strict=False, object_pairs_hook=hook).raw_decode(text, i)
        return _Span(text[i:end], value, duplicates=tuple(found))
    except ValueError:  # JSONDecodeError, or an integer past Python's 4,300-digit limit
        found.clear()
    end = _balanced_end(text, i)
    if end is None:  # never closes: everything after it is inside it
        return _Span(text[i:], closed=False)
    repaired = _repair(text[i:end])
    try:
        return _Span(text[i:end], json.loads(repaired, object_pairs_hook=hook), duplicates=tuple(found))
    except ValueError:
        pass
    try:
        value, duplicates = _literal_eval(repaired)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _Span(text[i:end])
    return _Span(text[i:end], value, duplicates=tuple(duplicates))


def _scan(text: str) -> list[_Span]:
    """The top-level spans of ``text`` in order, each with its tail: each ``{`` outside the spans before it. A span
    that never closes is the last (everything after it is inside it)."""
    spans: list[_Span] = []
    i = text.find("{")
    while i >= 0:
        span = _decode_at(text, i)
        if not span.closed:
            spans.append(span)
            break
        end = i + len(span.text)
        i = text.find("{", end)
        spans.append(dataclasses.replace(span, tail=text[end:i if i >= 0 else len(text)]))
    return spans


def extract_json_objects(text: str) -> list[dict[str, Any]]:
    """All readable top-level JSON objects in ``text``, in order of appearance.

    Scans each top-level ``{`` with :meth:`json.JSONDecoder.raw_decode`; a read object is skipped over
    as a whole (objects nested in it are not listed separately). A span that fails is repaired
    (trailing commas, bare percentages) or read as a Python literal; a span that still cannot be read
    is skipped *as a whole* (nothing inside it is read), and an object that never closes ends the scan.
    An object in which a key is given twice with different values, at any depth, cannot be read as one
    object and is skipped too (the same key with the same value twice is read). Reasoning blocks are
    *not* removed here (see :func:`strip_reasoning`).

    Examples
    --------
    >>> extract_json_objects('{"a": "b {"c": 1}", "d": 2} then {"e": 3} {"f": 1, "f": 2}')
    [{'e': 3}]
    """
    return [s.value for s in _scan(text) if s.is_object and not s.duplicates]


#: What an answer template shows in place of a value (``"p_yes_percent": <integer 0-100>``, ``...``, null) or
#: nothing at all: a span that cannot be read and gives a key only such a value is a template, not an answer.
_PLACEHOLDER = r"(?:<|\.\.\.|…|null\b|None\b|[,}\]]|$)"

#: Every quote a model may put around a key: ASCII, backtick, typographic (“ ” ‘ ’ „ ‚), guillemets (« » ‹ ›),
#: CJK corner brackets and full-width quotes. A key in any of them gives a value (an answer that cannot be read).
_KEY_QUOTES = "\"'`“”‘’„‚‟‛«»‹›「」『』＂＇"


def _gives_a_value(span: str, keys: tuple[str, ...], *, quoted: bool = False) -> bool:
    """Whether ``span`` (an unreadable span, or the text after a span) writes one of ``keys`` as a key followed by
    a value that is not a placeholder: in any quotes (:data:`_KEY_QUOTES`), or bare unless ``quoted``."""
    names = "|".join(re.escape(k) for k in keys)
    q = re.escape(_KEY_QUOTES)
    key = rf"[{q}](?:{names})[{q}]" if quoted else rf"(?<!\w)[{q}]?(?:{names})[{q}]?"
    return re.search(rf"{key}\s*:(?!\s*{_PLACEHOLDER})", span) is not None


def _show(value: Any) -> str:
    """A value as JSON text, cut to 60 characters (for messages)."""
    s = json.dumps(value, ensure_ascii=False, default=repr)
    return s if len(s) <= 60 else s[:57] + "..."


def _candidates(text: Any, keys: tuple[str, ...]) -> list[dict[str, Any]]:
    """The candidate answers of ``text``: its readable top-level objects, outside reasoning blocks, that have
    one of ``keys`` (every object when ``keys`` is empty), in order; at least one, or an error.

    Raises
    ------
    ForecastParseError
        ``field="json"`` when ``text`` is not a string, has no object, or no object that can be read (also
        when the only objects giving one of ``keys`` a value cannot be read); ``field=keys[0]``,
        ``value=None`` when objects exist but none has a key; ``field=<the key>``, ``value=<its values>``
        when a candidate gives a key (at any depth) twice with different values; ``field=keys[0]`` (or
        ``"json"``), ``value=<the span, 200 characters>`` when a readable candidate has a *broken* one
        beside it: a span that never closes, or one that cannot be read and gives one of ``keys`` a value
        that is not a placeholder (any unreadable span when ``keys`` is empty).
    """
    if not isinstance(text, str):
        raise ForecastParseError(f"answer must be text, got {type(text).__name__}", raw_text=repr(text), field="json", value=text)
    answer = strip_reasoning(text)
    spans = _scan(answer)
    candidates = [s for s in spans if s.is_object and (not keys or any(k in s.value for k in keys))]
    for s in candidates:
        if s.duplicates:
            key, values = s.duplicates[0]
            raise ForecastParseError(
                f"the answer's JSON object gives {key!r} {len(values)} times with different values "
                f"({', '.join(_show(v) for v in values)}): refusing to pick one", raw_text=text, field=str(key), value=list(values))
    # a span closed early by a } inside its broken string: the answer's key and value follow it, outside any span
    cut_early = [s for s in spans if keys and s.closed and _gives_a_value(s.tail, keys, quoted=True)]
    broken = [s for s in spans if s.value is _UNREADABLE and (not s.closed or not keys or _gives_a_value(s.text, keys))
              or s in cut_early]
    if candidates and broken:
        s = broken[0]
        shown = (s.text + s.tail if s in cut_early else s.text)[:200]
        what = f" with {' or '.join(keys)}" if keys and s.closed else ""
        problem = ("could not be read (unescaped quotes?) besides" if s.closed and s not in cut_early
                   else "ends early (a } in a string?), the text after it giving a value, besides" if s.closed
                   else "never closes (cut off, or a revision?) after")
        raise ForecastParseError(
            f"the answer has a JSON object{what} that {problem} {len(candidates)} readable one{'s' if len(candidates) > 1 else ''}: "
            f"a readable one may be an example, a draft or a quoted object, so none is taken: {shown!r}",
            raw_text=text, field=keys[0] if keys else "json", value=shown)
    if candidates:
        return [s.value for s in candidates]
    where = " after the reasoning block" if answer != text else ""
    if broken or (not any(s.is_object for s in spans) and any(s.value is _UNREADABLE for s in spans)):
        raise ForecastParseError(
            f"the answer's JSON object{where} could not be read (unescaped quotes, unclosed braces?); "
            f"nothing inside it is used: {text[:200]!r}", raw_text=text, field="json")
    if not any(s.is_object for s in spans):
        raise ForecastParseError(f"no JSON object found in the answer{where}: {text[:200]!r}", raw_text=text, field="json")
    raise ForecastParseError(
        f"no JSON object in the answer has any of {list(keys)}: {text[:200]!r}",
        raw_text=text, field=keys[0], value=None,
    )


def parse_json(text: str, *, required_keys: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The one JSON object a model answer gives.

    The candidates are the readable top-level objects of the answer part (after reasoning blocks) that have
    one of ``required_keys`` (every object when none are given). They must be one answer: the same object
    (written once, or repeated), no key given twice with different values, and no broken candidate beside
    them (an object that never closes, or one that cannot be read and gives a required key a value: the
    readable one may then be an example, a draft or a quoted object). See the module docstring.

    Parameters
    ----------
    text : str
        The full answer (may contain code fences, reasoning tags, prose).
    required_keys : tuple of str, optional
        When given, only objects containing one of these keys are candidates.

    Returns
    -------
    dict
        The answer's object.

    Raises
    ------
    ForecastParseError
        ``field="json"`` when no object can be read outside reasoning blocks; ``field=<first required key>``
        (``"json"`` without required keys) when objects exist but none has a required key (``value=None``),
        when the candidates differ (``value`` the list of them) or when a broken candidate is beside them
        (``value`` its text); ``field=<the key>`` when a key is given twice with different values.

    Examples
    --------
    >>> parse_json('<think>maybe {"p_yes": 0.9}</think> ```json\\n{"p_yes": 0.3,}\\n```')
    {'p_yes': 0.3}
    >>> parse_json('{"queries": ["a"]} {"tokens": 12}', required_keys=("queries",))
    {'queries': ['a']}
    """
    keys = tuple(required_keys or ())
    objs = _candidates(text, keys)
    if any(o != objs[-1] for o in objs):
        what = f" with {' or '.join(keys)}" if keys else ""
        raise ForecastParseError(f"the answer gives {len(objs)} JSON objects{what} that differ: refusing to pick one: {text[:200]!r}",
                                 raw_text=text, field=keys[0] if keys else "json", value=objs)
    return objs[-1]


# --- probabilities --------------------------------------------------------------------------------
# --- forecasts --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ParsedForecast:
    """A forecast read from a model answer.

    Attributes
    ----------
    p_yes : float or None
        Probability of Yes in [0, 1] (a binary question); None for the other kinds.
    distribution : list of float or None
        The forecast of a non-binary question in its kind's form (:mod:`agent_schemas.kinds`); None for binary.
    rationale : str
        The answer's rationale ("" when missing).
    key_evidence : list of EvidenceItem
        Claims with source URL and publication date (None when missing or malformed).
    data : dict
        The whole JSON object the forecast was read from (extra fields for debate / supervisor).
    """

    p_yes: float | None = None
    rationale: str = ""
    key_evidence: list[EvidenceItem] = dc_field(default_factory=list)
    data: dict[str, Any] = dc_field(default_factory=dict)
    distribution: list[float] | None = None

    def forecast(self, spec: KindSpec) -> np.ndarray:
        """The forecast vector for a question of ``spec`` (``[p_yes]`` for binary)."""
        return kind_of(spec).forecast_of(self)

    @property
    def confidence(self) -> str | None:
        """The answer's stated ``confidence``: "high", "medium" or "low" (any case, spaces ignored), or None
        when the field is missing or holds another value. Lenient on purpose: a member's confidence is
        auxiliary, so an unreadable one is recorded as not given and never fails the forecast."""
        value = str(self.data.get("confidence") or "").strip().lower()
        return value if value in CONFIDENCE_VALUES else None


def _evidence_date(value: Any) -> dt.date | None:
    if not isinstance(value, str) or not value.strip():
        return None
    from agent_tools.search_base import parse_published  # noqa: PLC0415 - one date rule (UTC) for all

    return parse_published(value)


def _str_or_none(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    s = value.strip()
    return None if s.lower() in ("", "null", "none", "n/a") else s


def parse_evidence(value: Any, sources: Sequence[SearchResult | EvidenceItem] = ()) -> list[EvidenceItem]:
    """Read a ``key_evidence`` value leniently into :class:`EvidenceItem` objects.

    Items may be objects ``{claim, source | source_url | url, published, title}`` or plain strings (claims).
    ``source`` is the number ``[n]`` of the cited item in the numbered list ``sources`` the model was shown
    (1-based; 0, a number outside ``1..len(sources)`` or no ``sources`` cite nothing); it becomes that
    source's URL (:func:`agent_tools.provenance.source_url`), date and title, so a cited number never carries
    a URL or date the model wrote. A URL given as ``source_url`` or ``url`` is kept when no number cites a
    source (answers of providers without a grammar; the schema asks for a number only), with the date the
    model stated until :func:`agent_tools.provenance.attach_provenance` replaces it by a retrieved source's
    (or None). A malformed or missing ``published``
    becomes None (an evidence date is not the probability, so it does not fail the forecast); items without
    a claim are skipped.

    >>> from agent_schemas import SearchResult
    >>> shown = [SearchResult(title="T", url="https://a.org/1", snippet="S", source="news")]
    >>> [e.source_url for e in parse_evidence([{"claim": "c", "source": 1}, {"claim": "d", "source": 2}], shown)]
    ['https://a.org/1', None]
    """
    if value is None:
        return []
    if isinstance(value, (dict, str)):
        value = [value]
    if not isinstance(value, list):
        return []
    items: list[EvidenceItem] = []
    for item in value:
        if isinstance(item, str):
            if item.strip():
                items.append(EvidenceItem(claim=item.strip()))
            continue
        if not isinstance(item, dict):
            continue
        claim = item.get("claim", item.get("text", item.get("evidence")))
        if claim is None or isinstance(claim, (dict, list)):
            continue
        claim = str(claim).strip()
        if not claim:
            continue
        cited = _cited_source(item.get("source"), sources)
        if cited is not None:  # the numbered source's own URL, date and title (several sources may share a URL)
            items.append(EvidenceItem(claim=claim, source_url=source_url(cited), published=cited.published,
                                      title=_str_or_none(item.get("title")) or cited.title))
            continue
        items.append(EvidenceItem(
            claim=claim,
            source_url=_str_or_none(item.get("source_url")) or _str_or_none(item.get("url")),
            published=_evidence_date(item.get("published", item.get("date"))),
            title=_str_or_none(item.get("title")),
        ))
    return items


def _cited_source(number: Any, sources: Sequence[SearchResult | EvidenceItem]) -> SearchResult | EvidenceItem | None:
    """The item of ``sources`` that the 1-based ``number`` cites (an int, or a string such as "2" or "[2]"),
    or None for 0, anything out of range or unreadable."""
    if isinstance(number, str):
        digits = number.strip().strip("[]").strip()
        # ASCII digits only ("²" and "١" are isdigit()), and short: int() refuses 4,300 digits
        number = int(digits) if digits.isascii() and digits.isdigit() and len(digits) <= 9 else None
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= len(sources):
        return None
    return sources[number - 1]


def parse_forecast(text: str, *, prob_field: str = "p_yes",
                   sources: Sequence[SearchResult | EvidenceItem] = ()) -> ParsedForecast:
    """Parse a forecaster's answer into a :class:`ParsedForecast`.

    Reads every top-level JSON object of the answer part (after reasoning blocks) that has
    ``prob_field`` or ``<prob_field>_percent`` and its probability with :func:`parse_probability`.
    They must agree (within half a percentage point): one answer given twice is fine, two different
    answers are an error, never a choice. The last such object gives rationale and evidence. An answer
    that might be another than the one read is refused too (the module docstring has the rules): a key
    given twice with different values, or a readable object beside one that never closes or cannot be
    read and gives the probability a value (the readable one may be a format example, a draft or a
    quoted object). A draft inside a reasoning block is never read.

    Parameters
    ----------
    text : str
        The full model answer.
    prob_field : str
        Name of the probability field (``"p_yes"``); ``"<prob_field>_percent"`` in [0, 100] is also accepted.
    sources : sequence of SearchResult or EvidenceItem
        The numbered sources the prompt showed, in order: evidence citing ``"source": n`` gets the URL of
        the n-th (:func:`parse_evidence`).

    Raises
    ------
    ForecastParseError
        No readable JSON object (``field="json"``), no probability field (``field=prob_field``,
        ``value=None``), an invalid probability (see :func:`parse_probability`), probabilities that
        disagree (``field=prob_field``, ``value`` the list of values), a key given twice with different
        values (``field`` the key, ``value`` its values), or a broken candidate beside a readable one
        (``field=prob_field``, ``value`` the broken object's first 200 characters).

    Examples
    --------
    >>> parse_forecast('{"p_yes_percent": 35, "rationale": "base rate", "key_evidence": []}').p_yes
    0.35
    """
    pct_field = f"{prob_field}_percent"
    objs = [o for o in _candidates(text, (prob_field, pct_field)) if o.get(prob_field) is not None or o.get(pct_field) is not None]
    if not objs:
        raise ForecastParseError(f"{prob_field} is missing: {text[:200]!r}", raw_text=text, field=prob_field, value=None)
    values = []
    for obj in objs:
        for field in (prob_field, pct_field):
            if obj.get(field) is not None:
                values.append(parse_probability(obj[field], field=field, raw_text=text))
    if max(values) - min(values) > _AGREEMENT_TOLERANCE:
        raise ForecastParseError(
            f"the answer gives {len(values)} different probabilities ({', '.join(f'{v:g}' for v in values)}): "
            "refusing to pick one", raw_text=text, field=prob_field, value=values)
    obj = objs[-1]
    p = values[-1]
    rationale = obj.get("rationale")
    if rationale is None:
        rationale = ""
    elif not isinstance(rationale, str):
        rationale = json.dumps(rationale, ensure_ascii=False)
    return ParsedForecast(p_yes=p, rationale=rationale.strip(), key_evidence=parse_evidence(obj.get("key_evidence"), sources), data=obj)


#: Two probabilities of one answer closer than this (probability units) are the same answer written
#: twice (``p_yes: 0.35`` and ``p_yes_percent: 35``); further apart they disagree.
_AGREEMENT_TOLERANCE = 0.005


def parse_answer(text: str, spec: KindSpec = BinarySpec(), *,
                 sources: Sequence[SearchResult | EvidenceItem] = ()) -> ParsedForecast:
    """Parse a model's answer to a question of any kind into a :class:`ParsedForecast`.

    The same rules as :func:`parse_forecast`, with the kind (:mod:`agent_schemas.kinds`) deciding what an
    answer is: the candidates are the readable top-level objects that have one of the kind's answer keys
    (:meth:`~agent_schemas.kinds.base.QuestionKind.answer_keys`); each is read by the kind
    (:meth:`~agent_schemas.kinds.base.QuestionKind.read_answer`: a valid forecast or a typed error, never a
    repaired one); candidates must give the same forecast (:meth:`~agent_schemas.kinds.base.QuestionKind.answers_agree`),
    else the answer is refused. The last candidate gives the rationale and evidence.

    Parameters
    ----------
    text : str
        The full model answer.
    spec : KindSpec
        The question's spec (``question.spec``); a binary question by default.
    sources : sequence of SearchResult or EvidenceItem
        The numbered sources the prompt showed (see :func:`parse_forecast`).

    Returns
    -------
    ParsedForecast
        With ``p_yes`` (binary) or ``distribution`` (the other kinds) set.

    Raises
    ------
    ForecastParseError
        As :func:`parse_forecast`, and whatever the kind refuses (an unknown option, probabilities that do
        not add up, percentiles out of order...).

    Examples
    --------
    >>> from agent_schemas.kinds import ChoiceSpec
    >>> parse_answer('{"probabilities": {"A": 70, "B": 30}, "rationale": "r"}', ChoiceSpec(options=("A", "B"))).distribution
    [0.7, 0.3]
    """
    kind = kind_of(spec)
    keys = kind.answer_keys(spec)
    objs = _candidates(text, keys)
    forecasts = [(obj, f) for obj in objs if (f := kind.read_answer(spec, obj, raw_text=text)) is not None]
    if not forecasts:
        raise ForecastParseError(f"{keys[-1]} is missing: {text[:200]!r}", raw_text=text, field=keys[-1], value=None)
    first = forecasts[0][1]
    if any(not kind.answers_agree(spec, first, f) for _, f in forecasts[1:]):
        shown = "; ".join(kind.forecast_text(spec, f) for _, f in forecasts)
        raise ForecastParseError(f"the answer gives {len(forecasts)} different forecasts ({shown}): refusing to pick one",
                                 raw_text=text, field=keys[-1], value=[kind.value(f) for _, f in forecasts])
    obj, forecast = forecasts[-1]
    rationale = obj.get("rationale")
    if rationale is None:
        rationale = ""
    elif not isinstance(rationale, str):
        rationale = json.dumps(rationale, ensure_ascii=False)
    return ParsedForecast(**kind.fields(forecast), rationale=rationale.strip(),
                          key_evidence=parse_evidence(obj.get("key_evidence"), sources), data=obj)


# --- schemas ------------------------------------------------------------------------------------------
#: The stated confidences, highest first.
CONFIDENCE_VALUES = ("high", "medium", "low")
#: Schema of a stated confidence: a string enum, which llama.cpp's JSON-schema grammar enforces (three short
#: literals, a few generated tokens); read back with :attr:`ParsedForecast.confidence`.
CONFIDENCE_SCHEMA: dict[str, Any] = {"type": "string", "enum": list(CONFIDENCE_VALUES)}

#: Length limits (characters) of answer strings. A grammar-constrained small model (the embedded
#: SmolLM2) otherwise fills strings until it hits the token limit, and a truncated answer is a failure;
#: llama.cpp's JSON-schema grammar enforces ``maxLength`` and ``maxItems``. A 200-character rationale
#: and one or two evidence items keep a whole answer under 512 tokens even at one token per character.
RATIONALE_CHARS = 200
CLAIM_CHARS = 120


def evidence_item_schema(n_sources: int = 0) -> dict[str, Any]:
    """JSON schema of one evidence item a model cites: its ``claim`` and ``source``, the number ``[n]`` of
    the item it comes from in the numbered list of ``n_sources`` sources the prompt shows (an integer
    ``enum`` 0..``n_sources``, which llama.cpp's grammar enforces; 0 cites none).

    A number, not a URL or a date: :func:`parse_evidence` maps it to the source's URL and
    :func:`agent_tools.provenance.attach_provenance` takes the date from the source, so a model can neither
    cite a URL nobody retrieved nor state a date. It is also cheaper: SmolLM2 spends about 30 generated
    tokens on a corpus URL (a digit or a few letters per token) and one or two on a number.

    >>> evidence_item_schema(2)["properties"]["source"]["enum"]
    [0, 1, 2]
    """
    if n_sources < 0:
        raise ValueError(f"n_sources must be >= 0, got {n_sources}")
    return {
        "type": "object",
        "properties": {
            "claim": {"type": "string", "maxLength": CLAIM_CHARS},
            "source": {"type": "integer", "enum": list(range(n_sources + 1))},
        },
        "required": ["claim", "source"],
    }


def evidence_list_schema(max_items: int = 2, n_sources: int = 0) -> dict[str, Any]:
    """JSON schema of a ``key_evidence`` list of at most ``max_items`` items (:func:`evidence_item_schema`
    citing one of ``n_sources`` numbered sources)."""
    return {"type": "array", "maxItems": max_items, "items": evidence_item_schema(n_sources)}


#: How a task text shows one evidence item (the claim and the number of its source).
EVIDENCE_ITEM_FORMAT = '{"claim": "<text>", "source": <number [n] of its source, 0 if none>}'


def text_schema(max_chars: int = RATIONALE_CHARS) -> dict[str, Any]:
    """JSON schema of a string of at most ``max_chars`` characters."""
    return {"type": "string", "maxLength": max_chars}


@functools.lru_cache(maxsize=256)
def forecast_json_schema(max_evidence: int = 2, rationale_chars: int = RATIONALE_CHARS, n_sources: int = 0,
                         spec: KindSpec = BinarySpec()) -> dict[str, Any]:
    """JSON schema a forecaster requests (one shared object per arguments: do not mutate it): ``rationale``,
    ``key_evidence`` (at most ``max_evidence`` items, each citing one of ``n_sources`` numbered search
    results: :func:`evidence_item_schema`), ``confidence`` (:data:`CONFIDENCE_SCHEMA`), then the forecast in
    the form of ``spec``'s kind (``p_yes_percent`` for a binary question; property order matters for
    grammar-constrained models: reasons first, numbers last). Fewer evidence items mean fewer generated
    tokens (about 30 per item on SmolLM2); the confidence costs about 5."""
    answer = kind_of(spec).answer_properties(spec)
    return {
        "type": "object",
        "properties": {
            "rationale": text_schema(rationale_chars),
            "key_evidence": evidence_list_schema(max_evidence, n_sources),
            "confidence": CONFIDENCE_SCHEMA,
            **answer,
        },
        "required": ["rationale", "key_evidence", "confidence", *answer],
    }


#: The default forecaster schema (grammar-constrained locally, structured output remotely).
FORECAST_JSON_SCHEMA: dict[str, Any] = forecast_json_schema()
