"""Chat messages and provider completions: the two values that cross the provider contract."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_schemas.usage import TokenUsage


class ChatMessage(BaseModel):
    """One chat message sent to a provider."""

    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"] = Field(description="Speaker of the message.")
    content: str = Field(description="Message text.")
    cache: bool = Field(
        False,
        description=(
            "Mark the end of a stable prompt prefix for provider prompt caching (Anthropic cache_control). "
            "Ignored by providers without explicit caching."
        ),
    )


StopReason = Literal["stop", "length", "tool_use", "content_filter", "unknown"]


class Completion(BaseModel):
    """What one provider call returns.

    ``stop_reason`` is normalised: Anthropic ``end_turn``/``stop_sequence`` and OpenAI ``stop`` become
    ``"stop"``; Anthropic ``max_tokens`` and OpenAI ``length`` become ``"length"`` (adapters raise
    :class:`agent_schemas.errors.ResponseTruncated` instead of returning such a completion).
    """

    text: str = Field(description="The model's answer text.")
    usage: TokenUsage = Field(description="Tokens and cost of this call (original usage on a cache hit).")
    model: str = Field(description="Model name as reported by the provider (or as requested when not reported).")
    provider: str = Field(description="Provider spec that served the call, e.g. 'local/smollm2'.")
    stop_reason: StopReason = Field("stop", description="Normalised stop reason.")
    latency_s: float = Field(0.0, ge=0, description="Wall time of the call in seconds (0 for cache hits is not assumed: measured).")
    from_cache: bool = Field(False, description="True when served by the response cache: no tokens were spent again.")
    attempts: int = Field(1, ge=0, description="Provider attempts made by the retry layer (1 = no retry; 0 = cache hit).")
