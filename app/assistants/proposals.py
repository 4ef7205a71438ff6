"""An outside assistant's change is a proposal, never an edit.

A write tool call (one per op of TRIP_OPS) or "apply a review fix" is
validated against the op's model and dry-run on the trip as it is (a call
that could not apply is refused at once, in plain words), then reviewed: the
same rules as the agent's evaluation (`material_risks`, with the trip's
places and weather) say what new problem the change would bring, and that
verdict goes with it. It is filed as a pending suggestion in the trip's
timeline, attributed "Claude via Alice", and members approve or deny it with
the agent's suggestion routes (app/agent/suggestions.py applies it through
apply_ops as the approving member). The trip is not touched here.
"""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

from ..db import Tx
from ..trips import store
from ..agent import timeline
from ..agent.timeline import iso, now_dt
from .deps import AssistantDeps
from ..errors import NotFound
from ..ids import new_id
from ..quotas import quota_count
from ..review.facts import load_day, stop_places, trip_country, trip_weather
from ..review.findings import material_risks
from ..trips.apply import one_sentence
from ..trips.edits import as_patch, patch_edits
from ..trips.model import Trip
from ..trips.ops import TRIP_OPS, OpContext, validate_args
from .tokens import Caller, role_for

EXPIRY = timedelta(days=7)       # the group may take a while to look; a proposal that no longer applies is stale
# Waiting at once per member and trip, all the member's tokens together: every open page of every
# member reads each pending suggestion on every poll (app/quotas.py lists it with the others).
MAX_PENDING_PROPOSALS = 20
SEVERITY = {"problem": "high", "warning": "medium", "ok": "low"}


async def propose_op(svc: AssistantDeps, caller: Caller, trip_id: str, op_name: str, args: Any) -> dict:
    """File `op_name(args)` as a pending suggestion; its id and what the review says."""
    spec = TRIP_OPS.get(op_name)
    if spec is None or not spec.agent:
        raise NotFound(f"There is no change called {op_name!r}", code="unknown_op")
    await role_for(svc, caller, trip_id, needs=spec.role)
    validated = validate_args(op_name, args)
    trip = (await svc.trips.get(trip_id)).trip
    return await _file(svc, caller, trip, as_patch([(op_name, validated.model_dump(mode="json", exclude_unset=True))]))


async def propose_fix(svc: AssistantDeps, caller: Caller, trip_id: str, day_id: str, fix_id: str) -> dict:
    """Propose one of the fixes the day's review computed (by its id)."""
    await role_for(svc, caller, trip_id, needs="editor")
    ctx = await load_day(svc, trip_id, day_id)
    for finding in ctx.review().findings:
        for fix in finding.fixes:
            if fix.id == fix_id:   # a fix may be several edits: one patch, one change, as the page applies it
                return await _file(svc, caller, ctx.trip, as_patch(list(fix.edits), label=fix.label),
                                   {"id": finding.id, "kind": finding.kind, "dayId": finding.day_id,
                                    "stopIds": list(finding.stop_ids)})
    raise NotFound("That fix is not in the day's review any more: review the day again", code="fix_not_found")


