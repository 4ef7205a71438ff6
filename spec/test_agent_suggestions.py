"""Operation evaluation and suggestion approval, against the OpenAI stand-in."""

from __future__ import annotations

import json
import threading
import time
from datetime import date

import httpx

from app.changes import Phase
from app.trips.events import OpsApplied
from app.agent.proactive import Evaluator, _Burst
from app.trips.apply import apply_op
from app.web.application import create_app
from helpers import LiveServer, join, new_trip, op, signup, use
from standins.google_standin import google_settings
from standins.openai_standin import ai_settings
from test_agent_support import (FAST_DEBOUNCE_S, agent_client, eventually, events, make_set_time_unreachable,
                                pick_first_fix, reachable)


def _pending(client, trip_id):
    return eventually(lambda: events(client, trip_id)["suggestions"])


def _approve(client, trip_id, suggestion_id, **body):
    return client.post(f"/api/trips/{trip_id}/agent/suggestions/{suggestion_id}/approve",
                       json={"approved": True, **body})


def test_benign_edit_costs_no_model_call_and_no_suggestion(settings, openai_standin):
    with agent_client(settings, openai_standin) as client:
        signup(client, "alice")
        trip = new_trip(client)
        day = trip["days"][0]["id"]
        assert op(client, trip["id"], "insert_stop", dayId=day, kind="sight", name="Sé de Lisboa",
                  lat=38.7097, lng=-9.1336).status_code == 200
        assert op(client, trip["id"], "update_day", dayId=day, title="Old town").status_code == 200
        time.sleep(FAST_DEBOUNCE_S * 8)
        assert openai_standin.request_count == 0
        data = events(client, trip["id"])
        assert data["suggestions"] == []
        assert {m["source"] for m in data["messages"]} == {"operation"}


def test_unreachable_set_time_gives_a_pending_suggestion_whose_patch_fixes_it(settings, openai_standin):
    openai_standin.responder = pick_first_fix
    with agent_client(settings, openai_standin) as client:
        signup(client, "alice")
        trip = new_trip(client)
        day = trip["days"][0]["id"]
        make_set_time_unreachable(client, trip["id"], day)
        before = client.get(f"/api/trips/{trip['id']}").json()["data"]
        assert not reachable(before["days"][0])

        [suggestion] = _pending(client, trip["id"])
        # One burst of edits, one model call, with the structured output name the spec fixes.
        assert openai_standin.request_count == 1
        request = openai_standin.requests[0].body
        assert request["text"]["format"]["name"] == "intervention_decision"
        assert request["store"] is False
        assert suggestion["status"] == "pending"
        assert suggestion["patch"]["op"] in ("update_stop", "move_stop", "update_day", "reorder_days",
                                             "update_expense")
        assert suggestion["tripVersion"] == before["version"]
        assert set(suggestion) == {"id", "messageId", "status", "severity", "confidence", "reason", "suggestionText",
                                   "patch", "tripVersion", "expiresAt", "appliedBy", "createdAt", "updatedAt",
                                   "proposedAs", "review"}
        assert suggestion["proposedAs"] is None and suggestion["review"] is None   # the agent's own
        announced = [m for m in events(client, trip["id"])["messages"] if m["id"] == suggestion["messageId"]]
        assert announced and announced[0]["role"] == "assistant" and announced[0]["source"] == "threshold"

        r = _approve(client, trip["id"], suggestion["id"])
        assert r.status_code == 200, r.text
        after = r.json()["data"]
        assert after["version"] == before["version"] + 1
        assert reachable(after["days"][0])
        assert events(client, trip["id"])["suggestions"] == []
        # The approval is attributed to the approver and no new evaluation runs for it.
        last_op = [m for m in events(client, trip["id"])["messages"] if m["source"] == "operation"][-1]
        assert last_op["actorUserId"] == after["members"][0]["userId"]
        assert last_op["parts"][1]["data"]["via"] == "suggestion"
        time.sleep(FAST_DEBOUNCE_S * 6)
        assert openai_standin.request_count == 1


