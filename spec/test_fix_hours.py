"""The review's opening-hours findings on Google's periods, and their fixes,
over HTTP (spec/test_fix_property.py draws random days from OpenStreetMap's
Copenhagen places in Copenhagen's zone; this pins the cases it rarely or
never draws): a visit outside its hours, one that runs past closing, a
place closed that day (and the move to a day it opens), a night past
midnight (fits, and runs past closing), a kitchen that closes before the
doors, a special day's closure (dated, confirmed hours), on nights when the
clocks change, in a trip whose zone is far from UTC. Every fix offered,
applied to a fresh copy of the trip through `POST /ops`, clears its finding
and adds none; the findings do not depend on the trip's zone (Google's
periods are the place's own wall clock)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta

import pytest

from helpers import make_client, new_trip, op, signup
from standins.google_standin import google_settings
from standins.weather_standin import weather_settings

TODAY = date(2026, 12, 2)      # a Wednesday: dated (confirmed) hours for Dec 2-8
PLACES = {   # the stand-in's Lisbon places: (name, lat, lng, kind)
    "ChIJ_museu_azulejo": ("Museu Nacional do Azulejo", 38.7247, -9.1135, "sight"),    # Tu-Su 10-18
    "ChIJ_castelo_jorge": ("Castelo de São Jorge", 38.7139, -9.1335, "sight"),          # daily 09-21
    "ChIJ_pensao_amor": ("Pensão Amor", 38.7070, -9.1445, "activity"),                   # daily 18-03
    "ChIJ_cervejaria_ramiro": ("Cervejaria Ramiro", 38.7207, -9.1357, "food"),          # kitchen until 00:00
    "ChIJ_taberna_flores": ("Taberna da Rua das Flores", 38.7099, -9.1440, "food"),     # closed Dec 4
}
SPECIAL_DAY = (TODAY + timedelta(days=2)).isoformat()

# (case, first date, days: [[(place, set time, minutes, meal)]], the closed finding's words or None)
CASES = [
    ("before opening", "2026-12-08", [[("ChIJ_museu_azulejo", "08:00", 60, None)]],
     "at 08:00–09:00 on Tue 8 Dec does not fit its opening hours."),
    ("past closing", "2026-12-03", [[("ChIJ_castelo_jorge", "20:30", 60, None)]], "(it closes at 21:00)"),
    ("closed that day", "2026-12-07", [[("ChIJ_museu_azulejo", "11:00", 60, None)], []],
     "is closed all day on Mon 7 Dec (its opening hours)."),
    ("a night past midnight that fits", "2026-12-03", [[("ChIJ_pensao_amor", "24:30", 120, None)]], None),
    ("a night past closing", "2026-12-03", [[("ChIJ_pensao_amor", "25:30", 120, None)]],
     "at 01:30 (+1)–03:30 (+1) on Thu 3 Dec does not fit its opening hours (it closes at 03:00 (+1))."),
    ("the kitchen closes first", "2026-12-03", [[("ChIJ_cervejaria_ramiro", "22:45", 75, "dinner")]],
     "with 30 minutes before closing (its kitchen closes at 00:00 (+1))."),
    ("a special day's closure", SPECIAL_DAY, [[("ChIJ_taberna_flores", "13:00", 60, "lunch")]],
     "is closed all day on Fri 4 Dec (its opening hours)."),
    ("the night summer time ends", "2026-10-24", [[("ChIJ_pensao_amor", "25:30", 120, None)]],
     "(it closes at 03:00 (+1))"),
    ("the night summer time starts", "2026-03-28", [[("ChIJ_pensao_amor", "24:30", 120, None)]], None),
]
ZONES = ["Europe/Lisbon", "Pacific/Auckland", "America/Los_Angeles"]


@pytest.fixture
def app(settings, google_standin, weather_standin):
    google_standin.today = weather_standin.today = TODAY
    roomy = replace(weather_settings(google_settings(settings, google_standin), weather_standin),
                    trips_per_user=10_000)   # a fresh copy of the trip for every fix tried
    with make_client(roomy) as client:
        signup(client, "hours")
        yield client


def build(client, zone: str, first: str, days: list) -> dict:
    trip = new_trip(client, days=len(days), startDate=first, timezone=zone)
    for day, stops in zip(trip["days"], days):
        for place, at, minutes, meal in stops:
            name, lat, lng, kind = PLACES[place]
            args = {"dayId": day["id"], "name": name, "kind": kind, "placeId": place, "lat": lat, "lng": lng,
                    "setTime": at, "durationMin": minutes, **({"meal": meal} if meal else {})}
            r = op(client, trip["id"], "insert_stop", **args)
            assert r.status_code == 200, r.text
    return trip


def review(client, trip: dict) -> dict:
    r = client.get(f"/api/trips/{trip['id']}/days/{trip['days'][0]['id']}/review")
    assert r.status_code == 200, r.text
    return r.json()["data"]


def problems(client, trip: dict) -> set[tuple]:
    """Every warning and problem of the trip's days, by kind and stop names (ids differ between copies)."""
    days = client.get(f"/api/trips/{trip['id']}").json()["data"]["days"]
    names = {s["id"]: s["name"] for d in days for s in d["stops"]}
    out = set()
    for k, day in enumerate(days):
        r = client.get(f"/api/trips/{trip['id']}/days/{day['id']}/review")
        out |= {(k, f["kind"], tuple(sorted(names[i] for i in f["stopIds"])))
                for f in r.json()["data"]["findings"] if f["severity"] != "info"}
    return out


@pytest.mark.parametrize("zone", ZONES)
def test_hours_findings_and_every_fix_they_offer(app, zone):
    for case, first, days, words in CASES:
        trip = build(app, zone, first, days)
        closed = [f for f in review(app, trip)["findings"] if f["kind"] == "closed"]
        if words is None:
            assert closed == [], (zone, case, closed)
            continue
        [finding] = closed
        assert words in finding["message"], (zone, case, finding["message"])
        assert finding["fixes"], (zone, case, "a fix is offered")
        for fix in finding["fixes"]:
            copy = build(app, zone, first, days)
            before = problems(app, copy)
            fresh = next(f for f in review(app, copy)["findings"] if f["message"] == finding["message"])
            same = next(x for x in fresh["fixes"] if x["label"] == fix["label"])
            r = app.post(f"/api/trips/{copy['id']}/ops", json={"edits": same["edits"]})
            assert r.status_code == 200, (zone, case, same, r.text)
            after = problems(app, copy)
            assert not [p for p in after if p[1] == "closed"], (zone, case, fix["label"], after)
            assert after <= before, (zone, case, fix["label"], after - before)
