"""TripDto: the JSON every member reads, with computed times and legs.

Built from the trip's state in memory (trips/state.py) and kept beside it as
encoded parts (a `View`), so a read is a lookup and a change costs what it
changed:

- Each day is encoded on its own (`DayPart`). After an op only the days whose
  day fields, stops (the same objects or not), date, legs or votes and
  comment counts changed are encoded again; the others are reused as bytes.
- The body is the same for every member except their role and their own
  votes (`mine`), so it is encoded once with every `mine` as 0 and the
  caller's role and votes are spliced in at known offsets. A member without
  votes gets bytes shared by everyone with their role.
- Legs come from memory (estimates, or Google routes already in the route
  cache) without waiting; only a day with an unknown route waits for Google,
  and concurrent readers wait for that one build.
- The ETag comes from what the bytes are made of, not from hashing them:
  the trip's version, the view's serial number in this process (a view is
  never changed once built: votes, comments, members or legs make a new one)
  and the caller's role and own votes.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import operator
import os
import time
from typing import Any
from dataclasses import dataclass, field
from collections.abc import Callable, Sequence

from .. import legs as legs_mod
from ..errors import NotFound
from ..legs import Leg, RouteProvider
from ..shared_reads import SingleFlight
from .expenses import summarize
from .model import Day, Expense, Trip
from .day_parts import QUIET, DayPart, Key, day_fields, dumps, encode_day, legs_key_of, same_places, stored_part
from .state import TripState, TripStates


# A view's ETag: this process's epoch (a restart may rebuild a version's legs
# differently) and a serial number per view built.
_EPOCH = os.urandom(3).hex()
# What a trip in memory holds (its state and view, before any joined or
# compressed copy of it: View.size): BYTES_PER_VIEW plus BYTES_PER_BODY_BYTE
# per byte of its TripDto, fitted to what tracemalloc measures for 5 x 8
# trips (41 KiB for a 19 KiB body) and 30 x 15 trips (393 KiB for 211 KiB;
# bench/trip_memory.py: 419 KiB with a brotli reader once the process-wide
# route caches are full),
# rounded up (docs/performance.md, issue 26's third round).
BYTES_PER_VIEW = 8 * 1024
BYTES_PER_BODY_BYTE = 1.9
# What a trip kept as bytes only holds (`slim_view`): its body's pieces and
# SLIM_BYTES_PER_VIEW for the view, its lists and the pieces' headers
# (tracemalloc, bench/trip_memory.py), rounded up.
SLIM_BYTES_PER_VIEW = 6 * 1024
_serials = itertools.count(1)
_dumps = dumps


def _same_objects(a: Sequence[Any], b: Sequence[Any]) -> bool:
    return a is b or (len(a) == len(b) and all(map(operator.is_, a, b)))


@dataclass(eq=False, slots=True)
class View:
    trip: Trip
    members: list[dict[str, str]]
    social_serial: int
    parts: list[DayPart]
    expenses: tuple[list[Expense], bytes]
    shared: tuple[object, bytes, object, bytes]  # (members, their JSON, preferences, their JSON)
    header: tuple[Key, bytes]     # (the trip's own fields, their JSON up to "version")
    head: bytes                   # up to `"role":`
    rest: list[bytes]             # after the role, in pieces (joined only into what is sent)
    length: int                   # bytes in head and rest
    by_user: dict[str, list[tuple[int, int]]]   # user -> [(offset of "mine" in the joined rest, their vote)]
    # The days' ids in order as JSON (an op's echo names them all) and the
    # bytes of the days' bodies with their commas: both carried over from
    # the view a patch starts from, so an op's build and echo do not walk
    # every day of the trip (with many trips written at once those are out
    # of the CPU's caches: a walk costs several times what it does hot).
    day_ids: bytes
    days_length: int
    serial: int = field(default_factory=lambda: next(_serials))
    # What other modules derive from exactly this view (the calendar feed's
    # bytes, app/exports/files.py): built once, dropped with the view.
    derived: dict[str, object] = field(default_factory=dict)
    # Bytes only (`slim_view`): `trip` is the trip's own fields without its
    # days or expenses and there are no `parts`; only a read (member_view)
    # gets such a view.
    slim: bool = False

    @property
    def legs(self) -> dict[str, list[Leg]]:
        return {d.id: p.legs for d, p in zip(self.trip.days, self.parts)}

    def size(self) -> int:
        """Bytes the trip holds with its view: the aggregate and the days'
        parts, measured with tracemalloc at about BYTES_PER_VIEW plus
        BYTES_PER_BODY_BYTE times the body, plus the compressed variants
        kept (`derived`). No joined copy of the body is kept: a reader's
        answer is joined from the parts straight into what is sent (one
        copy per answer, as joining a kept copy into it was)."""
        kept = sum(len(v) for v in self.derived.values() if isinstance(v, bytes))
        if self.slim:
            return SLIM_BYTES_PER_VIEW + self.length + kept
        return BYTES_PER_VIEW + int(BYTES_PER_BODY_BYTE * self.length) + kept


def slim_view(state: TripState) -> tuple[View, int] | None:
    """The trip's current view as bytes only, and its size (TripStates keeps
    it when it lets the aggregate go); None when its view is not current or
    an op on it is under way. The same serial: the same ETags."""
    view = state.view
    if (not isinstance(view, View) or not _current(view, state) or state.head is not None
            or state.social_stale or (state.lock is not None and state.lock.locked())):
        return None
    trip = view.trip
    header = Trip(trip.id, trip.title, trip.dest_name, trip.dest_lat, trip.dest_lng, trip.start_date,
                  trip.timezone, trip.currency, trip.version, trip.created_by)
    out = View(header, [], view.social_serial, [], ([], view.expenses[1]), (None, b"", None, b""),
               view.header, view.head, view.rest, view.length, view.by_user, view.day_ids, view.days_length,
               view.serial,
               {k: v for k, v in view.derived.items() if isinstance(v, bytes)}, slim=True)
    return out, out.size()


def _current(view: View | None, state: TripState) -> bool:
    return (view is not None and view.trip is state.trip and view.members is state.members
            and view.social_serial == state.social_serial)


def _usable(state: TripState, day: Day, now: float) -> tuple[bytes, float] | None:
    """The day's stored bytes, if there are some for this version, its stops
    have no votes or comments and its legs are not due to be asked again."""
    if state.stored is None or state.stored_version != state.trip.version:
        return None
    found = state.stored.get(day.id)
    if found is None or found[1] < now:
        return None
    votes, counts = state.votes, state.comment_counts
    if (votes or counts) and any(s.id in votes or s.id in counts for s in day.stops):
        return None
    return found


def _social(state: TripState, day: Day) -> list[Key]:
    votes, counts = state.votes, state.comment_counts
    if not votes and not counts:
        return [QUIET] * len(day.stops)
    return [QUIET if s.id not in votes and s.id not in counts else (votes.get(s.id), counts.get(s.id, 0))
            for s in day.stops]


def build_view(routes: RouteProvider | None, state: TripState, trip: Trip, prev: View | None,
               fetched: dict[str, list[Leg]] | None = None, now: float = 0.0) -> View | None:
    """The view of `trip` with the state's members, votes and comments,
    reusing what `prev` encoded, or the days stored for the trip's version
    (`state.stored`); None when a day's legs need Google (see
    `legs_from_memory`) and `fetched` does not hold them. `now`: the clock,
    for when the legs were computed and whether stored legs are still due."""
    prev_parts = prev.parts if prev is not None else []
    old: dict[str, DayPart] | None = None   # prev's parts by day id, if a day moved
    social_moved = prev is None or prev.social_serial != state.social_serial
    # Every part of a view was encoded (or kept) for its trip's preferences
    # and start date: when those and the votes are unchanged, a day object
    # `prev` encoded is reused without looking further (an op changes one
    # or two of a trip's days; this runs once per op, on every day).
    kept = (prev is not None and not social_moved and prev.trip.prefs is trip.prefs
            and prev.trip.start_date == trip.start_date)
    count = len(prev_parts)
    parts: list[DayPart] = []
    same_ids = prev is not None and count == len(trip.days)   # every day's id where prev had it
    for i, day in enumerate(trip.days):
        part = prev_parts[i] if i < count else None
        if kept and part is not None and part.source is day:
            parts.append(part)
            continue
        if same_ids and (part is None or part.day[0] != day.id):
            same_ids = False
        if part is None or part.source is not day and part.day[0] != day.id:
            if old is None:
                old = {p.day[0]: p for p in prev_parts}
            part = old.get(day.id)
        if part is None and state.stored is not None and trip is state.trip:
            found = _usable(state, day, now)
            if found is not None:
                parts.append(stored_part(trip, day, *found))
                continue
        if (part is not None and part.source is day and not social_moved and part.prefs is trip.prefs
                and part.start_date == trip.start_date):
            parts.append(part)   # the same day object: nothing about it changed
            continue
        same = part if part is not None and _same_objects(part.stops, day.stops) else None
        social = same.social if same is not None and not social_moved else _social(state, day)
        if (same is not None and same.day == day_fields(trip, day) and same.prefs is trip.prefs
                and same.start_date == trip.start_date and (same.social is social or same.social == social)):
            parts.append(same)
            continue
        key = part.legs_key if part is not None and same_places(part.stops, day.stops) else legs_key_of(day)
        legs: list[Leg] | None
        legs_time = now
        if part is not None and part.legs_key == key and part.prefs is trip.prefs:
            legs, legs_time = None, part.legs_time   # the same legs: encode_day reuses part's
        elif fetched is not None and day.id in fetched:
            legs = fetched[day.id]
        else:
            legs = legs_mod.day_legs_now(routes, day.stops, trip.prefs)
            if legs is None:
                return None
        parts.append(encode_day(trip, day, legs, key, social, part, legs_time))
    expenses = prev.expenses if prev is not None and _same_objects(prev.expenses[0], trip.expenses) else (
        trip.expenses, _dumps([{"id": e.id, "title": e.title, "amountMinor": e.amount_minor, "currency": e.currency,
                                "paidBy": e.paid_by, "split": e.split, "dayId": e.day_id, "stopId": e.stop_id}
                               for e in trip.expenses]) + b',"expenseSummary":' + _dumps(summarize(trip.expenses)))
    fields = (trip.id, trip.title, trip.dest_name, trip.dest_lat, trip.dest_lng, trip.start_date, trip.timezone,
              trip.currency)
    header = prev.header if prev is not None and prev.header[0] == fields else (fields, _dumps({
        "id": trip.id, "title": trip.title,
        "destination": None if trip.dest_name is None else {"name": trip.dest_name, "lat": trip.dest_lat,
                                                            "lng": trip.dest_lng},
        "startDate": trip.start_date, "timezone": trip.timezone, "currency": trip.currency, "version": 0,
    })[:-2])   # up to the version's value
    head = header[1] + str(trip.version).encode() + b',"role":'
    shared = prev.shared if prev is not None else (None, b"", None, b"")
    if shared[0] is not state.members or shared[2] is not trip.prefs:
        # Former members travel with the members (both are read together, in
        # one state): `"members":[...],"formerMembers":[...]`, one piece.
        members = _dumps(state.members) + b',"formerMembers":' + _dumps(state.former)
        shared = (state.members, members, trip.prefs, _dumps(trip.prefs.model_dump()))
    # rest: members, then each day's body (commas between), then expenses
    # and preferences; a patch replaces only the bodies of the days it changed.
    if prev is not None and len(prev_parts) == len(parts):
        rest, days_length = list(prev.rest), prev.days_length
        for i, (part, before) in enumerate(zip(parts, prev_parts)):
            if part is not before:
                rest[1 + 2 * i] = part.body
                days_length += len(part.body) - len(before.body)
    else:
        rest = [b""]
        for i, part in enumerate(parts):
            rest += [b",", part.body] if i else [part.body]
        rest.append(b"")
        days_length = sum(len(part.body) for part in parts) + max(len(parts) - 1, 0)
    rest[0] = b',"members":' + shared[1] + b',"days":['
    rest[-1] = b'],"expenses":' + expenses[1] + b',"preferences":' + shared[3] + b"}"
    by_user: dict[str, list[tuple[int, int]]] = {}
    if state.votes:
        start = len(rest[0])
        for part in parts:
            for stop, at in zip(part.stops, part.mine_at):
                for user_id, value in (state.votes.get(stop.id) or {}).items():
                    by_user.setdefault(user_id, []).append((start + at, value))
            start += len(part.body) + 1
    day_ids = prev.day_ids if same_ids and prev is not None else _dumps([d.id for d in trip.days])
    return View(trip, state.members, state.social_serial, parts, expenses, shared, header, head, rest,
                len(head) + len(rest[0]) + days_length + len(rest[-1]), by_user, day_ids, days_length)


Route = tuple[tuple[float, float], tuple[float, float], str]


def legs_from_memory(routes: RouteProvider | None, trip: Trip, prev: View | None, days: list[Day] | None = None,
                     state: TripState | None = None, now: float = 0.0,
                     ) -> tuple[dict[str, list[Leg]], list[Day], list[Route]]:
    """One pass over the days (`days`, else the trip's) whose legs `prev`
    does not hold: (the legs computable from memory by day id, the days
    whose legs are not, the stored routes those lack). A first read computes
    each day's legs once from this, instead of once to find what is missing,
    once to list what to load and once more to build. Days the build takes
    from `state`'s stored days are skipped."""
    old = {p.day[0]: p for p in prev.parts} if prev is not None else {}
    known: dict[str, list[Leg]] = {}
    missing: list[Day] = []
    lacking: list[Route] = []
    for day in trip.days if days is None else days:
        part = old.get(day.id)
        if part is not None and part.legs_key == legs_key_of(day) and part.prefs is trip.prefs:
            continue
        if part is None and state is not None and state.stored is not None and _usable(state, day, now):
            continue
        legs = legs_mod.day_legs_now(routes, day.stops, trip.prefs, lacking)
        if legs is None:
            missing.append(day)
        else:
            known[day.id] = legs
    return known, missing, lacking


_ROLES: dict[str, bytes] = {}


def _role_json(role: str) -> bytes:
    """A role's JSON, encoded once (a read without a kept joined copy asks for it every time)."""
    found = _ROLES.get(role)
    if found is None:
        found = _ROLES[role] = _dumps(role)
    return found


def member_pieces(view: View, user_id: str, role: str) -> list[bytes]:
    """The caller's TripDto in pieces: the shared body with their role and
    votes spliced in (joined once, into whatever carries it)."""
    votes = view.by_user.get(user_id)
    if not votes:
        return [view.head, _role_json(role), *view.rest]
    out, base, marks, i = [view.head, _role_json(role)], 0, sorted(votes), 0
    for piece in view.rest:
        end, cut = base + len(piece), 0
        while i < len(marks) and marks[i][0] < end:
            at, value = marks[i]
            out += [piece[cut:at - base], b"1" if value > 0 else b"-1"]
            cut, i = at - base + 1, i + 1
        out.append(piece[cut:] if cut else piece)
        base = end
    return out


def member_length(view: View, user_id: str, role: str) -> int:
    """len(member_bytes(...)) without joining them: a vote of -1 is one byte
    longer than the 0 it replaces."""
    votes = view.by_user.get(user_id) or ()
    return view.length + len(_role_json(role)) + sum(1 for _, value in votes if value <= 0)


def member_bytes(view: View, user_id: str, role: str) -> bytes:
    """The caller's TripDto: the shared body with their role and votes
    (joined per call: a kept copy would double what a trip holds, issue 26)."""
    return b"".join(member_pieces(view, user_id, role))


def member_etag(view: View, user_id: str, role: str) -> str:
    """The caller's ETag, from the version and the view (no hash of the body)."""
    votes = view.by_user.get(user_id)
    mine = hashlib.blake2b(repr(sorted(votes)).encode(), digest_size=6).hexdigest() if votes else "0"
    return f'"{view.trip.version}.{_EPOCH}{view.serial}.{role}.{mine}"'


def _day_offsets(view: View) -> list[int]:
    """Where each day's body starts in the joined `rest` (what `by_user` counts in)."""
    out, at = [], len(view.rest[0])
    for part in view.parts:
        out.append(at)
        at += len(part.body) + 1
    return out


def _member_day(view: View, i: int, start: int, marks: list[tuple[int, int]]) -> bytes:
    """Day i's body with the caller's votes (`marks`, in `rest` offsets) spliced in."""
    body = view.parts[i].body
    end = start + len(body)
    mine = [(at - start, value) for at, value in marks if start <= at < end]
    if not mine:
        return body
    out, cut = [], 0
    for at, value in sorted(mine):
        out += [body[cut:at], b"1" if value > 0 else b"-1"]
        cut = at + 1
    out.append(body[cut:])
    return b"".join(out)


def member_change(before: View | None, view: View, user_id: str, role: str) -> list[bytes]:
    """What changed from `before` to `view`, for the caller, as JSON in pieces:
    `fromVersion` (the version `before` showed; null: unknown, read the whole
    trip), `version`, `trip` (the trip's own fields and the caller's role),
    `dayIds` (every day, in order), `days` (only the days whose bytes
    changed, with the caller's votes) and `members`, `expenses` with
    `expenseSummary`, and `preferences` only when they changed. A day's
    bytes are the view's own, so this costs what changed."""
    trip_fields = view.header[1] + str(view.trip.version).encode() + b',"role":' + _role_json(role) + b"}"
    day_ids = view.day_ids
    if before is None:
        return [b'{"fromVersion":null,"version":', str(view.trip.version).encode(), b',"trip":', trip_fields,
                b',"dayIds":', day_ids, b',"days":[]}']
    if before.day_ids is view.day_ids:   # the same days in the same places: compared place by place
        changed = [i for i, (part, was) in enumerate(zip(view.parts, before.parts)) if part is not was]
    else:
        kept = {id(part) for part in before.parts}
        changed = [i for i, part in enumerate(view.parts) if id(part) not in kept]
    marks = view.by_user.get(user_id)
    if marks:
        offsets = _day_offsets(view)
        days = [_member_day(view, i, offsets[i], marks) for i in changed]
    else:   # no votes of the caller's to splice in: the days' bytes as they are
        days = [view.parts[i].body for i in changed]
    out = [b'{"fromVersion":', str(before.trip.version).encode(), b',"version":', str(view.trip.version).encode(),
           b',"trip":', trip_fields, b',"dayIds":', day_ids, b',"days":[', b",".join(days), b"]"]
    if before.shared[1] is not view.shared[1]:
        out += [b',"members":', view.shared[1]]
    if before.expenses[1] is not view.expenses[1]:
        out += [b',"expenses":', view.expenses[1]]
    if before.shared[3] is not view.shared[3]:
        out += [b',"preferences":', view.shared[3]]
    out.append(b"}")
    return out


def member_variant(view: View, user_id: str, role: str) -> str:
    """Which bytes of the view the caller gets: shared by their role, or their
    own (their votes): the key of whatever is kept for those bytes."""
    return f"user:{user_id}" if view.by_user.get(user_id) else f"role:{role}"


class TripCache:
    """The TripDto views of the trips in memory (`trips`), with legs from
    `routes` (the places provider; None: estimates only)."""

    def __init__(self, trips: TripStates, routes: RouteProvider | None, clock: Callable[[], float] = time.time):
        self.trips, self.routes, self.clock = trips, routes, clock
        self._flight: SingleFlight = SingleFlight()
        # Told of every view installed (trips/stored_days.py stores its days).
        self.on_install: Callable[[TripState, View], None] | None = None
        trips.slim = slim_view

    async def readable(self, trip_id: str) -> tuple[Callable[[str], str | None], View]:
        """For a read only: a member's role and the trip's view, which may
        be bytes only (`View.slim`, a trip whose aggregate was let go)."""
        if self.trips.cached(trip_id) is None:
            shed = self.trips.shed(trip_id)
            if shed is not None:
                return shed.roles.get, shed.view
        state, view = await self.current(trip_id)
        return state.role_of, view

    async def membership(self, trip_id: str, user_id: str) -> tuple[str | None, int | None]:
        return await self.trips.membership(trip_id, user_id)

    async def current(self, trip_id: str) -> tuple[TripState, View]:
        """The trip's state and its up-to-date view (built or patched once,
        shared by concurrent callers)."""
        state = await self.trips.get(trip_id)
        if _current(state.view, state):
            return state, state.view
        view = build_view(self.routes, state, state.trip, state.view, now=self.clock())
        if view is not None:
            return state, self._install(state, view)
        return await self._flight.run(trip_id, lambda: self._build_waiting(trip_id))

    async def _build_waiting(self, trip_id: str) -> tuple[TripState, View]:
        """Compute the legs memory holds, load the stored routes the others
        lack (one query), compute those days again, fetch what is still
        missing, then build; again if the trip moved meanwhile."""
        while True:
            state = await self.trips.get(trip_id)
            if _current(state.view, state):
                return state, state.view
            trip, prev, now = state.trip, state.view, self.clock()
            legs, missing, lacking = legs_from_memory(self.routes, trip, prev, None, state, now)
            if lacking and self.routes is not None:
                await self.routes.load_routes(lacking)
                loaded, missing, _ = legs_from_memory(self.routes, trip, prev, missing, state, now)
                legs.update(loaded)
            if missing:
                legs.update(await self._fetch_legs(trip, missing))
            if state.trip is trip and self.trips.cached(trip_id) is state:
                view = build_view(self.routes, state, trip, prev, legs, now)
                if view is not None:
                    return state, self._install(state, view)

    async def _fetch_legs(self, trip: Trip, days: list[Day]) -> dict[str, list[Leg]]:
        per_day = await asyncio.gather(*(legs_mod.day_legs(self.routes, d.stops, trip.prefs) for d in days))
        return {d.id: legs for d, legs in zip(days, per_day)}

    def _install(self, state: TripState, view: View) -> View:
        if state.stored is not None and view.trip is state.trip:   # the stored days are in the view now
            if state.disk is not None:
                for part in view.parts:
                    found = state.stored.get(part.day[0])
                    if found is not None and found[0] is part.body:   # made from the stored row
                        state.disk[part.day[0]] = part.serial
            state.stored = None
        state.view = view
        self.trips.resize(state, view.size())
        if self.on_install is not None:
            self.on_install(state, view)
        return view

    def account(self, view: View) -> None:
        """The view kept more bytes (a compressed variant): count them in
        the memory bound."""
        if view.slim:
            shed = self.trips.shed(view.trip.id)
            if shed is not None and shed.view is view:
                self.trips.resize_shed(view.trip.id, shed, view.size())
            return
        state = self.trips.cached(view.trip.id)
        if state is not None and state.view is view:
            self.trips.resize(state, view.size())

    def bytes_for(self, view: View, user_id: str, role: str) -> bytes:
        """`member_bytes` (nothing is kept: no accounting)."""
        return member_bytes(view, user_id, role)

    async def entry(self, trip_id: str) -> View:
        """The current view: `.trip` (read only) and `.legs` per day."""
        return (await self.current(trip_id))[1]

    async def json_for(self, trip_id: str, user_id: str, role: str) -> bytes:
        """The caller's current TripDto (an op's echo: its change or newer)."""
        return self.bytes_for((await self.current(trip_id))[1], user_id, role)

    async def pieces_for(self, trip_id: str, user_id: str, role: str) -> list[bytes]:
        """`json_for` in pieces, for a response that wraps it (joined once there)."""
        return member_pieces((await self.current(trip_id))[1], user_id, role)

    def view_now(self, trip_id: str) -> View | None:
        """The view in memory as it is (no build, no wait): what a writer's
        page most likely shows, for `change_for` after its op."""
        state = self.trips.cached(trip_id)
        return state.view if state is not None else None

    async def change_for(self, trip_id: str, user_id: str, role: str, before: View | None) -> list[bytes]:
        """An op's small echo: what changed since `before` (`member_change`)."""
        return member_change(before, (await self.current(trip_id))[1], user_id, role)


async def member_view(trip_cache: TripCache, trip_id: str, user_id: str) -> tuple[View, str]:
    """The trip's current view (bytes only, maybe: read it, nothing more)
    and the caller's role; 404 for non-members."""
    try:
        role_of, view = await trip_cache.readable(trip_id)
    except NotFound:
        raise NotFound("Trip not found") from None
    role = role_of(user_id)
    if role is None:
        raise NotFound("Trip not found")
    return view, role


async def trip_json(trip_cache: TripCache, trip_id: str, user_id: str) -> bytes:
    view, role = await member_view(trip_cache, trip_id, user_id)
    return trip_cache.bytes_for(view, user_id, role)
