"""Find places to eat and Explore nearby: places search + ranking in code, no
model call. Each suggestion is stored as a draft (drafts.py): one
`insert_stop`, or, when the day already has that meal, the new restaurant
inserted right after the old one and the old one removed (`replacesStopId`),
applied as one change."""

from __future__ import annotations

import asyncio
from datetime import date as date_type
from typing import Any

from .. import legs as legs_mod
from ..errors import Invalid
from ..hours.rules import check_at, hours_on
from ..meals import FOOD_NOTE, MEAL_MINUTES, MEALS
from ..legs import Leg, by_pair, haversine_m
from ..preferences import PACE_VISIT_MIN, EffectivePreferences
from .deps import PlannerDeps
from ..trips.model import Day, Stop, Trip
from ..trips.schedule import day_schedule, to_hhmm, to_service_time
from ..providers.maps import in_country
from ..review.facts import DayContext, trip_country
from ..review.findings import added_findings
from ..review.issues import PlaceBook
from ..review.starts import fits_ranges, start_options, start_ranges
from ..trips.ops import simulate
from .drafts import new_refs, store_draft
from .candidates import (MEAL_TYPES, DEFAULT_EXPLORE_TYPES, centre, cuisine_types, interest_types, is_food,
                         score, usable)

NO_HOURS_NOTE = "No opening hours are listed for this place; check before you go."
SUGGESTIONS = 5
EXACT_CHECKS = 8            # candidates timed with real legs before the best five are kept
SEARCH_RADIUS_M = 1500
WIDER_RADIUS_M = 4000       # one more search only when nothing usable is within walking distance


def _insertion_after(day: Day, slots, meal: str) -> str | None:
    """After the last stop that starts before the meal's usual time (never
    before the first stop: insert_stop cannot put a stop first)."""
    if not day.stops:
        return None
    target = MEALS[meal].target
    before = [s for s, slot in zip(day.stops, slots) if slot.start < target]
    return (before[-1] if before else day.stops[0]).id


def _cheapest_afters(day: Day, place: dict) -> list[str | None]:
    """The stops after which the place adds the least straight-line
    distance, cheapest first (the last stop alone when none is located)."""
    points = [s for s in day.stops if s.lat is not None]
    if not points:
        return [day.stops[-1].id if day.stops else None]
    costs = []
    for i, stop in enumerate(day.stops):
        if stop.lat is None or stop.lng is None:
            continue
        nxt = next((s for s in day.stops[i + 1:] if s.lat is not None and s.lng is not None), None)
        cost = haversine_m(stop.lat, stop.lng, place["lat"], place["lng"])
        if nxt is not None and nxt.lat is not None and nxt.lng is not None:
            cost += haversine_m(place["lat"], place["lng"], nxt.lat, nxt.lng)
            cost -= haversine_m(stop.lat, stop.lng, nxt.lat, nxt.lng)
        costs.append((cost, -i, stop.id))
    return [sid for _, _, sid in sorted(costs)]


async def timed_insert(svc: PlannerDeps, ctx: DayContext, args: dict,
                       replaces: str | None = None) -> tuple[Trip, Day, dict, list[Leg]]:
    """The day with one stop inserted (and the stop it replaces removed), timed
    with the same legs the TripDto will show: returns (trip, day, the new
    stop's slot, legs)."""
    trip = simulate(ctx.trip, _edits(args, replaces))
    day = trip.day(ctx.day.id)
    legs = await legs_mod.day_legs(svc.places, day.stops, trip.prefs)
    slots = day_schedule(day, by_pair(legs))
    ref = next(iter(new_refs(ctx.day, day)))
    slot = next(s for s in slots if s.stop_id == ref)
    return trip, day, {"stopId": ref, "start": slot.start, "end": slot.end, "earliest": slot.earliest}, legs


def _edits(args: dict, replaces: str | None) -> list[tuple[str, dict]]:
    """The draft's ops: the insert first (apply re-checks its hours), then the
    removal of the stop it replaces, so the new stop takes its place, and its
    expenses with it (the meal's: whatever they are when the draft is applied)."""
    if not replaces:
        return [("insert_stop", args)]
    return [("insert_stop", {**args, "takeExpensesOf": replaces}), ("delete_stop", {"stopId": replaces})]


