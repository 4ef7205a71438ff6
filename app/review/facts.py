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
from ..legs import Leg
from ..providers.maps import PlacesProvider, in_country
from ..providers.weather import Weather
from ..trips.dto import TripCache
from ..trips.model import Day, Stop, Trip
from .findings import ReviewResult, day_fingerprint, review_day
from .issues import Json

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

    @property
    def date(self) -> str:
        return self.trip.dated(self.day)

    def review(self) -> ReviewResult:
        return review_day(self.trip, self.day, self.legs, self.trip.prefs, self.places, weather=self.weather,
                          trip_legs=self.trip_legs)

    def fingerprint(self) -> str:
        return day_fingerprint(self.trip, self.day)


class FactSources(Protocol):
    """Where the day's facts come from (the app's core has all three)."""

    trip_cache: TripCache
    places: PlacesProvider
    weather: Weather


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
    if review_facts:
        stops = entry.trip.all_stops() if fixes else day.stops
        places, weather = await asyncio.gather(stop_places(sources.places, stops, trip_country(entry.trip)),
                                               trip_weather(sources.weather, entry.trip))
    return DayContext(entry.trip, day, list(entry.legs.get(day.id, [])), places, weather, dict(entry.legs))


def trip_country(trip: Trip) -> str | None:
    return country_of_timezone(trip.timezone)


async def stop_places(places: PlacesProvider, stops: Iterable[Stop],
                      country: str | None = None) -> dict[str, dict[str, Any]]:
    """The place JSON of every stop that has a place (cached by the provider);
    a place the provider cannot answer for is left out, so its hours stay
    unknown. `country`: the trip's, for an OpenStreetMap place's public holidays."""
    ids = sorted({s.place_id for s in stops if s.place_id})
    answers = await asyncio.gather(*(places.place(pid) for pid in ids), return_exceptions=True)
    found: dict[str, dict[str, Any]] = {}
    for pid, answer in zip(ids, answers):
        if isinstance(answer, (Unavailable, NotFound)):
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
