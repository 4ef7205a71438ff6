"""A travel route as every routing provider answers it (Google Routes, OSRM),
and the cache both keep routes in: an in-memory LRU in front of the SQLite
provider cache, so the legs of a trip are ~free to recompute. "No route in
this mode" (None) is cached too, for a shorter time.

A route fetched on its own keeps the path the provider drew (`geometry`,
(lat, lng) points: OSRM's and Google's GeoJSON line) in the same record, so
GPX can follow the streets; a route matrix gives none, and leaves the routes
already in memory as they are (their geometry included).

A leg the provider could not be asked about (an outage: `Unavailable`) is
shown as an estimate; the cache keeps that as a marker (`{"estimate": true}`,
ESTIMATE_TTL_S), so the legs of a trip read again, even after a restart, do
not ask the provider for every leg once more. Only the legs read the marker
(`in_memory(key, estimates=True)`: "known, no route: estimate it"); `get`,
a route matrix and a single `route` call treat it as unknown and ask, and a
real route written over it replaces it.

A trip read for the first time looks up all its legs in one query
(`load_many`), not one query per leg."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from dataclasses import dataclass
from collections.abc import Callable

from .cache import ProviderCache

log = logging.getLogger("wayline.routes")

DAY_S = 24 * 3600
ROUTE_TTL_S = 7 * DAY_S
NO_ROUTE_TTL_S = DAY_S       # "no route here" may change sooner than a street route
LRU_SIZE = 4096
DB_HIT_TRUST_S = 3600        # a route read from SQLite is trusted in memory for an hour
ESTIMATE_TTL_S = 15 * 60     # a leg estimated in an outage: the provider is asked again after this


GEOMETRY_MAX_POINTS = 5000   # a day's leg; a longer line is thinned evenly (GPX apps draw it the same)


@dataclass(frozen=True)
class Route:
    duration_s: int
    distance_m: int
    geometry: tuple[tuple[float, float], ...] | None = None   # (lat, lng) along the way, when the provider drew it

    def to_json(self) -> dict:
        out: dict = {"durationS": self.duration_s, "distanceM": self.distance_m}
        if self.geometry:
            out["geometry"] = [list(point) for point in self.geometry]
        return out

    @classmethod
    def from_json(cls, value: dict) -> Route:
        points = value.get("geometry")
        return cls(int(value["durationS"]), int(value["distanceM"]),
                   tuple((float(a), float(b)) for a, b in points) if points else None)


def line_points(line: object) -> tuple[tuple[float, float], ...] | None:
    """(lat, lng) points of a GeoJSON LineString (`[lng, lat]` pairs), rounded
    to 6 decimals (~0.1 m); None for anything else: a route without its
    path is still a route."""
    if not isinstance(line, dict) or line.get("type") != "LineString":
        return None
    coords = line.get("coordinates")
    if not isinstance(coords, list) or len(coords) < 2:
        return None
    step = max(1, -(-len(coords) // GEOMETRY_MAX_POINTS))
    kept = coords[::step]
    if kept[-1] is not coords[-1]:
        kept = [*kept, coords[-1]]
    try:
        points = tuple((round(float(c[1]), 6), round(float(c[0]), 6)) for c in kept)
    except (TypeError, ValueError, IndexError):
        return None
    if not all(-90 <= lat <= 90 and -180 <= lng <= 180 for lat, lng in points):
        return None
    return points


def route_keys(prefix: str, origins, destinations,
               point: Callable[[tuple[float, float]], tuple[float, float]]) -> dict[tuple[int, int], str]:
    """The cache key of every (origin, destination) pair,
    `{prefix}{lat},{lng}>{lat},{lng}`, each point rounded by `point` once (a
    matrix has n x m keys)."""
    starts = [f"{prefix}{a},{b}>" for a, b in map(point, origins)]
    ends = [f"{c},{d}" for c, d in map(point, destinations)]
    return {(i, j): start + end for i, start in enumerate(starts) for j, end in enumerate(ends)}


class Estimate:
    """The marker of a leg estimated while its provider was unreachable."""

    STORED = {"estimate": True}


ESTIMATE = Estimate()
Cached = Route | None | Estimate


def _from_stored(value: object) -> Cached:
    if value is None:
        return None
    if isinstance(value, dict) and value.get("estimate") is True:
        return ESTIMATE
    return Route.from_json(value)  # type: ignore[arg-type]


class RouteCache:
    def __init__(self, cache: ProviderCache, clock: Callable[[], float], *, lru_size: int = LRU_SIZE):
        self.cache, self.clock, self.lru_size = cache, clock, lru_size
        self._lru: OrderedDict[str, tuple[float, Cached]] = OrderedDict()
        self._estimated: dict[str, None] = {}   # markers not yet written (one write for a burst)
        self._storing: set[asyncio.Future[None]] = set()   # those writes, held until done
        self._absent: set[str] = set()   # keys the last `load_many` found nowhere: `get` need not look again

    def in_memory(self, key: str, *, estimates: bool = False) -> tuple[bool, Route | None]:
        """`get` from the LRU only: no wait, no query (a TripDto build asks
        this for every leg). With `estimates`, a leg estimated in an outage
        is known too, as None (estimate it)."""
        entry = self._lru.get(key)
        if entry is not None and entry[0] > self.clock():
            self._lru.move_to_end(key)
            value = entry[1]
            if value is ESTIMATE:
                return (True, None) if estimates else (False, None)
            return True, value  # type: ignore[return-value]
        return False, None

    async def get(self, key: str) -> tuple[bool, Route | None]:
        """(found, route); a found None means "no route", cached."""
        hit, route = self.in_memory(key)
        if hit:
            return True, route
        if key in self._absent:   # until the next load_many; a route put since is in memory, seen above
            return False, None
        now = self.clock()
        hit, value = await self.cache.get(key)
        if not hit:
            return False, None
        cached = _from_stored(value)
        if cached is ESTIMATE:
            return False, None
        self._remember(key, cached, now + DB_HIT_TRUST_S)
        return True, cached  # type: ignore[return-value]

    async def load_many(self, keys: list[str]) -> None:
        """Bring the stored routes (and estimate markers) of `keys` that are
        not in memory into it, in one query: a trip's first read."""
        now = self.clock()
        wanted = []
        for key in dict.fromkeys(keys):
            if self._fresh(key, now):
                self._lru.move_to_end(key)   # kept: what this load adds must not push it out
            else:
                wanted.append(key)
        if not wanted:
            return
        found = await self.cache.get_many(wanted)
        for key, (value, expires_at) in found.items():
            self._remember(key, _from_stored(value), min(expires_at, now + DB_HIT_TRUST_S))
        self._absent = {k for k in wanted if k not in found}

    def estimated(self, key: str) -> None:
        """Remember that `key`'s leg was estimated (the provider is out): in
        memory at once, and stored with the other legs of the same burst in
        one write that nobody waits for (the legs of a trip are asked for
        concurrently, and its first read should not wait on a cache write)."""
        self._remember(key, ESTIMATE, self.clock() + ESTIMATE_TTL_S)
        first = not self._estimated
        self._estimated[key] = None
        if first:
            task = asyncio.ensure_future(self._store_estimates())
            self._storing.add(task)
            task.add_done_callback(self._storing.discard)

    async def _store_estimates(self) -> None:
        await asyncio.sleep(0)   # let the rest of the burst fail and queue
        keys, self._estimated = list(self._estimated), {}
        expires = self.clock() + ESTIMATE_TTL_S
        try:
            await self.cache.put_many([(k, Estimate.STORED, expires) for k in keys])
        except Exception:   # a cache write: memory has them; the next outage read writes them again
            log.warning("route cache: %d estimates not stored", len(keys), exc_info=True)

    def _fresh(self, key: str, now: float) -> bool:
        entry = self._lru.get(key)
        return entry is not None and entry[0] > now

    async def all_cached(self, keys: dict) -> dict | None:
        """The route of every key (`{pair: key}` -> `{pair: route}`), or None as
        soon as one is not cached (a matrix is then asked for whole). Most are
        in memory: no coroutine per pair for those."""
        found = {}
        for pair, key in keys.items():
            hit, route = self.in_memory(key)
            if not hit:
                hit, route = await self.get(key)
                if not hit:
                    return None
            found[pair] = route
        return found

    async def put_many(self, items: list[tuple[str, Route | None]], *, keep_known: bool = False) -> None:
        """Remember routes; `keep_known` (a matrix's answers): leave a route
        already in memory as it is, so its geometry is not lost."""
        now = self.clock()
        rows = []
        for key, route in items:
            if keep_known and self.in_memory(key)[0]:
                continue
            expires = now + (ROUTE_TTL_S if route is not None else NO_ROUTE_TTL_S)
            self._remember(key, route, expires)
            rows.append((key, None if route is None else route.to_json(), expires))
        await self.cache.put_many(rows)

    def _remember(self, key: str, route: Cached, expires_at: float) -> None:
        self._lru[key] = (expires_at, route)
        self._lru.move_to_end(key)
        while len(self._lru) > self.lru_size:
            self._lru.popitem(last=False)
