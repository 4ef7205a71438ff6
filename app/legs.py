"""Travel legs between consecutive stops: which mode, how long, how far.

The mode follows the trip's shared choices: never an avoided mode; walking
only up to the longest walk when another mode works; otherwise the preferred
transport. Durations are the places provider's (Google or OpenStreetMap's
OSRM) when it has a route, else a labelled
estimate from straight-line distance and a per-mode speed.

`day_legs` asks the provider for every missing pair at once with concurrent
route calls (bounded inside the provider), not a route matrix: a
day's legs are the consecutive pairs only, each in its own mode, and the matrix
is billed per element (origins x destinations) and takes one travel mode.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from typing import Any, Protocol
from collections.abc import Iterable, Sequence

from .errors import Unavailable
from .preferences import MODES, TripPreferences

# Door-to-door speeds for estimates (m/s) and a detour factor for streets.
SPEED_MPS = {"walk": 1.3, "bicycle": 4.0, "transit": 6.0, "drive": 8.5}
DETOUR = 1.3
TRANSIT_OVERHEAD_S = 300  # waiting and walking to the station


@dataclass(frozen=True, slots=True)   # a large trip keeps hundreds in memory
class Leg:
    from_stop_id: str
    to_stop_id: str
    mode: str
    duration_s: int
    distance_m: int
    source: str  # the provider's name ("google", "osm") or "estimate"

    def to_json(self) -> dict:
        return {
            "fromStopId": self.from_stop_id, "toStopId": self.to_stop_id, "mode": self.mode,
            "durationS": self.duration_s, "distanceM": self.distance_m, "source": self.source,
        }

    def for_model(self) -> dict:
        """The leg as a model reads it (whole minutes, metres, where the figure came from)."""
        return {"from": self.from_stop_id, "to": self.to_stop_id, "mode": self.mode,
                "minutes": round(self.duration_s / 60), "meters": self.distance_m, "source": self.source}


def by_pair(legs: Iterable[Leg]) -> dict[tuple[str, str], Leg]:
    """Legs keyed by (from stop id, to stop id), as the schedule reads them."""
    return {(leg.from_stop_id, leg.to_stop_id): leg for leg in legs}


def haversine_m(lat1: float, lng1: float, lat2: float, lng2: float) -> float:
    r = 6_371_000.0
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lng2 - lng1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * r * math.asin(math.sqrt(a))


def choose_mode(distance_m: float, prefs: TripPreferences) -> str:
    allowed = [m for m in MODES if m not in prefs.avoidModes]
    if not allowed:
        allowed = ["walk"]  # everything avoided: walking is the only honest answer
    preferred = prefs.transport if prefs.transport in allowed else allowed[0]
    others = [m for m in allowed if m != "walk"]
    if "walk" in allowed and distance_m <= prefs.longestWalkM:
        return "walk"
    if preferred == "walk" and distance_m > prefs.longestWalkM and others:
        return "transit" if "transit" in others else others[0]
    return preferred


def estimate(from_id: str, to_id: str, a: tuple[float, float], b: tuple[float, float], mode: str) -> Leg:
    distance = haversine_m(a[0], a[1], b[0], b[1]) * DETOUR
    seconds = distance / SPEED_MPS[mode]
    if mode == "transit":
        seconds += TRANSIT_OVERHEAD_S
    return Leg(from_id, to_id, mode, int(round(seconds)), int(round(distance)), "estimate")


class RouteProvider(Protocol):
    """What legs need from the places provider (app/providers/maps.py)."""

    name: str

    async def route(self, origin: tuple[float, float], destination: tuple[float, float],
                    mode: str) -> Any: ...

    def route_in_memory(self, origin: tuple[float, float], destination: tuple[float, float],
                        mode: str) -> tuple[bool, Any]: ...

    async def load_routes(self, wanted: list[tuple[tuple[float, float], tuple[float, float], str]]) -> None: ...


async def day_legs(provider: RouteProvider | None, stops: Sequence[Any], prefs: TripPreferences) -> list[Leg]:
    """Legs between consecutive stops (objects with .id, .lat, .lng) that both
    have coordinates. The mode comes from `choose_mode` on the straight-line
    distance; the duration is the places provider's (cached: Google or OSM)
    when it has a route, else a labelled estimate. A walk that turns out longer than the trip's longest
    walk is chosen again on its real length, so the limit holds on what is shown."""
    pairs, modes = _pairs(stops, prefs)
    if not pairs:
        return []
    legs = await _measure(provider, pairs, modes)
    again = _long_walks(legs, prefs)
    if again:
        redone = await _measure(provider, [pairs[i] for i in again],
                                [choose_mode(legs[i].distance_m, prefs) for i in again])
        for i, leg in zip(again, redone):
            legs[i] = leg
    return legs


def day_legs_now(provider: RouteProvider | None, stops: Sequence[Any], prefs: TripPreferences,
                 lacking: list[tuple[tuple[float, float], tuple[float, float], str]] | None = None,
                 ) -> list[Leg] | None:
    """`day_legs` without waiting, when it needs nothing outside memory
    (estimates, or the provider's routes all in its route cache); else None,
    with the (origin, destination, mode) routes it lacks added to `lacking`
    when given, so a trip's first read loads them all at once
    (`RouteProvider.load_routes`) from the same pass. Building a TripDto asks
    this for every day: no coroutine per leg. (A long walk's second mode
    shows only once the walk is known: ask again after loading.)"""
    pairs, modes = _pairs(stops, prefs)
    if not pairs:
        return []
    legs = _measure_now(provider, pairs, modes, lacking)
    if legs is None:
        return None
    again = _long_walks(legs, prefs)
    if again:
        redone = _measure_now(provider, [pairs[i] for i in again],
                              [choose_mode(legs[i].distance_m, prefs) for i in again], lacking)
        if redone is None:
            return None
        for i, leg in zip(again, redone):
            legs[i] = leg
    return legs


def _pairs(stops: Sequence[Any], prefs: TripPreferences) -> tuple[list[tuple[Any, Any]], list[str]]:
    pairs = [(a, b) for a, b in zip(stops, stops[1:]) if _has_point(a) and _has_point(b)]
    return pairs, [choose_mode(haversine_m(a.lat, a.lng, b.lat, b.lng), prefs) for a, b in pairs]


def _long_walks(legs: list[Leg], prefs: TripPreferences) -> list[int]:
    """Walks longer than the trip's longest walk whose real length picks another mode."""
    return [i for i, leg in enumerate(legs)
            if leg.mode == "walk" and leg.distance_m > prefs.longestWalkM
            and choose_mode(leg.distance_m, prefs) != "walk"]


def _has_point(stop: Any) -> bool:
    return getattr(stop, "lat", None) is not None and getattr(stop, "lng", None) is not None


async def _measure(provider: RouteProvider | None, pairs: list[tuple[Any, Any]], modes: list[str]) -> list[Leg]:
    if provider is None:
        return [_estimate(a, b, mode) for (a, b), mode in zip(pairs, modes)]
    answers = await asyncio.gather(
        *(provider.route((a.lat, a.lng), (b.lat, b.lng), mode) for (a, b), mode in zip(pairs, modes)),
        return_exceptions=True,
    )
    legs = []
    for (a, b), mode, answer in zip(pairs, modes, answers):
        if isinstance(answer, BaseException):
            if not isinstance(answer, Unavailable):
                # A bug or a cancellation, not an outage: never hide it.
                raise answer
            legs.append(_estimate(a, b, mode))
        elif answer is None:
            legs.append(_estimate(a, b, mode))  # no route in this mode (or transit on OSM)
        else:
            legs.append(Leg(str(a.id), str(b.id), mode, answer.duration_s, answer.distance_m, provider.name))
    return legs


def _measure_now(provider: RouteProvider | None, pairs: list[tuple[Any, Any]], modes: list[str],
                 lacking: list[tuple[tuple[float, float], tuple[float, float], str]] | None = None,
                 ) -> list[Leg] | None:
    """The legs from memory; None if a route is not there (each one missing
    is added to `lacking`, when given)."""
    if provider is None:
        return [_estimate(a, b, mode) for (a, b), mode in zip(pairs, modes)]
    legs: list[Leg] | None = []
    for (a, b), mode in zip(pairs, modes):
        known, route = provider.route_in_memory((a.lat, a.lng), (b.lat, b.lng), mode)
        if not known:
            if lacking is None:
                return None
            lacking.append(((a.lat, a.lng), (b.lat, b.lng), mode))
            legs = None
        elif legs is not None:
            legs.append(_estimate(a, b, mode) if route is None else
                        Leg(str(a.id), str(b.id), mode, route.duration_s, route.distance_m, provider.name))
    return legs


def _estimate(a: Any, b: Any, mode: str) -> Leg:
    return estimate(str(a.id), str(b.id), (a.lat, a.lng), (b.lat, b.lng), mode)


def estimate_leg(a: Any, b: Any, prefs: TripPreferences) -> Leg:
    """The leg `day_legs` would estimate without a provider (same mode rule)."""
    mode = choose_mode(haversine_m(a.lat, a.lng, b.lat, b.lng), prefs)
    leg = estimate(a.id, b.id, (a.lat, a.lng), (b.lat, b.lng), mode)
    if mode == "walk" and leg.distance_m > prefs.longestWalkM and choose_mode(leg.distance_m, prefs) != "walk":
        leg = estimate(a.id, b.id, (a.lat, a.lng), (b.lat, b.lng), choose_mode(leg.distance_m, prefs))
    return leg


def legs_for(day: Any, known: dict[tuple[str, str], Leg], prefs: TripPreferences) -> dict[tuple[str, str], Leg]:
    """Consecutive legs of `day`, by pair: known ones reused, new pairs
    estimated (the review re-times simulated days with these)."""
    out = {}
    for a, b in zip(day.stops, day.stops[1:]):
        if _has_point(a) and _has_point(b):
            out[(a.id, b.id)] = known.get((a.id, b.id)) or estimate_leg(a, b, prefs)
    return out
