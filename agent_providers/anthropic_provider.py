"""Anthropic Messages API adapter on the official ``anthropic`` SDK.

What it normalises (API reference: https://docs.claude.com/en/api/messages):

* **Usage.** Anthropic's ``usage.input_tokens`` counts only the prompt tokens *after* the last cache
  breakpoint; cache reads (``cache_read_input_tokens``) and writes (``cache_creation_input_tokens``)
  are reported separately. Our ``input_tokens`` is the whole prompt,
  ``input_tokens + cache_read_input_tokens + cache_creation_input_tokens``, with
  ``cache_read_tokens``/``cache_write_tokens`` kept as the breakdown. ``output_tokens_details.thinking_tokens``
  becomes ``reasoning_tokens`` (a subset of output tokens). Malformed counts (strings, floats,
  negatives) and usage fields that are not objects become None with a logged warning.
* **Prompt caching.** A :class:`ChatMessage` with ``cache=True`` gets ``cache_control: {"type": "ephemeral"}``
  on its (last) content block, which marks the end of a cacheable prefix
  (https://docs.claude.com/en/docs/build-with-claude/prompt-caching). System messages go to the
  ``system`` parameter as text blocks. The API allows at most 4 breakpoints; only the last 4 marks are sent.
* **Stop reasons.** ``end_turn``/``stop_sequence`` -> ``"stop"``; ``max_tokens`` and
  ``model_context_window_exceeded`` -> ``"length"`` (the base class raises :class:`ResponseTruncated`);
  ``refusal`` -> ``"content_filter"`` (the base class raises :class:`ResponseRefused`, not retried);
  ``tool_use`` -> ``"tool_use"``. No text with ``end_turn`` raises :class:`EmptyResponse` (retried).
  Each of these errors carries the reply's usage.
* **Reply body.** Read raw (``with_raw_response``) and checked: a body that is not a JSON object, or
  whose ``content`` is not a list of blocks, raises :class:`UnreadableResponse`; any other exception from
  the SDK call becomes a typed error (:func:`agent_providers.errors_map.map_sdk_error`).
* **JSON schema.** The schema is *described* in the system prompt (a last system block, after any cached
  blocks, so cached prefixes stay valid); nothing is enforced, so ``supports_json_schema`` is False and
  callers validate the answer. This works on every Claude model, unlike the newer structured-outputs
  ``output_config`` which only some models accept.
* **Retries.** The SDK's own retries are off by default (``max_retries_sdk=0``):
  :class:`agent_providers.retry.RetryingProvider` is the one retry layer.
* **Temperature.** This SDK version has no ``temperature`` argument on ``messages.create``; a given
  temperature is sent in the request body (``extra_body``). ``seed`` is not supported by the API and is
  ignored.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from typing import Any

from agent_schemas import AuthenticationFailed, ChatMessage, Completion, EmptyResponse, MissingDependency, TokenUsage
from agent_providers.base import Provider
from agent_providers.credentials import register_secret
from agent_providers.errors_map import map_sdk_error
from agent_providers.pricing import cost_usd
from agent_providers.reply import TokenCounts, json_object, unreadable

log = logging.getLogger(__name__)

#: Model used when the spec names none (``claude-sonnet-4-5`` reaches end-of-life on 2026-11-30 per the
#: SDK's deprecation table).
DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-6"
#: ``max_tokens`` sent when the caller gives none (the API requires one).
DEFAULT_MAX_TOKENS = 1024
#: Anthropic accepts at most this many ``cache_control`` breakpoints per request.
MAX_CACHE_BREAKPOINTS = 4

_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_use",
    "refusal": "content_filter",
}


def _import_sdk():
    try:
        import anthropic
    except ImportError as exc:  # pragma: no cover - exercised only without the SDK
        raise MissingDependency(
            "the Anthropic provider needs the 'anthropic' SDK: pip install 'anthropic>=0.40' "
            "(or pip install forecast-reconcile)"
        ) from exc
    return anthropic


def schema_instruction(json_schema: dict[str, Any]) -> str:
    """The system-prompt text that asks for a JSON object following ``json_schema``."""
    return (
        "Answer with a single JSON object and nothing else (no prose, no code fences). "
        "It must validate against this JSON schema:\n" + json.dumps(json_schema, sort_keys=True)
    )


def build_request(
    messages: list[ChatMessage],
    *,
    json_schema: dict[str, Any] | None,
    cache_prompt_prefix: bool = True,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Translate chat messages into Anthropic ``(system_blocks, messages)``.

    Parameters
    ----------
    messages : list of ChatMessage
        System messages anywhere become system text blocks (in order); the rest keep their order.
    json_schema : dict, optional
        Described in a last system block (see module doc).
    cache_prompt_prefix : bool
        When False, ``ChatMessage.cache`` flags are ignored and no ``cache_control`` is sent.

    Returns
    -------
    system_blocks, api_messages : list of dict
        Ready for ``messages.create(system=..., messages=...)``.
    """
    marked = [i for i, m in enumerate(messages) if m.cache] if cache_prompt_prefix else []
    if len(marked) > MAX_CACHE_BREAKPOINTS:
        log.warning(
            "%d messages are marked cache=True; Anthropic accepts %d breakpoints, keeping the last ones",
            len(marked), MAX_CACHE_BREAKPOINTS,
        )
        marked = marked[-MAX_CACHE_BREAKPOINTS:]
    keep = set(marked)
    system: list[dict[str, Any]] = []
    api_messages: list[dict[str, Any]] = []
    for i, m in enumerate(messages):
        block: dict[str, Any] = {"type": "text", "text": m.content}
        if i in keep:
            block["cache_control"] = {"type": "ephemeral"}
        if m.role == "system":
            system.append(block)
        else:
            api_messages.append({"role": m.role, "content": [block]})
    if json_schema is not None:
        system.append({"type": "text", "text": schema_instruction(json_schema)})
    return system, api_messages


