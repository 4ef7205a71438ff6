"""The trips in memory: one process owns the SQLite file, so each active trip's
aggregate, members, votes and comment counts are kept here, exact, and ops
validate against them instead of reloading the trip.

Exact means: what is here equals what is committed. The pieces:

- A `TripState.trip` is never changed in place. An op works on
  `trip.edit()` (copy on write, trips/model.py) and the new trip replaces the
  old one when its `OpsApplied` is heard after the COMMIT (`changed`, the
  first phase of app/changes.py). A failed or rolled-back op announces
  nothing, so memory stays equal to the database with nothing to undo.
- Ops on one trip take its lock (`lock`) to validate and queue their
  transaction, so each validates against the trip the op before it makes
  (`head`, while that one is still queued on the writer); each transaction
  checks that the database holds the version it was validated against, so
  a failure before it sends it back to validate again. Ops on different
  trips only share the database's writer thread.
- Every other change arrives the same way (`changed`): votes and comments
  mark the social part for one shared re-read; member changes, deletion and
  any content change not published here drop the trip (the next use loads it
  again). An op that validated
  against a trip dropped meanwhile sees `invalid` inside its transaction and
  starts again.
- A load (one read transaction on a reader's thread) is shared by
  concurrent callers and kept only if nothing about the trip changed while
  it ran (FreshReads: read again, a bounded number of times).

Memory is bounded by bytes (`WAYLINE_TRIP_CACHE_MB`). When it is full,
trips with their aggregate beyond `HOT_SHARE` of it are kept as their
TripDto's bytes only (`Shed`, about half the memory: reads need only the
bytes; an op, a vote or any other change loads the trip again, from its
stored days), least recently used first; then bytes-only trips are let go.
Edits made to the file by anything but this process are not seen until a
restart (docs/architecture.md).
"""

from __future__ import annotations

import asyncio
import sqlite3
import weakref
from functools import partial
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

from ..db import Database
from ..errors import NotFound
from ..changes import TripEvent
from ..shared_reads import FreshReads, SingleFlight
from . import store
from .events import OpsApplied
from .model import Trip
from .ops import OpRules

# What a trip costs before its TripDto is first built (then the view's size
# is used): measured with tracemalloc (5 x 8 to 30 x 40 trips), rounded up.
BYTES_PER_STOP = 700
BYTES_PER_TRIP = 10_000
# The share of a full budget left to trips with their aggregate (the rest:
# trips kept as bytes only, for reads). A quarter of 64 MiB is about 40
# trips of 30 x 15 or 400 of 5 x 8 with their aggregate (docs/performance.md).
HOT_SHARE = 0.25


@dataclass(eq=False)
class Shed:
    """A trip kept only as its TripDto's bytes for reads (trips/dto.py's
    `slim_view`): its aggregate, members and votes were let go. It is
    exactly what was committed while it is here: any change to the trip
    drops it (`TripStates.changed`)."""
    view: Any
    roles: dict[str, str]
    size: int


@dataclass(eq=False)
class TripState:
    trip: Trip
    members: list[dict[str, str]]          # {userId, username, displayName, role}, in join order
    votes: dict[str, dict[str, int]]       # stop id -> {user id: value}
    comment_counts: dict[str, int]         # stop id -> count
    # {userId, displayName} of people the expenses still name who are no longer
    # members (they left or were removed): the balances keep their amounts, so the
    # page can say who is owed instead of "a former member" for each of them.
    former: list[dict[str, str]] = field(default_factory=list)
    roles: dict[str, str] = field(init=False)
    social_serial: int = 0                 # bumped when votes or comment counts are re-read
    social_stale: bool = False
    invalid: bool = False                  # dropped: ops that validated against it start again
    head: Trip | None = None               # the trip once the ops queued on the writer commit
    view: Any = None                       # the TripDto's parts (trips/dto.py), built on first read
    lock: asyncio.Lock | None = None       # TripStates.lock's, held here so it lives as long as the trip
    # The days stored for the version loaded (trips/stored_days.py), until
    # the first build uses them or an op moves the trip on: {day id: (body,
    # legs_until)}, for the trip at `stored_version` only.
    stored: dict[str, tuple[bytes, float]] | None = None
    stored_version: int | None = None
    # What the stored days hold, at `disk_version`: {day id: the serial of
    # the DayPart stored, or 0 for a row stored but not in use}; None: unknown.
    disk: dict[str, int] | None = None
    disk_version: int | None = None
    size: int = 0

    def __post_init__(self) -> None:
        self.roles = {m["userId"]: m["role"] for m in self.members}

    def role_of(self, user_id: str) -> str | None:
        return self.roles.get(user_id)

    def name_of(self, user_id: str) -> str | None:
        for m in self.members:
            if m["userId"] == user_id:
                return m["displayName"]
        return None