def test_below_threshold_is_a_quiet_observation(settings, openai_standin):
    openai_standin.reply_json({"shouldNotify": True, "severity": "low", "confidence": 0.3, "reason": "Tight.",
                               "suggestion": "Maybe leave earlier.", "pendingPatch": None, "expiresInMinutes": None,
                               "fixId": None})
    with agent_client(settings, openai_standin) as client:
        signup(client, "alice")
        trip = new_trip(client)
        make_set_time_unreachable(client, trip["id"], trip["days"][0]["id"])
        quiet = eventually(lambda: [m for m in events(client, trip["id"])["messages"] if m["source"] == "threshold"])
        assert quiet[0]["parts"][0] == {"type": "text", "text": "Tight."}
        assert quiet[0]["parts"][1]["data"]["quiet"] is True
        assert events(client, trip["id"])["suggestions"] == []


def test_an_invented_patch_that_does_not_apply_is_dropped_for_the_computed_fix(settings, openai_standin):
    openai_standin.reply_json({"shouldNotify": True, "severity": "high", "confidence": 0.95, "reason": "Late.",
                               "suggestion": "Move it.", "expiresInMinutes": 60, "fixId": None,
                               "pendingPatch": {"op": "update_stop", "args": {"stopId": "nope", "setTime": "12:00"}}})
    with agent_client(settings, openai_standin) as client:
        signup(client, "alice")
        trip = new_trip(client)
        make_set_time_unreachable(client, trip["id"], trip["days"][0]["id"])
        [suggestion] = _pending(client, trip["id"])
        # Never the invented edit: the risk's cheapest computed fix, exactly as the review gives it.
        review = client.get(f"/api/trips/{trip['id']}/days/{trip['days'][0]['id']}/review").json()["data"]
        computed = next(f for f in review["findings"] if f["kind"] == "unreachable")["fixes"][0]
        assert suggestion["patch"]["edits"] == computed["edits"] and suggestion["patch"]["label"] == computed["label"]
        assert "nope" not in json.dumps(suggestion["patch"])


def _trip_with_suggestion(client):
    alice = signup(client, "alice")
    trip = new_trip(client)
    make_set_time_unreachable(client, trip["id"], trip["days"][0]["id"])
    [suggestion] = _pending(client, trip["id"])
    return alice, trip, suggestion


def test_viewer_gets_403_and_dismissal_hides_it_for_that_member_only(settings, openai_standin):
    openai_standin.responder = pick_first_fix
    with agent_client(settings, openai_standin) as client:
        bob, carol = signup(client, "bob"), signup(client, "carol")
        alice, trip, suggestion = _trip_with_suggestion(client)
        join(client, alice, trip["id"], bob, role="editor")
        join(client, alice, trip["id"], carol, role="viewer")

        use(client, carol)
        r = _approve(client, trip["id"], suggestion["id"])
        assert r.status_code == 403
        assert client.post(f"/api/trips/{trip['id']}/agent/suggestions/{suggestion['id']}/apply",
                           json={}).status_code == 403

        use(client, bob)
        r = client.post(f"/api/trips/{trip['id']}/agent/suggestions/{suggestion['id']}/approve",
                        json={"id": suggestion["id"], "approved": False, "reason": "not now"})
        assert r.status_code == 200 and r.json()["data"] == {"dismissed": True}
        assert client.get(f"/api/trips/{trip['id']}/agent/messages").json()["data"]["suggestions"] == []
        assert events(client, trip["id"])["suggestions"] == []
        use(client, carol)
        assert [s["id"] for s in events(client, trip["id"])["suggestions"]] == [suggestion["id"]]
        assert client.post(f"/api/trips/{trip['id']}/agent/suggestions/{suggestion['id']}/dismiss",
                           json={}).json()["data"] == {"dismissed": True}
        assert events(client, trip["id"])["suggestions"] == []
        use(client, alice)
        assert [s["id"] for s in events(client, trip["id"])["suggestions"]] == [suggestion["id"]]
        # The shared record is untouched: the owner can still apply it.
        assert _approve(client, trip["id"], suggestion["id"]).status_code == 200


