"""The people view lists an owner's open invite links with who joined
through each, and revokes them (issue 22, failure 4: links end for a removed
member; the owner sees and ends the others)."""

from __future__ import annotations

import pytest
from browser.harness import api, api_trip, api_user, chromium, live, no_sideways_scroll, open_page, shot

pytestmark = pytest.mark.browser


def test_an_owner_sees_who_joined_through_each_link_and_revokes_one(settings):
    with live(settings) as server, chromium() as browser:
        alice, bob = api_user(server, "alice", "Alice"), api_user(server, "bob", "Bob")
        trip = api_trip(alice, title="Porto in spring")
        used = api(alice, "POST", f"/api/trips/{trip['id']}/invites", {"role": "editor"})
        api(bob, "POST", f"/api/invites/{used['token']}/accept")
        spare = api(alice, "POST", f"/api/trips/{trip['id']}/invites", {"role": "viewer"})
        for phone in (False, True):
            page = open_page(browser, server, phone=phone, session=alice.token)
            page.goto(f"/#/trips/{trip['id']}?view=members")
            links = page.get_by_role("list", name="Open invite links")
            links.get_by_text("Joined through it: Bob").wait_for()
            assert "Nobody has used it yet." in links.inner_text()
            assert links.get_by_role("button", name="Revoke").count() == 2
            assert "token" not in links.inner_text().lower() and used["token"] not in page.content()
            assert no_sideways_scroll(page) == 0
            shot(page, "phone-invites" if phone else "invites", full_page=True)
            page.errors.check()
        # Revoke the spare link: it leaves the list, and it no longer opens.
        links.locator("li", has_text="Viewer link").get_by_role("button", name="Revoke").click()
        page.get_by_text("The link no longer works").wait_for()
        links.locator("li", has_text="Viewer link").wait_for(state="detached")
        carol = api_user(server, "carol")
        assert carol.post(f"/api/invites/{spare['token']}/accept", json={}).status_code == 404
        page.errors.check()


def test_the_people_view_says_which_role_you_have_in_words(settings):
    with live(settings) as server, chromium() as browser:
        alice, vic = api_user(server, "alice", "Alice"), api_user(server, "vic", "Vic")
        trip = api_trip(alice)
        invite = api(alice, "POST", f"/api/trips/{trip['id']}/invites", {"role": "viewer"})
        api(vic, "POST", f"/api/invites/{invite['token']}/accept")
        page = open_page(browser, server, session=vic.token)
        page.goto(f"/#/trips/{trip['id']}?view=members")
        page.get_by_text("You are a viewer of this trip.").wait_for()   # one of any number, not "the viewer"
        page.errors.check()
