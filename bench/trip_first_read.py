"""The first read of trips that are not in memory: a fresh `python -m app`
(a restart) reads 300 trips of 30 days x 15 stops, one after another on one
keep-alive connection, each read timed; then the last one is read again from
memory, as the same-size read the first reads are compared with.

    .venv/bin/python bench/trip_first_read.py [--rounds 3] [--trips 300] [--shape 30x15] [--compare DIR]

Every trip has its own places (no two trips share a route), on the keyless
default (no Google key; OSRM unreachable), so every leg is estimated. The
first process to read the trips is "first ever" (nothing stored about their
legs yet); each round after it is a restart on the same file. `--compare DIR`
alternates the rounds with another checkout (each on its own copy of the
seed), for before/after figures from the same machine state.

Targets (issue 26): 300 trips faster than 8.9 s (TREK's figure on this
machine); a first read at most 15x a read from memory (p50)."""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _fixtures import Seed, migrate
from _loadgen import Conn, expect, footer, header, parser, request, shape, spread, verdict, wayline

TOTAL_TARGET_S = 8.9
RATIO_TARGET = 15.0
WARM_READS = 30


async def read_all(port: int, cookie: str, trip_ids: list[str]) -> dict:
    """Each trip once (timed), then the last one WARM_READS times more."""
    cold, warm, size = [], [], 0
    async with Conn(port) as conn:
        t_all = time.perf_counter()
        for trip_id in trip_ids:
            raw = request("GET", f"/api/trips/{trip_id}", port, cookie=cookie)
            t0 = time.perf_counter()
            reply = expect(await conn.send(raw), 200)
            cold.append(time.perf_counter() - t0)
        total = time.perf_counter() - t_all
        for _ in range(WARM_READS):
            t0 = time.perf_counter()
            reply = expect(await conn.send(raw), 200)
            warm.append(time.perf_counter() - t0)
        size = len(reply.body)
    return {"total_s": total, "cold_ms": statistics.median(cold) * 1000,
            "warm_ms": statistics.median(warm) * 1000, "bytes": size}


class Side:
    """One checkout's seeded database, read by a fresh process per round."""

    def __init__(self, name: str, root: Path, tmp: Path, args):
        self.name, self.root, self.tmp = name, root, tmp
        days, per_day = args.shape
        with Seed(migrate(tmp, root)) as seed:
            [(owner, self.cookie)] = seed.users(1)
            self.trips = [t.id for t in seed.trips(owner, args.trips, days, per_day, distinct=True)]
        self.runs: list[dict] = []

    def round(self) -> dict:
        with wayline(self.tmp, self.root) as app:
            run = asyncio.run(read_all(app.port, self.cookie, self.trips))
        self.runs.append(run)
        return run


def report(side: Side, args) -> None:
    first, rest = side.runs[0], side.runs[1:] or side.runs
    ratios = [r["cold_ms"] / r["warm_ms"] for r in rest]
    print(f"  {side.name}: {args.trips} trips of {args.shape[0]} x {args.shape[1]} ({first['bytes']} bytes each)")
    print(f"    first ever : {first['total_s']:.2f} s, first read p50 {first['cold_ms']:.2f} ms")
    print(f"    restarted  : {spread([r['total_s'] for r in rest])} s, first read p50 "
          f"{spread([r['cold_ms'] for r in rest])} ms, from memory p50 {spread([r['warm_ms'] for r in rest])} ms")
    print(f"    ratio (first read / from memory, p50): {spread(ratios)}")
    print("  " + verdict(f"{side.name}: {args.trips} trips after a restart, s (median)",
                         statistics.median(r["total_s"] for r in rest), TOTAL_TARGET_S, at_most=True))
    print("  " + verdict(f"{side.name}: first read / from memory (median)", statistics.median(ratios),
                         RATIO_TARGET, at_most=True))


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--trips", type=int, default=300)
    p.add_argument("--shape", type=shape, default=(30, 15))
    p.add_argument("--compare", type=Path, default=None, help="another checkout, alternated with --root")
    args = p.parse_args()
    header(f"first reads after a restart, {args.trips} trips", args)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        wanted = [("app", args.root)] + ([(f"compare ({args.compare})", args.compare)] if args.compare else [])
        sides = []
        for i, (name, root) in enumerate(wanted):
            (tmp / str(i)).mkdir()
            sides.append(Side(name, root, tmp / str(i), args))
        for r in range(args.rounds + 1):   # round 0 is the first ever
            for side in (sides if r % 2 == 0 else sides[::-1]):
                side.round()
        for side in sides:
            report(side, args)
    footer()


if __name__ == "__main__":
    main()
