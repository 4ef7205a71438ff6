"""GET /api/trips/:tripId/agent/events?after=<latest> (nothing new) vs a bare
Starlette endpoint returning the same bytes.

Every open planner page polls this every 12 s, so its cost is the agent's
steady-state load. Usage:
    .venv/bin/python bench/agent_events.py [--seconds 2] [--rounds 5] [--connections 8]
Prints both throughputs and their ratio (target >= 0.8), measured in one run
with the same load generator, each server in its own uvicorn process on
loopback. AI is "on" with a dummy key and an unroutable base URL:
polling never calls the model, and nothing can reach a real provider.
"""

from __future__ import annotations

import sys
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _loadgen import run_against_bare

TARGET = 0.8


def build_timeline(base: str) -> tuple[str, str, bytes]:
    """A trip with a few dozen timeline rows; returns (events path, cookie, body)."""
    with httpx.Client(base_url=base) as c:
        c.post("/api/auth/signup", json={"username": "bench", "password": "correct horse"}).raise_for_status()
        trip = c.post("/api/trips", json={"title": "Bench", "startDate": "2026-12-01", "days": 3,
                                          "destination": {"name": "Lisbon", "lat": 38.72, "lng": -9.14}}).json()["data"]
        for i in range(30):
            day = trip["days"][i % 3]["id"]
            c.post(f"/api/trips/{trip['id']}/ops/update_day",
                   json={"dayId": day, "note": f"note {i}"}).raise_for_status()
        first = c.get(f"/api/trips/{trip['id']}/agent/events", params={"after": 0})
        first.raise_for_status()
        latest = first.json()["data"]["latestSeq"]
        path = f"/api/trips/{trip['id']}/agent/events?after={latest}"
        # A planner page loads the trip, then polls: the TripDto cache holds its membership.
        c.get(f"/api/trips/{trip['id']}").raise_for_status()
        body = c.get(path).content
        cookie = f"wayline_session={c.cookies.get('wayline_session')}"
        return path, cookie, body


def main() -> None:
    # AI is on (agent routes exist) with a dummy key and an unroutable base URL.
    run_against_bare("GET events", TARGET, {"OPENAI_API_KEY": "dummy-key-never-sent",
                                            "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, build_timeline)


if __name__ == "__main__":
    main()
