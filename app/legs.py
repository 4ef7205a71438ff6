"""Travel legs between consecutive stops: which mode, how long, how far.

The mode follows the trip's shared choices: never an avoided mode; walking
only up to the longest walk when another mode works; otherwise the preferred
transport. Durations are Google's when routes are available, else a labelled
estimate from straight-line distance and a per-mode speed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .preferences import MODES, TripPreferences

# Door-to-door speeds for estimates (m/s) and a detour factor for streets.
SPEED_MPS = {"walk": 1.3, "bicycle": 4.0, "transit": 6.0, "drive": 8.5}
DETOUR = 1.3
TRANSIT_OVERHEAD_S = 300  # waiting and walking to the station


@dataclass(frozen=True)
class Leg:
    from_stop_id: str
    to_stop_id: str
    mode: str
    duration_s: int
    distance_m: int
    source: str  # "google" or "estimate"

    def to_json(self) -> dict:
        return {
            "fromStopId": self.from_stop_id, "toStopId": self.to_stop_id, "mode": self.mode,
            "durationS": self.duration_s, "distanceM": self.distance_m, "source": self.source,
        }


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


async def day_legs(svc, stops, prefs: TripPreferences) -> list[Leg]:
    """Legs between consecutive stops that both have coordinates (estimates only for now)."""
    legs = []
    for a, b in zip(stops, stops[1:]):
        if None in (a.lat, a.lng, b.lat, b.lng):
            continue
        mode = choose_mode(haversine_m(a.lat, a.lng, b.lat, b.lng) * DETOUR, prefs)
        legs.append(estimate(a.id, b.id, (a.lat, a.lng), (b.lat, b.lng), mode))
    return legs
