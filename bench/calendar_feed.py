"""GET /api/trips/:tripId/calendar.ics (a 5-day x 8-stop trip: the feed's
bytes, built from the trip in memory with `icalendar`) against the floor
answering the same bytes.

    .venv/bin/python bench/calendar_feed.py [--rounds 3] [--seconds 2] [--connections 8]

Prints both throughputs and their ratio (target >= 0.5: the bytes are built
once per change of the trip, off the event loop, and kept with its view; each
read still checks the session and the trip's last change)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _fixtures import cached_read_bench

if __name__ == "__main__":
    cached_read_bench(__doc__, "GET calendar.ics (5 x 8)", "calendar",
                      lambda trip: f"/api/trips/{trip.id}/calendar.ics", 0.5)
