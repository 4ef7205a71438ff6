"""Reasoning chunks, turn ids, "Copy debug info", OpenTelemetry spans, the
agent panel's per-account state and actorUserId on member messages (issue 15
parts 3-5), against the OpenAI stand-in."""

from __future__ import annotations

import hashlib
import json

import pytest

from app.telemetry import Telemetry
from helpers import join, new_trip, op, signup, use
from standins.openai_standin import TEST_KEY
from test_agent_chat import chat, check_protocol, responded, start_write_turn
from test_agent_support import agent_client, eventually, events, of_type, user_message

SUMMARIES = ["Checking which stops are on day 1.", "Day 1 ends early, so there is room."]


def usage(client, sql: str, *params):
    db = client.app.state.services.db
    return [dict(r) for r in client.portal.call(db.fetchall, sql, params)]


# -- reasoning --------------------------------------------------------------------


def test_reasoning_summaries_stream_persist_and_never_go_back_to_the_model(settings, openai_standin):
    with agent_client(settings.with_(openai_reasoning_summary="auto"), openai_standin) as client:
        signup(client, "alice")
        trip = new_trip(client)
        openai_standin.reply_text("Day 1 has room for one more stop.", reasoning=SUMMARIES)
        chunks = check_protocol(chat(client, trip["id"], [user_message("Is day 1 full?")]))
        assert openai_standin.requests[0].body["reasoning"] == {"summary": "auto"}
        kinds = [c["type"] for c in chunks]
        assert kinds == ["start", "start-step",
                         "reasoning-start", *["reasoning-delta"] * 5, "reasoning-end",
                         "reasoning-start", *["reasoning-delta"] * 5, "reasoning-end",
                         "text-start", *["text-delta"] * 5, "text-end", "finish-step", "finish"]
        starts = [c["id"] for c in of_type(chunks, "reasoning-start")]
        assert len(set(starts)) == 2
        first = "".join(c["delta"] for c in of_type(chunks, "reasoning-delta") if c["id"] == starts[0])
        assert first == SUMMARIES[0]

        message_id = of_type(chunks, "start")[0]["messageId"]
        stored = next(m for m in events(client, trip["id"])["messages"] if m["id"] == message_id)
        assert stored["parts"] == [{"type": "reasoning", "text": SUMMARIES[0]},
                                   {"type": "reasoning", "text": SUMMARIES[1]},
                                   {"type": "text", "text": "Day 1 has room for one more stop."}]

        # The client sends the message back with its reasoning: the model gets the prose only.
        openai_standin.reply_text("Then add the museum.")
        check_protocol(chat(client, trip["id"], [user_message("Is day 1 full?"),
                                                 {"id": message_id, "role": "assistant", "parts": stored["parts"]},
                                                 user_message("What would you add?", "u2")]))
        sent = json.dumps(openai_standin.requests[1].body["input"])
        assert "Day 1 has room" in sent and "Checking which stops" not in sent


def test_reasoning_is_not_asked_for_unless_configured(settings, openai_standin):
    with agent_client(settings, openai_standin) as client:
        signup(client, "alice")
        trip = new_trip(client)
        openai_standin.reply_text("Fine.")
        check_protocol(chat(client, trip["id"], [user_message("Hi")]))
        assert "reasoning" not in openai_standin.requests[0].body


# -- turn ids and debug info ---------------------------------------------------------


def test_the_turn_id_is_the_member_message_across_an_approval_continuation(settings, openai_standin, capsys):
    with agent_client(settings, openai_standin) as client:
        signup(client, "alice")
        trip = new_trip(client)
        messages, first = start_write_turn(client, openai_standin, trip)
        openai_standin.reply_text("Added.")
        second = check_protocol(chat(client, trip["id"], messages + [responded(first, True)]))
        message_id = of_type(second, "start")[0]["messageId"]
        assert message_id == of_type(first, "start")[0]["messageId"] != "u1"

        rows = usage(client, "SELECT turn_id, response_id, status FROM ai_usage ORDER BY rowid")
        assert [r["turn_id"] for r in rows] == ["u1", "u1"]
        assert all(r["response_id"].startswith("resp_") for r in rows)
        assert len({r["response_id"] for r in rows}) == 2
        [stored] = usage(client, "SELECT turn_id FROM agent_messages WHERE id = ?", message_id)
        assert stored["turn_id"] == "u1"
        logged = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"AI_REQUEST_' in line]
        assert [line["turnId"] for line in logged] == ["u1", "u1"]

        debug = client.get(f"/api/trips/{trip['id']}/agent/messages/{message_id}/debug")
        assert debug.status_code == 200, debug.text
        info = debug.json()["data"]
        assert info["turnId"] == "u1" and info["messageId"] == message_id and info["tripId"] == trip["id"]
        assert [c["responseId"] for c in info["modelCalls"]] == [r["response_id"] for r in rows]
        assert info["models"] == ["gpt-6.1-sol"]
        assert "tool-insert_stop" in info["partTypes"]


