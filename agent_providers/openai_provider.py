"""OpenAI Chat Completions adapter on the official ``openai`` SDK, also for OpenAI-compatible servers.

What it normalises (API reference: https://platform.openai.com/docs/api-reference/chat/object):

* **Usage.** ``prompt_tokens`` and ``completion_tokens`` are totals already.
  ``prompt_tokens_details.cached_tokens`` (and ``cache_write_tokens`` where reported) are *subsets* of
  ``prompt_tokens``; ``completion_tokens_details.reasoning_tokens`` is a subset of ``completion_tokens``.
  They are kept as breakdowns, never added again. Missing or null detail objects/fields give None.
  Token counts that are not non-negative integers (strings, floats, negatives) and usage or detail
  fields that are not objects become None with a logged warning (:mod:`agent_providers.reply`).
* **Stop reasons.** ``stop`` -> ``"stop"``, ``length`` -> ``"length"`` (the base class raises
  :class:`ResponseTruncated`), ``tool_calls`` -> ``"tool_use"``. A refusal (``message.refusal``) or
  ``finish_reason: "content_filter"`` -> ``"content_filter"`` (the base class raises
  :class:`ResponseRefused`, not retried). Null or blank content with any other finish reason raises
  :class:`EmptyResponse`. Every one of them carries the reply's usage.
* **Reply body.** Read raw (``with_raw_response``) and checked: a body that is not a JSON object, or
  with ``choices``/``message``/``content`` of the wrong type, raises :class:`UnreadableResponse`; any
  other exception from the SDK call becomes a typed error (:func:`agent_providers.errors_map.map_sdk_error`).
* **Keys and hosts.** ``OPENAI_API_KEY`` goes to OpenAI only: the official client is pinned to
  :data:`OPENAI_API_BASE` (an ``OPENAI_BASE_URL`` in the environment does not redirect it; pass
  ``base_url=`` in code to do that on purpose). An OpenAI-compatible server gets a key only when it is
  given on purpose: ``api_key=`` or the :data:`COMPATIBLE_KEY_ENV` (``OPENAI_COMPATIBLE_API_KEY``)
  environment variable; otherwise the placeholder :data:`COMPATIBLE_PLACEHOLDER_KEY`. A key sent over
  plain ``http://`` to a host other than loopback logs a warning.
* **Credentials in the base URL.** A query string (``?key=...``, ``?api-version=...``) is sent as the
  SDK's ``default_query`` on every request, never pasted into the path. User info
  (``http://user:pass@host``) is refused with :class:`BadRequest` (the HTTP client would send it as
  Basic auth). The spec, ``repr``, errors, logs and cache keys show the URL redacted
  (:func:`agent_providers.credentials.redact_spec`); a ``***`` query value (a redacted spec, e.g. on
  resume) is read from ``OPENAI_COMPATIBLE_QUERY_<NAME>``.
* **JSON schema.** OpenAI: ``response_format={"type": "json_schema", "json_schema": {"name", "schema",
  "strict": False}}`` (strict mode would demand ``additionalProperties: false`` and every property
  required, which general schemas do not satisfy). Compatible servers: ``compatible_json_format`` picks
  ``"json_schema"`` (the OpenAI form, understood by vLLM, Ollama and llama.cpp's C++ ``llama-server``),
  ``"json_object_schema"`` (``{"type": "json_object", "schema": ...}``, the only form llama-cpp-python's
  ``llama_cpp.server`` accepts; it answers the OpenAI form with an HTTP 500 validation error) or
  ``"auto"`` (default): send the OpenAI form and, if the server rejects it (HTTP 400/422/500 whose
  message names ``response_format``), resend once with the ``json_object`` form and keep using that
  form for this provider instance.
* **Token limit.** OpenAI receives ``max_completion_tokens`` (reasoning models reject ``max_tokens``);
  compatible servers receive ``max_tokens``.
* **Retries.** SDK retries are off (``max_retries=0``): :class:`agent_providers.retry.RetryingProvider`
  is the one retry layer.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from typing import Any, Literal

from agent_schemas import (
    AuthenticationFailed,
    ChatMessage,
    BadRequest,
    Completion,
    EmptyResponse,
    MissingDependency,
    ProviderOverloaded,
    TokenUsage,
)
from agent_providers.base import Provider
from agent_providers.credentials import parse_endpoint, redact_url, register_secret
from agent_providers.errors_map import map_sdk_error
from agent_providers.pricing import cost_usd
from agent_providers.reply import TokenCounts, json_object, member, unreadable

log = logging.getLogger(__name__)

#: Model used when the spec names none.
DEFAULT_OPENAI_MODEL = "gpt-4.1-mini"
#: The official API root: where ``OPENAI_API_KEY`` is sent (unless ``base_url=`` is passed in code).
OPENAI_API_BASE = "https://api.openai.com/v1"
#: Environment variable whose key is sent to OpenAI-compatible servers (never ``OPENAI_API_KEY``).
COMPATIBLE_KEY_ENV = "OPENAI_COMPATIBLE_API_KEY"
#: API key sent to compatible servers when none is configured (most local servers ignore it).
COMPATIBLE_PLACEHOLDER_KEY = "not-needed"

_STOP_REASONS = {
    "stop": "stop",
    "length": "length",
    "content_filter": "content_filter",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
}


def _import_sdk():
    try:
        import openai
    except ImportError as exc:  # pragma: no cover - exercised only without the SDK
        raise MissingDependency(
            "the OpenAI provider needs the 'openai' SDK: pip install 'openai>=1.50' (or pip install forecast-reconcile)"
        ) from exc
    return openai


def usage_from_openai(body: Mapping[str, Any], model: str, *, priced: bool = True, provider: str = "openai",
                      batch: bool = False) -> TokenUsage:
    """Normalise the ``usage`` of an OpenAI reply body (a dict) into :class:`TokenUsage` for one billed call.

    ``cached_tokens`` and ``reasoning_tokens`` are subsets and are only recorded as a breakdown. Absent
    or null fields stay None; malformed ones become None with one logged warning naming them.
    ``priced=False`` leaves ``cost_usd`` None (compatible servers: unknown); ``batch=True`` prices at the
    Batch API rate (50% of list).
    """
    counts = TokenCounts(provider)
    usage = counts.obj(body, "usage")
    prompt_details = counts.obj(usage, "prompt_tokens_details", "usage.prompt_tokens_details")
    completion_details = counts.obj(usage, "completion_tokens_details", "usage.completion_tokens_details")
    tu = TokenUsage(
        input_tokens=counts.count(usage, "prompt_tokens", "usage.prompt_tokens"),
        output_tokens=counts.count(usage, "completion_tokens", "usage.completion_tokens"),
        cache_read_tokens=counts.count(prompt_details, "cached_tokens", "usage.prompt_tokens_details.cached_tokens"),
        cache_write_tokens=counts.count(prompt_details, "cache_write_tokens", "usage.prompt_tokens_details.cache_write_tokens"),
        reasoning_tokens=counts.count(completion_details, "reasoning_tokens", "usage.completion_tokens_details.reasoning_tokens"),
        calls=1,
    )
    counts.warn()
    if priced:
        tu = tu.model_copy(update={"cost_usd": cost_usd(f"openai/{model}", tu, batch=batch)})
    return tu


class OpenAIProvider(Provider):
    """OpenAI models, or any OpenAI-compatible server (Ollama, vLLM, llama.cpp) with ``compatible=True``.

    Parameters
    ----------
    model : str, optional
        Model name, default :data:`DEFAULT_OPENAI_MODEL`.
    api_key : str, optional
        API key. OpenAI: default ``OPENAI_API_KEY`` (required). Compatible servers: default
        ``OPENAI_COMPATIBLE_API_KEY``, else a placeholder; ``OPENAI_API_KEY`` is never sent to them.
        Never logged or shown in reprs.
    base_url : str, optional
        API root, e.g. ``"http://127.0.0.1:8080/v1"``; a query string is sent with every request. Required
        when ``compatible=True``; for OpenAI the default is :data:`OPENAI_API_BASE`.
    compatible : bool
        Talk to an OpenAI-compatible server: spec ``"openai-compatible/<model>@<base_url>"``, cost
        unknown (None), ``max_tokens`` instead of ``max_completion_tokens``.
    timeout_s : float
        Per-request timeout in seconds.
    http_client : httpx2.Client, optional
        Custom HTTP client for the SDK (this SDK version sends through ``httpx2``).
    compatible_json_format : {"auto", "json_schema", "json_object_schema"}
        How ``json_schema`` is sent to a compatible server (see module doc); ignored for OpenAI.

    Raises
    ------
    AuthenticationFailed
        If ``compatible`` is False and no key is given or set in ``OPENAI_API_KEY``; or a redacted
        (``***``) query value's ``OPENAI_COMPATIBLE_QUERY_<NAME>`` variable is unset.
    BadRequest
        If ``compatible`` is True and ``base_url`` is missing, or the URL has user info or is not http(s).
    MissingDependency
        If the ``openai`` SDK is not installed.
    """

    name = "openai"
    supports_json_schema = True
    needs_key = True
    key_env_var = "OPENAI_API_KEY"
    default_model = DEFAULT_OPENAI_MODEL

    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        compatible: bool = False,
        timeout_s: float = 60,
        http_client: Any = None,
        compatible_json_format: Literal["auto", "json_schema", "json_object_schema"] = "auto",
    ) -> None:
        super().__init__(model)
        self._sdk = _import_sdk()
        self.compatible = compatible
        self.timeout_s = timeout_s
        if compatible_json_format not in ("auto", "json_schema", "json_object_schema"):
            raise BadRequest(
                "compatible_json_format must be 'auto', 'json_schema' or 'json_object_schema', "
                f"got {compatible_json_format!r}"
            )
        self.compatible_json_format = compatible_json_format
        if compatible:
            if not base_url:
                raise BadRequest(f"openai-compatible/{self.model}: compatible=True needs base_url, e.g. 'http://127.0.0.1:8080/v1'")
            what = f"openai-compatible/{self.model}@{redact_url(base_url)}"
            endpoint = parse_endpoint(base_url, environ=os.environ, what=what)
            key = api_key or os.environ.get(COMPATIBLE_KEY_ENV) or None
            if key and endpoint.is_plain_http_remote:
                log.warning("%s: the API key is sent over plain http to a non-loopback host", what)
        else:
            key = api_key or os.environ.get(self.key_env_var or "")
            if not key:
                raise AuthenticationFailed(
                    f"{self.spec}: no API key; pass api_key= or set {self.key_env_var}", provider=self.spec, model=self.model
                )
            endpoint = parse_endpoint(base_url or OPENAI_API_BASE, environ=os.environ, what=f"openai/{self.model}")
        self._endpoint = endpoint
        #: The API root as shown in specs and logs (credentials redacted).
        self.base_url = endpoint.public_url
        self._has_key = bool(key)
        self._secrets = tuple(s for s in (key, *endpoint.secrets) if s)
        register_secret(*self._secrets)
        self._client = self._sdk.OpenAI(
            api_key=key or COMPATIBLE_PLACEHOLDER_KEY,
            base_url=endpoint.base_url,
            default_query=endpoint.default_query or None,
            timeout=timeout_s,
            max_retries=0,
            http_client=http_client,
        )
        self._closed = threading.Event()

    @property
    def spec(self) -> str:
        """Registry string; for compatible servers the URL redacted (no user info or fragment, secret
        query values as ``***``), since the spec is written to manifests, traces and cache keys."""
        if self.compatible:
            return f"openai-compatible/{self.model}@{self._endpoint.public_url}"
        return f"openai/{self.model}"

    def response_format(self, json_schema: dict[str, Any]) -> dict[str, Any]:
        """The ``response_format`` request field for ``json_schema`` (see module doc)."""
        if self.compatible and self.compatible_json_format == "json_object_schema":
            return {"type": "json_object", "schema": json_schema}
        return {"type": "json_schema", "json_schema": {"name": "answer", "schema": json_schema, "strict": False}}

    def _complete(self, messages, *, json_schema, temperature, max_tokens, seed) -> Completion:
        try:
            return self._complete_once(messages, json_schema, temperature, max_tokens, seed)
        except (BadRequest, ProviderOverloaded) as exc:
            # llama_cpp.server reports its request-validation error as HTTP 500, hence the message check
            if not (
                self.compatible
                and json_schema is not None
                and self.compatible_json_format == "auto"
                and exc.details.get("status_code") in (400, 422, 500)
                and "response_format" in str(exc)
            ):
                raise
            log.info("%s rejected response_format json_schema; using the json_object + schema form", self.spec)
            self.compatible_json_format = "json_object_schema"
            return self._complete_once(messages, json_schema, temperature, max_tokens, seed)

    def request_body(self, messages: list[ChatMessage], *, json_schema: dict[str, Any] | None = None,
                     temperature: float | None = None, max_tokens: int | None = None, seed: int | None = None) -> dict[str, Any]:
        """The Chat Completions request body of a call: what a direct call sends and what a Batch API
        request line carries as ``body``."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
        }
        if json_schema is not None:
            body["response_format"] = self.response_format(json_schema)
        if temperature is not None:
            body["temperature"] = temperature
        if max_tokens is not None:
            body["max_tokens" if self.compatible else "max_completion_tokens"] = max_tokens
        if seed is not None:
            body["seed"] = seed
        return body

    @property
    def supports_batch(self) -> bool:  # type: ignore[override]
        """OpenAI has the Batch API; an OpenAI-compatible server is not assumed to."""
        return not self.compatible

    @property
    def client(self) -> Any:
        """The SDK client (``openai.OpenAI``), for the Batch API backend (:mod:`agent_providers.batch`);
        it holds the key, never log it."""
        return self._client

    def _complete_once(self, messages, json_schema, temperature, max_tokens, seed) -> Completion:
        kwargs = self.request_body(messages, json_schema=json_schema, temperature=temperature, max_tokens=max_tokens, seed=seed)
        try:
            raw = self._client.chat.completions.with_raw_response.create(**kwargs)
            body = raw.http_response.content
        except Exception as exc:
            raise self.typed_error(exc) from None
        return self.to_completion(body)

    def typed_error(self, exc: Exception) -> Exception:
        """The typed error (:func:`agent_providers.errors_map.map_sdk_error`) of an exception the SDK raised."""
        mapped = map_sdk_error(
            exc, self._sdk, provider=self.spec, model=self.model, timeout_s=self.timeout_s, secrets=self._secrets
        )
        if isinstance(mapped, AuthenticationFailed) and self.compatible and not self._has_key:
            hint = f" (no key was sent: set {COMPATIBLE_KEY_ENV} or pass api_key=; OPENAI_API_KEY goes to OpenAI only)"
            return AuthenticationFailed(mapped.message + hint, provider=self.spec, model=self.model,
                                        status_code=mapped.details.get("status_code"))
        return mapped

    def to_completion(self, raw: bytes | str | dict[str, Any], *, batch: bool = False) -> Completion:
        """A :class:`Completion` from a reply body (bytes, text or parsed dict); typed errors otherwise
        (every one carrying the reply's usage). ``batch=True``: a Batch API result, priced at the batch rate."""
        body = raw if isinstance(raw, dict) else json_object(raw, provider=self.spec, model=self.model, secrets=self._secrets)
        model = body.get("model") if isinstance(body.get("model"), str) and body.get("model") else self.model
        usage = usage_from_openai(body, model, priced=not self.compatible, provider=self.spec, batch=batch)
        ctx = {"provider": self.spec, "model": model, "usage": usage}
        choices = body.get("choices")
        if choices == []:
            raise EmptyResponse(f"{self.spec}: response has no choices", **ctx)
        if not isinstance(choices, list) or not isinstance(choices[0], dict):
            raise unreadable(f"'choices' is {type(choices).__name__}, not a list of objects", **ctx)
        choice = choices[0]
        raw_stop = choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else None
        stop = _STOP_REASONS.get(raw_stop or "", "unknown")
        message = choice.get("message")
        text = member(message, "content")
        refusal = member(message, "refusal")
        if (message is not None and not isinstance(message, dict)) or not isinstance(text, (str, type(None))):
            raise unreadable("'choices[0].message.content' is not text", **ctx)
        if isinstance(refusal, str) and refusal.strip():
            stop, text = "content_filter", refusal
        if stop in ("length", "content_filter"):  # the base class raises ResponseTruncated / ResponseRefused
            return Completion(text=text or "", usage=usage, model=model, provider=self.spec, stop_reason=stop)
        if text is None or not text.strip():
            raise EmptyResponse(f"{self.spec}: empty answer (finish_reason={raw_stop!r})", stop_reason=raw_stop, **ctx)
        return Completion(text=text, usage=usage, model=model, provider=self.spec, stop_reason=stop)

    def close(self) -> None:
        """Close the SDK's HTTP client (safe to call twice)."""
        if not self._closed.is_set():
            self._closed.set()
            self._client.close()