async def _file(svc: AssistantDeps, caller: Caller, trip: Trip, patch: dict, finding: dict | None = None) -> dict:
    """File the patch (`{"edits": [...]}`); `finding`, for a review fix, is
    the finding it clears: the suggestion resolves once that is gone."""
    after = trip.edit()
    ctx = OpContext(caller.user_id, "", svc.trips.op_rules)   # this server's quota and origin, as the write checks
    summary = one_sentence([TRIP_OPS[op].apply(after, validate_args(op, args), ctx)
                            for op, args in patch_edits(patch)])
    verdict = await _review(svc, trip, after)
    now, suggestion_id = now_dt(svc), new_id()

    def work(tx: Tx) -> None:
        # Counted in the write's own transaction: concurrent calls cannot pass the bound together.
        if tx.fetchval("SELECT COUNT(*) FROM agent_suggestions WHERE trip_id = ? AND proposed_by = ? AND "
                       "status = 'pending' AND (expires_at IS NULL OR expires_at > ?)",
                       (trip.id, caller.user_id, iso(now))) >= MAX_PENDING_PROPOSALS:
            raise quota_count(f"{MAX_PENDING_PROPOSALS} changes proposed by {caller.member_name}'s assistants are "
                              "already waiting in this trip: wait until the group has decided on some of them.",
                              "pending_proposals")
        message = store.append_message(tx, trip.id, role="assistant", source="assistant",
                                       actor_user_id=caller.user_id, actor_name=caller.label, parts=[
            {"type": "text", "text": f"{caller.label} proposes a change for a member to approve: {summary}"},
            {"type": "data-suggestion", "data": {
                "suggestionId": suggestion_id, "severity": SEVERITY[verdict["status"]], "confidence": 1.0,
                "reason": verdict["text"], "patch": patch, "proposedAs": caller.label, "review": verdict}}])
        tx.touch(trip.id, "suggestions")
        tx.execute(
            "INSERT INTO agent_suggestions (id, trip_id, message_id, status, severity, confidence, reason, "
            "suggestion_text, patch_json, trip_version, expires_at, created_at, updated_at, proposed_by, "
            "proposed_as, review_json, finding_json) "
            "VALUES (?, ?, ?, 'pending', ?, 1.0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (suggestion_id, trip.id, message["id"], SEVERITY[verdict["status"]], verdict["text"], summary,
             json.dumps(patch, ensure_ascii=False), trip.version, iso(now + EXPIRY), iso(now), iso(now),
             caller.user_id, caller.label, json.dumps(verdict, ensure_ascii=False),
             None if finding is None else json.dumps(finding, ensure_ascii=False)))

    await svc.db.write(work)
    return {"suggestionId": suggestion_id, "status": "pending", "summary": summary, "review": verdict,
            "note": "Nothing has changed yet: a member approves or denies this in Wayline. "
                    "Follow it with get_suggestion."}


async def _review(svc: AssistantDeps, before: Trip, after: Trip) -> dict:
    """What the day review's rules find new after the change (no model call):
    the facts the agent's evaluation uses, the places from the cache and the weather."""
    places, weather = await asyncio.gather(
        stop_places(svc.places, [*before.all_stops(), *after.all_stops()], trip_country(after)),
        trip_weather(svc.weather, after))
    risks = await asyncio.to_thread(lambda: material_risks(before, after, places=places, weather=weather))
    findings = [{"kind": r.kind, "severity": r.severity, "message": r.message} for r in risks]
    status = "problem" if any(f["severity"] == "problem" for f in findings) else "warning" if findings else "ok"
    if not findings:
        text = "The review finds no new problem with this change."
    else:
        text = "The review finds: " + " ".join(f["message"] for f in findings[:5])
    return {"status": status, "text": text, "findings": findings}


async def suggestion(svc: AssistantDeps, caller: Caller, trip_id: str, suggestion_id: str) -> dict:
    """A suggestion of the trip as an assistant follows it: its status (an
    expired one says so), what it changes, the review, who denied it."""
    await role_for(svc, caller, trip_id)
    rows = await svc.db.fetchall(
        f"SELECT {timeline.SUGGESTION_COLUMNS} FROM agent_suggestions WHERE id = ? AND trip_id = ?",
        (suggestion_id, trip_id))
    if not rows:
        raise NotFound("No such suggestion in this trip", code="suggestion_not_found")
    denied = await svc.db.fetchall(
        "SELECT u.display_name FROM agent_suggestion_dismissals d JOIN users u ON u.id = d.user_id "
        "WHERE d.suggestion_id = ? ORDER BY d.created_at", (suggestion_id,))
    dto = timeline.suggestion_dto(rows[0])
    status = dto["status"]
    if status == "pending" and dto["expiresAt"] is not None and dto["expiresAt"] <= iso(now_dt(svc)):
        status = "expired"
    return {"id": dto["id"], "status": status, "summary": dto["suggestionText"], "patch": dto["patch"],
            "proposedAs": dto["proposedAs"], "review": dto["review"], "createdAt": dto["createdAt"],
            "expiresAt": dto["expiresAt"], "deniedBy": [r[0] for r in denied],
            "appliedBy": dto["appliedBy"]}

