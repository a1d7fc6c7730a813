"""Translate SDK exceptions (anthropic, openai) into the project's typed errors.

Both official SDKs share one shape (Stainless-generated clients): ``APIStatusError`` with
``status_code``, ``response.headers`` and a JSON ``body``; ``APITimeoutError`` (a subclass of
``APIConnectionError``) for timeouts; ``APIConnectionError`` for unreachable hosts. The retry layer
(:mod:`agent_providers.retry`) decides from the resulting class alone, so this is the only place where
HTTP status codes are interpreted:

=======================  =====================================
SDK exception            typed error
=======================  =====================================
HTTP 429                 :class:`RateLimited` (``retry_after_s`` from the headers)
HTTP 408                 :class:`ProviderTimeout`
HTTP 500-599, 529        :class:`ProviderOverloaded`
HTTP 401, 403            :class:`AuthenticationFailed`
other HTTP 4xx           :class:`BadRequest` (400, 404, 413, 422, ...)
``APITimeoutError``      :class:`ProviderTimeout`
``APIConnectionError``   :class:`ProviderConnectionError`
body not JSON            :class:`UnreadableResponse` (``json.JSONDecodeError``,
                         ``APIResponseValidationError``, ``UnicodeDecodeError``)
anything else            :class:`UnexpectedProviderError` (not retried)
=======================  =====================================

A :class:`ReconcileError` raised inside the call (our own parsing) passes through unchanged, so nothing
untyped ever leaves an adapter. Messages never contain the API key or secret URL query values: any
occurrence is replaced by ``"***"``.
"""

from __future__ import annotations

import email.utils
import json
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

from agent_schemas import (
    AuthenticationFailed,
    BadRequest,
    ProviderConnectionError,
    ProviderOverloaded,
    ProviderTimeout,
    RateLimited,
    ReconcileError,
    UnexpectedProviderError,
    UnreadableResponse,
)
from agent_providers.credentials import redact


def _seconds(text: str, scale: float) -> float | None:
    """``float(text) * scale`` when it is a finite number >= 0, else None."""
    try:
        value = float(text) * scale
    except (TypeError, ValueError, OverflowError):
        return None
    return value + 0.0 if math.isfinite(value) and value >= 0 else None  # + 0.0 turns -0.0 into 0.0


def parse_retry_after(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """Read the server's retry delay in seconds from response headers.

    Reads ``retry-after-ms`` (milliseconds, sent by OpenAI and Anthropic), then ``retry-after`` as
    seconds or as an HTTP date (RFC 9110 section 10.2.3). A date in the past gives 0.0.

    Returns
    -------
    float or None
        Seconds, finite and >= 0. None when absent or unusable (``nan``, ``inf``, negative, garbage):
        the retry layer then applies its own backoff, as if the server had sent nothing.
    """
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        delay = _seconds(ms, 1e-3)
        if delay is not None:
            return delay
    value = headers.get("retry-after")
    if value is None:
        return None
    delay = _seconds(value, 1.0)
    if delay is not None:
        return delay
    if not any(c.isalpha() for c in value):  # a number we refused above, not an HTTP date
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    try:
        return max(when.timestamp() - (time.time() if now is None else now), 0.0)
    except (OverflowError, OSError, ValueError):
        return None


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
    exc: Exception,
    sdk: Any,
    *,
    provider: str,
    model: str,
    timeout_s: float | None,
    secrets: Sequence[str | None] = (),
) -> ReconcileError:
    """Return the typed error for any exception raised by an SDK call (see the module table).

    Parameters
    ----------
    exc : Exception
        The exception raised by the SDK call.
    sdk : module
        The ``anthropic`` or ``openai`` module (gives ``APIStatusError``, ``APITimeoutError``,
        ``APIConnectionError``, ``APIResponseValidationError``).
    provider, model : str
        Provider spec (redacted) and model, recorded on the error.
    timeout_s : float or None
        The client's timeout in seconds, recorded on :class:`ProviderTimeout`.
    secrets : sequence of str
        The API key and secret query values, scrubbed from the message.

    Returns
    -------
    ReconcileError
        ``exc`` itself when it already is one, else a :class:`ProviderError` subclass.
    """
    if isinstance(exc, ReconcileError):
        return exc
    ctx = {"provider": provider, "model": model}
    if isinstance(exc, sdk.APITimeoutError):
        return ProviderTimeout(f"{provider}: request timed out after {timeout_s} s", timeout_s=timeout_s, **ctx)
    if isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        detail = f" ({type(cause).__name__}: {cause})" if cause else ""
        return ProviderConnectionError(redact(f"{provider}: could not connect{detail}", *secrets), **ctx)
    if isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError, getattr(sdk, "APIResponseValidationError", ()))):
        return UnreadableResponse(
            redact(f"{provider}: the reply body could not be read ({type(exc).__name__}: {exc})", *secrets)[:500],
            **ctx,
        )
    if not isinstance(exc, sdk.APIStatusError):
        return UnexpectedProviderError(
            redact(f"{provider}: the SDK call failed unexpectedly ({type(exc).__name__}: {exc})", *secrets)[:1000],
            cause=type(exc).__name__, **ctx,
        )
    status = int(exc.status_code)
    headers = getattr(getattr(exc, "response", None), "headers", None)
    msg = redact(f"{provider}: HTTP {status}: {_api_message(exc)}", *secrets)
    return error_for_status(status, msg, retry_after_s=parse_retry_after(headers), timeout_s=timeout_s, **ctx)


def error_for_status(status: int, message: str, *, provider: str, model: str, retry_after_s: float | None = None,
                     timeout_s: float | None = None) -> ReconcileError:
    """The typed error of an HTTP error ``status`` (the HTTP rows of the module table), for an SDK error or
    an errored request of a batch. ``message`` must already be redacted."""
    ctx = {"provider": provider, "model": model}
    if status == 429:
        return RateLimited(message, retry_after_s=retry_after_s, status_code=status, **ctx)
    if status == 408:
        return ProviderTimeout(message, timeout_s=timeout_s, status_code=status, **ctx)
    if status >= 500:
        return ProviderOverloaded(message, retry_after_s=retry_after_s, status_code=status, **ctx)
    if status in (401, 403):
        return AuthenticationFailed(message, status_code=status, **ctx)
    return BadRequest(message, status_code=status, **ctx)
