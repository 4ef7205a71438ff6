"""Ordering a day in the browser: Shortest order (no AI, no key: OpenStreetMap
stand-ins) previews the day before and after and applies exactly the previewed
order; and a day that runs past midnight reads "00:05 (+1)", ordered and
measured by minutes (no "23 h 59 min short" gap before a stop after midnight)."""

from __future__ import annotations

import math

import pytest

from browser.a11y import nested_live_regions, watch_live_regions
from browser.harness import (add_stops, api, api_trip, api_user, chromium, live, names_on_screen, offline, open_ai_help,
                             open_page, shot, stop_card)
from standins.osm_standin import osm_settings

pytestmark = pytest.mark.browser

# West, east, west, east ... across the centre of Copenhagen: as listed, the
# day crosses the harbour side four times.
ZIGZAG = [
    {"name": "Vor Frue Kirke", "lat": 55.6795, "lng": 12.5728, "durationMin": 30},
    {"name": "Nyhavn", "lat": 55.6798, "lng": 12.591, "durationMin": 30},
    {"name": "Rundetaarn", "lat": 55.6814, "lng": 12.5757, "durationMin": 30},
    {"name": "Amalienborg", "lat": 55.6841, "lng": 12.5932, "durationMin": 30},
    {"name": "Torvehallerne", "lat": 55.6838, "lng": 12.5697, "durationMin": 30},
]


def copenhagen(client, start: str = "2026-06-09", days: int = 1) -> dict:
    return api(client, "POST", "/api/trips", {
        "title": "Copenhagen", "startDate": start, "days": days, "timezone": "Europe/Copenhagen",
        "currency": "DKK", "destination": {"name": "Copenhagen", "lat": 55.6761, "lng": 12.5683}})


def open_day_help(page):
    return open_ai_help(page)


def travel_minutes(page) -> int:
    """The day's travel as the timeline's legs show it."""
    return page.evaluate("() => [...document.querySelectorAll('.timeline .leg')].reduce((sum, el) => {"
                         " const m = /· (?:(\\d+) h)? ?(?:(\\d+) min)?/.exec(el.textContent);"
                         " return sum + (m ? Number(m[1] || 0) * 60 + Number(m[2] || 0) : 0); }, 0)")


def test_shortest_order_previews_and_applies_the_previewed_order(settings, osm_standin):
    with live(offline(osm_settings(settings, osm_standin))) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        assert api(alice, "GET", "/api/config")["aiEnabled"] is False  # no AI key: the action is there anyway
        trip = copenhagen(alice)
        add_stops(alice, trip, *ZIGZAG)
        page = open_page(browser, server, session=alice.token, viewport={"width": 1366, "height": 850})
        page.goto(f"/#/trips/{trip['id']}")
        stop_card(page, "Torvehallerne").wait_for()
        assert names_on_screen(page) == [s["name"] for s in ZIGZAG]
        before_travel = travel_minutes(page)

        panel = open_day_help(page)
        actions = panel.locator("[data-slot=day-order-actions]")
        assert actions.get_by_role("button", name="Optimize my day").count() == 0  # AI is off here
        actions.get_by_role("button", name="Shortest order").click()
        preview = panel.locator(".draft[aria-label='Shortest order preview']")
        preview.wait_for()
        headline = preview.locator("h4").inner_text()
        assert headline.startswith("Shortest order saves "), headline
        assert "Exact: no order of these stops has less travel." in preview.inner_text()
        before = preview.locator("[data-side=before] .ba-name").all_inner_texts()
        after = preview.locator("[data-side=after] .ba-name").all_inner_texts()
        assert before == [s["name"] for s in ZIGZAG]
        assert sorted(after) == sorted(before) and after != before
        shot(page, "day-order-shortest-preview-1366")
        page.set_viewport_size({"width": 390, "height": 844})
        shot(page, "day-order-shortest-preview-390")
        page.set_viewport_size({"width": 1366, "height": 850})

        panel.get_by_role("button", name="Apply Plan").focus()
        page.keyboard.press("Enter")                     # by keyboard: focus must not fall to the page's body
        panel.get_by_text("Plan applied").wait_for()
        shortest = actions.get_by_role("button", name="Shortest order")
        assert shortest.evaluate("(b) => b === document.activeElement"), "focus was lost with the preview"
        page.wait_for_function("(order) => JSON.stringify([...document.querySelectorAll('.timeline .stop .stop-name')]"
                               ".map((e) => e.textContent)) === JSON.stringify(order)", arg=after)
        assert travel_minutes(page) < before_travel
        shot(page, "day-order-shortest-applied-1366")

        # Asked again, the day is already in its shortest order: nothing to apply.
        actions.get_by_role("button", name="Shortest order").click()
        panel.get_by_role("heading", name="This day is already in its shortest order").wait_for()
        assert panel.get_by_role("button", name="Apply Plan").count() == 0
        panel.locator(".draft").get_by_role("button", name="Close").focus()
        page.keyboard.press("Enter")
        panel.locator(".draft").wait_for(state="detached")
        assert shortest.evaluate("(b) => b === document.activeElement"), "focus was lost with the preview"
        page.errors.check()


