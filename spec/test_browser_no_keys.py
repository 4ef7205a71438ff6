"""With no key at all (OpenStreetMap and weather stand-ins, no Google, no
OpenAI): a new user plans a real Copenhagen day in the browser. Place search
adds Torvehallerne, Rosenborg Slot and Nyhavn; the legs have times; Rosenborg
on a Monday (its day off) is a finding whose fix moves it to Tuesday; Find
places to eat and Explore nearby add places; Shortest order reorders the day;
the Leaflet map shows every place; and "© OpenStreetMap contributors" shows
where OSM's data does. Nothing mentions a missing Google key."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from browser.harness import (chromium, live, names_on_screen, offline, open_ai_help, open_page, shot, stop_card,
                             ui_create_trip, ui_signup)
from standins.osm_standin import osm_settings
from standins.weather_standin import weather_settings

pytestmark = pytest.mark.browser

DRY = {"precipitation_probability_max": 5, "precipitation_sum": 0.0, "weather_code": 1}
CREDIT = "© OpenStreetMap contributors"


def add_place(page, query: str, pick: str, set_time: str | None = None) -> None:
    page.locator("[data-testid=add-stop]").click()
    dialog = page.get_by_role("dialog")
    assert "Google" not in dialog.inner_text()  # no "place search is off (no Google key)": OSM answers
    dialog.get_by_role("searchbox").fill(query)
    dialog.get_by_role("button", name="Search", exact=True).click()
    dialog.locator(".place-pick", has_text=pick).first.click()
    if set_time:
        dialog.get_by_label("Set time (optional)").fill(set_time)
    dialog.get_by_role("button", name="Add stop").click()
    stop_card(page, pick).wait_for()


def test_a_new_user_plans_copenhagen_with_no_keys(settings, osm_standin, weather_standin):
    monday = date.today() + timedelta(days=1)
    while monday.weekday() != 0:
        monday += timedelta(days=1)
    tuesday = monday + timedelta(days=1)
    weather_standin.overrides = {monday: DRY, tuesday: DRY}
    app_settings = offline(weather_settings(osm_settings(settings, osm_standin), weather_standin))
    assert app_settings.openai_api_key is None and app_settings.google_maps_api_key is None
    with live(app_settings) as server, chromium() as browser:
        page = open_page(browser, server, viewport={"width": 1366, "height": 850})
        ui_signup(page, "nora", "Nora")
        ui_create_trip(page, "Copenhagen", destination="Copenhagen", start=monday.isoformat(),
                       end=tuesday.isoformat())

        # Tuesday starts at 10:00, when the castle opens.
        page.locator(".day-item", has_text="Tue").first.click()
        page.get_by_role("button", name="Edit day").click()
        page.get_by_role("dialog").get_by_label("Day starts at").fill("10:00")
        page.get_by_role("dialog").get_by_role("button", name="Save").click()
        page.locator(".day-meta", has_text="Starts 10:00").wait_for()
        page.locator(".day-item", has_text="Mon").first.click()
        page.locator(".day-heading", has_text="Monday").wait_for()

        # Real places from OpenStreetMap's search; the market opens at 10:00 on Mondays.
        add_place(page, "Torvehallerne", "Torvehallerne", set_time="10:00")
        add_place(page, "Rosenborg", "Rosenborg Slot")
        add_place(page, "Nyhavn", "Nyhavn")
        assert names_on_screen(page) == ["Torvehallerne", "Rosenborg Slot", "Nyhavn"]
        legs = page.locator(".timeline .leg")
        assert legs.count() == 2
        for leg in legs.all_inner_texts():
            assert " min" in leg and "estimate" not in leg, leg  # OSRM timed them
        assert page.locator(".day-credit").get_by_role("link", name=CREDIT).count() == 1
        page.locator(".map-canvas .leaflet-marker-icon").nth(2).wait_for()
        assert "OpenStreetMap" in page.locator(".leaflet-control-attribution").inner_text()

        # Rosenborg is closed on Mondays: a finding whose fix moves it to Tuesday.
        closed = stop_card(page, "Rosenborg Slot").locator(".finding[data-kind=closed]")
        closed.wait_for()
        assert "Rosenborg Slot" in closed.inner_text()
        shot(page, "no-keys-closed-1366")
        page.set_viewport_size({"width": 390, "height": 844})
        closed.scroll_into_view_if_needed()
        shot(page, "no-keys-closed-390")
        page.set_viewport_size({"width": 1366, "height": 850})
        closed.locator(".btn-fix", has_text="Move “Rosenborg Slot” to Day 2").click()
        stop_card(page, "Rosenborg Slot").wait_for(state="detached")
        assert names_on_screen(page) == ["Torvehallerne", "Nyhavn"]

        # Tuesday: Rosenborg is there, open, from 10:00.
        page.locator(".day-item", has_text="Tue").first.click()
        stop_card(page, "Rosenborg Slot").wait_for()
        page.locator("[data-testid=review-status]", has_text="This day looks workable").wait_for()

        # Ideas: a lunch and a sight nearby, from OpenStreetMap, credited.
        panel = open_ai_help(page)
        panel.get_by_label("Meal").select_option("lunch")
        panel.get_by_role("button", name="Find places to eat").click()
        lunch = panel.locator(".suggestion").first
        lunch.wait_for()
        assert panel.locator(".assistant-results").get_by_role("link", name=CREDIT).count() == 1
        lunch_name = lunch.locator("h4").inner_text()
        lunch.get_by_role("button", name="Add to day").click()
        stop_card(page, lunch_name).wait_for()
        panel.get_by_role("button", name="Explore nearby").click()
        sight = panel.locator(".suggestion").first
        sight.wait_for()
        sight_name = sight.locator("h4").inner_text()
        sight.get_by_role("button", name="Add to day").click()
        stop_card(page, sight_name).wait_for()
        assert len(names_on_screen(page)) == 3

        # Shortest order: previewed, applied, and the timeline shows the previewed order.
        panel.get_by_role("button", name="Shortest order").click()
        preview = panel.locator(".draft[aria-label='Shortest order preview']")
        preview.wait_for()
        order = preview.locator("[data-side=after] .ba-name").all_inner_texts()
        assert sorted(order) == sorted(names_on_screen(page))
        shot(page, "no-keys-shortest-1366")
        page.set_viewport_size({"width": 390, "height": 844})
        shot(page, "no-keys-shortest-390")
        page.set_viewport_size({"width": 1366, "height": 850})
        if preview.get_by_role("button", name="Apply Plan").count():
            preview.get_by_role("button", name="Apply Plan").click()
            panel.get_by_text("Plan applied").wait_for()
        page.wait_for_function("(order) => JSON.stringify([...document.querySelectorAll('.timeline .stop .stop-name')]"
                               ".map((e) => e.textContent)) === JSON.stringify(order)", arg=order)

        # Every place is on the Leaflet map, credited; nothing speaks of a missing Google key.
        assert page.locator(".map-canvas .leaflet-marker-icon").count() == 3
        assert page.locator(".day-credit").get_by_role("link", name=CREDIT).count() == 1
        body = page.locator("body").inner_text()
        assert "Google key" not in body and "not set up" not in body
        shot(page, "no-keys-tuesday-1366")
        page.errors.check()
