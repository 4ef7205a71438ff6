"""Take the plan anywhere, in the browser (issue 24, item 4): a member turns on
the trip's calendar link and copies it (a calendar app then reads it without a
session), connects an assistant and copies its token once, the assistant
proposes over MCP, another member approves its suggestion in the page, and
the token is revoked."""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx
import pytest
from icalendar import Calendar

from browser.harness import PHONE, add_stops, api, api_trip, api_user, chromium, live, no_sideways_scroll, \
    offline, open_page, shot
from browser.a11y import assert_accessible
from helpers import mcp_session

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1280, "height": 860}


def open_assistants(page):
    """The account menu's Connected assistants dialog."""
    page.locator(".account-btn").click()
    page.locator(".account-menu").get_by_role("button", name="Connected assistants").click()
    return page.get_by_role("dialog")


def test_calendar_link_assistant_token_and_an_approved_assistant_suggestion(settings):
    with live(offline(settings)) as server, chromium() as browser:
        alice, bob = api_user(server, "alice", "Alice"), api_user(server, "bob", "Bob")
        trip = api_trip(alice, bob, title="Lisbon with friends")
        t, day = trip["id"], trip["days"][0]["id"]
        (castle,) = add_stops(alice, trip, {"name": "Castelo", "lat": 38.7139, "lng": -9.1335})

        page = open_page(browser, server, session=alice.token, viewport=DESKTOP)
        page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
        page.goto(f"/#/trips/{t}?day={day}&stop={castle}")   # a calendar event's link: the stop is shown
        page.locator(f'.timeline .stop.focused[data-stop-id="{castle}"]').wait_for()

        # Calendar: turn the link on, copy it; a calendar app reads it with no session.
        page.locator(".rail").get_by_test_id("open-calendar").click()
        dialog = page.get_by_role("dialog")
        dialog.get_by_role("button", name="Turn on my calendar link").click()
        link = dialog.get_by_test_id("calendar-url")
        link.wait_for()
        url = link.input_value()
        assert url.startswith(f"{server.url}/api/calendar/") and url.endswith(".ics")
        dialog.get_by_role("button", name="Copy").click()
        page.get_by_text("Calendar link copied").wait_for()
        assert page.evaluate("navigator.clipboard.readText()") == url
        assert dialog.get_by_test_id("add-to-calendar").get_attribute("href") == url   # http here: no webcal://
        assert "shown only this once" in dialog.inner_text()
        shot(page, "take-along-calendar-1280")
        assert_accessible(page, "calendar dialog")
        feed = httpx.get(url)
        assert feed.status_code == 200
        assert castle in {str(e["UID"]) for e in Calendar.from_ical(feed.content).walk("VEVENT")}
        download = dialog.get_by_test_id("download-ics").get_attribute("href")
        assert download == f"/api/trips/{t}/calendar.ics"
        dialog.get_by_role("button", name="Close").click()

        # GPX: the day shown and the whole trip.
        page.locator(".rail").get_by_test_id("open-gpx").click()
        gpx = page.get_by_role("dialog")
        assert gpx.get_by_test_id("download-day-gpx").get_attribute("href") == f"/api/trips/{t}/days/{day}/route.gpx"
        assert gpx.get_by_test_id("download-trip-gpx").get_attribute("href") == f"/api/trips/{t}/trip.gpx"
        gpx.get_by_role("button", name="Close").click()

        # Connected assistants: create one for this trip that may propose; the token is shown once.
        dialog = open_assistants(page)
        dialog.get_by_test_id("token-list").get_by_text("No assistant is connected.").wait_for()
        dialog.get_by_label("Name the group will see").fill("Claude")
        dialog.get_by_label("Trips it can see").select_option(label="Lisbon with friends")
        dialog.get_by_label("What it may do").select_option("propose")
        dialog.get_by_test_id("token-create").click()
        token_field = dialog.get_by_test_id("token-value")
        token_field.wait_for()
        token = token_field.input_value()
        assert token.startswith("wl_pat_") and f"{server.url}/mcp" in dialog.inner_text()
        dialog.get_by_role("button", name="Copy").click()
        page.get_by_text("Token copied").wait_for()
        assert page.evaluate("navigator.clipboard.readText()") == token
        entry = dialog.locator(".token", has_text="Claude")
        assert "Lisbon with friends" in entry.inner_text() and "never used" in entry.inner_text()
        shot(page, "take-along-assistants-1280")
        assert_accessible(page, "connected assistants dialog")
        page.set_viewport_size(PHONE)
        shot(page, "take-along-assistants-390")
        assert no_sideways_scroll(page) == 0
        page.set_viewport_size(DESKTOP)

        # The assistant proposes over MCP: nothing changes yet.
        async def propose(session):
            return await session.call_tool("insert_stop", {"tripId": t, "dayId": day, "name": "Miradouro da Graça",
                                                           "lat": 38.7163, "lng": -9.1310, "kind": "sight"})

        proposed = mcp_session(server.url, token, propose)
        assert not proposed.is_error, proposed.content[0].text
        assert [s["name"] for s in api(alice, "GET", f"/api/trips/{t}")["days"][0]["stops"]] == ["Castelo"]

        # Bob sees it in the suggestions tray, from "Claude via Alice", and approves it in the page.
        bobs = open_page(browser, server, session=bob.token, viewport=DESKTOP)
        bobs.goto(f"/#/trips/{t}")
        bar = bobs.locator("[data-testid=tray-bar]")
        bar.get_by_text("1 suggestion from Claude via Alice").wait_for()
        bar.click()
        card = bobs.locator(".sugg-card.from-assistant")
        assert card.locator(".sugg-from").inner_text() == "From Claude via Alice"
        assert card.locator(".sugg-where").inner_text().startswith("Day 1 · ")
        assert card.locator(".sugg-text").inner_text() == "Add “Miradouro da Graça” to day 1"   # before it is done
        assert "The review finds no new problem" in card.inner_text()
        assert card.get_by_role("button", name="Discuss").count() == 0   # the agent cannot discuss another's proposal
        shot(bobs, "take-along-suggestion-1280")
        assert_accessible(bobs, "an assistant's suggestion in the tray")
        card.get_by_role("button", name="Approve").click()
        bobs.get_by_text("Applied the suggestion from Claude via Alice").wait_for()
        bobs.locator(".timeline .stop", has_text="Miradouro da Graça").wait_for()
        assert [s["name"] for s in api(alice, "GET", f"/api/trips/{t}")["days"][0]["stops"]] == \
            ["Castelo", "Miradouro da Graça"]

        # Revoke: the list says so, and the assistant is refused at the door.
        dialog.get_by_test_id("token-revoke").click()
        dialog.get_by_test_id("token-list").get_by_text("No assistant is connected.").wait_for()
        refused = httpx.post(f"{server.url}/mcp", json={}, headers={"Authorization": f"Bearer {token}"})
        assert refused.status_code == 401

        # On a phone: the People section carries the calendar and GPX buttons; nothing scrolls sideways.
        page.errors.check()
        bobs.set_viewport_size(PHONE)
        bobs.goto(f"/#/trips/{t}?view=members")
        bobs.locator(".take-along").get_by_test_id("open-calendar").click()
        bobs.get_by_role("dialog").get_by_role("button", name="Turn on my calendar link").wait_for()
        shot(bobs, "take-along-calendar-390")
        assert no_sideways_scroll(bobs) == 0
        assert urlsplit(url).path.startswith("/api/calendar/")
        bobs.errors.check()


