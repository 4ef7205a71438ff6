"""The admin usage page: linked for admins only; it shows usage to an admin
and nothing to anyone else. Also drives the Copilot (the AI call counted)."""

from __future__ import annotations

import pytest

from browser.harness import chromium, live, offline, open_page, shot, ui_add_stop, ui_create_trip, ui_signup
from browser.scripts import quiet_responder
from standins.openai_standin import ai_settings, openai_standin  # noqa: F401

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
        panel = admin.locator("#side-panel")
        panel.get_by_role("tab", name="Copilot").click()
        panel.get_by_label("Your question about this day").fill("Is this day realistic?")
        panel.get_by_role("button", name="Ask Copilot").click()
        panel.locator(".bubble", has_text="The day looks fine.").wait_for()
        shot(admin, "18-copilot")

        link = admin.locator("[data-testid=admin-link]")
        assert link.is_visible()
        link.click()
        admin.wait_for_url("**/admin.html")
        admin.get_by_text("copilot").first.wait_for()
        shot(admin, "19-admin-usage")
        admin.errors.check()

        other = open_page(browser, server)
        ui_signup(other, "mallory")
        assert other.locator("[data-testid=admin-link]").count() == 0
        other.goto("/admin.html")
        other.wait_for_load_state("networkidle")
        text = other.locator("body").inner_text().lower()
        assert "copilot" not in text and "gpt-" not in text  # no usage, no model names
        shot(other, "20-admin-refused")
