"""A name people type can be one long word: a stop at the station of
Llanfairpwllgwyngyll…gogogoch, a German compound for a day's title, a
pasted link. On a phone it wraps inside its box; nothing pushes the page
sideways (which a phone answers by zooming the whole page out) or hides a
control under a neighbour."""

from __future__ import annotations

import pytest

from browser.harness import (add_stops, api, api_op, api_trip, api_user, chromium, live, no_sideways_scroll, offline,
                             open_page, settled, shot, stop_card)

pytestmark = pytest.mark.browser

WORD = "Llanfairpwllgwyngyllgogerychwyrndrobwllllantysiliogogogoch"


def test_one_long_word_in_any_name_wraps_on_a_phone(settings):
    with live(offline(settings)) as server, chromium() as browser:
        owner = api_user(server, "owner", WORD)
        guest = api_user(server, "guest", "Guest")
        trip = api_trip(owner, title=WORD)
        t, day = trip["id"], trip["days"][0]["id"]
        # Two set times that clash: a finding with fix buttons naming both stops.
        first, _ = add_stops(owner, trip, {"name": WORD, "setTime": "10:00", "durationMin": 60},
                             {"name": f"{WORD} station", "setTime": "10:30", "durationMin": 30})
        api_op(owner, t, "update_day", dayId=day, title=WORD)
        api_op(owner, t, "add_expense", title=WORD, amountMinor=1000, currency="EUR", paidBy=owner.user["id"])
        api(owner, "POST", f"/api/trips/{t}/stops/{first}/comments", {"body": "Tickets at the station."})
        invite = api(owner, "POST", f"/api/trips/{t}/invites", {"role": "editor"})["token"]
        page = open_page(browser, server, phone=True, viewport={"width": 360, "height": 740}, session=owner.token)

        def fits(name: str) -> None:
            settled(page)
            shot(page, f"long-word-{name}")
            assert no_sideways_scroll(page) == 0, f"{name}: a long word pushes the page sideways"

        page.goto("/#/")
        page.locator(".trip-card").wait_for()
        fits("trips")
        page.goto(f"/#/trips/{t}")
        page.locator(".btn-fix").first.wait_for()
        fits("day")
        stop_card(page, WORD).get_by_role("button", name="1 comment").click()   # not under a neighbour
        page.locator(".comment", has_text="Tickets at the station.").wait_for()
        fits("day-comments")
        tabs = page.locator(".mobile-tabs")
        tabs.get_by_role("button", name="Expenses").click()
        page.locator(".balance-card").wait_for()
        fits("expenses")
        tabs.get_by_role("button", name="People").click()
        page.get_by_role("heading", name="Members").wait_for()
        fits("people")

        invited = open_page(browser, server, phone=True, viewport={"width": 360, "height": 740}, session=guest.token)
        invited.goto(f"/#/invite/{invite}")
        invited.get_by_role("button", name="Join the trip").wait_for()
        settled(invited)
        assert no_sideways_scroll(invited) == 0, "the invite page: a long trip name pushes it sideways"
        page.errors.check()
        invited.errors.check()