def _explore_rank(suggestion: dict) -> int:
    """Explore shows places that fit their hours first, places without hours last."""
    return 1 if suggestion["hours"]["status"] == "none" else 0


async def suggest(svc: PlannerDeps, ctx: DayContext, user_id: str, prefs: EffectivePreferences, *,
                  meal: str | None = None, explore: bool = False) -> list[dict]:
    """Find places to eat (`meal`) or Explore nearby: ranked Google places,
    each stored as a draft. No model call."""
    provider = svc.places
    slots = day_schedule(ctx.day, by_pair(ctx.legs))
    replaced = None
    if explore:
        types = (interest_types(ctx.trip.prefs.interests) or DEFAULT_EXPLORE_TYPES)[:5]
        anchor_stops = ctx.day.stops
    else:
        meals = {s.meal for s in ctx.day.stops}
        meal = meal or next((m for m in ("lunch", "dinner") if m not in meals), "dinner")
        types = list(dict.fromkeys(MEAL_TYPES[meal] + cuisine_types(prefs.user.cuisines)))
        # The day has this meal already: each suggestion replaces it, where it is.
        replaced = next((s for s in ctx.day.stops if s.meal == meal), None)
        after_id = replaced.id if replaced else _insertion_after(ctx.day, slots, meal)
        anchor_stops = [s for s in ctx.day.stops if s.id == after_id] or ctx.day.stops
    anchor = centre(anchor_stops, ctx.trip) or centre(ctx.day.stops, ctx.trip)
    if anchor is None:
        raise Invalid("Give the trip a destination or a stop with a location first", field="dayId")
    kept: list = []
    tried: set[str] = set()
    # Further out only when nothing within walking distance fits the day
    # (none there, or all closed then); the places already tried are not
    # tried again (the nearest rank first in both searches).
    for radius in (SEARCH_RADIUS_M, WIDER_RADIUS_M):
        found = [{**p, "raw": in_country(p["raw"], trip_country(ctx.trip))}
                 for p in await provider.search_nearby(anchor[0], anchor[1], radius_m=radius, types=types)]
        ranked = sorted((p for p in found if p["placeId"] not in tried and usable(p, ctx.day)
                         and (explore or is_food(p))),
                        key=lambda p: (-score(p, anchor, prefs, cuisine=not explore), p["placeId"]))
        tried.update(p["placeId"] for p in ranked[:EXACT_CHECKS])
        timed = await asyncio.gather(*(_one_suggestion(svc, ctx, place, meal, explore, slots, replaced)
                                       for place in ranked[:EXACT_CHECKS]))
        kept = [t for t in timed if t is not None]
        if kept:
            break
    if explore:
        kept.sort(key=lambda t: _explore_rank(t[0]))   # stable: the ranking order within each group
    out = []
    for suggestion, edits, raw in kept[:SUGGESTIONS]:
        kind = "explore" if explore else "eat"
        out.append({"draftId": await store_draft(svc, ctx, user_id, kind, edits, suggestion, raw), **suggestion})
    return out


POSITIONS_TRIED = 3          # places in the day tried for one suggestion, the preferred first


async def _one_suggestion(svc, ctx: DayContext, place: dict, meal: str | None, explore: bool, slots,
                          replaced: Stop | None) -> tuple[dict, list[dict], dict | None] | None:
    """(what the person sees, the draft's edits, the place JSON for the hours
    re-check on apply: a meal's and a visit's alike), or None when the place fits nowhere in the day: a
    replacement where the old meal is; a new meal after the stop before its
    usual time, else the next nearest to it; an explored place where it adds
    the least distance, else the next cheapest."""
    food = not explore or is_food(place)
    afters: list[str | None]
    if replaced is not None:
        afters = [replaced.id]
    elif explore:
        afters = list(_cheapest_afters(ctx.day, place))
    else:
        assert meal is not None, "a place to eat is always for a meal"
        first = _insertion_after(ctx.day, slots, meal)
        target = MEALS[meal].target
        by_time = sorted(zip(ctx.day.stops, slots), key=lambda pair: abs(pair[1].end - target))
        afters = list(dict.fromkeys([first, *(s.id for s, _ in by_time)]))
    for after_id in afters[:POSITIONS_TRIED]:
        found = await _suggestion_at(svc, ctx, place, meal, explore, food, after_id, replaced)
        if found is not None:
            return found
    return None


