"""A misbehaving provider, as a member meets it over HTTP: for the copilot,
Optimize my day, an @agent chat turn and the agent's evaluation of an edit, every provider fault ends in a plain
message (never the provider's words, a key, a trace or a field path), the
right status, an unchanged trip, a closed usage row with the right tokens,
and a next call that works. Find places to eat / Explore nearby never call
the model at all."""

from __future__ import annotations

import json
import logging
import sqlite3

import pytest

from helpers import make_client, signup
from standins.google_standin import google_settings
from standins.openai_standin import TEST_KEY, Reply, ai_settings, message_item
from test_agent_chat import chat, check_protocol
from app.agent.proactive import EVAL_MAX_OUTPUT_TOKENS
from helpers import new_trip
from test_agent_support import (agent_client, eventually, events, make_set_time_unreachable, of_type, pick_first_fix,
                                user_message)
from test_planner import NO_DEBOUNCE, TRIP_DATE, ScriptedModel, good_plan, optimize, plan_trip, save_prefs, trip_dto

TIMEOUT_MS = 1500
USAGE = (100, 50)


def http_error(status: int, message: str = "", headers: dict | None = None, code: str | None = None) -> Reply:
    return Reply(kind="http_error", http_status=status, headers=dict(headers or {}),
                 error={"message": message, "type": "server_error", "param": None, "code": code})


# Each fault: the reply, then what the member must see: (status, code) for the
# structured features, and whether the reservation stays counted (the outcome
# is unknown) or the provider's count replaces it.
FAULTS = {
    "500": (lambda: http_error(500, f"Internal error (key {TEST_KEY})"), (503, "ai_provider_error"), "zero"),
    "429": (lambda: http_error(429, "Rate limit reached for requests."), (503, "ai_provider_busy"), "zero"),
    "429 retry-after": (lambda: http_error(429, "Rate limit reached.", {"Retry-After": "7"}),
                        (503, "ai_provider_busy"), "zero"),
    "429 quota": (lambda: http_error(429, "You exceeded your current quota.", code="insufficient_quota"),
                  (503, "ai_quota"), "zero"),
    "401": (lambda: http_error(401, ""), (503, "ai_auth"), "zero"),   # the stand-in echoes the key
    "timeout": (lambda: Reply(output=[message_item("{}")], delay=TIMEOUT_MS / 1000 + 1.5), (503, "ai_timeout"),
                "reserved"),
    "dropped": (lambda: Reply(kind="drop", output=[message_item('{"answer": "Half an ans')]),
                (503, "ai_unreachable"), "reserved"),
    "refusal": (lambda: Reply(output=[message_item(refusal=f"I can't. {TEST_KEY}")]), (502, "ai_bad_output"),
                "spent"),
    "empty": (lambda: Reply(output=[]), (502, "ai_bad_output"), "spent"),
    "incomplete": (lambda: Reply(output=[message_item('{"answer": "Cut')], status="incomplete",
                                 incomplete_reason="max_output_tokens"), (502, "ai_bad_output"), "spent"),
    "malformed": (lambda: Reply(output=[message_item('{"answer": ')]), (502, "ai_bad_output"), "spent"),
    # JSON that strict decoding could never produce (the wrong types for both answers' fields).
    "schema": (lambda: Reply(output=[message_item(json.dumps({"answer": 3, "recommendedFixIds": "x", "order": 1}))]),
               (502, "ai_bad_output"), "spent"),
}
# What the member reads at the end of a chat turn for each fault (the error
# chunk) and the finish reason. Malformed and schema-breaking text is just
# text in a chat turn (no schema), so those are answers, not faults, there.
CHAT = {
    "500": ("had a problem", "error"), "429": ("in a minute", "error"), "429 retry-after": ("in 7 seconds", "error"),
    "429 quota": ("quota", "error"),
    "401": ("API key", "error"), "timeout": ("took too long", "error"), "dropped": ("could not be reached", "error"),
    "refusal": ("declined", "content-filter"), "empty": ("empty answer", "error"),
    "incomplete": ("cut off", "length"), "malformed": (None, "stop"), "schema": (None, "stop"),
}
LEAKS = ("sk-", "Traceback", "Rate limit", "Incorrect API key", "Internal error", "I can't", "Half an",
         "openai", "httpx", "Exception", "exceeded")
