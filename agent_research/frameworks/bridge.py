"""Adapters from our :class:`agent_providers.Provider` contract to each framework's model interface.

* :class:`LangChainProviderModel` is a LangChain ``BaseChatModel`` (what LangGraph nodes call);
* :class:`AgentsSDKProviderModel` is an OpenAI Agents SDK ``Model`` (what ``Runner.run`` calls).

Both convert the framework's messages to :class:`agent_schemas.ChatMessage` losslessly (role, content and
the ``cache`` flag), pass ``json_schema``, ``temperature``, ``max_tokens`` and ``seed`` through, and hand
the provider's exact :class:`agent_schemas.TokenUsage` back inside the framework's own usage fields
(LangChain ``usage_metadata`` and ``response_metadata["reconcile_usage"]``; Agents SDK ``Usage`` and
``ModelResponse.raw_usage``), so a framework run fills the same ledger as the plain-Python pipeline. No
framework default client is ever created: the frameworks only see these adapters.

:class:`TimedProvider` and :class:`ProviderClock` measure the time spent inside provider calls, at the
same layer for every implementation; framework overhead = wall time - busy time of the clock.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from typing import Any

from agent_providers import Provider, WrappingProvider
from agent_schemas import ChatMessage, Completion, TokenUsage

#: Environment variables that switch off framework telemetry and tracing exports (set by
#: :func:`disable_telemetry`). LangSmith tracing is opt-in but is forced off here; the Agents SDK
#: exports traces to OpenAI by default, which would call the network.
TELEMETRY_OFF_ENV: dict[str, str] = {
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGSMITH_TRACING_V2": "false",
    "OPENAI_AGENTS_DISABLE_TRACING": "1",
    "OTEL_SDK_DISABLED": "true",
    "CREWAI_DISABLE_TELEMETRY": "true",
}


def disable_telemetry() -> None:
    """Switch off every framework's tracing/telemetry export for this process (see :data:`TELEMETRY_OFF_ENV`).

    Also calls ``agents.set_tracing_disabled(True)`` when the OpenAI Agents SDK is installed.
    """
    os.environ.update(TELEMETRY_OFF_ENV)
    try:
        from agents import set_tracing_disabled
    except ImportError:
        return
    set_tracing_disabled(True)


# --- timing ----------------------------------------------------------------------------------------
class ProviderClock:
    """Collects the ``(start, end)`` intervals (``time.perf_counter`` seconds) of provider calls.

    Calls may overlap (ensemble members run concurrently); :meth:`busy_s` measures the union of the
    intervals, i.e. the wall time during which at least one provider call was in flight.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.intervals: list[tuple[float, float]] = []

    def add(self, start: float, end: float) -> None:
        with self._lock:
            self.intervals.append((start, end))

    @property
    def n_calls(self) -> int:
        """Provider calls recorded (count)."""
        return len(self.intervals)

    def busy_s(self, start: float = float("-inf"), end: float = float("inf")) -> float:
        """Length in seconds of the union of call intervals, clipped to ``[start, end]``."""
        with self._lock:
            spans = sorted((max(a, start), min(b, end)) for a, b in self.intervals)
        total, cur_a, cur_b = 0.0, None, None
        for a, b in spans:
            if b <= a:
                continue
            if cur_b is None or a > cur_b:
                if cur_b is not None:
                    total += cur_b - cur_a
                cur_a, cur_b = a, b
            else:
                cur_b = max(cur_b, b)
        if cur_b is not None:
            total += cur_b - cur_a
        return total


class TimedProvider(WrappingProvider):
    """Wrap ``inner`` and record the interval of every call in ``clock`` (failed calls included).

    Its identity is the inner provider's (:class:`agent_providers.WrappingProvider`), so ledgers and
    traces do not change.
    """

    def __init__(self, inner: Provider, clock: ProviderClock) -> None:
        super().__init__(inner)
        self.clock = clock

    async def _acomplete(self, messages, **options) -> Completion:
        t0 = time.perf_counter()
        try:
            return await self.inner.acomplete(messages, **options)
        finally:
            self.clock.add(t0, time.perf_counter())

    def _complete(self, messages, **options) -> Completion:
        t0 = time.perf_counter()
        try:
            return self.inner.complete(messages, **options)
        finally:
            self.clock.add(t0, time.perf_counter())


def usage_from_dump(data: dict[str, Any] | None) -> TokenUsage:
    """Rebuild the exact :class:`TokenUsage` a bridge stored in a framework response.

    Raises
    ------
    ValueError
        When the response carries no usage from a bridge (it did not come through one).
    """
    if not isinstance(data, dict):
        raise ValueError(f"framework response carries no reconcile usage (got {data!r}): was the model a bridge adapter?")
    return TokenUsage.model_validate(data)


