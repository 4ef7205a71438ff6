"""The day's facts the review reads: one day as the TripDto shows it (the
cached aggregate, the shown legs), the trip's places and weather.

`stop_places` and `trip_weather` are the loaders every caller of the review
uses (the review route, the copilot, Optimize, the trip agent), so they all
see the same facts."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import date as Date
from typing import Any, Protocol
from collections.abc import Iterable

from ..errors import NotFound, Unavailable
from ..hours.countries import country_of_timezone
from ..legs import Leg, haversine_m
from ..meals import MEALS
from ..planner.candidates import is_food, usable
from ..providers.maps import PlacesProvider, in_country
from ..providers.weather import Weather
from ..trips.dto import TripCache
from ..trips.model import Day, Stop, Trip
from .findings import ReviewResult, day_fingerprint, review_day
from .issues import Json, permanently_closed

log = logging.getLogger("wayline.planner")
WEATHER_WAIT_S = 3.0   # the review goes on without the weather after this


@dataclass
class DayContext:
    """One day as the TripDto shows it. `trip` is the cached aggregate: read only."""

    trip: Trip
    day: Day
    legs: list[Leg]
    places: dict[str, Json] | None           # the trip's stops' place JSON (None: no places provider)
    weather: dict[str, Json] | None = None   # date -> app.providers.weather day (None: unknown)
    trip_legs: dict[str, list[Leg]] | None = None   # every day's shown legs
    unreadable: frozenset[str] = frozenset()   # place ids the provider could not answer for just now

    @property
    def date(self) -> str:
        return self.trip.dated(self.day)

    def review(self, alternatives: dict[str, list[Json]] | None = None) -> ReviewResult:
        return review_day(self.trip, self.day, self.legs, self.trip.prefs, self.places, weather=self.weather,
                          trip_legs=self.trip_legs, alternatives=alternatives, unreadable=self.unreadable)

    def fingerprint(self) -> str:
        return day_fingerprint(self.trip, self.day)


class FactSources(Protocol):
    """Where the day's facts come from (the app's core has all three)."""

    trip_cache: TripCache
    places: PlacesProvider
    weather: Weather


async def full_review(sources: FactSources, ctx: DayContext) -> ReviewResult:
    """The day's review as the page and the copilot see it: when a meal's
    place is ruled out and nothing else clears it, places nearby serving the
    same meal (the provider's search, cached) are looked up and the fix
    search may offer one of them instead."""
    result = ctx.review()
    # A meal whose place closed for good is worth another place even when removing it would do.
    gone = {s.id for s in ctx.day.stops if s.place_id and permanently_closed((ctx.places or {}).get(s.place_id))}
    stuck = {sid for f in result.findings if f.kind in REPLACEABLE and f.severity != "info"
             and (not f.fixes or gone.intersection(f.stop_ids)) for sid in f.stop_ids}
    meals = [s for s in ctx.day.stops if s.id in stuck and s.kind == "food" and s.meal in MEALS and s.lat is not None]
    if not meals:
        return result
    found = await asyncio.gather(*(meal_alternatives(sources.places, ctx, stop) for stop in meals))
    alternatives = {stop.id: alts for stop, alts in zip(meals, found) if alts}
    return ctx.review(alternatives) if alternatives else result


REPLACEABLE = ("closed", "meal_time")
ALTERNATIVES = 5                 # places tried for a meal, the nearest first
ALTERNATIVE_RADIUS_M = 1500


async def meal_alternatives(places: PlacesProvider, ctx: DayContext, stop: Stop) -> list[Json]:
    """Open places nearby that serve the stop's meal (not already on the day),
    nearest first, as review_day's `alternatives` take them."""
    assert stop.lat is not None and stop.lng is not None and stop.meal is not None
    lat, lng = stop.lat, stop.lng
    try:
        found = await places.search_nearby(lat, lng, radius_m=ALTERNATIVE_RADIUS_M,
                                           types=list(MEALS[stop.meal].place_types))
    except Unavailable:
        return []
    country = trip_country(ctx.trip)
    usable_places = [p for p in found if usable(p, ctx.day) and is_food(p)]
    usable_places.sort(key=lambda p: (haversine_m(lat, lng, p["lat"], p["lng"]), p["placeId"]))
    return [{"placeId": p["placeId"], "name": p["name"], "lat": p["lat"], "lng": p["lng"],
             "address": p.get("address"), "raw": in_country(p["raw"], country)} for p in usable_places[:ALTERNATIVES]]


async def load_day(sources: FactSources, trip_id: str, day_id: str, *, review_facts: bool = True,
                   fixes: bool = True) -> DayContext:
    """The day with its shown legs and, for the review (`review_facts`), the
    trip's weather and the places of every stop of the trip (a fix may move a
    stop to another day), or only of this day's stops when no fixes are
    computed (`fixes=False`: a preview; with OpenStreetMap a place not in the
    cache is one Nominatim request a second). Membership is the caller's to
    check first."""
    entry = await sources.trip_cache.entry(trip_id)
    day = entry.trip.day(day_id)
    places = weather = None
    unreadable: set[str] = set()
    if review_facts:
        stops = entry.trip.all_stops() if fixes else day.stops
        places, weather = await asyncio.gather(stop_places(sources.places, stops, trip_country(entry.trip),
                                                           unreadable=unreadable),
                                               trip_weather(sources.weather, entry.trip))
    return DayContext(entry.trip, day, list(entry.legs.get(day.id, [])), places, weather, dict(entry.legs),
                      frozenset(unreadable))


def trip_country(trip: Trip) -> str | None:
    return country_of_timezone(trip.timezone)


async def stop_places(places: PlacesProvider, stops: Iterable[Stop], country: str | None = None, *,
                      unreadable: set[str] | None = None) -> dict[str, dict[str, Any]]:
    """The place JSON of every stop that has a place (cached by the provider);
    a place the provider cannot answer for is left out, so its hours stay
    unknown (`unreadable` collects those it could not answer for just now,
    not the ones it does not know). `country`: the trip's, for an
    OpenStreetMap place's public holidays."""
    ids = sorted({s.place_id for s in stops if s.place_id})
    answers = await asyncio.gather(*(places.place(pid) for pid in ids), return_exceptions=True)
    found: dict[str, dict[str, Any]] = {}
    for pid, answer in zip(ids, answers):
        if isinstance(answer, (Unavailable, NotFound)):
            if isinstance(answer, Unavailable) and unreadable is not None:
                unreadable.add(pid)
            continue
        if isinstance(answer, BaseException):
            raise answer
        found[pid] = in_country(answer["raw"], country)
    return found


async def trip_weather(weather: Weather, trip: Trip) -> dict[str, dict[str, Any]] | None:
    """The trip's weather by date (forecast, or typical beyond it; cached by
    app.providers.weather), or None when it is unknown: no destination, no weather
    service, or the service is down or slow (the weather rule is then silent:
    a review never waits long for the weather)."""
    if trip.dest_lat is None or trip.dest_lng is None or not trip.days:
        return None
    try:
        days = await asyncio.wait_for(weather.days(trip.dest_lat, trip.dest_lng,
                                                       Date.fromisoformat(trip.start_date), len(trip.days)),
                                      WEATHER_WAIT_S)
    except (TimeoutError, Unavailable):
        log.info("review without weather: the weather service is unavailable")
        return None
    return {d["date"]: d for d in days}
