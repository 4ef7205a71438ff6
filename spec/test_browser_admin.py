"""The admin usage page: linked for admins only; it shows usage to an admin
and nothing to anyone else. Also drives the Copilot (the AI call counted)."""

from __future__ import annotations

import json
import re
from datetime import date, timedelta

import pytest

from browser.harness import (chromium, live, offline, open_ai_help, open_page, shot, ui_add_stop, ui_create_trip,
                             ui_signin, ui_signup)
from browser.scripts import quiet_responder
from standins.openai_standin import ai_settings

pytestmark = pytest.mark.browser


def test_admin_page_shows_usage_to_an_admin_and_nothing_to_others(settings, openai_standin):
    openai_standin.responder = quiet_responder
    app_settings = offline(ai_settings(settings, openai_standin, ai_admins=("root",)))
    with live(app_settings) as server, chromium() as browser:
        admin = open_page(browser, server)
        ui_signup(admin, "root", "Root")
        ui_create_trip(admin, "Usage trip")
        ui_add_stop(admin, "Castelo de São Jorge", set_time="10:00", duration=90, lat=38.7139, lng=-9.1335)

        # One Copilot question: an AI call the usage page counts.
        panel = open_ai_help(admin)
        panel.get_by_label("Your question about this day").fill("Is this day realistic?")
        panel.get_by_role("button", name="Ask", exact=True).click()
        panel.locator(".bubble", has_text="The day looks fine.").wait_for()
        shot(admin, "18-copilot")

        link = admin.locator("[data-testid=admin-link]")
        assert link.is_visible()
        link.click()
        admin.wait_for_url("**/admin.html")
        admin.get_by_text("Day review").first.wait_for()
        shot(admin, "19-admin-usage")
        admin.errors.check()
        assert_looks_like_wayline(admin)
        # Today against each limit, as a meter with words, not a colour alone.
        calls = admin.get_by_role("meter", name="Calls", exact=True)
        used = calls.get_attribute("aria-valuenow")  # the Copilot call, and any agent evaluation
        assert int(used) >= 1
        assert calls.get_attribute("aria-valuetext").startswith(f"{used} of ")
        # The chart says what it shows; the table keeps its headers.
        chart = admin.locator("#admin-chart svg")
        assert chart.get_attribute("role") == "img"
        assert chart.locator("title").first.text_content() == "Model calls per UTC day, last 30 days"
        assert re.search(r"\d+ calls? in total", chart.locator("desc").text_content())
        assert admin.locator("#admin-table thead th[scope=col]").count() == 7
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", admin.locator("#admin-table tbody th[scope=row]").first.inner_text())

        # A phone: the same page, nothing wider than the screen.
        phone = open_page(browser, server, phone=True)
        ui_signin(phone, "root")
        phone.get_by_role("heading", name="Your trips").wait_for()
        phone.goto("/admin.html")
        phone.get_by_text("Day review").first.wait_for()
        assert_no_horizontal_overflow(phone)
        whole_page_shot(phone, "phone-05-admin")
        phone.errors.check()

        other = open_page(browser, server)
        ui_signup(other, "mallory")
        assert other.locator("[data-testid=admin-link]").count() == 0
        other.goto("/admin.html")
        other.wait_for_load_state("networkidle")
        text = other.locator("body").inner_text().lower()
        assert "copilot" not in text and "gpt-" not in text  # no usage, no model names
        assert other.get_by_role("status").inner_text() == "Not available"
        assert other.locator("#admin-today").is_hidden() and other.locator("#admin-history").is_hidden()
        shot(other, "20-admin-refused")


def assert_looks_like_wayline(page) -> None:
    """The app's own stylesheet and top bar, not a bare document."""
    assert page.locator("link[href='/styles.css']").count() == 1
    assert page.locator(".topbar .brand .brand-mark").is_visible()
    brand = page.locator(".topbar .brand")
    assert brand.evaluate("a => getComputedStyle(a).textDecorationLine") == "none"


def limit_card(page, key: str):
    return page.locator(f".admin-limit[data-limit={key}]")


def whole_page_shot(page, name: str) -> None:
    """The page top to bottom (shot()'s default is the viewport only)."""
    shot(page, name, full_page=True)


def assert_no_horizontal_overflow(page) -> None:
    sizes = page.evaluate("({scroll: document.documentElement.scrollWidth, view: window.innerWidth})")
    assert sizes["scroll"] <= sizes["view"], f"the page is wider than the screen: {sizes}"


