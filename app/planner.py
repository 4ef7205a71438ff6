"""The planning assistant: the day's facts, "Find places to eat" and
"Explore nearby" (Google search + ranking in code, no model call), stored
drafts and applying them.

Every suggestion is a stored draft: exact registry ops plus what the person
was shown, tied to the day's fingerprint. Apply sends only the draft id; the
server applies exactly the stored ops in one `apply_ops` call whose
precondition refuses (409 `stale`) when the day changed since. "Optimize my
day" (the model call) lives in app/planner_draft.py and stores its draft here.
"""

from __future__ import annotations

import asyncio
import json
import math
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Iterable

from . import legs as legs_mod
from .ids import iso, utcnow
from .errors import Conflict, Invalid, NotFound, Unavailable
from .hours import MEAL_MINUTES, check_hours
from .legs import Leg, haversine_m
from .preferences import PACE_VISIT_MIN, EffectivePreferences
from .review import ReviewResult, day_fingerprint, light_copy, review_day
from .services import Services
from .trips.model import Day, Trip
from .trips.ops import TRIP_OPS, OpContext
from .trips.schedule import day_schedule, to_hhmm, to_minutes
from .trips.service import Applied, apply_ops, validate_args

# Every food suggestion carries this; Wayline never claims a place meets a diet.
FOOD_NOTE = ("Check allergies and dietary needs with the restaurant before you go: Google can't confirm "
             "them, and Wayline never claims a place meets one.")
NO_HOURS_NOTE = "Google lists no opening hours for this place; check before you go."
DRAFT_TTL = timedelta(hours=24)
SUGGESTIONS = 5
EXACT_CHECKS = 8            # candidates timed with real legs before the best five are kept
SEARCH_RADIUS_M = 1500
WIDER_RADIUS_M = 4000       # one more search only when nothing usable is within walking distance
MEAL_TARGET = {"breakfast": "08:30", "brunch": "10:30", "lunch": "12:30", "afternoon_tea": "15:30", "dinner": "19:30"}
MEAL_TYPES = {"breakfast": ["breakfast_restaurant", "cafe", "bakery"], "brunch": ["brunch_restaurant", "cafe"],
              "lunch": ["restaurant"], "afternoon_tea": ["cafe", "tea_house", "bakery"], "dinner": ["restaurant"]}
FOOD_TYPES = {"restaurant", "cafe", "bakery", "bar", "food_court", "coffee_shop", "tea_house", "meal_takeaway",
              "food"} | {t for types in MEAL_TYPES.values() for t in types}
# Google Table A cuisine types we may ask for (an unknown type is a 400 from Google).
CUISINE_TYPES = {c: f"{c}_restaurant" for c in (
    "afghani", "african", "american", "asian", "barbecue", "brazilian", "chinese", "french", "greek",
    "hamburger", "indian", "indonesian", "italian", "japanese", "korean", "lebanese", "mediterranean",
    "mexican", "middle_eastern", "pizza", "ramen", "seafood", "spanish", "sushi", "thai", "turkish",
    "vietnamese")} | {"steak": "steak_house"}
INTEREST_TYPES = {
    "museum": ["museum"], "art": ["art_gallery", "museum"], "history": ["historical_landmark", "museum"],
    "park": ["park"], "nature": ["park", "national_park"], "garden": ["park"], "shopping": ["shopping_mall"],
    "market": ["market"], "nightlife": ["night_club", "bar"], "bar": ["bar"], "beach": ["beach"],
    "viewpoint": ["tourist_attraction"], "sight": ["tourist_attraction"], "landmark": ["tourist_attraction"],
    "architecture": ["tourist_attraction"], "church": ["church"], "zoo": ["zoo"], "aquarium": ["aquarium"],
    "family": ["amusement_park", "zoo"], "music": ["performing_arts_theater"], "theater": ["performing_arts_theater"],
}
DEFAULT_EXPLORE_TYPES = ["tourist_attraction", "museum", "park"]


