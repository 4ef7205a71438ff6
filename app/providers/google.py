"""The only code that talks to Google: Places API (New) and Routes API.

Every request carries an explicit field mask (`X-Goog-FieldMask`; Google has
no default field list) and the server key in the `X-Goog-Api-Key` header: never
in a URL, a log line or an error. Any failure (timeout, connection, 4xx, 5xx,
unreadable body) becomes `Unavailable` with a plain message; a details lookup
for a place Google does not know is `NotFound`.

Answers are cached in SQLite (`provider_cache`, migration 0002): searches and
details for a day, routes for a week. A place with dated hours
(`currentOpeningHours`) is only kept until the end of the UTC day it was
fetched, since Google's dated window starts at that day. Routes also sit in an
in-memory LRU so the legs of a trip are ~free to recompute, and identical
requests in flight at the same moment share one Google call. After a timeout
or a 5xx the API family rests for `cooldown_s` (monotonic time), so a Google outage costs one
slow request, not one per leg.

The caches and in-flight sharing are app/providers/cache.py (weather uses them too);
`Route` and the route LRU are app/providers/route_cache.py (OpenStreetMap's OSRM shares them).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import httpx

from ..db import Database
from ..errors import NotFound, Unavailable
from .outbound import OutboundClient
from ..shared_reads import SingleFlight
from .cache import ProviderCache, request_key
from .route_cache import Route, RouteCache, line_points, route_keys

log = logging.getLogger("wayline.google")

# What the planner needs from a place (opening hours for app.hours.rules, price,
# rating, types for ranking). Searches prefix each path with "places.".
PLACE_FIELDS = (
    "id", "displayName", "location", "formattedAddress", "rating", "userRatingCount",
    "priceLevel", "types", "primaryType", "regularOpeningHours", "currentOpeningHours",
    "regularSecondaryOpeningHours", "currentSecondaryOpeningHours", "utcOffsetMinutes",
    "businessStatus", "timeZone", "googleMapsUri",
)
DETAILS_MASK = ",".join(PLACE_FIELDS)
SEARCH_MASK = ",".join(f"places.{f}" for f in PLACE_FIELDS)
# The path as a GeoJSON line (kept with the cached route for GPX): the same billing tier.
ROUTE_MASK = "routes.duration,routes.distanceMeters,routes.polyline.geoJsonLinestring"
# `status` must be in the mask, or every element looks OK (Routes API docs).
MATRIX_MASK = "originIndex,destinationIndex,status,condition,distanceMeters,duration"

TRAVEL_MODES = {"walk": "WALK", "transit": "TRANSIT", "drive": "DRIVE", "bicycle": "BICYCLE"}
PRICE_LEVELS = {
    "PRICE_LEVEL_INEXPENSIVE": 1, "PRICE_LEVEL_MODERATE": 2,
    "PRICE_LEVEL_EXPENSIVE": 3, "PRICE_LEVEL_VERY_EXPENSIVE": 4,
}

DAY_S = 24 * 3600
SEARCH_TTL_S = DAY_S
DETAILS_TTL_S = DAY_S
ROUTE_CONCURRENCY = 4        # computeRoutes calls running at once for one app
MATRIX_MAX_ELEMENTS = 625    # Google's limit on origins x destinations
COOLDOWN_S = 20.0

MESSAGES = {
    "places": ("Google Places is unavailable right now", "places_unavailable"),
    "routes": ("Google Routes is unavailable right now", "routes_unavailable"),
}


# -- plain helpers ---------------------------------------------------------------


def price_level(value: Any) -> int | None:
    """Google's enum (PRICE_LEVEL_MODERATE) as 1-4; free or unknown is None."""
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 4:
        return value
    return PRICE_LEVELS.get(value) if isinstance(value, str) else None


def normalize_place(raw: dict) -> dict:
    """A Google place as the planner and the front end read it. `raw` is the
    place JSON itself, so app.hours.rules.check_hours(place["raw"], ...) can read it.

    Each field is taken only in the type Google documents (a name is text, a
    point two numbers on the globe, a rating 0-5, a count whole): anything
    else is None (types: the strings among them), so an answer of the wrong
    shape never reaches the ranking, the schedule or a stop's fields."""
    location = _dict(raw.get("location"))
    lat, lng = _number(location.get("latitude"), -90, 90), _number(location.get("longitude"), -180, 180)
    if lat is None or lng is None:
        lat = lng = None
    name = raw.get("displayName")
    count = raw.get("userRatingCount")
    return {
        "placeId": _text(raw.get("id")),
        "name": _text(name.get("text") if isinstance(name, dict) else name),
        "lat": lat,
        "lng": lng,
        "address": _text(raw.get("formattedAddress")),
        "rating": _number(raw.get("rating"), 0, 5),
        "userRatingCount": count if type(count) is int and count >= 0 else None,
        "priceLevel": price_level(raw.get("priceLevel")),
        "types": [t for t in _list(raw.get("types")) if isinstance(t, str)],
        "primaryType": _text(raw.get("primaryType")),
        "businessStatus": _text(raw.get("businessStatus")),
        "raw": raw,
    }


