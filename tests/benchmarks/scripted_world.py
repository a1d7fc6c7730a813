"""A deterministic scripted 'world' for harness tests: answers depend only on the prompt.

Forecasters, bull, bear and supervisor get well-formed JSON whose probability is a hash of the
question line and the role, so runs are reproducible whatever the scheduling order.
"""

from __future__ import annotations

import hashlib
import json

from agent_providers import ScriptedProvider


def _h(*parts: str) -> int:
    return int(hashlib.sha256("|".join(parts).encode()).hexdigest()[:8], 16)


def _question_line(text: str) -> str:
    for line in text.splitlines():
        if line.startswith("- Question:"):
            return line
    return text[:200]


def respond(messages) -> str:
    user = "\n".join(m.content for m in messages[1:])
    q = _question_line(user)
    if "You are the BULL" in user or "You are the BEAR" in user:
        side = "bull" if "You are the BULL" in user else "bear"
        p = 55 + _h(q, side) % 30 if side == "bull" else 15 + _h(q, side) % 30
        return json.dumps({"argument": f"{side} case", "p_yes_percent": p, "key_evidence": []})
    if "You are the SUPERVISOR" in user:
        if '"disagreements"' in user:
            return json.dumps({"disagreements": [{"topic": "timing", "description": "early vs late", "agents": ["member-0"], "query": q[12:60]}]})
        conf = ["high", "medium", "low"][_h(q, "conf") % 3]
        return json.dumps({"p_yes_percent": 10 + _h(q, "sup") % 80, "confidence": conf, "rationale": "weighed"})
    return json.dumps({"p_yes_percent": 5 + _h(q, messages[-1].content) % 90, "rationale": "scripted", "key_evidence": []})


def provider(latency_s: float = 0.0) -> ScriptedProvider:
    """A scripted provider answering every role deterministically (optional latency per call, seconds)."""
    return ScriptedProvider(responder=respond, latency_s=latency_s)
