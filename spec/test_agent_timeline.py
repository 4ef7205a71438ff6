"""The shared timeline: messages, events polling, attachments, ambient replies
and stop-comment mentions, against the OpenAI stand-in."""

from __future__ import annotations

import json

import httpx

from app.web.application import create_app
from helpers import LiveServer, join, new_trip, op, png_bytes, signup, use
from standins.openai_standin import ai_settings
from test_agent_support import agent_client, eventually, events, user_message

PNG = png_bytes()
MESSAGE_KEYS = {"id", "seq", "role", "parts", "actorUserId", "actorName", "source", "stopId", "createdAt"}


def post(client, trip_id, **body):
    return client.post(f"/api/trips/{trip_id}/agent/messages", json=body)


def upload(client, trip_id, name: str, data: bytes) -> dict:
    r = client.post(f"/api/trips/{trip_id}/media", files={"file": (name, data)})
    assert r.status_code == 201, r.text
    return r.json()["data"]


def test_the_agent_is_404_without_ai_but_the_timeline_and_suggestions_answer(client):
    signup(client, "alice")
    trip = new_trip(client)
    base = f"/api/trips/{trip['id']}/agent"
    assert client.post(f"{base}/chat", json={"messages": [user_message("hi")]}).status_code == 404
    # The timeline (the group's chat: spec/test_group_chat.py) and the suggestion decisions work without AI
    # (outside assistants file suggestions too).
    assert post(client, trip["id"], text="hi").status_code == 201
    assert client.get(f"{base}/messages").status_code == 200
    assert client.get(f"{base}/events?after=0").status_code == 200
    for action in ("approve", "apply", "dismiss"):
        r = client.post(f"{base}/suggestions/x/{action}", json={"approved": True})
        assert r.status_code == 404 and r.json()["error"]["code"] == "suggestion_not_found"


def test_members_only(settings, openai_standin):
    with agent_client(settings, openai_standin) as client:
        alice, mallory = signup(client, "alice"), signup(client, "mallory")
        use(client, alice)
        trip = new_trip(client)
        use(client, mallory)
        assert client.get(f"/api/trips/{trip['id']}/agent/messages").status_code == 404
        assert post(client, trip["id"], text="hi").status_code == 404
        client.cookies.clear()
        assert client.get(f"/api/trips/{trip['id']}/agent/events").status_code == 401


def test_post_message_validates_and_echoes_the_row(settings, openai_standin):
    with agent_client(settings, openai_standin) as client:
        alice = signup(client, "alice")
        trip = new_trip(client)
        assert post(client, trip["id"], text="   ").status_code == 422
        assert post(client, trip["id"]).status_code == 422
        assert post(client, trip["id"], text="x" * 4001).status_code == 422
        r = post(client, trip["id"], text="  Who books the train?  ")
        assert r.status_code == 201, r.text
        data = r.json()["data"]
        assert data["addressed"] is False
        message = data["message"]
        assert set(message) == MESSAGE_KEYS
        assert message["parts"] == [{"type": "text", "text": "Who books the train?"}]
        assert message["role"] == "user" and message["source"] == "chat"
        assert message["actorUserId"] == alice["id"] and message["actorName"] == "alice"
        # A plain message with no agent reply before it is the group's: no model call at all.
        settle(client)
        assert openai_standin.request_count == 0
        assert [m["role"] for m in events(client, trip["id"])["messages"]] == ["user"]


