"""The provider contract: one small adapter interface, capabilities declared as class attributes.

An adapter implements :meth:`Provider._acomplete` (async) or :meth:`Provider._complete` (sync); the base
class supplies the other form, the public :meth:`Provider.complete` / :meth:`Provider.acomplete`
entry points, message normalisation and latency measurement. Retries, caching and usage accounting
wrap adapters (:mod:`agent_providers.retry`, :mod:`agent_providers.cache`); they are not re-written
per provider (pattern from simonw/llm ``Model.execute`` and inspect_ai ``ModelAPI.generate``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from agent_schemas import ChatMessage, Completion, ResponseRefused, ResponseTruncated, TokenUsage

MessagesLike = Sequence[ChatMessage | dict[str, Any]]


def normalise_messages(messages: MessagesLike) -> list[ChatMessage]:
    """Accept :class:`ChatMessage` objects or ``{"role", "content"}`` dicts; return ChatMessages.

    Raises
    ------
    ValueError
        If ``messages`` is empty or a dict lacks ``role``/``content``.
    """
    out: list[ChatMessage] = []
    for i, m in enumerate(messages):
        if isinstance(m, ChatMessage):
            out.append(m)
        elif isinstance(m, dict):
            try:
                out.append(ChatMessage(**m))
            except Exception as exc:  # pydantic ValidationError
                raise ValueError(f"messages[{i}] is not a valid chat message: {m!r} ({exc})") from exc
        else:
            raise ValueError(f"messages[{i}] must be a ChatMessage or dict, got {type(m).__name__}")
    if not out:
        raise ValueError("messages is empty: at least one message is required")
    return out


class Provider:
    """Base class of every provider adapter and wrapper.

    Class attributes declare capabilities:

    ``name``
        Registry prefix, e.g. ``"anthropic"``.
    ``supports_json_schema``
        True when ``json_schema`` constrains the output (grammar or structured outputs); otherwise the
        schema is only described in the prompt and the caller must still validate.
    ``needs_key`` / ``key_env_var``
        Whether an API key is required and which environment variable holds it.
    ``default_model``
        Model used when the spec names none.
    ``supports_batch``
        True when the provider has a batch API at batch prices (Anthropic Message Batches, the OpenAI
        Batch API): :mod:`agent_providers.batch` can send its calls as one batch.

    Instances have ``model`` (the model name) and ``spec`` (the registry string that recreates them).
    """

    name: ClassVar[str] = "base"
    supports_json_schema: ClassVar[bool] = False
    needs_key: ClassVar[bool] = False
    key_env_var: ClassVar[str | None] = None
    default_model: ClassVar[str] = ""
    supports_batch: ClassVar[bool] = False

    def __init__(self, model: str | None = None) -> None:
        self.model = model or self.default_model

    @property
    def spec(self) -> str:
        """Registry string for this provider, e.g. ``"openai/gpt-4.1-mini"``."""
        return f"{self.name}/{self.model}"

    def __repr__(self) -> str:  # never includes keys
        return f"{type(self).__name__}(spec={self.spec!r})"

    # --- to implement (one of the two) -------------------------------------------------------
    async def _acomplete(
        self,
        messages: list[ChatMessage],
        *,
        json_schema: dict[str, Any] | None,
        temperature: float | None,
        max_tokens: int | None,
        seed: int | None,
    ) -> Completion:
        return await asyncio.to_thread(
            self._complete,
            messages,
            json_schema=json_schema,
            temperature=temperature,
            max_tokens=max_tokens,
            seed=seed,
        )

    def _complete(
        self,
        messages: list[ChatMessage],
        *,
        json_schema: dict[str, Any] | None,
        temperature: float | None,
        max_tokens: int | None,
        seed: int | None,
    ) -> Completion:
        if type(self)._acomplete is Provider._acomplete:
            raise NotImplementedError(f"{type(self).__name__} implements neither _complete nor _acomplete")
        return run_sync(
            self._acomplete(
                messages, json_schema=json_schema, temperature=temperature, max_tokens=max_tokens, seed=seed
            )
        )

    # --- public API ----------------------------------------------------------------------------
    async def acomplete(
        self,
        messages: MessagesLike,
        *,
        json_schema: dict[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> Completion:
        """Send ``messages`` and return a :class:`Completion` (async).

        Parameters
        ----------
        messages : sequence of ChatMessage or dict
            The conversation; a ``system`` message first if any.
        json_schema : dict, optional
            JSON schema the answer should follow (enforced where ``supports_json_schema``).
        temperature : float, optional
            Sampling temperature; provider default when None.
        max_tokens : int, optional
            Maximum generated tokens; provider default when None.
        seed : int, optional
            Sampling seed where the provider supports one.

        Raises
        ------
        ProviderError subclasses
            ``RateLimited``, ``ProviderOverloaded``, ``ProviderTimeout``, ``ProviderConnectionError``,
            ``ResponseTruncated``, ``ResponseRefused``, ``EmptyResponse``, ``UnreadableResponse``,
            ``AuthenticationFailed``, ``BadRequest``, ``UnexpectedProviderError``. Errors raised after the
            provider answered carry the usage it billed (:func:`spent_usage`).
        """
        msgs = normalise_messages(messages)
        t0 = time.perf_counter()
        try:
            completion = await self._acomplete(
                msgs, json_schema=json_schema, temperature=temperature, max_tokens=max_tokens, seed=seed
            )
        except asyncio.CancelledError as exc:  # the caller stopped waiting with the request in flight
            if not isinstance(self, WrappingProvider):
                keep_spent(exc, spent_usage(exc) + TokenUsage(unanswered_calls=1))
            raise
        return finish_completion(completion, time.perf_counter() - t0, self)

    def complete(
        self,
        messages: MessagesLike,
        *,
        json_schema: dict[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> Completion:
        """Synchronous form of :meth:`acomplete` (same parameters, same errors)."""
        msgs = normalise_messages(messages)
        t0 = time.perf_counter()
        completion = self._complete(
            msgs, json_schema=json_schema, temperature=temperature, max_tokens=max_tokens, seed=seed
        )
        return finish_completion(completion, time.perf_counter() - t0, self)

    def close(self) -> None:
        """Release resources (HTTP clients, model weights). Safe to call twice."""


class WrappingProvider(Provider):
    """Base of the provider wrappers (retry, cache, recording, fault injection, timing).

    A wrapper is a provider around ``inner``: it reports the inner provider's identity (``spec``,
    ``model``, ``name``, ``supports_json_schema``, ``needs_key``, ``key_env_var``), so ledgers, traces,
    cache keys and the leakage audit see the adapter that answered, and :meth:`close` closes the inner
    provider. By default every call passes through unchanged; a wrapper overrides :meth:`_acomplete` /
    :meth:`_complete` and reaches the inner provider with ``self.inner.acomplete(messages, **options)``,
    where ``options`` are the call options ``json_schema``, ``temperature``, ``max_tokens`` and ``seed``.

    Parameters
    ----------
    inner : Provider
        The provider doing the work (an adapter or another wrapper).
    """

    def __init__(self, inner: Provider) -> None:
        super().__init__(inner.model)
        self.inner = inner
        self.name = inner.name  # type: ignore[misc]
        self.supports_json_schema = inner.supports_json_schema  # type: ignore[misc]
        self.needs_key = inner.needs_key  # type: ignore[misc]
        self.key_env_var = inner.key_env_var  # type: ignore[misc]

    @property
    def spec(self) -> str:
        """The inner provider's spec (a wrapper is invisible in ledgers and traces)."""
        return self.inner.spec

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"

    async def _acomplete(self, messages: list[ChatMessage], **options: Any) -> Completion:
        return await self.inner.acomplete(messages, **options)

    def _complete(self, messages: list[ChatMessage], **options: Any) -> Completion:
        return self.inner.complete(messages, **options)

    def close(self) -> None:
        """Close the inner provider."""
        self.inner.close()


