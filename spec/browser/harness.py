"""Browser-test harness: Debian's chromium driven by Playwright's sync API
against the real app on a loopback port.

`playwright install` cannot download browsers here, so tests launch
/usr/bin/chromium by path. A missing chromium is a FAILURE with a clear
message, never a skip: these tests are part of the suite's contract.
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from pathlib import Path

import pytest

from helpers import LiveServer
from app.server import create_app

CHROMIUM = os.environ.get("WAYLINE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
SCREENSHOTS = Path(__file__).resolve().parent.parent / "screenshots"
DESKTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}
PASSWORD = "correct horse"
# Test pages poll quickly; the product default (12 s) is checked in test_browser_core.
FAST_POLL_MS = 1000

# Resource errors (a 404 from an optional route, a 409 the page explains) are
# the page's business; uncaught exceptions are bugs.
IGNORED_CONSOLE = re.compile(r"Failed to load resource|the server responded with a status")


def require_chromium() -> None:
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(
            f"Chromium is missing at {CHROMIUM}. The browser tests need Debian's chromium: "
            "run `apt-get install -y chromium` (scripts/test does this when run as root).",
            pytrace=False,
        )
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.fail("Playwright is not installed: `pip install -e '.[test]'`.", pytrace=False)


@contextmanager
def chromium():
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def live(settings, **overrides):
    with LiveServer(create_app(settings, **overrides)) as server:
        yield server


class PageErrors(list):
    def check(self) -> None:
        assert not self, "the page raised errors:\n" + "\n".join(self)


def open_page(browser, server, *, phone: bool = False, poll_ms: int | None = FAST_POLL_MS, storage: dict | None = None):
    """A fresh browser context (its own cookies) and page on the live server."""
    context = browser.new_context(
        base_url=server.url,
        viewport=PHONE if phone else DESKTOP,
        device_scale_factor=1,
        is_mobile=phone,
        has_touch=phone,
        locale="en-GB",
        timezone_id="Europe/Lisbon",
    )
    script = ""
    if poll_ms is not None:
        script += f"localStorage.setItem('wayline.pollMs', '{int(poll_ms)}');"
    for key, value in (storage or {}).items():
        script += f"localStorage.setItem({key!r}, {value!r});"
    if script:
        context.add_init_script(script)
    context.set_default_timeout(10_000)
    page = context.new_page()
    errors = PageErrors()
    page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
    page.on("console", lambda msg: errors.append(f"console: {msg.text}")
            if msg.type == "error" and not IGNORED_CONSOLE.search(msg.text) else None)
    page.errors = errors
    return page


def shot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.wait_for_timeout(250)  # let transitions settle
    page.screenshot(path=str(path))
    return path


def ui_signup(page, username: str, display_name: str | None = None) -> None:
    page.goto("/#/signup")
    page.get_by_label("Username").fill(username)
    if display_name:
        page.get_by_label("Display name (optional)").fill(display_name)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Create account").click()
    page.get_by_role("heading", name="Your trips").wait_for()


def ui_signin(page, username: str) -> None:
    page.goto("/#/signin")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()


def ui_create_trip(page, title: str, destination: str = "Lisbon", start: str = "2026-12-10",
                   end: str = "2026-12-11") -> str:
    page.get_by_role("button", name="New trip").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Trip name").fill(title)
    dialog.get_by_label("First day").fill(start)
    dialog.get_by_label("Last day").fill(end)
    dest = dialog.get_by_label("Destination")
    dest.fill(destination)
    dest.dispatch_event("change")
    dialog.get_by_role("button", name="Create trip").click()
    page.locator(".day-view").wait_for()
    return re.search(r"#/trips/([^?]+)", page.url).group(1)


def ui_add_stop(page, name: str, *, kind: str | None = None, set_time: str | None = None, duration: int | None = None,
                lat: float | None = None, lng: float | None = None, meal: str | None = None) -> None:
    page.locator("[data-testid=add-stop]").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Name").fill(name)
    if kind:
        dialog.get_by_label("Kind").select_option(kind)
    if meal:
        dialog.get_by_label("Meal").select_option(meal)
    if set_time:
        dialog.get_by_label("Set time (optional)").fill(set_time)
    if duration:
        dialog.get_by_label("Duration (minutes)").fill(str(duration))
    if lat is not None:
        location = dialog.locator("details.more")
        if location.get_attribute("open") is None:
            location.locator("summary").click()
        dialog.get_by_label("Latitude").fill(str(lat))
        dialog.get_by_label("Longitude").fill(str(lng))
    dialog.get_by_role("button", name="Add stop").click()
    stop_card(page, name).wait_for()


def stop_card(page, name: str):
    """The stop whose own name matches: a finding on another stop may mention it too."""
    return page.locator(".stop").filter(has=page.locator(".stop-name", has_text=name))


def stop_times(page) -> dict[str, tuple[str, str, str]]:
    """Stop name -> (start, end, 'set'|'auto') as the timeline shows them."""
    out = {}
    for item in page.locator(".timeline .stop").all():
        name = item.locator(".stop-name").inner_text()
        out[name] = (item.locator(".t-start").inner_text(), item.locator(".t-end").inner_text(),
                     "set" if item.get_attribute("data-pinned") == "true" else "auto")
    return out


def offline(settings, **changes):
    """`settings` with every provider still at its real default pointed at a
    closed loopback port, so a test never calls a real provider; stand-ins
    already configured (ai_settings, google_settings, weather_settings) stay."""
    from app.settings import Settings

    dead = "http://127.0.0.1:9"
    real = Settings()
    fixes = {name: dead for name in ("weather_base_url", "google_places_base_url", "google_routes_base_url")
             if getattr(settings, name) == getattr(real, name)}
    if settings.openai_base_url is None:
        fixes["openai_base_url"] = dead
    return settings.with_(**{**fixes, **changes})
