"""Translate SDK exceptions (anthropic, openai) into the project's typed errors.

Both official SDKs share one shape (Stainless-generated clients): ``APIStatusError`` with
``status_code``, ``response.headers`` and a JSON ``body``; ``APITimeoutError`` (a subclass of
``APIConnectionError``) for timeouts; ``APIConnectionError`` for unreachable hosts. The retry layer
(:mod:`agent_providers.retry`) decides from the resulting class alone, so this is the only place where
HTTP status codes are interpreted:

=================  =====================================
HTTP status        typed error
=================  =====================================
429                :class:`RateLimited` (``retry_after_s`` from the headers)
408                :class:`ProviderTimeout`
500-599, 529       :class:`ProviderOverloaded`
401, 403           :class:`AuthenticationFailed`
other 4xx          :class:`BadRequest` (400, 404, 413, 422, ...)
=================  =====================================

Messages never contain the API key: any occurrence is replaced by ``"***"``.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping
from typing import Any

from agent_schemas import (
    AuthenticationFailed,
    BadRequest,
    ProviderConnectionError,
    ProviderError,
    ProviderOverloaded,
    ProviderTimeout,
    RateLimited,
)

REDACTED = "***"


def parse_retry_after(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """Read the server's retry delay in seconds from response headers.

    Reads ``retry-after-ms`` (milliseconds, sent by OpenAI and Anthropic), then ``retry-after`` as
    seconds or as an HTTP date (RFC 9110 section 10.2.3). Returns None when absent or unreadable;
    negative values become 0.0.
    """
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(float(ms) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(when.timestamp() - (time.time() if now is None else now), 0.0)


def redact(text: str, secret: str | None) -> str:
    """Replace every occurrence of ``secret`` in ``text`` by ``***`` (no-op when secret is empty)."""
    if secret:
        text = text.replace(secret, REDACTED)
    return text


def _api_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        err = body.get("error")
        if isinstance(err, Mapping) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
        if body.get("message"):
            return str(body["message"])
        if body.get("detail"):  # FastAPI-style validation errors (llama_cpp.server, vLLM)
            return str(body["detail"])[:1000]
    return str(getattr(exc, "message", "") or exc)


def map_sdk_error(
    exc: BaseException,
    sdk: Any,
    *,
    provider: str,
    model: str,
    timeout_s: float | None,
    secret: str | None,
) -> ProviderError | None:
    """Return the typed error for an SDK exception, or None if ``exc`` is not an SDK API error.

    Parameters
    ----------
    exc : BaseException
        The exception raised by the SDK call.
    sdk : module
        The ``anthropic`` or ``openai`` module (gives ``APIStatusError``, ``APITimeoutError``,
        ``APIConnectionError``).
    provider, model : str
        Provider spec and model, recorded on the error.
    timeout_s : float or None
        The client's timeout in seconds, recorded on :class:`ProviderTimeout`.
    secret : str or None
        The API key, scrubbed from the message.
    """
    ctx = {"provider": provider, "model": model}
    if isinstance(exc, sdk.APITimeoutError):
        return ProviderTimeout(f"{provider}: request timed out after {timeout_s} s", timeout_s=timeout_s, **ctx)
    if isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        detail = f" ({type(cause).__name__}: {cause})" if cause else ""
        return ProviderConnectionError(redact(f"{provider}: could not connect{detail}", secret), **ctx)
    if not isinstance(exc, sdk.APIStatusError):
        return None
    status = int(exc.status_code)
    headers = getattr(getattr(exc, "response", None), "headers", None)
    retry_after = parse_retry_after(headers)
    msg = redact(f"{provider}: HTTP {status}: {_api_message(exc)}", secret)
    if status == 429:
        return RateLimited(msg, retry_after_s=retry_after, status_code=status, **ctx)
    if status == 408:
        return ProviderTimeout(msg, timeout_s=timeout_s, status_code=status, **ctx)
    if status >= 500:
        return ProviderOverloaded(msg, retry_after_s=retry_after, status_code=status, **ctx)
    if status in (401, 403):
        return AuthenticationFailed(msg, status_code=status, **ctx)
    return BadRequest(msg, status_code=status, **ctx)
