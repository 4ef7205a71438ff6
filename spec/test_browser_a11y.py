"""Accessibility (issue 21): every control of a day is reached by the
keyboard with a visible focus ring. That axe-core finds no critical and no
serious problem on any view at 360, 390 and 1280 px is checked on the walk
through every view in test_browser_views.py (one walk, each view checked
for sideways scrolling and by axe)."""

from __future__ import annotations

import pytest

from browser.harness import (api, api_op, api_trip, api_user, chromium, live, offline, open_page, shot)
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

        # A viewer sees every problem with what clears it: the fixes only an
        # editor may apply in words (whom to ask), and a fix any member may
        # apply (the trip's shared choices) as a button.
        t = w["trip"]["id"]
        api(w["dave"], "POST", f"/api/invites/{w['invite']}/accept", {})
        api(w["alice"], "PUT", f"/api/trips/{t}/preferences", {"avoidModes": ["walk", "transit", "drive", "bicycle"]})
        viewer = open_page(browser, server, viewport=SIZES[0], phone=True, session=w["dave"].token)
        viewer.goto(f"/#/trips/{t}")
        clash = viewer.locator(".finding[data-kind=overlap]")
        clash.locator(".fixes-for-editors li").first.wait_for()
        assert clash.locator(".fixes-for-editors").inner_text().startswith("An editor of the trip can fix this")
        assert clash.locator(".btn-fix").count() == 0
        clash.scroll_into_view_if_needed()
        shot(viewer, "viewer-fixes-360")
        avoided = viewer.locator(".finding[data-kind=avoided_mode]")
        avoided.locator(".btn-fix", has_text="on this trip").first.click()
        viewer.locator(".finding[data-kind=avoided_mode]").wait_for(state="detached")
        viewer.errors.check()