# The part of the dialog shown: the element's box lies wholly inside the open dialog's box.
IN_VIEW = """(el) => { const r = el.getBoundingClientRect(), d = el.closest('dialog').getBoundingClientRect();
  return r.top >= d.top && r.bottom <= d.bottom && r.height > 0; }"""


def test_a_new_assistant_token_is_shown_in_view_on_a_phone(settings):
    """The token is shown only once: on a phone, with an assistant already
    connected, the new token and its Copy button are in view when it appears
    (the list above it, read again with the new entry, used to push them
    below the dialog's fold)."""
    with live(offline(settings)) as server, chromium() as browser:
        bob = api_user(server, "bob", "Bob")
        api(bob, "POST", "/api/users/me/assistants", {"name": "ChatGPT on my phone", "tripId": None, "scope": "read"})
        page = open_page(browser, server, session=bob.token, phone=True, viewport={"width": 375, "height": 812})
        page.goto("/#/")
        page.get_by_role("heading", name="Your trips").wait_for()
        dialog = open_assistants(page)
        dialog.get_by_test_id("token-list").get_by_text("ChatGPT on my phone").wait_for()
        dialog.get_by_label("Name the group will see").fill("Claude")
        create = dialog.get_by_test_id("token-create")
        create.click()
        dialog.get_by_test_id("token-value").wait_for()
        page.wait_for_function("() => !document.querySelector('[data-testid=token-create]').hasAttribute('aria-busy')")
        assert dialog.get_by_test_id("token-list").locator(".token").count() == 2
        token = dialog.get_by_test_id("token-value")
        assert token.evaluate(IN_VIEW), "the new token is below the dialog's fold"
        assert dialog.locator(".copy-row").get_by_role("button", name="Copy").evaluate(IN_VIEW)
        assert token.evaluate("(el) => document.activeElement === el")
        shot(page, "take-along-new-token-375")
        page.errors.check()
