"""Text made safe to store: the one owner of what every writer of the toolkit does to text on its way to disk.

Every text a run writes (the results' records and their traces, the response cache, the manifest, the report
page and tables, batch journals) passes through :func:`storable_text` (JSON through :func:`storable_json`), because
any of it may hold what a model or a search result wrote, and a model writes anything:

* **Lone surrogates** (U+D800 to U+DFFF: half of a UTF-16 pair, never a character; ``json.loads`` makes one of the
  valid JSON escape ``"\\ud800"``) cannot be encoded as UTF-8, so one in an answer or a search snippet used to stop
  the run at its record. Each is stored as U+FFFD (the replacement character), as a UTF-8 decoder shows bytes it
  cannot read.
* **Secrets** are replaced by :data:`~agent_providers.credentials.REDACTED` (``***``):

  - the exact values of the keys in use: every key a provider registered (:func:`~agent_providers.credentials.
    register_secret`: API keys and secret query values) and the value of every key variable in the environment
    (:data:`KEY_VARIABLE`: ``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``, ``*_TOKEN``, ``*_SECRET``...), at least
    :data:`MIN_SECRET_CHARS` characters long, so a model echoing its key stores ``***``;
  - well-known key shapes (:data:`~agent_providers.credentials.KEY_SHAPES`: ``sk-ant-...``, ``sk-...``, ``sk_live_...``, ``ghp_...``,
    ``github_pat_...``, ``xox?-...``, ``hf_...``, ``AIza...``), a ``Bearer`` token, and the value of an
    ``api_key=`` / ``"password": "..."`` assignment;
  - in a URL (``scheme://...``), what :func:`~agent_providers.credentials.redact_url_in_text` replaces: the user
    info, secret query and ``;`` parameter values, and path segments that are keys (the rules
    :func:`~agent_providers.credentials.redact_spec` applies to a provider's URL).

Idempotent (``***`` is never replaced again) and a no-op on text without a surrogate or a secret. A secret is
replaced inside JSON strings only by ``***`` (no quote, no backslash), so a JSON line stays valid JSON.
"""

from __future__ import annotations

import functools
import json
import os
import re
from typing import Any

import pydantic_core
from pydantic import BaseModel

from agent_providers.credentials import KEY_SHAPES, REDACTED, redact_url_in_text, registered_secrets

__all__ = ["KEY_VARIABLE", "MIN_SECRET_CHARS", "known_secrets", "storable", "storable_json", "storable_text"]

_SURROGATE = re.compile("[\ud800-\udfff]")

#: Shortest key value replaced by exact match (shorter values would hit ordinary words and numbers).
MIN_SECRET_CHARS = 8
#: Environment variables holding a key (their values are secrets wherever they appear).
KEY_VARIABLE = re.compile(r"(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|PAT|CREDENTIALS?)$|^OPENAI_COMPATIBLE_QUERY_")

#: ``Bearer <token>`` (a token of 12+ characters with a digit: "bearer bonds" is prose).
_BEARER = re.compile(r"(?i)(\bbearer\s+)(?=[A-Za-z0-9._~+/=-]*\d)[A-Za-z0-9._~+/=-]{12,}")
#: ``api_key=<value>``, ``"password": "<value>"``... (a value of 8+ characters).
_ASSIGNED = re.compile(r"(?i)(\b(?:x-)?(?:api[-_]?key|access[-_]?token|secret[-_]?key|client[-_]?secret|password|passwd)"
                       r"[\"']?\s*[:=]\s*[\"']?)(?!\*\*\*)[^\s\"',;&<>\\]{8,}")
#: A URL: scheme, ``://`` and everything up to a space, a quote, an angle bracket or a backslash (a JSON escape).
_SCHEME_SEP = re.compile("://")
_SCHEME_BEFORE = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*\Z")
_URL_REST = re.compile(r"[^\s\"'<>\\]+")
#: What a key shape starts with (substring scans, much faster than the pattern, tell when to run it).
_KEY_SHAPE_STARTS = ("sk-", "sk_", "rk_", "hp_", "ho_", "hu_", "hs_", "hr_", "github_pat_", "xox", "hf_", "AIza")
#: The names :data:`_ASSIGNED` looks for, in lower case (substring scans first).
_ASSIGNED_NAMES = ("apikey", "api_key", "api-key", "accesstoken", "access_token", "access-token", "secretkey",
                   "secret_key", "secret-key", "clientsecret", "client_secret", "client-secret", "passw")
