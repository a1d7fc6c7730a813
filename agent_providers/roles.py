"""The role of a request: which step of the pipeline a call to a provider is, told by the caller.

The agents label each call they make (:func:`calling_as`): a forecaster's search queries (``"queries"``) and its
forecast (``"forecaster"``), a debater's turn (``"bull"`` / ``"bear"``), the supervisor's list of disagreements
(``"disagreements"``) and its reconciled forecast (``"decision"``), and its weights of a hub's members from their
records (``"member_weights"``). These are finer than the usage ledger's roles
(``forecaster``, ``bull``, ``bear``, ``supervisor``), which count tokens; the label says what is asked.

Providers that answer by role without a model (the simulator, the scripted world) read the label with
:func:`call_role`, so rewording a prompt never changes what they answer. Model adapters ignore it: the label is
not sent to any API, not part of a cache key and not recorded. It travels with the caller's context
(:class:`contextvars.ContextVar`): through ``await``, into tasks created inside the ``with`` block, into
``asyncio.to_thread``, the rate limiter's worker threads and :func:`agent_providers.run_sync`; not across
processes or HTTP. As with any context variable, a generator that yields inside the block lends the label to
its consumer until it resumes, and blocks must be left in the order they were entered.

>>> with calling_as("bull"):
...     call_role()
'bull'
>>> call_role() is None
True
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Literal, get_args

__all__ = ["CALL_ROLES", "CallRole", "call_role", "calling_as"]

CallRole = Literal["queries", "forecaster", "bull", "bear", "disagreements", "decision", "member_weights"]
#: Every role a pipeline call can have, in pipeline order.
CALL_ROLES: tuple[str, ...] = get_args(CallRole)

_ROLE: ContextVar[str | None] = ContextVar("forecast_reconcile_call_role", default=None)


@contextmanager
def calling_as(role: CallRole) -> Iterator[None]:
    """Label every provider call made inside the block (in this context) as ``role``.

    Raises
    ------
    ValueError
        If ``role`` is not one of :data:`CALL_ROLES`.
    """
    if role not in CALL_ROLES:
        raise ValueError(f"unknown call role {role!r}; one of {', '.join(CALL_ROLES)}")
    token = _ROLE.set(role)
    try:
        yield
    finally:
        _ROLE.reset(token)


def call_role() -> str | None:
    """The role the current call was labelled with (:func:`calling_as`), or None for an unlabelled call."""
    return _ROLE.get()