# When to try again, for a rate-limited provider: its own hint when it gave one.
WAITS = {"429 retry-after": ("7", "in 7 seconds"), "429": (None, "in a minute")}


def says_when(fault: str, response) -> None:
    if fault not in WAITS:
        return
    header, words = WAITS[fault]
    assert response.headers.get("retry-after") == header, response.headers
    assert response.json()["error"].get("retryAfterS") == (int(header) if header else None)
    assert words in response.json()["error"]["message"]


def rows(settings, feature: str) -> list[tuple]:
    with sqlite3.connect(settings.db_path) as conn:
        return conn.execute("SELECT status, input_tokens, output_tokens, reserved_output_tokens "
                            "FROM ai_usage WHERE feature = ? ORDER BY started_at, rowid", (feature,)).fetchall()


@pytest.fixture
def env(settings, google_standin, openai_standin):
    google_standin.today = TRIP_DATE
    model = ScriptedModel(openai_standin)
    s = ai_settings(google_settings(settings, google_standin), openai_standin, ai_timeout_ms=TIMEOUT_MS,
                    ai_concurrent=1)   # one slot: a failure that kept it would refuse the next call (429)
    with make_client(s, **NO_DEBOUNCE) as client:
        signup(client)
        save_prefs(client)
        yield client, model, s


def plain(error: dict) -> None:
    message = error["message"]
    assert message and message[0].isupper() and message.rstrip().endswith((".", "!")), message
    for leak in LEAKS:
        assert leak not in message, (leak, message)
    assert "field" not in error and "[" not in message and "{" not in message, error


def tokens_as(expect: str, row: tuple, reserved: int) -> None:
    status, tin, tout, held = row
    assert status == "failed", row
    if expect == "zero":
        assert (tin, tout, held) == (0, 0, 0), row
    elif expect == "reserved":
        assert (tin, tout, held) == (0, 0, reserved), row
    else:
        assert (tin, tout, held) == (*USAGE, 0), row


def no_key_anywhere(texts, caplog, capsys) -> None:
    out = capsys.readouterr()
    everything = "\n".join([*texts, caplog.text, out.out, out.err])
    assert TEST_KEY not in everything


def ask_copilot(client, t):
    return client.post(f"/api/trips/{t['id']}/days/{t['day']}/copilot", json={"question": "Is this day OK?"})


