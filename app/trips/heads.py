"""The timeline heads: per trip (version, latest timeline seq, pending
suggestion count), what a poll with nothing new and every live event read."""

from __future__ import annotations

from ..db import Database
from ..errors import NotFound
from ..shared_reads import SingleFlight


class Heads:
    """Per trip (trip version, latest seq, pending suggestion count), kept in
    memory so that a poll with nothing new costs no query. The database's
    after-commit change signal (`changed`) drops an entry whenever a write
    touches what it counts. Concurrent misses share one query, read again if
    a change was announced while it ran, so no poll sees less than a commit
    announced before it asked. One process owns the file: no timed re-check
    (docs/architecture.md)."""

    COUNTED = frozenset({"content", "timeline", "suggestions", "deleted"})
    MAX_ROWS = 4096

    def __init__(self, db: Database) -> None:
        self.db = db
        self._rows: dict[str, tuple[int, int, int]] = {}
        self._reading: dict[str, int] = {}   # trips being read: changes announced meanwhile
        self._flight = SingleFlight()

    def changed(self, trip_id: str, kinds: frozenset[str]) -> None:
        if kinds & self.COUNTED:
            self._rows.pop(trip_id, None)
            if trip_id in self._reading:
                self._reading[trip_id] += 1

    async def get(self, trip_id: str) -> tuple[int, int, int]:
        hit = self._rows.get(trip_id)
        if hit is not None:
            return hit
        return await self._flight.run(trip_id, lambda: self._read(trip_id))

    READ_TRIES = 3

    async def _read(self, trip_id: str) -> tuple[int, int, int]:
        """Read again while changes land during the read (so a poller that
        joined after one sees it), a few times at most: under a steady stream
        of writes the last read is answered, uncached (the next change is
        announced to the pages anyway)."""
        try:
            for _ in range(self.READ_TRIES):
                self._reading[trip_id] = 0
                row = await self.db.fetchone(
                    "SELECT t.version, (SELECT COALESCE(MAX(seq), 0) FROM agent_messages WHERE trip_id = t.id), "
                    "(SELECT COUNT(*) FROM agent_suggestions WHERE trip_id = t.id AND status = 'pending') "
                    "FROM trips t WHERE t.id = ?", (trip_id,))
                if row is None:
                    raise NotFound("Trip not found")
                head = (row[0], row[1], row[2])
                if not self._reading[trip_id]:
                    if len(self._rows) >= self.MAX_ROWS:
                        self._rows.clear()
                    self._rows[trip_id] = head
                    return head
            return head
        finally:
            del self._reading[trip_id]