# -- the day's facts --------------------------------------------------------------


@dataclass
class DayContext:
    """One day as the TripDto shows it. `trip` is the cached aggregate: read only."""

    trip: Trip
    day: Day
    legs: list[Leg]
    places: dict[str, dict] | None   # food stops' Google JSON for the hours rule (None: no Google)

    @property
    def date(self) -> str:
        return self.trip.day_date(self.day)

    def review(self) -> ReviewResult:
        return review_day(self.trip, self.day, self.legs, self.trip.prefs, self.places)

    def fingerprint(self) -> str:
        return day_fingerprint(self.trip, self.day)


async def load_day(svc: Services, trip_id: str, day_id: str) -> DayContext:
    """The day with its shown legs and its restaurants' hours. Membership is
    the caller's to check first."""
    entry = await svc.trip_cache.entry(trip_id)
    day = entry.trip.day(day_id)
    places = await food_places(svc, day.stops)
    return DayContext(entry.trip, day, list(entry.legs.get(day.id, [])), places)


async def food_places(svc: Services, stops: Iterable) -> dict[str, dict] | None:
    """Google's JSON for each food stop's place (cached by app.google); a place
    Google cannot answer for is left out, so its hours stay unknown."""
    if svc.google is None:
        return None
    ids = sorted({s.place_id for s in stops if s.kind == "food" and s.place_id})
    answers = await asyncio.gather(*(svc.google.place(pid) for pid in ids), return_exceptions=True)
    places = {}
    for pid, answer in zip(ids, answers):
        if isinstance(answer, (Unavailable, NotFound)):
            continue
        if isinstance(answer, BaseException):
            raise answer
        places[pid] = answer["raw"]
    return places


def require_google(svc: Services):
    if svc.google is None:
        raise Unavailable("Place search is off: this server has no Google Maps key (GOOGLE_MAPS_API_KEY).",
                          code="places_unavailable")
    return svc.google


def require_ai(svc: Services):
    if svc.ai is None:
        raise Unavailable("AI features are off: this server has no OpenAI API key (OPENAI_API_KEY). "
                          "Everything else works.", code="ai_unavailable")
    return svc.ai


def simulate(trip: Trip, ops: list[tuple[str, dict]], day_ids: Iterable[str]) -> Trip:
    """The trip after `ops`, on a copy (the same apply functions apply_ops runs)."""
    out = light_copy(trip, day_ids)
    ctx = OpContext(actor_id="planner", now="")
    for name, args in ops:
        TRIP_OPS[name].apply(out, validate_args(name, args), ctx)
    return out


def new_refs(before: Day, after: Day) -> dict[str, str]:
    """Stops a draft would add get stable refs (new-1, new-2, ...) in day order."""
    old = {s.id for s in before.stops}
    added = [s.id for s in after.stops if s.id not in old]
    return {sid: f"new-{k}" for k, sid in enumerate(added, 1)}


# -- ranking ---------------------------------------------------------------------------


def _words(values: Iterable[str]) -> list[str]:
    return [v.strip().lower().replace(" ", "_").rstrip("s") for v in values if v and v.strip()]


def cuisine_types(cuisines: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(CUISINE_TYPES[w] for w in _words(cuisines) if w in CUISINE_TYPES))


def interest_types(interests: Iterable[str]) -> list[str]:
    out: list[str] = []
    for word in _words(interests):
        out += INTEREST_TYPES.get(word, [])
    return list(dict.fromkeys(out))


def is_food(place: dict) -> bool:
    return bool(FOOD_TYPES & set(place.get("types") or []))


