"""The only code that talks to OpenStreetMap services, behind the same
interface as app.providers.google.Google (search_text, search_nearby, place, route,
route_matrix), so callers need no key and don't know who answers.

- Nominatim: text search (`/search`, bounded to a box around the point) and
  details (`/lookup?osm_ids=N123`). At most one request a second per OSM
  instance (the public server's policy), requests start in arrival order.
- Overpass: places near a point by type, one query per request, the types
  mapped to tags by app/providers/osm_tags.py. At most 2 queries at once (the main
  instance's slots per address).
- OSRM: routes and the matrix, walk -> foot, bicycle -> bike, drive -> car;
  transit is None without a request (no free transit router: the caller
  shows its labelled estimate).

Places come back exactly as google.normalize_place shapes them (no rating,
price or popularity in OSM: those are None). Ids are `osm:node/123`,
`osm:way/45`, `osm:relation/6`, checked before they reach a URL. `raw` is ours,
not a provider's JSON: {"source": "osm", "id", "name", "lat", "lng",
"address", "tags"}, the tags as OSM has them (opening_hours is the raw string).

Every request names the app and its contact in the User-Agent. Answers are
cached in SQLite for a day (routes for a week, in the shared route cache);
identical requests in flight share one call; after a timeout, a refusal
(403/429) or a 5xx that service rests for `cooldown_s`. Any failure is
`Unavailable` with a plain message, never the URL or the body.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from importlib import metadata
from typing import Any

import httpx

from ..db import Database
from ..errors import NotFound, Unavailable
from ..legs import haversine_m
from .osm_tags import (
    ANY_PLACE_TYPES,
    from_nominatim,
    from_overpass,
    google_types,
    normalize_place,
    notability,
    overpass_query,
    selectors_for,
)
from .outbound import OutboundClient, provider_timeout
from ..shared_reads import SingleFlight
from .cache import ProviderCache, request_key
from .route_cache import Route, RouteCache, line_points, route_keys

log = logging.getLogger("wayline.osm")

NAME = "osm"
ATTRIBUTION = "© OpenStreetMap contributors"
PLACE_ID = re.compile(r"osm:(node|way|relation)/([1-9][0-9]{0,18})")
OSM_TYPE_LETTER = {"node": "N", "way": "W", "relation": "R"}  # Nominatim lookup ids: N123
OSRM_PROFILES = {"walk": "foot", "bicycle": "bike", "drive": "car"}
TRAVEL_MODES = (*OSRM_PROFILES, "transit")
NO_ROUTE_CODES = {"NoRoute", "NoSegment"}  # OSRM's 400 answers that mean "no route", not failure
LANGUAGE = re.compile(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})?")

DAY_S = 24 * 3600
SEARCH_TTL_S = DAY_S
DETAILS_TTL_S = DAY_S
NOMINATIM_MAX_LIMIT = 40       # Nominatim's own cap on `limit`
QUERY_MAX_CHARS = 255
SEARCH_BOX_M = (500, 50_000)   # text search box half-size, clamped from radius_m
NEARBY_MAX_M = 50_000
OVERPASS_SLOTS = 2
OVERPASS_ELEMENTS = 100        # asked of Overpass; ranked here, then cut to max_results
OVERPASS_QUERY_TIMEOUT_S = 10
OSRM_SLOTS = 4
OSRM_TABLE_MAX_COORDS = 100    # osrm-routed's default max-table-size
COOLDOWN_S = 20.0

MESSAGES = {
    "nominatim": ("OpenStreetMap place search is unavailable right now", "places_unavailable"),
    "overpass": ("OpenStreetMap place search is unavailable right now", "places_unavailable"),
    "osrm": ("OpenStreetMap routing is unavailable right now", "routes_unavailable"),
}


MISSING = {"missing": True}   # the cached answer for an id OpenStreetMap does not know


class MinInterval:
    """Starts at most one call per `interval_s`, in arrival order. Clock and
    sleep are injectable so tests need not wait."""

    def __init__(self, interval_s: float, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep):
        self.interval_s, self.clock, self.sleep = interval_s, clock, sleep
        self._lock = asyncio.Lock()
        self._next = -math.inf

    async def wait(self, give_up: Callable[[], bool] = lambda: False) -> bool:
        """Wait for this call's turn; False (no turn taken) when `give_up()`
        says so once the turn comes: a request queued behind a failure need
        not wait its second to learn the service is down."""
        async with self._lock:
            if give_up():
                return False
            now = self.clock()
            if now < self._next:
                await self.sleep(self._next - now)
                if give_up():
                    return False
                now = max(self.clock(), self._next)
            self._next = now + self.interval_s
            return True


def user_agent(contact: str | None) -> str:
    """`Wayline/<version> (+contact)`, as the OSM usage policies ask. Without a
    contact it says only who we are rather than invent one."""
    try:
        version = metadata.version("wayline")
    except metadata.PackageNotFoundError:
        version = "dev"
    text = "".join(c for c in (contact or "") if c.isascii() and c.isprintable()).strip()[:200]
    return f"Wayline/{version} (+{text})" if text else f"Wayline/{version}"


def _language(language: str | None) -> str | None:
    """"en-GB" -> "en" (name:<lang> tags use the primary subtag); junk -> None."""
    if not language or not LANGUAGE.fullmatch(language):
        return None
    return language.split("-")[0].lower()


def _point(latlng: tuple[float, float]) -> tuple[float, float]:
    # ~1 m, so the same stop makes the same key; refuse what no URL should carry.
    return _rounded(float(latlng[0]), float(latlng[1]))


@functools.lru_cache(maxsize=1 << 16)
def _rounded(lat: float, lng: float) -> tuple[float, float]:
    # Kept: a trip's first read makes a route key per leg from both ends (about
    # 900 points for 30 x 15), and round() is most of that work.
    if not (math.isfinite(lat) and math.isfinite(lng) and -90 <= lat <= 90 and -180 <= lng <= 180):
        raise ValueError("a point needs a latitude in [-90, 90] and a longitude in [-180, 180]")
    return round(lat, 5), round(lng, 5)


def _viewbox(lat: float, lng: float, radius_m: float) -> str:
    """Nominatim's viewbox (west,north,east,south) around the point."""
    half = min(max(float(radius_m), SEARCH_BOX_M[0]), SEARCH_BOX_M[1])
    dlat = half / 111_320
    dlng = half / (111_320 * max(math.cos(math.radians(lat)), 0.01))
    west, east = max(lng - dlng, -180.0), min(lng + dlng, 180.0)
    north, south = min(lat + dlat, 90.0), max(lat - dlat, -90.0)
    return ",".join(f"{v:.5f}" for v in (west, north, east, south))


