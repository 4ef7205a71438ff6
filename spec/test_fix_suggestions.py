"""Issue 20, the agent's side: a material risk with a computed fix becomes a
suggestion whose patch is that fix (several edits, one change); it resolves
itself when its finding is gone; approving after an unrelated edit checks it
again, and only a real conflict is a 409 (after which the agent looks at the
day again). Through HTTP with the OpenAI and Google stand-ins."""

from __future__ import annotations

import asyncio
import json
import sqlite3

from app.agent import suggestions
from helpers import held_at_its_write, new_trip, op, signup
from standins.google_standin import EVERY_DAY, google_settings, weekly
from standins.openai_standin import Reply, message_item
from test_agent_support import agent_client, eventually, events, pick_first_fix

COPENHAGEN = {"name": "Copenhagen", "lat": 55.6761, "lng": 12.5683}


def dinner_trip(client, google_standin, days: int = 2) -> dict:
    """A museum, the harbour walk, then dinner at a kitchen that closes at 23:00: all fine from 09:00."""
    google_standin.add_place("ChIJ_manfreds", "Manfreds", 55.6920, 12.5600, ["restaurant", "food"],
                             hours=weekly(EVERY_DAY, ("17:00", "23:00")))
    trip = new_trip(client, days=days, startDate="2026-12-14", timezone="Europe/Copenhagen",
                    destination=COPENHAGEN, currency="DKK")
    day = trip["days"][0]["id"]
    ids = {}
    for name, point, fields in (("Designmuseum", (55.6886, 12.5920), {"durationMin": 480}),
                                ("Harbour walk", (55.6798, 12.5910), {"durationMin": 60}),
                                ("Manfreds", (55.6920, 12.5600), {"kind": "food", "meal": "dinner",
                                                                   "placeId": "ChIJ_manfreds", "durationMin": 75})):
        r = op(client, trip["id"], "insert_stop", dayId=day, name=name, lat=point[0], lng=point[1],
               kind=fields.pop("kind", "sight"), **fields)
        assert r.status_code == 200, r.text
        ids[name] = r.json()["data"]["trip"]["days"][0]["stops"][-1]["id"]
    return {**trip, "ids": ids, "day": day}


def walk_at_nine(client, trip: dict) -> None:
    """The member's edit: the harbour walk at 21:00, so dinner starts after 22:00."""
    assert op(client, trip["id"], "update_stop", stopId=trip["ids"]["Harbour walk"], setTime="21:00").status_code == 200


def late_dinner(client, google_standin, days: int = 2) -> tuple[dict, dict]:
    """Alice's trip, the walk moved to 21:00, and the suggestion the agent made of it."""
    signup(client, "alice")
    trip = dinner_trip(client, google_standin, days)
    walk_at_nine(client, trip)
    [suggestion] = eventually(lambda: events(client, trip["id"])["suggestions"])
    return trip, suggestion


def review(client, trip: dict, day: int = 0) -> dict:
    return client.get(f"/api/trips/{trip['id']}/days/{trip['days'][day]['id']}/review").json()["data"]


def approve(client, trip: dict, suggestion_id: str):
    return client.post(f"/api/trips/{trip['id']}/agent/suggestions/{suggestion_id}/approve", json={"approved": True})


def status_of(settings, suggestion_id: str) -> str:
    with sqlite3.connect(settings.db_path) as conn:
        return conn.execute("SELECT status FROM agent_suggestions WHERE id = ?", (suggestion_id,)).fetchone()[0]


def test_the_closing_dinner_becomes_a_one_click_suggestion(settings, openai_standin, google_standin):
    openai_standin.responder = pick_first_fix
    with agent_client(google_settings(settings, google_standin), openai_standin) as client:
        trip, suggestion = late_dinner(client, google_standin)
        sent = json.loads(openai_standin.requests[0].body["input"])
        [risk] = sent["newRisks"]
        assert risk["kind"] == "closed" and "Manfreds" in risk["message"] and risk["fixes"]
        # The patch is the computed fix, exactly: dinner before the walk, at a time its kitchen allows.
        computed = next(f for f in review(client, trip)["findings"] if f["kind"] == "closed")["fixes"][0]
        assert suggestion["patch"]["edits"] == computed["edits"] and len(computed["edits"]) == 2
        assert suggestion["patch"]["label"] == computed["label"] == "Move “Manfreds” before “Harbour walk” at 17:30"
        r = approve(client, trip, suggestion["id"])
        assert r.status_code == 200, r.text
        assert [s["name"] for s in r.json()["data"]["days"][0]["stops"]] == ["Designmuseum", "Manfreds",
                                                                             "Harbour walk"]
        assert review(client, trip)["findings"] == []
        assert status_of(settings, suggestion["id"]) == "applied"


