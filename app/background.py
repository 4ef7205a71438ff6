"""Fire-and-forget work an app starts (agent evaluations, the forecast
watch), tracked so shutdown can wait for it."""

from __future__ import annotations

import asyncio
import logging
from typing import Any
from collections.abc import Awaitable

log = logging.getLogger("wayline")


class BackgroundWork:
    """Tracks fire-and-forget tasks so shutdown can wait for them (bounded).

    A `forever` task (a periodic loop) never ends on its own: shutdown cancels
    it first, then waits for the rest."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task] = set()
        self._forever: set[asyncio.Task] = set()

    def spawn(self, coro: Awaitable[Any], name: str = "background", *, forever: bool = False) -> asyncio.Task:
        task = asyncio.ensure_future(coro)
        task.set_name(name)
        self._tasks.add(task)
        if forever:
            self._forever.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        self._forever.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task %s failed: %r", task.get_name(), task.exception())

    async def drain(self, timeout_s: float = 10.0) -> None:
        """Stop the loops, wait for running work; cancel what is still running after the timeout."""
        loops = list(self._forever)
        for task in loops:
            task.cancel()
        await asyncio.gather(*loops, return_exceptions=True)
        while self._tasks:
            pending = list(self._tasks)
            done, still = await asyncio.wait(pending, timeout=timeout_s)
            if still:
                for task in still:
                    task.cancel()
                await asyncio.gather(*still, return_exceptions=True)
                return

    def __len__(self) -> int:
        """Work still running (the loops are not counted: they never finish)."""
        return len(self._tasks - self._forever)
