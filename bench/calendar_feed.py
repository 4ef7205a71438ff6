"""GET /api/trips/:tripId/calendar.ics (a 5-day x 8-stop trip: the feed's
bytes, built from the trip in memory with `icalendar`) against the floor
answering the same bytes.

    .venv/bin/python bench/calendar_feed.py [--rounds 3] [--seconds 2] [--connections 8]

Prints both throughputs and their ratio (target >= 0.5: the bytes are built
once per change of the trip, off the event loop, and kept with its view; each
read still checks the session and the trip's last change)."""

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
    header("GET calendar.ics (5 x 8)", args)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        with Seed(migrate(tmp, args.root)) as seed:
            [(owner, cookie)] = seed.users(1)
            [trip] = seed.trips(owner, 1, 5, 8)
        with wayline(tmp, args.root) as app:
            read_vs_floor("calendar", args, app, f"/api/trips/{trip.id}/calendar.ics", cookie, tmp, 0.5)
    footer()


if __name__ == "__main__":
    main()