def test_approving_after_an_unrelated_edit_checks_again_and_applies(settings, openai_standin):
    """Renaming another day moves the trip on; the suggestion's finding is still
    there and its edits still apply, so approving applies it on the trip as it
    is now (it used to be a 409 and a lost suggestion)."""
    openai_standin.responder = pick_first_fix
    with agent_client(settings, openai_standin) as client:
        alice, trip, suggestion = _trip_with_suggestion(client)
        assert op(client, trip["id"], "update_day", dayId=trip["days"][1]["id"], title="Sintra").status_code == 200
        version = client.get(f"/api/trips/{trip['id']}").json()["data"]["version"]
        r = _approve(client, trip["id"], suggestion["id"])
        assert r.status_code == 200, r.text
        assert r.json()["data"]["version"] == version + 1 and r.json()["data"]["days"][1]["title"] == "Sintra"
        r = _approve(client, trip["id"], suggestion["id"])
        assert r.status_code == 409 and r.json()["error"]["suggestionStatus"] == "applied"
        review = client.get(f"/api/trips/{trip['id']}/days/{trip['days'][0]['id']}/review").json()["data"]
        assert "unreachable" not in [f["kind"] for f in review["findings"]]


def test_expired_suggestion_is_refused_and_marked(settings, openai_standin):
    now = [time.time()]
    openai_standin.responder = pick_first_fix
    with agent_client(settings, openai_standin, clock=lambda: now[0]) as client:
        alice, trip, suggestion = _trip_with_suggestion(client)
        now[0] += 3 * 3600   # the decision said 120 minutes
        assert events(client, trip["id"])["suggestions"] == []
        r = _approve(client, trip["id"], suggestion["id"])
        assert r.status_code == 409 and r.json()["error"]["code"] == "expired"
        r = _approve(client, trip["id"], suggestion["id"])
        assert r.status_code == 409 and r.json()["error"]["suggestionStatus"] == "expired"


def test_approve_body_is_validated(settings, openai_standin):
    openai_standin.responder = pick_first_fix
    with agent_client(settings, openai_standin) as client:
        alice, trip, suggestion = _trip_with_suggestion(client)
        base = f"/api/trips/{trip['id']}/agent/suggestions"
        assert client.post(f"{base}/{suggestion['id']}/approve", json={}).status_code == 422
        assert client.post(f"{base}/{suggestion['id']}/approve",
                           json={"id": "other", "approved": True}).status_code == 422
        assert client.post(f"{base}/{suggestion['id']}/approve",
                           json={"approved": False, "reason": "x" * 501}).status_code == 422
        assert client.post(f"{base}/missing/approve", json={"approved": True}).status_code == 404


def _http_user(base_url: str, name: str) -> httpx.Client:
    c = httpx.Client(base_url=base_url, timeout=20)
    r = c.post("/api/auth/signup", json={"username": name, "password": "correct horse"})
    assert r.status_code == 201, r.text
    return c


def test_two_members_approve_at_once_exactly_one_applies(settings, openai_standin):
    openai_standin.responder = pick_first_fix
    app = create_app(ai_settings(settings, openai_standin), agent_debounce_s=FAST_DEBOUNCE_S)
    with LiveServer(app) as server:
        alice, bob = _http_user(server.url, "alice"), _http_user(server.url, "bob")
        try:
            trip = alice.post("/api/trips", json={"title": "Lisbon", "startDate": "2026-12-10", "days": 2,
                                                  "destination": {"name": "Lisbon", "lat": 38.72, "lng": -9.14},
                                                  "timezone": "Europe/Lisbon"}).json()["data"]
            invite = alice.post(f"/api/trips/{trip['id']}/invites", json={"role": "editor"}).json()["data"]
            assert bob.post(f"/api/invites/{invite['token']}/accept", json={}).status_code == 200
            make_set_time_unreachable(alice, trip["id"], trip["days"][0]["id"])
            [suggestion] = _pending(alice, trip["id"])

            url = f"/api/trips/{trip['id']}/agent/suggestions/{suggestion['id']}/approve"
            start = threading.Barrier(2)
            results: dict[str, httpx.Response] = {}

            def approve(name: str, c: httpx.Client) -> None:
                start.wait()
                results[name] = c.post(url, json={"approved": True})

            threads = [threading.Thread(target=approve, args=item) for item in (("alice", alice), ("bob", bob))]
            for t in threads:
                t.start()
            for t in threads:
                t.join(20)
            codes = sorted(r.status_code for r in results.values())
            assert codes == [200, 409], {k: (r.status_code, r.text) for k, r in results.items()}
            loser = next(r for r in results.values() if r.status_code == 409)
            assert loser.json()["error"]["code"] == "not_pending"
            final = alice.get(f"/api/trips/{trip['id']}").json()["data"]
            assert final["version"] == suggestion["tripVersion"] + 1   # applied exactly once
            ops = [m for m in alice.get(f"/api/trips/{trip['id']}/agent/events").json()["data"]["messages"]
                   if m["source"] == "operation" and m["parts"][1]["data"]["via"] == "suggestion"]
            assert len(ops) == 1
            assert ops[0]["parts"][1]["data"]["args"] == suggestion["patch"]["args"]
        finally:
            alice.close()
            bob.close()


