"""A herd after a vote: one member votes on a stop, then all 100 members
re-read the trip at once (each on its own keep-alive connection), against a
floor herd (one SQLite write, then 100 reads of the same bytes at once).

    .venv/bin/python bench/trip_herd.py [--rounds 3] [--herds 10] [--shape 5x8]

Each herd is timed from the first request sent to the last reply read.
Target: the herd's median time within 1.5x the floor herd's."""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _fixtures import Seed, migrate
from _loadgen import (Conn, alternate, body_of, shape, expect, floor, footer, header, parser, pct, request, spread,
                      verdict, wayline)

MEMBERS = 100
TARGET = 1.5


async def herds(port: int, votes: list[bytes], reads: list[bytes], n: int) -> dict:
    conns = [await Conn(port).__aenter__() for _ in reads]
    voter = await Conn(port).__aenter__()
    times, latencies = [], []
    try:
        for i in range(n):
            expect(await voter.send(votes[i % len(votes)]), 200)
            t0 = time.perf_counter()

            async def one(conn: Conn, raw: bytes, t0: float = t0) -> None:
                expect(await conn.send(raw), 200)
                latencies.append(time.perf_counter() - t0)

            await asyncio.gather(*(one(c, r) for c, r in zip(conns, reads)))
            times.append(time.perf_counter() - t0)
    finally:
        for c in [*conns, voter]:
            await c.__aexit__()
    return {"herd_ms": statistics.median(times) * 1000, "p99_ms": pct([v * 1000 for v in latencies], 99)}


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--herds", type=int, default=10, help="herds per round")
    p.add_argument("--shape", type=shape, default=(5, 8), help="days x stops per day (default 5x8)")
    args = p.parse_args()
    days, per_day = args.shape
    header(f"{MEMBERS} members re-reading after a vote, {days} x {per_day}", args)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        with Seed(migrate(tmp, args.root)) as seed:
            users = seed.users(MEMBERS)
            [trip] = seed.trips(users[0][0], 1, days, per_day, members=[u for u, _ in users[1:]])
        with wayline(tmp, args.root) as app:
            path = f"/api/trips/{trip.id}"
            votes = [request("PUT", f"{path}/stops/{trip.stops[0][0]}/vote", app.port, cookie=users[1][1],
                             body=json.dumps({"value": v}).encode()) for v in (1, -1)]
            reads = [request("GET", path, app.port, cookie=cookie) for _, cookie in users]
            asyncio.run(herds(app.port, votes, reads, 1))   # every member has read once
            payload = asyncio.run(body_of(app.port, reads[0]))
            with floor(tmp, payload, b'{"data":{"up":1,"down":0,"mine":1}}') as bare:
                bare_votes = [request("PUT", "/vote", bare.port, body=b'{"value":1}')]
                bare_reads = [request("GET", path, bare.port)] * MEMBERS
                runs = alternate(args.rounds, {
                    "floor": lambda: herds(bare.port, bare_votes, bare_reads, args.herds),
                    "app": lambda: herds(app.port, votes, reads, args.herds)})
    for name, rows in runs.items():
        print(f"  {name:<5}: herd {spread([r['herd_ms'] for r in rows])} ms, "
              f"read p99 {spread([r['p99_ms'] for r in rows])} ms")
    ratios = [a["herd_ms"] / f["herd_ms"] for a, f in zip(runs["app"], runs["floor"])]
    print(f"  ratio (herd / floor herd): {spread(ratios)}")
    print(verdict("ratio (median)", statistics.median(ratios), TARGET, at_most=True))
    footer()



if __name__ == "__main__":
    main()