def spent_usage(exc: BaseException) -> TokenUsage:
    """Usage a failed or cancelled call still spent: the billed responses behind ``exc`` (an empty, refused,
    truncated or unreadable answer, summed over retries by the retry layer) and, for a call cancelled with its
    request in flight (``asyncio.CancelledError``), that request as an ``unanswered_calls`` count; or an empty
    usage (``calls=0``)."""
    u = getattr(exc, "usage", None)
    return u if isinstance(u, TokenUsage) else TokenUsage()


def keep_spent(exc: BaseException, usage: TokenUsage) -> None:
    """Attach ``usage`` (what the call behind ``exc`` spent, :func:`spent_usage`) to ``exc`` as it propagates,
    so every layer above it (the retry layer, the spend meter, an agent's :class:`UsageMeter`) can count it.
    Works for any exception, ``asyncio.CancelledError`` and ``KeyboardInterrupt`` included; a class with
    ``__slots__`` that refuses the attribute keeps nothing."""
    with contextlib.suppress(AttributeError):
        exc.usage = usage  # type: ignore[attr-defined]


#: ``await ask(messages, options) -> (text, usage)``: how an agent's call reaches a model. ``options`` are
#: the call options (``json_schema``, ``temperature``, ``max_tokens``, ``seed``). The agents' default is
#: :func:`provider_ask` of their provider; the framework implementations pass their own model client.
Ask = Callable[[list[ChatMessage], dict[str, Any]], Awaitable[tuple[str, TokenUsage]]]


