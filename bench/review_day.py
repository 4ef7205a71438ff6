"""Server time for the day review (`app.review.findings.review_day`) on a 25-stop day.

The review is pure (places, weather and legs are passed in), so this times
the function itself, as the review route, the copilot, Optimize's preview and
the trip agent call it once their facts are loaded (the shown legs included:
the TripDto has one for every pair of consecutive stops). The day: 25 stops
along a walk through Lisbon, every one with a Google place and weekly hours
(midday breaks, a museum closed on Mondays, cafes, galleries, a lunch), on a
forecast-wet Monday of a three-day trip, at a packed pace. The busy variant
draws what a busy real day draws: the museum on its closed day, a church
reached during its midday break, a park in the rain, more stops than the
pace holds; so the fix search runs (every fix is applied to a copy and
re-reviewed, on this day and on any other day it changes). The clean variant
only keeps the pace finding (25 stops are more than any pace holds).

    .venv/bin/python bench/review_day.py [--runs 300]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "spec")]

from starlette.applications import Starlette  # noqa: E402
from starlette.responses import JSONResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from app.preferences import TripPreferences  # noqa: E402
from app.legs import legs_for  # noqa: E402
from app.review.findings import review_day  # noqa: E402
from app.trips.model import Day, Stop, Trip  # noqa: E402
from standins.google_standin import EVERY_DAY, MON_SAT, TUE_SUN, place_json, weekly  # noqa: E402

STOPS = 25
TARGET_P50_MS = 5.0
START = "2026-12-14"   # a Monday
WEATHER = {"2026-12-14": {"source": "forecast", "precipitationProbability": 80, "precipitationMm": 6.0,
                          "weatherCode": 63},
           "2026-12-15": {"source": "forecast", "precipitationProbability": 20, "precipitationMm": 0.2,
                          "weatherCode": 3},
           "2026-12-16": {"source": "forecast", "precipitationProbability": 10, "precipitationMm": 0.0,
                          "weatherCode": 1}}
KINDS = [  # (types, hours, kind, meal)
    (["tourist_attraction"], weekly(EVERY_DAY, ("08:00", "20:00")), "sight", None),
    (["cafe", "food"], weekly(EVERY_DAY, ("07:30", "20:00")), "food", None),
    (["shopping_mall"], weekly(EVERY_DAY, ("09:00", "00:00")), "sight", None),
    (["art_gallery"], weekly(MON_SAT, ("08:00", "20:00")), "sight", None),
]
BUSY = {  # position -> (types, hours, kind, meal): what makes the day busy
    3: (["museum"], weekly(TUE_SUN, ("10:00", "18:00")), "sight", None),
    11: (["tourist_attraction", "church"], weekly(EVERY_DAY, ("09:00", "12:30"), ("14:00", "19:00")), "sight", None),
    17: (["park"], None, "sight", None),
}
LUNCH = (["restaurant", "food"], weekly(EVERY_DAY, ("12:00", "15:00"), ("19:00", "23:00")), "food", "lunch")


def build(clean: bool) -> tuple[Trip, dict]:
    places, stops = {}, []
    for i in range(STOPS):
        lat, lng = 38.7050 + i * 0.0009, -9.1500 + i * 0.0011      # a path that never crosses itself
        types, hours, kind, meal = LUNCH if i == 10 else KINDS[i % len(KINDS)]
        if not clean and i in BUSY:
            types, hours, kind, meal = BUSY[i]
        pid = f"bench_{i}"
        places[pid] = place_json(pid, f"Place {i}", lat, lng, types, hours=hours)
        stops.append(Stop(id=f"s{i:02d}", day_id="d1", position=i, kind=kind, name=f"Place {i}", place_id=pid,
                          lat=lat, lng=lng, duration_min=20, meal=meal))
    other = []
    for d in (2, 3):
        for i in range(3):
            pid = f"other_{d}_{i}"
            places[pid] = place_json(pid, f"Other {d}.{i}", 38.72 + i * 0.001, -9.13, ["shopping_mall"],
                                     hours=weekly(EVERY_DAY, ("09:00", "00:00")))
            other.append(Stop(id=f"o{d}{i}", day_id=f"d{d}", position=i, kind="sight", name=f"Other {d}.{i}",
                              place_id=pid, lat=38.72 + i * 0.001, lng=-9.13, duration_min=60))
    days = [Day(id="d1", position=0, stops=stops),
            Day(id="d2", position=1, stops=[s for s in other if s.day_id == "d2"]),
            Day(id="d3", position=2, stops=[s for s in other if s.day_id == "d3"])]
    prefs = TripPreferences(pace="packed")
    trip = Trip(id="bench", title="Bench", dest_name="Lisbon", dest_lat=38.72, dest_lng=-9.14, start_date=START,
                timezone="Europe/Lisbon", currency="EUR", version=1, created_by="u", days=days, member_ids=["u"],
                prefs=prefs)
    trip.renumber()
    return trip, places


def timed(call, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        out.append((time.perf_counter() - start) * 1000)
    return out


def pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    bare = Starlette(routes=[Route("/bare", lambda request: JSONResponse({"ok": True}))])
    with TestClient(bare) as client:
        timed(lambda: client.get("/bare"), 50)
        bare_p50 = statistics.median(timed(lambda: client.get("/bare"), args.runs))
    for label, clean in (("busy day (findings, fixes verified)", False), ("clean day", True)):
        trip, places = build(clean)
        day = trip.days[0]
        # The legs the TripDto shows (here: estimates; Google's when it has them).
        shown = {d.id: list(legs_for(d, {}, trip.prefs).values()) for d in trip.days}

        # Bind this case's values, not the loop variables, into the timed call.
        def review(trip=trip, day=day, shown=shown, places=places):
            return review_day(trip, day, shown[day.id], trip.prefs, places, weather=WEATHER, trip_legs=shown)

        result = review()
        timed(review, 10)   # warm up
        times = timed(review, args.runs)
        p50, p95 = statistics.median(times), pct(times, 95)
        kinds = sorted({f.kind for f in result.findings})
        fixes = sum(len(f.fixes) for f in result.findings)
        verdict = "meets" if p50 < TARGET_P50_MS else "MISSES"
        print(f"review_day, {STOPS} stops, {label}: {len(result.findings)} findings {kinds}, {fixes} fixes")
        print(f"  p50 {p50:.2f} ms   p95 {p95:.2f} ms   ({verdict} the p50 < {TARGET_P50_MS:.0f} ms target; "
              f"{args.runs} runs; {p50 / bare_p50:.1f}x a bare Starlette endpoint's p50 of {bare_p50:.2f} ms "
              f"in the same run)")


if __name__ == "__main__":
    main()
