"""TripDto: the JSON every client reads, with computed times and legs.

Building it means loading the aggregate, computing legs and schedules and
counting votes, so the result is cached per trip and version; each caller's
bytes (their role and their own votes differ) are cached beside it. The cache
listens to the database's change signal (`changed`, called after every
commit that touches a trip), so a stale entry is never served after a write.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from .. import legs as legs_mod
from ..errors import NotFound
from ..services import Services
from . import store
from .expenses import summarize
from .model import DAY_START, Trip
from .schedule import day_schedule, to_hhmm

MAX_TRIPS_CACHED = 256
# Changes that alter what the TripDto shows (timeline rows and suggestions don't).
SHOWN_KINDS = frozenset({"content", "social", "members", "deleted"})
# Every write goes through this process and invalidates the entry, so the
# cache is exact; the periodic re-check with one indexed query is a guard
# against someone editing the file by hand.
REVALIDATE_S = 2.0


@dataclass
class Entry:
    version: int
    generation: int
    trip: Trip
    legs: dict[str, list]                       # day id -> [Leg]
    members: list[dict]
    votes: dict[str, dict[str, int]]            # stop id -> {user id: value}
    comment_counts: dict[str, int]
    per_user: dict[tuple[str, str], bytes] = field(default_factory=dict)
    etags: dict[tuple[str, str], str] = field(default_factory=dict)
    checked_at: float = field(default_factory=time.monotonic)

    def role_of(self, user_id: str) -> str | None:
        for m in self.members:
            if m["userId"] == user_id:
                return m["role"]
        return None


class TripCache:
    def __init__(self, svc: Services):
        self.svc = svc
        self._entries: OrderedDict[str, Entry] = OrderedDict()
        self._generation: dict[str, int] = {}

    async def membership(self, trip_id: str, user_id: str) -> tuple[str | None, int | None]:
        """(role, version) of a user on a trip; (None, None) for non-members."""
        entry = self._entries.get(trip_id)
        if (entry is not None and entry.generation == self._generation.get(trip_id, 0)
                and time.monotonic() - entry.checked_at < REVALIDATE_S):
            return entry.role_of(user_id), entry.version
        row = await self.svc.db.fetchone(
            "SELECT m.role, t.version FROM members m JOIN trips t ON t.id = m.trip_id "
            "WHERE m.trip_id = ? AND m.user_id = ?",
            (trip_id, user_id))
        if row is None:
            return None, None
        if entry is not None and entry.version == row[1] and entry.role_of(user_id) == row[0]:
            entry.checked_at = time.monotonic()
        return row[0], row[1]

    def changed(self, trip_id: str, kinds: frozenset) -> None:
        """The database's after-commit signal: drop what the change makes stale."""
        if kinds & SHOWN_KINDS:
            self._generation[trip_id] = self._generation.get(trip_id, 0) + 1
            self._entries.pop(trip_id, None)

    async def entry(self, trip_id: str, version: int | None = None, trip: Trip | None = None) -> Entry:
        generation = self._generation.get(trip_id, 0)
        entry = self._entries.get(trip_id)
        if entry is not None and entry.generation == generation and (version is None or entry.version == version):
            self._entries.move_to_end(trip_id)
            return entry
        entry = await self._build(trip_id, generation, trip)
        if self._generation.get(trip_id, 0) == generation:  # nothing changed while we built it
            self._entries[trip_id] = entry
            while len(self._entries) > MAX_TRIPS_CACHED:
                self._entries.popitem(last=False)
        return entry

    async def _build(self, trip_id: str, generation: int, trip: Trip | None) -> Entry:
        db = self.svc.db
        async with db.read() as conn:
            if trip is None:
                trip = await store.load(conn, trip_id)
            members = [
                {"userId": r["id"], "username": r["username"], "displayName": r["display_name"], "role": r["role"]}
                for r in await conn.execute_fetchall(
                    "SELECT u.id, u.username, u.display_name, m.role FROM members m JOIN users u ON u.id = m.user_id "
                    "WHERE m.trip_id = ? ORDER BY m.joined_at, u.username", (trip_id,))
            ]
            votes: dict[str, dict[str, int]] = {}
            for r in await conn.execute_fetchall(
                    "SELECT stop_id, user_id, value FROM votes WHERE trip_id = ?", (trip_id,)):
                votes.setdefault(r[0], {})[r[1]] = r[2]
            comment_counts = {r[0]: r[1] for r in await conn.execute_fetchall(
                "SELECT stop_id, COUNT(*) FROM comments WHERE trip_id = ? GROUP BY stop_id", (trip_id,))}
        # Days are independent: their missing routes are fetched at the same time.
        per_day = await asyncio.gather(*(legs_mod.day_legs(self.svc, d.stops, trip.prefs) for d in trip.days))
        day_legs = {d.id: legs for d, legs in zip(trip.days, per_day)}
        return Entry(trip.version, generation, trip, day_legs, members, votes, comment_counts)

    async def json_for(self, trip_id: str, user_id: str, role: str, version: int | None = None,
                       trip: Trip | None = None) -> bytes:
        return (await self.tagged_json_for(trip_id, user_id, role, version, trip))[0]

    async def tagged_json_for(self, trip_id: str, user_id: str, role: str, version: int | None = None,
                              trip: Trip | None = None) -> tuple[bytes, str]:
        """The caller's TripDto bytes and an ETag for them (votes and comments
        change the DTO without a new version, so the tag hashes the bytes)."""
        entry = await self.entry(trip_id, version, trip)
        key = (user_id, role)
        cached = entry.per_user.get(key)
        if cached is None:
            cached = json.dumps(build_dto(entry, user_id, role), ensure_ascii=False, separators=(",", ":")).encode()
            entry.per_user[key] = cached
            entry.etags[key] = '"' + hashlib.blake2b(cached, digest_size=12).hexdigest() + '"'
        return cached, entry.etags[key]