def test_a_suggestion_fixed_by_hand_resolves_itself(settings, openai_standin, google_standin):
    openai_standin.responder = pick_first_fix
    with agent_client(google_settings(settings, google_standin), openai_standin) as client:
        trip, suggestion = late_dinner(client, google_standin)
        calls = openai_standin.request_count
        # A member fixes it another way: the walk loses its late time, dinner is back at 18:xx.
        walk = trip["ids"]["Harbour walk"]
        assert op(client, trip["id"], "update_stop", stopId=walk, setTime=None).status_code == 200
        eventually(lambda: status_of(settings, suggestion["id"]) == "resolved")
        assert events(client, trip["id"])["suggestions"] == [], "its card leaves every page"
        r = approve(client, trip, suggestion["id"])
        assert r.status_code == 409 and r.json()["error"]["suggestionStatus"] == "resolved"
        assert openai_standin.request_count == calls, "resolving costs no model call"


def test_a_suggestion_whose_stop_is_deleted_resolves_itself(settings, openai_standin, google_standin):
    openai_standin.responder = pick_first_fix
    with agent_client(google_settings(settings, google_standin), openai_standin) as client:
        trip, suggestion = late_dinner(client, google_standin)
        assert op(client, trip["id"], "delete_stop", stopId=trip["ids"]["Manfreds"]).status_code == 200
        eventually(lambda: status_of(settings, suggestion["id"]) == "resolved")
        assert events(client, trip["id"])["suggestions"] == []


def moving_responder(request) -> Reply:
    """The first decision picks the fix that moves dinner to another day; later ones the first fix."""
    payload = json.loads(request.body["input"])
    fixes = [f for risk in payload["newRisks"] for f in risk["fixes"]]
    moving = [f for f in fixes if any(e["args"].get("toDayId") not in (None, risk_day(payload)) for e in f["edits"])]
    pick = moving[0] if moving and not moving_responder.used else fixes[0]
    moving_responder.used = True
    decision = {"shouldNotify": True, "severity": "high", "confidence": 0.9, "reason": "Dinner is too late.",
                "suggestion": pick["label"], "pendingPatch": None, "fixId": pick["id"], "expiresInMinutes": 120}
    return Reply(output=[message_item(json.dumps(decision))])


def risk_day(payload: dict) -> str | None:
    return payload["newRisks"][0].get("dayId")


def test_a_real_conflict_is_stale_and_the_agent_looks_at_the_day_again(settings, openai_standin, google_standin):
    moving_responder.used = False
    openai_standin.responder = moving_responder
    with agent_client(google_settings(settings, google_standin), openai_standin) as client:
        trip, suggestion = late_dinner(client, google_standin)
        assert suggestion["patch"]["edits"][0]["args"]["toDayId"] == trip["days"][1]["id"]
        # The day it would move dinner to is deleted: the problem is still there, the patch cannot apply.
        assert op(client, trip["id"], "delete_day", dayId=trip["days"][1]["id"]).status_code == 200
        r = approve(client, trip, suggestion["id"])
        assert r.status_code == 409 and r.json()["error"]["code"] == "stale", r.text
        assert status_of(settings, suggestion["id"]) == "stale"
        # The agent looked at the day again: a new suggestion for the same problem, one that applies.
        [again] = eventually(lambda: events(client, trip["id"])["suggestions"])
        assert again["id"] != suggestion["id"]
        r = approve(client, trip, again["id"])
        assert r.status_code == 200, r.text
        assert review(client, trip)["findings"] == []



