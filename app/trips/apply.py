"""The one write path: apply registry ops to the Trip aggregate in one
transaction that bumps `trips.version` and appends operation events.

HTTP routes, agent tools, approved suggestions and plan drafts all call
`apply_ops`; nothing else writes trip content.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from collections.abc import Callable, Sequence

from ..db import Tx
from ..ids import utcnow
from ..errors import AppError, Conflict, NotFound
from ..roles import require_role
from . import store
from .model import Trip
from .events import OpsApplied
from .state import TripState, TripStates
from .ops import TRIP_OPS, Args, OpContext, validate_args



@dataclass
class Applied:
    summaries: list[str]
    trip: Trip
    role: str


class _Retry(Exception):
    """What the op validated against is not what the database holds (an op
    queued before it failed, a member changed, the trip went): validate again."""


async def apply_ops(
    trips: TripStates,
    trip_id: str,
    actor_id: str,
    ops: Sequence[tuple[str, Any]],
    *,
    base_version: int | None = None,
    source: str = "member",
    precondition: Callable[[Trip], None] | None = None,
    claim: Callable[[Tx], None] | None = None,
    one_change: bool = False,
) -> Applied:
    """Validate, check the actor's role, apply in order on one aggregate, persist once.

    The ops run on an edit copy of the trip in memory (`trips`) under the
    trip's lock; the rows they changed, the version and the operation events
    are written in one transaction on the database's writer; after its
    COMMIT one `OpsApplied` event (trips/events.py) carries the trip before
    and after (both shared and never changed, so nothing is copied): the
    trips in memory publish it, then the heads, live pages and the agent
    hear of it (app/changes.py's phases).

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
    reported as such.

    `one_change`: the ops are one remedy (a review fix, a suggestion's
    patch): ONE timeline line says what they did together (their summaries
    in one sentence) and carries each op's data part, instead of a line per
    op. Either way it is one transaction and one version."""
    validated = [(name, validate_args(name, args)) for name, args in ops]
    while True:
        async with trips.lock(trip_id):
            state = await trips.get(trip_id)
            before, trip, role, summaries, write = _prepare(trips, state, actor_id, validated, base_version, source,
                                                            precondition, claim, one_change)
            written = trips.db.write(write)
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
    return Applied(summaries, trip, role)


def _prepare(trips: TripStates, state: TripState, actor_id: str, validated: list[tuple[str, Args]],
             base_version: int | None, source: str, precondition: Callable[[Trip], None] | None,
             claim: Callable[[Tx], None] | None, one_change: bool = False
             ) -> tuple[Trip, Trip, str, list[str], Callable[[Tx], None]]:
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
        ctx = OpContext(actor_id=actor_id, now=utcnow(), rules=trips.op_rules)
        summaries = [TRIP_OPS[name].apply(trip, args, ctx) for name, args in validated]
        trip.seal()
    except AppError as exc:
        if claim is None:
            raise
        # Reported after the claim; the half-made edit must not become the
        # base the next op on this trip validates against.
        failure, trip, summaries = exc, before, []
    actor_name, trip_id = state.name_of(actor_id), before.id

    def write(tx: Tx) -> None:
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
        data = [{"type": "data-operation",
                 "data": {"op": name, "args": args.model_dump(mode="json", exclude_unset=True),
                          "version": trip.version, "via": source}} for name, args in validated]
        if one_change and len(validated) > 1:
            store.append_message(
                tx, trip_id, role="system", source="operation", actor_user_id=actor_id, actor_name=actor_name,
                op="+".join(name for name, _ in validated),
                parts=[{"type": "text", "text": one_sentence(summaries)}, *data])
        else:
            for (name, _), summary, part in zip(validated, summaries, data):
                store.append_message(
                    tx, trip_id, role="system", source="operation", actor_user_id=actor_id, actor_name=actor_name,
                    op=name, parts=[{"type": "text", "text": summary}, part])
        # After the COMMIT, in phases: the trips in memory publish `trip`, then
        # the heads, live pages and the agent hear of it (app/changes.py).
        tx.announce(OpsApplied(trip_id, actor_id, tuple(n for n, _ in validated), tuple(summaries), before, trip,
                               source))

    return before, trip, role, summaries, write


def one_sentence(summaries: Sequence[str]) -> str:
    """Several ops' summaries as what they did together: "Moved “A” to Day 2,
    after “B” and set “A” to 10:00"."""
    parts = [text.rstrip(".") for text in summaries if text]
    if len(parts) < 2:
        return parts[0] if parts else ""
    rest = [p[0].lower() + p[1:] if p[:1].isupper() and not p[1:2].isupper() else p for p in parts[1:]]
    return ", ".join([parts[0], *rest[:-1]]) + " and " + rest[-1]


async def apply_op(trips: TripStates, trip_id: str, actor_id: str, op_name: str, args: Any, *,
                   base_version: int | None = None, source: str = "member") -> Applied:
    return await apply_ops(trips, trip_id, actor_id, [(op_name, args)], base_version=base_version, source=source)
