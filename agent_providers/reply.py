"""Reading a provider's reply body defensively: JSON decoding, typed members and token counts.

The remote adapters read the raw HTTP body (the SDKs' ``with_raw_response``) rather than the SDKs'
response models, which are built without validation: a 200 reply of the wrong shape would otherwise
surface as an ``AttributeError`` or ``TypeError`` deep in our code. Here:

* a body that is not UTF-8 JSON, or not a JSON object, raises :class:`UnreadableResponse` carrying
  ``TokenUsage(calls=1)`` (a 2xx answer may have been billed; its tokens are unknown);
* a token count that is not a non-negative integer (a string, a float, a bool, a negative number), or a
  usage object that is not an object, becomes None (unknown) and one warning per reply names the fields.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from agent_schemas import TokenUsage, UnreadableResponse
from agent_providers.credentials import redact

log = logging.getLogger(__name__)

#: Characters of an unreadable body kept in the error (``details["body_start"]``).
BODY_START_CHARS = 120


def json_object(raw: bytes | str, *, provider: str, model: str, secrets: Sequence[str | None] = ()) -> dict[str, Any]:
    """Decode a reply body that must be a JSON object.

    Raises
    ------
    UnreadableResponse
        If ``raw`` is not UTF-8, not JSON, or JSON but not an object; ``usage`` is ``TokenUsage(calls=1)``.
    """
    text = raw
    try:
        if isinstance(raw, bytes):
            text = raw.decode("utf-8")
        body = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        start = raw[:BODY_START_CHARS].decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)[:BODY_START_CHARS]
        raise unreadable(f"the reply body is not JSON ({type(exc).__name__})", start, provider=provider, model=model,
                         secrets=secrets) from None
    if not isinstance(body, dict):
        raise unreadable(f"the reply body is JSON {type(body).__name__}, not an object", str(text)[:BODY_START_CHARS],
                         provider=provider, model=model, secrets=secrets)
    return body


def unreadable(
    what: str,
    body_start: str = "",
    *,
    provider: str,
    model: str,
    usage: TokenUsage | None = None,
    secrets: Sequence[str | None] = (),
) -> UnreadableResponse:
    """The :class:`UnreadableResponse` for a 2xx reply that cannot be read (``usage`` default: one
    billed call, tokens unknown)."""
    return UnreadableResponse(
        f"{provider}: HTTP 2xx but {what}",
        provider=provider,
        model=model,
        usage=usage if usage is not None else TokenUsage(calls=1),
        body_start=redact(body_start, *secrets) or None,
    )


def member(obj: Any, name: str) -> Any:
    """``obj[name]`` when ``obj`` is a dict, else None."""
    return obj.get(name) if isinstance(obj, dict) else None


class TokenCounts:
    """Reads token counts out of a usage object, turning malformed values into None.

    Parameters
    ----------
    provider : str
        Provider spec, named in the warning.
    """

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.problems: list[str] = []

    def _problem(self, path: str, value: Any) -> None:
        self.problems.append(f"{path}={_short(value)} ({type(value).__name__})")

    def obj(self, parent: Any, name: str, path: str | None = None) -> dict[str, Any] | None:
        """The object at ``parent[name]``; None when absent or null; None and a problem when not an object."""
        value = member(parent, name)
        if value is None or isinstance(value, dict):
            return value
        self._problem(path or name, value)
        return None

    def count(self, parent: Any, name: str, path: str | None = None) -> int | None:
        """The token count at ``parent[name]``: an int >= 0, else None (a problem unless absent/null)."""
        value = member(parent, name)
        if value is None:
            return None
        if type(value) is int and value >= 0:  # bool is an int subclass: excluded by the exact type check
            return value
        self._problem(path or name, value)
        return None

    def warn(self) -> None:
        """Log one warning naming every malformed field read so far (nothing when all were fine)."""
        if self.problems:
            log.warning(
                "%s: malformed usage in the reply, recorded as unknown (None): %s",
                self.provider, ", ".join(self.problems),
            )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