def _lonlat(points: list[tuple[float, float]]) -> str:
    return ";".join(f"{lng},{lat}" for lat, lng in points)  # OSRM wants lon,lat


# -- OSM ---------------------------------------------------------------------------


class OSM:
    name = NAME
    attribution: str | None = ATTRIBUTION

    def __init__(self, settings, http: OutboundClient, db: Database, clock: Callable[[], float] | None = None,
                 *, monotonic: Callable[[], float] | None = None,
                 sleep: Callable[[float], Awaitable[Any]] | None = None):
        self.nominatim_base = settings.nominatim_url.rstrip("/")
        self.overpass_url = settings.overpass_url
        self.osrm_template = settings.osrm_url.rstrip("/")
        self.user_agent = user_agent(settings.contact)
        self.http = http
        self.clock = clock or time.time                # cache expiry (a test may age entries)
        self.monotonic = monotonic or time.monotonic   # pacing and cool-down
        self.cache = ProviderCache(db, self.clock)
        self.routes = RouteCache(self.cache, self.clock)
        # Overpass may think for its own query limit before it answers; the others use the
        # shared client's timeouts.
        self._timeouts = {"overpass": provider_timeout(settings, read_extra_s=OVERPASS_QUERY_TIMEOUT_S)}
        self._flight = SingleFlight()
        # One request a second (Settings.nominatim_interval_s: a test's stand-in may go faster).
        self.nominatim_pace = MinInterval(settings.nominatim_interval_s, self.monotonic, sleep or asyncio.sleep)
        self._slots = {"overpass": asyncio.Semaphore(OVERPASS_SLOTS), "osrm": asyncio.Semaphore(OSRM_SLOTS)}
        self.cooldown_s = COOLDOWN_S
        self._resting_until: dict[str, float] = {}

    def __repr__(self) -> str:
        return f"OSM(nominatim={self.nominatim_base!r}, overpass={self.overpass_url!r}, osrm={self.osrm_template!r})"

    # -- places ----------------------------------------------------------------

    async def search_text(self, query: str, *, lat: float | None = None, lng: float | None = None,
                          radius_m: float = 20_000, max_results: int = 20,
                          included_type: str | None = None, language: str | None = None) -> list[dict]:
        """Nominatim search, bounded to a box around the point when one is given;
        `included_type` keeps only places of that (Google-style) type."""
        text = " ".join(str(query).split())[:QUERY_MAX_CHARS]
        if included_type is not None:
            selectors_for([included_type])  # an unknown type is refused before any request
        if not text or max_results < 1:
            return []
        lang = _language(language)
        params = {"q": text, "format": "jsonv2", "addressdetails": "1", "extratags": "1", "namedetails": "1",
                  "limit": str(NOMINATIM_MAX_LIMIT if included_type else min(max_results, NOMINATIM_MAX_LIMIT))}
        if lat is not None and lng is not None:
            params["viewbox"] = _viewbox(*_point((lat, lng)), radius_m)
            params["bounded"] = "1"
        if lang:
            params["accept-language"] = lang
        key = request_key("osm:search", "", {"params": params, "type": included_type, "max": max_results})

        async def fetch() -> list[dict]:
            data = await self._call("nominatim", f"{self.nominatim_base}/search", params=params)
            if not isinstance(data, list):
                raise self._unavailable("nominatim")
            raws = [r for r in (from_nominatim(item, lang) for item in data) if r is not None]
            if included_type:
                raws = [r for r in raws if included_type in google_types(r["tags"])]
            return await self._store_places(key, raws[:max_results], lang)

        return await self._places(key, fetch)

    async def search_nearby(self, lat: float, lng: float, *, radius_m: float = 1500,
                            types: list[str] | None = None, max_results: int = 20,
                            rank: str = "POPULARITY", language: str | None = None) -> list[dict]:
        """Overpass: named places of these types (default: ANY_PLACE_TYPES)
        within radius_m. POPULARITY ranks by `notability`, then distance;
        DISTANCE by distance only."""
        if rank not in ("POPULARITY", "DISTANCE"):
            raise ValueError(f"unknown rank {rank!r}")
        wanted = sorted(set(types)) if types else list(ANY_PLACE_TYPES)
        selectors = selectors_for(wanted)
        lat, lng = _point((lat, lng))
        radius = int(min(max(float(radius_m), 1.0), NEARBY_MAX_M))
        lang = _language(language)
        key = request_key("osm:nearby", "", {"at": [lat, lng], "radius": radius, "types": wanted,
                                             "max": max_results, "rank": rank, "lang": lang})

        async def fetch() -> list[dict]:
            query = overpass_query(selectors, lat, lng, radius, OVERPASS_ELEMENTS, OVERPASS_QUERY_TIMEOUT_S)
            data = await self._call("overpass", self.overpass_url, form={"data": query})
            elements = data.get("elements") if isinstance(data, dict) else None
            if not isinstance(elements, list):
                raise self._unavailable("overpass")
            raws = {r["id"]: r for r in (from_overpass(e, lang) for e in elements) if r is not None}

            def order(r: dict) -> tuple:
                distance = haversine_m(lat, lng, r["lat"], r["lng"])
                return (distance, r["id"]) if rank == "DISTANCE" else (-notability(r["tags"]), distance, r["id"])

            return await self._store_places(key, sorted(raws.values(), key=order)[:max(max_results, 0)], lang)

        return await self._places(key, fetch)

    async def place(self, place_id: str) -> dict:
        """Nominatim lookup by namespaced id. NotFound for an id that is not
        ours (no request) or that OSM does not know."""
        match = PLACE_ID.fullmatch(place_id) if isinstance(place_id, str) else None
        if match is None:
            raise NotFound("That is not an OpenStreetMap place id", code="place_not_found")
        key = self._details_key(place_id)
        hit, raw = await self.cache.get(key)
        if not hit:
            raw = await self._flight.run(key, lambda: self._fetch_place(match[1], int(match[2]), key))
        if raw == MISSING:
            raise NotFound("OpenStreetMap has no place with that id", code="place_not_found")
        return normalize_place(raw)

    async def _fetch_place(self, osm_type: str, osm_id: int, key: str) -> dict:
        params = {"osm_ids": f"{OSM_TYPE_LETTER[osm_type]}{osm_id}", "format": "jsonv2", "addressdetails": "1",
                  "extratags": "1", "namedetails": "1"}
        data = await self._call("nominatim", f"{self.nominatim_base}/lookup", params=params)
        if not isinstance(data, list):
            raise self._unavailable("nominatim")
        wanted = f"osm:{osm_type}/{osm_id}"
        raw = next((r for r in (from_nominatim(item, None) for item in data) if r and r["id"] == wanted), None)
        if raw is None:
            raw = MISSING   # remembered too: a deleted place is not asked for again at every review
        await self.cache.put(key, raw, self.clock() + DETAILS_TTL_S)
        return raw

    async def _places(self, key: str, fetch: Callable[[], Awaitable[list[dict]]]) -> list[dict]:
        hit, raws = await self.cache.get(key)
        if not hit:
            raws = await self._flight.run(key, fetch)
        return [normalize_place(r) for r in raws]

    async def _store_places(self, key: str, raws: list[dict], language: str | None) -> list[dict]:
        """Cache a search and, unless names were localized, each place's
        details too (a later lookup costs no request)."""
        expires = self.clock() + SEARCH_TTL_S
        items: list[tuple[str, Any, float]] = [(key, raws, expires)]
        if language is None:
            items += [(self._details_key(r["id"]), r, self.clock() + DETAILS_TTL_S) for r in raws]
        await self.cache.put_many(items)
        return raws

    def _details_key(self, place_id: str) -> str:
        return request_key("osm:details", "", {"id": place_id})

    # -- routes ----------------------------------------------------------------

    def route_in_memory(self, origin: tuple[float, float], destination: tuple[float, float],
                        mode: str) -> tuple[bool, Route | None]:
        """(known, route) from the in-memory route cache only: no wait, no
        query. Transit is known: never a route."""
        if mode == "transit":
            return True, None
        return self.routes.in_memory(self._route_key(origin, destination, mode), estimates=True)

    async def load_routes(self, wanted: list[tuple[tuple[float, float], tuple[float, float], str]]) -> None:
        """Bring the stored routes of (origin, destination, mode) into memory, one query."""
        await self.routes.load_many([self._route_key(a, b, mode) for a, b, mode in wanted if mode != "transit"])

    async def route(self, origin: tuple[float, float], destination: tuple[float, float], mode: str) -> Route | None:
        """OSRM for one pair; None for transit or when OSRM finds no route."""
        key = self._route_key(origin, destination, mode)
        if mode == "transit":
            return None
        hit, route = await self.routes.get(key)
        if hit:
            return route
        try:
            return await self._flight.run(key, lambda: self._fetch_route(origin, destination, mode, key))
        except Unavailable:
            self.routes.estimated(key)   # the leg shows an estimate: asked again later
            raise

    async def _fetch_route(self, origin, destination, mode: str, key: str) -> Route | None:
        profile = OSRM_PROFILES[mode]
        url = f"{self._osrm_base(profile)}/route/v1/{profile}/{_lonlat([_point(origin), _point(destination)])}"
        data = await self._call("osrm", url, params={"overview": "full", "geometries": "geojson",
                                                     "alternatives": "false", "steps": "false"})
        route = None
        if isinstance(data, dict) and data.get("code") == "Ok":
            routes = data.get("routes")
            first = routes[0] if isinstance(routes, list) and routes and isinstance(routes[0], dict) else None
            if first is None:
                raise self._unavailable("osrm")
            route = self._route(first.get("duration"), first.get("distance"), first.get("geometry"))
        elif not (isinstance(data, dict) and data.get("code") in NO_ROUTE_CODES):
            raise self._unavailable("osrm")
        await self.routes.put_many([(key, route)])
        return route

    async def route_matrix(self, origins: list[tuple[float, float]], destinations: list[tuple[float, float]],
                           mode: str) -> dict[tuple[int, int], Route | None]:
        """OSRM table: every origin to every destination in one mode, one
        request; each element also fills the route cache. No request when
        every pair is cached; all None for transit."""
        if not origins or not destinations:
            return {}
        if len(origins) + len(destinations) > OSRM_TABLE_MAX_COORDS:
            raise ValueError(f"a route matrix holds at most {OSRM_TABLE_MAX_COORDS} points in all")
        keys = self._matrix_keys(origins, destinations, mode)
        if mode == "transit":
            return {pair: None for pair in keys}
        found = await self.routes.all_cached(keys)
        if found is not None:
            return found
        profile = OSRM_PROFILES[mode]
        points = [_point(p) for p in [*origins, *destinations]]
        n = len(origins)
        params = {"sources": ";".join(str(i) for i in range(n)),
                  "destinations": ";".join(str(n + j) for j in range(len(destinations))),
                  "annotations": "duration,distance"}
        data = await self._call("osrm", f"{self._osrm_base(profile)}/table/v1/{profile}/{_lonlat(points)}",
                                params=params)
        durations: Any = data.get("durations") if isinstance(data, dict) and data.get("code") == "Ok" else None
        distances: Any = data.get("distances") if isinstance(data, dict) else None
        try:   # a table that is missing or of the wrong shape fails here (TypeError, IndexError)
            result = {(i, j): (None if durations[i][j] is None or distances[i][j] is None
                               else self._route(durations[i][j], distances[i][j])) for i, j in keys}
        except (TypeError, IndexError, KeyError):
            raise self._unavailable("osrm") from None
        await self.routes.put_many([(keys[pair], route) for pair, route in result.items()], keep_known=True)
        return result

    def _route(self, duration: Any, distance: Any, geometry: Any = None) -> Route:
        try:
            return Route(int(round(float(duration))), int(round(float(distance))), line_points(geometry))
        except (TypeError, ValueError):
            raise self._unavailable("osrm") from None

    def _osrm_base(self, profile: str) -> str:
        return self.osrm_template.replace("{profile}", profile)

    def _route_key(self, origin, destination, mode: str) -> str:
        """`_matrix_keys` of one pair (a TripDto build makes one per leg)."""
        if mode not in TRAVEL_MODES:
            raise ValueError(f"unknown travel mode {mode!r}")
        (a, b), (c, d) = _point(origin), _point(destination)
        return f"osm-routes:{mode}:{a},{b}>{c},{d}"

    def _matrix_keys(self, origins, destinations, mode: str) -> dict[tuple[int, int], str]:
        if mode not in TRAVEL_MODES:
            raise ValueError(f"unknown travel mode {mode!r}")
        return route_keys(f"osm-routes:{mode}:", origins, destinations, _point)

    # -- HTTP ------------------------------------------------------------------

    def _unavailable(self, service: str) -> Unavailable:
        message, code = MESSAGES[service]
        return Unavailable(message, code=code)

    def _resting(self, service: str) -> bool:
        return self._resting_until.get(service, -math.inf) > self.monotonic()

    def _rest(self, service: str) -> None:
        self._resting_until[service] = self.monotonic() + self.cooldown_s

    @asynccontextmanager
    async def _turn(self, service: str) -> AsyncIterator[None]:
        """Wait for this service's turn: Nominatim's pace, or a free slot."""
        if service == "nominatim":
            if not await self.nominatim_pace.wait(lambda: self._resting("nominatim")):
                raise self._unavailable("nominatim")
            yield
        else:
            async with self._slots[service]:
                yield

    async def _call(self, service: str, url: str, *, params: dict | None = None, form: dict | None = None) -> Any:
        if self._resting(service):
            raise self._unavailable(service)
        method = "GET" if form is None else "POST"
        kwargs: dict[str, Any] = {"headers": {"User-Agent": self.user_agent, "Accept": "application/json"},
                                  "params": params, "data": form}
        timeout = self._timeouts.get(service)
        if timeout is not None:
            kwargs["timeout"] = timeout
        async with self._turn(service):
            if self._resting(service):  # another request failed while this one waited
                raise self._unavailable(service)
            try:
                response = await self.http.request(method, url, **kwargs)
            except httpx.HTTPError as exc:
                # Only the exception's type: its text may carry the request line.
                log.warning("osm %s: %s failed: %s", service, method, type(exc).__name__)
                self._rest(service)
                raise self._unavailable(service) from None
        if service == "osrm" and response.status_code == 400 and _osrm_code(response) in NO_ROUTE_CODES:
            return {"code": "NoRoute"}
        if response.status_code >= 400:
            log.warning("osm %s: %s answered %s", service, method, response.status_code)
            if response.status_code in (403, 429) or response.status_code >= 500:
                self._rest(service)  # refused or overloaded: asking again at once only makes it worse
            raise self._unavailable(service)
        try:
            data = response.json()
        except ValueError:
            log.warning("osm %s: %s answered a body that is not JSON", service, method)
            raise self._unavailable(service) from None
        if service == "overpass" and isinstance(data, dict) and "runtime error" in str(data.get("remark") or ""):
            # Overpass answers 200 with a remark when a query times out or runs out of memory.
            log.warning("osm overpass: a query failed on the server: %s", str(data["remark"])[:120])
            self._rest(service)
            raise self._unavailable(service)
        return data


def _osrm_code(response: httpx.Response) -> str:
    try:
        return str(response.json().get("code") or "")
    except (ValueError, AttributeError):
        return ""