def test_a_set_time_just_before_closing_gives_the_computed_fix_as_a_suggestion(settings, openai_standin,
                                                                                google_standin):
    """The headline case: lunch edited to arrive at a restaurant just before it closes for its
    midday break. The evaluator reads the restaurant's hours (Google, through the cache), so
    review's new `closed` risk reaches the model, and the suggestion's patch is the fix review
    computed, exactly."""
    google_standin.today = date(2026, 12, 10)          # the trip's date: dated hours, confirmed
    openai_standin.responder = pick_first_fix
    with agent_client(google_settings(settings, google_standin), openai_standin) as client:
        signup(client, "alice")
        trip = new_trip(client)
        day = trip["days"][0]["id"]
        assert op(client, trip["id"], "insert_stop", dayId=day, kind="sight", name="Castelo de São Jorge",
                  placeId="ChIJ_castelo_jorge", lat=38.7139, lng=-9.1335, durationMin=120).status_code == 200
        r = op(client, trip["id"], "insert_stop", dayId=day, kind="food", name="Tasca da Esquina",
               placeId="ChIJ_tasca_esquina", lat=38.7131, lng=-9.1601, meal="lunch", durationMin=60,
               setTime="12:30")
        lunch = r.json()["data"]["trip"]["days"][0]["stops"][-1]["id"]
        time.sleep(FAST_DEBOUNCE_S * 8)
        assert openai_standin.request_count == 0, "a lunch that fits is no risk: no model call"

        # 14:20 + 60 min + 30 before closing runs past the 15:00 break.
        assert op(client, trip["id"], "update_stop", stopId=lunch, setTime="14:20").status_code == 200
        [suggestion] = _pending(client, trip["id"])
        assert openai_standin.request_count == 1
        sent = json.loads(openai_standin.requests[0].body["input"])
        [risk] = sent["newRisks"]
        assert risk["kind"] == "closed" and risk["stopIds"] == [lunch] and "15:00" in risk["message"]
        review = client.get(f"/api/trips/{trip['id']}/days/{day}/review").json()["data"]
        computed = next(f for f in review["findings"] if f["kind"] == "closed")["fixes"][0]
        # The nearest start that leaves lunch and its 30 minutes before the break.
        assert computed["args"] == {"stopId": lunch, "setTime": "13:30"}
        assert suggestion["patch"] == {"edits": computed["edits"], "op": computed["op"], "args": computed["args"],
                                       "label": computed["label"]}

        r = _approve(client, trip["id"], suggestion["id"])
        assert r.status_code == 200, r.text
        after = client.get(f"/api/trips/{trip['id']}/days/{day}/review").json()["data"]
        assert after["status"] == "ok" and after["findings"] == []


def test_an_evaluation_judges_its_own_edits_not_the_ones_after_it(settings, openai_standin):
    """A burst whose debounce ended before the next edit committed judges the
    trip its own edits left; the next edit's burst raises that edit's risks
    (once, not twice)."""
    openai_standin.responder = pick_first_fix
    with agent_client(settings, openai_standin) as client:
        svc = client.app.state.services
        [evaluator] = [h for h in svc.db.changes.handlers(Phase.AGENT, OpsApplied) if isinstance(h, Evaluator)]
        svc.db.changes.unsubscribe(evaluator)   # the test drives it by hand
        seen: list = []
        svc.db.changes.subscribe(Phase.AGENT, OpsApplied, seen.append)
        signup(client, "alice")
        trip = new_trip(client)
        make_set_time_unreachable(client, trip["id"], trip["days"][0]["id"])
        first_edit, second_edit = seen

        def judge(event):
            burst = _Burst(event.before, event.after, event.actor_id, 0.0, list(event.summaries))
            client.portal.call(evaluator.evaluate, trip["id"], burst)

        judge(first_edit)   # a long visit alone is fine, though the stored trip is not by now
        assert openai_standin.request_count == 0
        judge(second_edit)
        assert openai_standin.request_count == 1
        assert len(_pending(client, trip["id"])) == 1