def test_debug_info_is_ids_and_a_fingerprint_never_text_keys_or_preferences(settings, openai_standin):
    with agent_client(settings, openai_standin) as client:
        alice = signup(client, "alice")
        secret_pref = "SESAME-ALLERGY-DETAIL"
        assert client.put("/api/users/preferences", json={"allergies": secret_pref, "cuisines": ["RAMEN-LOVER"]}
                          ).status_code == 200
        trip = new_trip(client)
        # No clock time in the text: the answer's timestamps (createdAt, generatedAt) may hold "09:00".
        answer = "The Castelo opens at nine o'clock; go early."
        openai_standin.reply_text(answer)
        chunks = check_protocol(chat(client, trip["id"], [user_message("When does the Castelo open?")]))
        message_id = of_type(chunks, "start")[0]["messageId"]
        url = f"/api/trips/{trip['id']}/agent/messages/{message_id}/debug"
        response = client.get(url)
        info = response.json()["data"]
        assert info["textSha256"] == hashlib.sha256(answer.encode()).hexdigest()[:12]
        raw = response.text + json.dumps(dict(response.headers))
        for leak in (answer, "Castelo", "o'clock", TEST_KEY, "sk-", secret_pref, "RAMEN", alice["id"],
                     "When does"):
            assert leak not in raw, leak
        assert set(info) == {"tripId", "messageId", "turnId", "role", "source", "createdAt", "textSha256",
                             "partTypes", "streetView", "models", "modelCalls", "generatedAt"}
        # The member's own message: its id is the turn.
        member_debug = client.get(f"/api/trips/{trip['id']}/agent/messages/u1/debug").json()["data"]
        assert member_debug["turnId"] == "u1" and len(member_debug["modelCalls"]) == 1

        assert client.get(f"/api/trips/{trip['id']}/agent/messages/nope/debug").status_code == 404
        signup(client, "mallory")
        assert client.get(url).status_code == 404               # members only
        use(client, alice)
        other = new_trip(client)
        assert client.get(f"/api/trips/{other['id']}/agent/messages/{message_id}/debug").status_code == 404


def test_ambient_replies_record_the_member_message_as_their_turn(settings, openai_standin):
    with agent_client(settings, openai_standin) as client:
        signup(client, "alice")
        trip = new_trip(client)
        openai_standin.reply_text("It opens at 10:00.")
        posted = client.post(f"/api/trips/{trip['id']}/agent/messages",
                             json={"text": "@agent when does the museum open?"}).json()["data"]["message"]
        reply = eventually(lambda: [m for m in events(client, trip["id"])["messages"] if m["role"] == "assistant"])
        info = client.get(f"/api/trips/{trip['id']}/agent/messages/{reply[0]['id']}/debug").json()["data"]
        assert info["turnId"] == posted["id"]
        assert [r["turn_id"] for r in usage(client, "SELECT turn_id FROM ai_usage")] == [posted["id"]]


def test_a_cut_off_ambient_reply_is_not_posted(settings, openai_standin):
    """A round stopped by max_output_tokens is unusable (app/ai.py unusable_round):
    the group never reads half a sentence from the agent."""
    with agent_client(settings, openai_standin) as client:
        signup(client, "alice")
        trip = new_trip(client)
        openai_standin.reply_incomplete("The museum opens at 1", reason="max_output_tokens")
        client.post(f"/api/trips/{trip['id']}/agent/messages", json={"text": "@agent when does the museum open?"})
        eventually(lambda: [r["status"] for r in usage(client, "SELECT status FROM ai_usage")] == ["failed"])
        openai_standin.reply_text("It opens at 10:00.")
        client.post(f"/api/trips/{trip['id']}/agent/messages", json={"text": "@agent and the castle?"})
        replies = eventually(lambda: [m for m in events(client, trip["id"])["messages"] if m["role"] == "assistant"])
        assert [p["text"] for m in replies for p in m["parts"]] == ["It opens at 10:00."]