def score(place: dict, anchor: tuple[float, float] | None, prefs: EffectivePreferences, cuisine: bool) -> float:
    """Higher is better: a rating shrunk toward 4.0 by how few people rated,
    minus distance, minus price above the person's limit, plus cuisine match."""
    count = place.get("userRatingCount") or 0
    rating = place.get("rating") or 3.5
    value = (rating * count + 4.0 * 50) / (count + 50)
    if anchor is not None and place.get("lat") is not None:
        value -= 0.4 * haversine_m(anchor[0], anchor[1], place["lat"], place["lng"]) / 1000
    price, limit = place.get("priceLevel"), prefs.user.maxPriceLevel
    if limit is None and prefs.trip.budget is not None:
        limit = {"low": 2, "moderate": 3, "high": None}[prefs.trip.budget]
    if price is not None and limit is not None and price > limit:
        value -= 0.6 * (price - limit)
    if cuisine:
        text = " ".join(place.get("types") or []) + " " + (place.get("name") or "").lower()
        if any(w in text for w in _words(prefs.user.cuisines)):
            value += 0.4
    return value


SAME_PLACE_M = 200


def already_planned(place: dict, day: Day) -> bool:
    """The day has this place already: the same Google id, or a stop typed in
    by hand with the same name close by (or without coordinates)."""
    name = (place.get("name") or "").casefold().strip()
    for stop in day.stops:
        if stop.place_id and stop.place_id == place.get("placeId"):
            return True
        if name and stop.name.casefold().strip() == name:
            if stop.lat is None or place.get("lat") is None:
                return True
            if haversine_m(stop.lat, stop.lng, place["lat"], place["lng"]) <= SAME_PLACE_M:
                return True
    return False


def usable(place: dict, day: Day) -> bool:
    return (not already_planned(place, day) and place.get("lat") is not None
            and place.get("businessStatus") in (None, "OPERATIONAL"))


def centre(stops: list, trip: Trip) -> tuple[float, float] | None:
    points = [(s.lat, s.lng) for s in stops if s.lat is not None and s.lng is not None]
    if points:
        return sum(p[0] for p in points) / len(points), sum(p[1] for p in points) / len(points)
    if trip.dest_lat is not None and trip.dest_lng is not None:
        return trip.dest_lat, trip.dest_lng
    return None


def meal_for(start_min: int) -> str:
    if start_min < 10 * 60 + 30:
        return "breakfast"
    if start_min < 11 * 60 + 30:
        return "brunch"
    if start_min < 15 * 60:
        return "lunch"
    if start_min < 17 * 60 + 30:
        return "afternoon_tea"
    return "dinner"


def first_fitting_start(raw: dict, date: str, earliest: int, duration: int) -> int | None:
    """The first start at or after `earliest` (5-min steps) that fits the hours rule."""
    latest = check_hours(raw, date, to_hhmm(min(earliest, 24 * 60 - 1)), duration).latest_start
    if latest is None or earliest >= 24 * 60:
        return None
    start = int(math.ceil(earliest / 5) * 5)
    while start <= to_minutes(latest):
        if check_hours(raw, date, to_hhmm(start), duration).fits:
            return start
        start += 5
    return None


# -- eat and explore ---------------------------------------------------------------------


def _insertion_after(day: Day, slots, meal: str) -> str | None:
    """After the last stop that starts before the meal's usual time (never
    before the first stop: insert_stop cannot put a stop first)."""
    if not day.stops:
        return None
    target = to_minutes(MEAL_TARGET[meal])
    before = [s for s, slot in zip(day.stops, slots) if slot.start < target]
    return (before[-1] if before else day.stops[0]).id


def _cheapest_after(day: Day, place: dict) -> str | None:
    """The stop after which the place adds the least straight-line distance."""
    points = [s for s in day.stops if s.lat is not None]
    if not points:
        return day.stops[-1].id if day.stops else None
    best, best_cost = day.stops[-1].id, math.inf
    for i, stop in enumerate(day.stops):
        if stop.lat is None:
            continue
        nxt = next((s for s in day.stops[i + 1:] if s.lat is not None), None)
        cost = haversine_m(stop.lat, stop.lng, place["lat"], place["lng"])
        if nxt is not None:
            cost += haversine_m(place["lat"], place["lng"], nxt.lat, nxt.lng)
            cost -= haversine_m(stop.lat, stop.lng, nxt.lat, nxt.lng)
        if cost < best_cost:
            best, best_cost = stop.id, cost
    return best


