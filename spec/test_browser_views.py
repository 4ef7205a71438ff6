"""Every view at a desktop size (1280) and two phone widths (360, 390):
nothing scrolls sideways, axe-core finds no critical or serious
accessibility problem (issue 21; spec/browser/a11y.py) at 1280 and 360,
nothing logs an error or breaks the page's content policy, and (run with
WAYLINE_SCREENSHOTS=1) a screenshot of each lands in spec/screenshots/
(view-<width>-<name>.png) to be looked at. A signed-out load asks nothing
that fails. One walk does the checks at each view: each page load and
gesture is the costly part, and the checks are what differ. So the phone
walk checks each view at 360, then turns the phone to 390 and back, as a
screen does when it is resized: the page lays itself out again at each width
(its layout follows the width, never the width it started at), and a third
walk would cost a third of the test to repeat the same gestures."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from browser.a11y import nested_live_regions, violations, watch_live_regions
from browser.harness import (api, api_op, api_trip, api_user, chromium, live, no_sideways_scroll, offline,
                             open_ai_help, open_chat, open_page, panel_button, settled, shot, stop_card)
from browser.scripts import proposing_responder
from standins.google_standin import google_settings
from standins.openai_standin import ai_settings
from standins.weather_standin import weather_settings
from test_browser_tray import pending, wait_for

pytestmark = pytest.mark.browser

SIZES = [{"width": 1280, "height": 800}, {"width": 360, "height": 740}]
# The phone walk's views are checked again at this size (resized, then back).
WIDER_PHONE = {"width": 390, "height": 844}
# axe runs at the desktop width and the narrowest phone. 390 and 360 are the
# same phone layout: the same markup under the same style rules (the phone
# rules start at 760 px; the one rule for 360 and under stacks the admin
# page's limit cards, which axe sees at 360). What a width changes for axe
# is layout (text wrapping over other backgrounds, the room between tap
# targets, a region that has to scroll), and that is tightest at 360. Axe
# at 390 as well was a third of its 60 runs, about 6.5 CPU-seconds, to
# repeat 360's; the sideways-scroll check runs at all three.
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
    root = api_user(server, "root", "Root Admin")
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
        if stop["name"] == "Oceanário de Lisboa":      # the clash: the AI suggests a fix (the tray's view)
            wait_for(lambda: pending(alice, t), "the AI's suggestion about the clash")
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
    return {"alice": alice, "dave": dave, "root": root, "trip": trip, "invite": invite["token"]}


class Checks:
    """What each view is checked for; axe's findings are gathered and
    reported together at the end (one run shows every view's problems)."""

    def __init__(self) -> None:
        self.axe: dict[str, list[dict]] = {}
        self.nested: dict[str, list[str]] = {}

    def __call__(self, page, width: int, name: str) -> None:
        self.fits(page, width, name)
        found = violations(page)
        if found:
            self.axe[f"{width} {name}"] = found
        nested = nested_live_regions(page)
        if nested:
            self.nested[f"{width} {name}"] = nested
        if width < 760:   # the same view on a wider phone, then back
            size = page.viewport_size
            page.set_viewport_size(WIDER_PHONE)
            self.fits(page, WIDER_PHONE["width"], name)
            page.set_viewport_size(size)

    @staticmethod
    def fits(page, width: int, name: str) -> None:
        assert page.viewport_size["width"] == width
        settled(page)
        overflow = no_sideways_scroll(page)
        shot(page, f"view-{width}-{name}")
        assert overflow == 0, f"{name} at {width} px scrolls sideways by {overflow} px"

    def report(self) -> str:
        return "\n".join(f"{view}:\n" + "\n".join(f"  - {v['impact']} {v['id']} ({v['help']}):\n      "
                                                    + "\n      ".join(v["nodes"]) for v in found)
                         for view, found in self.axe.items())


def test_every_view_fits_phones_is_accessible_and_logs_nothing(settings, openai_standin, google_standin,
                                                              weather_standin):
    openai_standin.responder = proposing_responder
    app_settings = offline(weather_settings(google_settings(ai_settings(settings, openai_standin, ai_admins=("root",)),
                                                            google_standin), weather_standin))
    with live(app_settings, agent_debounce_s=0.05) as server, chromium() as browser:
        world = make_world(server)
        t = world["trip"]["id"]
        check = Checks()
        for size in SIZES:
            width, phone = size["width"], size["width"] < 760
            pages = []

            # Signed out: the probe answers "nobody", so nothing fails or logs.
            out = open_page(browser, server, viewport=size, phone=phone, failed_requests=True)
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

            page = open_page(browser, server, viewport=size, phone=phone, session=world["alice"].token,
                             failed_requests=True)
            pages.append(page)
            page.goto("/#/")
            page.locator(".trip-card").wait_for()
            watch_live_regions(page)   # the same document to the end: what comes and goes is seen too
            check(page, width, "trips")
            page.goto("/#/preferences")
            page.get_by_role("heading", name="Your defaults").wait_for()
            check(page, width, "preferences")

            page.goto(f"/#/trips/{t}")
            page.locator("[data-testid=review-status]", has_text="to check").wait_for()
            page.locator(".btn-fix").first.wait_for()
            page.locator(".map-canvas .leaflet-marker-icon").first.wait_for()
            if page.locator("#side-panel.open").count():
                panel_button(page, "Chat").click()       # the page as it is with the panel closed
            check(page, width, "day")
            page.locator("[data-testid=tray-bar]").click()
            page.locator(".sugg-card").first.wait_for()
            check(page, width, "tray")
            page.locator("[data-testid=tray-bar]").click()
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

            panel = open_chat(page)
            panel.locator(".msg.from-member", has_text="Shall we start").wait_for()
            panel.locator(".op-group").last.wait_for()
            panel.get_by_label("Message", exact=True).fill("Bob, can you book the tickets?")
            check(page, width, "chat")
            panel.get_by_label("Message", exact=True).fill("")
            open_ai_help(page, "This day")
            panel.get_by_role("button", name="Review this day").wait_for()
            check(page, width, "ai-this-day-before")
            panel.get_by_label("Meal").select_option("dinner")
            panel.get_by_role("button", name="Find places to eat").click()
            panel.locator(".suggestion").first.wait_for()
            check(page, width, "ai-this-day")
            open_ai_help(page, "Preferences")
            panel.get_by_role("heading", name="This trip's shared choices").wait_for()
            check(page, width, "ai-preferences")
            panel.locator(".side-close").click()

            page.locator(".account-btn").click()
            page.locator("#account-menu").get_by_role("button", name="Change password").wait_for()
            check(page, width, "account-menu")
            page.locator("#account-menu").get_by_role("button", name="Change password").click()
            page.get_by_role("dialog").get_by_role("button", name="Cancel").wait_for()
            check(page, width, "account-password")
            page.get_by_role("dialog").get_by_role("button", name="Cancel").click()
            page.locator(".account-btn").click()
            page.locator("#account-menu").get_by_role("button", name="Delete account").click()
            page.get_by_role("dialog").wait_for()
            check(page, width, "account-delete")
            page.get_by_role("dialog").get_by_role("button", name="Cancel").click()

            admin = open_page(browser, server, viewport=size, phone=phone, session=world["root"].token)
            pages.append(admin)
            admin.goto("/admin.html")
            admin.locator(".admin-table-card").wait_for()
            check(admin, width, "admin")

            for p in pages:
                p.errors.check()
            assert page.failed_requests == [], page.failed_requests
            for p in pages:
                p.context.close()
        assert not check.axe, "axe found critical or serious problems:\n" + check.report()
        assert not check.nested, "live regions inside live regions (read twice):\n" + "\n".join(
            f"{view}:\n  " + "\n  ".join(found) for view, found in check.nested.items())
