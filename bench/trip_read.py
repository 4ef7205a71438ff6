"""GET /api/trips/:tripId (a 5-day x 8-stop trip, already read once) against
the floor answering the same bytes.

    .venv/bin/python bench/trip_read.py [--rounds 3] [--seconds 2] [--connections 8]

Prints both throughputs and their ratio (target >= 0.6)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _fixtures import cached_read_bench

if __name__ == "__main__":
    cached_read_bench(__doc__, "GET trip (5 x 8), cached", "GET trip", lambda trip: f"/api/trips/{trip.id}", 0.6)
