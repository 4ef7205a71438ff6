"""The live hub: every open stream, per trip and per user, fed from the
committed change events (app/changes.py).

A change to a trip with open streams becomes events in commit order, through
one small task per trip (`_pump`) that coalesces a burst of commits and
reads the trip's version, latest timeline seq and pending suggestion count
once from the timeline `Heads` (which an earlier phase has just refreshed),
whatever the number of streams. Event ids are `<epoch>-<n>`: `n` counts up in
this process, and the epoch tells a reconnect from another process (or an
earlier boot) apart. Each trip keeps its last RING_SIZE events, so a
reconnect with `Last-Event-ID` gets what it missed, or a `reset` event when
they are no longer here (or the id is not one this trip's stream sent).

Presence is state, not history: it is sent as a whole list (one entry per
user) when it changes, at most every PRESENCE_GAP_S, and to every new
stream; it is never replayed. A page confirms its presence now and then
(`set_day` again); one that has not for `presence_ttl_s` leaves the list
while its stream stays: a phone that lost its connection without closing it
(a tunnel, a flat battery) keeps the socket open on our side until the
kernel gives up, about 15 minutes, and showed its member on a day for all
that time. The keep-alive tick looks for such pages.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from ..changes import TripEvent
from ..db import Database
from ..errors import Busy, Invalid, NotFound, Unavailable
from ..trips.dto import TripCache
from ..trips.heads import Heads
from .sse import KEEPALIVE, MAX_QUEUED, LiveResponse, Stream, encode, frame

log = logging.getLogger("wayline")

RING_SIZE = 48            # below the stream queue's bound: a replay, its hello and presence fit in it
RESUME_GRACE_S = 120.0     # a trip nobody watches keeps recording this long, for reconnects
PRESENCE_GAP_S = 0.25
MEMBERSHIP_TRIES = 5
HEAD_KINDS = frozenset({"content", "timeline", "suggestions"})
assert RING_SIZE + 2 <= MAX_QUEUED
GONE_REMOVED = encode({"reason": "removed"})
GONE_DELETED = encode({"reason": "deleted"})
GONE_ACCOUNT = encode({"reason": "account"})
GONE_SIGNED_OUT = encode({"reason": "signedOut"})
GONE_EXPIRED = encode({"reason": "expired"})
EMPTY = b"{}"


class Channel:
    """One trip's open streams, recent events and last announced heads."""

    __slots__ = ("streams", "ring", "floor", "version", "seq", "pending", "pump", "idle_since", "presence",
                 "presence_at", "presence_timer", "day_orders")

    def __init__(self, floor: int):
        self.streams: set[Stream] = set()
        self.ring: deque[tuple[int, bytes]] = deque()
        self.floor = floor          # events up to this id were never recorded here
        self.version = -1
        self.seq = -1
        self.pending: set[str] = set()
        self.pump: asyncio.Task | None = None
        self.idle_since = 0.0
        self.presence: bytes | None = None   # the last announced list (JSON)
        self.presence_at = 0.0
        self.presence_timer: asyncio.TimerHandle | None = None
        self.day_orders = 0

    def head(self) -> int:
        return self.ring[-1][0] if self.ring else self.floor


@dataclass(frozen=True)
class LiveLimits:
    """A comment line this often keeps proxies from closing a quiet stream
    (Fly's proxy closes after 60 s idle); the open-stream limits."""

    keepalive_s: float = 20.0
    max_per_user: int = 8       # open connections, not the hub's entries
    max_streams: int = 2000
    send_timeout_s: float = 5.0   # a write that cannot complete this fast ends its connection
    presence_ttl_s: float = 150.0   # a page confirms every 60 s (public/live.js); two may be missed