@pytest.mark.parametrize("fault", ["provider error", "refusal"])
def test_a_reply_that_breaks_off_after_looking_something_up_is_not_posted(settings, openai_standin, fault):
    """The model says "Let me check the forecast" and calls a tool; the next
    round fails (the provider errs, or refuses). That preamble is no answer:
    it used to be posted as the agent's whole reply, in the group's chat and
    as a comment on the stop, a promise nothing followed. Nothing is posted,
    as when the AI budget runs out in the middle of a reply."""
    with agent_client(settings, openai_standin) as client:
        signup(client, "alice")
        trip = new_trip(client)
        day = trip["days"][0]["id"]
        stop = op(client, trip["id"], "insert_stop", dayId=day, kind="sight", name="Castelo",
                  lat=38.7139, lng=-9.1335).json()["data"]["trip"]["days"][0]["stops"][0]["id"]
        svc = client.app.state.services
        asks = [lambda: client.post(f"/api/trips/{trip['id']}/agent/messages",
                                    json={"text": "@agent will it rain tomorrow?"}),
                lambda: client.post(f"/api/trips/{trip['id']}/stops/{stop}/comments",
                                    json={"body": "@agent rain here?"})]
        for n, ask in enumerate(asks, start=1):   # the chat's reply, then the stop comment's: one at a time
            openai_standin.reply_function_calls(
                [("checkWeather", {"date": "2026-12-10", "lat": 38.7, "lng": -9.1})],
                text="Let me check the forecast for you.")
            if fault == "refusal":
                openai_standin.reply_refusal("I can't help with that.")
            else:
                openai_standin.fail(500, "The server had an error.")
            assert ask().status_code == 201
            eventually(lambda n=n: openai_standin.request_count == 2 * n and len(svc.background) == 0)
        assert [m for m in events(client, trip["id"])["messages"] if m["role"] == "assistant"] == []
        comments = client.get(f"/api/trips/{trip['id']}/stops/{stop}/comments").json()["data"]
        assert [c["body"] for c in comments["comments"]] == ["@agent rain here?"]
        # The round's own usage is closed; the reply that does finish is posted as before.
        assert [r["status"] for r in usage(client, "SELECT status FROM ai_usage ORDER BY rowid")] == \
            ["completed", "failed"] * 2
        openai_standin.reply_text("It opens at 10:00.")
        client.post(f"/api/trips/{trip['id']}/agent/messages", json={"text": "@agent and the castle?"})
        replies = eventually(lambda: [m for m in events(client, trip["id"])["messages"] if m["role"] == "assistant"])
        assert [p["text"] for m in replies for p in m["parts"]] == ["It opens at 10:00."]


# -- OpenTelemetry ----------------------------------------------------------------------


def test_spans_for_the_turn_and_each_model_call_when_configured(settings, openai_standin):
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    with agent_client(settings, openai_standin, telemetry=Telemetry.with_exporter(exporter)) as client:
        signup(client, "alice")
        trip = new_trip(client)
        openai_standin.reply_function_call("routes", {"fromLat": 38.71, "fromLng": -9.13, "toLat": 38.69,
                                                      "toLng": -9.20, "mode": "walk"})
        openai_standin.reply_text("About two hours on foot.")
        check_protocol(chat(client, trip["id"], [user_message("How far is Belém on foot?")]))
        spans = eventually(lambda: exporter.get_finished_spans()
                           if any(s.name == "wayline.agent.turn" for s in exporter.get_finished_spans()) else None)
    [turn] = [s for s in spans if s.name == "wayline.agent.turn"]
    calls = [s for s in spans if s.name == "wayline.ai.stream"]
    assert len(calls) == 2
    assert all(c.parent is not None and c.parent.span_id == turn.context.span_id for c in calls)
    assert turn.attributes["wayline.turn_id"] == "u1" and turn.attributes["wayline.trip_id"] == trip["id"]
    assert all(c.attributes["wayline.turn_id"] == "u1" and c.attributes["gen_ai.response.id"].startswith("resp_")
               for c in calls)
    assert calls[0].attributes["gen_ai.usage.input_tokens"] == 100
    flat = json.dumps([dict(s.attributes) for s in spans])
    assert "two hours" not in flat and "Belém" not in flat and TEST_KEY not in flat


def test_without_an_endpoint_there_is_no_tracer(settings):
    from app.telemetry import from_settings

    assert not from_settings(settings).enabled
    span = Telemetry().start("x", a=1)
    span.set(b=2)
    span.end("failed")                      # the no-op takes every call
    with Telemetry().span("y") as current:
        assert current is None


