"""One exception root for the project and its typed children.

Every failure the toolkit can classify is a subclass of :class:`ReconcileError`. The retry layer
(:mod:`agent_providers.retry`) decides from the class alone (``retryable``) whether to try again, so
adapters translate SDK exceptions into these classes and nothing else.

Errors carry context as attributes (``retry_after_s``, ``stop_reason``, ``raw_text``) and can be
persisted with :meth:`ReconcileError.to_info` into an :class:`agent_schemas.ErrorInfo` record.
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel, Field

from agent_schemas.usage import TokenUsage


class ErrorInfo(BaseModel):
    """A persisted, JSON-serialisable record of a typed error (kept in results, never lost)."""

    type: str = Field(description="Exception class name, e.g. 'RateLimited', 'ForecastParseError'.")
    message: str = Field(description="Human-readable message; never contains an API key.")
    retryable: bool = Field(False, description="Whether the failure class is transient.")
    details: dict[str, Any] = Field(default_factory=dict, description="Context such as retry_after_s (seconds), stop_reason, raw_text.")


class ReconcileError(Exception):
    """Root of every error raised by forecast-reconcile.

    Attributes
    ----------
    retryable : bool
        Class-level flag read by the retry layer: True for transient failures.
    """

    retryable: bool = False

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = {k: v for k, v in details.items() if v is not None}

    def to_info(self) -> ErrorInfo:
        """Return a JSON-serialisable record of this error (type name, message, details)."""
        return ErrorInfo(
            type=type(self).__name__,
            message=self.message,
            retryable=self.retryable,
            details={k: _jsonable(v) for k, v in self.details.items()},
        )


def _jsonable(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


# --- provider failures -------------------------------------------------------------------------


class ProviderError(ReconcileError):
    """A provider call failed. ``provider`` and ``model`` name where.

    ``usage`` is what the failed call still spent: the :class:`TokenUsage` of every billed response
    behind this error (an empty, refused, truncated or unreadable answer is billed; see
    :attr:`TokenUsage.calls`), or None when the provider never answered (HTTP error status, timeout,
    connection failure). The retry layer replaces it by the sum over all its attempts when it gives up.
    Read it with ``agent_providers.base.spent_usage(exc)``.
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        model: str | None = None,
        usage: TokenUsage | None = None,
        **details: Any,
    ):
        super().__init__(message, provider=provider, model=model, **details)
        self.provider = provider
        self.model = model
        #: Usage of the billed responses behind this error, or None when nothing was billed.
        self.usage = usage


class RateLimited(ProviderError):
    """HTTP 429. ``retry_after_s`` is the server's retry-after in seconds, or None if not given."""

    retryable = True

    def __init__(self, message: str, *, retry_after_s: float | None = None, **kw: Any):
        super().__init__(message, retry_after_s=retry_after_s, **kw)
        self.retry_after_s = retry_after_s


class ProviderOverloaded(ProviderError):
    """HTTP 529 / 503 / 5xx: the provider is overloaded or failing; transient."""

    retryable = True

    def __init__(self, message: str, *, retry_after_s: float | None = None, status_code: int | None = None, **kw: Any):
        super().__init__(message, retry_after_s=retry_after_s, status_code=status_code, **kw)
        self.retry_after_s = retry_after_s
        self.status_code = status_code


class ProviderTimeout(ProviderError):
    """The request (or a per-member deadline) timed out; ``timeout_s`` in seconds."""

    retryable = True

    def __init__(self, message: str, *, timeout_s: float | None = None, **kw: Any):
        super().__init__(message, timeout_s=timeout_s, **kw)
        self.timeout_s = timeout_s


class ProviderConnectionError(ProviderError):
    """The provider could not be reached (DNS, refused connection, reset); transient."""

    retryable = True


class ResponseTruncated(ProviderError):
    """The model stopped on its token limit (``max_tokens`` / ``length``); the text is incomplete.

    A truncated answer is never parsed as if it were complete. ``text`` keeps what arrived; ``usage``
    its tokens (they were spent and are still counted). Not retried: the same limit truncates again.
    """

    def __init__(self, message: str, *, stop_reason: str | None = None, text: str | None = None, **kw: Any):
        super().__init__(message, stop_reason=stop_reason, raw_text=text, **kw)
        self.stop_reason = stop_reason
        self.text = text


class ResponseRefused(ProviderError):
    """The model refused, or the provider's content filter stopped the answer (Anthropic
    ``stop_reason: "refusal"``; OpenAI ``message.refusal`` or ``finish_reason: "content_filter"``).

    ``text`` is the refusal message or the filtered partial answer (never parsed as an answer);
    ``usage`` the tokens the refusal was billed. Not retried: the same prompt is refused again.
    """

    def __init__(self, message: str, *, stop_reason: str | None = None, text: str | None = None, **kw: Any):
        super().__init__(message, stop_reason=stop_reason, raw_text=text, **kw)
        self.stop_reason = stop_reason
        self.text = text


