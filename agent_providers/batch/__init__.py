"""Provider batch APIs at batch prices: Anthropic Message Batches and the OpenAI Batch API.

A :class:`BatchBackend` sends many requests of one provider as one batch (:meth:`~BatchBackend.submit`),
tells whether it has ended (:meth:`~BatchBackend.poll`) and reads its results
(:meth:`~BatchBackend.results`): one :class:`Completion` per request, priced at the batch rate (50% of
list, genai-prices' batch prices), or the typed error of a request that failed. Requests are built by the
adapter itself (``request_body``), so a batched call sends exactly what a direct call would, and answers
are read by the adapter (``to_completion``), with the same typed errors and usage.

:class:`BatchCollector` (:mod:`agent_providers.batch.collector`) gathers the calls of many agents into
batches; :class:`BatchingProvider` is the provider those agents call. Providers without a batch API
(``supports_batch`` False: OpenAI-compatible servers, the embedded model, the simulator, the scripted
provider) raise :class:`BatchUnsupported` from :func:`backend_for`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_schemas import ChatMessage, Completion, ReconcileError

__all__ = ["BatchBackend", "BatchRequest", "BatchStatus", "BatchUnsupported", "backend_for"]


class BatchUnsupported(ReconcileError):
    """The provider has no batch API (``supports_batch`` is False)."""


@dataclass(frozen=True)
class BatchRequest:
    """One call of a batch: ``custom_id`` (unique in the batch; 1-64 characters of ``[A-Za-z0-9_-]``),
    the messages and the call options (``json_schema``, ``temperature``, ``max_tokens``, ``seed``)."""

    custom_id: str
    messages: list[ChatMessage]
    options: dict[str, Any]


@dataclass(frozen=True)
class BatchStatus:
    """Where a batch is: ``ended`` once no request is processing; ``state`` as the provider says it
    (Anthropic ``processing_status``; OpenAI ``status``); ``counts`` the provider's request counts."""

    batch_id: str
    ended: bool
    state: str
    counts: dict[str, int]


class BatchBackend:
    """The batch API of one adapter (subclasses: :class:`AnthropicBatches`, :class:`OpenAIBatches`).

    Attributes
    ----------
    adapter : Provider
        The adapter whose requests are batched (its ``client``, ``request_body`` and ``to_completion``).
    max_requests : int
        Most requests per batch (the provider's limit).
    max_bytes : int
        Most bytes of requests per batch (the provider's limit, with margin).
    """

    max_requests: int = 10_000
    max_bytes: int = 100_000_000

    def __init__(self, adapter: Any) -> None:
        self.adapter = adapter

    @property
    def spec(self) -> str:
        return self.adapter.spec

    def submit(self, requests: list[BatchRequest], *, label: str = "") -> str:
        """Create a batch of ``requests`` and return its id (``label`` goes into metadata where supported)."""
        raise NotImplementedError

    def poll(self, batch_id: str) -> BatchStatus:
        """The batch's status."""
        raise NotImplementedError

    def results(self, batch_id: str, custom_ids: list[str]) -> dict[str, Completion | ReconcileError]:
        """``custom_id`` -> the completion (batch prices) or the typed error, of an ended batch; every one of
        ``custom_ids`` (the requests sent) gets an entry (:class:`ProviderTimeout` when the results lack it)."""
        raise NotImplementedError


def backend_for(adapter: Any) -> BatchBackend:
    """The batch backend of ``adapter`` (an Anthropic or OpenAI adapter).

    Raises
    ------
    BatchUnsupported
        For a provider without a batch API (the message names it).
    """
    if getattr(adapter, "supports_batch", False):
        if adapter.name == "anthropic":
            from agent_providers.batch.anthropic import AnthropicBatches

            return AnthropicBatches(adapter)
        if adapter.name == "openai":
            from agent_providers.batch.openai import OpenAIBatches

            return OpenAIBatches(adapter)
    raise BatchUnsupported(f"{adapter.spec} has no batch mode: --batch works with the Anthropic (Message Batches) and "
                           "OpenAI (Batch API) providers; run without --batch", provider=adapter.spec)


from agent_providers.batch.collector import BatchCollector, BatchingProvider  # noqa: E402

__all__ += ["BatchCollector", "BatchingProvider"]
