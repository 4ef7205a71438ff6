"""The forecast watch (app/agent/watch.py): a background pass notices a risk
that came without an edit (the forecast turned wet), asks the model once,
never about the same risk twice, within its bounds (the forecast horizon,
once per trip per 6 h, the AI limits), and its loop stops at shutdown.

Clock: 2026-12-01 12:00 UTC, moved on by the tests. The trip runs 2026-12-10 to
12-12; the weather stand-in's 12-10 is turned dry or wet per test."""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from datetime import date, datetime, UTC

from app.agent.watch import NO_EDIT
from helpers import new_trip, op, signup
from standins.google_standin import google_settings
from standins.weather_standin import weather_settings
from test_agent_support import FAST_DEBOUNCE_S, agent_client, eventually, events, pick_first_fix

START = datetime(2026, 12, 1, 12, tzinfo=UTC).timestamp()
RAIN_DAY = date(2026, 12, 10)
DRY = {"weather_code": 1, "precipitation_sum": 0.0, "precipitation_probability_max": 10}
HOUR = 3600


class Clock:
    def __init__(self):
        self.now = START

    def __call__(self) -> float:
        return self.now

    def advance(self, hours: float) -> None:
        self.now += hours * HOUR


def watch_app(settings, openai_standin, google_standin, weather_standin, clock, **overrides):
    weather_standin.today = google_standin.today = date(2026, 12, 1)
    return agent_client(weather_settings(google_settings(settings, google_standin), weather_standin),
                        openai_standin, clock=clock, **overrides)


def rainy_day_trip(client, start_date: str = "2026-12-10") -> dict:
    """Day 1: breakfast, then a viewpoint (outdoors); day 2: a coffee, then a museum (indoors).
    The viewpoint comes last, so an evaluation it triggers reads the final version."""
    trip = new_trip(client, days=3, startDate=start_date)
    d1, d2 = trip["days"][0]["id"], trip["days"][1]["id"]
    for day, name, point, place in ((d2, "Coffee", (38.7200, -9.1200), None),
                                    (d2, "Museu Nacional do Azulejo", (38.7247, -9.1135), "ChIJ_museu_azulejo"),
                                    (d1, "Breakfast", (38.7110, -9.1400), None),
                                    (d1, "Miradouro de Santa Luzia", (38.7117, -9.1301), "ChIJ_miradouro_luzia")):
        extra = {"placeId": place} if place else {}
        r = op(client, trip["id"], "insert_stop", dayId=day, kind="sight", name=name, lat=point[0], lng=point[1],
               durationMin=60, **extra)
        assert r.status_code == 200, r.text
    return trip


def run_pass(client) -> list[str]:
    svc = client.app.state.services
    return client.portal.call(svc.watch.pass_once)


def settle(client) -> None:
    """The after-edit evaluations have run (the debounce, then their background task)."""
    time.sleep(FAST_DEBOUNCE_S * 4)
    eventually(lambda: len(client.app.state.services.background) == 0)


def seen(settings, trip_id: str) -> tuple:
    with sqlite3.connect(settings.db_path) as conn:
        return conn.execute("SELECT checked_at, seen_json FROM agent_watch WHERE trip_id = ?", (trip_id,)).fetchone()


def test_the_forecast_turning_wet_is_noticed_once(settings, openai_standin, google_standin, weather_standin):
    openai_standin.responder = pick_first_fix
    weather_standin.overrides[RAIN_DAY] = DRY
    clock = Clock()
    with watch_app(settings, openai_standin, google_standin, weather_standin, clock) as client:
        signup(client, "alice")
        trip = rainy_day_trip(client)
        far = new_trip(client, startDate="2027-06-01")          # beyond the forecast horizon
        settle(client)
        assert openai_standin.request_count == 0, "no risk yet: the edits cost no model call"

        assert run_pass(client) == [trip["id"]]
        assert openai_standin.request_count == 0 and seen(settings, trip["id"])[1] == "[]"
        assert seen(settings, far["id"]) is None, "trips outside the horizon are not checked"
        assert run_pass(client) == [], "at most once per trip per 6 hours"

        # The forecast turns: rain (70 %) on the viewpoint's day. The forecast cache (3 h) expires.
        del weather_standin.overrides[RAIN_DAY]
        clock.advance(6.5)
        assert run_pass(client) == [trip["id"]]
        assert openai_standin.request_count == 1
        body = openai_standin.requests[0].body
        assert body["text"]["format"]["name"] == "intervention_decision"
        sent = json.loads(body["input"])
        assert sent["edit"] == NO_EDIT
        [risk] = sent["newRisks"]
        assert risk["kind"] == "weather" and "70% chance of rain" in risk["message"]
        [suggestion] = eventually(lambda: events(client, trip["id"])["suggestions"])
        # The cheapest computed fix: a swap with the dry day's indoor visit (a move there costs the same, but
        # shifts the viewpoint's time more).
        day2 = client.get(f"/api/trips/{trip['id']}").json()["data"]["days"][1]
        assert suggestion["patch"]["op"] == "swap_stops"
        assert suggestion["patch"]["args"]["otherStopId"] in [s["id"] for s in day2["stops"]]

        # Still raining 6.5 hours later: the same risk was seen, so no second call.
        clock.advance(6.5)
        assert run_pass(client) == [trip["id"]]
        assert openai_standin.request_count == 1
        assert len(json.loads(seen(settings, trip["id"])[1])) == 1

    with sqlite3.connect(settings.db_path) as conn:
        rows = conn.execute("SELECT feature, status FROM ai_usage").fetchall()
    assert rows == [("agent_eval", "completed")], "counted like any call through the gateway"


