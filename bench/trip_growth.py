"""Growth: the time to delete a day (the delete_day op) and to delete a trip,
with 10, 100, 1,000 and 10,000 trips of 5 x 8 stops in the database.

    .venv/bin/python bench/trip_growth.py [--rounds 3] [--deletes 10] [--sizes 10,100,1000,10000]

Each deletion is timed over HTTP on a trip that was read once (it is in
memory, as an open page's trip is). The sizes run in growing order (the
database only grows), the server restarted for each. Target: flat (10,000
trips within 1.5x of 10)."""

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
from _loadgen import Conn, expect, footer, header, parser, request, spread, verdict, wayline

TARGET = 1.5


async def deletions(port: int, cookie: str, trips: list) -> dict:
    day_ms, trip_ms = [], []
    async with Conn(port) as conn:
        for t in trips:
            expect(await conn.send(request("GET", f"/api/trips/{t.id}", port, cookie=cookie)), 200)
            body = json.dumps({"dayId": t.days[-1]}).encode()
            t0 = time.perf_counter()
            expect(await conn.send(request("POST", f"/api/trips/{t.id}/ops/delete_day", port, cookie=cookie,
                                           body=body)), 200)
            day_ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            expect(await conn.send(request("DELETE", f"/api/trips/{t.id}", port, cookie=cookie)), 200)
            trip_ms.append((time.perf_counter() - t0) * 1000)
    return {"delete_day_ms": statistics.median(day_ms), "delete_trip_ms": statistics.median(trip_ms)}


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--deletes", type=int, default=10, help="deletions of each kind per size and round")
    p.add_argument("--sizes", type=lambda s: [int(n) for n in s.split(",")], default=[10, 100, 1000, 10000])
    args = p.parse_args()
    header("delete_day and trip deletion as the database grows", args)
    results: dict[int, list[dict]] = {n: [] for n in args.sizes}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        db = migrate(tmp, args.root)
        with Seed(db) as seed:
            [(owner, cookie)] = seed.users(1)
        have = 0
        for size in sorted(args.sizes):
            with Seed(db) as seed:   # grow to `size` trips, plus the ones the rounds delete
                spare = seed.trips(owner, args.deletes * args.rounds, 5, 8)
                seed.trips(owner, max(0, size - have), 5, 8)
            have = size
            with wayline(tmp, args.root) as app:
                for r in range(args.rounds):
                    batch = spare[r * args.deletes:(r + 1) * args.deletes]
                    results[size].append(asyncio.run(deletions(app.port, cookie, batch)))
            print(f"  {size:>6} trips: delete_day {spread([x['delete_day_ms'] for x in results[size]])} ms, "
                  f"delete trip {spread([x['delete_trip_ms'] for x in results[size]])} ms", flush=True)
    small, large = min(args.sizes), max(args.sizes)
    for kind in ("delete_day_ms", "delete_trip_ms"):
        ratio = statistics.median(x[kind] for x in results[large]) / statistics.median(x[kind] for x in results[small])
        print(verdict(f"{kind[:-3]} at {large} / at {small} trips", ratio, TARGET, at_most=True))
    footer()


if __name__ == "__main__":
    main()
