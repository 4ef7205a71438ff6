"""The first read after an op: one member changes a stop, then 8 other
members read the trip at once (each read timed), against the floor taking
one SQLite write and then the same 8 reads of the same bytes.

    .venv/bin/python bench/trip_cold_read.py [--rounds 3] [--ops 20] [--shapes 5x8,30x15]

Targets: p50 of the reads <= 4x the floor's p50 for 5 x 8, <= 8x for 30 x 15."""

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
from _loadgen import (Conn, alternate, body_of, shapes, expect, floor, footer, header, parser, pct, request, spread,
                      verdict, wayline)

READERS = 8
TARGETS = {(5, 8): 4.0, (30, 15): 8.0}


async def after_ops(port: int, writes: list[bytes], read: list[bytes], n: int) -> dict:
    """n times: one write (untimed), then every reader's GET at once (timed)."""
    latencies: list[float] = []
    async with Conn(port) as writer:
        readers = [await Conn(port).__aenter__() for _ in read]
        try:
            for i in range(n):
                expect(await writer.send(writes[i % len(writes)]), 200)

                async def one(conn: Conn, raw: bytes) -> None:
                    t0 = time.perf_counter()
                    expect(await conn.send(raw), 200)
                    latencies.append(time.perf_counter() - t0)

                await asyncio.gather(*(one(c, r) for c, r in zip(readers, read)))
        finally:
            for c in readers:
                await c.__aexit__()
    ms = [v * 1000 for v in latencies]
    return {"p50_ms": statistics.median(ms), "p99_ms": pct(ms, 99)}


def measure(args, days: int, per_day: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        with Seed(migrate(tmp, args.root)) as seed:
            users = seed.users(READERS + 1)
            [trip] = seed.trips(users[0][0], 1, days, per_day, members=[u for u, _ in users[1:]])
        with wayline(tmp, args.root) as app:
            path = f"/api/trips/{trip.id}"
            target = trip.stops[days // 2][per_day // 2]
            writes = [request("POST", f"{path}/ops/update_stop", app.port, cookie=users[0][1],
                              body=json.dumps({"stopId": target, "durationMin": m}).encode())
                      for m in (45, 50)]
            reads = [request("GET", path, app.port, cookie=cookie) for _, cookie in users[1:]]
            asyncio.run(after_ops(app.port, writes, reads, 2))   # every member has read once
            payload = asyncio.run(body_of(app.port, reads[0]))
            with floor(tmp, payload) as bare:
                bare_writes = [request("POST", "/write", bare.port, body=b"{}")]
                bare_reads = [request("GET", path, bare.port)] * READERS
                runs = alternate(args.rounds, {
                    "floor": lambda: after_ops(bare.port, bare_writes, bare_reads, args.ops),
                    "app": lambda: after_ops(app.port, writes, reads, args.ops)})
    ratios = [a["p50_ms"] / f["p50_ms"] for a, f in zip(runs["app"], runs["floor"])]
    print(f"  {days} x {per_day} ({len(payload)} bytes): read after an op p50 "
          f"{spread([r['p50_ms'] for r in runs['app']])} ms, p99 {spread([r['p99_ms'] for r in runs['app']])} ms; "
          f"floor p50 {spread([r['p50_ms'] for r in runs['floor']])} ms")
    print(f"  ratio (p50 / floor p50): {spread(ratios)}")
    target = TARGETS.get((days, per_day))
    if target:
        print(verdict(f"{days} x {per_day} ratio (median)", statistics.median(ratios), target, at_most=True))



def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--ops", type=int, default=20, help="ops per round")
    p.add_argument("--shapes", type=shapes, default=[(5, 8), (30, 15)])
    args = p.parse_args()
    header(f"first read after an op, {READERS} members reading", args)
    for days, per_day in args.shapes:
        measure(args, days, per_day)
    footer()


if __name__ == "__main__":
    main()