# --- LangChain / LangGraph -------------------------------------------------------------------------
def _langchain():
    try:
        from langchain_core.language_models.chat_models import BaseChatModel
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("LangGraph support needs: pip install 'forecast-reconcile[frameworks]'") from exc
    return BaseChatModel


def to_langchain_messages(messages: list[ChatMessage]) -> list[Any]:
    """ChatMessages -> LangChain messages; the ``cache`` flag travels in ``additional_kwargs``."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    kinds = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
    return [kinds[m.role](content=m.content, additional_kwargs={"cache": True} if m.cache else {}) for m in messages]


def from_langchain_messages(messages: list[Any]) -> list[ChatMessage]:
    """LangChain messages -> ChatMessages (inverse of :func:`to_langchain_messages`).

    Raises
    ------
    ValueError
        For a message type other than system, human or ai, or non-text content.
    """
    roles = {"system": "system", "human": "user", "ai": "assistant"}
    out = []
    for i, m in enumerate(messages):
        if m.type not in roles or not isinstance(m.content, str):
            raise ValueError(f"messages[{i}]: unsupported LangChain message {m.type!r} with {type(m.content).__name__} content")
        out.append(ChatMessage(role=roles[m.type], content=m.content, cache=bool(m.additional_kwargs.get("cache", False))))
    return out


def _make_langchain_model_class():
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from pydantic import ConfigDict

    BaseChatModel = _langchain()

    class LangChainProviderModel(BaseChatModel):
        """A LangChain chat model backed by one of our providers (see module doc).

        Call options (``model.ainvoke(msgs, json_schema=..., temperature=..., max_tokens=..., seed=...)``
        or ``model.bind(...)``) go to :meth:`Provider.acomplete`. Provider errors
        (:class:`agent_schemas.ReconcileError` children) propagate unchanged.
        """

        model_config = ConfigDict(arbitrary_types_allowed=True)
        provider: Any

        @property
        def _llm_type(self) -> str:
            return "forecast-reconcile-provider"

        @property
        def _identifying_params(self) -> dict[str, Any]:
            return {"spec": self.provider.spec}

        @staticmethod
        def _result(c: Completion) -> Any:
            u = c.usage
            meta: dict[str, Any] = {"input_tokens": u.input_tokens or 0, "output_tokens": u.output_tokens or 0,
                                    "total_tokens": u.total_tokens or 0}
            if u.cache_read_tokens is not None or u.cache_write_tokens is not None:
                meta["input_token_details"] = {"cache_read": u.cache_read_tokens or 0, "cache_creation": u.cache_write_tokens or 0}
            if u.reasoning_tokens is not None:
                meta["output_token_details"] = {"reasoning": u.reasoning_tokens}
            msg = AIMessage(content=c.text, usage_metadata=meta, response_metadata={
                "model_name": c.model, "provider": c.provider, "stop_reason": c.stop_reason,
                "latency_s": c.latency_s, "from_cache": c.from_cache, "reconcile_usage": u.model_dump()})
            return ChatResult(generations=[ChatGeneration(message=msg)])

        @staticmethod
        def _params(kwargs: dict[str, Any]) -> dict[str, Any]:
            allowed = {"json_schema", "temperature", "max_tokens", "seed"}
            extra = set(kwargs) - allowed
            if extra:
                raise ValueError(f"unsupported call options for a provider model: {sorted(extra)}")
            return {k: kwargs.get(k) for k in allowed}

        def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> Any:
            c = self.provider.complete(from_langchain_messages(messages), **self._params(kwargs))
            return self._result(c)

        async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs) -> Any:
            c = await self.provider.acomplete(from_langchain_messages(messages), **self._params(kwargs))
            return self._result(c)

    return LangChainProviderModel


_LC_CLASS: Any = None


def langchain_model(provider: Provider) -> Any:
    """A LangChain ``BaseChatModel`` that calls ``provider`` (class built on first use, so that importing
    this module does not need LangChain)."""
    global _LC_CLASS
    if _LC_CLASS is None:
        _LC_CLASS = _make_langchain_model_class()
    return _LC_CLASS(provider=provider)


def langchain_usage(message: Any) -> TokenUsage:
    """Exact :class:`TokenUsage` of an ``AIMessage`` returned by :func:`langchain_model`."""
    return usage_from_dump(message.response_metadata.get("reconcile_usage"))


# --- OpenAI Agents SDK -----------------------------------------------------------------------------
def _agents_model_base():
    try:
        from agents.models.interface import Model
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("OpenAI Agents SDK support needs: pip install 'forecast-reconcile[frameworks]'") from exc
    return Model


def from_agents_input(system_instructions: str | None, items: str | list[Any], *, cache_system: bool = True) -> list[ChatMessage]:
    """Agents SDK (instructions, input items) -> ChatMessages.

    The instructions become the system message (``cache=cache_system``: our system prompt is the start of
    the stable prompt prefix, :func:`agent_tools.case_facts.stable_prefix`); input items must be
    ``{"role", "content"}`` messages with text content and may carry ``"cache": True``.

    Raises
    ------
    ValueError
        For an item that is not a text message (tool calls and the like are not bridged).
    """
    out = [ChatMessage(role="system", content=system_instructions, cache=cache_system)] if system_instructions else []
    if isinstance(items, str):
        return out + [ChatMessage(role="user", content=items)]
    for i, it in enumerate(items):
        role, content = (it.get("role"), it.get("content")) if isinstance(it, dict) else (None, None)
        if role not in ("system", "user", "assistant", "developer") or not isinstance(content, str):
            raise ValueError(f"input[{i}]: only text messages are bridged, got {it!r}")
        out.append(ChatMessage(role="system" if role == "developer" else role, content=content, cache=bool(it.get("cache", False))))
    return out


def to_agents_input(messages: list[ChatMessage]) -> tuple[str | None, list[dict[str, Any]]]:
    """ChatMessages -> (instructions, input items); inverse of :func:`from_agents_input` for prompts that
    open with one system message."""
    system = messages[0].content if messages and messages[0].role == "system" else None
    rest = messages[1:] if system is not None else messages
    items = [{"role": m.role, "content": m.content, **({"cache": True} if m.cache else {})} for m in rest]
    return system, items


_RESPONSE_IDS = itertools.count(1)


def _make_agents_model_class():
    from agents.items import ModelResponse
    from agents.usage import InputTokensDetails, OutputTokensDetails, Usage
    from openai.types.responses import ResponseOutputMessage, ResponseOutputText

    Model = _agents_model_base()

    class AgentsSDKProviderModel(Model):
        """An OpenAI Agents SDK ``Model`` backed by one of our providers (see module doc).

        ``ModelSettings.temperature`` and ``max_tokens`` are passed on; ``extra_args`` may hold
        ``json_schema`` and ``seed``. Tools and handoffs are not bridged (our agents search in code).
        Provider errors propagate unchanged through ``Runner.run``.
        """

        def __init__(self, provider: Provider, *, cache_system: bool = True) -> None:
            self.provider = provider
            self.cache_system = cache_system

        async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs, tracing,
                               *, previous_response_id=None, conversation_id=None, prompt=None):
            if tools or handoffs:
                raise ValueError("AgentsSDKProviderModel does not bridge tools or handoffs")
            extra = dict(model_settings.extra_args or {})
            unknown = set(extra) - {"json_schema", "seed"}
            if unknown:
                raise ValueError(f"unsupported extra_args for a provider model: {sorted(unknown)}")
            c = await self.provider.acomplete(
                from_agents_input(system_instructions, input, cache_system=self.cache_system),
                json_schema=extra.get("json_schema"), temperature=model_settings.temperature,
                max_tokens=model_settings.max_tokens, seed=extra.get("seed"))
            u = c.usage
            usage = Usage(
                requests=1, input_tokens=u.input_tokens or 0, output_tokens=u.output_tokens or 0, total_tokens=u.total_tokens or 0,
                input_tokens_details=InputTokensDetails(cached_tokens=u.cache_read_tokens or 0, cache_write_tokens=u.cache_write_tokens or 0),
                output_tokens_details=OutputTokensDetails(reasoning_tokens=u.reasoning_tokens or 0),
            )
            rid = f"reconcile-{next(_RESPONSE_IDS)}"
            msg = ResponseOutputMessage(id=f"msg-{rid}", type="message", role="assistant", status="completed",
                                        content=[ResponseOutputText(type="output_text", text=c.text, annotations=[])])
            return ModelResponse(output=[msg], usage=usage, response_id=rid, raw_usage={"reconcile_usage": u.model_dump()})

        def stream_response(self, *args, **kwargs):
            raise NotImplementedError("streaming is not bridged: the pipeline needs whole JSON answers")

    return AgentsSDKProviderModel


_AGENTS_CLASS: Any = None


def agents_sdk_model(provider: Provider, *, cache_system: bool = True) -> Any:
    """An OpenAI Agents SDK ``Model`` that calls ``provider`` (class built on first use)."""
    global _AGENTS_CLASS
    if _AGENTS_CLASS is None:
        _AGENTS_CLASS = _make_agents_model_class()
    return _AGENTS_CLASS(provider, cache_system=cache_system)


def agents_sdk_usage(result: Any) -> TokenUsage:
    """Exact :class:`TokenUsage` of a ``RunResult`` whose model calls all went through :func:`agents_sdk_model`."""
    return TokenUsage.sum(usage_from_dump((r.raw_usage or {}).get("reconcile_usage")) for r in result.raw_responses)
