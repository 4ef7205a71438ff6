"""The timeline heads: per trip (version, latest timeline seq, pending
suggestion count), what a poll with nothing new and every live event read."""

from __future__ import annotations

from ..changes import TripEvent
from ..db import Database
from ..errors import NotFound
from ..shared_reads import FreshReads, SingleFlight

Head = tuple[int, int, int]


class Heads:
    """Per trip (trip version, latest seq, pending suggestion count), kept in
    memory so that a poll with nothing new costs no query. A committed change
    to what it counts (`changed`, the HEADS phase of app/changes.py, after
    the trips in memory) drops the entry. Concurrent misses share one query,
    read again (bounded: FreshReads) if a change was announced while it ran,
    so no poll sees less than a commit announced before it asked; under a
    steady stream of writes the last read is answered, not kept (the next
    change is announced to the pages anyway). One process owns the file: no
    timed re-check (docs/architecture.md)."""

    COUNTED = frozenset({"content", "timeline", "suggestions", "deleted"})
    MAX_ROWS = 4096

    def __init__(self, db: Database) -> None:
        self.db = db
        self._rows: dict[str, Head] = {}
        self._fresh = FreshReads()
        self._flight: SingleFlight = SingleFlight()

    def changed(self, event: TripEvent) -> None:
        if event.kinds() & self.COUNTED:
            self._rows.pop(event.trip_id, None)
            self._fresh.changed(event.trip_id)

    async def get(self, trip_id: str) -> Head:
        hit = self._rows.get(trip_id)
        if hit is not None:
            return hit
        return await self._flight.run(trip_id, lambda: self._read(trip_id))

    async def _read(self, trip_id: str) -> Head:
        head, clean = await self._fresh.read(trip_id, lambda: self._fetch(trip_id))
        if clean:
            if len(self._rows) >= self.MAX_ROWS:
                self._rows.clear()
            self._rows[trip_id] = head
        return head

    async def _fetch(self, trip_id: str) -> Head:
        row = await self.db.fetchone(
            "SELECT t.version, (SELECT COALESCE(MAX(seq), 0) FROM agent_messages WHERE trip_id = t.id), "
            "(SELECT COUNT(*) FROM agent_suggestions WHERE trip_id = t.id AND status = 'pending') "
            "FROM trips t WHERE t.id = ?", (trip_id,))
        if row is None:
            raise NotFound("Trip not found")
        return row[0], row[1], row[2]
