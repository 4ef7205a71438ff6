"""The agent's seed features on the page (issue 15): a card in the chat whose
buttons only send a follow-up or show a day and stop, reasoning collapsed, a
street-view answer with its image from our own origin, "Copy debug info",
the panel's open state kept on the server, and avatars by user id. Real
server, OpenAI and Google stand-ins, Debian's Chromium; screenshots at
1366x850 and 390 px wide."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest

from app.agent.cardtool import SHOW_CARD
from browser.harness import (api, api_op, api_trip, api_user, chromium, live, no_sideways_scroll, offline, open_chat,
                             open_page, send_chat, shot, tile_host, timeline_caught_up)
from browser.scripts import quiet_responder
from standins.google_standin import google_settings
from standins.openai_standin import Reply, function_call_item, message_item, reasoning_item

pytestmark = pytest.mark.browser

LAPTOP = {"width": 1366, "height": 850}


def saving_panel_state(response) -> bool:
    return response.request.method == "PUT" and urlsplit(response.url).path == "/api/users/preferences/agent-panel"


def last_user_text(body: dict) -> str:
    for item in reversed(body.get("input") or []):
        if item.get("role") == "user":
            content = item.get("content")
            return content if isinstance(content, str) else " ".join(
                p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def card_args(day1: str, day2: str, stop2: str) -> dict:
    return {"refine": None, "root": "plan", "remove": [], "elements": [
        {"key": "plan", "type": "TripPlanCard", "children": ["d1", "alert", "go-day2", "more"],
         "props": {"title": "Two easy days", "subtitle": "Old town first, the river after",
                   "days": [{"label": "Day 1", "title": "Alfama", "summary": "Castle and viewpoints"},
                            {"label": "Day 2", "title": "Belém", "summary": "Monastery and tarts"}]}},
        {"key": "d1", "type": "DaySummary", "children": [],
         "props": {"dayId": day1, "date": None, "title": "Alfama on foot", "stops": ["09:00 Castelo de São Jorge"]}},
        {"key": "alert", "type": "Alert", "children": [],
         "props": {"tone": "warning", "title": None, "text": "The castle queue is long after 11:00."}},
        {"key": "go-day2", "type": "ActionButton", "children": [],
         "props": {"label": "Show the monastery", "variant": "secondary",
                   "action": {"kind": "focus", "dayId": day2, "stopId": stop2}}},
        {"key": "more", "type": "ActionButton", "children": [],
         "props": {"label": "Plan day 2 in detail", "variant": "primary",
                   "action": {"kind": "followUp", "text": "Plan day 2 in detail"}}},
    ]}


def test_cards_street_view_debug_info_panel_state_and_avatars(settings, openai_standin, google_standin):
    ids: dict[str, str] = {}
    chat_requests: list[dict] = []

    def responder(request):
        body = request.body or {}
        if not (body.get("stream") and body.get("tools")):
            return quiet_responder(request)
        chat_requests.append(body)
        said = last_user_text(body)
        if "sketch" in said.lower():
            return Reply(output=[reasoning_item(["The member wants an overview.", "Day 2 has the monastery."]),
                                 message_item("Here is a sketch of both days."),
                                 function_call_item(SHOW_CARD, card_args(ids["day1"], ids["day2"], ids["stop2"]))])
        return Reply(output=[message_item("Day 2: the monastery at 10:00, then tarts.")])

    openai_standin.responder = responder
    configured = offline(google_settings(settings, google_standin).with_(
        openai_api_key="sk-test-wayline-standin-0123456789abcdef", openai_base_url=openai_standin.url))
    with live(configured) as server, chromium() as browser:
        alice = api_user(server, "alice", "Sam")
        sam = api_user(server, "sam2", "Sam")
        trip = api_trip(alice, sam, title="Lisbon, two days")
        ids["day1"], ids["day2"] = trip["days"][0]["id"], trip["days"][1]["id"]
        api_op(alice, trip["id"], "insert_stop", dayId=ids["day1"], kind="sight", name="Castelo de São Jorge",
               lat=38.7139, lng=-9.1335, setTime="09:00")
        echo = api_op(alice, trip["id"], "insert_stop", dayId=ids["day2"], kind="sight", name="Mosteiro dos Jerónimos",
                      lat=38.6979, lng=-9.2068)
        ids["stop2"] = echo["trip"]["days"][1]["stops"][0]["id"]
        api(sam, "POST", f"/api/trips/{trip['id']}/agent/messages", {"text": "Hi, I'm the other Sam"})

        page = open_page(browser, server, viewport=LAPTOP, session=alice.token)
        page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
        page.goto(f"/#/trips/{trip['id']}")
        panel = open_chat(page)

        # Avatars by user id: the other Sam is told apart from alice (also "Sam").
        other = panel.locator(".msg.from-member", has_text="the other Sam")
        other.wait_for()
        assert other.get_attribute("data-actor-id") == sam.user["id"]
        assert "Sam (@sam2)" in other.locator(".msg-meta").inner_text()

        # A card in the chat, reasoning folded away.
        send_chat(panel, "@agent sketch our two days")
        card = panel.locator(".msg.from-agent .gen-card")
        card.wait_for()
        assert card.get_by_role("heading", name="Two easy days").count() == 1
        reasoning = panel.locator(".msg.from-agent details.reasoning")
        assert reasoning.count() == 1 and reasoning.get_attribute("open") is None   # both summaries, folded
        assert not panel.get_by_text("The member wants an overview.").is_visible()
        reasoning.locator("summary").click()
        assert panel.get_by_text("Day 2 has the monastery.").is_visible()
        reasoning.locator("summary").click()
        shot(page, "agent-card-desktop")

        # Pressing "focus" shows day 2 and its stop, and sends nothing.
        sent: list[str] = []
        page.on("request", lambda r: sent.append(f"{r.method} {urlsplit(r.url).path}")
                if r.method != "GET" else None)
        card.get_by_role("button", name="Show the monastery").click()
        page.locator(f".day-view[data-day-id='{ids['day2']}']").wait_for()
        page.locator(f".stop.focused[data-stop-id='{ids['stop2']}']").wait_for()
        # Nothing changes the trip: the page only tells the others which day it now
        # shows (live presence) and, a moment after the reply came in, that alice has
        # read the chat.
        assert [s for s in sent if not s.endswith(("/presence", "/chat/read"))] == []
        assert len(chat_requests) == 1

        # Pressing the follow-up sends its text to the AI as alice's message: one chat request.
        card.get_by_role("button", name="Plan day 2 in detail").click()
        panel.locator(".msg.from-agent", has_text="the monastery at 10:00").wait_for()
        assert [s for s in sent if "/agent/" in s] == [f"POST /api/trips/{trip['id']}/agent/chat"]
        assert last_user_text(chat_requests[-1]) == "Plan day 2 in detail"
        assert panel.locator(".msg.mine", has_text="Plan day 2 in detail").count() == 1

        # Street view: no model call; the image comes from our origin only.
        asked = len(chat_requests)
        image_hosts: set[str] = set()
        page.on("request", lambda r: image_hosts.add(urlsplit(r.url).netloc) if r.resource_type == "image" else None)
        send_chat(panel, "@agent street view of Castelo")
        figure = panel.locator(".gc-street")
        figure.wait_for()
        figure.locator("img").evaluate("img => img.complete || new Promise((r) => img.addEventListener('load', r))")
        assert figure.locator("img").evaluate("img => img.naturalWidth") > 0
        assert "© Google" in figure.inner_text() and "Castelo de São Jorge" in figure.inner_text()
        assert image_hosts <= {urlsplit(server.url).netloc, urlsplit(tile_host()).netloc}
        assert len(chat_requests) == asked
        html = page.content()
        assert google_standin.key not in html

        send_chat(panel, "street view of Atlantis Underwater Palace")
        panel.locator(".agent-status-note").wait_for()
        shot(page, "agent-street-view-desktop")

        # Copy debug info: ids and a fingerprint, never the text.
        timeline_caught_up(page, trip["id"])  # the server's copies have replaced the streamed ones
        agent_msg = panel.locator(".msg.from-agent", has=page.locator(".gen-card .gc-plan")).first
        agent_msg.get_by_role("button", name="Copy debug info").click()
        page.get_by_text("Debug info copied").wait_for()
        copied = json.loads(page.evaluate("navigator.clipboard.readText()"))
        assert copied["turnId"] and copied["messageId"] == agent_msg.get_attribute("data-message-id")
        assert "sketch" not in json.dumps(copied) and copied["textSha256"]

        # The panel's state follows the account: closed here, closed in another browser.
        with page.expect_response(saving_panel_state):
            page.locator(".side-close").click()
        page.wait_for_function("() => !document.querySelector('#side-panel').classList.contains('open')")
        assert api(alice, "GET", "/api/users/preferences/agent-panel")["open"] is False
        elsewhere = open_page(browser, server, viewport=LAPTOP, session=alice.token)
        elsewhere.goto(f"/#/trips/{trip['id']}")
        elsewhere.locator(".day-view").wait_for()
        elsewhere.locator("#side-panel[data-account-choice=read]").wait_for(state="attached")
        assert "open" not in (elsewhere.locator("#side-panel").get_attribute("class") or "").split()
        with elsewhere.expect_response(saving_panel_state):
            elsewhere.locator(".sparkle").click()
        assert api(alice, "GET", "/api/users/preferences/agent-panel")["open"] is True
        page.errors.check()
        elsewhere.errors.check()

        # Phone width: the same card, no sideways scroll.
        phone = open_page(browser, server, phone=True, session=alice.token)
        phone.goto(f"/#/trips/{trip['id']}")
        open_chat(phone)
        phone_card = phone.locator("#side-panel .gen-card .gc-plan")
        phone_card.wait_for()
        phone_card.scroll_into_view_if_needed()
        shot(phone, "agent-card-phone")
        assert no_sideways_scroll(phone) == 0
        phone.locator("#side-panel .gc-street").scroll_into_view_if_needed()
        shot(phone, "agent-street-view-phone")
        phone_card.get_by_role("button", name="Show the monastery").click()
        phone.locator(f".stop.focused[data-stop-id='{ids['stop2']}']").wait_for()
        assert "open" not in (phone.locator("#side-panel").get_attribute("class") or "").split()
        shot(phone, "agent-focus-phone")
        phone.errors.check()
