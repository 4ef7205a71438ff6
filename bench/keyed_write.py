"""Writes with an Idempotency-Key (the page's kept writes) against the same
writes without one: `update_stop` from 16 clients on 16 trips.

    .venv/bin/python bench/keyed_write.py [--rounds 3] [--seconds 2]

"keyed" sends every op with a fresh key (the key is claimed, then its answer
stored: two small writes more per op); "repeat" sends one key again and
again (the stored answer comes back, nothing is applied). Target: keyed
ops/s >= 0.5 of plain, and a repeat no slower than a plain op."""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _fixtures import Seed, migrate
from _loadgen import (alternate, body_of, footer, header, load, parser, print_runs, request, spread,
                      update_stop_requests, verdict, wayline)

CLIENTS = 16
KEYS_PER_CLIENT = 4000   # more than one client sends in a round at these speeds: every key is new
TARGET = 0.5


def keyed_requests(port: int, cookie: str, trip_id: str, stop_id: str, client: int) -> list[bytes]:
    path = f"/api/trips/{trip_id}/ops/update_stop"
    return [request("POST", path, port, cookie=cookie, headers={"Idempotency-Key": f"bench-{client}-{i}"},
                    body=json.dumps({"stopId": stop_id, "durationMin": 45 + i % 2}).encode())
            for i in range(KEYS_PER_CLIENT)]


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    header(f"update_stop with and without Idempotency-Key, {CLIENTS} clients on {CLIENTS} trips", args)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        with Seed(migrate(tmp, args.root)) as seed:
            [(owner, cookie)] = seed.users(1)
            trips = seed.trips(owner, CLIENTS, 5, 8)
        with wayline(tmp, args.root) as app:
            plain = [update_stop_requests(app.port, cookie, t.id, t.stops[0][0]) for t in trips]
            rounds = iter(range(10_000))
            repeat = [[request("POST", f"/api/trips/{t.id}/ops/update_stop", app.port, cookie=cookie,
                               headers={"Idempotency-Key": f"again-{i}"},
                               body=json.dumps({"stopId": t.stops[0][0], "durationMin": 45}).encode())]
                      for i, t in enumerate(trips)]
            for reqs in repeat:   # the first answer, stored once
                asyncio.run(body_of(app.port, reqs[0]))

            def keyed():
                n = next(rounds)   # fresh keys every round
                return load(app.port, [keyed_requests(app.port, cookie, t.id, t.stops[0][0], n * CLIENTS + c)
                                       for c, t in enumerate(trips)], seconds=args.seconds)

            runs = alternate(args.rounds, {
                "plain": lambda: load(app.port, plain, seconds=args.seconds),
                "keyed": keyed,
                "repeat": lambda: load(app.port, repeat, seconds=args.seconds),
            })
    print_runs(runs)
    keyed_ratio = [k["rps"] / p["rps"] for k, p in zip(runs["keyed"], runs["plain"])]
    repeat_ratio = [r["rps"] / p["rps"] for r, p in zip(runs["repeat"], runs["plain"])]
    print(f"  ratio keyed / plain: {spread(keyed_ratio)}")
    print(f"  ratio repeat / plain: {spread(repeat_ratio)}")
    print(verdict("keyed ratio (median)", statistics.median(keyed_ratio), TARGET, at_most=False))
    print(verdict("repeat ratio (median)", statistics.median(repeat_ratio), 1.0, at_most=False))
    footer()


if __name__ == "__main__":
    main()
