"""GET /api/trips/:tripId (a 5-day x 8-stop trip, already read once) against
the floor answering the same bytes.

    .venv/bin/python bench/trip_read.py [--rounds 3] [--seconds 2] [--connections 8]

Prints both throughputs and their ratio (target >= 0.6)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _fixtures import Seed, migrate
from _loadgen import footer, header, parser, read_vs_floor, wayline


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--connections", type=int, default=8)
    args = p.parse_args()
    header("GET trip (5 x 8), cached", args)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        with Seed(migrate(tmp, args.root)) as seed:
            [(owner, cookie)] = seed.users(1)
            [trip] = seed.trips(owner, 1, 5, 8)
        with wayline(tmp, args.root) as app:
            read_vs_floor("GET trip", args, app, f"/api/trips/{trip.id}", cookie, tmp, 0.6)
    footer()


if __name__ == "__main__":
    main()
