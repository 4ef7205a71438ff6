"""Writes: `update_stop` from 16 clients on one trip and on 16 trips, against
the floor doing one SQLite write per request (and answering the same bytes).

    .venv/bin/python bench/trip_write.py [--rounds 3] [--seconds 2] [--shape 5x8]

Each client changes its own stop's duration back and forth, so every op
really changes the trip (new times) and answers as the planner page gets it
(what changed since the trip it shows: one day; the whole trip before issue
26). Target: ops/s >= 0.5 of the floor in both cases."""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _fixtures import Seed, migrate
from _loadgen import (alternate, body_of, shape, floor, footer, header, load, parser, print_runs, request, spread,
                      update_stop_requests, verdict, wayline)

CLIENTS = 16
TARGET = 0.5


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--shape", type=shape, default=(5, 8), help="days x stops per day (default 5x8)")
    args = p.parse_args()
    days, per_day = args.shape
    header(f"update_stop, {CLIENTS} clients, {days} x {per_day} trips", args)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        with Seed(migrate(tmp, args.root)) as seed:
            [(owner, cookie)] = seed.users(1)
            trips = seed.trips(owner, CLIENTS, days, per_day)
        one = trips[0]
        stops = [s for day in one.stops for s in day]
        with wayline(tmp, args.root) as app:
            one_trip = [update_stop_requests(app.port, cookie, one.id, stops[i % len(stops)]) for i in range(CLIENTS)]
            many = [update_stop_requests(app.port, cookie, t.id, t.stops[0][0]) for t in trips]
            for t in trips:  # every trip read once, as an open page would
                asyncio.run(body_of(app.port, request("GET", f"/api/trips/{t.id}", app.port, cookie=cookie)))
            echo = asyncio.run(body_of(app.port, one_trip[0][0]))   # an op on a trip a page shows
            with floor(tmp, echo, echo) as bare:
                bare_reqs = [[request("POST", "/write", bare.port, body=b'{"n":1}')] for _ in range(CLIENTS)]
                runs = alternate(args.rounds, {
                    "floor": lambda: load(bare.port, bare_reqs, seconds=args.seconds),
                    "one trip": lambda: load(app.port, one_trip, seconds=args.seconds),
                    "16 trips": lambda: load(app.port, many, seconds=args.seconds),
                })
    print(f"  echo: {len(echo)} bytes")
    print_runs(runs)
    for name in ("one trip", "16 trips"):
        ratios = [a["rps"] / f["rps"] for a, f in zip(runs[name], runs["floor"])]
        print(f"  ratio {name} / floor: {spread(ratios)}")
        print(verdict(f"{name} ratio (median)", statistics.median(ratios), TARGET, at_most=False))
    footer()


if __name__ == "__main__":
    main()
