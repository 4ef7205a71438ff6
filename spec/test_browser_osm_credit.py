"""OpenStreetMap's place data is credited wherever it shows on the page (place
search when adding a stop, the Ideas list), against the OSM stand-in; with
Google answering there is no such line (checked in test_browser_ai)."""

from __future__ import annotations

import pytest

from browser.harness import add_stops, api, api_user, chromium, live, offline, open_ai_help, open_page, shot, stop_card
from standins.osm_standin import osm_settings

pytestmark = pytest.mark.browser

COPYRIGHT = "https://www.openstreetmap.org/copyright"
NYHAVN = {"name": "Nyhavn", "lat": 55.6798, "lng": 12.591, "setTime": "10:00"}
ROSENBORG = {"name": "Rosenborg Slot", "lat": 55.6858, "lng": 12.5772}


def credit(within):
    return within.get_by_role("link", name="© OpenStreetMap contributors")


def test_osm_places_are_credited_in_place_search_and_ideas(settings, osm_standin):
    with live(offline(osm_settings(settings, osm_standin))) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        trip = api(alice, "POST", "/api/trips", {
            "title": "Copenhagen", "startDate": "2026-06-10", "days": 1, "timezone": "Europe/Copenhagen",
            "currency": "DKK", "destination": {"name": "Copenhagen", "lat": 55.6761, "lng": 12.5683}})
        add_stops(alice, trip, NYHAVN, ROSENBORG)
        page = open_page(browser, server, session=alice.token)
        page.goto(f"/#/trips/{trip['id']}")
        stop_card(page, "Nyhavn").wait_for()

        # Place search: the results carry the credit, linked to OSM's copyright page.
        page.locator("[data-testid=add-stop]").click()
        dialog = page.get_by_role("dialog")
        dialog.get_by_role("searchbox").fill("Tivoli")
        assert credit(dialog).count() == 0  # nothing shown yet, nothing credited
        dialog.get_by_role("button", name="Search", exact=True).click()
        dialog.locator(".place-pick", has_text="Tivoli").first.wait_for()
        assert credit(dialog).get_attribute("href") == COPYRIGHT
        shot(page, "osm-credit-search")
        dialog.locator(".place-pick", has_text="Tivoli").first.click()
        assert credit(dialog).count() == 0  # the results are gone once one is picked
        dialog.get_by_role("button", name="Close").click()

        # Ideas: places near the day's stops come from Overpass, credited under the list.
        panel = open_ai_help(page)
        panel.get_by_role("button", name="Explore nearby").click()
        panel.locator(".suggestion").first.wait_for()
        assert credit(panel).get_attribute("href") == COPYRIGHT
        page.errors.check()
