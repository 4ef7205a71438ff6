"""The group chat as a group uses it (issue 21): "Chat" apart from "AI help",
with an unread count on the phone tab and the desktop button that appears,
clears when read, and stays cleared after a reload and on another device;
the composer says before sending who will read a message, and a message
that starts with a member's name right after the AI's reply goes to the
group and costs no model call; "Group only" keeps a follow-up from the AI;
a note that an answer is coming goes once it came. Two members: one types
while the other edits. Without AI (the keyless default) the chat is the
group's alone, live, with its unread count."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from browser.harness import (add_stops, api, api_trip, api_user, chromium, live, offline, open_chat, open_page,
                             panel_button, send_chat, shot, stop_card)
from browser.a11y import nested_live_regions
from browser.scripts import quiet_responder
from standins.openai_standin import ai_settings

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1280, "height": 800}
CASTLE = {"name": "Castelo de São Jorge", "lat": 38.7139, "lng": -9.1335}
MARKET = {"name": "Time Out Market", "kind": "food", "meal": "lunch", "lat": 38.7069, "lng": -9.1460}


def unread(page) -> str | None:
    badge = page.locator(".mobile-tabs [data-testid=unread-count]" if page.viewport_size["width"] <= 760
                         else ".topbar [data-testid=unread-count]")
    return badge.inner_text() if badge.count() else None


def hint(panel) -> str:
    return panel.locator(".composer-hint").inner_text()


def test_unread_count_appears_clears_and_is_kept_across_reloads_and_devices(settings, openai_standin):
    openai_standin.responder = quiet_responder
    with live(offline(ai_settings(settings, openai_standin))) as server, chromium() as browser:
        alice, bob = api_user(server, "alice", "Alice"), api_user(server, "bob", "Bob")
        trip = api_trip(alice, bob)
        t = trip["id"]
        add_stops(alice, trip, CASTLE, MARKET)
        phone = open_page(browser, server, viewport=PHONE, phone=True, session=alice.token)
        phone.goto(f"/#/trips/{t}")
        phone.locator(".day-view").wait_for()
        assert unread(phone) is None
        # Bob writes twice; the edits (operation lines) and Alice's own words never count.
        for text in ("Shall we meet at 9?", "I can book the market."):
            api(bob, "POST", f"/api/trips/{t}/agent/messages", {"text": text})
        phone.wait_for_function("() => document.querySelector('.mobile-tabs [data-testid=unread-count]')"
                                "?.textContent === '2'")
        assert phone.locator(".mobile-tabs").get_by_role("button", name="Chat 2 unread", exact=True).count() == 1
        shot(phone, "chat-unread-390")

        laptop = open_page(browser, server, viewport=LAPTOP, session=alice.token, storage={"wayline.panelOpen": "0"})
        laptop.goto(f"/#/trips/{t}")
        laptop.wait_for_function("() => document.querySelector('.topbar [data-testid=unread-count]')"
                                 "?.textContent === '2'")
        shot(laptop, "chat-unread-1280")

        panel = open_chat(phone)                       # reading on the phone clears it there...
        panel.locator(".msg", has_text="I can book the market.").wait_for()
        phone.wait_for_function("() => !document.querySelector('.mobile-tabs [data-testid=unread-count]')")
        phone.wait_for_function("(t) => fetch(`/api/trips/${t}/chat/read`).then((r) => r.json())"
                                ".then((b) => b.data.seq > 0)", arg=t)
        phone.reload()                                  # ...and after a reload
        phone.locator(".day-view").wait_for()
        phone.wait_for_function("() => document.querySelector('.mobile-tabs') && "
                                "!document.querySelector('.mobile-tabs [data-testid=unread-count]')")
        other = open_page(browser, server, viewport=LAPTOP, session=alice.token, storage={"wayline.panelOpen": "0"})
        other.goto(f"/#/trips/{t}")                     # ...and on another device
        other.locator(".day-view").wait_for()
        other.wait_for_function("() => document.querySelector('.panel-toggle[data-mode=chat]')")
        assert unread(other) is None
        api(bob, "POST", f"/api/trips/{t}/agent/messages", {"text": "See you there"})
        other.wait_for_function("() => document.querySelector('.topbar [data-testid=unread-count]')"
                                "?.textContent === '1'")
        for page in (phone, laptop, other):
            page.errors.check()


def test_the_composer_says_who_reads_a_message_and_a_members_name_costs_no_model_call(settings, openai_standin):
    openai_standin.responder = quiet_responder          # chat turns answer "Noted."
    with live(offline(ai_settings(settings, openai_standin))) as server, chromium() as browser:
        alice, bob = api_user(server, "alice", "Alice"), api_user(server, "bob", "Bob")
        trip = api_trip(alice, bob)
        t = trip["id"]
        add_stops(alice, trip, CASTLE)
        page = open_page(browser, server, viewport=PHONE, phone=True, session=alice.token)
        page.goto(f"/#/trips/{t}")
        panel = open_chat(page)
        box = panel.get_by_label("Message", exact=True)
        box.fill("Shall we meet at 9?")
        assert hint(panel) == "Goes to the group. Start with @agent to ask the AI."
        box.fill("@agent what should we do after the castle?")
        assert hint(panel) == "Goes to the AI, which answers here."
        panel.get_by_role("button", name="Send").click()
        panel.locator(".msg.from-agent", has_text="Noted.").last.wait_for()
        answered = openai_standin.request_count

        # Right after the AI's reply: a follow-up goes to the AI (and can be kept from it), a reaction
        # to nobody, and a message that starts with a member's name to them.
        box.fill("and after that?")
        assert hint(panel) == "Goes to the AI: it follows the AI's reply."
        assert panel.get_by_role("button", name="Group only").get_attribute("aria-pressed") == "false"
        box.fill("thanks!")
        assert hint(panel) == "Goes to the group: the AI won't answer."
        box.fill("Bob, are you OK with Noma at 19:00?")
        assert hint(panel) == "Goes to Bob and the group: the AI won't answer."
        assert panel.get_by_role("button", name="Group only").is_hidden()
        shot(page, "chat-composer-member-390")
        panel.get_by_role("button", name="Send").click()
        panel.locator(".msg.mine", has_text="Bob, are you OK with Noma at 19:00?").wait_for()
        page.wait_for_function("(t) => fetch(`/api/trips/${t}/agent/messages`).then((r) => r.json())"
                               ".then((b) => b.data.messages.some((m) => m.role === 'user' && m.seq"
                               " && JSON.stringify(m.parts).includes('Noma at 19:00')))", arg=t)
        assert panel.get_by_role("button", name="Send").is_enabled()      # no turn streaming
        assert openai_standin.request_count == answered, "a message for Bob asked the model"

        # Bob answers and edits the day while Alice types; her words, focus and caret stay.
        box.fill("see you at the castle at 7")
        box.press("ArrowLeft")
        api(bob, "POST", f"/api/trips/{t}/agent/messages", {"text": "Alice, yes — 19:00 works."})
        api(bob, "POST", f"/api/trips/{t}/ops/insert_stop", {"dayId": trip["days"][0]["id"], **MARKET})
        panel.locator(".msg", has_text="19:00 works").wait_for()
        page.locator(".agent-log .op-event, .agent-log .op-toggle", has_text="Time Out Market").first.wait_for()
        assert box.input_value() == "see you at the castle at 7"
        assert page.evaluate("() => [document.activeElement.name, document.activeElement.selectionStart]") == \
            ["message", len("see you at the castle at 7") - 1]
        panel.get_by_role("button", name="Send").click()
        panel.locator(".msg.mine", has_text="see you at the castle at 7").wait_for()

        # After another answer, "Group only" keeps a follow-up from the AI.
        box.fill("@agent and lunch?")
        panel.get_by_role("button", name="Send").click()
        page.wait_for_function("() => [...document.querySelectorAll('#side-panel .msg.from-agent')]"
                               ".filter((m) => m.textContent.includes('Noted.')).length === 2")
        page.wait_for_function("() => !document.querySelector('#side-panel [data-testid=answer-coming]')")
        asked = openai_standin.request_count
        box.fill("what about dinner?")
        panel.get_by_role("button", name="Group only").click()
        assert hint(panel) == "Goes to the group only: the AI won't answer."
        panel.get_by_role("button", name="Send").click()
        panel.locator(".msg.mine", has_text="what about dinner?").wait_for()
        page.wait_for_function("(t) => fetch(`/api/trips/${t}/agent/messages`).then((r) => r.json())"
                               ".then((b) => b.data.messages.filter((m) => m.role === 'user').length === 6)", arg=t)
        assert openai_standin.request_count == asked, "a message for the group asked the model"
        assert [m["role"] for m in api(alice, "GET", f"/api/trips/{t}/agent/messages")["messages"]
                if m["role"] != "system"].count("assistant") == 2
        assert stop_card(page, CASTLE["name"]).count() == 1
        page.errors.check()


def test_an_answer_coming_note_goes_when_the_answer_came(settings, openai_standin):
    openai_standin.responder = quiet_responder
    with live(offline(ai_settings(settings, openai_standin))) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        trip = api_trip(alice)
        page = open_page(browser, server, viewport=LAPTOP, session=alice.token)
        page.goto(f"/#/trips/{trip['id']}")
        panel = open_chat(page)
        # Street view is answered by the application (no Google key here: it says it is unavailable).
        send_chat(panel, "street view of Castelo de São Jorge")
        panel.locator(".msg.from-agent").wait_for()
        page.wait_for_function("() => !document.querySelector('#side-panel [data-testid=answer-coming]')")
        assert "The AI will answer shortly." not in panel.inner_text()
        assert panel_button(page, "Chat").get_attribute("aria-expanded") == "true"
        page.errors.check()


def test_without_ai_the_group_chats_live_with_an_unread_count(settings):
    """The keyless default (no OpenAI key): the Chat button is there, the
    composer says a message goes to the group and nothing about the AI, and
    what Alice sends reaches Bob's phone live (his page never polls), with
    the unread count on his Chat tab."""
    assert not settings.ai_enabled
    with live(offline(settings)) as server, chromium() as browser:
        alice, bob = api_user(server, "alice", "Alice"), api_user(server, "bob", "Bob")
        trip = api_trip(alice, bob)
        t = trip["id"]
        add_stops(alice, trip, CASTLE, MARKET)
        phone = open_page(browser, server, viewport=PHONE, phone=True, session=bob.token, poll_ms=None,
                          failed_requests=True)
        laptop = open_page(browser, server, viewport=LAPTOP, session=alice.token, failed_requests=True)
        sent = []
        for page in (phone, laptop):
            page.on("request", lambda r: sent.append(r.url))
        phone.goto(f"/#/trips/{t}")
        phone.locator(".day-view").wait_for()
        phone.wait_for_function("() => document.documentElement.dataset.sync === 'live'")
        assert phone.locator(".mobile-tabs").get_by_role("button", name="Chat", exact=True).count() == 1
        assert unread(phone) is None

        laptop.goto(f"/#/trips/{t}")
        laptop.locator(".day-view").wait_for()
        assert laptop.locator("#side-panel.open").count() == 0      # without AI it starts closed, as before
        panel = open_chat(laptop)
        intro = panel.locator(".panel-intro").inner_text()
        assert intro == "Everyone on the trip sees this chat, and the changes to the plan as they are made."
        box = panel.get_by_label("Message", exact=True)
        assert box.get_attribute("placeholder") == "Message the group"
        for text in ("Dinner at 19?", "@agent what should we do on day 1?", "Bob, are you in?"):
            box.fill(text)
            assert hint(panel) == "Goes to the group: everyone on the trip reads it.", text
            assert panel.get_by_role("button", name="Group only").is_hidden()
        box.fill("Dinner at 19?")
        words = " ".join(panel.locator(".panel-intro, .agent-composer").all_inner_texts())
        assert "Goes to the group" in words and re.search(r"\bAI\b|@agent", words) is None, words
        shot(laptop, "chat-no-ai-composer-1280")
        panel.get_by_role("button", name="Send").click()
        panel.locator(".msg.mine", has_text="Dinner at 19?").wait_for()

        # Bob's phone hears of it live: the count on his Chat tab, then the message in the chat.
        phone.wait_for_function("() => document.querySelector('.mobile-tabs [data-testid=unread-count]')"
                                "?.textContent === '1'")
        assert phone.locator(".mobile-tabs").get_by_role("button", name="Chat 1 unread", exact=True).count() == 1
        assert phone.evaluate("() => document.documentElement.dataset.sync") == "live"
        shot(phone, "chat-no-ai-unread-390")
        chat = open_chat(phone)
        chat.locator(".msg", has_text="Dinner at 19?").wait_for()
        phone.wait_for_function("() => !document.querySelector('.mobile-tabs [data-testid=unread-count]')")
        reply = chat.get_by_label("Message", exact=True)
        reply.fill("Yes, 19:00 works")
        assert hint(chat) == "Goes to the group: everyone on the trip reads it."
        shot(phone, "chat-no-ai-390")
        chat.get_by_role("button", name="Send").click()
        panel.locator(".msg", has_text="Yes, 19:00 works").wait_for()     # and back to Alice, live
        shot(laptop, "chat-no-ai-1280")

        assert not [u for u in sent if "/agent/chat" in u or "/debug" in u], "a page asked for the AI"
        for page in (phone, laptop):
            assert not [f for f in page.failed_requests if "/agent/" in f or "/chat/" in f], page.failed_requests
            page.errors.check()


def test_a_message_to_the_ai_refused_for_a_spent_share_goes_back_in_the_composer(settings, openai_standin):
    """Alice's share of today's AI is spent: her "@agent" message is refused
    before anything is stored (429 ai_user_limit). The page says why, and the
    message is not left in the chat as if sent (it would vanish on the next
    read, and no one else ever sees it): it is back in the composer, to send
    to the group or tomorrow. When her share renews reads on her own clock
    (the server's "midnight UTC" is 01:00 in Lisbon in July)."""
    openai_standin.responder = quiet_responder
    one_call = settings.with_(ai_daily_limit=4, ai_user_daily_share=0.25)
    now = datetime(2026, 7, 15, 14, 30, tzinfo=UTC)   # the server's clock and the page's
    with live(offline(ai_settings(one_call, openai_standin)), clock=now.timestamp) as server, \
            chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        trip = api_trip(alice)
        t = trip["id"]
        api(alice, "POST", f"/api/trips/{t}/days/{trip['days'][0]['id']}/copilot",
            {"question": "Is the day realistic?", "history": []})   # her one call today
        page = open_page(browser, server, viewport={"width": 375, "height": 812}, phone=True, session=alice.token)
        page.clock.set_fixed_time(now)   # Date only: the page's timers keep running
        page.goto(f"/#/trips/{t}")
        panel = open_chat(page)
        composer = panel.get_by_label("Message", exact=True)
        composer.fill("@agent where should we eat tonight?")
        panel.get_by_role("button", name="Send").click()
        said = panel.locator(".error-box", has_text="You have used your share of today's AI help")
        said.wait_for()
        assert said.inner_text() == "You have used your share of today's AI help. It renews tomorrow at 01:00."
        shot(page, "chat-share-spent-375")
        assert composer.input_value() == "@agent where should we eat tonight?"
        # Read once, as an alert, and again with the composer the words went back to.
        assert nested_live_regions(page) == []
        assert said.get_attribute("role") == "alert"
        described = composer.evaluate("(t) => t.getAttribute('aria-describedby').split(' ')"
                                      ".map((id) => document.getElementById(id).textContent).join(' ')")
        assert "You have used your share of today's AI help" in described
        assert panel.locator(".msg", has_text="where should we eat tonight").count() == 0
        assert [m for m in api(alice, "GET", f"/api/trips/{t}/agent/messages")["messages"] if m["role"] == "user"] == []
        page.errors.check()


def test_a_turn_the_days_ai_limit_stops_leaves_no_empty_reply(settings, openai_standin):
    """Everyone's AI for today is spent (503 ai_limit, said inside the turn's
    stream, after the message is stored): the message stays, the page says
    why and when AI help is back, in the member's time (15:30 in Lisbon in
    July, UTC+1: the day's counts end at 00:00 UTC, 01:00 there), and no
    empty "Wayline AI" reply is left under it, which would also have sent
    the next plain message to the AI as a follow-up."""
    openai_standin.responder = quiet_responder
    one_call = settings.with_(ai_daily_limit=1, ai_user_daily_share=1.0)
    now = datetime(2026, 7, 15, 14, 30, tzinfo=UTC)   # the server's clock and the page's
    with live(offline(ai_settings(one_call, openai_standin)), clock=now.timestamp) as server, \
            chromium() as browser:
        alice, bob = api_user(server, "alice", "Alice"), api_user(server, "bob", "Bob")
        trip = api_trip(alice, bob)
        t = trip["id"]
        api(bob, "POST", f"/api/trips/{t}/days/{trip['days'][0]['id']}/copilot",
            {"question": "Is the day realistic?", "history": []})   # the day's one call
        page = open_page(browser, server, viewport={"width": 375, "height": 812}, phone=True, session=alice.token)
        page.clock.set_fixed_time(now)   # Date only: the page's timers keep running
        page.goto(f"/#/trips/{t}")
        panel = open_chat(page)
        send_chat(panel, "@agent where should we eat tonight?")
        said = panel.locator(".error-box", has_text="the usage limit has been reached")
        said.wait_for()
        assert said.inner_text() == ("AI planning is temporarily unavailable because the usage limit has been "
                                     "reached. AI help is back tomorrow at 01:00.")
        shot(page, "chat-day-limit-375")
        assert panel.locator(".msg.mine", has_text="where should we eat tonight").count() == 1
        assert panel.locator(".msg.from-agent").count() == 0
        panel.get_by_label("Message", exact=True).fill("Shall we meet at nine?")
        assert hint(panel).startswith("Goes to the group"), hint(panel)
        page.errors.check()