async def _suggestion_at(svc, ctx: DayContext, place: dict, meal: str | None, explore: bool, food: bool,
                         after_id: str | None, replaced: Stop | None) -> tuple[dict, list[dict], dict | None] | None:
    """The suggestion after `after_id`, or None when it does not fit there:
    its hours (a restaurant: the whole meal plus 30 minutes; no hours:
    never), a meal's usual window (a set time where the computed start is
    early), and nothing the review would newly flag on the day (a set time
    pushed out of reach, a path that crosses itself, rain on an outdoor
    visit, more stops than the pace holds)."""
    if explore:
        duration = PACE_VISIT_MIN[ctx.trip.prefs.pace]
    else:
        assert meal is not None, "a place to eat is always for a meal"
        duration = replaced.duration_min if replaced else MEAL_MINUTES[meal]
    args: dict[str, Any] = {"dayId": ctx.day.id, "kind": "food" if food else "sight", "name": place["name"][:120],
                            "placeId": place["placeId"], "lat": place["lat"], "lng": place["lng"],
                            "durationMin": duration, "note": FOOD_NOTE if food else ""}
    if place.get("address"):
        args["address"] = place["address"][:300]
    if after_id is not None:
        args["afterStopId"] = after_id
    if not explore:
        args["meal"] = meal
    if replaced is not None and replaced.set_time:
        args["setTime"] = replaced.set_time     # the meal keeps its appointment if the new place allows it
    replaces = replaced.id if replaced else None
    book = PlaceBook({place["placeId"]: place["raw"]})
    trip, day, slot, legs = await timed_insert(svc, ctx, args, replaces)
    new_stop = next(s for s in day.stops if s.id == slot["stopId"])
    if food and book.hours(new_stop, date_type.fromisoformat(ctx.date)) is None:
        return None   # no hours: never treated as open
    ranges = start_ranges(new_stop, ctx.date, book)
    start = slot["start"]
    if not fits_ranges(ranges, start):
        # A later start that fits (the hours, a meal's window) becomes a set
        # time: the meal waits for the opening; none, or a sight: not offered.
        options = start_options(ranges, slot["earliest"], start, most=1) if food else []
        if not options:
            return None
        args["setTime"] = to_service_time(options[0])
        trip, day, slot, legs = await timed_insert(svc, ctx, args, replaces)
        start = slot["start"]
    places = {**(ctx.places or {}), place["placeId"]: place["raw"]}
    if added_findings(ctx.trip, trip, ctx.day.id, legs_before=ctx.legs, legs_after=legs, places=places,
                      weather=ctx.weather):
        return None
    hours = check_at(place["raw"], ctx.date, start, duration, meal=food)
    # The date's periods by the stop's rule, so the page can warn before Add
    # when an edited start or length will not fit (public/hours.js).
    periods = hours_on(place["raw"], ctx.date, meal=food)
    note = args["note"] or (NO_HOURS_NOTE if hours.status == "none" else "")
    before = next((s.id for s, n in zip(ctx.day.stops, ctx.day.stops[1:]) if n.id == replaces), None)
    shown = {
        "place": {"placeId": place["placeId"], "name": place["name"], "lat": place["lat"], "lng": place["lng"],
                  "rating": place.get("rating"), "priceLevel": place.get("priceLevel")},
        "afterStopId": before if replaces else after_id, "replacesStopId": replaces,
        "startTime": to_hhmm(start), "startMinutes": start, "durationMin": duration,
        "setTime": args.get("setTime"), "kind": args["kind"], "meal": args.get("meal"),
        "hours": {"status": hours.status, "fits": hours.fits, "closesAt": hours.closes_at,
                  "spans": None if periods is None else [list(span) for span in periods.spans]},
        "note": note,
    }
    edits = [{"op": name, "args": edit_args} for name, edit_args in _edits(args, replaces)]
    return shown, edits, place["raw"]
