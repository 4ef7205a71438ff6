"""Money on the page reads as the server writes it (public/money.js, the twin
of app/money.py): a trip in Kuwaiti dinars, where 1500 minor units are
1.500 KWD, in the expense list, the balances, the amount field and the
group's timeline line; yen without decimals; more decimals than a currency
has refused in plain words. Screenshots at 1280 and 390 px."""

from __future__ import annotations

import re

import pytest

from browser.harness import (PHONE, api, api_trip, api_user, chromium, live, no_sideways_scroll, offline, open_chat,
                             open_page, shot)
from browser.scripts import quiet_responder
from standins.openai_standin import ai_settings

pytestmark = pytest.mark.browser

LAPTOP = {"width": 1280, "height": 800}


def add_expense(page, title: str, amount: str, currency: str | None = None) -> None:
    page.get_by_role("button", name="Add expense").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("What for").fill(title)
    if currency:
        dialog.get_by_label("Currency").select_option(currency)
    dialog.get_by_label("Amount").fill(amount)
    dialog.get_by_role("button", name="Add expense").click()


def test_kuwaiti_dinars_read_with_three_decimals_and_yen_with_none(settings, openai_standin):
    openai_standin.responder = quiet_responder
    with live(offline(ai_settings(settings, openai_standin))) as server, chromium() as browser:
        alice, bob = api_user(server, "alice", "Alice"), api_user(server, "bob", "Bob")
        trip = api_trip(alice, bob, title="Kuwait City", currency="KWD")
        page = open_page(browser, server, session=alice.token, viewport=LAPTOP)
        page.goto(f"/#/trips/{trip['id']}")
        page.locator(".rail-view", has_text="Expenses").click()

        # More decimals than the dinar has: refused, saying what would do.
        page.get_by_role("button", name="Add expense").click()
        dialog = page.get_by_role("dialog")
        assert dialog.get_by_label("Amount").get_attribute("placeholder") == "0.000"
        dialog.get_by_label("What for").fill("Mint tea")
        dialog.get_by_label("Amount").fill("1.2345")
        dialog.get_by_role("button", name="Add expense").click()
        dialog.get_by_text("Enter an amount greater than zero in KWD, like 12.500.").wait_for()
        # "1,5" is one and a half dinars: 1500 fils, shown as 1.500 KWD (never "15.00").
        dialog.get_by_label("Amount").fill("1,5")
        dialog.get_by_role("button", name="Add expense").click()
        tea = page.locator(".expense", has_text="Mint tea")
        tea.wait_for()
        assert tea.locator(".expense-amount").inner_text() == "1.500 KWD"
        saved = api(alice, "GET", f"/api/trips/{trip['id']}")["expenses"]
        assert [(e["amountMinor"], e["currency"]) for e in saved] == [(1500, "KWD")]

        # Split by two: each owes 0.750 KWD, and Bob pays Alice that (the table's cells
        # keep to the numbers under their "KWD balances" heading).
        balances = page.locator(".balances")
        assert "Total 1.500 KWD" in balances.inner_text()
        assert balances.get_by_role("row", name="Bob").inner_text().split("\t") == ["Bob", "0.000", "0.750", "-0.750"]
        assert balances.locator(".settlements li").inner_text() == "Bob pays Alice (you) 0.750 KWD"

        # Yen have no decimals: "1,500" is fifteen hundred yen.
        add_expense(page, "Sushi", "1,500", currency="JPY")
        sushi = page.locator(".expense", has_text="Sushi")
        sushi.wait_for()
        assert sushi.locator(".expense-amount").inner_text() == "1,500 JPY"

        # Editing shows the amount as it was typed to be read: 1.500, not 1.5 or 15.00.
        page.get_by_role("button", name="Edit Mint tea").click()
        assert page.get_by_role("dialog").get_by_label("Amount").input_value() == "1.500"
        page.get_by_role("dialog").get_by_role("button", name="Cancel").click()

        # The group's timeline says it the same way (the server's op summary).
        panel = open_chat(page)
        panel.get_by_role("button", name=re.compile("^2 edits by Alice")).click()
        assert panel.locator(".op-list li").all_inner_texts() == [
            "Alice added the expense “Mint tea” (1.500 KWD)", "Alice added the expense “Sushi” (1,500 JPY)"]
        shot(page, "money-kwd-1280")

        phone = open_page(browser, server, session=bob.token, viewport=PHONE, phone=True)
        phone.goto(f"/#/trips/{trip['id']}")
        phone.locator(".mobile-tabs").get_by_role("button", name="Expenses").click()
        phone.locator(".expense", has_text="Mint tea").wait_for()
        assert phone.locator(".settlements li").all_inner_texts() == [
            "Bob (you) pays Alice 750 JPY", "Bob (you) pays Alice 0.750 KWD"]
        assert no_sideways_scroll(phone) == 0
        shot(phone, "money-kwd-390")
        page.errors.check()
        phone.errors.check()