def test_files_must_be_this_trips_uploads(settings, openai_standin):
    with agent_client(settings, openai_standin) as client:
        signup(client, "alice")
        trip, other = new_trip(client), new_trip(client)
        mine = upload(client, trip["id"], "plan.md", b"# Day 1\nCastle at 10")
        theirs = upload(client, other["id"], "x.png", PNG)
        for url in ("https://evil.example/a.png", "http://169.254.169.254/latest/meta-data",
                    "data:image/png;base64,AAAA", theirs["url"], f"/api/uploads/trips/{trip['id']}/../x.png",
                    f"https://evil.example{mine['url']}"):
            r = post(client, trip["id"], text="see", files=[{"type": "file", "mediaType": "image/png", "url": url}])
            assert r.status_code == 422, url
            assert r.json()["error"]["field"].startswith("files")
        too_many = [{"type": "file", "mediaType": "text/markdown", "url": mine["url"]}] * 9
        assert post(client, trip["id"], files=too_many).status_code == 422
        openai_standin.reply_json({"addressed": False})
        r = post(client, trip["id"], files=[{"type": "file", "mediaType": "image/png", "url": mine["url"],
                                             "filename": "lies.png"}])
        assert r.status_code == 201, r.text
        # Our record of the upload wins over what the client claims.
        assert r.json()["data"]["message"]["parts"] == [
            {"type": "file", "mediaType": "text/markdown", "url": mine["url"], "filename": "plan.md"}]


def test_events_return_only_newer_messages(settings, openai_standin):
    with agent_client(settings, openai_standin) as client:
        signup(client, "alice")
        trip = new_trip(client)
        day = trip["days"][0]["id"]
        assert client.get(f"/api/trips/{trip['id']}/agent/events?after=-1").status_code == 422
        assert client.get(f"/api/trips/{trip['id']}/agent/events?after=abc").status_code == 422
        first = events(client, trip["id"])
        assert first == {"latestSeq": 0, "tripVersion": trip["version"], "messages": [], "suggestions": []}
        op(client, trip["id"], "update_day", dayId=day, title="Arrival")
        op(client, trip["id"], "update_day", dayId=day, note="Check in at 3")
        second = events(client, trip["id"], after=first["latestSeq"])
        assert [m["seq"] for m in second["messages"]] == [1, 2]
        assert second["latestSeq"] == 2 and second["tripVersion"] == trip["version"] + 2
        assert all(m["source"] == "operation" and m["role"] == "system" for m in second["messages"])
        op(client, trip["id"], "update_day", dayId=day, title="Arrival day")
        third = events(client, trip["id"], after=second["latestSeq"])
        assert [m["seq"] for m in third["messages"]] == [3]
        assert events(client, trip["id"], after=third["latestSeq"])["messages"] == []
        history = client.get(f"/api/trips/{trip['id']}/agent/messages").json()["data"]
        assert [m["seq"] for m in history["messages"]] == [1, 2, 3] and history["suggestions"] == []


def test_mention_is_answered_with_read_tools_only(settings, openai_standin):
    openai_standin.reply_text("Belém is about 25 minutes by tram 15.")
    with agent_client(settings, openai_standin) as client:
        signup(client, "alice")
        trip = new_trip(client)
        r = post(client, trip["id"], text="@agent how do we get to Belém?")
        assert r.json()["data"]["addressed"] is True
        assert r.json()["data"]["message"]["source"] == "mention"
        reply = eventually(lambda: [m for m in events(client, trip["id"])["messages"] if m["role"] == "assistant"])
        assert reply[0]["parts"] == [{"type": "text", "text": "Belém is about 25 minutes by tram 15."}]
        assert reply[0]["actorName"] == "Wayline agent"
        body = openai_standin.requests[0].body
        names = {t["name"] for t in body["tools"]}
        assert "placeSearch" in names and not names & {"insert_stop", "update_stop", "move_stop"}
        assert "@agent" in body["instructions"]          # the ambient prompt, which points to @agent for writes


def test_confirmation_after_an_agent_message_is_addressed_without_asking_the_model(settings, openai_standin):
    openai_standin.reply_text("Shall I add the castle at 10:00?")
    openai_standin.reply_text("Use @agent in the agent panel and I will write it in.")
    with agent_client(settings, openai_standin) as client:
        signup(client, "alice")
        trip = new_trip(client)
        post(client, trip["id"], text="@agent plan the morning")
        eventually(lambda: [m for m in events(client, trip["id"])["messages"] if m["role"] == "assistant"])
        post(client, trip["id"], text="确认")
        replies = eventually(lambda: [m for m in events(client, trip["id"])["messages"]
                                      if m["role"] == "assistant"][1:])
        assert "agent panel" in replies[0]["parts"][0]["text"]
        assert openai_standin.request_count == 2
        assert all(r.body.get("text", {}).get("format", {}).get("name") != "is_addressed"
                   for r in openai_standin.requests)


