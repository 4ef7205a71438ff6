"""What every outside provider (Google, Open-Meteo, OpenStreetMap) shares:
the SQLite answer cache and in-flight sharing of identical requests.

`provider_cache` (migration 0002) holds one row per request, keyed by a hash
of what was asked (never of a key); `expires_at` is on the services clock, so
a test can age entries. Expired rows are ignored on read and pruned now and
then on write."""

from __future__ import annotations

import hashlib
import json
from typing import Any
from collections.abc import Callable, Iterable

from ..db import Database, Tx

PRUNE_EVERY = 200            # cache writes between deletions of expired rows


def request_key(kind: str, mask: str, body: Any) -> str:
    canonical = json.dumps({"mask": mask, "body": body}, sort_keys=True, separators=(",", ":"))
    return f"{kind}:{hashlib.sha256(canonical.encode()).hexdigest()}"


class ProviderCache:
    def __init__(self, db: Database, clock: Callable[[], float]):
        self.db, self.clock = db, clock
        self._writes = 0

    async def get(self, key: str) -> tuple[bool, Any]:
        row = await self.db.fetchone(
            "SELECT value FROM provider_cache WHERE key = ? AND expires_at > ?", (key, self.clock())
        )
        return (False, None) if row is None else (True, json.loads(row[0]))

    async def get_many(self, keys: list[str]) -> dict[str, tuple[Any, float]]:
        """The unexpired entries of `keys`: {key: (value, expires_at)}, one query."""
        rows = await self.db.fetchall(
            "SELECT key, value, expires_at FROM provider_cache "
            "WHERE key IN (SELECT value FROM json_each(?)) AND expires_at > ?", (json.dumps(keys), self.clock()))
        return {key: (json.loads(value), expires_at) for key, value, expires_at in rows}

    async def put(self, key: str, value: Any, expires_at: float) -> None:
        await self.put_many([(key, value, expires_at)])

    async def put_many(self, items: Iterable[tuple[str, Any, float]]) -> None:
        now = self.clock()
        rows = [(k, json.dumps(v, separators=(",", ":")), exp, now) for k, v, exp in items]
        if not rows:
            return
        self._writes += 1
        prune = self._writes % PRUNE_EVERY == 0

        def work(tx: Tx) -> None:
            tx.executemany(
                "INSERT INTO provider_cache (key, value, expires_at, created_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value, "
                "expires_at = excluded.expires_at, created_at = excluded.created_at",
                rows,
            )
            if prune:
                tx.execute("DELETE FROM provider_cache WHERE expires_at <= ?", (now,))

        await self.db.write(work)
