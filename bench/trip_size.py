"""Size: what an op costs as the trip grows from 8 to 1,200 stops. For each
trip, `update_stop` from 16 clients at once (ops/s) and from one client
(p50), and the read by another member right after an op (p50).

    .venv/bin/python bench/trip_size.py [--rounds 3] [--seconds 2] [--shapes 1x8,5x8,30x15,30x40]

All trips live in one server; rounds alternate the order of the shapes.
Target: a 30 x 15 trip's ops/s within 1.5x of a 5 x 8 one's."""

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
from _loadgen import Conn, expect, footer, header, load, parser, request, shapes, spread, verdict, wayline

CLIENTS = 16
TARGET = 1.5


async def one_client(port: int, ops: list[bytes], read: bytes, n: int) -> dict:
    op_ms, read_ms = [], []
    async with Conn(port) as writer, Conn(port) as reader:
        for i in range(n):
            t0 = time.perf_counter()
            expect(await writer.send(ops[i % len(ops)]), 200)
            t1 = time.perf_counter()
            expect(await reader.send(read), 200)
            op_ms.append((t1 - t0) * 1000)
            read_ms.append((time.perf_counter() - t1) * 1000)
    return {"op_ms": statistics.median(op_ms), "read_ms": statistics.median(read_ms)}


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--shapes", type=shapes, default=[(1, 8), (5, 8), (30, 15), (30, 40)])
    p.add_argument("--ops", type=int, default=30, help="sequential ops per shape and round")
    args = p.parse_args()
    header("op cost by trip size", args)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        with Seed(migrate(tmp, args.root)) as seed:
            users = seed.users(2)
            trips = {shape: seed.trips(users[0][0], 1, *shape, members=[users[1][0]])[0] for shape in args.shapes}
        results: dict[tuple, list[dict]] = {shape: [] for shape in args.shapes}
        with wayline(tmp, args.root) as app:
            def requests_for(shape):
                t = trips[shape]
                stops = [s for day in t.stops for s in day]
                ops = [[request("POST", f"/api/trips/{t.id}/ops/update_stop", app.port, cookie=users[0][1],
                                body=json.dumps({"stopId": stops[(i * 7) % len(stops)], "durationMin": m}).encode())
                        for m in (45, 50)] for i in range(CLIENTS)]
                return ops, request("GET", f"/api/trips/{t.id}", app.port, cookie=users[1][1])

            for shape in args.shapes:
                asyncio.run(one_client(app.port, requests_for(shape)[0][0], requests_for(shape)[1], 2))
            for r in range(args.rounds):
                for shape in (args.shapes if r % 2 == 0 else args.shapes[::-1]):
                    ops, read = requests_for(shape)
                    many = asyncio.run(load(app.port, ops, seconds=args.seconds))
                    one = asyncio.run(one_client(app.port, ops[0], read, args.ops))
                    results[shape].append({"rps": many["rps"], **one})
    for shape, rows in results.items():
        print(f"  {shape[0]:>2} x {shape[1]:<2} ({shape[0] * shape[1]:>4} stops): {CLIENTS} clients "
              f"{spread([x['rps'] for x in rows], '{:.0f}')} ops/s; one client: op p50 "
              f"{spread([x['op_ms'] for x in rows])} ms, read after it p50 {spread([x['read_ms'] for x in rows])} ms")
    if (5, 8) in results and (30, 15) in results:
        ratio = (statistics.median(x["rps"] for x in results[(5, 8)])
                 / statistics.median(x["rps"] for x in results[(30, 15)]))
        print(verdict("ops/s of 5 x 8 / of 30 x 15", ratio, TARGET, at_most=True))
    footer()


if __name__ == "__main__":
    main()