class LiveHub:
    def __init__(self, db: Database, trip_cache: TripCache, heads: Heads, limits: LiveLimits,
                 wall_clock: Callable[[], float] = time.time):
        self.db, self.trip_cache, self.heads, self.limits = db, trip_cache, heads, limits
        self.wall_clock = wall_clock   # sessions expire by the calendar
        self.epoch = secrets.token_hex(4)
        self._counter = 0
        self._channels: dict[str, Channel] = {}
        self._by_user: dict[str, set[Stream]] = {}   # streams that hear the trip's events
        # Open connections (responses not yet ended), what the limits count: a
        # dropped stream holds its place until its connection is really closed.
        self._open_by_user: dict[str, int] = {}
        self._count = 0
        self._members_changes = 0
        self._ticker: asyncio.Task | None = None
        self._closed = False

    # -- opening and closing streams --------------------------------------------

    def __len__(self) -> int:
        """Open stream connections."""
        return self._count

    async def open(self, trip_id: str, user: dict, last_event_id: str | None, session: str = "") -> LiveResponse:
        """Register a member's stream and return its response; 404 when not a
        member (checked again if membership changed meanwhile), 429 over the limits."""
        for _ in range(MEMBERSHIP_TRIES):
            mark = self._members_changes
            role, _ = await self.trip_cache.membership(trip_id, user["id"])
            if role is None:
                raise NotFound("Trip not found")
            if mark == self._members_changes:
                break  # no membership changed anywhere between the check and the registration below
        else:
            raise Unavailable("Please try again in a moment.", code="busy")
        if self._closed:
            raise Unavailable("The server is restarting. Please try again in a moment.", code="shutting_down")
        if self._open_by_user.get(user["id"], 0) >= self.limits.max_per_user:
            raise Busy("Too many Wayline pages are open on your account. Close a few tabs and try again.",
                       code="too_many_streams")
        if self._count >= self.limits.max_streams:
            raise Busy("The server has too many live pages open right now. Please try again in a moment.",
                       code="too_many_streams")
        stream = Stream(trip_id, user["id"], user["displayName"], secrets.token_urlsafe(12), session)
        self._count += 1
        self._open_by_user[stream.user_id] = self._open_by_user.get(stream.user_id, 0) + 1
        self._register(stream, last_event_id)
        return LiveResponse(stream, self._ended, self.limits.send_timeout_s)

    def _ended(self, stream: Stream) -> None:
        """Its response is over (the connection is closed): the place is free. Idempotent."""
        if stream.ended:
            return
        stream.ended = True
        self.drop(stream)
        self._count -= 1
        left = self._open_by_user[stream.user_id] - 1
        if left:
            self._open_by_user[stream.user_id] = left
        else:
            del self._open_by_user[stream.user_id]

    def _register(self, stream: Stream, last_event_id: str | None) -> None:
        channel = self._channels.get(stream.trip_id)
        if channel is None:
            self._counter += 1  # ids handed out before now were never recorded for this trip
            channel = self._channels[stream.trip_id] = Channel(self._counter)
        channel.streams.add(stream)
        self._by_user.setdefault(stream.user_id, set()).add(stream)
        self._start_ticker()
        cursor = self._cursor(last_event_id)
        if cursor is not None and cursor != channel.floor and not any(n == cursor for n, _ in channel.ring):
            # Not an id this trip's stream handed out (every frame's id is the
            # floor or a recorded event's): ids count across all trips, so one
            # from another trip's stream, or from none yet, would claim a resume
            # that skips this trip's events before it.
            cursor = None
        resumed = cursor is not None
        hello = encode({"connectionId": stream.connection_id, "resumed": resumed})
        stream.push(frame(self._id(channel.head() if cursor is None else cursor), "hello", hello, retry=True))
        if cursor is not None:
            for n, data in channel.ring:
                if n > cursor:
                    stream.push(data)
        elif last_event_id is not None:
            stream.push(frame(self._id(channel.head()), "reset", EMPTY))
        current = self._presence_list(channel)
        if current == channel.presence:
            stream.push(self._presence_frame(channel, current))
        else:
            self._presence_changed(channel)

    def drop(self, stream: Stream, last: bytes | None = None, *, abort: bool = False) -> None:
        """Forget a stream and end it (after `last`, if given; with `abort` at
        once, giving up a write in progress). Idempotent. Its place under the
        limits is freed when its connection closes (`_ended`)."""
        stream.close(last, abort=abort)
        channel = self._channels.get(stream.trip_id)
        if channel is None or stream not in channel.streams:
            return
        channel.streams.discard(stream)
        mine = self._by_user.get(stream.user_id)
        if mine is not None:
            mine.discard(stream)
            if not mine:
                del self._by_user[stream.user_id]
        if not channel.streams:
            channel.idle_since = time.monotonic()
        self._presence_changed(channel)

    def close_user(self, user_id: str, *, session: str | None = None, keep_session: str | None = None,
                   signed_out: bool = False) -> None:
        """End a user's streams at once: all of them (account deletion, signing
        out everywhere), those of one session (signing out), or all but one
        session's (a password change ends the other sessions). `signed_out`:
        the account goes on and only sessions ended, so the pages say that
        (`gone` "signedOut"), not that the account was deleted ("account")."""
        gone = GONE_SIGNED_OUT if signed_out else GONE_ACCOUNT
        for stream in list(self._by_user.get(user_id, ())):
            if (session is None or stream.session == session) and (keep_session is None
                                                                  or stream.session != keep_session):
                self.drop(stream, frame(self._id(self._counter), "gone", gone))

    def end_all(self) -> None:
        """Shutdown has started: refuse new streams and end the open ones, so
        the server is not left waiting on responses that never finish."""
        self._closed = True
        for channel in list(self._channels.values()):
            for stream in list(channel.streams):
                self.drop(stream, abort=True)   # a client that stopped reading must not hold up the shutdown

    async def close(self) -> None:
        self.end_all()
        tasks = [t for t in [self._ticker, *(c.pump for c in self._channels.values())] if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for channel in self._channels.values():
            if channel.presence_timer is not None:
                channel.presence_timer.cancel()
        self._channels.clear()

    # -- presence -----------------------------------------------------------------

    async def set_day(self, trip_id: str, user_id: str, connection_id: str, day_id: str | None) -> None:
        """The day a member's page shows (None: no particular day)."""
        if day_id is not None and not await self.db.fetchval(
                "SELECT 1 FROM days WHERE id = ? AND trip_id = ?", (day_id, trip_id)):
            raise Invalid("dayId: not a day of this trip", field="dayId")
        channel = self._channels.get(trip_id)
        stream = next((s for s in (channel.streams if channel else ())
                       if s.connection_id == connection_id and s.user_id == user_id), None)
        if channel is None or stream is None:
            raise NotFound("This page is not connected any more; it reconnects by itself.",
                           code="not_connected")
        stream.seen_at = time.monotonic()
        if day_id != stream.day_id or not stream.day_order:
            # A new choice is the user's newest; a page confirming the day it
            # already shows is not (two tabs on two days would take turns).
            channel.day_orders += 1
            stream.day_id, stream.day_order = day_id, channel.day_orders
        self._presence_changed(channel)

    def _presence_list(self, channel: Channel) -> bytes:
        newest: dict[str, Stream] = {}
        since = time.monotonic() - self.limits.presence_ttl_s
        for s in channel.streams:
            if s.seen_at < since:
                continue   # its page has not confirmed for a while: most likely gone
            seen = newest.get(s.user_id)
            if seen is None or s.day_order > seen.day_order:
                newest[s.user_id] = s
        return encode(sorted(({"userId": s.user_id, "displayName": s.display_name, "dayId": s.day_id}
                              for s in newest.values()), key=lambda p: (p["displayName"].lower(), p["userId"])))

    def _presence_frame(self, channel: Channel, data: bytes) -> bytes:
        return frame(self._id(channel.head()), "presence", data)

    def _presence_changed(self, channel: Channel) -> None:
        """Announce the list soon: right after what is being published now
        (a removal's `members` event comes first), and at most every PRESENCE_GAP_S."""
        if channel.presence_timer is not None or self._closed:
            return
        wait = max(0.0, channel.presence_at + PRESENCE_GAP_S - time.monotonic())
        channel.presence_timer = asyncio.get_running_loop().call_later(wait, self._announce_presence, channel)

    def _announce_presence(self, channel: Channel) -> None:
        channel.presence_timer = None
        current = self._presence_list(channel)
        if current == channel.presence:
            return
        channel.presence, channel.presence_at = current, time.monotonic()
        self._broadcast(channel, self._presence_frame(channel, current))

    # -- changes ------------------------------------------------------------------

    def changed(self, event: TripEvent) -> None:
        """A committed change (the LIVE phase of app/changes.py: after the
        trips in memory and the heads, so a pump reads them fresh)."""
        trip_id, kinds = event.trip_id, event.kinds()
        if "members" in kinds or "deleted" in kinds:
            # A deletion counts too: a stream whose membership check passed just
            # before the trip went would otherwise open on a trip with no channel
            # left to end it, and stay open (and hold a place) for ever.
            self._members_changes += 1
        channel = self._channels.get(trip_id)
        if channel is None or self._closed:
            return
        if "deleted" in kinds:
            gone = frame(self._id(self._counter), "gone", GONE_DELETED)
            for stream in list(channel.streams):
                self.drop(stream, gone)
            self._forget(trip_id, channel)
            return
        channel.pending |= kinds
        if channel.pump is None:
            channel.pump = asyncio.get_running_loop().create_task(self._pump(trip_id, channel))

    async def _pump(self, trip_id: str, channel: Channel) -> None:
        try:
            while channel.pending and self._channels.get(trip_id) is channel:
                kinds, channel.pending = channel.pending, set()
                heads = await self.heads.get(trip_id) if kinds & HEAD_KINDS else None
                members = await self._member_ids(trip_id) if "members" in kinds else None
                if self._channels.get(trip_id) is channel:
                    self._emit(channel, kinds, heads, members)
        except NotFound:
            pass  # the trip is being deleted; its "deleted" change ends the streams
        except Exception:
            log.exception("live events for a trip failed")
            # What changed is unknown (a removed member could keep listening):
            # end every stream; pages reconnect, and membership is checked again.
            reset = frame(self._id(channel.head()), "reset", EMPTY)
            for stream in list(channel.streams):
                self.drop(stream, reset)
        finally:
            channel.pump = None

    async def _member_ids(self, trip_id: str) -> set[str]:
        rows = await self.db.fetchall("SELECT user_id FROM members WHERE trip_id = ?", (trip_id,))
        return {r[0] for r in rows}

    def _emit(self, channel: Channel, kinds: set[str], heads: tuple[int, int, int] | None,
              members: set[str] | None) -> None:
        if members is not None:
            # Removed members leave before anyone hears about the change.
            for stream in [s for s in channel.streams if s.user_id not in members]:
                self.drop(stream, frame(self._id(self._counter), "gone", GONE_REMOVED))
            self._publish(channel, "members", EMPTY)
        if heads is not None:
            version, seq, pending = heads
            if version > channel.version:
                channel.version = version
                self._publish(channel, "trip", encode({"version": version}))
            if seq > channel.seq:
                channel.seq = seq
                self._publish(channel, "timeline", encode({"seq": seq}))
            if "suggestions" in kinds:
                self._publish(channel, "suggestion", encode({"pending": pending}))
        if "social" in kinds:
            self._publish(channel, "social", EMPTY)

    def _publish(self, channel: Channel, kind: str, data: bytes) -> None:
        self._counter += 1
        event = frame(self._id(self._counter), kind, data)
        if len(channel.ring) >= RING_SIZE:
            channel.floor = channel.ring.popleft()[0]
        channel.ring.append((self._counter, event))
        self._broadcast(channel, event)

    def _broadcast(self, channel: Channel, event: bytes) -> None:
        slow = [s for s in channel.streams if not s.push(event)]
        for stream in slow:
            # Its writes are stuck: end the connection now (the page reconnects and resumes).
            self.drop(stream, abort=True)

    def _forget(self, trip_id: str, channel: Channel) -> None:
        if channel.presence_timer is not None:
            channel.presence_timer.cancel()
        if self._channels.get(trip_id) is channel:
            del self._channels[trip_id]

    # -- ids and keep-alive -------------------------------------------------------

    def _id(self, n: int) -> str:
        return f"{self.epoch}-{n}"

    def _cursor(self, last_event_id: str | None) -> int | None:
        """The `n` of an id this process handed out; None for anything else."""
        epoch, _, n = (last_event_id or "").partition("-")
        return int(n) if epoch == self.epoch and n.isascii() and n.isdigit() and len(n) < 19 else None

    def _start_ticker(self) -> None:
        if self._ticker is None:
            self._ticker = asyncio.get_running_loop().create_task(self._tick())

    async def _tick(self) -> None:
        """Every keep-alive interval: streams whose session has expired end
        (`gone` "expired": a stream outlived its session, and kept telling the
        page of changes it could no longer read), a comment line on every
        other stream (proxies close silent connections), presence without the
        pages that stopped confirming it, and forget trips nobody has watched
        for a while."""
        while True:
            await asyncio.sleep(self.limits.keepalive_s)
            now, today = time.monotonic(), self.wall_clock()
            for trip_id, channel in list(self._channels.items()):
                for stream in [s for s in channel.streams if s.session_ends <= today]:
                    self.drop(stream, frame(self._id(self._counter), "gone", GONE_EXPIRED))
                if channel.streams:
                    self._broadcast(channel, KEEPALIVE)
                    self._presence_changed(channel)   # announced only if a page's presence expired
                elif now - channel.idle_since > RESUME_GRACE_S and channel.pump is None:
                    self._forget(trip_id, channel)