def test_two_approvals_of_a_stale_suggestion_at_once_bring_one_new_suggestion(settings, openai_standin,
                                                                              google_standin):
    """Two approvals (two tabs, two members) of a suggestion that no longer
    applies both find it pending, then stale; only the one that marks it
    stale has the agent look at the day again. Both used to: two model calls
    and two new suggestions for the one problem."""
    moving_responder.used = False
    openai_standin.responder = moving_responder
    with agent_client(google_settings(settings, google_standin), openai_standin) as client:
        trip, suggestion = late_dinner(client, google_standin)
        assert op(client, trip["id"], "delete_day", dayId=trip["days"][1]["id"]).status_code == 200
        alice = client.get(f"/api/trips/{trip['id']}").json()["data"]["members"][0]["userId"]
        svc = client.app.state.services
        calls = openai_standin.request_count

        def approving():
            return suggestions.apply_suggestion(svc, trip["id"], suggestion["id"], alice,
                                                svc.watch.evaluator.reconsider)

        async def race():
            first, release = await held_at_its_write(svc.db, approving)   # found it pending: it marks it next
            second = await asyncio.gather(approving(), return_exceptions=True)
            release()
            return second + await asyncio.gather(first, return_exceptions=True)

        refused = client.portal.call(race)
        assert [(type(e).__name__, e.code) for e in refused] == [("Conflict", "stale")] * 2
        [again] = eventually(lambda: events(client, trip["id"])["suggestions"])
        eventually(lambda: len(svc.background) == 0)
        assert openai_standin.request_count == calls + 1
        assert [s["id"] for s in events(client, trip["id"])["suggestions"]] == [again["id"]]


def test_looking_at_a_day_again_does_not_suggest_again_what_is_already_waiting(settings, openai_standin,
                                                                             google_standin):
    """The day has two problems, each with its suggestion: the museum twice
    (waiting) and dinner too late (its fix moves dinner to day 2). Day 2 is
    deleted, dinner's suggestion is stale and the agent looks at the day
    again. It is asked about dinner only: the museum's suggestion is still
    waiting. It used to get both, and could file the museum's fix a second
    time (two cards for one problem)."""
    def responder(request) -> Reply:
        payload = json.loads(request.body["input"])
        fixes = [f for risk in payload["newRisks"] for f in risk["fixes"]]
        kinds = [r["kind"] for r in payload["newRisks"]]
        asked.append(kinds)
        if kinds == ["closed"] and len(asked) == 2:   # the evening edit: the fix that moves dinner to day 2
            pick = next(f for f in fixes if any(e["args"].get("toDayId") not in (None, risk_day(payload))
                                                for e in f["edits"]))
        else:   # otherwise the museum's fix, when it is offered
            pick = next((f for r in payload["newRisks"] if r["kind"] == "duplicate" for f in r["fixes"]), fixes[0])
        decision = {"shouldNotify": True, "severity": "high", "confidence": 0.9, "reason": "Look.",
                    "suggestion": pick["label"], "pendingPatch": None, "fixId": pick["id"], "expiresInMinutes": 120}
        return Reply(output=[message_item(json.dumps(decision))])

    asked: list[list[str]] = []
    openai_standin.responder = responder
    with agent_client(google_settings(settings, google_standin), openai_standin) as client:
        signup(client, "alice")
        trip = dinner_trip(client, google_standin)
        r = op(client, trip["id"], "insert_stop", dayId=trip["day"], kind="sight", name="Designmuseum",
               lat=55.6886, lng=12.5920, durationMin=30)
        assert r.status_code == 200, r.text
        [museum] = eventually(lambda: events(client, trip["id"])["suggestions"])
        walk_at_nine(client, trip)
        dinner = eventually(lambda: [s for s in events(client, trip["id"])["suggestions"] if s["id"] != museum["id"]])
        assert asked == [["duplicate"], ["closed"]]
        assert op(client, trip["id"], "delete_day", dayId=trip["days"][1]["id"]).status_code == 200
        r = approve(client, trip, dinner[0]["id"])
        assert r.status_code == 409 and r.json()["error"]["code"] == "stale", r.text
        eventually(lambda: len(asked) == 3 and len(client.app.state.services.background) == 0)
        assert asked[2] == ["closed"]
        waiting = events(client, trip["id"])["suggestions"]
        assert museum["id"] in [s["id"] for s in waiting] and len(waiting) == 2
        assert len({json.dumps(s["patch"]["edits"]) for s in waiting}) == 2
