"""The OpenAI Batch API (https://platform.openai.com/docs/guides/batch) through the SDK's ``files`` and
``batches``: the requests go up as one JSONL file (``files.create(purpose="batch")``) of lines
``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``; ``batches.create(input_file_id,
endpoint, completion_window="24h", metadata)``; ``batches.retrieve(id)`` (ended in ``completed``,
``failed``, ``expired`` or ``cancelled``); results in ``output_file_id`` and ``error_file_id`` as lines
``{"id", "custom_id", "response": {"status_code", "request_id", "body"}, "error"}``. A request in neither
file (an expired batch) is a :class:`ProviderTimeout`. Limits: 50,000 requests and 200 MB per file."""

from __future__ import annotations

import json
from typing import Any

from agent_schemas import BadRequest, Completion, ProviderTimeout, ReconcileError
from agent_providers.base import finish_completion
from agent_providers.batch import BatchBackend, BatchRequest, BatchStatus
from agent_providers.errors_map import error_for_status

ENDPOINT = "/v1/chat/completions"
ENDED = ("completed", "failed", "expired", "cancelled")


class OpenAIBatches(BatchBackend):
    """The Batch API of an :class:`agent_providers.OpenAIProvider` (module doc)."""

    max_requests = 50_000
    max_bytes = 180_000_000  # the API allows 200 MB

    def submit(self, requests: list[BatchRequest], *, label: str = "") -> str:
        lines = [json.dumps({"custom_id": r.custom_id, "method": "POST", "url": ENDPOINT,
                             "body": self.adapter.request_body(r.messages, **r.options)}) for r in requests]
        client = self.adapter.client
        try:
            f = client.files.create(file=("batch.jsonl", ("\n".join(lines) + "\n").encode("utf-8")), purpose="batch")
            b = client.batches.create(input_file_id=f.id, endpoint=ENDPOINT, completion_window="24h",
                                      metadata={"label": label[:500]} if label else None)
        except Exception as exc:
            raise self.adapter.typed_error(exc) from None
        return b.id

    def poll(self, batch_id: str) -> BatchStatus:
        try:
            b = self.adapter.client.batches.retrieve(batch_id)
        except Exception as exc:
            raise self.adapter.typed_error(exc) from None
        counts = b.request_counts.to_dict() if b.request_counts is not None else {}
        return BatchStatus(batch_id, b.status in ENDED, b.status, counts)

    def _lines(self, file_id: str | None) -> list[dict[str, Any]]:
        if not file_id:
            return []
        text = self.adapter.client.files.content(file_id).text
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def results(self, batch_id: str, custom_ids: list[str]) -> dict[str, Completion | ReconcileError]:
        spec, model = self.adapter.spec, self.adapter.model
        try:
            b = self.adapter.client.batches.retrieve(batch_id)
            lines = self._lines(b.output_file_id) + self._lines(b.error_file_id)
        except Exception as exc:
            raise self.adapter.typed_error(exc) from None
        out: dict[str, Completion | ReconcileError] = {line["custom_id"]: self.read(line) for line in lines}
        if b.status == "failed":  # the input file was refused: every request fails with the batch's errors
            errors = "; ".join(e.message or "" for e in (b.errors.data or [])) if b.errors else ""
            for cid in custom_ids:
                out.setdefault(cid, BadRequest(f"{spec}: the batch was refused: {errors}", provider=spec, model=model))
        for cid in custom_ids:
            out.setdefault(cid, ProviderTimeout(f"{spec}: batch {b.status} before the request was processed", provider=spec, model=model))
        return out

    def read(self, line: dict[str, Any]) -> Completion | ReconcileError:
        """The completion or typed error of one output or error file line (a dict in the documented shape)."""
        spec, model = self.adapter.spec, self.adapter.model
        response, error = line.get("response") or {}, line.get("error")
        status = int(response.get("status_code") or 0)
        try:
            if status == 200:
                return finish_completion(self.adapter.to_completion(response.get("body") or {}, batch=True), 0.0, self.adapter)
            body_error = ((response.get("body") or {}).get("error") or {}) if isinstance(response.get("body"), dict) else {}
            message = body_error.get("message") or (error or {}).get("message") or "no message"
            return error_for_status(status or 500, f"{spec}: batch request failed: HTTP {status or '-'}: {message}",
                                    provider=spec, model=model)
        except ReconcileError as exc:  # an unusable answer (empty, refused, truncated): typed, with its usage
            return exc