async def timed_insert(svc: Services, ctx: DayContext, args: dict) -> tuple[Trip, Day, dict, list[Leg]]:
    """The day with one stop inserted, timed with the same legs the TripDto
    will show: returns (trip, day, the new stop's slot, legs)."""
    trip = simulate(ctx.trip, [("insert_stop", args)], [ctx.day.id])
    day = trip.day(ctx.day.id)
    legs = await legs_mod.day_legs(svc, day.stops, trip.prefs)
    slots = day_schedule(day, {(l.from_stop_id, l.to_stop_id): l for l in legs})
    ref = next(iter(new_refs(ctx.day, day)))
    slot = next(s for s in slots if s.stop_id == ref)
    return trip, day, {"start": slot.start, "end": slot.end, "earliest": slot.earliest}, legs


async def suggest(svc: Services, ctx: DayContext, user_id: str, prefs: EffectivePreferences, *,
                  meal: str | None = None, explore: bool = False) -> list[dict]:
    """Find places to eat (`meal`) or Explore nearby: ranked Google places,
    each stored as a one-stop draft. No model call."""
    google = require_google(svc)
    slots = day_schedule(ctx.day, {(l.from_stop_id, l.to_stop_id): l for l in ctx.legs})
    if explore:
        types = (interest_types(ctx.trip.prefs.interests) or DEFAULT_EXPLORE_TYPES)[:5]
        anchor_stops = ctx.day.stops
    else:
        meals = {s.meal for s in ctx.day.stops}
        meal = meal or next((m for m in ("lunch", "dinner") if m not in meals), "dinner")
        types = list(dict.fromkeys(MEAL_TYPES[meal] + cuisine_types(prefs.user.cuisines)))
        after_id = _insertion_after(ctx.day, slots, meal)
        anchor_stops = [s for s in ctx.day.stops if s.id == after_id] or ctx.day.stops
    anchor = centre(anchor_stops, ctx.trip) or centre(ctx.day.stops, ctx.trip)
    if anchor is None:
        raise Invalid("Give the trip a destination or a stop with a location first", field="dayId")
    ranked: list[dict] = []
    for radius in (SEARCH_RADIUS_M, WIDER_RADIUS_M):
        found = await google.search_nearby(anchor[0], anchor[1], radius_m=radius, types=types)
        ranked = sorted((p for p in found if usable(p, ctx.day) and (explore or is_food(p))),
                        key=lambda p: (-score(p, anchor, prefs, cuisine=not explore), p["placeId"]))
        if ranked:
            break
    timed = await asyncio.gather(*(_one_suggestion(svc, ctx, place, meal, explore, slots)
                                   for place in ranked[:EXACT_CHECKS]))
    out = []
    for suggestion, edits, raw in [t for t in timed if t is not None][:SUGGESTIONS]:
        kind = "explore" if explore else "eat"
        out.append({"draftId": await store_draft(svc, ctx, user_id, kind, edits, suggestion, raw), **suggestion})
    return out


