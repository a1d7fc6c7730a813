"""A scripted world for questions of every kind: members, debaters and the supervisor answer each question in its
kind's answer form (:meth:`agent_schemas.kinds.base.QuestionKind.answer_of`), informed by the outcome to a degree
set by a hash of the question and the prompt, so that runs of multiple-choice and numeric questions have forecasts
that differ by method and score differently (the simulator of ``agent_providers`` answers binary questions only).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

import numpy as np

from agent_providers import ScriptedProvider
from agent_providers.roles import call_role
from agent_schemas import ChatMessage, Question
from agent_schemas.kinds.numeric.answers import PERCENTILES, cdf_from_percentiles
from agent_schemas.kinds.numeric.grid import Ranges, value_at

__all__ = ["informed_forecast", "provider"]

_Z = {5: -1.645, 10: -1.2816, 25: -0.6745, 50: 0.0, 75: 0.6745, 90: 1.2816, 95: 1.645}


def _u(*parts: str) -> float:
    """A uniform number in [0, 1) from a hash of ``parts``."""
    return int(hashlib.sha256("|".join(parts).encode()).hexdigest()[:8], 16) / 16**8


def informed_forecast(q: Question, salt: str) -> np.ndarray:
    """A forecast of ``q`` that knows its outcome more or less well (``salt`` varies it): for a multiple-choice
    question a mix of the outcome and equal odds; for a numeric one seven percentiles around a shifted outcome."""
    kind, spec = q.kind, q.spec
    w = 0.15 + 0.6 * _u(q.id, salt, "w")
    if kind.name == "numeric":
        t = float(Ranges.of([spec]).locations(np.array([float(q.outcome)]))[0])
        centre = min(max(t + (_u(q.id, salt, "c") - 0.5) * 0.4, 0.02), 0.98)
        sd = 0.03 + 0.12 * _u(q.id, salt, "s")
        locs = np.clip([centre + sd * _Z[p] for p in PERCENTILES], 0.001, 0.999)
        return cdf_from_percentiles(spec, value_at(spec, np.maximum.accumulate(locs)))
    if kind.name == "multiple_choice":
        k = len(spec.options)
        noise = np.array([_u(q.id, salt, str(i)) for i in range(k)]) + 0.2
        p = (1 - w) * noise / noise.sum()
        p[int(q.outcome)] += w
        return p / p.sum()
    return np.array([min(max(0.5 + (float(q.outcome) - 0.5) * w, 0.01), 0.99)])


def provider(questions: Sequence[Question]) -> ScriptedProvider:
    """A :class:`ScriptedProvider` answering every role for ``questions`` (found by their text in the prompt)."""
    by_text = {q.text: q for q in questions}

    def respond(messages: Sequence[ChatMessage]) -> str:
        role = call_role()
        user = "\n".join(m.content for m in messages[1:])
        q = next((q for text, q in by_text.items() if text in user), None)
        if q is None:
            raise AssertionError(f"no question of the world in the prompt: {user[:200]!r}")
        if role == "disagreements":
            return json.dumps({"disagreements": [{"topic": "spread", "description": "members differ", "agents": ["member-0"],
                                                  "query": q.text[:40]}]})
        answer = q.kind.answer_of(q.spec, informed_forecast(q, f"{role}|{messages[-1].content[-300:]}"))
        if role in ("bull", "bear"):
            return json.dumps({"argument": f"{role} case", "key_evidence": [], **answer})
        return json.dumps({"rationale": "scripted", "key_evidence": [], "confidence": "medium", **answer})

    return ScriptedProvider(responder=respond)