def test_past_twelve_free_stops_the_order_is_labelled_best_found(settings, osm_standin):
    with live(offline(osm_settings(settings, osm_standin))) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        trip = copenhagen(alice)
        # Thirteen stops on a ring around the centre, listed in a scrambled order.
        ring = [(55.6761 + 0.008 * math.cos(k * 2 * math.pi / 13), 12.5683 + 0.014 * math.sin(k * 2 * math.pi / 13))
                for k in range(13)]
        add_stops(alice, trip, *({"name": f"Corner {k + 1}", "lat": ring[(k * 5) % 13][0], "lng": ring[(k * 5) % 13][1],
                                  "durationMin": 15} for k in range(13)))
        page = open_page(browser, server, session=alice.token)
        page.goto(f"/#/trips/{trip['id']}")
        stop_card(page, "Corner 13").wait_for()
        panel = open_day_help(page)
        panel.get_by_role("button", name="Shortest order").click()
        preview = panel.locator(".draft[aria-label='Shortest order preview']")
        preview.wait_for()
        assert preview.locator("h4").inner_text().startswith("Shortest order saves ")
        assert "Best order found: 13 stops have too many orders to try every one" in preview.inner_text()
        assert "Exact" not in preview.inner_text()
        page.errors.check()


def test_a_stop_that_blocks_every_order_is_named_in_plain_words(settings, osm_standin):
    with live(offline(osm_settings(settings, osm_standin))) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        trip = copenhagen(alice)
        # A lunch no order can start inside its usual window: the day starts too late for it.
        api(alice, "POST", f"/api/trips/{trip['id']}/ops/update_day", {"dayId": trip["days"][0]["id"],
                                                                         "startTime": "16:00"})
        add_stops(alice, trip, ZIGZAG[0], {"name": "Lunch by the water", "kind": "food", "meal": "lunch",
                                            "lat": 55.6798, "lng": 12.5905, "durationMin": 60})
        page = open_page(browser, server, session=alice.token)
        page.goto(f"/#/trips/{trip['id']}")
        stop_card(page, "Lunch by the water").wait_for()
        panel = open_day_help(page)
        watch_live_regions(page)
        panel.get_by_role("button", name="Shortest order").focus()
        page.keyboard.press("Enter")
        error = panel.locator(".assistant-results .error-box")
        error.wait_for()
        assert "Lunch by the water" in error.inner_text()
        # Read once by the results' region (the progress line before it too), and the button keeps the keyboard.
        assert nested_live_regions(page) == []
        assert panel.get_by_role("button", name="Shortest order").evaluate("(b) => b === document.activeElement")
        assert "no_order" not in error.inner_text()
        shot(page, "day-order-no-order-1366")
        page.errors.check()


def test_times_after_midnight_read_plus_one_and_leave_no_false_gap(settings, osm_standin):
    with live(offline(osm_settings(settings, osm_standin))) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        trip = copenhagen(alice)
        add_stops(alice, trip,
                  {"name": "Tivoli", "lat": 55.6736, "lng": 12.5681, "setTime": "22:30", "durationMin": 90},
                  {"name": "Late drink at Ruby", "kind": "food", "lat": 55.6777, "lng": 12.5743, "durationMin": 45},
                  {"name": "Night walk by Nyhavn", "lat": 55.6798, "lng": 12.591, "durationMin": 30})
        for width, height in ((1366, 850), (390, 844)):
            page = open_page(browser, server, session=alice.token, viewport={"width": width, "height": height},
                             phone=width < 760)
            page.goto(f"/#/trips/{trip['id']}")
            ruby = stop_card(page, "Late drink at Ruby")
            ruby.wait_for()
            start = ruby.locator(".t-start").inner_text()
            assert start.startswith("00:") and start.endswith(" (+1)"), start
            assert stop_card(page, "Tivoli").locator(".t-end").inner_text() == "00:00 (+1)"
            assert stop_card(page, "Night walk by Nyhavn").locator(".t-start").inner_text().endswith(" (+1)")
            assert page.locator(".leg-late").count() == 0  # no "23 h 59 min short" before a stop after midnight
            meta = page.locator(".day-meta").inner_text()
            assert meta.startswith("22:30 – ") and "(+1)" in meta, meta
            shot(page, f"day-after-midnight-{width}")
            page.errors.check()
            page.context.close()


def test_a_gap_after_a_leg_with_no_travel_time_reads_as_its_own_sentence(settings):
    """Without locations there is no leg; the free time before a set time
    follows the sentence that says so (a wrapped line never starts with a
    stray "·"), and a screen reader hears both."""
    with live(offline(settings)) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        trip = api_trip(alice)
        add_stops(alice, trip, {"name": "Breakfast somewhere", "kind": "food", "durationMin": 45},
                  {"name": "Fado at eight", "setTime": "20:00", "durationMin": 90})
        page = open_page(browser, server, session=alice.token, viewport={"width": 360, "height": 740}, phone=True)
        page.goto(f"/#/trips/{trip['id']}")
        leg = page.locator(".timeline .leg").first
        leg.locator(".leg-free").wait_for()
        text = " ".join(leg.inner_text().split())   # on a phone the free time wraps to its own line
        assert text.startswith("No travel time (add a location to both stops). ") and text.endswith(" free"), text
        assert "·" not in text
        label = leg.get_attribute("aria-label")
        assert label.startswith("No travel time (add a location to both stops), ") and label.endswith(" free"), label
        page.errors.check()
