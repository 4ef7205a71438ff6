"""GET /api/trips/:tripId on a 5-day x 8-stop trip vs a bare Starlette endpoint.

Usage: .venv/bin/python bench/trip_read.py [--seconds 4] [--connections 8]
Prints both throughputs and their ratio (target >= 0.6), measured in one run
with the same load generator, each server in its own uvicorn process."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _loadgen import compare, report, serve  # noqa: E402


def build_trip(base: str) -> tuple[str, str, bytes]:
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
        body = c.get(f"/api/trips/{trip['id']}").content
        return trip["id"], cookie, body


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {"WAYLINE_DB": f"{tmp}/bench.db", "WAYLINE_UPLOADS": f"{tmp}/uploads", "OPENAI_API_KEY": "",
               "GOOGLE_MAPS_API_KEY": ""}
        with serve("bench._apps:wayline", env) as port:
            trip_id, cookie, body = build_trip(f"http://127.0.0.1:{port}")
            Path(tmp, "payload.json").write_bytes(body)
            with serve("bench._apps:bare", {"BENCH_PAYLOAD": f"{tmp}/payload.json"}) as bare_port:
                result = compare(port, f"/api/trips/{trip_id}", bare_port, cookie=cookie, rounds=args.rounds,
                                 seconds=args.seconds, connections=args.connections)
    print(f"payload: {len(body)} bytes (5 days x 8 stops), {args.connections} keep-alive connections")
    report("GET trip", result, 0.6)


if __name__ == "__main__":
    main()