def test_a_suggestion_the_trip_keeps_moving_under_stays_pending(settings, openai_standin):
    """Each time the approval has checked the suggestion against the trip as
    it is, another member's edit lands before its write. After three tries it
    gives up with a 409 that says to try again, and it is still pending, so
    trying again can work. It used to mark it stale (the next try was a 409
    `not_pending`) and have the agent look at the day again, for a suggestion
    that applied all along."""
    openai_standin.responder = pick_first_fix
    with agent_client(settings, openai_standin) as client:
        alice, trip, suggestion = _trip_with_suggestion(client)
        assert op(client, trip["id"], "update_day", dayId=trip["days"][1]["id"], title="Sintra").status_code == 200
        svc = client.app.state.services
        read, edits = svc.trip_cache.entry, iter(range(100))

        async def read_then_someone_edits(trip_id):
            entry = await read(trip_id)
            await apply_op(svc.trips, trip_id, alice["id"], "update_day",
                           {"dayId": trip["days"][1]["id"], "title": f"Sintra {next(edits)}"})
            return entry

        svc.trip_cache.entry = read_then_someone_edits
        calls = openai_standin.request_count
        r = _approve(client, trip["id"], suggestion["id"])
        svc.trip_cache.entry = read
        assert r.status_code == 409 and r.json()["error"]["code"] == "trip_changing", r.text
        assert r.json()["error"]["message"] == "The trip kept changing while this suggestion was being applied. " \
                                               "Try again."
        assert [s["id"] for s in events(client, trip["id"])["suggestions"]] == [suggestion["id"]]
        r = _approve(client, trip["id"], suggestion["id"])
        assert r.status_code == 200, r.text
        assert reachable(r.json()["data"]["days"][0])
        eventually(lambda: len(svc.background) == 0)
        assert openai_standin.request_count == calls   # nothing to look at again


def test_harmless_edits_on_a_trip_that_already_has_a_risk_stay_quiet(settings, openai_standin):
    """The risk was raised once. Renaming the stops it is about, their notes,
    the day's title, the days' order, the trip's title and dates, a stop on
    another day, an expense: none brings a new risk, so no model call and
    nothing said; the suggestion stays as it was."""
    openai_standin.responder = pick_first_fix
    with agent_client(settings, openai_standin) as client:
        alice = signup(client, "alice")
        trip = new_trip(client, days=3)
        t, (d0, d1, d2) = trip["id"], [d["id"] for d in trip["days"]]
        first, second = make_set_time_unreachable(client, t, d0)
        [suggestion] = _pending(client, t)
        svc = client.app.state.services
        eventually(lambda: len(svc.background) == 0)
        calls = openai_standin.request_count
        for name, args in [("update_stop", {"stopId": second, "note": "Bring water"}),
                           ("update_stop", {"stopId": second, "name": "Pena Palace"}),
                           ("update_stop", {"stopId": first, "note": "Early"}),
                           ("update_day", {"dayId": d0, "title": "Sintra day"}),
                           ("reorder_days", {"dayIds": [d1, d0, d2]}),
                           ("update_trip", {"title": "Lisbon and Sintra", "startDate": "2026-12-11"}),
                           ("insert_stop", {"dayId": d2, "kind": "sight", "name": "Oceanário", "lat": 38.7635,
                                            "lng": -9.0937}),
                           ("add_expense", {"title": "Tickets", "amountMinor": 1000, "currency": "EUR",
                                            "paidBy": alice["id"]})]:
            assert op(client, t, name, **args).status_code == 200, name
            eventually(lambda: len(svc.background) == 0)   # its evaluation (and the resolver) ran
            assert openai_standin.request_count == calls, name
        assert [s["id"] for s in events(client, t)["suggestions"]] == [suggestion["id"]]
        assert [m["id"] for m in events(client, t)["messages"] if m["source"] == "threshold"] == \
            [suggestion["messageId"]]