def usage_payload(today: date) -> dict:
    """Busy usage near and at the limits: 30 days, every feature, a long model name."""
    features = ["copilot", "plan_day", "agent_chat", "agent_eval", "agent_ambient"]
    days = []
    for back in range(30):
        day = (today - timedelta(days=back)).isoformat()
        for i, feature in enumerate(features):
            calls = (back * 7 + i * 3) % 11
            if calls:
                days.append({"date": day, "feature": feature,
                             "model": "gpt-6.1-sol-2026-09-30-long-snapshot" if i == 2 else "gpt-6.1-sol",
                             "calls": calls, "inputTokens": calls * 1234, "outputTokens": calls * 321,
                             "costUsd": None if back == 0 and i == 4 else round(calls * 0.0123, 4)})
    return {"data": {
        "today": {"date": today.isoformat(), "calls": 85, "inputTokens": 300_000, "outputTokens": 100_000,
                  "reservedOutputTokens": 6_000, "costUsd": 1.2345, "running": 1},
        "limits": {"dailyCalls": 100, "dailyTokens": 400_000, "concurrent": 3, "maxOutputTokens": 3000,
                   "timeoutMs": 45_000, "userShare": 0.25, "userDailyCalls": 25, "userDailyTokens": 100_000},
        "members": [
            {"userId": "u-mallory", "name": "Mallory", "username": "mallory", "calls": 25, "tokens": 61_000},
            {"userId": "u-ana", "name": "Ana Rita Figueiredo dos Santos", "username": "anarita", "calls": 21,
             "tokens": 40_000},
            {"userId": "u-bo", "name": "Bo", "username": "bo", "calls": 3, "tokens": 9_800}],
        "days": days,
    }}


def test_admin_page_limit_states_and_a_busy_month(settings):
    """Bars turn amber above 80 % and red at a limit, and say so in words; a
    full month of every feature still fits a phone screen."""
    payload = json.dumps(usage_payload(date(2026, 11, 30)))

    def answer(route):
        route.fulfill(status=200, content_type="application/json", body=payload)

    with live(offline(settings)) as server, chromium() as browser:
        for phone in (False, True):
            page = open_page(browser, server, phone=phone)
            page.route("**/api/admin/ai-usage", answer)
            page.goto("/admin.html")
            page.locator("#admin-table tfoot").get_by_text("Total").wait_for()
            assert_looks_like_wayline(page)

            assert "is-near" in limit_card(page, "calls").get_attribute("class")
            assert "Near the limit" in limit_card(page, "calls").inner_text()
            tokens = page.get_by_role("meter", name="Tokens", exact=True)
            assert "limit reached" in tokens.get_attribute("aria-valuetext")
            assert "Limit reached" in limit_card(page, "tokens").inner_text()
            assert "is-ok" in limit_card(page, "running").get_attribute("class")
            colours = page.evaluate("""() => [...document.querySelectorAll('.admin-meter-fill')]
                .map((fill) => getComputedStyle(fill).backgroundColor)""")
            assert colours[:3] == ["rgb(245, 158, 11)", "rgb(220, 38, 38)", "rgb(15, 118, 110)"]  # amber, red, teal
            # Each member's share (issue 22): a member who used it all says so in words.
            members = page.locator("#admin-member-list > li")
            assert members.count() == 3
            assert "Share used" in members.nth(0).inner_text() and "25 of 25 calls" in members.nth(0).inner_text()
            assert "Near their share" in members.nth(1).inner_text()
            assert "Share used" not in members.nth(2).inner_text() and "Near" not in members.nth(2).inner_text()
            assert page.get_by_role("meter", name="Calls by Mallory").get_attribute("aria-valuetext") == \
                "25 of 25 calls, 100%"
            note = page.locator("#admin-share-note").inner_text()
            assert "25% of each daily limit: 25 calls and 100,000 tokens" in note
            assert page.locator("#admin-legend li").count() == 5
            # Each feature in words, never the code's name (agent_eval, plan_day…).
            legend = page.locator("#admin-legend").inner_text()
            table = page.locator("#admin-table tbody").inner_text()
            for words in ("Day review", "Optimize my day", "AI chat", "Checks after edits",
                          "Replies in the group chat"):
                assert words in legend and words in table
            for name in ("copilot", "plan_day", "agent_chat", "agent_eval", "agent_ambient"):
                assert name not in legend and name not in table
            assert page.locator("#admin-table tfoot td").last.inner_text().startswith("≥ $")
            if phone:
                assert_no_horizontal_overflow(page)
                whole_page_shot(page, "phone-06-admin-limits")
                page.locator("#admin-members").scroll_into_view_if_needed()
                shot(page, "phone-07-admin-shares")
            else:
                shot(page, "21-admin-limits")
                page.locator("#admin-members").scroll_into_view_if_needed()
                shot(page, "23-admin-shares")
                whole_page_shot(page, "22-admin-month")
            page.errors.check()