def test_a_risk_the_edit_already_raised_is_not_raised_again(settings, openai_standin, google_standin,
                                                            weather_standin):
    openai_standin.responder = pick_first_fix
    clock = Clock()
    with watch_app(settings, openai_standin, google_standin, weather_standin, clock) as client:
        signup(client, "alice")
        trip = rainy_day_trip(client)     # the viewpoint lands on a wet forecast day: the edit raises it
        eventually(lambda: events(client, trip["id"])["suggestions"])
        settle(client)
        assert openai_standin.request_count == 1
        assert json.loads(openai_standin.requests[0].body["input"])["newRisks"][0]["kind"] == "weather"
        assert run_pass(client) == [trip["id"]]
        assert openai_standin.request_count == 1


def test_a_refused_call_is_asked_again_on_a_later_pass(settings, openai_standin, google_standin, weather_standin,
                                                       caplog):
    caplog.set_level(logging.INFO, logger="wayline.agent")
    weather_standin.overrides[RAIN_DAY] = DRY
    clock = Clock()
    with watch_app(settings.with_(ai_daily_limit=1), openai_standin, google_standin, weather_standin,
                   clock) as client:
        signup(client, "alice")
        trip = rainy_day_trip(client)
        settle(client)
        del weather_standin.overrides[RAIN_DAY]
        clock.advance(3.5)                                           # past the forecast cache
        usage = client.app.state.services.aiusage
        client.portal.call(usage.finish, client.portal.call(usage.reserve, "someone", None, "agent_chat"),
                           "completed", 10, 5)                       # today's one call is used up
        assert run_pass(client) == [trip["id"]]
        assert openai_standin.request_count == 0, "refused before the provider"
        assert "agent watch: evaluation skipped: ai_limit" in caplog.text
        assert seen(settings, trip["id"])[1] == "[]", "the refused risk stays unseen"

        clock.advance(24)                                            # a new UTC day, a new budget
        openai_standin.responder = pick_first_fix
        assert run_pass(client) == [trip["id"]]
        assert openai_standin.request_count == 1


def test_the_loop_runs_passes_and_stops_at_shutdown(settings, openai_standin, google_standin, weather_standin):
    weather_standin.overrides[RAIN_DAY] = DRY
    clock = Clock()
    with watch_app(settings, openai_standin, google_standin, weather_standin, clock,
                   agent_watch_interval_s=0.05) as client:
        signup(client, "alice")
        trip = rainy_day_trip(client)
        eventually(lambda: seen(settings, trip["id"]) is not None and seen(settings, trip["id"])[0])
        closing = time.monotonic()
    assert time.monotonic() - closing < 5, "shutdown cancels the loop instead of waiting it out"
    assert openai_standin.request_count == 0
    assert seen(settings, trip["id"])[0] == "2026-12-01T12:00:00.000Z"


def test_a_trip_whose_check_fails_goes_to_the_back_and_the_others_are_checked(
        settings, openai_standin, google_standin, weather_standin, monkeypatch):
    clock = Clock()
    with watch_app(settings, openai_standin, google_standin, weather_standin, clock) as client:
        signup(client, "alice")
        broken, fine = rainy_day_trip(client), rainy_day_trip(client)
        settle(client)
        watch = client.app.state.services.watch
        real_check = watch.check_trip

        async def check(trip_id):
            if trip_id == broken["id"]:
                raise RuntimeError("a bug in one trip's review")
            return await real_check(trip_id)

        monkeypatch.setattr(watch, "check_trip", check)
        monkeypatch.setattr("app.agent.watch.MAX_TRIPS_PER_PASS", 1)
        checked = run_pass(client) + run_pass(client)   # one trip a pass, whichever comes first
        assert checked == [fine["id"]]
        assert seen(settings, broken["id"])[0] is not None, "the failed trip was put at the back"
        assert seen(settings, broken["id"])[1] == "[]", "what it had seen is kept"
