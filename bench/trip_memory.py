"""Memory: how many 30 x 15 trips the default trip cache holds, and what one
costs in memory against its TripDto.

    .venv/bin/python bench/trip_memory.py [--trips 400] [--shape 30x15] [--sample 20]

In process (no server): the app's core (`app.lifecycle.start`, the keyless
default) on a seeded file; every trip is read once by its owner, as a reader
that does not accept compression (the role's joined bytes are kept) and, on
a second core, as one that accepts brotli (only the compressed bytes are
kept). Prints the trips the cache holds at the end (`WAYLINE_TRIP_CACHE_MB`,
64 MiB by default), what the cache accounts per trip, and what tracemalloc
measures per trip over the first `--sample` trips (the figure
`app.trips.dto.BYTES_PER_BODY_BYTE` comes from) and, where trips can be
kept as bytes only (issue 26's fourth round), over the next `--sample`
read and then shed (`SLIM_BYTES_PER_VIEW`). Runs
against an older tree too (`PYTHONPATH` / run its copy of this file).

Target (issue 26): the default cache holds a few hundred 30 x 15 trips."""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import tempfile
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _fixtures import Seed, migrate
from _loadgen import ROOT, loadavg, shape, wayline_env

TARGET = 200   # "a few hundred"


async def fill(tmp: Path, owner: str, trip_ids: list[str], sample: int, coding: str | None) -> dict:
    from app import lifecycle
    from app.db import Database
    from app.settings import Settings
    from app.trips.dto import member_pieces, member_view
    from app.web import compression

    settings = Settings.from_env(dotenv=None)
    db = await Database.open(str(tmp / "bench.db"))
    core = await lifecycle.start(settings, db, "bench-secret-" * 3, {})
    cache = core.trip_cache

    async def read(trip_id: str) -> int:
        view, role = await member_view(cache, trip_id, owner)
        if coding is None:
            return len(cache.bytes_for(view, owner, role))
        # As GET /api/trips/:id does for a reader that accepts `coding`.
        packed, made = compression.once(view.derived, f"role:{role}",
                                        lambda: b"".join((b'{"data":', *member_pieces(view, owner, role), b"}")),
                                        coding)
        if made:
            cache.account(view)
        return len(packed)

    await read(trip_ids[0])   # imports and first-use work outside the measurement
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for trip_id in trip_ids[1:sample + 1]:
        await read(trip_id)
    gc.collect()
    measured = (tracemalloc.get_traced_memory()[0] - before) / sample
    tracemalloc.stop()
    states = cache.trips
    slim = slim_counted = None
    if hasattr(states, "let_go_aggregate"):   # what the next sample holds once kept as bytes only
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for trip_id in trip_ids[sample + 1:2 * sample + 1]:
            await read(trip_id)
        for trip_id in trip_ids[sample + 1:2 * sample + 1]:
            states.let_go_aggregate(trip_id)
        for _ in range(3):   # the last build's finished future lets go of its view
            await asyncio.sleep(0)
        gc.collect()
        slim = (tracemalloc.get_traced_memory()[0] - before) / sample
        tracemalloc.stop()
        sheds = [s for t in trip_ids[sample + 1:2 * sample + 1] if (s := states.shed(t)) is not None]
        slim_counted = sum(s.size for s in sheds) / max(1, len(sheds))
        start = 2 * sample + 1
    else:
        start = sample + 1
    for trip_id in trip_ids[start:]:
        await read(trip_id)
    view, _ = await member_view(cache, trip_ids[-1], owner)
    held = states.held() if hasattr(states, "held") else len(states)
    total = states.bytes + getattr(states, "shed_bytes", 0)
    out = {"held": held, "hot": len(states), "accounted": total / held, "measured": measured, "slim": slim,
           "slim_counted": slim_counted,
           "body": view.length, "budget": states.budget_bytes}
    await lifecycle.stop(core)
    await db.close()
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trips", type=int, default=400)
    p.add_argument("--shape", type=shape, default=(30, 15))
    p.add_argument("--sample", type=int, default=20)
    args = p.parse_args()
    days, per_day = args.shape
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        with Seed(migrate(tmp, ROOT)) as seed:
            [(owner, _)] = seed.users(1)
            trip_ids = [t.id for t in seed.trips(owner, args.trips, days, per_day, distinct=True)]
        os.environ.update(wayline_env(tmp))
        sys.path.insert(0, str(ROOT))
        print(f"{args.trips} trips of {days} x {per_day}, read once each, in process ({loadavg()})")
        held = []
        for coding in (None, "br"):
            r = asyncio.run(fill(tmp, owner, trip_ids, args.sample, coding))
            held.append(r["held"])
            print(f"  reader {'without compression' if coding is None else 'accepting ' + coding}: "
                  f"the {r['budget'] / 2**20:.0f} MiB cache holds {r['held']} trips; accounted "
                  f"{r['accounted'] / 1024:.0f} KiB a trip ({r['accounted'] / r['body']:.2f}x its "
                  f"{r['body'] / 1024:.0f} KiB TripDto); tracemalloc {r['measured'] / 1024:.0f} KiB "
                  f"({r['measured'] / r['body']:.2f}x)")
            if r["slim"] is not None:
                print(f"    of those, {r['held'] - r['hot']} kept as bytes only; tracemalloc "
                      f"{r['slim'] / 1024:.0f} KiB a trip ({r['slim'] / r['body']:.2f}x) once shed, accounted "
                      f"{r['slim_counted'] / 1024:.0f} KiB")
        print(f"  target: at least {TARGET} trips held: {'met' if min(held) >= TARGET else 'NOT met'}")


if __name__ == "__main__":
    main()
