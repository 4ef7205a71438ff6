"""Bytes on the wire for one trip: the whole trip read plain, gzip and
brotli (as a phone's browser asks), and what a write (`update_stop`)
answers, small by default and whole with ?full=1.

    .venv/bin/python bench/trip_bytes.py [--shape 30x15] [--root DIR]

Targets (issue 26): the trip compressed at most a quarter of its size; a
write to a 30 x 15 trip answers at most 32 KB. Sizes are the bodies as sent
(headers excluded); they do not depend on the machine's load."""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _fixtures import Seed, migrate
from _loadgen import Conn, expect, footer, header, parser, request, shape, verdict, wayline

ANSWER_TARGET = 32 * 1024
PACKED_TARGET = 0.25


async def sizes(port: int, cookie: str, trip_id: str, stop_id: str) -> dict[str, int]:
    path = f"/api/trips/{trip_id}"
    out = {}
    async with Conn(port) as conn:
        for name, accept in (("plain", None), ("gzip", "gzip"), ("br", "gzip, deflate, br, zstd")):
            headers = {"Accept-Encoding": accept} if accept else None
            reply = expect(await conn.send(request("GET", path, port, cookie=cookie, headers=headers)), 200)
            out[f"read {name}"] = len(reply.body)
            out[f"read {name} coding"] = reply.headers.get("content-encoding", "identity")
        for name, query, minutes in (("small", "", 50), ("full", "?full=1", 55)):
            body = json.dumps({"stopId": stop_id, "durationMin": minutes}).encode()
            reply = expect(await conn.send(request("POST", f"{path}/ops/update_stop{query}", port, cookie=cookie,
                                                   body=body)), 200)
            out[f"write answer {name}"] = len(reply.body)
    return out


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--shape", type=shape, default=(30, 15))
    args = p.parse_args()
    days, per_day = args.shape
    header(f"bytes of a {days} x {per_day} trip", args)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        with Seed(migrate(tmp, args.root)) as seed:
            [(owner, cookie)] = seed.users(1)
            [trip] = seed.trips(owner, 1, days, per_day)
        with wayline(tmp, args.root) as app:
            got = asyncio.run(sizes(app.port, cookie, trip.id, trip.stops[days // 2][per_day // 2]))
    for name, value in got.items():
        print(f"  {name:<22}: {value:,}" if isinstance(value, int) else f"  {name:<22}: {value}")
    plain = got["read plain"]
    for name in ("gzip", "br"):
        print(verdict(f"read {name} / plain", got[f"read {name}"] / plain, PACKED_TARGET, at_most=True))
    print(verdict("write answer, KB", got["write answer small"] / 1024, ANSWER_TARGET / 1024, at_most=True))
    footer()


if __name__ == "__main__":
    main()
