"""Place search for the planner's "add a stop", and a trip's weather.

Members only (`member`: 404 for anyone else). The server builds every provider
request itself from validated parameters; a URL from a client is never
fetched. Places come from Google with GOOGLE_MAPS_API_KEY, else from
OpenStreetMap (app/providers/maps.py); an outage answers 503 `places_unavailable`
and the rest of the app works.
"""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, Field
from starlette.requests import Request
from starlette.routing import Route

from ..errors import Invalid
from ..providers.maps import PlacesProvider, valid_place_id
from .common import M, member, ok, parse, services
from .openapi import describe

PLACE_TYPE = r"^[a-z][a-z0-9_]{1,63}$"  # Table A types: lower snake case
MAX_WEATHER_DAYS = 60


class SearchQuery(BaseModel):
    q: str = Field(min_length=1, max_length=200, pattern=r"\S")
    radius: int = Field(default=20_000, ge=100, le=50_000)
    limit: int = Field(default=20, ge=1, le=20)


class NearbyQuery(BaseModel):
    lat: float | None = Field(default=None, ge=-90, le=90)
    lng: float | None = Field(default=None, ge=-180, le=180)
    type: str | None = Field(default=None, pattern=PLACE_TYPE)
    radius: int = Field(default=1500, ge=1, le=50_000)
    limit: int = Field(default=20, ge=1, le=20)


def _query(request: Request, model: type[M]) -> M:
    data = {k: v for k, v in request.query_params.items() if v != ""}
    return parse(model, data)


def _places(request: Request) -> PlacesProvider:
    return services(request).places


def _count_lookup(request: Request, user: dict) -> None:
    """A valid lookup counts against its member's pace of place lookups
    (app/quotas.py): each may be a paid Google call."""
    svc = services(request)
    svc.place_lookups.take(user["id"], svc.settings.place_lookups_per_user_minute,
                           svc.settings.place_lookups_per_user_hour)


async def _trip(request: Request, trip_id: str):
    """The trip in memory (membership already checked): no TripDto is built for it."""
    return await services(request).trips.trip(trip_id)


@describe(summary="Text search for places, biased to the trip's destination", query=SearchQuery)
async def search_places(request: Request):
    trip_id = request.path_params["tripId"]
    user, _ = await member(request, trip_id)
    query = _query(request, SearchQuery)
    _count_lookup(request, user)
    provider = _places(request)
    trip = await _trip(request, trip_id)
    places = await provider.search_text(query.q, lat=trip.dest_lat, lng=trip.dest_lng, radius_m=query.radius,
                                     max_results=query.limit)
    return ok({"places": places})


@describe(summary="Places near a point (default: the trip's destination), optionally of one type", query=NearbyQuery)
async def nearby_places(request: Request):
    trip_id = request.path_params["tripId"]
    user, _ = await member(request, trip_id)
    query = _query(request, NearbyQuery)
    if (query.lat is None) != (query.lng is None):
        missing = "lng" if query.lng is None else "lat"
        raise Invalid(f"{missing}: give both lat and lng, or neither for the trip's destination", field=missing)
    provider = _places(request)
    lat, lng = query.lat, query.lng
    if lat is None or lng is None:
        trip = await _trip(request, trip_id)
        if trip.dest_lat is None or trip.dest_lng is None:
            raise Invalid("lat: the trip has no destination; give lat and lng", field="lat")
        lat, lng = trip.dest_lat, trip.dest_lng
    _count_lookup(request, user)
    places = await provider.search_nearby(lat, lng, radius_m=query.radius,
                                        types=[query.type] if query.type else None, max_results=query.limit)
    return ok({"places": places})


@describe(summary="One place's details (hours, price, rating)")
async def place_details(request: Request):
    trip_id = request.path_params["tripId"]
    user, _ = await member(request, trip_id)
    place_id = request.path_params["placeId"]
    if not valid_place_id(place_id):   # refused before it can reach a provider's URL
        raise Invalid("placeId: not a place id", field="placeId")
    _count_lookup(request, user)
    place = await _places(request).place(place_id)
    return ok({"place": place})


@describe(summary="Weather for each day of the trip: forecast, or typical beyond 16 days")
async def trip_weather(request: Request):
    trip_id = request.path_params["tripId"]
    await member(request, trip_id)
    svc = services(request)
    trip = await _trip(request, trip_id)
    if trip.dest_lat is None or trip.dest_lng is None:
        return ok({"days": [], "note": "Set the trip's destination to see its weather."})
    try:
        start = date.fromisoformat(trip.start_date)
    except (TypeError, ValueError):
        return ok({"days": [], "note": "The trip has no valid start date."})
    days = await svc.weather.days(trip.dest_lat, trip.dest_lng, start, min(len(trip.days), MAX_WEATHER_DAYS))
    return ok({"days": days})


routes = [
    Route("/api/trips/{tripId}/places/search", search_places, methods=["GET"]),
    Route("/api/trips/{tripId}/places/nearby", nearby_places, methods=["GET"]),
    Route("/api/trips/{tripId}/places/{placeId:path}", place_details, methods=["GET"]),
    Route("/api/trips/{tripId}/weather", trip_weather, methods=["GET"]),
]