def build_dto(entry: Entry, user_id: str, role: str) -> dict:
    trip = entry.trip
    days = []
    for day in trip.days:
        legs = entry.legs.get(day.id, [])
        slots = {s.stop_id: s for s in day_schedule(day, legs_mod.by_pair(legs))}
        stops = []
        for s in day.stops:
            slot = slots[s.id]
            votes = entry.votes.get(s.id, {})
            stops.append({
                "id": s.id, "position": s.position, "kind": s.kind, "name": s.name, "placeId": s.place_id,
                "lat": s.lat, "lng": s.lng, "address": s.address, "setTime": s.set_time,
                "durationMin": s.duration_min, "meal": s.meal, "note": s.note,
                "startTime": to_hhmm(slot.start), "endTime": to_hhmm(slot.end),
                "startMinutes": slot.start, "endMinutes": slot.end,
                "votes": {"up": sum(1 for v in votes.values() if v > 0),
                          "down": sum(1 for v in votes.values() if v < 0),
                          "mine": votes.get(user_id, 0)},
                "commentCount": entry.comment_counts.get(s.id, 0),
                "createdBy": s.created_by,
            })
        days.append({
            "id": day.id, "position": day.position, "date": trip.day_date(day), "title": day.title, "note": day.note,
            "startTime": day.start_time or DAY_START, "stops": stops, "legs": [leg.to_json() for leg in legs],
        })
    return {
        "id": trip.id, "title": trip.title,
        "destination": (None if trip.dest_name is None
                        else {"name": trip.dest_name, "lat": trip.dest_lat, "lng": trip.dest_lng}),
        "startDate": trip.start_date, "timezone": trip.timezone, "currency": trip.currency, "version": trip.version,
        "role": role, "members": entry.members, "days": days,
        "expenses": [{"id": e.id, "title": e.title, "amountMinor": e.amount_minor, "currency": e.currency,
                      "paidBy": e.paid_by, "split": e.split, "dayId": e.day_id, "stopId": e.stop_id}
                     for e in trip.expenses],
        "expenseSummary": summarize(trip.expenses),
        "preferences": trip.prefs.model_dump(),
    }


async def tagged_trip_json(svc: Services, trip_id: str, user_id: str) -> tuple[bytes, str]:
    """The caller's TripDto bytes and ETag; 404 for non-members."""
    role, version = await svc.trip_cache.membership(trip_id, user_id)
    if role is None:
        raise NotFound("Trip not found")
    return await svc.trip_cache.tagged_json_for(trip_id, user_id, role, version=version)


async def trip_json(svc: Services, trip_id: str, user_id: str) -> bytes:
    return (await tagged_trip_json(svc, trip_id, user_id))[0]
