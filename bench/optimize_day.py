"""Optimize my day over HTTP, as deployed: `POST .../days/{dayId}/optimize`
on a day of 25 stops (2 with a set time) with 12 candidate places, the
Google and OpenAI stand-ins (threads in this process, on loopback) answering
at once, one request at a time, against the floor's p50 under load (a GET
of a small JSON body from 8 keep-alive connections; the issue's figures use
this floor). The floor's p50 for one request at a time is printed too.

    .venv/bin/python bench/optimize_day.py [--rounds 3] [--runs 60]

Each run is the whole request: session and membership, preferences, the day
from memory, two Places searches (cached by app.providers.google after the warm-up;
the bench checks the timed runs make no Google call), the usage reservation
and its record, the model call through the `openai` SDK over loopback, id
validation, the draft with the day's legs, the preview with its review, and
storing the draft. Target: p50 <= 20x the floor's p50."""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "spec")]
from _loadgen import (Conn, alternate, expect, floor, footer, header, load, parser, pct, request, spread,  # noqa: E402
                      verdict, wayline)
from standins.google_standin import GoogleStandIn, weekly  # noqa: E402
from standins.openai_standin import TEST_KEY, OpenAIStandIn, Reply, message_item  # noqa: E402

STOPS, PINNED_AT = 25, (6, 15)
TARGET = 20.0
CENTRE = (38.7150, -9.1400)
QUIET = {"shouldNotify": False, "severity": "low", "confidence": 0.0, "reason": "", "suggestion": "",
         "pendingPatch": None, "expiresInMinutes": None}


def plan_reply(request) -> Reply:
    """A valid plan_day answer computed from the facts the server sent:
    the free stops reversed, and up to three sights added after the last."""
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


def build_day(c: httpx.Client, stops: int) -> tuple[str, str]:
    c.post("/api/auth/signup", json={"username": "bench", "password": "correct horse"}).raise_for_status()
    c.put("/api/users/preferences", json={"cuisines": [], "allergies": ""}).raise_for_status()
    destination = {"name": "Lisbon", "lat": CENTRE[0], "lng": CENTRE[1]}
    trip = c.post("/api/trips", json={"title": "Bench", "startDate": "2026-12-10", "days": 1,
                                      "destination": destination}).json()["data"]
    day = trip["days"][0]["id"]
    for i in range(stops):
        args = {"dayId": day, "name": f"Stop {i}", "lat": CENTRE[0] + (i % 5 - 2) * 0.003,
                "lng": CENTRE[1] + (i // 5 - 2) * 0.004, "durationMin": 20}
        if i in PINNED_AT:
            args["setTime"] = "11:00" if i == PINNED_AT[0] else "15:30"
        c.post(f"/api/trips/{trip['id']}/ops/insert_stop", json=args).raise_for_status()
    return trip["id"], day


async def sequential(port: int, raw: bytes, runs: int) -> dict:
    times = []
    async with Conn(port) as conn:
        for _ in range(runs):
            t0 = time.perf_counter()
            expect(await conn.send(raw), 200)
            times.append((time.perf_counter() - t0) * 1000)
    return {"p50_ms": statistics.median(times), "p95_ms": pct(times, 95)}


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=60, help="timed requests per round")
    p.add_argument("--stops", type=int, default=STOPS,
                   help=f"stops in the day (default {STOPS}; 13 leaves 12 free, the most Optimize orders exactly)")
    args = p.parse_args()
    pinned = sum(1 for i in PINNED_AT if i < args.stops)
    header(f"Optimize my day over HTTP: {args.stops} stops ({pinned} with a set time)", args)
    with tempfile.TemporaryDirectory() as d, GoogleStandIn() as google, OpenAIStandIn() as openai:
        tmp = Path(d)
        add_places(google)
        google.today = None  # weekly hours only: "unconfirmed", still checked
        openai.responder = plan_reply
        env = {"OPENAI_API_KEY": TEST_KEY, "OPENAI_BASE_URL": openai.url, "GOOGLE_MAPS_API_KEY": google.key,
               "GOOGLE_PLACES_BASE_URL": google.url, "GOOGLE_ROUTES_BASE_URL": google.url,
               "WAYLINE_AI_DAILY_LIMIT": "1000000", "WAYLINE_AI_DAILY_TOKENS": "1000000000000"}
        with wayline(tmp, args.root, **env) as app:
            with httpx.Client(base_url=f"http://127.0.0.1:{app.port}", timeout=30) as c:
                trip_id, day_id = build_day(c, args.stops)
                cookie = f"wayline_session={c.cookies.get('wayline_session')}"
            time.sleep(2.5)  # the agent's debounced evaluation of the setup edits has run
            path = f"/api/trips/{trip_id}/days/{day_id}/optimize"
            raw = request("POST", path, app.port, cookie=cookie, body=b"{}")
            asyncio.run(sequential(app.port, raw, 5))  # warm: Google searches and routes cached
            with httpx.Client(base_url=f"http://127.0.0.1:{app.port}", timeout=30) as c:
                c.cookies.set("wayline_session", cookie.split("=", 1)[1])
                answer = c.post(path, json={}).json()["data"]
            optimal = answer["draft"]["travel"]["optimalMin"]
            candidates = getattr(openai.requests[-1], "candidates", 0)
            google_calls = sum(google.calls.values())
            with floor(tmp, b'{"ok":true}') as bare:
                bare_raw = request("GET", "/", bare.port)
                asyncio.run(sequential(bare.port, bare_raw, 20))
                runs = alternate(args.rounds, {
                    "floor": lambda: load(bare.port, [[bare_raw]] * 8, seconds=args.seconds),
                    "floor, one at a time": lambda: sequential(bare.port, bare_raw, args.runs),
                    "optimize": lambda: sequential(app.port, raw, args.runs)})
            assert sum(google.calls.values()) == google_calls, "warm runs must not call Google"
    print(f"  {candidates} candidate places, {args.runs} runs per round")
    print("  the shortest order beside the plan: " + (f"computed (optimalMin {optimal})" if optimal is not None
                                                     else "not computed (more than 12 free stops, or none fits)"))
    for name, rows in runs.items():
        print(f"  {name:<20}: p50 {spread([r['p50_ms'] for r in rows])} ms  "
              f"p95 {spread([r['p95_ms'] for r in rows])} ms")
    ratios = [a["p50_ms"] / f["p50_ms"] for a, f in zip(runs["optimize"], runs["floor"])]
    print(f"  ratio (p50 / floor p50): {spread(ratios, '{:.1f}')}")
    print(verdict("ratio (median)", statistics.median(ratios), TARGET, at_most=True))
    footer()


if __name__ == "__main__":
    main()
