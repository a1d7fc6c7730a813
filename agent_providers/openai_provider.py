"""OpenAI Chat Completions adapter on the official ``openai`` SDK, also for OpenAI-compatible servers.

What it normalises (API reference: https://platform.openai.com/docs/api-reference/chat/object):

* **Usage.** ``prompt_tokens`` and ``completion_tokens`` are totals already.
  ``prompt_tokens_details.cached_tokens`` (and ``cache_write_tokens`` where reported) are *subsets* of
  ``prompt_tokens``; ``completion_tokens_details.reasoning_tokens`` is a subset of ``completion_tokens``.
  They are kept as breakdowns, never added again. Missing or null detail objects/fields give None.
* **Stop reasons.** ``stop`` -> ``"stop"``, ``length`` -> ``"length"`` (the base class raises
  :class:`ResponseTruncated`), ``content_filter`` -> ``"content_filter"``, ``tool_calls`` -> ``"tool_use"``.
  Null or blank content with any other finish reason raises :class:`EmptyResponse`.
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
from typing import Any, Literal

from agent_schemas import (
    AuthenticationFailed,
    BadRequest,
    Completion,
    EmptyResponse,
    MissingDependency,
    ProviderOverloaded,
    TokenUsage,
)
from agent_providers.base import Provider
from agent_providers.errors_map import map_sdk_error
from agent_providers.pricing import cost_usd

log = logging.getLogger(__name__)

#: Model used when the spec names none.
DEFAULT_OPENAI_MODEL = "gpt-4.1-mini"
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


def _field(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def usage_from_openai(usage: Any, model: str, *, priced: bool = True) -> TokenUsage:
    """Normalise an OpenAI ``usage`` object (SDK model or dict) into :class:`TokenUsage`.

    ``cached_tokens`` and ``reasoning_tokens`` are subsets and are only recorded as a breakdown. Absent
    or null fields stay None. ``priced=False`` leaves ``cost_usd`` None (compatible servers: unknown).
    """
    if usage is None:
        return TokenUsage(calls=1)
    prompt_details = _field(usage, "prompt_tokens_details")
    completion_details = _field(usage, "completion_tokens_details")
    tu = TokenUsage(
        input_tokens=_field(usage, "prompt_tokens"),
        output_tokens=_field(usage, "completion_tokens"),
        cache_read_tokens=_field(prompt_details, "cached_tokens"),
        cache_write_tokens=_field(prompt_details, "cache_write_tokens"),
        reasoning_tokens=_field(completion_details, "reasoning_tokens"),
        calls=1,
    )
    if priced:
        tu = tu.model_copy(update={"cost_usd": cost_usd(f"openai/{model}", tu)})
    return tu


class OpenAIProvider(Provider):
    """OpenAI models, or any OpenAI-compatible server (Ollama, vLLM, llama.cpp) with ``compatible=True``.

    Parameters
    ----------
    model : str, optional
        Model name, default :data:`DEFAULT_OPENAI_MODEL`.
    api_key : str, optional
        API key; default ``OPENAI_API_KEY``. Required for OpenAI; for compatible servers a placeholder is
        sent when none is set. Never logged or shown in reprs.
    base_url : str, optional
        API root, e.g. ``"http://127.0.0.1:8080/v1"``. Required when ``compatible=True``.
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
        If ``compatible`` is False and no key is given or set in ``OPENAI_API_KEY``.
    BadRequest
        If ``compatible`` is True and ``base_url`` is missing.
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
        self.base_url = base_url
        self.timeout_s = timeout_s
        if compatible_json_format not in ("auto", "json_schema", "json_object_schema"):
            raise BadRequest(
                "compatible_json_format must be 'auto', 'json_schema' or 'json_object_schema', "
                f"got {compatible_json_format!r}"
            )
        self.compatible_json_format = compatible_json_format
        key = api_key or os.environ.get(self.key_env_var or "")
        if compatible:
            if not base_url:
                raise BadRequest(f"{self.spec}: compatible=True needs base_url, e.g. 'http://127.0.0.1:8080/v1'")
            key = key or COMPATIBLE_PLACEHOLDER_KEY
        elif not key:
            raise AuthenticationFailed(
                f"{self.spec}: no API key; pass api_key= or set {self.key_env_var}", provider=self.spec, model=self.model
            )
        self._secret = key if key != COMPATIBLE_PLACEHOLDER_KEY else None
        client_kwargs: dict[str, Any] = dict(api_key=key, timeout=timeout_s, max_retries=0, http_client=http_client)
        if base_url:
            client_kwargs["base_url"] = base_url
        self._client = self._sdk.OpenAI(**client_kwargs)
        self._closed = threading.Event()

    @property
    def spec(self) -> str:
        """Registry string; for compatible servers the URL without user info, query or fragment (those
        may carry credentials, and the spec is written to manifests, traces and cache keys)."""
        if self.compatible:
            return f"openai-compatible/{self.model}@{_public_url(self.base_url)}"
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

    def _complete_once(self, messages, json_schema, temperature, max_tokens, seed) -> Completion:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
        }
        if json_schema is not None:
            kwargs["response_format"] = self.response_format(json_schema)
        if temperature is not None:
            kwargs["temperature"] = temperature
        if max_tokens is not None:
            kwargs["max_tokens" if self.compatible else "max_completion_tokens"] = max_tokens
        if seed is not None:
            kwargs["seed"] = seed
        try:
            resp = self._client.chat.completions.create(**kwargs)
        except Exception as exc:
            mapped = map_sdk_error(
                exc, self._sdk, provider=self.spec, model=self.model, timeout_s=self.timeout_s, secret=self._secret
            )
            if mapped is None:
                raise
            raise mapped from None
        return self._to_completion(resp)

    def _to_completion(self, resp: Any) -> Completion:
        model = _field(resp, "model") or self.model
        usage = usage_from_openai(_field(resp, "usage"), model, priced=not self.compatible)
        choices = _field(resp, "choices") or []
        if not choices:
            raise EmptyResponse(f"{self.spec}: response has no choices", provider=self.spec, model=model)
        choice = choices[0]
        raw_stop = _field(choice, "finish_reason")
        stop = _STOP_REASONS.get(raw_stop or "", "unknown")
        message = _field(choice, "message")
        text = _field(message, "content")
        if stop == "length":
            return Completion(text=text or "", usage=usage, model=model, provider=self.spec, stop_reason="length")
        if text is None or not text.strip():
            refusal = _field(message, "refusal")
            extra = f"; refusal: {refusal!r}" if refusal else ""
            raise EmptyResponse(
                f"{self.spec}: empty answer (finish_reason={raw_stop!r}){extra}",
                provider=self.spec, model=model, stop_reason=raw_stop,
            )
        return Completion(text=text, usage=usage, model=model, provider=self.spec, stop_reason=stop)

    def close(self) -> None:
        """Close the SDK's HTTP client (safe to call twice)."""
        if not self._closed.is_set():
            self._closed.set()
            self._client.close()


def _public_url(url: str | None) -> str:
    """``url`` without user info, query string or fragment."""
    from urllib.parse import urlsplit, urlunsplit

    if not url:
        return ""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