def settle(client) -> None:
    """Background work the messages started (replies, the model's is_addressed) has finished."""
    eventually(lambda: len(client.app.state.services.background) == 0)


def agent_replied(client, openai_standin, trip_id: str, text: str = "Noma has a table at 19:00.") -> None:
    openai_standin.reply_text(text)
    post(client, trip_id, text="@agent is there a table at Noma tonight?")
    eventually(lambda: [m for m in events(client, trip_id)["messages"] if m["role"] == "assistant"])
    settle(client)


def test_a_message_for_a_member_or_a_reaction_costs_no_model_call(settings, openai_standin):
    with agent_client(settings, openai_standin) as client:
        alice, bob = signup(client, "alice"), signup(client, "bob")
        use(client, alice)
        trip = new_trip(client)
        join(client, alice, trip["id"], bob)
        for text in ("ok", "thanks!", "👍", "🎉🎉", "see you at 9"):      # no agent reply before: the group's
            r = post(client, trip["id"], text=text)
            assert r.status_code == 201 and r.json()["data"]["addressed"] is False
        settle(client)
        assert openai_standin.request_count == 0
        agent_replied(client, openai_standin, trip["id"])
        assert openai_standin.request_count == 1
        # Right after the agent's reply: a message that names a member is that member's, and a
        # reaction is nobody's to answer. Neither asks the model anything.
        for text in ("Bob, are you OK with Noma at 19:00?", "bob what do you think", "What do you think, @bob?",
                     "thanks!", "🎉", "?!"):
            r = post(client, trip["id"], text=text)
            assert r.status_code == 201 and r.json()["data"]["addressed"] is False, text
            settle(client)
            assert openai_standin.request_count == 1, text
        assert [m["role"] for m in events(client, trip["id"])["messages"]].count("assistant") == 1


async def age_agent_replies(db, trip_id: str) -> None:
    def work(tx):
        tx.execute("UPDATE agent_messages SET created_at = '2020-01-01T00:00:00.000Z' "
                   "WHERE trip_id = ? AND role = 'assistant'", (trip_id,))
        tx.touch(trip_id, "timeline")

    await db.write(work)


def test_group_only_and_an_old_agent_reply_open_no_turn(settings, openai_standin):
    with agent_client(settings, openai_standin) as client:
        signup(client, "alice")
        trip = new_trip(client)
        agent_replied(client, openai_standin, trip["id"])
        r = post(client, trip["id"], text="what about lunch?", groupOnly=True)   # the member chose the group
        assert r.status_code == 201 and r.json()["data"]["addressed"] is False
        settle(client)
        assert openai_standin.request_count == 1
        agent_replied(client, openai_standin, trip["id"])
        client.portal.call(age_agent_replies, client.app.state.services.db, trip["id"])
        r = post(client, trip["id"], text="what about lunch?")     # hours later: a question for the group
        assert r.json()["data"]["addressed"] is False
        settle(client)
        assert openai_standin.request_count == 2


def test_an_unclear_message_right_after_the_agent_asks_the_model(settings, openai_standin):
    with agent_client(settings, openai_standin) as client:
        signup(client, "alice")
        trip = new_trip(client)
        agent_replied(client, openai_standin, trip["id"])
        openai_standin.reply_json({"addressed": False})
        r = post(client, trip["id"], text="I'll book the tickets tonight")
        assert r.json()["data"]["addressed"] is False
        settle(client)
        assert [r.body["text"]["format"]["name"] for r in openai_standin.requests[1:]] == ["is_addressed"]
        assert [m["role"] for m in events(client, trip["id"])["messages"]].count("assistant") == 1