# A structured feature: its model call's name, how a member asks, a good
# answer for the retry, and the output tokens its call reserves.
STRUCTURED = {
    "copilot": ("copilot_answer", ask_copilot, lambda t: {"answer": "Fine.", "recommendedFixIds": []}, 1500),
    "plan_day": ("plan_day", optimize, good_plan, 2500),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("feature", sorted(STRUCTURED))
def test_structured_faults(env, feature, fault, caplog, capsys):
    """The copilot and Optimize my day: the refusal's status and words, the
    trip unchanged, one failed usage row with the right tokens, and the next
    ask answered."""
    caplog.set_level(logging.DEBUG)
    client, model, s = env
    name, ask, good, reserved = STRUCTURED[feature]
    t = plan_trip(client)
    before = trip_dto(client, t["id"])
    reply, (status, code), tokens = FAULTS[fault]
    model.add(name, reply())
    r = ask(client, t)
    assert (r.status_code, r.json()["error"]["code"]) == (status, code), r.text
    plain(r.json()["error"])
    says_when(fault, r)
    after = trip_dto(client, t["id"])
    assert after["version"] == before["version"] and after["days"] == before["days"]
    [row] = rows(s, feature)
    tokens_as(tokens, row, reserved)
    model.json(name, good(t))
    again = ask(client, t)
    assert again.status_code == 200, again.text
    assert [x[0] for x in rows(s, feature)] == ["failed", "completed"]
    if feature == "copilot":
        assert again.json()["data"]["cached"] is False   # a failed answer is never cached
    no_key_anywhere([r.text, again.text], caplog, capsys)


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_chat_faults(env, fault, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    client, model, s = env
    t = plan_trip(client)
    before = trip_dto(client, t["id"])
    reply, _, tokens = FAULTS[fault]
    model.add(None, reply())
    r = chat(client, t["id"], [user_message("@agent is this day OK?")])
    chunks = check_protocol(r)
    words, finish = CHAT[fault]
    assert of_type(chunks, "finish")[0]["finishReason"] == finish, chunks
    errors = of_type(chunks, "error")
    if words is None:
        assert not errors and rows(s, "agent_chat")[0][0] == "completed"
    else:
        [error] = errors
        assert words in error["errorText"], error
        plain({"message": error["errorText"]})
        tokens_as(tokens, rows(s, "agent_chat")[0], 3000)
    after = trip_dto(client, t["id"])
    assert after["version"] == before["version"] and after["days"] == before["days"]
    assert len(rows(s, "agent_chat")) == 1 and "running" not in [x[0] for x in rows(s, "agent_chat")]
    model.add(None, Reply(output=[message_item("All good.")]))
    second = chat(client, t["id"], [user_message("@agent and now?", "u2")])
    again = check_protocol(second)
    assert of_type(again, "text-delta") and of_type(again, "finish")[0]["finishReason"] == "stop", again
    no_key_anywhere([r.text, second.text], caplog, capsys)


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_evaluation_faults(settings, openai_standin, fault, caplog, capsys):
    """The agent's evaluation of a risky edit (agent_eval, in the background):
    whatever the provider does, nothing is posted to the group (no line, no
    suggestion, no half a sentence), the edit stands, the usage row closes
    with the right tokens, and the next risky edit gets its suggestion (one
    AI slot: a fault that kept it would refuse that call)."""
    caplog.set_level(logging.DEBUG)
    model = ScriptedModel(openai_standin)
    # Only the timeout's case races the clock (its reply is held past it); the others have all the time they need.
    timeout_ms = TIMEOUT_MS if fault == "timeout" else 60_000
    with agent_client(settings.with_(ai_timeout_ms=timeout_ms, ai_concurrent=1), openai_standin) as client:
        signup(client)
        trip = new_trip(client)
        reply, _, tokens = FAULTS[fault]
        model.add("intervention_decision", reply())
        make_set_time_unreachable(client, trip["id"], trip["days"][0]["id"])
        db = client.app.state.services.db
        done = eventually(lambda: [tuple(r) for r in client.portal.call(
            db.fetchall, "SELECT status, input_tokens, output_tokens, reserved_output_tokens FROM ai_usage", ())
            if r[0] != "running"])
        tokens_as(tokens, done[0], EVAL_MAX_OUTPUT_TOKENS)
        said = events(client, trip["id"])
        assert said["suggestions"] == [] and not [m for m in said["messages"] if m["source"] == "threshold"]
        assert len(client.get(f"/api/trips/{trip['id']}").json()["data"]["days"][0]["stops"]) == 2

        model.queues.clear()
        openai_standin.responder = pick_first_fix
        make_set_time_unreachable(client, trip["id"], trip["days"][1]["id"])
        [suggestion] = eventually(lambda: events(client, trip["id"])["suggestions"])
        assert TEST_KEY not in json.dumps(events(client, trip["id"]))
    no_key_anywhere([], caplog, capsys)


def test_eat_and_explore_never_call_the_model(env, openai_standin):
    """They are Google + code (product.md, planning assistant): a provider that
    answers nothing but errors changes nothing for them, and they cost no AI."""
    client, model, s = env
    t = plan_trip(client)
    for path in ("eat", "explore"):
        r = client.post(f"/api/trips/{t['id']}/days/{t['day']}/{path}", json={})
        assert r.status_code == 200, r.text
    assert model.count(None) == 0 and model.count("copilot_answer") == 0
    with sqlite3.connect(s.db_path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM ai_usage WHERE feature IN ('copilot', 'plan_day')").fetchone() == (0,)