#: The non-ASCII characters whose lower case holds an ASCII letter (U+0130 "İ" -> "i̇", U+212A the Kelvin sign ->
#: "k"), in UTF-8: where one occurs, the fast path of :func:`storable_text` cannot read the lower case off the bytes.
_LOWERS_TO_ASCII = tuple(c.encode("utf-8") for c in "\u0130\u212a")
#: What :func:`_replaced` looks for before URLs (:data:`_KEY_SHAPE_STARTS`, ``bearer``, :data:`_ASSIGNED_NAMES`), or a
#: little more, in lower-case UTF-8: two scans for the ``_`` and ``-`` that most of them hold (a regex that starts
#: with one character finds it fast, then looks behind), and substring scans for the others. A key shape's start
#: counts only where :data:`~agent_providers.credentials.KEY_SHAPES` could match: after no key character (``musk-``
#: and ``risk-`` hold ``sk-`` but start no key).
_NO_KEY_CHAR = rb"[a-z0-9_-]"
_NEEDLES_AT_UNDERSCORE = re.compile(
    rb"_(?:(?<=[sr]k_)(?<!" + _NO_KEY_CHAR + rb"[sr]k_)|(?<=gh[pousr]_)(?<!" + _NO_KEY_CHAR + rb"gh[pousr]_)"
    rb"|(?<=hf_)(?<!" + _NO_KEY_CHAR + rb"hf_)|(?<=github_)|(?<=api_)|(?<=access_)|(?<=secret_)|(?<=client_))")
_NEEDLES_AT_DASH = re.compile(
    rb"-(?:(?<=sk-)(?<!" + _NO_KEY_CHAR + rb"sk-)|(?<=api-)|(?<=access-)|(?<=secret-)|(?<=client-))")
_OTHER_NEEDLES = (b"xox", b"aiza", b"bearer", b"apikey", b"accesstoken", b"secretkey", b"clientsecret", b"passw")


@functools.lru_cache(maxsize=1024)
def _is_key_variable(name: str) -> bool:
    """Whether the environment variable ``name`` holds a key (:data:`KEY_VARIABLE`), remembered per name."""
    return KEY_VARIABLE.search(name.upper()) is not None


def known_secrets() -> tuple[str, ...]:
    """The exact key values to replace, longest first: the registered ones and the key variables' values (at least
    :data:`MIN_SECRET_CHARS` characters each). Read anew on each call (a key set in the environment meanwhile counts)."""
    found = {s for s in registered_secrets() if len(s) >= MIN_SECRET_CHARS}
    env = os.environ
    found |= {v for v in (env.get(k, "") for k in env if _is_key_variable(k)) if len(v) >= MIN_SECRET_CHARS}
    found.discard(REDACTED)
    return tuple(sorted(found, key=len, reverse=True))


def storable_text(text: str) -> str:
    """``text`` as it may be stored: lone surrogates as U+FFFD, every secret as ``***`` (see the module docstring).

    Parameters
    ----------
    text : str
        Any text about to be written (a JSON line, a page, a table).

    Returns
    -------
    str
        Encodable as UTF-8; equal to ``text`` when it holds neither a surrogate nor a secret.

    Examples
    --------
    >>> storable_text('{"rationale": "x \\ud800 https://u:pw@h.example/v1;key=K-123-abc?x=1"}')
    '{"rationale": "x \\ufffd https://***@h.example/v1;key=***?x=1"}'
    """
    try:
        data = text.encode("utf-8")  # fails on a lone surrogate; without one, the byte scans below are exact
    except UnicodeEncodeError:
        return _replaced(text, known_secrets())
    secrets = known_secrets()
    if _may_hold_a_secret(data, secrets):
        return _replaced(text, secrets)
    return _redact_urls(text) if b"://" in data else text


