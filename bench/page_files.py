"""The page's files (its shell: index.html, the modules, the styles, Leaflet,
the icons; what a phone downloads the first time): bytes on the wire, the
server's CPU per file, and throughput against the floor answering a file of
the median size.

    .venv/bin/python bench/page_files.py [--rounds 3] [--seconds 2] [--connections 6] [--root DIR]

Six keep-alive connections (a browser's per-host limit), each asking for every
file in turn as Chromium does (`Accept-Encoding: gzip, deflate, br, zstd`).
The floor answers its bytes from memory, uncompressed, so the ratio shows what
finding, checking and (for the app before app/web/static_assets.py)
compressing a file costs. Target: >= 0.6 of the floor, as for a cached trip
read (bench/trip_read.py): both pass the same middleware."""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _loadgen import (Conn, alternate, expect, floor, footer, header, load, parser, request, spread, verdict,
                      wayline)

from app.web.application import PUBLIC_DIR
from app.web.service_worker import ShellWorker

BROWSER = {"Accept-Encoding": "gzip, deflate, br, zstd"}
TARGET = 0.6


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100


async def sizes(port: int, urls: list[str]) -> dict[str, int]:
    out = {"plain": 0, "as a browser asks": 0}
    async with Conn(port) as conn:
        for url in urls:
            out["plain"] += len(expect(await conn.send(request("GET", url, port)), 200).body)
            reply = expect(await conn.send(request("GET", url, port, headers=BROWSER)), 200)
            out["as a browser asks"] += len(reply.body)
    return out


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--connections", type=int, default=6)
    args = p.parse_args()
    header("the page's files", args)
    urls = [url for url, _ in ShellWorker(PUBLIC_DIR).files()]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        with wayline(tmp, args.root) as app:
            got = asyncio.run(sizes(app.port, urls))
            median_file = statistics.median(len(path.read_bytes()) for _, path in ShellWorker(PUBLIC_DIR).files())
            with floor(tmp, b"x" * int(median_file)) as bare:
                # Each connection starts at another file, as a browser's six do.
                step = max(1, len(urls) // args.connections)
                app_reqs = [[request("GET", u, app.port, headers=BROWSER) for u in urls[i * step:] + urls[:i * step]]
                            for i in range(args.connections)]
                bare_reqs = [[request("GET", u, bare.port, headers=BROWSER) for u in urls]] * args.connections
                asyncio.run(load(app.port, app_reqs, seconds=0.5))   # every file read and compressed once
                asyncio.run(load(bare.port, bare_reqs, seconds=0.5))

                def timed_app() -> dict:
                    before = cpu_seconds(app.proc.pid)
                    result = asyncio.run(load(app.port, app_reqs, seconds=args.seconds))
                    result["cpu_ms"] = (cpu_seconds(app.proc.pid) - before) * 1000 / result["requests"]
                    return result

                runs = alternate(args.rounds, {"floor": lambda: load(bare.port, bare_reqs, seconds=args.seconds),
                                               "files": timed_app})
    print(f"  {len(urls)} files: {got['plain']:,} bytes plain, {got['as a browser asks']:,} as a browser asks "
          f"({got['as a browser asks'] / got['plain']:.0%})")
    print(f"  floor payload {int(median_file):,} bytes (the median file), {args.connections} keep-alive connections")
    for name, rows in runs.items():
        print(f"  {name:<6}: req/s {spread([r['rps'] for r in rows], '{:.0f}')}  "
              f"p50 {spread([r['p50_ms'] for r in rows])} ms")
    print(f"  server CPU per file: {spread([r['cpu_ms'] for r in runs['files']])} ms")
    ratios = [a["rps"] / f["rps"] for a, f in zip(runs["files"], runs["floor"])]
    print(f"  ratio (req/s): {spread(ratios)}")
    print(verdict("ratio (median)", statistics.median(ratios), TARGET, at_most=False))
    footer()


if __name__ == "__main__":
    main()
