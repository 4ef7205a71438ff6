"""Cold start and memory: from spawning the server to its first answer (GET
/healthz), `python -m app` against the floor under the same uvicorn; the
server's resident memory when idle after start, and after its trip reads.

    .venv/bin/python bench/startup.py [--rounds 5]

Targets: cold start <= 3x the floor's; RSS idle < 60 MiB."""

from __future__ import annotations

import compileall
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _fixtures import Seed, migrate
from _loadgen import alternate, floor, footer, header, parser, spread, verdict, wayline

TARGET = 3.0
RSS_TARGET_MIB = 60


def first_answer(start) -> dict:
    """Spawn a server (`start()`), time until GET /healthz (or /) answers."""
    t0 = time.perf_counter()
    with start() as server:
        url = f"http://127.0.0.1:{server.port}"
        with httpx.Client(base_url=url) as c:
            while True:
                try:
                    if c.get("/healthz").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.005)
        ready = time.perf_counter() - t0
        time.sleep(1.0)
        return {"start_s": ready, "rss_mib": server.rss_mib()}


def main() -> None:
    args = parser(__doc__.splitlines()[0], rounds=5).parse_args()
    header("cold start and resident memory", args)
    # As the image does (Dockerfile): the app's bytecode is compiled before it
    # starts, so a start does not compile every module again when
    # PYTHONDONTWRITEBYTECODE is set (it is in the image and on this machine).
    compileall.compile_dir(str(args.root / "app"), quiet=1)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        with Seed(migrate(tmp, args.root)) as seed:
            [(owner, cookie)] = seed.users(1)
            trips = seed.trips(owner, 20, 5, 8)
        runs = alternate(args.rounds, {"floor": lambda: first_answer(lambda: floor(tmp, b"{}")),
                                       "app": lambda: first_answer(lambda: wayline(tmp, args.root))})
        with wayline(tmp, args.root) as app:
            with httpx.Client(base_url=f"http://127.0.0.1:{app.port}", headers={"Cookie": cookie}) as c:
                for t in trips:
                    c.get(f"/api/trips/{t.id}").raise_for_status()
            time.sleep(0.5)
            busy = app.rss_mib()
    for name, rows in runs.items():
        print(f"  {name:<5}: first answer {spread([r['start_s'] for r in rows], '{:.2f}')} s, "
              f"RSS idle {spread([r['rss_mib'] for r in rows], '{:.1f}')} MiB")
    print(f"  app RSS after reading 20 trips (5 x 8): {busy:.1f} MiB")
    ratio = statistics.median(a["start_s"] / f["start_s"] for a, f in zip(runs["app"], runs["floor"]))
    print(verdict("cold start / floor's (median)", ratio, TARGET, at_most=True))
    print(verdict("RSS idle, MiB (median)", statistics.median(r["rss_mib"] for r in runs["app"]), RSS_TARGET_MIB,
                  at_most=True))
    footer()


if __name__ == "__main__":
    main()