def usage_from_anthropic(body: dict[str, Any], model: str, *, provider: str = "anthropic", batch: bool = False) -> TokenUsage:
    """Normalise the ``usage`` of an Anthropic reply body (a dict) into :class:`TokenUsage` for one billed call.

    ``input_tokens = input_tokens + cache_read_input_tokens + cache_creation_input_tokens`` (all tokens);
    absent or null fields stay None (unknown), never 0; malformed ones become None with one logged
    warning naming them. ``batch=True`` prices it at the Message Batches rate (50% of list).
    """
    counts = TokenCounts(provider)
    usage = counts.obj(body, "usage")
    base_in = counts.count(usage, "input_tokens", "usage.input_tokens")
    read = counts.count(usage, "cache_read_input_tokens", "usage.cache_read_input_tokens")
    write = counts.count(usage, "cache_creation_input_tokens", "usage.cache_creation_input_tokens")
    out = counts.count(usage, "output_tokens", "usage.output_tokens")
    details = counts.obj(usage, "output_tokens_details", "usage.output_tokens_details")
    thinking = counts.count(details, "thinking_tokens", "usage.output_tokens_details.thinking_tokens")
    counts.warn()
    total_in = None if base_in is None else base_in + (read or 0) + (write or 0)
    tu = TokenUsage(
        input_tokens=total_in,
        output_tokens=out,
        cache_read_tokens=read,
        cache_write_tokens=write,
        reasoning_tokens=thinking,
        calls=1,
    )
    return tu.model_copy(update={"cost_usd": cost_usd(f"anthropic/{model}", tu, batch=batch)})


