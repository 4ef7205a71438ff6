"""A suggestion's life after the agent made it (proactive.py): approved,
dismissed, or resolved when the finding its patch fixes is gone.

- Approve applies the patch (one change, one timeline line) as the approver.
  When the trip moved on since the suggestion was made, the patch is checked
  against the trip as it is: its finding still there and its edits still
  valid, it applies on the current version (an unrelated edit costs
  nothing); its finding gone, it is resolved (409 `resolved`); its edits no
  longer valid, it is stale (409 `stale`) and the agent looks at the day
  again, so the problem does not stay without a suggestion. A trip that moves
  before every one of its tries is a 409 `trip_changing`, still pending.
- `Resolver` (it hears `OpsApplied`, app/changes.py) re-checks a trip's pending suggestions after
  every change to it: one whose finding has gone (fixed by hand, the stop
  deleted) becomes `resolved` at once, and the live pages hear about it (the
  change signal's "suggestions" kind), so its card leaves every open page.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any
from collections.abc import Awaitable, Callable

from ..db import Tx
from ..errors import AppError, Conflict, NotFound
from ..review.facts import stop_places, trip_country, trip_weather
from ..review.findings import review_day
from ..review.issues import issue_key
from ..trips.apply import Applied, apply_ops
from ..trips.events import OpsApplied
from ..trips.edits import patch_edits
from ..trips.model import Trip
from ..trips.ops import simulate
from . import timeline
from .deps import AgentDeps
from .timeline import iso, now_dt

log = logging.getLogger("wayline.agent")

APPLY_TRIES = 3   # the trip may move again between the re-check and the write: check again


async def _suggestion(svc: AgentDeps, trip_id: str, suggestion_id: str):
    """The suggestion's row and the trip's current version, read together (one
    snapshot: another approval commits either before both or after both)."""
    row = await svc.db.fetchone(
        f"SELECT {timeline.SUGGESTION_COLUMNS}, finding_json, "
        "(SELECT version FROM trips WHERE id = ?) AS current_version "
        "FROM agent_suggestions WHERE id = ? AND trip_id = ?", (trip_id, suggestion_id, trip_id))
    if row is None:
        raise NotFound("Suggestion not found", code="suggestion_not_found")
    return row


async def _mark(svc: AgentDeps, trip_id: str, suggestion_ids: list[str], status: str) -> int:
    """Move pending suggestions to `status`; how many this call moved (a
    concurrent approval or the Resolver may have moved one first)."""
    now = iso(now_dt(svc))

    def work(tx: Tx) -> int:
        tx.touch(trip_id, "suggestions")
        return int(tx.executemany("UPDATE agent_suggestions SET status = ?, updated_at = ? WHERE id = ? AND "
                                  "status = 'pending'", [(status, now, sid) for sid in suggestion_ids]).rowcount)

    return int(await svc.db.write(work))


async def dismiss(svc: AgentDeps, trip_id: str, suggestion_id: str, user_id: str, reason: str | None) -> dict:
    """Hide the suggestion for this member only; the shared record is untouched.
    The trip's open pages are told (a `suggestion` event), so the member's
    other devices drop the card too; everyone else's read finds it unchanged."""
    await _suggestion(svc, trip_id, suggestion_id)
    now = iso(now_dt(svc))

    def work(tx: Tx) -> None:
        tx.execute(
            "INSERT OR IGNORE INTO agent_suggestion_dismissals (suggestion_id, user_id, reason, created_at) "
            "VALUES (?, ?, ?, ?)", (suggestion_id, user_id, reason, now))
        tx.touch(trip_id, "suggestions")

    await svc.db.write(work)
    return {"dismissed": True}


Reconsider = Callable[[str, str, str, str], Awaitable[None]]   # (trip, day, member, why): the agent looks again


async def apply_suggestion(svc: AgentDeps, trip_id: str, suggestion_id: str, user_id: str,
                           reconsider: Reconsider | None = None) -> Applied:
    """Apply a pending suggestion's patch as `user_id` (edit rights already
    checked by the route). 409 `not_pending`, `expired`, `resolved` (its
    finding is gone) or `stale` (its edits no longer apply: then, for a
    suggestion made for a finding, `reconsider` has the agent look at its day
    again)."""
    row = await _suggestion(svc, trip_id, suggestion_id)
    status = timeline.suggestion_dto(row)["status"]
    if status != "pending":
        raise Conflict(f"This suggestion is {status}, not pending", code="not_pending", suggestionStatus=status)
    if row["expires_at"] is not None and row["expires_at"] <= iso(now_dt(svc)):
        await _mark(svc, trip_id, [suggestion_id], "expired")
        raise Conflict("This suggestion has expired", code="expired")
    edits = patch_edits(json.loads(row["patch_json"]))
    finding = json.loads(row["finding_json"]) if row["finding_json"] else None

    def claim(tx: Tx) -> None:
        # Runs inside apply_ops' transaction: exactly one concurrent approval
        # moves the row out of 'pending', and only if its change commits.
        tx.touch(trip_id, "suggestions")
        cursor = tx.execute(
            "UPDATE agent_suggestions SET status = 'applied', applied_by = ?, updated_at = ? "
            "WHERE id = ? AND status = 'pending'", (user_id, iso(now_dt(svc)), suggestion_id))
        if cursor.rowcount != 1:
            raise Conflict("Another member already applied this suggestion", code="not_pending")

    base = row["trip_version"]
    for attempt in range(APPLY_TRIES):
        if base != row["current_version"] or attempt:
            base = await _still_applies(svc, trip_id, suggestion_id, edits, finding, user_id, reconsider)
        try:
            return await apply_ops(svc.trips, trip_id, user_id, edits, base_version=base, source="suggestion",
                                   claim=claim, one_change=True)
        except Conflict as exc:
            if exc.code != "stale":
                raise   # not_pending: another approval won
        except AppError as exc:
            if exc.status in (401, 403, 429, 503):
                raise  # not the patch's fault: someone else may still apply it
            await _gone_stale(svc, trip_id, suggestion_id, finding, user_id, reconsider)
            raise Conflict(f"This suggestion no longer applies: {exc.message}", code="stale") from None
    # Every check found it still applies; the trip just kept moving before the write. It stays
    # pending (marking it stale would refuse the very retry this answer asks for).
    raise Conflict("The trip kept changing while this suggestion was being applied. Try again.",
                   code="trip_changing")


