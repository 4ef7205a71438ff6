"""Stored drafts: exact registry ops plus what the person was shown, tied to
the day's fingerprint. Apply sends only the draft id; the server applies
exactly the stored ops in one `apply_ops` call whose precondition refuses
(409 `stale`) when the day changed since. `preview_draft` shows a draft's
edits as applying them will (times, hours badges, findings, travel)."""

from __future__ import annotations

import hashlib
import json
import secrets
from datetime import datetime, timedelta, UTC

from ..db import Tx
from .. import legs as legs_mod
from .deps import PlannerDeps
from ..errors import Conflict, Invalid, NotFound
from ..fields import LAST_SERVICE_MINUTE
from ..hours.rules import DAY, HoursCheck, buffer_for, check_at, hours_on, on_date
from ..ids import iso, utcnow
from ..legs import Leg, by_pair
from ..review.facts import DayContext, FactSources
from ..review.findings import added_findings, day_fingerprint, review_day
from ..trips.apply import Applied, apply_ops
from ..trips.model import Day, Trip
from ..trips.ops import simulate
from ..trips.schedule import clock_label, day_schedule, to_hhmm, to_minutes, to_service_time

DRAFT_TTL = timedelta(hours=24)
# An account keeps its newest drafts only, whatever the trip: each answer is
# stored (a preview of a long day is ~15 KB) and any member, a viewer too,
# may ask again and again; unbounded, one connection wrote well over a GB an
# hour to a small server's disk. A page offers at most a handful at a time
# (five places, two orders), so an older one is long gone from any screen.
DRAFTS_PER_USER = 100


def new_refs(before: Day, after: Day) -> dict[str, str]:
    """Stops a draft would add get stable refs (new-1, new-2, ...) in day order."""
    old = {s.id for s in before.stops}
    added = [s.id for s in after.stops if s.id not in old]
    return {sid: f"new-{k}" for k, sid in enumerate(added, 1)}


def draft_fingerprint(trip: Trip, day: Day, edits: list[tuple[str, dict]]) -> str:
    """What a draft was made on: the day's schedule (day_fingerprint), and
    the words of each stop it removes (a replaced meal's name, note and
    address). The schedule leaves words out (a note moves no time), but a
    replacement deletes the old stop: a note another member wrote on it since
    would be lost with it, unseen by whoever applies the draft."""
    removed = {args["stopId"] for op_name, args in edits if op_name == "delete_stop"}
    words = [(s.id, s.name, s.note, s.address) for s in day.stops if s.id in removed]
    schedule = day_fingerprint(trip, day)
    if not words:
        return schedule
    return schedule + ":" + hashlib.sha256(json.dumps(words).encode()).hexdigest()[:16]


def new_draft_id() -> str:
    return "dr_" + secrets.token_urlsafe(18)


async def store_draft(svc: PlannerDeps, ctx: DayContext, user_id: str, kind: str, edits: list[dict],
                      preview: dict, place_raw: dict | None = None) -> str:
    draft_id, now = new_draft_id(), datetime.now(UTC)

    def work(tx: Tx) -> None:
        tx.execute("DELETE FROM planner_drafts WHERE expires_at < ?", (iso(now),))
        tx.execute(
            "INSERT INTO planner_drafts (id, trip_id, day_id, user_id, kind, fingerprint, edits_json, preview_json, "
            "place_json, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (draft_id, ctx.trip.id, ctx.day.id, user_id, kind,
             draft_fingerprint(ctx.trip, ctx.day, [(e["op"], e["args"]) for e in edits]),
             json.dumps(edits, separators=(",", ":")), json.dumps(preview, separators=(",", ":")),
             None if place_raw is None else json.dumps(place_raw, separators=(",", ":")), utcnow(),
             iso(now + DRAFT_TTL)))
        tx.execute("DELETE FROM planner_drafts WHERE user_id = ? AND rowid NOT IN (SELECT rowid FROM planner_drafts "
                   "WHERE user_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?)",
                   (user_id, user_id, DRAFTS_PER_USER))

    await svc.db.write(work)
    return draft_id