def complete(place: dict) -> bool:
    """A search result the planner can offer: an id, a name and a point."""
    return bool(place["placeId"] and place["name"] and place["lat"] is not None)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _number(value: Any, low: float, high: float) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if math.isfinite(value) and low <= value <= high else None


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def parse_duration(value: Any) -> int:
    """Protobuf Duration JSON ("165s", "0.5s") as whole seconds; absent is 0
    (proto3 JSON leaves zero out). Anything else raises ValueError."""
    if value is None:
        return 0
    if isinstance(value, str) and value.endswith("s"):
        seconds = float(value[:-1])
        if math.isfinite(seconds) and seconds >= 0:
            return int(round(seconds))
    raise ValueError(f"not a duration: {value!r}")


def whole_number(value: Any) -> int:
    """A count of metres or an index, whole and not negative; absent is 0
    (proto3 JSON). Anything else raises ValueError."""
    if value is None:
        return 0
    if type(value) is int and value >= 0:
        return value
    raise ValueError(f"not a whole number: {value!r}")


def end_of_utc_day(ts: float) -> float:
    return (ts // DAY_S + 1) * DAY_S


def _point(latlng: tuple[float, float]) -> tuple[float, float]:
    # ~1 m: the same stop always makes the same key.
    return _rounded(float(latlng[0]), float(latlng[1]))


@functools.lru_cache(maxsize=1 << 16)
def _rounded(lat: float, lng: float) -> tuple[float, float]:
    # Kept: a trip's first read makes a route key per leg from both ends.
    return round(lat, 5), round(lng, 5)


def _waypoint(latlng: tuple[float, float]) -> dict:
    lat, lng = _point(latlng)
    return {"location": {"latLng": {"latitude": lat, "longitude": lng}}}


def _circle(lat: float, lng: float, radius_m: float) -> dict:
    lat, lng = _point((lat, lng))
    return {"circle": {"center": {"latitude": lat, "longitude": lng}, "radius": float(radius_m)}}


# -- Google ------------------------------------------------------------------------


class Google:
    name = "google"
    attribution: str | None = None  # Google's own terms: logos on maps, not per result here

    def __init__(self, settings, http: OutboundClient, db: Database, clock: Callable[[], float] | None = None):
        if not settings.google_maps_api_key:
            raise ValueError("Google needs GOOGLE_MAPS_API_KEY")
        self._key = settings.google_maps_api_key
        self.places_base = settings.google_places_base_url.rstrip("/")
        self.routes_base = settings.google_routes_base_url.rstrip("/")
        self.http = http
        self.clock = clock or time.time
        self.cache = ProviderCache(db, self.clock)
        self.routes = RouteCache(self.cache, self.clock)
        self._flight = SingleFlight()
        self._route_slots = asyncio.Semaphore(ROUTE_CONCURRENCY)
        self.cooldown_s = COOLDOWN_S
        self._resting_until: dict[str, float] = {}  # on time.monotonic, not the (injectable) clock

    def __repr__(self) -> str:  # never show the key
        return f"Google(places={self.places_base!r}, routes={self.routes_base!r})"

    # -- Places --------------------------------------------------------------

    async def search_text(self, query: str, *, lat: float | None = None, lng: float | None = None,
                          radius_m: float = 20_000, max_results: int = 20,
                          included_type: str | None = None, language: str | None = None) -> list[dict]:
        """Text Search (New), biased (not restricted) to a circle when lat/lng are given."""
        body: dict[str, Any] = {"textQuery": " ".join(query.split()), "maxResultCount": max_results}
        if lat is not None and lng is not None:
            body["locationBias"] = _circle(lat, lng, radius_m)
        if included_type:
            body["includedType"] = included_type
        if language:
            body["languageCode"] = language
        return await self._search("searchText", body)

    async def search_nearby(self, lat: float, lng: float, *, radius_m: float = 1500,
                            types: list[str] | None = None, max_results: int = 20,
                            rank: str = "POPULARITY", language: str | None = None) -> list[dict]:
        """Nearby Search (New) within a circle, optionally of some Table A types."""
        body: dict[str, Any] = {"locationRestriction": _circle(lat, lng, radius_m),
                                "maxResultCount": max_results, "rankPreference": rank}
        if types:
            body["includedTypes"] = sorted(set(types))
        if language:
            body["languageCode"] = language
        return await self._search("searchNearby", body)

    async def place(self, place_id: str) -> dict:
        """Place Details (New). NotFound when Google does not know the id."""
        key = self._details_key(place_id)
        hit, raw = await self.cache.get(key)
        if not hit:
            raw = await self._flight.run(key, lambda: self._fetch_place(place_id, key))
        return normalize_place(raw)

    async def _fetch_place(self, place_id: str, key: str) -> dict:
        url = f"{self.places_base}/v1/places/{quote(place_id, safe='')}"
        raw = await self._call("places", "GET", url, DETAILS_MASK)
        if not isinstance(raw, dict):
            raise self._unavailable("places")
        await self.cache.put(key, raw, self._place_expiry([raw], DETAILS_TTL_S))
        return raw

    async def _search(self, method: str, body: dict) -> list[dict]:
        key = request_key(f"places:{method}", SEARCH_MASK, body)
        hit, raws = await self.cache.get(key)
        if not hit:
            raws = await self._flight.run(key, lambda: self._fetch_search(method, body, key))
        # Complete places only: an answer of the wrong shape (no id, name or point) is left out.
        return [p for p in map(normalize_place, raws) if complete(p)]

    async def _fetch_search(self, method: str, body: dict, key: str) -> list[dict]:
        data = await self._call("places", "POST", f"{self.places_base}/v1/places:{method}", SEARCH_MASK, body)
        places = data.get("places") if isinstance(data, dict) else None
        raws = [p for p in (places if isinstance(places, list) else []) if isinstance(p, dict)
                and complete(normalize_place(p))]
        # The search mask asks for exactly the details fields, so each result
        # also answers a later details lookup for free.
        items: list[tuple[str, Any, float]] = [(key, raws, self._place_expiry(raws, SEARCH_TTL_S))]
        items += [(self._details_key(p["id"]), p, self._place_expiry([p], DETAILS_TTL_S)) for p in raws]
        await self.cache.put_many(items)
        return raws

    def _details_key(self, place_id: str) -> str:
        return request_key("places:details", DETAILS_MASK, {"id": place_id})

    def _place_expiry(self, raws: list[dict], ttl_s: float) -> float:
        now = self.clock()
        if any(p.get("currentOpeningHours") or p.get("currentSecondaryOpeningHours") for p in raws):
            return min(now + ttl_s, end_of_utc_day(now))
        return now + ttl_s

    # -- Routes --------------------------------------------------------------

    def route_in_memory(self, origin: tuple[float, float], destination: tuple[float, float],
                        mode: str) -> tuple[bool, Route | None]:
        """(known, route) from the in-memory route cache only: no wait, no query."""
        return self.routes.in_memory(self._route_key(origin, destination, mode), estimates=True)

    async def load_routes(self, wanted: list[tuple[tuple[float, float], tuple[float, float], str]]) -> None:
        """Bring the stored routes of (origin, destination, mode) into memory, one query."""
        await self.routes.load_many([self._route_key(a, b, mode) for a, b, mode in wanted])

    async def route(self, origin: tuple[float, float], destination: tuple[float, float], mode: str) -> Route | None:
        """computeRoutes for one pair; None when Google has no route in that mode."""
        key = self._route_key(origin, destination, mode)
        hit, route = await self.routes.get(key)
        if hit:
            return route
        try:
            return await self._flight.run(key, lambda: self._fetch_route(origin, destination, mode, key))
        except Unavailable:
            self.routes.estimated(key)   # the leg shows an estimate: asked again later
            raise

    async def _fetch_route(self, origin, destination, mode: str, key: str) -> Route | None:
        # No routingPreference: it is only allowed for DRIVE, and leaving it
        # unset (traffic-unaware) gives durations that stay true for a week.
        body = {"origin": _waypoint(origin), "destination": _waypoint(destination),
                "travelMode": TRAVEL_MODES[mode], "polylineEncoding": "GEO_JSON_LINESTRING"}
        async with self._route_slots:
            data = await self._call("routes", "POST", f"{self.routes_base}/directions/v2:computeRoutes",
                                    ROUTE_MASK, body)
        routes = data.get("routes") if isinstance(data, dict) else None
        first = routes[0] if isinstance(routes, list) and routes and isinstance(routes[0], dict) else None
        try:
            route = None if first is None else Route(parse_duration(first.get("duration")),
                                                     whole_number(first.get("distanceMeters")),
                                                     _route_line(first.get("polyline")))
        except ValueError:
            raise self._garbled("routes", "computeRoutes") from None
        await self.routes.put_many([(key, route)])
        return route

    async def route_matrix(self, origins: list[tuple[float, float]], destinations: list[tuple[float, float]],
                           mode: str) -> dict[tuple[int, int], Route | None]:
        """computeRouteMatrix: every origin to every destination in one mode.
        Billed per element, so use it when most pairs are wanted; each element
        also fills the single-route cache. No call when every pair is cached."""
        if not origins or not destinations:
            return {}
        if len(origins) * len(destinations) > MATRIX_MAX_ELEMENTS:
            raise ValueError(f"a route matrix holds at most {MATRIX_MAX_ELEMENTS} elements")
        keys = self._matrix_keys(origins, destinations, mode)
        found = await self.routes.all_cached(keys)
        if found is not None:
            return found
        body = {"origins": [{"waypoint": _waypoint(o)} for o in origins],
                "destinations": [{"waypoint": _waypoint(d)} for d in destinations],
                "travelMode": TRAVEL_MODES[mode]}
        data = await self._call("routes", "POST", f"{self.routes_base}/distanceMatrix/v2:computeRouteMatrix",
                                MATRIX_MASK, body)
        if not isinstance(data, list):
            raise self._unavailable("routes")
        result: dict[tuple[int, int], Route | None] = {pair: None for pair in keys}
        try:
            for el in data:
                if not isinstance(el, dict):
                    continue
                # proto3 JSON leaves out zero values: a missing index is 0.
                pair = (whole_number(el.get("originIndex")), whole_number(el.get("destinationIndex")))
                status = _dict(el.get("status"))
                if pair in result and not status.get("code") and el.get("condition") == "ROUTE_EXISTS":
                    result[pair] = Route(parse_duration(el.get("duration")), whole_number(el.get("distanceMeters")))
        except ValueError:
            # Nothing of it is kept: a pair read as "no route" would be cached as one.
            raise self._garbled("routes", "computeRouteMatrix") from None
        await self.routes.put_many([(keys[pair], route) for pair, route in result.items()], keep_known=True)
        return result

    def _route_key(self, origin, destination, mode: str) -> str:
        """`_matrix_keys` of one pair (a TripDto build makes one per leg)."""
        if mode not in TRAVEL_MODES:
            raise ValueError(f"unknown travel mode {mode!r}")
        (a, b), (c, d) = _point(origin), _point(destination)
        return f"routes:{mode}:{a},{b}>{c},{d}"

    def _matrix_keys(self, origins, destinations, mode: str) -> dict[tuple[int, int], str]:
        if mode not in TRAVEL_MODES:
            raise ValueError(f"unknown travel mode {mode!r}")
        return route_keys(f"routes:{mode}:", origins, destinations, _point)

    # -- HTTP ----------------------------------------------------------------

    def _unavailable(self, api: str) -> Unavailable:
        message, code = MESSAGES[api]
        return Unavailable(message, code=code)

    def _garbled(self, api: str, method: str) -> Unavailable:
        """An answer of the wrong shape: unavailable (a leg shows its estimate), nothing cached."""
        log.warning("google %s: %s answered fields of the wrong type", api, method)
        return self._unavailable(api)

    async def _call(self, api: str, method: str, url: str, mask: str, body: dict | None = None) -> Any:
        if self._resting_until.get(api, 0.0) > time.monotonic():
            raise self._unavailable(api)
        headers = {"X-Goog-Api-Key": self._key, "X-Goog-FieldMask": mask}
        kwargs: dict[str, Any] = {"headers": headers}
        if body is not None:
            kwargs["json"] = body
        try:
            response = await self.http.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            # Only the exception's type: its text may carry the request line.
            log.warning("google %s: %s %s failed: %s", api, method, _path(url), type(exc).__name__)
            self._rest(api)
            raise self._unavailable(api) from None
        if response.status_code >= 400:
            status = _google_status(response)
            log.warning("google %s: %s %s answered %s %s", api, method, _path(url), response.status_code, status)
            if response.status_code == 404 and status == "NOT_FOUND" and api == "places" and method == "GET":
                raise NotFound("Google has no place with that id", code="place_not_found")
            if response.status_code >= 500 or response.status_code == 429:
                self._rest(api)
            raise self._unavailable(api)
        try:
            return response.json()
        except ValueError:
            log.warning("google %s: %s %s answered a body that is not JSON", api, method, _path(url))
            raise self._unavailable(api) from None

    def _rest(self, api: str) -> None:
        self._resting_until[api] = time.monotonic() + self.cooldown_s


def _path(url: str) -> str:
    return httpx.URL(url).path


def _google_status(response: httpx.Response) -> str:
    """Google's error status word (PERMISSION_DENIED, ...), for our log only."""
    try:
        error = response.json().get("error") or {}
        return str(error.get("status") or "")[:40]
    except (ValueError, AttributeError):
        return ""


def _route_line(polyline: Any) -> tuple[tuple[float, float], ...] | None:
    """The route's path from `polyline.geoJsonLinestring`; None when absent or malformed."""
    return line_points(polyline.get("geoJsonLinestring")) if isinstance(polyline, dict) else None