async def _still_applies(svc: AgentDeps, trip_id: str, suggestion_id: str, edits: list[tuple[str, Any]],
                         finding: dict[str, Any] | None, user_id: str, reconsider: Reconsider | None) -> int:
    """The trip moved on since the suggestion: the version to apply it on,
    when its finding is still there (or unknown) and its edits still apply
    to the trip as it is; else it is resolved or stale (409)."""
    trip = (await svc.trip_cache.entry(trip_id)).trip
    if finding is not None and await finding_present(svc, trip, finding) is False:
        await _mark(svc, trip_id, [suggestion_id], "resolved")
        raise Conflict("This problem has already been fixed.", code="resolved")
    try:
        simulate(trip, edits, actor_id=user_id)
    except AppError as exc:
        await _gone_stale(svc, trip_id, suggestion_id, finding, user_id, reconsider)
        raise Conflict(f"This suggestion no longer applies: {exc.message}", code="stale",
                       currentVersion=trip.version) from None
    return trip.version


async def _gone_stale(svc: AgentDeps, trip_id: str, suggestion_id: str, finding: dict[str, Any] | None,
                      user_id: str, reconsider: Reconsider | None) -> None:
    """Stale, and, for a suggestion made for a finding, the agent looks at its
    day again (the problem may still be there). A plain proposed edit (an
    outside assistant's) costs no model call. Only the call that marks it
    stale asks: two approvals at once would bring two new suggestions."""
    marked = await _mark(svc, trip_id, [suggestion_id], "stale")
    if marked and reconsider is not None and finding is not None and finding.get("dayId"):
        why = "A member tried to apply an earlier suggestion for this day, but the plan had changed too much."
        svc.background.spawn(reconsider(trip_id, finding["dayId"], user_id, why), name=f"agent-reconsider-{trip_id}")


async def finding_present(svc: AgentDeps, trip: Trip, finding: dict[str, Any]) -> bool | None:
    """Whether the finding a suggestion fixes is still on its day (the
    review's rules on the trip as it is, with its places and weather); None
    when that cannot be told (the facts it rests on are unknown right now)."""
    day = next((d for d in trip.days if d.id == finding.get("dayId")), None)
    if finding.get("dayId") is None:
        return None   # a trip-wide finding (budget): not the review's to re-check
    if day is None:
        return False
    if not set(finding["stopIds"]) <= {s.id for s in day.stops}:
        return False   # a stop it is about was deleted or moved away
    weather = None
    if finding["kind"] == "weather":
        weather = await trip_weather(svc.weather, trip)
        if weather is None:
            return None
    places = await stop_places(svc.places, day.stops, trip_country(trip))
    if finding["kind"] in ("closed", "weather", "meal_time") and any(
            s.place_id and s.place_id not in (places or {}) for s in day.stops if s.id in finding["stopIds"]):
        return None
    legs = (await svc.trip_cache.entry(trip.id)).legs.get(day.id, [])
    result = await asyncio.to_thread(review_day, trip, day, legs, trip.prefs, places, weather=weather,
                                     with_fixes=False)
    return issue_key(finding["kind"], finding["stopIds"], day.id) in {f.key for f in result.findings}


class Resolver:
    """Hears `OpsApplied` (the AGENT phase): after any change to a trip with pending suggestions,
    each one whose finding is gone becomes `resolved` (one task per trip at a
    time; changes meanwhile are checked once more after it)."""

    def __init__(self, svc: AgentDeps):
        self.svc = svc
        self._dirty: set[str] = set()
        self._running: set[str] = set()

    def __call__(self, event: OpsApplied) -> None:
        self._dirty.add(event.trip_id)
        if event.trip_id not in self._running:
            self._running.add(event.trip_id)
            self.svc.background.spawn(self._run(event.trip_id), name=f"agent-resolve-{event.trip_id}")

    async def _run(self, trip_id: str) -> None:
        try:
            while trip_id in self._dirty:
                self._dirty.discard(trip_id)
                try:
                    await self.check(trip_id)
                except NotFound:
                    return   # the trip is gone
                except Exception:  # never fails the edit that triggered it
                    log.exception("agent: re-checking suggestions failed")
        finally:
            self._running.discard(trip_id)

    async def check(self, trip_id: str) -> list[str]:
        """Resolve the trip's pending suggestions whose finding is gone; their ids."""
        _, _, pending = await self.svc.heads.get(trip_id)
        if not pending:
            return []
        rows = await self.svc.db.fetchall(
            "SELECT id, finding_json FROM agent_suggestions WHERE trip_id = ? AND status = 'pending' "
            "AND finding_json IS NOT NULL", (trip_id,))
        if not rows:
            return []
        trip = (await self.svc.trip_cache.entry(trip_id)).trip
        gone = [row["id"] for row in rows if await finding_present(self.svc, trip, json.loads(row["finding_json"]))
                is False]
        if gone:
            await _mark(self.svc, trip_id, gone, "resolved")
        return gone
