"""The account menu in the browser: change the password (a wrong current
password and a too-short new one answered under their fields; other sessions
end), sign out everywhere, delete the account (trips only you belonged to go,
ownership passes on, a notice on the sign-in page), and too many sign-in
attempts said in plain words."""

from __future__ import annotations

import re
import time

import httpx
import pytest

from browser.a11y import nested_live_regions
from browser.harness import KEPT_ROWS, PASSWORD, api, api_trip, api_user, chromium, live, offline, open_page, shot

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1366, "height": 850}
PHONE = {"width": 390, "height": 844}



def signed_in(server, token: str) -> bool:
    """Whether a session token still signs its user in."""
    with httpx.Client(base_url=server.url, cookies={"wayline_session": token}) as c:
        return c.get("/api/auth/me").json()["data"]["user"] is not None


def sign_in(server, username: str, password: str) -> int:
    with httpx.Client(base_url=server.url) as c:
        return c.post("/api/auth/signin", json={"username": username, "password": password}).status_code


def account_menu(page, item: str):
    page.locator(".account-btn").click()
    page.locator(".account-menu").get_by_role("button", name=item).click()
    return page.get_by_role("dialog")


def test_change_password_answers_under_each_field_and_ends_other_sessions(settings):
    with live(offline(settings)) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        with httpx.Client(base_url=server.url) as c:
            c.post("/api/auth/signin", json={"username": "alice", "password": PASSWORD})
            other_token = c.cookies.get("wayline_session")
        for viewport in (PHONE, DESKTOP):
            page = open_page(browser, server, session=alice.token, viewport=viewport, phone=viewport is PHONE)
            page.goto("/#/")
            page.get_by_role("heading", name="Your trips").wait_for()
            dialog = account_menu(page, "Change password")
            current, new = dialog.get_by_label("Current password"), dialog.get_by_label("New password")
            current.fill("not my password")
            new.fill("a much better one")
            dialog.get_by_role("button", name="Change password").click()
            error = dialog.locator("#" + current.get_attribute("id") + "-error")
            error.wait_for()
            assert error.inner_text() == "That is not your password."
            assert current.get_attribute("aria-invalid") == "true"
            assert dialog.locator(".error-box").count() == 0  # said under its field, not in a box
            shot(page, f"account-password-wrong-{viewport['width']}")
            if viewport is PHONE:
                page.context.close()
                continue
            current.fill(PASSWORD)
            new.fill("short")
            dialog.get_by_role("button", name="Change password").click()
            new_error = dialog.locator("#" + new.get_attribute("id") + "-error")
            new_error.wait_for()
            assert "at least 8 characters" in new_error.inner_text()
            assert error.is_hidden()  # the earlier answer went with the new try
            shot(page, f"account-password-short-{viewport['width']}")
            new.fill("a much better one")
            dialog.get_by_role("button", name="Change password").click()
            page.get_by_text("Password changed. Your other devices were signed out.").wait_for()
            dialog.wait_for(state="detached")
            assert signed_in(server, alice.token)  # this browser stays signed in
            assert not signed_in(server, other_token)
            assert sign_in(server, "alice", "a much better one") == 200
            page.errors.check()
            page.context.close()


def test_sign_out_everywhere_ends_every_session_and_goes_to_sign_in(settings):
    with live(offline(settings)) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        trip = api_trip(alice, title="Porto")
        with httpx.Client(base_url=server.url) as c:
            c.post("/api/auth/signin", json={"username": "alice", "password": PASSWORD})
            other_token = c.cookies.get("wayline_session")
        page = open_page(browser, server, session=alice.token, viewport=DESKTOP)
        page.goto(f"/#/trips/{trip['id']}")
        page.locator(".day-view").wait_for()
        # The trip is kept on this device for offline use.
        page.wait_for_function(f"() => ({KEPT_ROWS})(['reads']).then((n) => n > 0)")
        # Her other session has the trip open too (another browser).
        other = open_page(browser, server, session=other_token, viewport=DESKTOP)
        other.goto(f"/#/trips/{trip['id']}")
        other.wait_for_function("() => document.documentElement.dataset.sync === 'live'")
        page.locator(".account-btn").click()
        shot(page, "account-menu-1366")
        page.locator(".account-menu").get_by_role("button", name="Sign out everywhere").click()
        confirm = page.get_by_role("dialog")
        assert "every device" in confirm.inner_text()
        confirm.get_by_role("button", name="Sign out everywhere").click()
        page.get_by_role("heading", name="Welcome back").wait_for()
        assert page.get_by_test_id("notice").inner_text() == "You were signed out on every device."
        assert not signed_in(server, alice.token) and not signed_in(server, other_token)
        assert page.locator(".account-btn").count() == 0
        # Nothing of the account stays on this device (an offline start would have shown her trips).
        for store in ("reads", "media", "outbox"):
            assert page.evaluate(KEPT_ROWS, [store]) == 0, store
        # The other page hears it live and says what happened: signed out, not "Your account was deleted".
        other.get_by_role("heading", name="Welcome back").wait_for()
        assert other.get_by_test_id("notice").inner_text() == "You were signed out."
        page.errors.check()
        other.errors.check()


