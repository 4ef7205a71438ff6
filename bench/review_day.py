"""Server time for the day review (`app.review.findings.review_day`) of a
12-stop day whose findings need compound fixes (issue 20).

The review is pure (places, weather and legs are passed in), so this times
the function itself, as the review route, the copilot, Optimize's preview and
the trip agent call it once their facts are loaded (the shown legs included:
the TripDto has one for every pair of consecutive stops).

The busy day: 12 stops through Copenhagen on a forecast-wet Monday of a
three-day trip at a normal pace (6 visits), each with a Google place and
weekly hours, drawing what a busy real day draws: a museum on its closed day
(a move to Tuesday with a set time at opening), a dinner too late for its
kitchen (an earlier set time, or before the walk that pushed it), a set time
the stop before cannot reach, a park in the rain, a path that crosses itself
(one finding, the day untangled), and twice the stops the pace holds (six
visits spread over the other days, in one fix). Every fix is searched and
verified: applied to a copy of the trip and re-reviewed on every day it
changes. The clean variant only keeps the pace finding.

    .venv/bin/python bench/review_day.py [--runs 300]

Prints p50 and p95 wall time, p95 CPU time (thread time: what the machine's
other load does not inflate) and the ratio to a bare Starlette endpoint
measured in the same run, rounds alternated. No pytest needed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "spec")]

from starlette.applications import Starlette  # noqa: E402
from starlette.responses import JSONResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from app.legs import legs_for  # noqa: E402
from app.preferences import TripPreferences  # noqa: E402
from app.review.findings import review_day  # noqa: E402
from app.trips.model import Day, Stop, Trip  # noqa: E402
from standins.google_places import EVERY_DAY, TUE_SUN, place_json, weekly  # noqa: E402

TARGET_P95_MS = 50.0
START = "2026-12-14"   # a Monday
WEATHER = {"2026-12-14": {"source": "forecast", "precipitationProbability": 80, "precipitationMm": 6.0,
                          "weatherCode": 63},
           "2026-12-15": {"source": "forecast", "precipitationProbability": 20, "precipitationMm": 0.2,
                          "weatherCode": 3},
           "2026-12-16": {"source": "forecast", "precipitationProbability": 10, "precipitationMm": 0.0,
                          "weatherCode": 1}}
OPEN = weekly(EVERY_DAY, ("08:00", "22:00"))
# (name, lat, lng, types, hours, kind, meal, set time, minutes): the busy day, in its order.
BUSY = [
    ("Hotel d'Angleterre", 55.6806, 12.5857, ["lodging"], None, "stay", None, None, 15),
    ("Rundetaarn", 55.6813, 12.5759, ["tourist_attraction"], OPEN, "sight", None, None, 45),
    ("Davids Samling", 55.6862, 12.5803, ["museum"], weekly(TUE_SUN, ("10:00", "17:00")), "sight", None, None, 60),
    ("Torvehallerne", 55.6838, 12.5697, ["market"], OPEN, "sight", None, None, 45),
    ("Rosenborg Slot", 55.6858, 12.5772, ["museum"], OPEN, "sight", None, None, 60),
    ("Kongens Have", 55.6849, 12.5797, ["park"], None, "sight", None, None, 40),
    ("Schønnemann", 55.6833, 12.5790, ["restaurant", "food"], weekly(EVERY_DAY, ("11:30", "17:00")), "food",
     "lunch", None, 60),
    ("Nationalmuseet", 55.6747, 12.5748, ["museum"], OPEN, "sight", None, "14:00", 90),
    ("Designmuseum", 55.6886, 12.5920, ["museum"], OPEN, "sight", None, None, 60),
    ("Nyhavn walk", 55.6798, 12.5910, ["tourist_attraction"], None, "sight", None, "21:00", 60),
    ("Manfreds", 55.6920, 12.5600, ["restaurant", "food"], weekly(EVERY_DAY, ("17:00", "23:00")), "food",
     "dinner", None, 75),
    ("Mikkeller Bar", 55.6700, 12.5600, ["bar"], weekly(EVERY_DAY, ("12:00", "24:00")), "sight", None, None, 60),
]
OTHERS = {"d2": [("Glyptotek", 55.6727, 12.5727), ("Illum", 55.6795, 12.5787)],
          "d3": [("Statens Museum", 55.6888, 12.5782), ("Botanisk Have", 55.6870, 12.5740)]}


def build(clean: bool) -> tuple[Trip, dict]:
    places, stops = {}, []
    for i, (name, lat, lng, types, hours, kind, meal, set_time, minutes) in enumerate(BUSY):
        if clean:   # every place open all day, no set times, a path that never crosses itself
            lat, lng, hours, meal, set_time = 55.672 + i * 0.0015, 12.560 + i * 0.0025, OPEN, None, None
            types = ["tourist_attraction"] if kind != "food" else types
        pid = f"bench_{i}"
        places[pid] = place_json(pid, name, lat, lng, types, hours=hours)
        stops.append(Stop(id=f"s{i:02d}", day_id="d1", position=i, kind=kind, name=name, place_id=pid, lat=lat,
                          lng=lng, duration_min=minutes, meal=meal, set_time=set_time))
    days = [Day(id="d1", position=0, stops=stops)]
    for d, (day_id, named) in enumerate(OTHERS.items(), start=1):
        other = []
        for k, (name, lat, lng) in enumerate(named):
            pid = f"{day_id}_{k}"
            places[pid] = place_json(pid, name, lat, lng, ["museum"], hours=OPEN)
            other.append(Stop(id=f"{day_id}s{k}", day_id=day_id, position=k, kind="sight", name=name, place_id=pid,
                              lat=lat, lng=lng, duration_min=60))
        days.append(Day(id=day_id, position=d, stops=other))
    trip = Trip(id="bench", title="Bench", dest_name="Copenhagen", dest_lat=55.68, dest_lng=12.57, start_date=START,
                timezone="Europe/Copenhagen", currency="DKK", version=1, created_by="u", days=days, member_ids=["u"],
                prefs=TripPreferences(pace="normal"))
    trip.renumber()
    return trip, places


def timed(call, runs: int) -> tuple[list[float], list[float]]:
    """Wall and CPU (thread) milliseconds of each call."""
    wall, cpu = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.thread_time()
        call()
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.thread_time() - start_cpu) * 1000)
    return wall, cpu


def pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    bare = Starlette(routes=[Route("/bare", lambda request: JSONResponse({"ok": True}))])
    cases = []
    for label, clean in (("busy day (compound fixes, each verified)", False), ("clean day", True)):
        trip, places = build(clean)
        # The legs the TripDto shows, as a routing provider answers them (so a fix's new legs are
        # checked faster and slower too, as on a real trip).
        shown = {d.id: [replace(leg, source="google") for leg in legs_for(d, {}, trip.prefs).values()]
                 for d in trip.days}

        def review(trip=trip, shown=shown, places=places):
            return review_day(trip, trip.days[0], shown["d1"], trip.prefs, places, weather=WEATHER, trip_legs=shown)

        cases.append((label, review, review()))
    with TestClient(bare) as client:
        def bare_call():
            client.get("/bare")

        timed(bare_call, 50)
        for _, review, _ in cases:
            timed(review, 10)   # warm up
        samples = {label: ([], []) for label, _, _ in cases}
        bare_wall: list[float] = []
        for _ in range(args.runs):   # rounds alternated: the machine's load falls on every case alike
            bare_wall += timed(bare_call, 1)[0]
            for label, review, _ in cases:
                wall, cpu = timed(review, 1)
                samples[label][0].extend(wall)
                samples[label][1].extend(cpu)
    bare_p50 = statistics.median(bare_wall)
    for label, _, result in cases:
        wall, cpu = samples[label]
        kinds = sorted({f.kind for f in result.findings})
        fixes = [x for f in result.findings for x in f.fixes]
        compound = sum(len(x.edits) > 1 for x in fixes)
        p50, p95, cpu95 = statistics.median(wall), pct(wall, 95), pct(cpu, 95)
        verdict = "meets" if p95 < TARGET_P95_MS else "MISSES"
        print(f"review_day, {len(BUSY)} stops, {label}: {len(result.findings)} findings {kinds}, "
              f"{len(fixes)} fixes ({compound} compound)")
        print(f"  p50 {p50:.2f} ms   p95 {p95:.2f} ms   CPU p95 {cpu95:.2f} ms   ({verdict} the p95 < "
              f"{TARGET_P95_MS:.0f} ms target; {args.runs} runs; p50 {p50 / bare_p50:.1f}x a bare Starlette "
              f"endpoint's p50 of {bare_p50:.2f} ms in the same run)")


if __name__ == "__main__":
    main()
