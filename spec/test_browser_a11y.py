"""Accessibility (issue 21): axe-core finds no critical and no serious
problem on any view at 360, 390 and 1280 px: sign-in, sign-up, the trips
list, the invite, a day of the itinerary with findings, the stop dialog,
expenses, people, the chat, the suggestions tray, AI help (This day,
Preferences), the preferences page, the account menu and its dialogs, and
the admin page. Every control is reached by the keyboard with a visible
focus ring."""

from __future__ import annotations

import pytest

from browser.a11y import violations
from browser.harness import (api, api_op, api_trip, api_user, chromium, live, offline, open_ai_help, open_chat,
                             open_page, panel_button)
from browser.scripts import proposing_responder
from standins.openai_standin import ai_settings
from test_browser_tray import MUSEUM, OCEAN, pending, soon, wait_for

pytestmark = pytest.mark.browser

SIZES = [{"width": 360, "height": 740}, {"width": 390, "height": 844}, {"width": 1280, "height": 800}]


def world(server) -> dict:
    root = api_user(server, "root", "Root Admin")
    alice, bob = api_user(server, "alice", "Alice Wonderland-Smithson"), api_user(server, "bob", "Bob")
    dave = api_user(server, "dave", "Dave")
    trip = api_trip(alice, bob, root, title="Lisbon with the whole family", start=soon(2), days=2)
    t, day = trip["id"], trip["days"][0]["id"]
    for stop in (MUSEUM, OCEAN):
        api_op(alice, t, "insert_stop", dayId=day, **stop)
    wait_for(lambda: pending(alice, t), "the AI's suggestion")
    ids = {c.user["username"]: c.user["id"] for c in (alice, bob)}
    api_op(alice, t, "add_expense", title="Dinner at Cervejaria Ramiro", amountMinor=12000, currency="EUR",
           paidBy=ids["alice"])
    api_op(bob, t, "add_expense", title="Sushi", amountMinor=8000, currency="JPY", paidBy=ids["bob"])
    api(bob, "POST", f"/api/trips/{t}/agent/messages", {"text": "Alice, shall we start at the tile museum?"})
    invite = api(alice, "POST", f"/api/trips/{t}/invites", {"role": "viewer"})
    return {"alice": alice, "root": root, "dave": dave, "trip": trip, "invite": invite["token"]}


class Findings(dict):
    def check(self, page, view: str) -> None:
        found = violations(page)
        if found:
            self[view] = found

    def report(self) -> str:
        return "\n".join(f"{view}:\n" + "\n".join(f"  - {v['impact']} {v['id']} ({v['help']}):\n      "
                                                    + "\n      ".join(v["nodes"]) for v in found)
                         for view, found in self.items())


