"""The agent on a trip several members edit at once, over HTTP against the
OpenAI stand-in: a risk is raised once, whatever lands while the model decides."""

from __future__ import annotations

import json
import threading
from contextlib import ExitStack

import httpx

from app.web.application import create_app
from helpers import LiveServer, join, new_trip, op, signup, use
from standins.openai_standin import ai_settings
from test_agent_support import (UNROUTABLE, agent_client, eventually, events, make_set_time_unreachable,
                                pick_first_fix)


def test_a_risk_is_raised_even_when_another_member_edits_while_the_model_decides(settings, openai_standin):
    """Alice's edits make a set time unreachable; while the model decides, Bob
    renames the other day. The decision arrives for a trip that moved on, so it
    is not stored as it was, and Bob's rename brings no new risk of its own: the
    risk used to be lost (one model call, no suggestion, nothing said). Now the
    next evaluation judges from before Alice's edits and raises it, once."""
    openai_standin.responder = pick_first_fix
    with agent_client(settings, openai_standin) as client:
        alice, bob = signup(client, "alice"), signup(client, "bob")
        use(client, alice)
        trip = new_trip(client)
        join(client, alice, trip["id"], bob)
        use(client, alice)
        openai_standin.hold()
        make_set_time_unreachable(client, trip["id"], trip["days"][0]["id"])
        openai_standin.wait_for_requests(1)          # the model is deciding about Alice's edits
        use(client, bob)
        assert op(client, trip["id"], "update_day", dayId=trip["days"][1]["id"], title="Sintra").status_code == 200
        openai_standin.release()

        [suggestion] = eventually(lambda: events(client, trip["id"])["suggestions"])
        assert suggestion["tripVersion"] == client.get(f"/api/trips/{trip['id']}").json()["data"]["version"]
        assert openai_standin.request_count == 2
        second = openai_standin.requests[1].body["input"]
        assert "Sintra" in second and "Palácio da Pena" in second   # both bursts' edits, judged together
        said = [m for m in events(client, trip["id"])["messages"] if m["source"] == "threshold"]
        assert len(said) == 1


def test_four_members_making_risky_edits_at_once_hear_from_the_agent_once(settings, openai_standin):
    """Four members, four connections, each makes a set time unreachable on
    their own day at the same moment: one burst, one model call, one line in
    the timeline, not four. (The debounce is a knob: long enough here that a
    loaded machine cannot split requests held together into two bursts.)"""
    openai_standin.responder = pick_first_fix
    app = create_app(ai_settings(settings.with_(weather_base_url=UNROUTABLE), openai_standin),
                     agent_debounce_s=2.0)
    with LiveServer(app) as server, ExitStack() as stack:
        names = ("alice", "bob", "carol", "dan")
        clients = [stack.enter_context(httpx.Client(base_url=server.url, timeout=30)) for _ in names]
        for name, c in zip(names, clients):
            assert c.post("/api/auth/signup", json={"username": name, "password": "correct horse"}).status_code == 201
        owner = clients[0]
        trip = owner.post("/api/trips", json={"title": "Lisbon", "startDate": "2026-12-10", "days": 4,
                                              "timezone": "Europe/Lisbon"}).json()["data"]
        for c in clients[1:]:
            token = owner.post(f"/api/trips/{trip['id']}/invites", json={"role": "editor"}).json()["data"]["token"]
            assert c.post(f"/api/invites/{token}/accept", json={}).status_code == 200
        start = threading.Barrier(len(clients))

        def edit(c, day):
            start.wait()
            make_set_time_unreachable(c, trip["id"], day["id"])

        threads = [threading.Thread(target=edit, args=pair) for pair in zip(clients, trip["days"])]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        [suggestion] = eventually(lambda: events(owner, trip["id"])["suggestions"])
        eventually(lambda: len(app.state.services.background) == 0)
        assert openai_standin.request_count == 1
        risks = json.loads(openai_standin.requests[0].body["input"])["newRisks"]
        assert len(risks) == 4   # every member's risk, in the one call
        said = [m for m in events(owner, trip["id"])["messages"] if m["source"] == "threshold"]
        assert [m["id"] for m in said] == [suggestion["messageId"]]