def _social(conn: sqlite3.Connection, trip_id: str) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    votes: dict[str, dict[str, int]] = {}
    for stop_id, user_id, value in conn.execute("SELECT stop_id, user_id, value FROM votes WHERE trip_id = ?",
                                                (trip_id,)):
        votes.setdefault(stop_id, {})[user_id] = value
    counts = dict(conn.execute("SELECT stop_id, COUNT(*) FROM comments WHERE trip_id = ? GROUP BY stop_id",
                               (trip_id,)).fetchall())
    return votes, counts


def _former_members(conn: sqlite3.Connection, trip: Trip, member_ids: set[str]) -> list[dict[str, str]]:
    """Who the expenses name (paid by, in a split) that is not a member now,
    by display name; an account that is gone has no row and no name."""
    named: set[str] = set()
    for e in trip.expenses:
        named.add(e.paid_by)
        named.update(e.split.get("members") or ())
        named.update(e.split.get("shares") or ())
    gone = sorted(named - member_ids)
    if not gone:
        return []
    rows = conn.execute(f"SELECT id, display_name FROM users WHERE id IN ({','.join('?' * len(gone))}) "
                        "ORDER BY display_name, id", gone)
    return [{"userId": r[0], "displayName": r[1]} for r in rows]


def read_state(conn: sqlite3.Connection, trip_id: str) -> TripState:
    """Everything a trip's state holds, in one read transaction (one snapshot)."""
    conn.execute("BEGIN")
    try:
        trip = store.load_trip(conn, trip_id)
        members = [{"userId": r[0], "username": r[1], "displayName": r[2], "role": r[3]} for r in conn.execute(
            "SELECT u.id, u.username, u.display_name, m.role FROM members m JOIN users u ON u.id = m.user_id "
            "WHERE m.trip_id = ? ORDER BY m.joined_at, u.username", (trip_id,))]
        votes, counts = _social(conn, trip_id)
        former = _former_members(conn, trip, {m["userId"] for m in members})
        stored = store.load_stored_days(conn, trip_id, trip.version)
    finally:
        conn.execute("COMMIT")
    state = TripState(trip, members, votes, counts, former, stored=stored, stored_version=trip.version)
    if stored is not None:
        state.disk, state.disk_version = dict.fromkeys(stored, 0), trip.version
    return state


def _estimate(trip: Trip) -> int:
    return BYTES_PER_TRIP + BYTES_PER_STOP * sum(len(d.stops) for d in trip.days)