class Calendar:
    """The app's clock (`create_app(clock=)`), turned forward by `ahead` seconds."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def __call__(self) -> float:
        return time.time() + self.ahead


def test_a_session_that_expires_with_the_page_open_says_so_and_comes_back_to_the_day(settings):
    """A session runs out by the calendar (30 days): the page open on a day
    learns it from its live stream (not at some later click), says so at
    sign-in, and signing in again brings the member back to that day."""
    calendar = Calendar()
    with live(offline(settings), live_keepalive_s=0.2, clock=calendar) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        trip = api_trip(alice, title="Porto", days=3)
        t, day2 = trip["id"], trip["days"][1]["id"]
        page = open_page(browser, server, session=alice.token, viewport=DESKTOP)
        page.goto(f"/#/trips/{t}?day={day2}")
        page.locator(f".day-view[data-day-id='{day2}']").wait_for()
        page.wait_for_function("() => document.documentElement.dataset.sync === 'live'")
        calendar.ahead = 31 * 86400   # past the session's end; the next keep-alive tick sees it
        page.get_by_role("heading", name="Welcome back").wait_for()
        calendar.ahead = 0.0          # the session signed in next is a new one
        assert page.get_by_test_id("notice").inner_text() == ("Your session has ended. Sign in again to carry on "
                                                                "where you were.")
        shot(page, "session-ended-1366")
        page.get_by_label("Username").fill("alice")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        page.locator(f".day-view[data-day-id='{day2}']").wait_for()
        assert page.url.endswith(f"/#/trips/{t}?day={day2}")
        page.errors.check()


def test_deleting_the_account_needs_the_password_and_ends_on_sign_in_with_a_notice(settings):
    with live(offline(settings)) as server, chromium() as browser:
        alice, bob = api_user(server, "alice", "Alice"), api_user(server, "bob", "Bob")
        shared = api_trip(alice, bob, title="Porto with Bob")
        alone = api_trip(alice, title="Just me")
        page = open_page(browser, server, session=alice.token, viewport=PHONE, phone=True)
        page.goto(f"/#/trips/{shared['id']}")  # deleted from the planner: its live stream hears "gone" too
        page.locator(".day-view").wait_for()
        page.wait_for_function(f"() => ({KEPT_ROWS})(['reads']).then((n) => n > 0)")
        page.locator(".account-btn").click()
        shot(page, "account-menu-390")
        page.locator(".account-menu").get_by_role("button", name="Delete account").click()
        dialog = page.get_by_role("dialog")
        text = dialog.inner_text()
        assert "Trips that only you belong to are deleted" in text
        assert "ownership passes to another member" in text
        password = dialog.get_by_label("Your password, to confirm")
        password.fill("wrong")
        dialog.get_by_role("button", name="Delete my account").click()
        error = dialog.locator("#" + password.get_attribute("id") + "-error")
        error.wait_for()
        assert error.inner_text() == "That is not your password."
        shot(page, "account-delete-wrong-390")
        page.set_viewport_size(DESKTOP)
        shot(page, "account-delete-wrong-1366")
        password.fill(PASSWORD)
        dialog.get_by_role("button", name="Delete my account").click()
        page.get_by_role("heading", name="Welcome back").wait_for()
        notice = page.get_by_test_id("notice")
        notice.wait_for()
        assert notice.inner_text() == "Your account was deleted, with the trip only you belonged to."
        # Whatever else was on its way (the live "gone", a 401) changes nothing: wait until the
        # planner's stream is closed and every answer the page was waiting for has come.
        page.wait_for_function("() => document.documentElement.dataset.sync === 'off'"
                               " && document.documentElement.dataset.requests === '0'")
        assert re.search(r"#/signin$", page.url)
        assert page.get_by_test_id("notice").inner_text().startswith("Your account was deleted")
        for store in ("reads", "media", "outbox"):   # nothing of the deleted account stays on this device
            assert page.evaluate(KEPT_ROWS, [store]) == 0, store
        shot(page, "account-deleted-notice-1366")
        assert sign_in(server, "alice", PASSWORD) == 401
        assert api(bob, "GET", f"/api/trips/{shared['id']}")["role"] == "owner"
        assert bob.get(f"/api/trips/{alone['id']}").status_code == 404
        page.reload()  # shown once
        page.get_by_role("heading", name="Welcome back").wait_for()
        assert page.get_by_test_id("notice").count() == 0
        page.errors.check()


def test_too_many_sign_in_attempts_say_when_to_try_again(settings):
    with live(offline(settings)) as server, chromium() as browser:
        api_user(server, "alice", "Alice")
        for _ in range(5):
            assert sign_in(server, "alice", "guess") == 401
        for viewport in (DESKTOP, PHONE):
            page = open_page(browser, server, viewport=viewport, phone=viewport is PHONE)
            page.goto("/#/signin")
            page.get_by_label("Username").fill("alice")
            page.get_by_label("Password").fill(PASSWORD)
            page.get_by_role("button", name="Sign in").click()
            error = page.locator(".form-error .error-box")
            error.wait_for()
            assert error.inner_text() == "Too many attempts with a wrong password. Try again in 15 minutes."
            assert error.get_attribute("role") == "alert" and nested_live_regions(page) == []   # read once
            shot(page, f"signin-rate-limited-{viewport['width']}")
            page.errors.check()
            page.context.close()


def test_a_sign_in_that_could_not_reach_wayline_clears_its_error_when_the_connection_is_back(settings):
    with live(offline(settings)) as server, chromium() as browser:
        api_user(server, "alice", "Alice")
        page = open_page(browser, server, viewport=PHONE, phone=True)
        page.goto("/#/signin")
        page.get_by_label("Username").fill("alice")
        page.get_by_label("Password").fill(PASSWORD)
        page.context.set_offline(True)
        page.get_by_role("button", name="Sign in").click()
        error = page.locator(".form-error .error-box")
        error.wait_for()
        assert error.inner_text() == "Could not reach Wayline. Check your connection and try again."
        page.context.set_offline(False)
        error.wait_for(state="detached")
        page.get_by_role("button", name="Sign in").click()   # what was typed is still there
        page.get_by_role("heading", name="Your trips").wait_for()
        page.errors.check()
