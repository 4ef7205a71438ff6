"""Ops made on one version and reaching the trip later: applied through the
one write path on the trip as it is now, unless they no longer apply.

A member's page sends the ops the registry marks `replay` with the trip
version it made them on, whether they go at once or wait on the device for
a connection (public/offline/outbox.js): a change sent online whose answer
was lost, or that a busy server put off, arrives later just the same, and
its words must hold either way ("Before your change reached the trip"). Such an op is applied to
the current trip (a stop added, moved or retimed still means what its author
meant on a newer version), with two ways to refuse it, both reported to its
author by the page:

- what it names is gone (a removed stop: the op's own 404), or
- another member changed what it changes after that version (the registry's
  `changes`: the stop it moves, the day it renames): 409 `changed_meanwhile`,
  naming who did what, so one member's offline edit never silently undoes
  another's. The author's own ops never conflict with each other.

The check reads the trip's operation timeline (one row per op, with its
version) inside the op's own transaction (`claim`), so no change can slip in
between the check and the write.
"""

from __future__ import annotations

import json
from typing import Any

from ..db import Tx
from ..errors import Conflict, Invalid
from .apply import Applied, apply_ops
from .ops import TRIP_OPS, validate_args
from .model import Trip
from .state import TripStates


def replayable_ops() -> list[str]:
    """The ops a page may keep while offline (GET /api/config `offlineOps`)."""
    return [name for name, spec in TRIP_OPS.items() if spec.replay]


async def apply_replayed(trips: TripStates, trip_id: str, actor_id: str, op_name: str, args: Any,
                         made_on_version: int) -> Applied:
    spec = TRIP_OPS.get(op_name)
    validated = validate_args(op_name, args)   # 404 for an unknown op, 422 naming the field
    if spec is None or not spec.replay:
        raise Invalid(f"madeOnVersion: this change cannot be sent later ({op_name} needs a connection)",
                      field="madeOnVersion")
    names = {value for field in spec.changes if isinstance(value := getattr(validated, field, None), str)}

    def unchanged_by_others(tx: Tx) -> None:
        if names:
            _refuse_if_changed(tx, trip_id, actor_id, made_on_version, names)

    return await apply_ops(trips, trip_id, actor_id, [(op_name, validated)], claim=unchanged_by_others,
                           precondition=lambda trip: _anchor_still_there(trip, validated))


def _anchor_still_there(trip: Trip, args: Any) -> None:
    """A stop added offline after a stop that has since left its day (moved or
    removed by someone): 409 in words. The op's own refusal is for API callers
    ("afterStopId must be a stop of the same day", or the anchor's id), and the
    page shows a refusal to the person who made the change."""
    after, day_id = getattr(args, "afterStopId", None), getattr(args, "dayId", None)
    if not isinstance(after, str) or not isinstance(day_id, str):
        return
    day = next((d for d in trip.days if d.id == day_id), None)
    if day is not None and not any(s.id == after for s in day.stops):
        raise Conflict(f"Before your change reached the trip, the stop you put “{args.name}” after was moved to "
                       f"another day or removed, so “{args.name}” was not added. Add it again where it fits now.",
                       code="changed_meanwhile")


def _refuse_if_changed(tx: Tx, trip_id: str, actor_id: str, made_on: int, names: set[str]) -> None:
    """409 when another member's op after version `made_on` changed one of `names`.
    Reads the timeline newest first and stops at the first op at or before that version."""
    rows = tx.execute(
        "SELECT actor_user_id, actor_name, parts_json FROM agent_messages "
        "WHERE trip_id = ? AND source = 'operation' ORDER BY seq DESC", (trip_id,))
    for actor, actor_name, parts_json in rows:
        parts = json.loads(parts_json)
        # A change of several ops (a review fix, an approved suggestion) is one
        # line with one data part per op, all at the same version: each counts.
        ops = [p.get("data") or {} for p in parts if p.get("type") == "data-operation"]
        version = ops[0].get("version") if ops else None
        if not isinstance(version, int) or version <= made_on:
            break
        if actor == actor_id:
            continue
        theirs = {(data.get("args") or {}).get(field)
                  for data in ops if (spec := TRIP_OPS.get(data.get("op", ""))) is not None
                  for field in spec.changes}
        if names & theirs:
            summary = next((p.get("text", "") for p in parts if p.get("type") == "text"), "")
            what = f" {summary[:1].lower()}{summary[1:]}" if summary else " changed it"
            raise Conflict(f"Before your change reached the trip, {actor_name or 'another member'}{what}, "
                           "so this change was not made.", code="changed_meanwhile", by=actor_name)
