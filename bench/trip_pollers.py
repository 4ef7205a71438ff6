"""100 pollers: every member's open planner page re-reads the trip with its
ETag (If-None-Match: a 304 while nothing changed), all at once and back to
back, while one member changes a stop every half second; against 100
pollers on the floor (an ETag that a SQLite write every half second changes).

    .venv/bin/python bench/trip_pollers.py [--rounds 3] [--seconds 4]

Target: the pollers' p99 within 3x the floor's."""

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
from _loadgen import (Conn, alternate, body_of, expect, floor, footer, header, parser, request, spread, stats,
                      verdict, wayline)

POLLERS = 100
WRITE_EVERY_S = 0.5
TARGET = 3.0


async def poll(port: int, path: str, cookies: list[str | None], writes: list[bytes], seconds: float) -> dict:
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds

    async def poller(cookie: str | None) -> None:
        etag = None
        async with Conn(port) as conn:
            while time.perf_counter() < deadline:
                headers = {"If-None-Match": etag} if etag else {}
                t0 = time.perf_counter()
                reply = expect(await conn.send(request("GET", path, port, cookie=cookie, headers=headers)), 200, 304)
                latencies.append(time.perf_counter() - t0)
                etag = reply.headers.get("etag", etag)

    async def writer() -> None:
        async with Conn(port) as conn:
            i = 0
            while time.perf_counter() < deadline:
                expect(await conn.send(writes[i % len(writes)]), 200)
                i += 1
                await asyncio.sleep(WRITE_EVERY_S)

    t0 = time.perf_counter()
    await asyncio.gather(writer(), *(poller(c) for c in cookies))
    return stats(latencies, time.perf_counter() - t0)


def main() -> None:
    p = parser(__doc__.splitlines()[0], seconds=4.0)
    args = p.parse_args()
    header(f"{POLLERS} pollers, a change every {WRITE_EVERY_S} s, 5 x 8", args)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        with Seed(migrate(tmp, args.root)) as seed:
            users = seed.users(POLLERS)
            [trip] = seed.trips(users[0][0], 1, 5, 8, members=[u for u, _ in users[1:]])
        with wayline(tmp, args.root) as app:
            path = f"/api/trips/{trip.id}"
            writes = [request("POST", f"{path}/ops/update_stop", app.port, cookie=users[0][1],
                              body=json.dumps({"stopId": trip.stops[2][3], "durationMin": m}).encode())
                      for m in (45, 50)]
            cookies = [c for _, c in users]
            asyncio.run(poll(app.port, path, cookies, writes, 0.5))
            payload = asyncio.run(body_of(app.port, request("GET", path, app.port, cookie=cookies[0])))
            with floor(tmp, payload) as bare:
                bare_writes = [request("POST", "/write", bare.port, body=b"{}")]
                runs = alternate(args.rounds, {
                    "floor": lambda: poll(bare.port, path, [None] * POLLERS, bare_writes, args.seconds),
                    "app": lambda: poll(app.port, path, cookies, writes, args.seconds)})
    for name, rows in runs.items():
        print(f"  {name:<5}: polls/s {spread([r['rps'] for r in rows], '{:.0f}')}  "
              f"p50 {spread([r['p50_ms'] for r in rows])} ms"
              f"  p99 {spread([r['p99_ms'] for r in rows])} ms  max {spread([r['max_ms'] for r in rows], '{:.0f}')} ms")
    ratios = [a["p99_ms"] / f["p99_ms"] for a, f in zip(runs["app"], runs["floor"])]
    print(f"  ratio (p99 / floor p99): {spread(ratios)}")
    print(verdict("ratio (median)", statistics.median(ratios), TARGET, at_most=True))
    footer()



if __name__ == "__main__":
    main()