class EmptyResponse(ProviderError):
    """The provider answered with no content (e.g. null content with finish reason "stop").

    Retried (sampling may give an answer next time); ``usage`` keeps the billed tokens of the empty answer.
    """

    retryable = True


class UnreadableResponse(ProviderError):
    """The provider answered HTTP 2xx but the body is not a readable reply: not JSON, not a JSON object,
    or fields of the wrong type (e.g. ``choices`` not a list, ``content`` not text).

    Retried: such bodies come from proxies, gateways and cut-off transfers, which are transient.
    ``usage`` has ``calls=1`` (a 2xx answer may have been billed) and the token counts the body still
    reported, else None (unknown). ``details["body_start"]`` keeps the first 200 characters.
    """

    retryable = True


class UnexpectedProviderError(ProviderError):
    """An SDK call raised an exception the adapter does not classify (an SDK bug or version mismatch,
    or a request the SDK rejects before sending). Not retried; ``details["cause"]`` names the original
    exception type. Adapters raise this instead of letting any untyped exception leave a provider.
    """


class AuthenticationFailed(ProviderError):
    """HTTP 401/403 or a missing API key. Never retried. The key itself is never included."""


class BadRequest(ProviderError):
    """HTTP 400/404/422: the request is invalid for this provider/model. Never retried."""


class MissingDependency(ReconcileError):
    """An optional package is not installed; the message says which ``pip install`` fixes it."""


class UnknownProvider(ReconcileError):
    """A provider spec string does not name a registered provider."""


class ScriptExhausted(ProviderError):
    """A :class:`agent_providers.ScriptedProvider` was asked for more outputs than were queued."""


# --- parsing and data --------------------------------------------------------------------------


class ForecastParseError(ReconcileError):
    """A model answer could not be read as a forecast. ``raw_text`` is the full answer; ``field`` names what failed."""

    def __init__(self, message: str, *, raw_text: str, field: str | None = None, value: Any = None):
        super().__init__(message, raw_text=raw_text, field=field, value=value)
        self.raw_text = raw_text
        self.field = field
        self.value = value


class SearchAccessError(ReconcileError):
    """A search backend could not be reached or refused us; never reported as an empty result."""

    def __init__(self, message: str, *, failure_type: str = "unknown", is_transient: bool = False, **kw: Any):
        super().__init__(message, failure_type=failure_type, is_transient=is_transient, **kw)
        self.failure_type = failure_type
        self.is_transient = is_transient
        self.retryable = is_transient


class DataValidationError(ReconcileError, ValueError):
    """Bad input data: names the ``field`` (column), ``row`` (0-based, if any) and offending ``value``."""

    def __init__(self, message: str, *, field: str | None = None, row: int | None = None, value: Any = None, source: str | None = None):
        super().__init__(message, field=field, row=row, value=value, source=source)
        self.field = field
        self.row = row
        self.value = value
        self.source = source


class UnexpectedError(ReconcileError):
    """An exception outside the project's error classes (a library raising something no adapter maps,
    a malformed reply a parser did not expect, a bug), caught at a member, turn, step or question
    boundary so it fails that unit only.

    ``details["exception_type"]`` names the original class and ``details["where"]`` the innermost
    frame (``file:line in function``); the original is kept as ``__cause__``.
    """


def as_reconcile_error(exc: BaseException) -> ReconcileError:
    """``exc`` itself when it is a :class:`ReconcileError`, else an :class:`UnexpectedError` wrapping it.

    Usage the failed call still spent (an ``usage`` attribute, see ``agent_providers.base.spent_usage``)
    is carried over, so a boundary that records the wrapped error keeps what was spent.
    """
    if isinstance(exc, ReconcileError):
        return exc
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = f"{os.path.basename(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno} in {tb.tb_frame.f_code.co_name}" if tb else None
    text = str(exc)
    err = UnexpectedError(f"{type(exc).__name__}: {text}" if text else type(exc).__name__,
                          exception_type=type(exc).__name__, where=where)
    err.__cause__ = exc
    usage = getattr(exc, "usage", None)
    if usage is not None:
        err.usage = usage  # type: ignore[attr-defined]
    return err


class EnsembleFailed(ReconcileError):
    """Fewer ensemble members succeeded than the minimum fraction requires; ``forecasts`` keeps all results."""

    def __init__(self, message: str, *, n_ok: int, n_members: int, min_success_fraction: float, forecasts: list | None = None):
        super().__init__(message, n_ok=n_ok, n_members=n_members, min_success_fraction=min_success_fraction)
        self.n_ok = n_ok
        self.n_members = n_members
        self.min_success_fraction = min_success_fraction
        self.forecasts = forecasts or []
