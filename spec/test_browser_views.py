"""Every view at a desktop size and two phone widths: nothing scrolls
sideways, nothing logs an error or breaks the page's content policy, and a
screenshot of each lands in spec/screenshots/ (view-<width>-<name>.png) to be
looked at. A signed-out load asks nothing that fails."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from browser.harness import (api, api_op, api_trip, api_user, chromium, live, no_sideways_scroll, offline, open_page,
                             shot, stop_card)
from browser.scripts import quiet_responder
from standins.google_standin import google_settings
from standins.openai_standin import ai_settings
from standins.weather_standin import weather_settings

pytestmark = pytest.mark.browser

SIZES = [{"width": 1366, "height": 850}, {"width": 390, "height": 844}, {"width": 360, "height": 740}]
LONG_STOP = "Museu Nacional do Azulejo (the National Tile Museum) and its cloister café"


def soon(days: int) -> str:
    return (date.today() + timedelta(days=days)).isoformat()


def make_world(server) -> dict:
    """A trip with three members, long names, a day with a clash (findings
    with fix buttons), expenses in two currencies, chat and edits."""
    alice = api_user(server, "alice", "Alice Wonderland-Smithson")
    bob = api_user(server, "bob", "Bob")
    carol = api_user(server, "carol", "Carolina Fernández de la Vega")
    dave = api_user(server, "dave", "Dave")
    trip = api_trip(alice, bob, carol, title="Lisbon with the whole extended family, autumn edition",
                    start=soon(1), days=3)
    t, day = trip["id"], trip["days"][0]["id"]
    for stop in [
        {"name": LONG_STOP, "setTime": "10:00", "durationMin": 120, "lat": 38.7247, "lng": -9.1135},
        {"name": "Oceanário de Lisboa", "setTime": "10:30", "durationMin": 90, "lat": 38.7635, "lng": -9.0937},
        {"name": "Pastéis de Belém", "kind": "food", "meal": "afternoon_tea", "durationMin": 45,
         "lat": 38.6975, "lng": -9.2032},
        {"name": "A walk with no place yet", "kind": "activity", "durationMin": 60},
    ]:
        api_op(alice, t, "insert_stop", dayId=day, **stop)
    ids = {m.user["username"]: m.user["id"] for m in (alice, bob, carol)}
    api_op(alice, t, "add_expense", title="Dinner at Cervejaria Ramiro for everyone", amountMinor=12000, currency="EUR",
           paidBy=ids["alice"])
    api_op(carol, t, "add_expense", title="Tram tickets", amountMinor=4550, currency="EUR", paidBy=ids["carol"],
           split={"kind": "shares", "shares": {ids["alice"]: 1, ids["bob"]: 2, ids["carol"]: 1}})
    api_op(bob, t, "add_expense", title="Sushi", amountMinor=8000, currency="JPY", paidBy=ids["bob"])
    api(alice, "POST", f"/api/trips/{t}/agent/messages", {"text": "Shall we start at the tile museum?"})
    api(bob, "POST", f"/api/trips/{t}/agent/messages", {"text": "Yes — and the aquarium after lunch, if it fits."})
    api_op(bob, t, "update_day", dayId=day, title="Museums and the river")
    api_op(bob, t, "update_day", dayId=day, startTime="09:30")
    invite = api(alice, "POST", f"/api/trips/{t}/invites", {"role": "viewer"})
    return {"alice": alice, "dave": dave, "trip": trip, "invite": invite["token"]}


def check(page, width: int, name: str) -> None:
    page.wait_for_timeout(150)
    overflow = no_sideways_scroll(page)
    shot(page, f"view-{width}-{name}")
    assert overflow == 0, f"{name} at {width} px scrolls sideways by {overflow} px"


def test_every_view_fits_phones_and_logs_nothing(settings, openai_standin, google_standin, weather_standin):
    openai_standin.responder = quiet_responder
    app_settings = offline(weather_settings(google_settings(ai_settings(settings, openai_standin), google_standin),
                                            weather_standin))
    with live(app_settings) as server, chromium() as browser:
        world = make_world(server)
        t = world["trip"]["id"]
        for size in SIZES:
            width, phone = size["width"], size["width"] < 760
            pages = []

            # Signed out: the probe answers "nobody", so nothing fails or logs.
            out = open_page(browser, server, viewport=size, phone=phone)
            pages.append(out)
            out.goto("/")
            out.get_by_role("heading", name="Welcome back").wait_for()
            check(out, width, "signin")
            out.goto("/#/signup")
            out.get_by_role("heading", name="Create your account").wait_for()
            check(out, width, "signup")
            assert out.failed_requests == []

            invited = open_page(browser, server, viewport=size, phone=phone, session=world["dave"].token)
            pages.append(invited)
            invited.goto(f"/#/invite/{world['invite']}")
            invited.get_by_role("heading", name="Alice Wonderland-Smithson invited you to").wait_for()
            check(invited, width, "invite")

            page = open_page(browser, server, viewport=size, phone=phone, session=world["alice"].token)
            pages.append(page)
            page.goto("/#/")
            page.locator(".trip-card").wait_for()
            check(page, width, "trips")
            page.goto("/#/preferences")
            page.get_by_role("heading", name="Your defaults").wait_for()
            check(page, width, "preferences")

            page.goto(f"/#/trips/{t}")
            page.locator("[data-testid=review-status]", has_text="to check").wait_for()
            page.locator(".btn-fix").first.wait_for()
            page.locator(".map-canvas .leaflet-marker-icon").first.wait_for()
            check(page, width, "day")
            stop_card(page, "Oceanário de Lisboa").get_by_role("button", name="0 comments").click()
            page.get_by_label("Comment on Oceanário de Lisboa").fill("Book the 10:30 slot online.")
            check(page, width, "day-comments")
            page.mouse.wheel(0, 700)
            check(page, width, "day-scrolled")

            page.locator("[data-testid=add-stop]").click()
            dialog = page.get_by_role("dialog")
            dialog.get_by_label("Kind").select_option("food")
            dialog.get_by_label("Meal").select_option("dinner")
            assert dialog.get_by_label("Duration (minutes)").input_value() == "75"  # dinner's usual length
            check(page, width, "add-stop")
            dialog.get_by_role("button", name="Cancel").click()

            tabs = page.locator(".mobile-tabs") if phone else page.locator(".rail-views")
            tabs.get_by_role("button", name="Expenses").click()
            page.locator(".balance-card").first.wait_for()
            check(page, width, "expenses")
            tabs.get_by_role("button", name="People").click()
            page.get_by_role("heading", name="Members").wait_for()
            page.get_by_role("button", name="Create invite link").click()
            page.locator("[data-testid=invite-url]").wait_for()
            check(page, width, "people")
            tabs.get_by_role("button", name="Itinerary").click()

            panel = page.locator("#side-panel")
            if not panel.evaluate("(el) => el.classList.contains('open')"):
                bar = page.locator(".mobile-tabs") if phone else page.locator(".topbar")
                bar.get_by_role("button", name="AI help").click()
            panel.get_by_role("tab", name="Chat").click()
            panel.locator(".msg.from-member", has_text="Shall we start").wait_for()
            panel.locator(".op-group").last.wait_for()
            check(page, width, "ai-chat")
            panel.get_by_role("tab", name="This day").click()
            panel.get_by_label("Meal").select_option("dinner")
            panel.get_by_role("button", name="Find places to eat").click()
            panel.locator(".suggestion").first.wait_for()
            check(page, width, "ai-this-day")
            panel.get_by_role("tab", name="Preferences").click()
            panel.get_by_role("heading", name="This trip's shared choices").wait_for()
            check(page, width, "ai-preferences")

            for p in pages:
                p.errors.check()
            assert page.failed_requests == [], page.failed_requests
            for p in pages:
                p.context.close()
