"""Helpers shared by the agent tests (no tests here): an app with AI on the
OpenAI stand-in, SSE parsing, waiting for background work, a late set time."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from typing import Any

from helpers import make_client, op
from standins.openai_standin import Reply, ai_settings, message_item

FAST_DEBOUNCE_S = 0.05


UNROUTABLE = "http://127.0.0.1:9"   # the discard port: a tool that is not meant to reach a provider cannot


def agent_client(settings, standin, **overrides):
    """The real app with AI on the stand-in and a short evaluation debounce.
    Weather (and Google, if keyed) point nowhere unless the test set them."""
    overrides.setdefault("agent_debounce_s", FAST_DEBOUNCE_S)
    if settings.weather_base_url.startswith("https://"):
        settings = settings.with_(weather_base_url=UNROUTABLE)
    if settings.google_places_base_url.startswith("https://"):
        settings = settings.with_(google_places_base_url=UNROUTABLE, google_routes_base_url=UNROUTABLE,
                                  google_maps_base_url=UNROUTABLE)
    return make_client(ai_settings(settings, standin), **overrides)


def sse_chunks(response) -> list[Any]:
    """The `data:` payloads of an SSE body, in order ("[DONE]" kept as a string)."""
    assert response.status_code == 200, response.text
    chunks = []
    for frame in response.text.split("\n\n"):
        if not frame.strip():
            continue
        assert frame.startswith("data: "), f"not an SSE data frame: {frame!r}"
        payload = frame[len("data: "):]
        chunks.append(payload if payload == "[DONE]" else json.loads(payload))
    return chunks


def of_type(chunks: list, kind: str) -> list[dict]:
    return [c for c in chunks if isinstance(c, dict) and c.get("type") == kind]


def eventually(check: Callable[[], Any], timeout: float = 60.0, interval: float = 0.03) -> Any:
    """Poll until `check()` is truthy (background work runs on the app's loop).
    The deadline only bounds work that never finishes: generous, because a
    loaded two-core machine is many times slower than one alone."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(interval)


def user_message(text: str, message_id: str = "u1", files: list | None = None) -> dict:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}, *(files or [])]}


def events(client, trip_id: str, after: int = 0) -> dict:
    r = client.get(f"/api/trips/{trip_id}/agent/events", params={"after": after})
    assert r.status_code == 200, r.text
    return r.json()["data"]


def pick_first_fix(request) -> Reply:
    """A stand-in responder that answers intervention_decision with the first
    fix the server offered (as a model following the prompt would)."""
    payload = json.loads(request.body["input"])
    fix = next(f for risk in payload["newRisks"] for f in risk["fixes"])
    decision = {"shouldNotify": True, "severity": "high", "confidence": 0.9,
                "reason": "The set time cannot be reached.", "suggestion": fix["label"],
                "pendingPatch": None, "fixId": fix["id"], "expiresInMinutes": 120}
    return Reply(output=[message_item(json.dumps(decision))])


FAR_AWAY = {"name": "Palácio da Pena", "lat": 38.7876, "lng": -9.3906}   # Sintra, ~25 km out


def make_set_time_unreachable(client, trip_id: str, day_id: str) -> tuple[str, str]:
    """A two-hour visit in Lisbon from 09:00, then a stop in Sintra set for
    11:05: the trip there cannot arrive in time. Returns (first, second) ids."""
    def last_stop(answer) -> str:   # of this day: other members may be filling other days meanwhile
        assert answer.status_code == 200, answer.text
        day = next(d for d in answer.json()["data"]["trip"]["days"] if d["id"] == day_id)
        return day["stops"][-1]["id"]

    first = last_stop(op(client, trip_id, "insert_stop", dayId=day_id, kind="sight", name="Castelo de São Jorge",
                         lat=38.7139, lng=-9.1335, durationMin=120))
    second = last_stop(op(client, trip_id, "insert_stop", dayId=day_id, kind="sight", setTime="11:05", **FAR_AWAY))
    return first, second


def reachable(day: dict) -> bool:
    """Every set time in a TripDto day can be reached from the stop before it."""
    legs = {(leg["fromStopId"], leg["toStopId"]): leg for leg in day["legs"]}
    stops = day["stops"]
    for prev, stop in itertools.pairwise(stops):
        if not stop["setTime"]:
            continue
        leg = legs.get((prev["id"], stop["id"]))
        travel = -(-leg["durationS"] // 60) if leg else 0
        h, m = map(int, prev["endTime"].split(":"))
        sh, sm = map(int, stop["setTime"].split(":"))
        if h * 60 + m + travel > sh * 60 + sm:
            return False
    return True