STALE = "The day changed since this draft was made. Ask again for a fresh one."


async def apply_draft(svc: PlannerDeps, trip_id: str, draft_id: str, user_id: str, *,
                      start_time: str | None = None, duration_min: int | None = None) -> Applied | None:
    """Apply exactly the stored edits in one change, or refuse: 404 for an
    unknown, expired or other trip's draft; 409 `stale` when the day changed;
    409 `hours` (with `latestStart`) when a suggestion's time or length does
    not fit its place's hours (a meal's rule or a visit's). Returns None when the draft changes nothing."""
    row = await svc.db.fetchone(
        "SELECT day_id, kind, fingerprint, edits_json, preview_json, place_json, expires_at FROM planner_drafts "
        "WHERE id = ? AND trip_id = ?", (draft_id, trip_id))
    if row is None or row["expires_at"] < utcnow():
        raise NotFound("No such draft on this trip (drafts last a day; ask again)", code="draft_not_found")
    edits = [(e["op"], dict(e["args"])) for e in json.loads(row["edits_json"])]
    single = row["kind"] in ("eat", "explore")
    if (start_time is not None or duration_min is not None) and not single:
        field = "startTime" if start_time is not None else "durationMin"
        raise Invalid(f"{field}: only a single suggestion's time or length can be changed", field=field)
    preview = json.loads(row["preview_json"])
    if single:
        args = edits[0][1]
        if start_time is not None:
            args["setTime"] = start_time
        if duration_min is not None:
            args["durationMin"] = duration_min
    place_raw = json.loads(row["place_json"]) if row["place_json"] else None
    day_id = row["day_id"]

    def unchanged_and_open(trip: Trip) -> None:
        try:
            day = trip.day(day_id)
        except NotFound:
            raise Conflict(STALE, code="stale") from None
        if draft_fingerprint(trip, day, edits) != row["fingerprint"]:
            raise Conflict(STALE, code="stale")
        if place_raw is not None:
            args = edits[0][1]
            # A set time is on the day plan's clock ("24:30" is 00:30 the next morning), in minutes like a start.
            start = (to_minutes(args["setTime"]) if args.get("setTime")
                     else preview.get("startMinutes", to_minutes(preview["startTime"])))
            # Hours apply to every stop with a place: a meal by the meal rule, a
            # visit by the visit rule. A meal is only ever offered with hours; a
            # visit to a place with none known is not refused (unknown is not closed).
            meal = args.get("kind") == "food"
            date = trip.dated(day)
            check = check_at(place_raw, date, start, args["durationMin"], meal=meal)
            if not check.fits and (meal or check.status != "none"):
                latest_start = _latest_start(place_raw, date, start, args["durationMin"], meal, check)
                latest = f" The latest start that fits is {latest_start}." if latest_start else ""
                whole = ("meal from {at} (with 30 minutes before closing)" if meal
                         else "visit from {at}").format(at=clock_label(start))
                raise Conflict(f"{args['name']} is not open for the whole {whole}.{latest}",
                               code="hours", latestStart=latest_start)

    if not edits:
        # Nothing to write, but the day it was previewed on must still be the day:
        # "already in its best order" said of a day that changed since is stale too.
        unchanged_and_open(await svc.trips.trip(trip_id))
        return None
    applied = await apply_ops(svc.trips, trip_id, user_id, edits, source="plan", precondition=unchanged_and_open)
    await svc.db.write(lambda tx: tx.execute("UPDATE planner_drafts SET applied_at = ? WHERE id = ?",
                                             (utcnow(), draft_id)))
    return applied


