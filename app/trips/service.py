"""The one write path: apply registry ops to the Trip aggregate in one
transaction that bumps `trips.version` and appends operation events.

HTTP routes, agent tools, approved suggestions and plan drafts all call
`apply_ops`; nothing else writes trip content.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from dataclasses import dataclass
from datetime import date
from typing import Any
from collections.abc import Callable, Sequence

from pydantic import BaseModel, ValidationError

from .. import media
from ..db import SyncTransaction
from ..ids import new_id, utcnow
from ..errors import AppError, Conflict, NotFound, validation_error
from ..roles import require_role
from ..services import Services
from . import store
from .model import Trip
from .state import TripState
from .ops import TRIP_OPS, Args, OpContext

log = logging.getLogger("wayline")


@dataclass(frozen=True)
class OpEvent:
    """What listeners (the agent's evaluation) learn after a commit."""

    trip_id: str
    actor_id: str
    ops: tuple[str, ...]
    summaries: tuple[str, ...]
    before: Trip
    after: Trip
    source: str


@dataclass
class Applied:
    summaries: list[str]
    trip: Trip
    role: str


def validate_args(op_name: str, args: Any) -> Args:
    spec = TRIP_OPS.get(op_name)
    if spec is None:
        raise NotFound(f"Unknown operation {op_name!r}", code="unknown_op")
    if isinstance(args, spec.args):
        return args
    if isinstance(args, BaseModel):
        args = args.model_dump(exclude_unset=True)
    try:
        return spec.args.model_validate(args)
    except ValidationError as exc:
        raise validation_error(exc) from None


class _Retry(Exception):
    """What the op validated against is not what the database holds (an op
    queued before it failed, a member changed, the trip went): validate again."""


async def apply_ops(
    svc: Services,
    trip_id: str,
    actor_id: str,
    ops: Sequence[tuple[str, Any]],
    *,
    base_version: int | None = None,
    source: str = "member",
    precondition: Callable[[Trip], None] | None = None,
    claim: Callable[[SyncTransaction], None] | None = None,
) -> Applied:
    """Validate, check the actor's role, apply in order on one aggregate, persist once.

    The ops run on an edit copy of the trip in memory (`svc.trips`) under the
    trip's lock; the rows they changed, the version and the operation events
    are written in one transaction, one hop to the writer; after its COMMIT
    the new trip is published (trips/state.py) and announced, then the op
    listeners hear about it with the trip before and after (both shared and
    never changed, so nothing is copied for them).

    The lock covers validating and queueing, not the write: the next op on
    the trip validates against this one's result (`TripState.head`) and is
    queued behind it on the writer. Each transaction first checks that the
    database holds the version its op validated against, so if an earlier
    one failed, the ops built on it validate again; memory only ever holds
    what committed.

    `precondition(trip)` runs on the trip the ops apply to (plan drafts use
    it to refuse a changed day). `claim(tx)` runs its own SQL first in the
    same transaction, so a record that authorises the change (an agent
    suggestion) is claimed if and only if the change commits; an error in
    the ops is reported after the claim, so a record already used is
    reported as such."""
    validated = [(name, validate_args(name, args)) for name, args in ops]
    while True:
        async with svc.trips.lock(trip_id):
            state = await svc.trips.get(trip_id)
            before, trip, role, summaries, write = _prepare(svc, state, actor_id, validated, base_version, source,
                                                            precondition, claim)
            written = svc.db.queue(write)
            state.head = trip
        try:
            await written
        except BaseException as exc:
            state.head = None  # nothing speculative survives a failure; ops built on it retry
            if isinstance(exc, _Retry):
                continue
            raise
        if state.head is trip:
            state.head = None  # published: the trip itself is the base again
        break
    event = OpEvent(trip_id, actor_id, tuple(n for n, _ in validated), tuple(summaries), before, trip, source)
    for listener in svc.op_listeners:
        try:
            listener(event)
        except Exception:  # a listener must never undo or fail a committed write
            log.exception("op listener failed")
    return Applied(summaries, trip, role)


def _prepare(svc: Services, state: TripState, actor_id: str, validated: list[tuple[str, Args]],
             base_version: int | None, source: str, precondition: Callable[[Trip], None] | None,
             claim: Callable[[SyncTransaction], None] | None):
    """Check the role, apply the ops to an edit copy; (before, after, role,
    summaries, the transaction that writes them)."""
    role = state.role_of(actor_id)
    if role is None:
        raise NotFound("Trip not found")
    for name, _ in validated:
        require_role(role, TRIP_OPS[name].role)
    before = state.head or state.trip
    failure: AppError | None = None
    trip, summaries = before, []
    try:
        if base_version is not None and base_version != before.version:
            raise Conflict(
                f"The trip changed since you loaded it (version {before.version}, you had {base_version}). "
                "Reload and try again.", code="stale", currentVersion=before.version)
        if precondition is not None:
            precondition(before)
        trip = before.edit()
        ctx = OpContext(actor_id=actor_id, now=utcnow())
        summaries = [TRIP_OPS[name].apply(trip, args, ctx) for name, args in validated]
        trip.seal()
    except AppError as exc:
        if claim is None:
            raise
        # Reported after the claim; the half-made edit must not become the
        # base the next op on this trip validates against.
        failure, trip, summaries = exc, before, []
    actor_name, trip_id = state.name_of(actor_id), before.id

    def write(tx: SyncTransaction) -> None:
        if state.invalid:
            raise _Retry()
        if claim is not None:
            claim(tx)
        if failure is not None:
            if store.stored_version(tx, trip_id) != before.version:
                raise _Retry()
            raise failure
        if not store.write_changes(tx, before, trip):  # an op queued before this one failed: not at before.version
            raise _Retry()
        for (name, args), summary in zip(validated, summaries):
            store.append_message_row(
                tx, trip_id, role="system", source="operation", actor_user_id=actor_id, actor_name=actor_name,
                op=name, parts=[{"type": "text", "text": summary},
                                {"type": "data-operation",
                                 "data": {"op": name, "args": args.model_dump(mode="json", exclude_unset=True),
                                          "version": trip.version, "via": source}}])
        tx.after_commit(lambda: svc.trips.publish(state, trip))

    return before, trip, role, summaries, write


async def apply_op(svc: Services, trip_id: str, actor_id: str, op_name: str, args: Any, *,
                   base_version: int | None = None, source: str = "member") -> Applied:
    return await apply_ops(svc, trip_id, actor_id, [(op_name, args)], base_version=base_version, source=source)


async def create_trip(svc: Services, owner_id: str, *, title: str, start_date: date, days: int,
                      destination: dict | None, timezone: str, currency: str) -> str:
    trip_id, now = new_id(), utcnow()
    dest = destination or {}
    async with svc.db.write() as tx:
        tx.touch(trip_id, "content", "members")
        await tx.execute(
            "INSERT INTO trips (id, title, dest_name, dest_lat, dest_lng, start_date, timezone, currency, version, "
            "created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)",
            (trip_id, title, dest.get("name"), dest.get("lat"), dest.get("lng"), start_date.isoformat(),
             timezone, currency, owner_id, now, now))
        await tx.execute("INSERT INTO members (trip_id, user_id, role, joined_at) VALUES (?, ?, 'owner', ?)",
                         (trip_id, owner_id, now))
        await tx.executemany("INSERT INTO days (id, trip_id, position, title, note) VALUES (?, ?, ?, '', '')",
                               [(new_id(), trip_id, i) for i in range(days)])
    return trip_id


async def delete_trip(svc: Services, trip_id: str) -> None:
    """Delete the trip, everything in it (cascades) and its uploaded files."""
    async with svc.db.write() as tx:
        tx.touch(trip_id, "deleted")
        await tx.execute("DELETE FROM trips WHERE id = ?", (trip_id,))
    folder = media.trip_folder(svc.settings.uploads_dir, trip_id)
    if folder is not None:
        await asyncio.to_thread(shutil.rmtree, folder, True)


async def trips_of(svc: Services, user_id: str) -> list[dict]:
    """The trips a user belongs to, for their list (soonest first)."""
    rows = await svc.db.fetchall(
        "SELECT t.id, t.title, t.start_date, t.dest_name, t.version, m.role, "
        "(SELECT COUNT(*) FROM days d WHERE d.trip_id = t.id) AS day_count, "
        "(SELECT COUNT(*) FROM members x WHERE x.trip_id = t.id) AS member_count "
        "FROM members m JOIN trips t ON t.id = m.trip_id WHERE m.user_id = ? ORDER BY t.start_date, t.title",
        (user_id,))
    return [{"id": r["id"], "title": r["title"], "startDate": r["start_date"], "destination": r["dest_name"],
             "days": r["day_count"], "members": r["member_count"], "role": r["role"], "version": r["version"]}
            for r in rows]
