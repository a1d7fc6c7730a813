"""Anthropic Message Batches (https://docs.claude.com/en/docs/build-with-claude/batch-processing) through the
SDK's ``messages.batches``: ``create(requests=[{"custom_id", "params"}])``, ``retrieve(id)`` (ended when
``processing_status`` is ``"ended"``) and ``results(id)``, which streams the JSONL of ``results_url``:
``{"custom_id", "result": {"type": "succeeded", "message": {...}}}``, or ``"errored"`` with an error
object, or ``"canceled"`` / ``"expired"``. Limits: 100,000 requests or 256 MB per batch."""

from __future__ import annotations

import json
from typing import Any

from agent_schemas import BadRequest, Completion, ProviderOverloaded, ProviderTimeout, ReconcileError
from agent_providers.base import finish_completion
from agent_providers.batch import BatchBackend, BatchRequest, BatchStatus
from agent_providers.errors_map import error_for_status

#: Anthropic error types of an errored batch request and the HTTP status they stand for.
ERROR_STATUS = {"invalid_request_error": 400, "authentication_error": 401, "permission_error": 403,
                "not_found_error": 404, "request_too_large": 413, "rate_limit_error": 429, "api_error": 500,
                "overloaded_error": 529}


class AnthropicBatches(BatchBackend):
    """Message Batches of an :class:`agent_providers.AnthropicProvider` (module doc)."""

    max_requests = 100_000
    max_bytes = 200_000_000  # the API allows 256 MB

    def submit(self, requests: list[BatchRequest], *, label: str = "") -> str:
        body = [{"custom_id": r.custom_id, "params": self.adapter.request_body(r.messages, **r.options)} for r in requests]
        try:
            return self.adapter.client.messages.batches.create(requests=body).id
        except Exception as exc:
            raise self.adapter.typed_error(exc) from None

    def poll(self, batch_id: str) -> BatchStatus:
        try:
            b = self.adapter.client.messages.batches.retrieve(batch_id)
        except Exception as exc:
            raise self.adapter.typed_error(exc) from None
        return BatchStatus(batch_id, b.processing_status == "ended", b.processing_status, b.request_counts.to_dict())

    def results(self, batch_id: str, custom_ids: list[str]) -> dict[str, Completion | ReconcileError]:
        out: dict[str, Completion | ReconcileError] = {}
        try:
            lines = list(self.adapter.client.messages.batches.results(batch_id))
        except Exception as exc:
            raise self.adapter.typed_error(exc) from None
        for line in lines:
            out[line.custom_id] = self.read(line.to_dict())
        for cid in custom_ids:  # a request the results do not mention
            out.setdefault(cid, ProviderTimeout(f"{self.adapter.spec}: no result for the request in batch {batch_id}",
                                                provider=self.adapter.spec, model=self.adapter.model))
        return out

    def read(self, line: dict[str, Any]) -> Completion | ReconcileError:
        """The completion or typed error of one results line (a dict in the documented shape)."""
        spec, model = self.adapter.spec, self.adapter.model
        result = line.get("result") or {}
        kind = result.get("type")
        try:
            if kind == "succeeded":
                return finish_completion(self.adapter.to_completion(result.get("message") or {}, batch=True), 0.0, self.adapter)
            if kind == "errored":
                err = (result.get("error") or {}).get("error") or {}
                status = ERROR_STATUS.get(str(err.get("type")), 500)
                return error_for_status(status, f"{spec}: batch request errored: {err.get('type')}: {err.get('message')}",
                                        provider=spec, model=model)
            if kind in ("canceled", "expired"):
                return ProviderTimeout(f"{spec}: batch request {kind} before it was processed", provider=spec, model=model)
            return ProviderOverloaded(f"{spec}: unknown batch result type {kind!r}: {json.dumps(result)[:200]}", provider=spec, model=model)
        except ReconcileError as exc:  # an unusable answer (empty, refused, truncated): typed, with its usage
            return exc
        except Exception as exc:  # pragma: no cover - to_completion raises typed errors only
            return BadRequest(f"{spec}: unreadable batch result: {type(exc).__name__}: {exc}", provider=spec, model=model)