class TripStates:
    def __init__(self, db: Database, budget_bytes: int):
        self.db = db
        self.budget_bytes = budget_bytes
        self.op_rules = OpRules()   # the deployment's quota and origin for ops (app/lifecycle.py sets them)
        self.bytes = 0                         # trips with their aggregate
        self.shed_bytes = 0                    # trips kept as bytes only
        self._states: OrderedDict[str, TripState] = OrderedDict()
        self._shed: OrderedDict[str, Shed] = OrderedDict()
        # Makes a trip's bytes-only view and its size, or None (its view is
        # not current, an op is under way): set by trips/dto.py's TripCache.
        self.slim: Callable[[TripState], tuple[Any, int] | None] | None = None
        self._fresh = FreshReads()             # loads must not be older than a change announced before them
        self._flight = SingleFlight()
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    def __len__(self) -> int:
        """Trips in memory with their aggregate (`held` counts the others too)."""
        return len(self._states)

    def held(self) -> int:
        return len(self._states) + len(self._shed)

    def shed(self, trip_id: str) -> Shed | None:
        """The trip if it is kept as bytes only (a read of it counts as a use)."""
        found = self._shed.get(trip_id)
        if found is not None:
            self._shed.move_to_end(trip_id)
        return found

    def resize_shed(self, trip_id: str, shed: Shed, size: int) -> None:
        """A bytes-only trip kept more (a compressed variant): count it."""
        if self._shed.get(trip_id) is shed:
            self.shed_bytes += size - shed.size
            shed.size = size
            self._evict()

    # -- reading ------------------------------------------------------------------

    async def get(self, trip_id: str) -> TripState:
        """The trip's current state (loaded on first use); NotFound if there is no such trip."""
        state = self._states.get(trip_id)
        if state is not None and not state.social_stale:
            self._states.move_to_end(trip_id)
            return state
        return await self._flight.run(trip_id, lambda: self._refresh(trip_id))

    async def trip(self, trip_id: str) -> Trip:
        """The current trip, shared by every reader: read it, never change it
        (ops change a `trip.edit()` copy). NotFound if there is no such trip."""
        return (await self.get(trip_id)).trip

    def cached(self, trip_id: str) -> TripState | None:
        state = self._states.get(trip_id)
        return state if state is not None and not state.social_stale else None

    async def membership(self, trip_id: str, user_id: str) -> tuple[str | None, int | None]:
        """(role, version) of a user on a trip; (None, None) for non-members.
        A trip kept as bytes only answers from what it kept (no load)."""
        if trip_id not in self._states:
            shed = self.shed(trip_id)
            if shed is not None:
                role = shed.roles.get(user_id)
                return (role, shed.view.trip.version) if role is not None else (None, None)
        try:
            state = await self.get(trip_id)
        except NotFound:
            return None, None
        role = state.role_of(user_id)
        return (role, state.trip.version) if role is not None else (None, None)

    async def _refresh(self, trip_id: str) -> TripState:
        """Load the trip, or re-read its votes and comment counts, read again
        (bounded: FreshReads) if it changed meanwhile, so a caller never gets
        data older than a commit announced before it asked. A read that kept
        being overtaken is answered but not kept."""
        state = self._states.get(trip_id)
        if state is not None and state.social_stale:
            (votes, counts), clean = await self._fresh.read(trip_id, partial(self.db.read, _social, trip_id))
            if self._states.get(trip_id) is state:
                if not clean:
                    return TripState(state.trip, state.members, votes, counts, state.former)
                state.votes, state.comment_counts = votes, counts
                state.social_serial += 1
                state.social_stale = False
                return state
            # Dropped meanwhile (a member or content change): loaded whole below.
        elif state is not None:
            return state
        fresh, clean = await self._fresh.read(trip_id, partial(self.db.read, read_state, trip_id))
        if clean:
            self._keep(trip_id, fresh, _estimate(fresh.trip))
        return fresh

    # -- writing ------------------------------------------------------------------

    def lock(self, trip_id: str) -> asyncio.Lock:
        """Held by an op while it validates and queues its transaction."""
        lock = self._locks.get(trip_id)
        if lock is None:
            lock = self._locks[trip_id] = asyncio.Lock()
            state = self._states.get(trip_id)
            if state is not None:   # kept while the trip is, not made again for every op
                state.lock = lock
        return lock

    def changed(self, event: TripEvent) -> None:
        """After a commit (the CACHES phase, first): an op's trip is published
        if it was validated against the trip here; anything else that changed
        the content, the members or the trip's existence drops the trip (the
        next use loads it again); votes and comments mark the social part for
        one shared re-read."""
        trip_id, kinds = event.trip_id, event.kinds()
        self._fresh.changed(trip_id)
        self._drop_shed(trip_id)   # a change of any kind: the next use loads it again
        state = self._states.get(trip_id)
        if isinstance(event, OpsApplied) and state is not None and state.trip is event.before:
            state.trip = event.after
            state.stored = None   # for the version before: not this trip's days any more
        elif "deleted" in kinds or "members" in kinds or "content" in kinds:
            # Only the cached state is exact: an op whose trip was let go
            # meanwhile missed the signals since (a member's removal, say).
            state = self._states.pop(trip_id, None)
            if state is not None:
                state.invalid = True
                self.bytes -= state.size
        if "social" in kinds and state is not None and self._states.get(trip_id) is state:
            state.social_stale = True

    def resize(self, state: TripState, size: int) -> None:
        """The state's view was (re)built: account its real size."""
        if self._states.get(state.trip.id) is state:
            self.bytes += size - state.size
            self._evict()
        state.size = size

    def let_go_aggregate(self, trip_id: str) -> bool:
        """Keep the trip as bytes only (what a full budget does to the least
        recently used); False if it was let go instead (its view was not
        current) or was not here with its aggregate."""
        gone = self._states.pop(trip_id, None)
        if gone is None:
            return False
        self.bytes -= gone.size
        slim = self.slim(gone) if self.slim is not None else None
        if slim is None:
            return False
        self._shed[trip_id] = Shed(slim[0], gone.roles, slim[1])
        self.shed_bytes += slim[1]
        return True

    def _drop_shed(self, trip_id: str) -> None:
        shed = self._shed.pop(trip_id, None)
        if shed is not None:
            self.shed_bytes -= shed.size

    def _keep(self, trip_id: str, state: TripState, size: int) -> None:
        self._drop_shed(trip_id)   # loaded with its aggregate again
        replaced = self._states.pop(trip_id, None)
        if replaced is not None:
            self.bytes -= replaced.size
            if replaced is not state:
                replaced.invalid = True
        state.size = size
        self._states[trip_id] = state
        self.bytes += size
        self._evict()

    def _evict(self) -> None:
        """Over the budget: trips with their aggregate beyond `HOT_SHARE` of
        it are kept as bytes only (or let go if their view is not current),
        then bytes-only trips are let go, then trips with their aggregate,
        least recently used first each time. Under the budget nothing is
        shed: a trip's op needs its aggregate."""
        while self.bytes + self.shed_bytes > self.budget_bytes:
            if self.bytes > self.budget_bytes * HOT_SHARE and len(self._states) > 1:
                self.let_go_aggregate(next(iter(self._states)))
            elif self._shed:
                _, shed = self._shed.popitem(last=False)
                self.shed_bytes -= shed.size
            elif len(self._states) > 1:
                _, gone = self._states.popitem(last=False)
                self.bytes -= gone.size
            else:
                break
