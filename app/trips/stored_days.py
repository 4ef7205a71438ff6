"""A trip's days as encoded, kept in SQLite (migration 0036), so its first
read after a restart is the trip's load and a join of stored bytes instead
of computing every leg and encoding every day (issue 26).

What is stored: each day's bytes as the TripDto view holds them (every
`mine` as 0), only for days whose stops have no votes or comments (those
change without the trip's version), with `legs_until`, the clock time after
which the day's legs would be asked again (an outage's estimate after
`estimate_ttl_s`, a cached route after `route_ttl_s`; estimates without a
routes provider never). `trip_bodies.version` says which version of the trip
the days are for, and they are read only while it equals `trips.version`
(`store.load_stored_days`): a write that moves the version without storing
them again leaves them unused, and the trip is built as before. A day is
also built when its stops have votes or comments by then, or its legs are
due (`dto._usable`).

When: behind the writes, not in them. Every view installed marks its trip;
a moment later (`delay_s`) one transaction on the writer stores, for every
marked trip, the days that differ from what is stored (by the encoding's
serial number), checked against the trip's version inside it. So an op's
transaction writes nothing more, and a burst of ops on a trip stores its
days once. A trip read for the first time stores all its days the same way.
What was not stored yet when the process stops is stored on the way out
(`close`); after a crash those trips are built on their first read.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from ..db import Database, Tx
from .day_parts import DayPart
from .dto import TripCache, View
from .state import TripState, TripStates

log = logging.getLogger("wayline")
FOREVER = 1e18   # estimates without a routes provider are never asked again


@dataclass
class _Plan:
    state: TripState
    trip_id: str
    version: int
    full: bool                                  # the stored rows are unknown: replace them all
    since: int | None                           # the stored version an incremental plan builds on
    rows: list[tuple[str, str, bytes, float]]   # (day id, trip id, body, legs_until)
    gone: list[tuple[str]]                      # day ids whose stored row is no longer right
    disk: dict[str, int]                        # what is stored once this commits


class StoredDays:
    def __init__(self, db: Database, trips: TripStates, trip_cache: TripCache, *, has_routes: bool,
                 estimate_ttl_s: float, route_ttl_s: float, delay_s: float = 1.0):
        self.db, self.trips = db, trips
        self.has_routes, self.estimate_ttl_s, self.route_ttl_s = has_routes, estimate_ttl_s, route_ttl_s
        self.delay_s = delay_s
        self._marked: dict[str, None] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._running: asyncio.Task[None] | None = None
        trip_cache.on_install = self.mark

    def mark(self, state: TripState, view: View) -> None:
        """A view was installed: store what it changed, a moment from now."""
        if state.disk_version == view.trip.version and state.disk is not None and all(
                state.disk.get(part.day[0]) == part.serial or not part.quiet() for part in view.parts):
            return   # nothing to store (a read of a trip loaded with all its days)
        self._marked[view.trip.id] = None
        if self._timer is None and self._running is None:
            self._timer = asyncio.get_running_loop().call_later(self.delay_s, self._start)

    def _start(self) -> None:
        self._timer = None
        self._running = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        try:
            await self.flush(busy_later=True)
        except Exception:   # the days stay unstored: a first read builds them, as before
            log.exception("storing the trips' days failed")
        finally:
            self._running = None
            if self._marked and self._timer is None:
                self._timer = asyncio.get_running_loop().call_later(self.delay_s, self._start)

    async def close(self) -> None:
        """Store what is marked now (the process is stopping)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._running is not None:
            await self._running
        try:
            await self.flush()
        except Exception:
            log.exception("storing the trips' days failed")

    async def flush(self, *, busy_later: bool = False) -> None:
        """Store the marked trips' days. `busy_later`: a trip with an op on
        its way to the writer is left marked for the next round instead:
        its store would queue behind that op and find the version moved (a
        trip edited without pause was planned and refused every second)."""
        marked, self._marked = list(self._marked), {}
        plans = []
        for trip_id in marked:
            state = self.trips.cached(trip_id)
            if busy_later and state is not None and state.head is not None:
                self._marked[trip_id] = None
            elif (plan := self._plan(trip_id)) is not None:
                plans.append(plan)
        if plans:
            await self.db.write(lambda tx: _store(tx, plans))

    def _legs_until(self, part: DayPart) -> float:
        if part.stored_until is not None:
            return float(part.stored_until)
        if not self.has_routes:
            return FOREVER
        return float(part.legs_time + (self.estimate_ttl_s if part.estimated else self.route_ttl_s))

    def _plan(self, trip_id: str) -> _Plan | None:
        state = self.trips.cached(trip_id)
        view = state.view if state is not None else None
        if state is None or view is None or view.trip is not state.trip:
            return None   # gone, or its view is behind: the next view installed marks it again
        disk = state.disk
        full = disk is None
        rows, gone, after = [], [], {}
        for day, part in zip(view.trip.days, view.parts):
            if disk is not None and disk.get(day.id) == part.serial:
                after[day.id] = part.serial
            elif part.quiet():
                rows.append((day.id, trip_id, part.body, self._legs_until(part)))
                after[day.id] = part.serial
            elif disk is not None and day.id in disk:
                gone.append((day.id,))
        if not full and not rows and not gone and state.disk_version == view.trip.version:
            return None
        return _Plan(state, trip_id, view.trip.version, full, state.disk_version, rows, gone, after)


def _store(tx: Tx, plans: list[_Plan]) -> None:
    """On the writer: each trip's days, if the trip is still at the version
    they are for (and, for an incremental plan, the rows it builds on are
    the stored ones); what is stored is told to the trips after the commit."""
    done: list[_Plan] = []
    unknown: list[_Plan] = []
    for plan in plans:
        if tx.fetchval("SELECT version FROM trips WHERE id = ?", (plan.trip_id,)) != plan.version:
            continue   # an op moved it meanwhile: that op's view marks the trip again
        stamp = tx.fetchval("SELECT version FROM trip_bodies WHERE trip_id = ?", (plan.trip_id,))
        if not plan.full and stamp != plan.since:
            unknown.append(plan)   # not what this process stored: replace them all next time
            continue
        if plan.full:
            tx.execute("DELETE FROM day_bodies WHERE trip_id = ?", (plan.trip_id,))
        if plan.gone:
            tx.executemany("DELETE FROM day_bodies WHERE day_id = ?", plan.gone)
        if plan.rows:
            tx.executemany("INSERT INTO day_bodies (day_id, trip_id, body, legs_until) VALUES (?, ?, ?, ?) "
                           "ON CONFLICT (day_id) DO UPDATE SET body = excluded.body, legs_until = excluded.legs_until",
                           plan.rows)
        tx.execute("INSERT INTO trip_bodies (trip_id, version) VALUES (?, ?) "
                   "ON CONFLICT (trip_id) DO UPDATE SET version = excluded.version", (plan.trip_id, plan.version))
        done.append(plan)

    def told() -> None:
        for plan in done:
            plan.state.disk, plan.state.disk_version = plan.disk, plan.version
        for plan in unknown:
            plan.state.disk = None

    tx.after_commit(told)
