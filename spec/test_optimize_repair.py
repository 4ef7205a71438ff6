"""Optimize my day's repair of a plan that would bring a new finding says
each place it leaves out with a reason that place is behind (app/planner/
optimize.py `repaired`). Real Copenhagen places (OpenStreetMap stand-in)."""

from __future__ import annotations

import json
from datetime import date, timedelta

from browser.scripts import user_facts
from helpers import make_client, op, signup
from standins.openai_standin import Reply, ai_settings, message_item
from standins.osm_standin import osm_settings
from test_planner import NO_DEBOUNCE, QUIET

CPH = {"name": "Copenhagen", "lat": 55.6761, "lng": 12.5683}


def next_tuesday() -> date:
    d = date.today() + timedelta(days=3)
    while d.weekday() != 1:
        d += timedelta(days=1)
    return d


def test_a_place_is_not_left_out_for_a_finding_the_new_order_brings(settings, osm_standin, openai_standin):
    """The model reverses the free stops, which puts lunch at Aamanns 1921
    past its kitchen's last hour, and adds Rundetaarn after Amalienborg.
    Leaving out Rundetaarn does not help lunch, yet it was left out "because"
    of Aamanns' hours. Now the order is what goes (the day's own is kept,
    where Rundetaarn ends the day), and Rundetaarn is left out only for what
    it brings itself: a 7th stop, more than a normal pace holds."""
    def model(request):
        body = request.body or {}
        name = ((body.get("text") or {}).get("format") or {}).get("name")
        if name == "plan_day":
            facts = user_facts(body)
            tower = next(c for c in facts["candidates"] if c["name"] == "Rundetaarn")
            order = list(reversed(facts["freeStopIds"]))   # Amalienborg, the day's last stop, comes first
            return Reply(output=[message_item(json.dumps({
                "order": order, "additions": [{"placeId": tower["placeId"], "afterStopId": order[0]}],
                "summary": "Reversed the visits to save walking and added a well-rated place at the end."}))])
        return Reply(output=[message_item(json.dumps(QUIET))])

    openai_standin.responder = model
    app_settings = ai_settings(osm_settings(settings, osm_standin), openai_standin)
    with make_client(app_settings, **NO_DEBOUNCE) as client:
        signup(client)
        assert client.put("/api/users/preferences", json={"cuisines": [], "dietary": [], "allergies": ""}).is_success
        trip = client.post("/api/trips", json={"title": "Copenhagen", "startDate": next_tuesday().isoformat(),
                                               "days": 1, "timezone": "Europe/Copenhagen", "currency": "DKK",
                                               "destination": CPH}).json()["data"]
        day = trip["days"][0]["id"]
        for stop in (
                {"name": "Rosenborg Slot", "placeId": "osm:way/23786112", "lat": 55.6858, "lng": 12.5772,
                 "durationMin": 90, "setTime": "10:00"},
                {"name": "Nyhavn", "lat": 55.6798, "lng": 12.591, "durationMin": 60},
                {"name": "Aamanns 1921", "kind": "food", "meal": "lunch", "placeId": "osm:node/2351634512",
                 "lat": 55.6801, "lng": 12.5779, "durationMin": 60},
                {"name": "Vor Frue Kirke", "lat": 55.6795, "lng": 12.5728, "durationMin": 30},
                {"name": "Kongens Have", "placeId": "osm:way/4287214", "lat": 55.6853, "lng": 12.5801,
                 "durationMin": 90},
                {"name": "Amalienborg", "lat": 55.6841, "lng": 12.5932, "durationMin": 30}):
            assert op(client, trip["id"], "insert_stop", dayId=day, **stop).status_code == 200
        r = client.post(f"/api/trips/{trip['id']}/days/{day}/optimize", json={})
        assert r.status_code == 200, r.text
        preview = r.json()["data"]["draft"]["preview"]
        summary = preview["summary"]
        assert preview["added"] == []
        assert "Kept the day's order: the suggested one would bring this: “Aamanns 1921”" in summary, summary
        assert "Left out “Rundetaarn”: “Aamanns 1921”" not in summary, summary
        assert "Left out “Rundetaarn”: This day has 7 stops" in summary, summary