class AnthropicProvider(Provider):
    """Claude models through the Messages API.

    Parameters
    ----------
    model : str, optional
        Model name, default :data:`DEFAULT_ANTHROPIC_MODEL`.
    api_key : str, optional
        API key; default the ``ANTHROPIC_API_KEY`` environment variable. Never logged or shown in reprs.
    base_url : str, optional
        API root (default the SDK's, or ``ANTHROPIC_BASE_URL``); tests point it at a loopback server.
    timeout_s : float
        Per-request timeout in seconds.
    max_retries_sdk : int
        Retries done inside the SDK. Default 0: retries belong to :class:`RetryingProvider`; setting
        both stacks two retry layers.
    cache_prompt_prefix : bool
        Send ``cache_control`` on messages marked ``cache=True`` (default True).
    http_client : httpx2.Client, optional
        Custom HTTP client for the SDK (this SDK version sends through ``httpx2``, not ``httpx``).

    Raises
    ------
    AuthenticationFailed
        If no API key is given or found in ``ANTHROPIC_API_KEY``.
    MissingDependency
        If the ``anthropic`` SDK is not installed.
    """

    name = "anthropic"
    supports_json_schema = False
    needs_key = True
    key_env_var = "ANTHROPIC_API_KEY"
    default_model = DEFAULT_ANTHROPIC_MODEL

    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout_s: float = 60,
        max_retries_sdk: int = 0,
        cache_prompt_prefix: bool = True,
        http_client: Any = None,
    ) -> None:
        super().__init__(model)
        self._sdk = _import_sdk()
        key = api_key or os.environ.get(self.key_env_var or "")
        if not key:
            raise AuthenticationFailed(
                f"{self.spec}: no API key; pass api_key= or set {self.key_env_var}", provider=self.spec, model=self.model
            )
        self._secrets = (key,)
        register_secret(key)
        self.timeout_s = timeout_s
        self.cache_prompt_prefix = cache_prompt_prefix
        self.base_url = base_url
        self._client = self._sdk.Anthropic(
            api_key=key,
            base_url=base_url,
            timeout=timeout_s,
            max_retries=max_retries_sdk,
            http_client=http_client,
        )
        self._closed = threading.Event()

    supports_batch = True

    @property
    def client(self) -> Any:
        """The SDK client (``anthropic.Anthropic``), for the Message Batches backend
        (:mod:`agent_providers.batch`); it holds the key, never log it."""
        return self._client

    def request_body(self, messages: list[ChatMessage], *, json_schema: dict[str, Any] | None = None,
                     temperature: float | None = None, max_tokens: int | None = None, seed: int | None = None) -> dict[str, Any]:
        """The Messages API request body of a call (``model``, ``max_tokens``, ``messages``, ``system``,
        ``temperature``): what a direct call sends and what a Message Batches request carries as ``params``.
        ``seed`` is not supported by the API and is ignored."""
        system, api_messages = build_request(messages, json_schema=json_schema, cache_prompt_prefix=self.cache_prompt_prefix)
        body: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens or DEFAULT_MAX_TOKENS, "messages": api_messages}
        if system:
            body["system"] = system
        if temperature is not None:
            body["temperature"] = temperature
        return body

    def typed_error(self, exc: Exception) -> Exception:
        """The typed error (:func:`agent_providers.errors_map.map_sdk_error`) of an exception the SDK raised."""
        return map_sdk_error(exc, self._sdk, provider=self.spec, model=self.model, timeout_s=self.timeout_s, secrets=self._secrets)

    def _complete(self, messages, *, json_schema, temperature, max_tokens, seed) -> Completion:
        kwargs = self.request_body(messages, json_schema=json_schema, temperature=temperature, max_tokens=max_tokens)
        if "temperature" in kwargs:  # this SDK version's create() has no temperature argument
            kwargs["extra_body"] = {"temperature": kwargs.pop("temperature")}
        try:
            raw = self._client.messages.with_raw_response.create(**kwargs)
            body = raw.http_response.content
        except Exception as exc:
            raise self.typed_error(exc) from None
        return self.to_completion(body)

    def to_completion(self, raw: bytes | str | dict[str, Any], *, batch: bool = False) -> Completion:
        """A :class:`Completion` from a reply body (bytes, text or parsed dict); typed errors otherwise
        (every one carrying the reply's usage). ``batch=True``: a Message Batches result, priced at the
        batch rate."""
        msg = raw if isinstance(raw, dict) else json_object(raw, provider=self.spec, model=self.model, secrets=self._secrets)
        model = msg.get("model") if isinstance(msg.get("model"), str) and msg.get("model") else self.model
        usage = usage_from_anthropic(msg, model, provider=self.spec, batch=batch)
        ctx = {"provider": self.spec, "model": model, "usage": usage}
        content = msg.get("content")
        if content is None:
            content = []
        if not isinstance(content, list) or not all(isinstance(b, dict) for b in content):
            raise unreadable(f"'content' is {type(content).__name__}, not a list of blocks", **ctx)
        texts = [b.get("text") for b in content if b.get("type") == "text"]
        if not all(isinstance(t, str) for t in texts):
            raise unreadable("a text block's 'text' is not text", **ctx)
        text = "".join(texts)
        raw_stop = msg.get("stop_reason") if isinstance(msg.get("stop_reason"), str) else None
        stop = _STOP_REASONS.get(raw_stop or "", "unknown")
        if stop in ("stop", "unknown") and not text.strip():
            raise EmptyResponse(f"{self.spec}: empty answer (stop_reason={raw_stop!r})", stop_reason=raw_stop, **ctx)
        return Completion(text=text, usage=usage, model=model, provider=self.spec, stop_reason=stop)

    def close(self) -> None:
        """Close the SDK's HTTP client (safe to call twice)."""
        if not self._closed.is_set():
            self._closed.set()
            self._client.close()