def test_stop_comment_mention_is_answered_in_the_thread(settings, openai_standin):
    openai_standin.reply_text("It opens at 10:00; arrive early to skip the queue.")
    with agent_client(settings, openai_standin) as client:
        signup(client, "alice")
        trip = new_trip(client)
        r = op(client, trip["id"], "insert_stop", dayId=trip["days"][0]["id"], kind="sight", name="Torre de Belém")
        stop = r.json()["data"]["trip"]["days"][0]["stops"][0]
        url = f"/api/trips/{trip['id']}/stops/{stop['id']}/comments"
        r = client.post(url, json={"body": "@agent when does it open?"})
        assert r.status_code == 201, r.text
        comments = eventually(lambda: [c for c in client.get(url).json()["data"]["comments"] if c["userId"] is None])
        assert comments[0]["author"] == "Wayline agent"
        assert comments[0]["body"] == "It opens at 10:00; arrive early to skip the queue."
        thread = [m for m in events(client, trip["id"])["messages"] if m["source"] == "stop_comment"]
        assert [(m["role"], m["stopId"]) for m in thread] == [("user", stop["id"]), ("assistant", stop["id"])]


def test_read_trip_media_reads_this_trips_uploads_from_disk(settings, openai_standin):
    with agent_client(settings, openai_standin) as client:
        signup(client, "alice")
        trip = new_trip(client)
        notes = upload(client, trip["id"], "tickets.csv", b"what,price\ncastle,15\n")
        photo = upload(client, trip["id"], "map.png", PNG)
        openai_standin.reply_function_calls([("readTripMedia", {"url": notes["url"]}),
                                             ("readTripMedia", {"url": photo["url"]})])
        openai_standin.reply_text("The castle costs 15.")
        r = client.post(f"/api/trips/{trip['id']}/agent/chat",
                        json={"messages": [user_message("What does the castle cost?")]})
        assert r.status_code == 200
        outputs = [json.loads(f[6:]) for f in r.text.split("\n\n") if f.startswith("data: {")]
        texts = [c["output"] for c in outputs if c["type"] == "tool-output-available"]
        assert "castle,15" in texts[0]["text"] and texts[1]["attached"] is True
        follow_up = json.dumps(openai_standin.requests[1].body["input"])
        assert "castle,15" in follow_up and "data:image/png;base64," in follow_up


def test_chat_turn_is_persisted_when_the_client_goes_away(settings, openai_standin):
    openai_standin.reply_text("A long answer " * 40, chunk_delay=0.01)
    app = create_app(ai_settings(settings, openai_standin))
    with LiveServer(app) as server, httpx.Client(base_url=server.url, timeout=20) as c:
        assert c.post("/api/auth/signup", json={"username": "alice", "password": "correct horse"}).status_code == 201
        trip = new_trip(c)
        with c.stream("POST", f"/api/trips/{trip['id']}/agent/chat",
                      json={"messages": [user_message("Tell me everything", "u-gone")]}) as r:
            first = next(r.iter_lines())
            assert first.startswith("data: ")
        # The client is gone; the turn finishes and both messages are stored once.
        def stored():
            ms = c.get(f"/api/trips/{trip['id']}/agent/messages").json()["data"]["messages"]
            done = [m for m in ms if m["role"] == "assistant" and m["parts"]
                    and m["parts"][0]["text"].endswith("A long answer ")]
            return ms if done else None
        messages = eventually(stored)
        assert [m["id"] for m in messages].count("u-gone") == 1
        assert [m["role"] for m in messages] == ["user", "assistant"]


def test_join_helper_members_see_the_same_timeline(settings, openai_standin):
    openai_standin.reply_json({"addressed": False})
    with agent_client(settings, openai_standin) as client:
        alice, bob = signup(client, "alice"), signup(client, "bob")
        use(client, alice)
        trip = new_trip(client)
        join(client, alice, trip["id"], bob, role="viewer")
        assert post(client, trip["id"], text="Viewers can chat too").status_code == 201
        use(client, alice)
        assert [m["actorName"] for m in events(client, trip["id"])["messages"]] == ["bob"]
