"""Every AI feature, driven through its real entry point (HTTP, or the
background path a member's action starts), when the app-wide limits or the
member's own share refuse the reservation: the OpenAI stand-in receives
nothing at all, and the member sees the plain limit message (for the share,
429 `ai_user_limit` with when it renews), or for background features nothing
is posted and the log says the work was skipped."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

import pytest

from app.trips import store
from app.aiusage import BUSY_MESSAGE, BUSY_RETRY_S, LIMIT_MESSAGE
from helpers import new_trip, op, signup, use
from nodetest import ROOT, node_test
from test_agent_support import (agent_client, eventually, events, make_set_time_unreachable, of_type, sse_chunks,
                                user_message)

# refusal -> (settings, HTTP status, error code, what the member reads)
REFUSALS = {
    "daily_calls": ({"ai_daily_limit": 1}, 503, "ai_limit", LIMIT_MESSAGE),
    "concurrent": ({"ai_concurrent": 1}, 429, "busy", BUSY_MESSAGE),
    # 8 calls a day, a quarter each: the member's 2 are spent, the app has 6 left.
    "user_calls": ({"ai_daily_limit": 8, "ai_user_daily_share": 0.25}, 429, "ai_user_limit", None),
}


def use_up(client, refusal: str, member: dict) -> None:
    """Take the one slot there is (a finished call: the day's only call; or one
    still running), or the member's whole share (two finished calls of theirs)."""
    usage = client.app.state.services.aiusage
    if refusal == "user_calls":
        for _ in range(2):
            taken = client.portal.call(usage.reserve, member["id"], None, "copilot")
            client.portal.call(usage.finish, taken, "completed", 10, 5)
        return
    taken = client.portal.call(usage.reserve, "someone-else", None, "agent_chat")
    if refusal == "daily_calls":
        client.portal.call(usage.finish, taken, "completed", 10, 5)


def refused_over_http(response, refusal: str) -> None:
    _, status, code, message = REFUSALS[refusal]
    assert response.status_code == status, response.text
    error = response.json()["error"]
    # Every refusal says when to try again, in the body and as the standard header.
    assert response.headers["retry-after"] == str(error["retryAfterS"])
    if refusal == "user_calls":   # when it renews, in words and as data
        assert error["code"] == code and error["message"].startswith("You have used your share of today's AI help")
        assert error["resetsAt"].endswith("T00:00:00.000Z") and error["retryAfterS"] > 0
        return
    if refusal == "concurrent":   # a moment: slots free as running calls end
        assert error == {"code": code, "message": message, "retryAfterS": BUSY_RETRY_S}
        return
    # The spec's message word for word; when AI is back (the next 00:00 UTC) as data.
    assert error == {"code": code, "message": message, "resetsAt": error["resetsAt"],
                     "retryAfterS": error["retryAfterS"]}
    assert error["resetsAt"].endswith("T00:00:00.000Z") and 0 < error["retryAfterS"] <= 24 * 3600


def skipped_in_background(client, trip: dict, caplog, what: str, refusal: str) -> None:
    code = REFUSALS[refusal][2]
    eventually(lambda: f"{what} skipped: {code}" in caplog.text)
    assert all(m["role"] != "assistant" for m in events(client, trip["id"])["messages"]), "nothing is posted"
    assert events(client, trip["id"])["suggestions"] == []


# -- each feature's real entry point ---------------------------------------------------------


def copilot(client, trip, refusal, caplog):
    r = client.post(f"/api/trips/{trip['id']}/days/{trip['day']}/copilot", json={"question": "Is this day OK?"})
    refused_over_http(r, refusal)


def plan_day(client, trip, refusal, caplog):
    refused_over_http(client.post(f"/api/trips/{trip['id']}/days/{trip['day']}/optimize", json={}), refusal)


def agent_chat(client, trip, refusal, caplog):
    r = client.post(f"/api/trips/{trip['id']}/agent/chat",
                    json={"id": "chat1", "trigger": "submit-message", "messages": [user_message("Plan day one")]})
    if refusal == "user_calls":   # an explicit ask: refused before the stream starts, nothing stored
        refused_over_http(r, refusal)
        assert events(client, trip["id"])["messages"] == [m for m in events(client, trip["id"])["messages"]
                                                          if m["role"] == "system"]
        return
    chunks = sse_chunks(r)
    assert [c["errorText"] for c in of_type(chunks, "error")] == [REFUSALS[refusal][3]]
    # The error chunk is text only (the AI SDK's schema): the refusal's data comes just before it.
    [refused] = of_type(chunks, "data-refusal")
    assert refused["transient"] is True and refused["data"]["code"] == REFUSALS[refusal][2]
    assert chunks.index(refused) + 1 == chunks.index(of_type(chunks, "error")[0])
    assert of_type(chunks, "finish")[0]["finishReason"] == "error"


def agent_eval(client, trip, refusal, caplog):
    make_set_time_unreachable(client, trip["id"], trip["day"])  # a new material risk: the agent would speak up
    skipped_in_background(client, trip, caplog, "agent evaluation", refusal)