def test_axe_finds_nothing_critical_or_serious_on_any_view(settings, openai_standin):
    openai_standin.responder = proposing_responder
    app_settings = offline(ai_settings(settings, openai_standin, ai_admins=("root",)))
    with live(app_settings, agent_debounce_s=0.05) as server, chromium() as browser:
        w = world(server)
        t = w["trip"]["id"]
        found = Findings()
        for size in SIZES:
            width, phone = size["width"], size["width"] < 760

            out = open_page(browser, server, viewport=size, phone=phone)
            out.goto("/")
            out.get_by_role("heading", name="Welcome back").wait_for()
            found.check(out, f"{width} sign-in")
            out.goto("/#/signup")
            out.get_by_role("heading", name="Create your account").wait_for()
            found.check(out, f"{width} sign-up")
            out.context.close()

            invited = open_page(browser, server, viewport=size, phone=phone, session=w["dave"].token)
            invited.goto(f"/#/invite/{w['invite']}")
            invited.get_by_role("button", name="Join").wait_for()
            found.check(invited, f"{width} invite")
            invited.context.close()

            page = open_page(browser, server, viewport=size, phone=phone, session=w["alice"].token)
            page.goto("/#/")
            page.locator(".trip-card").wait_for()
            found.check(page, f"{width} trips")
            page.goto("/#/preferences")
            page.get_by_role("heading", name="Your defaults").wait_for()
            found.check(page, f"{width} preferences page")

            page.goto(f"/#/trips/{t}")
            page.locator(".btn-fix").first.wait_for()
            page.locator("[data-testid=tray-bar]").wait_for()
            if page.locator("#side-panel.open").count():
                panel_button(page, "Chat").click()
            found.check(page, f"{width} itinerary")
            page.locator("[data-testid=tray-bar]").click()
            page.locator(".sugg-card").first.wait_for()
            found.check(page, f"{width} suggestions tray")
            page.locator("[data-testid=tray-bar]").click()

            page.locator("[data-testid=add-stop]").click()
            page.get_by_role("dialog").get_by_label("Name").wait_for()
            found.check(page, f"{width} stop dialog")
            page.get_by_role("dialog").get_by_role("button", name="Cancel").click()

            tabs = page.locator(".mobile-tabs") if phone else page.locator(".rail-views")
            tabs.get_by_role("button", name="Expenses").click()
            page.locator(".balance-card").first.wait_for()
            found.check(page, f"{width} expenses")
            tabs.get_by_role("button", name="People").click()
            page.get_by_role("heading", name="Members").wait_for()
            found.check(page, f"{width} people")
            tabs.get_by_role("button", name="Itinerary").click()

            panel = open_chat(page)
            panel.locator(".msg", has_text="shall we start").wait_for()
            found.check(page, f"{width} chat")
            panel = open_ai_help(page, "This day")
            panel.get_by_role("button", name="Review this day").wait_for()
            found.check(page, f"{width} AI help: this day")
            open_ai_help(page, "Preferences")
            panel.get_by_role("heading", name="This trip's shared choices").wait_for()
            found.check(page, f"{width} AI help: preferences")
            panel.locator(".side-close").click()

            page.locator(".account-btn").click()
            page.locator("#account-menu").get_by_role("button", name="Change password").wait_for()
            found.check(page, f"{width} account menu")
            page.locator("#account-menu").get_by_role("button", name="Change password").click()
            page.get_by_role("dialog").get_by_label("Current password").wait_for()
            found.check(page, f"{width} change password dialog")
            page.get_by_role("dialog").get_by_role("button", name="Cancel").click()
            page.locator(".account-btn").click()
            page.locator("#account-menu").get_by_role("button", name="Delete account").click()
            page.get_by_role("dialog").wait_for()
            found.check(page, f"{width} delete account dialog")
            page.get_by_role("dialog").get_by_role("button", name="Cancel").click()
            page.errors.check()
            page.context.close()

            admin = open_page(browser, server, viewport=size, phone=phone, session=w["root"].token)
            admin.goto("/admin.html")
            admin.locator(".admin-table-card").wait_for()
            found.check(admin, f"{width} admin")
            admin.context.close()
        assert not found, "axe found critical or serious problems:\n" + found.report()


def test_every_control_of_a_day_is_reached_by_the_keyboard_with_a_visible_focus(settings, openai_standin):
    openai_standin.responder = proposing_responder
    with live(offline(ai_settings(settings, openai_standin)), agent_debounce_s=0.05) as server, \
            chromium() as browser:
        w = world(server)
        page = open_page(browser, server, viewport=SIZES[2], session=w["alice"].token)
        page.goto(f"/#/trips/{w['trip']['id']}")
        page.locator(".btn-fix").first.wait_for()
        page.locator("[data-testid=tray-bar]").wait_for()
        wanted = page.evaluate("""() => [...document.querySelectorAll(
            '.planner button, .planner a[href], .planner input, .planner select, .planner textarea, .topbar button')]
            .filter((el) => el.getClientRects().length && !el.closest('[inert]') && !el.disabled
                    && getComputedStyle(el).visibility !== 'hidden' && !el.closest('.leaflet-container'))
            .length""")
        reached, unringed = set(), []
        for _ in range(400):
            page.keyboard.press("Tab")
            info = page.evaluate("""() => {
                const el = document.activeElement;
                if (!el || el === document.body) return null;
                const style = getComputedStyle(el);
                const ring = (style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0)
                    || style.boxShadow !== 'none';
                return { key: el.outerHTML.slice(0, 120), ring, planner: Boolean(el.closest('.planner, .topbar')) };
            }""")
            if info is None or not info["planner"]:
                continue
            if info["key"] in reached:
                continue
            reached.add(info["key"])
            if not info["ring"]:
                unringed.append(info["key"])
        assert len(reached) >= wanted * 0.9, f"the keyboard reached {len(reached)} of {wanted} controls"
        assert unringed == [], "focused without a visible ring:\n" + "\n".join(unringed)
