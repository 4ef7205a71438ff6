"""Reads shared by concurrent callers: identical requests in flight at once
share one call (`SingleFlight`)."""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar
from collections.abc import Awaitable, Callable

T = TypeVar("T")


class SingleFlight:
    """Identical requests in flight at once share one call."""

    def __init__(self) -> None:
        self._tasks: dict[str, asyncio.Future[Any]] = {}

    async def run(self, key: str, make: Callable[[], Awaitable[T]]) -> T:
        task = self._tasks.get(key)
        if task is None:
            task = asyncio.ensure_future(make())
            self._tasks[key] = task

            def done(t: asyncio.Future[Any], k: str = key) -> None:
                self._tasks.pop(k, None)
                if not t.cancelled():
                    t.exception()  # retrieved here; every waiter re-raises it

            task.add_done_callback(done)
        # A cancelled waiter must not cancel the call the others wait for.
        return await asyncio.shield(task)