def agent_ambient_addressed(client, trip, refusal, caplog):
    # Right after the agent's reply, a statement: only the model can tell whether it is for the agent.
    svc = client.app.state.services
    client.portal.call(lambda: svc.db.write(lambda tx: store.append_message(
        tx, trip["id"], role="assistant", source="chat",
        parts=[{"type": "text", "text": "Noma is open until 23:00."}])))
    r = client.post(f"/api/trips/{trip['id']}/agent/messages", json={"text": "I'll book the tickets tonight"})
    assert r.status_code == 201 and r.json()["data"]["addressed"] is False
    eventually(lambda: f"ambient reply skipped: {REFUSALS[refusal][2]}" in caplog.text)
    assert [m["role"] for m in events(client, trip["id"])["messages"] if m["role"] != "system"] == ["assistant", "user"]


def agent_ambient_mention(client, trip, refusal, caplog):
    r = client.post(f"/api/trips/{trip['id']}/agent/messages", json={"text": "@agent how do we get to Belém?"})
    assert r.status_code == 201 and r.json()["data"]["addressed"] is True
    skipped_in_background(client, trip, caplog, "ambient reply", refusal)


def agent_ambient_comment(client, trip, refusal, caplog):
    url = f"/api/trips/{trip['id']}/stops/{trip['stop']}/comments"
    assert client.post(url, json={"body": "@agent when does it open?"}).status_code == 201
    skipped_in_background(client, trip, caplog, "stop comment reply", refusal)
    assert [c["author"] for c in client.get(url).json()["data"]["comments"]] == ["alice"]  # no agent reply


# entry point -> the feature its usage row (and its refusal log) names
ENTRY_POINTS = [
    (copilot, "copilot"),
    (plan_day, "plan_day"),
    (agent_chat, "agent_chat"),
    (agent_eval, "agent_eval"),
    (agent_ambient_addressed, "agent_ambient"),
    (agent_ambient_mention, "agent_ambient"),
    (agent_ambient_comment, "agent_ambient"),
]


@pytest.mark.parametrize("refusal", list(REFUSALS))
@pytest.mark.parametrize("entry, feature", ENTRY_POINTS, ids=[e.__name__ for e, _ in ENTRY_POINTS])
def test_a_refused_reservation_never_reaches_the_provider(settings, openai_standin, caplog, capsys,
                                                          entry, feature, refusal):
    caplog.set_level(logging.INFO, logger="wayline.agent")
    with agent_client(settings.with_(**REFUSALS[refusal][0]), openai_standin) as client:
        alice = signup(client, "alice")
        created = new_trip(client)
        day = created["days"][0]["id"]
        r = op(client, created["id"], "insert_stop", dayId=day, kind="sight", name="Torre de Belém",
               lat=38.6916, lng=-9.2160)
        stop = r.json()["data"]["trip"]["days"][0]["stops"][0]["id"]
        assert client.put("/api/users/preferences", json={}).status_code == 200
        use_up(client, refusal, alice)

        entry(client, {"id": created["id"], "day": day, "stop": stop}, refusal, caplog)
        eventually(lambda: len(client.app.state.services.background) == 0)

    assert openai_standin.request_count == 0, "nothing at all reached the provider"
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith('{"event":"AI_')]
    refusals = [line for line in lines if line["event"] == "AI_LIMIT_REACHED"]
    assert [(line["feature"], line["limit"]) for line in refusals] == [(feature, refusal)]


# -- the fair share (issue 22, failure 1) -------------------------------------------------------


def test_one_account_cannot_switch_ai_off_for_everyone(settings, openai_standin):
    """A fresh account sent 30 messages in 10 s and used the whole daily budget
    (WAYLINE_AI_DAILY_LIMIT=25): everyone's AI then answered 503 `ai_limit`
    until midnight UTC. Now each member may use a quarter of it; the rest of
    the group keeps its AI, and the admin page shows who used what."""
    from standins.openai_standin import Reply, message_item

    openai_standin.responder = lambda request: Reply(output=[message_item("Noted.")])
    limited = settings.with_(ai_daily_limit=25, ai_concurrent=50, ai_admins=("alice",))
    with agent_client(limited, openai_standin) as client:
        alice, mallory = signup(client, "alice"), signup(client, "mallory")
        use(client, mallory)
        theirs = new_trip(client)
        for i in range(30):   # the attack: every message asks the agent, each reply a model call
            r = client.post(f"/api/trips/{theirs['id']}/agent/messages", json={"text": f"@agent tell me a fact {i}"})
            assert r.status_code == 201, r.text
        eventually(lambda: len(client.app.state.services.background) == 0, timeout=60)
        spent = openai_standin.request_count
        assert spent == 6, f"mallory's share is 6 calls of 25, used {spent}"
        r = client.post(f"/api/trips/{theirs['id']}/agent/chat",
                        json={"messages": [user_message("@agent one more", "m31")]})
        assert r.status_code == 429 and r.json()["error"]["code"] == "ai_user_limit", r.text

        use(client, alice)
        mine = new_trip(client)
        r = client.post(f"/api/trips/{mine['id']}/agent/chat", json={"messages": [user_message("@agent hello", "a1")]})
        chunks = sse_chunks(r)
        assert not of_type(chunks, "error") and "".join(c["delta"] for c in of_type(chunks, "text-delta")) == "Noted."
        eventually(lambda: len(client.app.state.services.background) == 0)

        usage = client.get("/api/admin/ai-usage").json()["data"]
        assert usage["limits"]["userShare"] == 0.25 and usage["limits"]["userDailyCalls"] == 6
        by_name = {m["name"]: m for m in usage["members"]}
        assert by_name["mallory"]["calls"] == 6 and by_name["alice"]["calls"] == 1
        assert usage["today"]["calls"] == 7