async def _one_suggestion(svc, ctx: DayContext, place: dict, meal: str | None, explore: bool,
                          slots) -> tuple[dict, list[dict], dict | None] | None:
    """(what the person sees, the draft's edits, Google's JSON for the hours
    re-check on apply), or None when the place does not fit the day."""
    food = not explore or is_food(place)
    after_id = _cheapest_after(ctx.day, place) if explore else _insertion_after(ctx.day, slots, meal)
    duration = PACE_VISIT_MIN[ctx.trip.prefs.pace] if explore else MEAL_MINUTES[meal]
    args: dict[str, Any] = {"dayId": ctx.day.id, "kind": "food" if food else "sight", "name": place["name"][:120],
                            "placeId": place["placeId"], "lat": place["lat"], "lng": place["lng"],
                            "durationMin": duration, "note": FOOD_NOTE if food else ""}
    if place.get("address"):
        args["address"] = place["address"][:300]
    if after_id is not None:
        args["afterStopId"] = after_id
    if not explore:
        args["meal"] = meal
    _, _, slot, _ = await timed_insert(svc, ctx, args)
    start = slot["start"]
    hours = check_hours(place["raw"], ctx.date, to_hhmm(min(start, 24 * 60 - 1)), duration)
    if food and not hours.fits:
        # A later start that fits becomes a set time (the meal waits for the
        # opening); none: the place is not suggested. No hours: never open.
        later = first_fitting_start(place["raw"], ctx.date, start, duration) if hours.status != "none" else None
        if later is None:
            return None
        args["setTime"] = to_hhmm(later)
        start = later
        hours = check_hours(place["raw"], ctx.date, args["setTime"], duration)
    elif not food and hours.status != "none" and not hours.fits:
        return None
    note = args["note"] or (NO_HOURS_NOTE if hours.status == "none" else "")
    shown = {
        "place": {"placeId": place["placeId"], "name": place["name"], "lat": place["lat"], "lng": place["lng"],
                  "rating": place.get("rating"), "priceLevel": place.get("priceLevel")},
        "afterStopId": after_id, "startTime": to_hhmm(start), "durationMin": duration,
        "setTime": args.get("setTime"), "kind": args["kind"], "meal": args.get("meal"),
        "hours": {"status": hours.status, "fits": hours.fits, "closesAt": hours.closes_at},
        "note": note,
    }
    return shown, [{"op": "insert_stop", "args": args}], place["raw"] if food else None


# -- drafts ------------------------------------------------------------------------------


def new_draft_id() -> str:
    return "dr_" + secrets.token_urlsafe(18)


async def store_draft(svc: Services, ctx: DayContext, user_id: str, kind: str, edits: list[dict],
                      preview: dict, place_raw: dict | None = None) -> str:
    draft_id, now = new_draft_id(), datetime.now(timezone.utc)
    async with svc.db.write() as conn:
        await conn.execute("DELETE FROM planner_drafts WHERE expires_at < ?", (iso(now),))
        await conn.execute(
            "INSERT INTO planner_drafts (id, trip_id, day_id, user_id, kind, fingerprint, edits_json, preview_json, "
            "place_json, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (draft_id, ctx.trip.id, ctx.day.id, user_id, kind, ctx.fingerprint(),
             json.dumps(edits, separators=(",", ":")), json.dumps(preview, separators=(",", ":")),
             None if place_raw is None else json.dumps(place_raw, separators=(",", ":")), utcnow(),
             iso(now + DRAFT_TTL)))
    return draft_id


STALE = "The day changed since this draft was made. Ask again for a fresh one."


async def apply_draft(svc: Services, trip_id: str, draft_id: str, user_id: str, *,
                      start_time: str | None = None, duration_min: int | None = None) -> Applied | None:
    """Apply exactly the stored edits in one change, or refuse: 404 for an
    unknown, expired or other trip's draft; 409 `stale` when the day changed;
    409 `hours` (with `latestStart`) when a food suggestion's time or length
    does not fit. Returns None when the draft changes nothing."""
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
        if day_fingerprint(trip, day) != row["fingerprint"]:
            raise Conflict(STALE, code="stale")
        if place_raw is not None:
            args = edits[0][1]
            start = args.get("setTime") or preview["startTime"]
            check = check_hours(place_raw, trip.day_date(day), start, args["durationMin"])
            if not check.fits:
                latest = f" The latest start that fits is {check.latest_start}." if check.latest_start else ""
                raise Conflict(f"{args['name']} is not open for the whole meal from {start} "
                               f"(with 30 minutes before closing).{latest}",
                               code="hours", latestStart=check.latest_start)

    if not edits:
        return None
    applied = await apply_ops(svc, trip_id, user_id, edits, source="plan", precondition=unchanged_and_open)
    await svc.db.execute_write("UPDATE planner_drafts SET applied_at = ? WHERE id = ?", (utcnow(), draft_id))
    return applied