def _may_hold_a_secret(data: bytes, secrets: tuple[str, ...]) -> bool:
    """Whether the UTF-8 ``data`` of a text without a surrogate holds what :func:`_replaced` looks for before URLs:
    a known secret, a key shape's start (in any case) or, in lower case, ``bearer`` or an assignment's name. False
    means that :func:`_replaced` would change only its URLs; True may be a false alarm. Scans of bytes: a text with
    one character outside ASCII is held at two or four bytes per character, which made each substring scan of a
    record line several times slower."""
    if any(s.encode("utf-8", "surrogatepass") in data for s in secrets):  # a secret with a surrogate is in no such text
        return True
    lower = data.lower()  # ASCII letters only: a character whose lower case is ASCII sends the text the slow way
    return (_NEEDLES_AT_UNDERSCORE.search(lower) is not None or _NEEDLES_AT_DASH.search(lower) is not None
            or any(n in lower for n in _OTHER_NEEDLES) or (not data.isascii() and any(c in data for c in _LOWERS_TO_ASCII)))


def _replaced(text: str, secrets: tuple[str, ...]) -> str:
    """:func:`storable_text` of ``text``, every rule tried in turn (``secrets``: :func:`known_secrets`)."""
    if not text.isascii():
        text = _SURROGATE.sub("\ufffd", text)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    if any(p in text for p in _KEY_SHAPE_STARTS):
        text = KEY_SHAPES.sub(REDACTED, text)
    lower = text.lower()
    if "bearer" in lower:
        text = _BEARER.sub(rf"\1{REDACTED}", text)
    if any(n in lower for n in _ASSIGNED_NAMES):
        text = _ASSIGNED.sub(rf"\1{REDACTED}", text)
    return _redact_urls(text) if "://" in text else text


def _redact_urls(text: str) -> str:
    """Every URL of ``text`` through :func:`~agent_providers.credentials.redact_url_in_text`: found from each
    ``://`` (its scheme before, the rest up to a space, a quote, an angle bracket or a backslash after)."""
    out, pos = [], 0
    for m in _SCHEME_SEP.finditer(text):
        if m.start() < pos:
            continue
        scheme = _SCHEME_BEFORE.search(text, max(pos, m.start() - 32), m.start())
        start = m.start() if scheme is None else scheme.start()
        end = _URL_REST.match(text, m.end())
        if end is None:
            continue
        out.append(text[pos:start])
        out.append(_redact_url(text[start:end.end()]))
        pos = end.end()
    out.append(text[pos:])
    return "".join(out)


@functools.lru_cache(maxsize=8192)
def _redact_url(url: str) -> str:
    """:func:`~agent_providers.credentials.redact_url_in_text`, remembered: the same search results' URLs recur in
    every prompt and trace of a question."""
    return redact_url_in_text(url)


def storable(value: Any) -> Any:
    """``value`` with every string in it (dict keys included, at any depth) made :func:`storable_text`."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [storable(v) for v in value]
    return value


def storable_json(value: BaseModel | Any, *, indent: int | None = None) -> str:
    """The JSON text of ``value`` as it may be stored (:func:`storable_text` of it).

    A pydantic model is written by ``model_dump_json`` (the same bytes as before when it holds no surrogate); one that
    holds a lone surrogate, which pydantic refuses to encode, is dumped to Python, its strings made storable and
    written by ``pydantic_core.to_json``. Anything else by :func:`json.dumps` (``ensure_ascii=False``,
    ``default=str``).
    """
    if isinstance(value, BaseModel):
        try:
            text = value.model_dump_json(indent=indent)
        except (pydantic_core.PydanticSerializationError, UnicodeEncodeError):
            text = pydantic_core.to_json(storable(value.model_dump(mode="python", round_trip=True)),
                                         indent=indent).decode("utf-8")
    else:
        text = json.dumps(value, ensure_ascii=False, default=str, indent=indent)
    return storable_text(text)