def _latest_start(place_raw: dict, date: str, start: int, duration_min: int, meal: bool,
                  check: HoursCheck) -> str | None:
    """The latest start that fits, as a start this apply takes back. A start
    after midnight is judged on the next date (check_at), whose latest start
    is on that date's clock: "21:30" there would be read as 21:30 of the
    day itself, under other hours. So after midnight it is the next
    morning's latest (24:00-29:59, the day plan's clock), else the day's own."""
    if start < DAY:
        return check.latest_start
    need = duration_min + buffer_for(meal)
    morning = hours_on(place_raw, on_date(date, DAY)[0], meal=meal)
    last = LAST_SERVICE_MINUTE - DAY
    starts = [min(c - need, last) for o, c in (morning.spans if morning else ()) if min(c - need, last) >= max(o, 0)]
    if starts:
        return to_service_time(DAY + max(starts))
    return check_at(place_raw, date, 0, duration_min, meal=meal).latest_start


async def preview_draft(svc: FactSources, ctx: DayContext, edits: list[tuple[str, dict]], summary: str,
                        more_places: dict | None = None) -> dict:
    """The draft of `edits` as applying them will show it: the preview (times
    from the legs the TripDto will compute, hours badges, review findings) and
    the travel before and after."""
    trip = simulate(ctx.trip, edits)
    day = trip.day(ctx.day.id)
    legs = await legs_mod.day_legs(svc.places, day.stops, trip.prefs)
    slots = {s.stop_id: s for s in day_schedule(day, {(g.from_stop_id, g.to_stop_id): g for g in legs})}
    places = {**(ctx.places or {}), **(more_places or {})}
    preview = _preview(ctx, day, legs, slots, new_refs(ctx.day, day), places, summary, trip)
    travel = {"beforeMin": _minutes(ctx.legs), "afterMin": _minutes(legs)}
    return {"edits": [{"op": name, "args": args} for name, args in edits], "preview": preview, "travel": travel}


def _minutes(legs: list[Leg]) -> int:
    return round(sum(leg.duration_s for leg in legs) / 60)


def _side(stop, slot, date: str, places: dict) -> dict:
    """One side of a stop in the preview: its times, and its hours badge from
    those very times (None: the place has no known hours data)."""
    raw = places.get(stop.place_id) if stop.place_id else None
    hours = None
    if raw is not None:
        check = check_at(raw, date, slot.start, stop.duration_min, meal=stop.kind == "food")
        hours = {"status": check.status, "fits": check.fits, "closesAt": check.closes_at}
    return {"startTime": to_hhmm(slot.start), "endTime": to_hhmm(slot.end), "startMinutes": slot.start,
            "endMinutes": slot.end, "hours": hours}


def _preview(ctx: DayContext, day: Day, legs: list[Leg], slots: dict, refs: dict, places: dict, summary: str,
             trip) -> dict:
    before_day = {s.stop_id: s for s in day_schedule(ctx.day, by_pair(ctx.legs))}
    was_stop = {s.id: s for s in ctx.day.stops}
    ref = lambda sid: refs.get(sid, sid)  # noqa: E731
    stops = []
    for s in day.stops:
        was = before_day.get(s.id)
        stops.append({"ref": ref(s.id), "stopId": None if s.id in refs else s.id, "name": s.name, "kind": s.kind,
                      "placeId": s.place_id, "added": s.id in refs, "setTime": s.set_time,
                      "durationMin": s.duration_min, "meal": s.meal,
                      "before": None if was is None else _side(was_stop[s.id], was, ctx.date, places),
                      "after": _side(s, slots[s.id], ctx.date, places)})
    findings = review_day(trip, day, legs, trip.prefs, places, weather=ctx.weather, with_fixes=False).findings
    added = {f.id for f in added_findings(ctx.trip, trip, day.id, legs_before=ctx.legs, legs_after=legs, places=places,
                                          weather=ctx.weather)}
    shown = [{**f.to_json(), "stopIds": [ref(i) for i in f.stop_ids]} for f in findings]
    return {
        "summary": summary, "date": ctx.date, "stops": stops,
        "legs": [{**leg.to_json(), "fromStopId": ref(leg.from_stop_id), "toStopId": ref(leg.to_stop_id)}
                 for leg in legs],
        "findings": shown,
        # What the draft would add to the day (a planner draft is never offered with any).
        "added": [f for f in shown if f["id"] in added],
    }