def test_an_endpoint_without_the_extra_says_so_and_stays_off(settings, monkeypatch, caplog):
    import builtins

    from app.telemetry import from_settings

    real_import = builtins.__import__

    def no_exporter(name, *args, **kwargs):
        if name.startswith("opentelemetry.exporter"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_exporter)
    telemetry = from_settings(settings.with_(otel_traces_endpoint="http://127.0.0.1:9/v1/traces"))
    assert not telemetry.enabled
    assert "otel extra is not installed" in caplog.text


def test_otel_settings_follow_the_standard_variables():
    from app.settings import Settings

    base = Settings.from_env(env={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"}, dotenv=None)
    assert base.otel_traces_endpoint == "http://collector:4318/v1/traces"
    own = Settings.from_env(env={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318",
                                 "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b:4318/traces"}, dotenv=None)
    assert own.otel_traces_endpoint == "http://b:4318/traces"
    assert Settings.from_env(env={}, dotenv=None).otel_traces_endpoint is None
    assert Settings.from_env(env={}, dotenv=None).google_maps_base_url == "https://maps.googleapis.com"
    assert Settings.from_env(env={"GOOGLE_MAPS_BASE_URL": "http://proxy/"}, dotenv=None).google_maps_base_url == \
        "http://proxy"
    assert Settings.from_env(env={"OPENAI_REASONING_SUMMARY": "Auto"}, dotenv=None).openai_reasoning_summary == "auto"
    assert Settings.from_env(env={"OPENAI_REASONING_SUMMARY": "off"}, dotenv=None).openai_reasoning_summary is None
    with pytest.raises(SystemExit):
        Settings.from_env(env={"OPENAI_REASONING_SUMMARY": "loud"}, dotenv=None)


# -- the panel and avatars ----------------------------------------------------------------


def test_the_agent_panel_state_is_kept_per_account(client):
    assert client.get("/api/users/preferences/agent-panel").status_code == 401
    alice = signup(client, "alice")
    assert client.get("/api/users/preferences/agent-panel").json()["data"] == {"open": False, "updatedAt": None}
    written = client.put("/api/users/preferences/agent-panel", json={"open": True})
    assert written.status_code == 200
    snapshot = written.json()["data"]
    assert snapshot["open"] is True and snapshot["updatedAt"]
    assert client.get("/api/users/preferences/agent-panel").json()["data"] == snapshot
    assert client.put("/api/users/preferences/agent-panel", json={"open": "yes"}).status_code == 422
    assert client.put("/api/users/preferences/agent-panel", json={"open": True, "x": 1}).status_code == 422
    signup(client, "bob")
    assert client.get("/api/users/preferences/agent-panel").json()["data"]["open"] is False
    use(client, alice)
    assert client.put("/api/users/preferences/agent-panel", json={"open": False}).json()["data"]["open"] is False
    # Not a preference: the private defaults do not carry it.
    assert "open" not in client.get("/api/users/preferences").json()["data"]


def sam(client, username: str) -> dict:
    r = client.post("/api/auth/signup", json={"username": username, "password": "correct horse",
                                              "displayName": "Sam"})
    assert r.status_code == 201, r.text
    return {**r.json()["data"]["user"], "token": r.cookies.get("wayline_session")}


def test_every_member_message_carries_its_author_so_equal_names_stay_apart(settings, openai_standin):
    with agent_client(settings, openai_standin) as client:
        first = sam(client, "sam1")
        trip = new_trip(client)
        second = sam(client, "sam2")
        assert first["displayName"] == second["displayName"] == "Sam"
        join(client, first, trip["id"], second, role="editor")
        client.post(f"/api/trips/{trip['id']}/agent/messages", json={"text": "hi from the second Sam"})
        use(client, first)
        client.post(f"/api/trips/{trip['id']}/agent/messages", json={"text": "hi from the first Sam"})
        op(client, trip["id"], "update_day", dayId=trip["days"][0]["id"], title="Alfama")
        assert openai_standin.request_count == 0   # plain messages are the group's: no model call
        openai_standin.reply_text("Hello both.")
        check_protocol(chat(client, trip["id"], [user_message("@agent hello", "u9")]))
        messages = events(client, trip["id"])["messages"]
        members = [m for m in messages if m["role"] in ("user", "system")]
        assert len(members) == 4 and all(m["actorUserId"] for m in members)
        by_text = {m["parts"][0]["text"]: m["actorUserId"] for m in members if m["role"] == "user"}
        assert by_text["hi from the second Sam"] == second["id"]
        assert by_text["hi from the first Sam"] == by_text["@agent hello"] == first["id"]
        assert all(m["actorName"] == "Sam" for m in members)