# -- when AI is back ------------------------------------------------------------------------------


def test_the_day_limit_says_when_ai_is_back_and_it_is(settings, openai_standin):
    """Everyone's AI for the day is spent 29.6 s before midnight UTC (the
    end of the `day` the counts are kept by). The copilot's 503 says when AI
    is back, as `resetsAt` and `retryAfterS` (rounded up: a client that waits
    that long is never early) and as the Retry-After header; a chat turn's
    stream says the same in its data-refusal chunk. Waiting exactly that long
    brings AI back."""
    from standins.openai_standin import Reply, message_item

    openai_standin.responder = lambda request: Reply(output=[message_item("Noted.")])
    now = [datetime(2026, 12, 10, 23, 59, 30, 400_000, tzinfo=UTC).timestamp()]
    with agent_client(settings.with_(ai_daily_limit=1), openai_standin, clock=lambda: now[0]) as client:
        signup(client, "alice")
        trip = new_trip(client)
        use_up(client, "daily_calls", {})
        r = client.post(f"/api/trips/{trip['id']}/days/{trip['days'][0]['id']}/copilot",
                        json={"question": "Is this day OK?"})
        assert r.status_code == 503 and r.headers["retry-after"] == "30"
        assert r.json()["error"] == {"code": "ai_limit", "message": LIMIT_MESSAGE,
                                     "resetsAt": "2026-12-11T00:00:00.000Z", "retryAfterS": 30}
        chat = {"id": "chat1", "trigger": "submit-message", "messages": [user_message("Plan day one", "m1")]}
        chunks = sse_chunks(client.post(f"/api/trips/{trip['id']}/agent/chat", json=chat))
        assert [c["data"] for c in of_type(chunks, "data-refusal")] == [r.json()["error"]]

        now[0] += 30
        chat["messages"] = [user_message("Plan day one", "m2")]
        chunks = sse_chunks(client.post(f"/api/trips/{trip['id']}/agent/chat", json=chat))
        assert not of_type(chunks, "error") and "".join(c["delta"] for c in of_type(chunks, "text-delta")) == "Noted."
        eventually(lambda: len(client.app.state.services.background) == 0)



def test_the_page_says_when_ai_is_back_in_the_members_own_zone():
    """public/planner/aiback.js words `resetsAt` in the browser's zone: later
    today, at midnight, tomorrow at 01:00 (spec/js/aiback.test.mjs, in Tokyo,
    Lisbon, UTC and New York)."""
    node_test(ROOT / "spec" / "js" / "aiback.test.mjs")


def test_an_ask_bigger_than_what_is_left_of_the_share_is_refused_before_anything_is_stored(settings, openai_standin):
    """The member's share has 2,000 tokens left: less than a chat turn (3,000)
    or Optimize (2,500) reserves. Both are refused at once, 429, as their
    reservation would refuse them; the chat message is not stored first (it
    was, and then the turn failed under it) and no place is searched."""
    limited = settings.with_(ai_daily_tokens=40_000, ai_user_daily_share=0.25)   # a share of 10,000 tokens
    with agent_client(limited, openai_standin) as client:
        alice = signup(client, "alice")
        trip = new_trip(client)
        day = trip["days"][0]["id"]
        for name, lat, lng in (("Torre de Belém", 38.6916, -9.2160), ("Castelo de São Jorge", 38.7139, -9.1335)):
            assert op(client, trip["id"], "insert_stop", dayId=day, kind="sight", name=name,
                      lat=lat, lng=lng).status_code == 200
        assert client.put("/api/users/preferences", json={}).status_code == 200
        usage = client.app.state.services.aiusage
        taken = client.portal.call(usage.reserve, alice["id"], None, "copilot")
        client.portal.call(usage.finish, taken, "completed", 8_000, 0)

        r = client.post(f"/api/trips/{trip['id']}/agent/chat",
                        json={"id": "chat1", "trigger": "submit-message", "messages": [user_message("Plan day one")]})
        refused_over_http(r, "user_calls")   # the share's refusal: 429 ai_user_limit, when it renews
        assert [m for m in events(client, trip["id"])["messages"] if m["role"] != "system"] == []
        refused_over_http(client.post(f"/api/trips/{trip['id']}/days/{day}/optimize", json={}), "user_calls")
        # A smaller ask still fits: the share is not spent, only too small for these.
        client.portal.call(usage.check_share, alice["id"], trip["id"], "copilot")
    assert openai_standin.request_count == 0
