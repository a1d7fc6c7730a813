"""The scripted world: deterministic answers for every role, a function of the request's role and prompt only.

The notebooks, the framework comparison (``frameworks``), the tests and the perf scripts run on it. Every role
gets well-formed JSON (in the order of its answer schema) whose probability is a hash of the question line and
the role (for members also the persona line), so runs are reproducible whatever the scheduling order, and every
step of the pipeline is exercised:

* forecasters answer 5-94 % (a query-writing call gets a forecaster's answer too, which has no queries: the
  member searches with the question text only);
* the bull 55-84 % and the bear 15-44 %: they never reach consensus, so the debate plays all its rounds;
* the supervisor names one disagreement ("timing", its query taken from the question line), then answers
  10-89 % with a confidence of high, medium or low.

The role is the one the agent labelled its call with (:func:`agent_providers.roles.calling_as`), never read
from the prompt's wording; an unlabelled call gets a forecaster's answer.

>>> from agent_schemas import ChatMessage
>>> respond([ChatMessage(role="system", content="s"), ChatMessage(role="user", content="- Question: Will it?")], role="bull")
'{"argument": "bull case", "key_evidence": [], "p_yes_percent": 68}'
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from agent_providers.roles import call_role
from agent_providers.scripted import ScriptedProvider
from agent_schemas import ChatMessage

__all__ = ["provider", "respond"]


def _h(*parts: str) -> int:
    return int(hashlib.sha256("|".join(parts).encode()).hexdigest()[:8], 16)


def respond(messages: Sequence[ChatMessage], role: str | None = None) -> str:
    """The answer to a request of ``role`` (default: the call's label, :func:`agent_providers.roles.call_role`)
    prompted by ``messages``, as JSON text: a debater's for ``"bull"``/``"bear"``, the supervisor's for
    ``"disagreements"``/``"decision"``, a forecaster's for any other role or none."""
    role = role or call_role()
    user = "\n".join(m.content for m in messages[1:])
    q = next((line for line in user.splitlines() if line.startswith("- Question:")), user[:200])
    if role in ("bull", "bear"):
        p = 55 + _h(q, role) % 30 if role == "bull" else 15 + _h(q, role) % 30
        return json.dumps({"argument": f"{role} case", "key_evidence": [], "p_yes_percent": p})
    if role == "disagreements":
        return json.dumps({"disagreements": [{"topic": "timing", "description": "early vs late", "agents": ["member-0"], "query": q[12:60]}]})
    if role == "decision":
        conf = ("high", "medium", "low")[_h(q, "conf") % 3]
        return json.dumps({"rationale": "weighed", "key_evidence": [], "confidence": conf, "p_yes_percent": 10 + _h(q, "sup") % 80})
    return json.dumps({"rationale": "scripted", "key_evidence": [], "p_yes_percent": 5 + _h(q, messages[-1].content) % 90})


def provider(latency_s: float = 0.0) -> ScriptedProvider:
    """A :class:`ScriptedProvider` answering every call with :func:`respond` after ``latency_s`` seconds."""
    return ScriptedProvider(responder=respond, latency_s=latency_s)
