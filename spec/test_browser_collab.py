"""Two members in two browser contexts: an invite link joins the second, and
each sees the other's edit, vote and chat message without reloading (how
fast is measured by bench/live.py, not here)."""

from __future__ import annotations

import pytest

from browser.harness import (PASSWORD, add_stops, api, api_op, api_trip, api_user, chromium, live, offline, open_page,
                             send_chat, shot, stop_card, ui_add_stop, ui_create_trip, ui_signup)
from browser.scripts import quiet_responder
from standins.openai_standin import ai_settings

pytestmark = pytest.mark.browser

def seen_without_reloading(page, selector: str, has_text: str) -> None:
    page.locator(selector, has_text=has_text).first.wait_for()
    assert page.evaluate("() => window.sameDocument") is True


def test_second_member_sees_edit_vote_and_chat_without_reloading(settings, openai_standin):
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
        # Bob types his name at sign-in before he sees he has no account: the
        # sign-up form he switches to keeps it.
        bob.get_by_label("Username").fill("bob")
        bob.get_by_role("link", name="Create an account").click()
        bob.get_by_role("heading", name="Create your account").wait_for()
        assert bob.get_by_label("Username").input_value() == "bob"
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
        for page in (alice, bob):
            page.evaluate("() => { window.sameDocument = true; }")  # gone after a reload

        # Alice edits; Bob sees it without reloading.
        alice.locator(".rail-view", has_text="Itinerary").click()
        ui_add_stop(alice, "Miradouro de Santa Luzia", set_time="09:30", duration=45, lat=38.7117, lng=-9.1301)
        seen_without_reloading(bob, ".stop", "Miradouro de Santa Luzia")

        # A vote changes the trip without a new version: the conditional poll still brings it.
        alice.get_by_role("button", name="Vote for Miradouro de Santa Luzia, 0 so far").click()
        alice.get_by_role("button", name="Vote for Miradouro de Santa Luzia, 1 so far").wait_for()
        bob.get_by_role("button", name="Vote for Miradouro de Santa Luzia, 1 so far").wait_for()

        # Alice writes in the shared timeline; Bob sees the message, and the edit's event line.
        alice.locator("#tabpanel-chat").wait_for()
        send_chat(alice, "Shall we start at the viewpoint?")
        alice.locator(".msg.mine", has_text="Shall we start at the viewpoint?").wait_for()
        seen_without_reloading(bob, ".msg.from-member", "Shall we start at the viewpoint?")
        assert bob.locator(".agent-log .op-event",
                           has_text="Alice added “Miradouro de Santa Luzia” to Day 1").count() == 1

        # Bob answers; Alice sees it the same way.
        send_chat(bob, "Yes, before it gets busy.")
        seen_without_reloading(alice, ".msg.from-member", "Yes, before it gets busy.")
        shot(alice, "08-agent-timeline")
        shot(bob, "09-second-member")
        alice.errors.check()
        bob.errors.check()


def test_a_form_whose_stop_or_member_went_meanwhile_says_so_in_words(settings):
    """A form open while another member removes what it refers to: the page
    says what happened, not the server's words for API clients with an id or
    a field name in them ("No stop 6ba7… in this trip", "paidBy: 8f7a… is
    not a member of this trip")."""
    with live(offline(settings)) as server, chromium() as browser:
        ann, ben, cat = api_user(server, "ann", "Ann"), api_user(server, "ben", "Ben"), api_user(server, "cat", "Cat")
        trip = api_trip(ann, ben, cat)
        t = trip["id"]
        [alpha] = add_stops(ann, trip, {"name": "Alpha", "setTime": "10:00", "durationMin": 60})
        page = open_page(browser, server, phone=True, session=ann.token)
        page.goto(f"/#/trips/{t}")

        stop_card(page, "Alpha").get_by_role("button", name="Edit Alpha").click()
        dialog = page.get_by_role("dialog")
        dialog.get_by_label("Name").fill("Alpha, renamed")
        api_op(ben, t, "delete_stop", stopId=alpha)
        stop_card(page, "Alpha").wait_for(state="detached")
        dialog.get_by_role("button", name="Save changes").click()
        error = dialog.locator(".error-box")
        error.wait_for()
        assert error.inner_text() == "That stop is no longer in the trip: someone else may have just removed it."
        dialog.get_by_role("button", name="Cancel").click()

        page.locator(".mobile-tabs").get_by_role("button", name="Expenses").click()
        page.get_by_role("button", name="Add expense").click()
        dialog.get_by_label("What for").fill("Taxi")
        dialog.get_by_label("Amount").fill("20")
        dialog.get_by_label("Paid by").select_option(label="Cat")
        api(ann, "DELETE", f"/api/trips/{t}/members/{cat.user['id']}")
        dialog.get_by_role("button", name="Add expense").click()
        error.wait_for()
        assert error.inner_text() == "Someone chosen here is no longer a member of this trip. Choose again."
        shot(page, "collab-form-gone")
        page.errors.check()
