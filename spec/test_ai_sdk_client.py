"""The agent chat stream read by the real AI SDK client (npm `ai`, pinned in
spec/js/package.json): DefaultChatTransport, which validates every chunk
against the SDK's strict schema, and readUIMessageStream, which assembles the
UIMessage as useChat does. Reasoning, a card and a tool approval round trip
must come out as the SDK's own message parts, against the live server and the
OpenAI stand-in."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from app.agent.cardtool import SHOW_CARD
from app.web.application import create_app
from helpers import LiveServer
from standins.openai_standin import ai_settings
from test_agent_cards_chat import plan_card
from test_agent_chat import stop_args

JS_DIR = Path(__file__).resolve().parent / "js"
CLIENT = JS_DIR / "ui_stream_client.mjs"


def sdk_client(api: str, cookie: str, messages: list[dict], message: dict | None = None) -> dict:
    """The final UIMessage as the AI SDK client assembles it."""
    if not shutil.which("node"):
        pytest.fail("node is not installed: this test needs it (scripts/test installs nodejs)")
    if not (JS_DIR / "node_modules" / "ai" / "package.json").exists():
        pytest.fail("the AI SDK is not installed: run `npm ci --prefix spec/js` (scripts/test does)")
    payload = {"api": api, "cookie": cookie, "chatId": "chat1", "messages": messages, "message": message}
    done = subprocess.run(["node", str(CLIENT)], input=json.dumps(payload), capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, f"the AI SDK client failed: {done.stderr[-3000:]}"
    return json.loads(done.stdout)["message"]


def user(text: str, message_id: str) -> dict:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}


@pytest.fixture
def server(settings, openai_standin):
    configured = ai_settings(settings, openai_standin, openai_reasoning_summary="auto",
                             weather_base_url="http://127.0.0.1:9")
    with LiveServer(create_app(configured)) as live:
        yield live


@pytest.fixture
def http(server):
    with httpx.Client(base_url=server.url) as client:
        yield client


def member(http: httpx.Client) -> tuple[dict, str]:
    r = http.post("/api/auth/signup", json={"username": "alice", "password": "correct horse"})
    assert r.status_code == 201, r.text
    trip = http.post("/api/trips", json={"title": "Lisbon", "startDate": "2026-12-10", "days": 2,
                                         "destination": {"name": "Lisbon", "lat": 38.7223, "lng": -9.1393},
                                         "timezone": "Europe/Lisbon", "currency": "EUR"}).json()["data"]
    return trip, f"wayline_session={http.cookies.get('wayline_session')}"


def test_reasoning_and_a_card_become_the_sdks_own_parts(server, http, openai_standin):
    trip, cookie = member(http)
    openai_standin.reply_function_calls([(SHOW_CARD, plan_card(trip["days"][0]["id"]))],
                                        text="Here is day 1.", reasoning=["Looking at day 1.", "It is empty."])
    api = f"{server.url}/api/trips/{trip['id']}/agent/chat"
    message = sdk_client(api, cookie, [user("Sketch day 1", "u1")])
    assert message["role"] == "assistant" and message["id"].startswith("msg_")
    kinds = [p["type"] for p in message["parts"]]
    assert kinds == ["step-start", "reasoning", "reasoning", "text", "data-spec"]
    assert [p["text"] for p in message["parts"] if p["type"] == "reasoning"] == ["Looking at day 1.",
                                                                                "It is empty."]
    assert all(p["state"] == "done" for p in message["parts"] if p["type"] in ("reasoning", "text"))
    card = message["parts"][-1]
    assert card["data"]["type"] == "flat" and card["data"]["spec"]["root"] == "plan"

    # The SDK's message and the stored one hold the same parts (ids and content).
    stored = next(m for m in http.get(f"/api/trips/{trip['id']}/agent/messages").json()["data"]["messages"]
                  if m["id"] == message["id"])
    assert [p["type"] for p in stored["parts"]] == ["reasoning", "reasoning", "text", "data-spec"]
    assert stored["parts"][-1] == card


def test_an_approval_round_trip_through_the_sdk_keeps_the_message_and_the_turn(server, http, openai_standin):
    trip, cookie = member(http)
    api = f"{server.url}/api/trips/{trip['id']}/agent/chat"
    openai_standin.reply_function_call("insert_stop", stop_args(trip["days"][0]["id"]),
                                       reasoning=["The member asked for a bakery."])
    first = sdk_client(api, cookie, [user("Add Pastéis de Belém to day 1", "u1")])
    [tool] = [p for p in first["parts"] if p["type"] == "tool-insert_stop"]
    assert tool["state"] == "approval-requested" and tool["approval"]["id"].startswith("apv_")

    # What addToolApprovalResponse does to the part; useChat then re-sends every message.
    tool.update(state="approval-responded", approval={**tool["approval"], "approved": True})
    openai_standin.reply_text("Added it.", reasoning=["The stop is in."])
    second = sdk_client(api, cookie, [user("Add Pastéis de Belém to day 1", "u1"), first], message=first)
    assert second["id"] == first["id"]
    [done] = [p for p in second["parts"] if p["type"] == "tool-insert_stop"]
    assert done["state"] == "output-available" and done["output"]["ok"] is True
    assert [p["text"] for p in second["parts"] if p["type"] == "reasoning"] == [
        "The member asked for a bakery.", "The stop is in."]

    debug = http.get(f"/api/trips/{trip['id']}/agent/messages/{first['id']}/debug").json()["data"]
    assert debug["turnId"] == "u1" and len(debug["modelCalls"]) == 2
    trip_now = http.get(f"/api/trips/{trip['id']}").json()["data"]
    assert [s["name"] for s in trip_now["days"][0]["stops"]] == ["Pastéis de Belém"]
