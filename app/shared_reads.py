"""Reads shared by concurrent callers: identical requests in flight at once
share one call (`SingleFlight`); a read that must not be older than a change
announced before it was asked for is read again, a bounded number of times,
while changes land during it (`FreshReads`)."""

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


READ_TRIES = 3


class FreshReads:
    """Reads that must not be older than a change announced before they were
    asked for, shared by concurrent callers (the trips in memory, the
    timeline heads): `changed(key)` is called by the change subscriber; `read`
    reads, and reads again while a change of the key was announced during
    the read, at most `tries` times. The answer is `(value, clean)`: clean
    when no change landed during the last read, so it may be kept; under a
    steady stream of changes the last read is answered but not kept (the next
    change is announced anyway)."""

    def __init__(self, tries: int = READ_TRIES) -> None:
        self.tries = tries
        self._reading: dict[str, int] = {}   # keys being read -> changes announced meanwhile

    def changed(self, key: str) -> None:
        if key in self._reading:
            self._reading[key] += 1

    def reading(self, key: str) -> bool:
        return key in self._reading

    async def read(self, key: str, fetch: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        try:
            for _ in range(self.tries - 1):
                self._reading[key] = 0
                value = await fetch()
                if not self._reading[key]:
                    return value, True
            self._reading[key] = 0
            value = await fetch()
            return value, not self._reading[key]
        finally:
            self._reading.pop(key, None)
