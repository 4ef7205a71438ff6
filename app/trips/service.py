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
from typing import Any, Awaitable, Callable, Sequence

import aiosqlite

from pydantic import BaseModel, ValidationError

from .. import media
from ..ids import new_id, utcnow
from ..errors import Conflict, Forbidden, NotFound
from ..routes.common import ROLE_RANK, validation_error
from ..services import Services
from . import store
from .model import Trip
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


async def apply_ops(
    svc: Services,
    trip_id: str,
    actor_id: str,
    ops: Sequence[tuple[str, Any]],
    *,
    base_version: int | None = None,
    source: str = "member",
    precondition: Callable[[Trip], None] | None = None,
    claim: Callable[[aiosqlite.Connection], Awaitable[None]] | None = None,
) -> Applied:
    """Validate, check the actor's role, apply in order on one aggregate, persist once.

    `precondition(trip)` runs on the freshly loaded aggregate inside the
    transaction (plan drafts use it to refuse a changed day). `claim(conn)`
    runs its own SQL in the same transaction, so a record that authorises the
    change (an agent suggestion) is claimed if and only if the change commits."""
    validated = [(name, validate_args(name, args)) for name, args in ops]
    async with svc.db.write() as conn:
        rows = await conn.execute_fetchall(
            "SELECT m.role, u.display_name FROM members m JOIN users u ON u.id = m.user_id "
            "WHERE m.trip_id = ? AND m.user_id = ?", (trip_id, actor_id))
        if not rows:
            raise NotFound("Trip not found")
        role, actor_name = rows[0]
        for name, _ in validated:
            needs = TRIP_OPS[name].role
            if ROLE_RANK[role] < ROLE_RANK[needs]:
                raise Forbidden(f"This needs the {needs} role on the trip; you are a {role}")
        if claim is not None:  # first, so a record already used is reported as such
            await claim(conn)
        before = await store.load(conn, trip_id)
        if base_version is not None and base_version != before.version:
            raise Conflict(
                f"The trip changed since you loaded it (version {before.version}, you had {base_version}). Reload and try again.",
                code="stale", currentVersion=before.version)
        if precondition is not None:
            precondition(before)
        trip = before.snapshot()
        ctx = OpContext(actor_id=actor_id, now=utcnow())
        summaries = [TRIP_OPS[name].apply(trip, args, ctx) for name, args in validated]
        await store.save(conn, before, trip)
        for (name, args), summary in zip(validated, summaries):
            await store.append_message(
                conn, trip_id, role="system", source="operation", actor_user_id=actor_id, actor_name=actor_name,
                op=name, parts=[{"type": "text", "text": summary},
                                {"type": "data-operation", "data": {"op": name, "args": args.model_dump(mode="json", exclude_unset=True),
                                                                     "version": trip.version, "via": source}}])
    if svc.trip_cache is not None:
        svc.trip_cache.invalidate(trip_id)
    event = OpEvent(trip_id, actor_id, tuple(n for n, _ in validated), tuple(summaries), before, trip, source)
    for listener in svc.op_listeners:
        try:
            listener(event)
        except Exception:  # a listener must never undo or fail a committed write
            log.exception("op listener failed")
    return Applied(summaries, trip, role)


async def apply_op(svc: Services, trip_id: str, actor_id: str, op_name: str, args: Any, *,
                   base_version: int | None = None, source: str = "member") -> Applied:
    return await apply_ops(svc, trip_id, actor_id, [(op_name, args)], base_version=base_version, source=source)


async def create_trip(svc: Services, owner_id: str, *, title: str, start_date: date, days: int,
                      destination: dict | None, timezone: str, currency: str) -> str:
    trip_id, now = new_id(), utcnow()
    dest = destination or {}
    async with svc.db.write() as conn:
        await conn.execute(
            "INSERT INTO trips (id, title, dest_name, dest_lat, dest_lng, start_date, timezone, currency, version, "
            "created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)",
            (trip_id, title, dest.get("name"), dest.get("lat"), dest.get("lng"), start_date.isoformat(), timezone, currency, owner_id, now, now))
        await conn.execute("INSERT INTO members (trip_id, user_id, role, joined_at) VALUES (?, ?, 'owner', ?)",
                           (trip_id, owner_id, now))
        await conn.executemany("INSERT INTO days (id, trip_id, position, title, note) VALUES (?, ?, ?, '', '')",
                               [(new_id(), trip_id, i) for i in range(days)])
    return trip_id


async def delete_trip(svc: Services, trip_id: str) -> None:
    """Delete the trip, everything in it (cascades) and its uploaded files."""
    await svc.db.execute_write("DELETE FROM trips WHERE id = ?", (trip_id,))
    if svc.trip_cache is not None:
        svc.trip_cache.invalidate(trip_id)
    folder = media.trip_folder(svc.settings.uploads_dir, trip_id)
    if folder is not None:
        await asyncio.to_thread(shutil.rmtree, folder, True)
