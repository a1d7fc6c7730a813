"""An asyncio event loop on a virtual clock, for scheduling tests that span many minutes in milliseconds.

``loop.time()`` starts at 0 and, whenever nothing is ready to run, jumps to the next timer instead of
waiting for it. Everything that waits through the loop (``asyncio.sleep``, ``call_at``, the limiter's
buckets) sees exactly the times it asked for, so a run is deterministic and machine load cannot change it.
Only for code that never waits on threads or sockets (the loop never blocks on I/O).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any


class VirtualClockLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        super().__init__()
        self.virtual_now = 0.0
        selector = self._selector  # the loop's own selector: polled without waiting
        real_select = selector.select

        def select(timeout: float | None = None):
            events = real_select(0)
            if not events:
                # the clock jumps to the next timer, and always moves on by at least a nanosecond, as a real
                # clock does (a timer set a few ulps ahead, or at "now", would otherwise never come due)
                self.virtual_now += max(timeout or 0.0, 1e-9)
            return events

        selector.select = select

    def time(self) -> float:
        return self.virtual_now


def run_virtual(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coro`` to completion on a fresh :class:`VirtualClockLoop`."""
    loop = VirtualClockLoop()
    try:
        return loop.run_until_complete(coro)
    finally:
        loop.close()
