"""The review's findings in the browser, on real Copenhagen places
(OpenStreetMap and weather stand-ins, no key): an outdoor stop on a wet
forecast day offers a move to the dry day and a swap with that day's indoor
visit, and the swap applies; a day beyond the forecast only gets a quiet
observation; a lunch at 09:00 gets a meal-time fix; Find places to eat on a
day that already has lunch offers replacements, labelled, applied in place;
and Optimize's preview carries each side's own hours badge and offers the
shortest order of its plan, also when the AI keeps the day as it is."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from browser.harness import (add_stops, api, api_op, api_user, chromium, live, names_on_screen, offline, open_ai_help,
                             open_page, shot, stop_card)
from browser.scripts import KEEP_SUMMARY, keeping_responder, quiet_responder
from standins.openai_standin import ai_settings
from standins.osm_standin import osm_settings
from standins.weather_standin import weather_settings

pytestmark = pytest.mark.browser

CPH = {"name": "Copenhagen", "lat": 55.6761, "lng": 12.5683}
KONGENS_HAVE = {"name": "Kongens Have", "placeId": "osm:way/4287214", "lat": 55.6853, "lng": 12.5801, "durationMin": 60}
NATIONALMUSEET = {"name": "Nationalmuseet", "placeId": "osm:way/26156811", "lat": 55.6748, "lng": 12.5749,
                  "durationMin": 60}
WET = {"precipitation_probability_max": 90, "precipitation_sum": 8.0, "weather_code": 63}
DRY = {"precipitation_probability_max": 0, "precipitation_sum": 0.0, "weather_code": 1}


def trip_on(client, start: date, days: int) -> dict:
    return api(client, "POST", "/api/trips", {"title": "Copenhagen", "startDate": start.isoformat(), "days": days,
                                              "timezone": "Europe/Copenhagen", "currency": "DKK", "destination": CPH})


def next_weekday(after: date, weekdays: set[int]) -> date:
    d = after
    while d.weekday() not in weekdays:
        d += timedelta(days=1)
    return d


def day_help(page):
    return open_ai_help(page)


def test_a_wet_forecast_offers_a_move_and_a_swap_and_a_typical_day_is_only_noted(settings, osm_standin,
                                                                                weather_standin):
    # Two days inside the forecast, neither a Monday (the museum's day off): wet, then dry.
    first = next_weekday(date.today() + timedelta(days=1), {1, 2, 3, 4})
    weather_standin.overrides = {first: WET, first + timedelta(days=1): DRY}
    # A day well beyond the forecast whose past years were wet on those dates.
    later = first + timedelta(days=40)
    for years in range(1, 7):
        for offset in range(-5, 6):
            weather_standin.overrides[later.replace(year=later.year - years) + timedelta(days=offset)] = WET
    app_settings = offline(weather_settings(osm_settings(settings, osm_standin), weather_standin))
    with live(app_settings) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        trip = trip_on(alice, first, 2)
        for day in trip["days"]:
            api_op(alice, trip["id"], "update_day", dayId=day["id"], startTime="10:00")
        add_stops(alice, trip, KONGENS_HAVE, day=0)
        add_stops(alice, trip, NATIONALMUSEET, day=1)
        typical = trip_on(alice, later, 1)
        add_stops(alice, typical, KONGENS_HAVE)
        # The review waits only briefly for the weather: have it at hand, as after any first look.
        for t in (trip, typical):
            api(alice, "GET", f"/api/trips/{t['id']}/weather")

        for width, height in ((390, 844), (1366, 850)):  # the phone only looks; the desktop applies the swap
            page = open_page(browser, server, session=alice.token, viewport={"width": width, "height": height},
                             phone=width < 760)
            page.goto(f"/#/trips/{trip['id']}")
            finding = stop_card(page, "Kongens Have").locator(".finding[data-kind=weather]")
            finding.wait_for()
            assert "sev-warning" in finding.get_attribute("class")
            assert "forecast" in finding.inner_text()
            labels = finding.locator(".btn-fix").all_inner_texts()
            assert any(label.startswith("Move “Kongens Have” to Day 2") for label in labels), labels
            assert any(label.startswith("Swap “Kongens Have” with “Nationalmuseet”") for label in labels), labels
            assert "1 thing to check" in page.locator("[data-testid=review-status]").inner_text()
            shot(page, f"findings-weather-swap-{width}")
            if width < 760:
                page.context.close()
                continue
            finding.locator(".btn-fix", has_text="Swap").click()
            stop_card(page, "Nationalmuseet").wait_for()
            assert names_on_screen(page) == ["Nationalmuseet"]
            page.locator("[data-testid=review-status]", has_text="This day looks workable").wait_for()
            page.errors.check()
            page.context.close()

        # Beyond the forecast: a quiet line, no fix, and the day still "looks workable".
        for width, height in ((1366, 850), (390, 844)):
            page = open_page(browser, server, session=alice.token, viewport={"width": width, "height": height},
                             phone=width < 760)
            page.goto(f"/#/trips/{typical['id']}")
            note = stop_card(page, "Kongens Have").locator(".finding[data-kind=weather]")
            note.wait_for()
            assert "sev-info" in note.get_attribute("class")
            assert "typical, not forecast" in note.inner_text()
            assert note.locator(".btn-fix").count() == 0
            assert "This day looks workable" in page.locator("[data-testid=review-status]").inner_text()
            shot(page, f"findings-typical-info-{width}")
            page.errors.check()
            page.context.close()


def test_a_lunch_at_nine_is_fixed_and_a_second_lunch_is_offered_as_a_replacement(settings, osm_standin):
    with live(offline(osm_settings(settings, osm_standin))) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        trip = trip_on(alice, next_weekday(date(2026, 6, 1), {1}), 1)  # a Tuesday
        # Lunch first thing at 09:00: outside lunch's usual window (11:00-15:00).
        add_stops(alice, trip,
                  {"name": "Lunch at the market", "kind": "food", "meal": "lunch", "lat": 55.6838, "lng": 12.5697,
                   "durationMin": 60},
                  {"name": "Rundetaarn", "placeId": "osm:way/26574020", "lat": 55.6814, "lng": 12.5757,
                   "durationMin": 60})
        page = open_page(browser, server, session=alice.token, viewport={"width": 1366, "height": 850})
        page.goto(f"/#/trips/{trip['id']}")
        finding = stop_card(page, "Lunch at the market").locator(".finding[data-kind=meal_time]")
        finding.wait_for()
        assert "sev-warning" in finding.get_attribute("class")
        shot(page, "findings-meal-time-1366")
        finding.get_by_role("button", name="Set “Lunch at the market” to 11:00").click()
        finding.wait_for(state="detached")
        assert stop_card(page, "Lunch at the market").locator(".t-start").inner_text() == "11:00"

        panel = day_help(page)
        panel.get_by_label("Meal").select_option("lunch")
        panel.get_by_role("button", name="Find places to eat").click()
        card = panel.locator(".suggestion").first
        card.wait_for()
        replaces = card.locator(".replaces").inner_text()
        assert replaces.startswith("Replaces “"), replaces
        old = replaces[len("Replaces “"):-1]
        new = card.locator("h4").inner_text()
        shot(page, "ideas-replaces-1366")
        page.set_viewport_size({"width": 390, "height": 844})
        card.scroll_into_view_if_needed()
        shot(page, "ideas-replaces-390")
        page.set_viewport_size({"width": 1366, "height": 850})
        position = names_on_screen(page).index(old)
        card.get_by_role("button", name="Use instead").click()
        card.get_by_text("Replaced").wait_for()
        stop_card(page, old).wait_for(state="detached")
        assert names_on_screen(page)[position] == new  # at the old lunch's place in the day
        page.errors.check()


def test_optimize_shows_each_sides_hours_and_offers_the_shortest_order(settings, osm_standin, openai_standin):
    """First the AI keeps the day as it is: the preview says so in words (not
    "Preview" over two equal columns), with the AI's summary under it and
    nothing to apply, and the server's shorter order of the same stops is
    still offered below it. Then the AI reverses the day and adds a place:
    each side carries its own hours badge, and the shortest order of that
    plan is offered and applies."""
    openai_standin.responder = keeping_responder
    tuesday = next_weekday(date(2026, 6, 1), {1})
    app_settings = offline(ai_settings(osm_settings(settings, osm_standin), openai_standin))
    with live(app_settings) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        api(alice, "PUT", "/api/users/preferences", {"cuisines": [], "dietary": [], "allergies": ""})
        trip = trip_on(alice, tuesday, 1)
        # Rosenborg opens at 10:00: first thing at 09:00 it is closed, at the end of the day it is open.
        add_stops(alice, trip,
                  {"name": "Rosenborg Slot", "placeId": "osm:way/23786112", "lat": 55.6858, "lng": 12.5772,
                   "durationMin": 45},
                  {"name": "Nyhavn", "lat": 55.6798, "lng": 12.591, "durationMin": 30},
                  {"name": "Vor Frue Kirke", "lat": 55.6795, "lng": 12.5728, "durationMin": 30},
                  {"name": "Amalienborg", "lat": 55.6841, "lng": 12.5932, "durationMin": 30})
        page = open_page(browser, server, session=alice.token, viewport={"width": 1366, "height": 850})
        page.goto(f"/#/trips/{trip['id']}")
        stop_card(page, "Rosenborg Slot").locator(".finding[data-kind=closed]").wait_for()
        panel = day_help(page)
        optimize = panel.get_by_role("button", name="Optimize my day")
        optimize.click()
        preview = panel.locator(".draft[aria-label='Optimized plan preview']")
        offer = panel.locator("[data-testid=shortest-offer]")
        preview.wait_for()
        assert preview.locator("h4").inner_text() == "The AI would keep this day as it is"
        assert preview.locator(".draft-note").all_inner_texts() == [KEEP_SUMMARY]
        assert preview.get_by_role("button").all_inner_texts() == ["Close"]   # nothing to apply
        offer.wait_for()
        assert offer.inner_text().startswith("Shortest order saves ")
        shot(page, "optimize-kept-1366")
        preview.get_by_role("button", name="Close").click()
        offer.wait_for(state="detached")

        openai_standin.responder = quiet_responder  # the plan: the free stops reversed, plus a place at the end
        optimize.click()
        preview.wait_for()
        assert preview.locator("h4").inner_text() == "Preview"
        before = preview.locator("[data-side=before] li", has_text="Rosenborg Slot")
        after = preview.locator("[data-side=after] li", has_text="Rosenborg Slot")
        assert before.locator(".badge", has_text="closed then").count() == 1
        assert after.locator(".badge", has_text="open").count() == 1
        offer.wait_for()
        assert offer.inner_text().startswith("Shortest order saves ")
        assert "null" not in panel.locator("[data-section=optimize]").inner_text()
        shot(page, "optimize-offer-1366")
        offer.get_by_role("button", name="Show the shortest order").click()
        alternative = panel.locator(".draft[aria-label='Shortest order preview']")
        alternative.wait_for()
        order = alternative.locator("[data-side=after] .ba-name").all_inner_texts()
        shot(page, "optimize-shortest-alternative-1366")
        page.set_viewport_size({"width": 390, "height": 844})
        shot(page, "optimize-shortest-alternative-390")
        page.set_viewport_size({"width": 1366, "height": 850})
        alternative.get_by_role("button", name="Apply Plan").click()
        panel.get_by_text("Plan applied").wait_for()
        page.wait_for_function("(order) => JSON.stringify([...document.querySelectorAll('.timeline .stop .stop-name')]"
                               ".map((e) => e.textContent)) === JSON.stringify(order)", arg=order)
        page.errors.check()


def test_a_forecast_slower_than_the_review_still_brings_its_finding(settings, osm_standin, weather_standin):
    first = next_weekday(date.today() + timedelta(days=1), {1, 2, 3, 4})
    weather_standin.overrides = {first: WET}
    weather_standin.delay("/v1/forecast", 4.0)  # longer than the review waits for it
    app_settings = offline(weather_settings(osm_settings(settings, osm_standin), weather_standin))
    with live(app_settings) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        trip = trip_on(alice, first, 1)
        add_stops(alice, trip, KONGENS_HAVE)
        page = open_page(browser, server, session=alice.token)
        page.goto(f"/#/trips/{trip['id']}")
        stop_card(page, "Kongens Have").wait_for()
        # Once the page has the weather it asks for the review again, which now has it too.
        stop_card(page, "Kongens Have").locator(".finding[data-kind=weather]").wait_for()
        page.errors.check()