def provider_ask(provider: Provider) -> Ask:
    """The :data:`Ask` that sends a call to ``provider`` (:meth:`Provider.acomplete`) and returns its text and usage."""

    async def ask(messages: list[ChatMessage], options: dict[str, Any]) -> tuple[str, TokenUsage]:
        c = await provider.acomplete(messages, **options)
        return c.text, c.usage

    return ask


@dataclass
class UsageMeter:
    """The usage one agent run has spent so far, charged as each call finishes.

    The caller owns it, so a deadline that cancels the run, or a later step that fails, still finds the
    usage of every call that finished before (a total returned at the end would be lost with the run).
    """

    usage: TokenUsage = field(default_factory=TokenUsage)

    def charge(self, usage: TokenUsage) -> None:
        """Add the usage of one finished (or failed but billed) call."""
        self.usage = self.usage + usage

    async def call(self, ask: Ask, messages: list[ChatMessage], options: dict[str, Any]) -> str:
        """One model call through ``ask``; its usage is charged the moment it finishes, before the answer is
        parsed. A failed call is charged what it still spent (:func:`spent_usage`) and its error re-raised; so
        is a call cut by a deadline or a cancellation (``asyncio.CancelledError``): the billed attempts it
        made before, and the request in flight as an unanswered call."""
        try:
            text, usage = await ask(messages, options)
        except BaseException as exc:  # CancelledError too: a deadline keeps what the cut call spent
            self.charge(spent_usage(exc))
            raise
        self.charge(usage)
        return text


def finish_completion(completion: Completion, elapsed_s: float, provider: Provider) -> Completion:
    """The last step of every call (:meth:`Provider.complete` / :meth:`Provider.acomplete`): turn an
    unusable stop reason into its typed error with the answer's usage (``"length"``:
    :class:`ResponseTruncated`; ``"content_filter"``: :class:`ResponseRefused`), and set ``latency_s``
    (seconds) unless the adapter measured it or the answer came from the cache."""
    if completion.stop_reason == "length":
        raise ResponseTruncated(
            f"{provider.spec}: the answer stopped at the token limit; it is incomplete and was not parsed",
            stop_reason="length",
            text=completion.text,
            usage=completion.usage,
            provider=provider.spec,
            model=completion.model,
        )
    if completion.stop_reason == "content_filter":
        raise ResponseRefused(
            f"{provider.spec}: the model refused or the content filter stopped the answer; it was not parsed"
            + (f" (refusal: {completion.text[:200]!r})" if completion.text else ""),
            stop_reason="content_filter",
            text=completion.text,
            usage=completion.usage,
            provider=provider.spec,
            model=completion.model,
        )
    if completion.latency_s == 0.0 and not completion.from_cache:
        completion = completion.model_copy(update={"latency_s": elapsed_s})
    return completion


def run_sync(coro: Any) -> Any:
    """Run ``coro`` to completion from sync code and return its result (or raise its exception).

    Works also when called inside a running event loop (a notebook cell): the coroutine then runs in a
    fresh event loop on a worker thread, since a running loop cannot be re-entered, in a copy of the caller's
    context (so a call's role label, :func:`agent_providers.roles.calling_as`, goes along). Every ``run`` /
    ``forecast`` method of the agents and the harness is ``run_sync(self.a...(...))``.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:  # the caller's context goes along (call roles)
        return pool.submit(contextvars.copy_context().run, asyncio.run, coro).result()
