"""The group chat on a server without AI (the keyless default): members post
to the trip's timeline (`POST /api/trips/:tripId/agent/messages`) and read
each other there, live; nothing is ever the agent's (`addressed: false`),
no model is asked, and the agent's own routes stay 404. Through the real
app (on uvicorn where a live stream is read), with no OpenAI key configured."""

from __future__ import annotations

import sqlite3

from app.trips import store
from helpers import new_trip, signup
from test_agent_support import eventually, user_message
from test_live import Feed, a_trip, member_client, run


def test_without_ai_a_members_message_reaches_the_other_member_live_and_costs_nothing(settings):
    assert not settings.ai_enabled

    async def test(server):
        alice, bob = await member_client(server.url, "alice"), await member_client(server.url, "bob")
        trip = await a_trip(alice, (bob, "editor"))
        t = trip["id"]
        async with Feed(bob, t) as feed:
            await feed.hello()
            r = await alice.post(f"/api/trips/{t}/agent/messages", json={"text": "Dinner at 19?"})
            assert r.status_code == 201, r.text
            answer = r.json()["data"]
            assert answer["addressed"] is False
            sent = answer["message"]
            assert (sent["role"], sent["source"], sent["actorUserId"]) == ("user", "chat", alice.user["id"])
            # Bob's open page hears of it at once, and reads it in the timeline.
            await feed.next("timeline", where=lambda data: data == {"seq": sent["seq"]})
            polled = (await bob.get(f"/api/trips/{t}/agent/events?after=0")).json()["data"]
            said = [(m["actorUserId"], m["parts"]) for m in polled["messages"] if m["role"] == "user"]
            assert said == [(alice.user["id"], [{"type": "text", "text": "Dinner at 19?"}])]
            history = (await bob.get(f"/api/trips/{t}/agent/messages")).json()["data"]["messages"]
            assert sent["id"] in [m["id"] for m in history]
        await alice.aclose()
        await bob.aclose()

    run(settings, test)
    with sqlite3.connect(settings.db_path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM ai_usage").fetchone()[0] == 0


def test_without_ai_nothing_is_the_agents_whatever_the_words(client):
    """An @agent mention, a question right after an old AI reply and a
    street-view request would each be the agent's with AI on; without it
    they are the group's: not addressed, no reply appended, no background
    work left running."""
    signup(client, "alice")
    trip = new_trip(client)
    base = f"/api/trips/{trip['id']}/agent"
    svc = client.app.state.services
    # The AI's reply from when this server had a key: a question now would continue its turn.
    client.portal.call(svc.db.write, lambda tx: store.append_message(
        tx, trip["id"], role="assistant", parts=[{"type": "text", "text": "Two options: A or B."}], source="chat",
        actor_name="Wayline agent"))
    for text in ("which one is cheaper?", "@agent what should we do on day 1?", "street view of Castelo de São Jorge"):
        r = client.post(f"{base}/messages", json={"text": text})
        assert r.status_code == 201, r.text
        assert r.json()["data"]["addressed"] is False, text
    eventually(lambda: len(svc.background) == 0)
    messages = client.get(f"{base}/messages").json()["data"]["messages"]
    assert [m["role"] for m in messages if m["source"] != "operation"] == ["assistant", "user", "user", "user"]
    # The agent's own routes stay off.
    assert client.post(f"{base}/chat", json={"messages": [user_message("hi")]}).status_code == 404
    assert client.get(f"{base}/messages/{messages[-1]['id']}/debug").status_code == 404


def test_without_ai_a_message_is_still_checked(client):
    signup(client, "alice")
    trip = new_trip(client)
    base = f"/api/trips/{trip['id']}/agent"
    for body in ({"text": "   "}, {}, {"text": "x" * 4001}):
        r = client.post(f"{base}/messages", json=body)
        assert r.status_code == 422 and r.json()["error"]["field"] == "text", r.text
    r = client.post(f"{base}/messages", json={"files": [{"type": "file", "mediaType": "image/png",
                                                         "url": "https://example.com/x.png"}]})
    assert r.status_code == 422 and r.json()["error"]["code"] == "refused_url", r.text
    assert client.get(f"{base}/messages").json()["data"]["messages"] == []
