"""Two members in two browser contexts: an invite link joins the second, and
each sees the other's edit and chat message within one poll."""

from __future__ import annotations

import time

import pytest

from browser.harness import (FAST_POLL_MS, PASSWORD, chromium, live, offline, open_page, shot, ui_add_stop,
                             ui_create_trip, ui_signup)
from browser.scripts import quiet_responder
from standins.openai_standin import ai_settings

pytestmark = pytest.mark.browser

ONE_POLL_S = FAST_POLL_MS / 1000 * 1.5 + 1.0  # one interval, a request in flight, and rendering


def seen_within(page, selector: str, has_text: str, seconds: float) -> float:
    started = time.monotonic()
    page.locator(selector, has_text=has_text).first.wait_for(timeout=seconds * 1000)
    return time.monotonic() - started


def test_second_member_sees_edit_and_chat_within_one_poll(settings, openai_standin):
    openai_standin.responder = quiet_responder
    with live(offline(ai_settings(settings, openai_standin))) as server, chromium() as browser:
        alice = open_page(browser, server)
        ui_signup(alice, "alice", "Alice")
        ui_create_trip(alice, "Lisbon with Bob")
        alice.locator(".rail-view", has_text="People").click()
        alice.get_by_role("button", name="Create invite link").click()
        invite = alice.locator("[data-testid=invite-url]").input_value()
        assert "/#/invite/" in invite

        bob = open_page(browser, server)
        bob.goto(invite)
        bob.get_by_text("Sign in or create an account to join").wait_for()
        bob.get_by_role("link", name="Create an account").click()
        bob.get_by_label("Username").fill("bob")
        bob.get_by_label("Display name (optional)").fill("Bob")
        bob.get_by_label("Password").fill(PASSWORD)
        bob.get_by_role("button", name="Create account").click()
        # The invite page names the trip and who sent it; joining says so.
        bob.get_by_role("heading", name="Alice invited you to “Lisbon with Bob”").wait_for()
        bob.get_by_role("button", name="Join the trip").click()
        bob.locator(".day-view").wait_for()
        bob.get_by_text("You joined “Lisbon with Bob”").wait_for()
        assert "Lisbon with Bob" in bob.locator(".rail-head").inner_text()
        bob.locator("#tabpanel-chat").wait_for()  # the AI panel opens on its chat on a desktop when AI is on

        # Alice edits; Bob sees it without reloading, within one poll.
        alice.locator(".rail-view", has_text="Itinerary").click()
        ui_add_stop(alice, "Miradouro de Santa Luzia", set_time="09:30", duration=45, lat=38.7117, lng=-9.1301)
        waited = seen_within(bob, ".stop", "Miradouro de Santa Luzia", ONE_POLL_S)
        assert waited <= ONE_POLL_S

        # A vote changes the trip without a new version: the conditional poll still brings it.
        alice.get_by_role("button", name="Vote for Miradouro de Santa Luzia, 0 so far").click()
        alice.get_by_role("button", name="Vote for Miradouro de Santa Luzia, 1 so far").wait_for()
        bob.get_by_role("button", name="Vote for Miradouro de Santa Luzia, 1 so far").wait_for(
            timeout=ONE_POLL_S * 1000)

        # Alice writes in the shared timeline; Bob sees the message, and the edit's event line.
        alice.locator("#tabpanel-chat").wait_for()
        alice.get_by_label("Message", exact=True).fill("Shall we start at the viewpoint?")
        alice.get_by_role("button", name="Send").click()
        alice.locator(".msg.mine", has_text="Shall we start at the viewpoint?").wait_for()
        waited = seen_within(bob, ".msg.from-member", "Shall we start at the viewpoint?", ONE_POLL_S)
        assert waited <= ONE_POLL_S
        assert bob.locator(".agent-log .op-event",
                           has_text="Alice added “Miradouro de Santa Luzia” to Day 1").count() == 1

        # Bob answers; Alice sees it the same way.
        bob.get_by_label("Message", exact=True).fill("Yes, before it gets busy.")
        bob.get_by_role("button", name="Send").click()
        seen_within(alice, ".msg.from-member", "Yes, before it gets busy.", ONE_POLL_S)
        shot(alice, "08-agent-timeline")
        shot(bob, "09-second-member")
        alice.errors.check()
        bob.errors.check()
