"""Server time for "Optimize my day": 25 stops, 12 candidate places, the
Google and OpenAI stand-ins answering at once.

Runs the real app in process (Starlette TestClient, lifespan on) against the
loopback stand-ins, warms the caches (Google places and routes are cached by
app.google, as in production after the first request), then times N
POST .../optimize requests end to end. The same harness times a bare
Starlette JSON endpoint, so the ratio line stays comparable across machines.

    .venv/bin/python bench/optimize_day.py [--runs 200]
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "spec")]

from starlette.applications import Starlette  # noqa: E402
from starlette.responses import JSONResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from app.server import create_app  # noqa: E402
from app.settings import Settings  # noqa: E402
from standins.google_standin import GoogleStandIn, weekly  # noqa: E402
from standins.openai_standin import TEST_KEY, OpenAIStandIn, Reply, message_item  # noqa: E402

STOPS, PINNED_AT = 25, (6, 15)
TARGET_P50_MS = 25.0
CENTRE = (38.7150, -9.1400)
QUIET = {"shouldNotify": False, "severity": "low", "confidence": 0.0, "reason": "", "suggestion": "",
         "pendingPatch": None, "expiresInMinutes": None}


def plan_reply(request) -> Reply:
    """A valid plan_day answer computed from the facts the server sent:
    the free stops reversed, and up to three sights added after the first."""
    body = request.body if isinstance(request.body, dict) else {}
    name = ((body.get("text") or {}).get("format") or {}).get("name")
    if name == "intervention_decision":   # the trip agent evaluating the setup edits: stay quiet
        return Reply(output=[message_item(json.dumps(QUIET))])
    if name != "plan_day":
        return Reply(kind="http_error", http_status=500, error={"message": "bench: unexpected call"})
    facts = json.loads(body["input"][0]["content"])
    free = facts["freeStopIds"]
    sights = [c["placeId"] for c in facts["candidates"] if c["kind"] == "sight"][:3]
    plan = {"order": free[::-1], "additions": [{"placeId": p, "afterStopId": free[-1]} for p in sights],
            "summary": "Reversed, with a few sights."}
    request.candidates = len(facts["candidates"])
    return Reply(output=[message_item(json.dumps(plan))], usage=(1800, 300))


def add_places(google: GoogleStandIn) -> None:
    """Enough sights and restaurants near the day for 12 candidates."""
    for i in range(12):
        lat, lng = CENTRE[0] + (i % 4 - 1.5) * 0.004, CENTRE[1] + (i // 4 - 1) * 0.005
        google.add_place(f"ChIJ_bench_sight_{i}", f"Bench sight {i}", lat, lng, ["tourist_attraction", "museum"],
                         rating=4.0 + i % 5 / 10, count=500 + 97 * i, hours=weekly(range(7), ("08:00", "22:00")))
        google.add_place(f"ChIJ_bench_food_{i}", f"Bench food {i}", lat + 0.001, lng + 0.001, ["restaurant", "food"],
                         rating=4.1 + i % 4 / 10, count=300 + 53 * i, price="PRICE_LEVEL_MODERATE",
                         hours=weekly(range(7), ("11:00", "23:30")))


def build_day(client: TestClient) -> tuple[str, str]:
    r = client.post("/api/trips", json={"title": "Bench", "startDate": "2026-12-10", "days": 1,
                                        "destination": {"name": "Lisbon", "lat": CENTRE[0], "lng": CENTRE[1]}})
    trip = r.json()["data"]
    day = trip["days"][0]["id"]
    for i in range(STOPS):
        args = {"dayId": day, "name": f"Stop {i}", "lat": CENTRE[0] + (i % 5 - 2) * 0.003,
                "lng": CENTRE[1] + (i // 5 - 2) * 0.004, "durationMin": 20}
        if i in PINNED_AT:
            args["setTime"] = "11:00" if i == PINNED_AT[0] else "15:30"
        assert client.post(f"/api/trips/{trip['id']}/ops/insert_stop", json=args).status_code == 200
    return trip["id"], day


def timed(call, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        out.append((time.perf_counter() - start) * 1000)
    return out


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    logging.getLogger("wayline.ai").setLevel(logging.WARNING)   # one usage line per call would drown the figures
    with tempfile.TemporaryDirectory() as tmp, GoogleStandIn() as google, OpenAIStandIn() as openai:
        add_places(google)
        google.today = None  # weekly hours only: "unconfirmed", still checked
        openai.responder = plan_reply
        settings = Settings(db_path=f"{tmp}/bench.db", uploads_dir=f"{tmp}/uploads", openai_api_key=TEST_KEY,
                            openai_base_url=openai.url, google_maps_api_key=google.key,
                            google_places_base_url=google.url, google_routes_base_url=google.url,
                            ai_daily_limit=10**6, ai_daily_tokens=10**12)
        # No debounce: the agent evaluates the setup edits at once, before the timed runs.
        app = create_app(settings, agent_debounce_s=0.0)
        with TestClient(app, base_url="http://testserver") as client:
            client.post("/api/auth/signup", json={"username": "bench", "password": "correct horse"})
            client.put("/api/users/preferences", json={"cuisines": [], "allergies": ""})
            trip_id, day_id = build_day(client)
            url = f"/api/trips/{trip_id}/days/{day_id}/optimize"

            def optimize():
                r = client.post(url, json={})
                assert r.status_code == 200, r.text

            time.sleep(0.5)
            for _ in range(5):  # warm: Google searches and routes cached, connections open
                optimize()
            candidates = getattr(openai.requests[-1], "candidates", 0)
            times = timed(optimize, args.runs)
            google_calls = sum(google.calls.values())
            timed(optimize, 3)
            assert sum(google.calls.values()) == google_calls, "warm runs must not call Google"

        bare = Starlette(routes=[Route("/bare", lambda request: JSONResponse({"ok": True}))])
        with TestClient(bare) as client:
            timed(lambda: client.get("/bare"), 50)
            bare_times = timed(lambda: client.get("/bare"), args.runs)

    p50, p95 = statistics.median(times), pct(times, 95)
    bare_p50 = statistics.median(bare_times)
    verdict = "meets" if p50 < TARGET_P50_MS else "MISSES"
    print(f"Optimize my day: {STOPS} stops ({len(PINNED_AT)} with a set time), {candidates} candidate places, "
          f"{args.runs} runs, stand-ins answering at once")
    print(f"  p50 {p50:.1f} ms   p95 {p95:.1f} ms   ({verdict} the p50 < {TARGET_P50_MS:.0f} ms target)")
    print(f"  context: a bare Starlette JSON endpoint in the same harness: p50 {bare_p50:.2f} ms; "
          f"optimize = {p50 / bare_p50:.0f}x a bare endpoint")


if __name__ == "__main__":
    main()
