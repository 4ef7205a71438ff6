"""GET /api/trips/:tripId on a 5-day x 8-stop trip vs a bare Starlette endpoint.

Usage: .venv/bin/python bench/trip_read.py [--seconds 4] [--connections 8]
Prints both throughputs and their ratio (target >= 0.6), measured in one run
with the same load generator, each server in its own uvicorn process."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _loadgen import run_against_bare


def build_trip(base: str) -> tuple[str, str, bytes]:
    """A 5-day x 8-stop trip; returns (its path, the session cookie, its body)."""
    with httpx.Client(base_url=base) as c:
        c.post("/api/auth/signup", json={"username": "bench", "password": "correct horse"}).raise_for_status()
        trip = c.post("/api/trips", json={"title": "Bench", "startDate": "2026-12-01", "days": 5,
                                          "destination": {"name": "Lisbon", "lat": 38.72, "lng": -9.14}}).json()["data"]
        for d, day in enumerate(trip["days"]):
            for i in range(8):
                c.post(f"/api/trips/{trip['id']}/ops/insert_stop", json={
                    "dayId": day["id"], "name": f"Stop {d}.{i}", "kind": "sight", "lat": 38.70 + 0.004 * i,
                    "lng": -9.15 + 0.003 * d, "durationMin": 45}).raise_for_status()
        cookie = f"wayline_session={c.cookies.get('wayline_session')}"
        path = f"/api/trips/{trip['id']}"
        return path, cookie, c.get(path).content


def main() -> None:
    run_against_bare("GET trip", 0.6, {}, build_trip)


if __name__ == "__main__":
    main()
