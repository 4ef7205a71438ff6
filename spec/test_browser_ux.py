"""The page drags stops, draws a real map, and folds the trip's edits under
the chat (what you type surviving others' edits is in test_browser_live).
Members are made over HTTP (api_user, api_trip) so each test starts at the
screen it is about."""

from __future__ import annotations

import re

import pytest

from browser.harness import (add_stops, api, api_op, api_trip, api_user, chromium, drag_stop_before, live,
                             names_on_screen, offline, open_chat, open_page, send_chat, shot, stop_card, tile_host,
                             timeline_caught_up)
from browser.scripts import quiet_responder
from standins.openai_standin import ai_settings

pytestmark = pytest.mark.browser

CASTLE = {"name": "Castelo de São Jorge", "lat": 38.7139, "lng": -9.1335}
MARKET = {"name": "Time Out Market", "kind": "food", "meal": "lunch", "lat": 38.7069, "lng": -9.1460}
BELEM = {"name": "Belém Tower", "lat": 38.6916, "lng": -9.2160}


def names_on_server(client, trip_id: str, day: int = 0) -> list[str]:
    trip = api(client, "GET", f"/api/trips/{trip_id}")
    return [s["name"] for s in trip["days"][day]["stops"]]


def test_drag_and_drop_reorders_and_moves_a_stop_and_the_other_member_sees_it(settings):
    with live(offline(settings)) as server, chromium() as browser:
        alice, bob = api_user(server, "alice", "Alice"), api_user(server, "bob", "Bob")
        trip = api_trip(alice, bob)
        add_stops(alice, trip, CASTLE, MARKET, BELEM)
        page = open_page(browser, server, session=alice.token)
        other = open_page(browser, server, session=bob.token)
        for p in (page, other):
            p.goto(f"/#/trips/{trip['id']}")
            p.locator(".timeline .stop").nth(2).wait_for()

        # Belém onto the top half of the castle: it goes first. One op, one summary.
        drag_stop_before(page, BELEM["name"], CASTLE["name"])
        page.get_by_text(f"Moved “{BELEM['name']}” to the start of Day 1").wait_for()
        expected = [BELEM["name"], CASTLE["name"], MARKET["name"]]
        assert names_on_screen(page) == expected
        assert names_on_server(alice, trip["id"]) == expected
        other.wait_for_function("(want) => [...document.querySelectorAll('.timeline .stop .stop-name')]"
                                ".map(x => x.textContent).join('|') === want",
                                arg="|".join(expected))

        # The market onto day 2 in the rail: it moves to that day.
        stop_card(page, MARKET["name"]).locator(".drag-handle").drag_to(page.locator(".rail .day-btn").nth(1))
        stop_card(page, MARKET["name"]).wait_for(state="detached")
        assert names_on_server(alice, trip["id"], day=1) == [MARKET["name"]]
        other.locator(".rail .day-item").nth(1).get_by_text("1 stop").wait_for()
        assert names_on_screen(other) == [BELEM["name"], CASTLE["name"]]
        page.errors.check()
        other.errors.check()


def test_a_finger_drags_a_stop_on_a_phone(settings):
    with live(offline(settings)) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        trip = api_trip(alice)
        add_stops(alice, trip, CASTLE, MARKET, BELEM)
        page = open_page(browser, server, phone=True, session=alice.token)
        page.goto(f"/#/trips/{trip['id']}")
        page.locator(".timeline .stop").nth(2).wait_for()
        # Pointer events as a touch screen sends them: down on the handle, then (the cards have shrunk
        # to their names) move and up below the market's middle, where the finger sees it now.
        page.evaluate("""([from, to]) => {
            const stop = (name) => [...document.querySelectorAll('.timeline .stop')]
                .find((s) => s.querySelector('.stop-name').textContent === name);
            const handle = stop(from).querySelector('.drag-handle');
            handle.scrollIntoView({ block: 'center' });
            const h = handle.getBoundingClientRect();
            const at = (x, y) => ({ pointerId: 9, pointerType: 'touch', isPrimary: true, bubbles: true,
                                    cancelable: true, clientX: x, clientY: y });
            handle.dispatchEvent(new PointerEvent('pointerdown', at(h.x + 4, h.y + 4)));
            const box = stop(to).getBoundingClientRect();
            const x = box.left + box.width / 2, y = box.bottom - 8;
            window.dispatchEvent(new PointerEvent('pointermove', at(x, y)));
            window.dispatchEvent(new PointerEvent('pointerup', at(x, y)));
        }""", [CASTLE["name"], MARKET["name"]])
        page.get_by_text(f"Moved “{CASTLE['name']}” after “{MARKET['name']}” on Day 1").wait_for()
        assert names_on_server(alice, trip["id"]) == [MARKET["name"], CASTLE["name"], BELEM["name"]]
        assert names_on_screen(page) == [MARKET["name"], CASTLE["name"], BELEM["name"]]
        page.errors.check()


def test_the_leaflet_map_draws_each_located_stop_once_and_falls_back_without_tiles(settings):
    with live(offline(settings)) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        trip = api_trip(alice)
        add_stops(alice, trip, CASTLE, {"name": "Somewhere without a location"}, MARKET)
        page = open_page(browser, server, session=alice.token)
        tiles = []
        page.on("request", lambda r: tiles.append(r.url) if r.url.startswith(tile_host()) else None)
        page.goto(f"/#/trips/{trip['id']}")
        markers = page.locator(".map-canvas .leaflet-marker-icon")
        page.wait_for_function("() => document.querySelectorAll('.map-canvas .leaflet-marker-icon').length === 2")
        assert markers.all_inner_texts() == ["1", "3"]  # the timeline's numbers
        assert page.locator(".map-canvas path.map-route").count() == 1
        assert "OpenStreetMap" in page.locator(".leaflet-control-attribution").inner_text()
        # The configured tile URL (OSM's by default; the harness's stand-in here), filled in.
        assert tiles and all(re.match(re.escape(tile_host()) + r"/\d+/\d+/\d+\.png$", u) for u in tiles)
        assert page.locator(".map-canvas script, .map-canvas [style*='url(http']").count() == 0
        page.evaluate("() => { document.querySelector('.leaflet-container').keptAcrossRenders = true; }")
        shot(page, "ux-map")

        # A new stop with a location: a third marker on the same map (created once, updated).
        api_op(alice, trip["id"], "insert_stop", dayId=trip["days"][0]["id"], **BELEM)
        page.wait_for_function("() => document.querySelectorAll('.map-canvas .leaflet-marker-icon').length === 3")
        assert page.evaluate("() => document.querySelector('.leaflet-container').keptAcrossRenders === true")
        page.errors.check()

        # Tiles that cannot load: the schematic, drawn from the same stops.
        offline_page = open_page(browser, server, session=alice.token, tiles="fail")
        offline_page.goto(f"/#/trips/{trip['id']}")
        offline_page.locator(".schematic").wait_for()
        assert offline_page.locator(".schematic .map-stop").count() == 3
        assert offline_page.locator(".map-canvas").is_hidden()
        offline_page.errors.check()


def test_the_chat_stays_above_one_quiet_line_of_edits(settings, openai_standin):
    openai_standin.responder = quiet_responder
    with live(offline(ai_settings(settings, openai_standin))) as server, chromium() as browser:
        alice, bob = api_user(server, "alice", "Alice"), api_user(server, "bob", "Bob")
        trip = api_trip(alice, bob)
        castle, market = add_stops(alice, trip, CASTLE, MARKET)
        page = open_page(browser, server, session=alice.token)
        page.goto(f"/#/trips/{trip['id']}")
        panel = open_chat(page)
        send_chat(panel, "@agent is day 1 too packed?")
        answer = panel.locator(".msg.from-agent", has_text="Noted.")
        answer.wait_for()
        # The answer shows while it streams; the server stores it (its place in the timeline) as the
        # turn ends, which a loaded machine reaches late. Bob edits once the page has the stored turn.
        panel.locator(".msg.from-agent:not([aria-busy])", has_text="Noted.").wait_for()
        timeline_caught_up(page, trip["id"])

        edits = [("update_stop", {"stopId": castle, "setTime": "10:30"}),
                 ("update_stop", {"stopId": castle, "setTime": None}),
                 ("update_stop", {"stopId": market, "durationMin": 75}),
                 ("update_day", {"dayId": trip["days"][0]["id"], "title": "Old town"}),
                 ("move_stop", {"stopId": market, "toDayId": trip["days"][0]["id"], "position": 0}),
                 ("add_expense", {"title": "Tram", "amountMinor": 640, "currency": "EUR", "paidBy": bob.user["id"]})]
        for name, args in edits:
            api_op(bob, trip["id"], name, **args)
        group = panel.locator(".op-group").last
        # How soon edits arrive is bench/live.py's subject; here, how they read.
        group.get_by_role("button", name=re.compile("^6 edits by Bob")).wait_for()
        # The answer is right above the one line, and still on screen.
        last_two = panel.locator(".agent-log > li").evaluate_all("(items) => items.slice(-2).map((li) => li.className)")
        assert "from-agent" in last_two[0] and "op-group" in last_two[1]
        assert answer.evaluate("(el) => { const box = el.getBoundingClientRect(),"
                               " view = el.closest('.agent-scroll').getBoundingClientRect();"
                               " return box.top >= view.top && box.bottom <= view.bottom; }")
        shot(page, "ux-chat-edits-folded")

        group.get_by_role("button", name=re.compile("^6 edits")).click()
        lines = group.locator(".op-list li").all_inner_texts()
        assert len(lines) == 6
        assert lines[0] == "Bob set “Castelo de São Jorge” to 10:30"
        assert lines[1] == "Bob cleared the fixed time of “Castelo de São Jorge”"
        for line in lines:
            assert not re.search(r"setTime|durationMin|stopId|→|\(\w+(, \w+)*\)", line), line
        shot(page, "ux-chat-edits-open")
        page.errors.check()


def test_saving_trip_details_sends_only_what_this_member_changed(settings):
    """Alice renames the trip while Bob changes its time zone: her save keeps
    Bob's zone, and the fields she did not touch follow his change on screen."""
    with live(offline(settings)) as server, chromium() as browser:
        alice, bob = api_user(server, "alice", "Alice"), api_user(server, "bob", "Bob")
        trip = api_trip(alice, bob)
        page = open_page(browser, server, session=alice.token)
        page.goto(f"/#/trips/{trip['id']}")
        page.locator(".rail-view", has_text="People").click()
        page.get_by_label("Trip name").fill("Lisbon, at last")
        api_op(bob, trip["id"], "update_trip", timezone="Atlantic/Azores")
        zone = page.get_by_label("Time zone")
        page.wait_for_function("(el) => el.value === 'Atlantic/Azores'", arg=zone.element_handle())
        assert page.get_by_label("Trip name").input_value() == "Lisbon, at last", "what she typed stays"
        page.get_by_role("button", name="Save trip details").click()
        page.get_by_role("heading", name="Lisbon, at last").first.wait_for()
        saved = api(alice, "GET", f"/api/trips/{trip['id']}")
        assert saved["title"] == "Lisbon, at last" and saved["timezone"] == "Atlantic/Azores"
        page.errors.check()


def test_trip_details_refuse_a_blank_name_or_an_unknown_zone_in_words(settings):
    """Not the server's words for API clients ("title: String should have at
    least 1 character", "timezone: Value error, must be an IANA time zone")."""
    with live(offline(settings)) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        trip = api_trip(alice)
        page = open_page(browser, server, phone=True, session=alice.token)
        page.goto(f"/#/trips/{trip['id']}?view=members")
        form = page.locator("form", has=page.get_by_label("Trip name"))
        error = form.locator(".error-box")
        form.get_by_label("Trip name").fill("   ")
        form.get_by_role("button", name="Save trip details").click()
        error.wait_for()
        assert error.inner_text() == "Give the trip a name."
        form.get_by_label("Trip name").fill("Lisbon, at last")
        form.get_by_label("Time zone").fill("Mars/Olympus_Mons")
        form.get_by_role("button", name="Save trip details").click()
        page.locator(".error-box", has_text="Give the time zone as a place name").wait_for()
        saved = api(alice, "GET", f"/api/trips/{trip['id']}")
        assert saved["title"] == trip["title"] and saved["timezone"] == "Europe/Lisbon"   # nothing was sent
        page.errors.check()


def test_going_back_closes_the_dialog_the_screen_left_behind(settings):
    """A "New trip" dialog opened on the trips list does not stay over the
    screen that Back (or a link) goes to."""
    with live(offline(settings)) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        page = open_page(browser, server, session=alice.token)
        page.goto("/#/preferences")
        page.get_by_role("heading", name="Your defaults").wait_for()
        page.locator(".nav-link", has_text="Trips").click()
        page.get_by_role("button", name="New trip").first.click()
        page.get_by_role("dialog").get_by_label("Trip name").fill("Half typed")
        page.go_back()
        page.get_by_role("heading", name="Your defaults").wait_for()
        assert page.locator("dialog[open]").count() == 0
        page.get_by_role("heading", name="Your defaults").click()   # nothing modal is in the way
        page.errors.check()


def test_the_stop_form_refuses_a_latitude_past_90_in_words(settings):
    """Not "lat: Input should be less than or equal to 90" from the server."""
    with live(offline(settings)) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        trip = api_trip(alice)
        page = open_page(browser, server, phone=True, session=alice.token)
        page.goto(f"/#/trips/{trip['id']}")
        page.locator("[data-testid=add-stop]").click()
        dialog = page.get_by_role("dialog")
        dialog.get_by_label("Name").fill("Somewhere north")
        dialog.locator("details.more summary").click()
        dialog.get_by_label("Latitude").fill("95")
        dialog.get_by_label("Longitude").fill("10")
        dialog.get_by_role("button", name="Add stop").click()
        error = dialog.locator(".error-box")
        error.wait_for()
        assert error.inner_text() == "Latitude is from -90 to 90 and longitude from -180 to 180."
        assert names_on_server(alice, trip["id"]) == []
        page.errors.check()


def test_when_googles_map_cannot_load_the_day_still_has_its_sketch(settings):
    """With a browser key, Google's script failing to load leaves the
    schematic map, not an empty box."""
    with live(offline(settings.with_(google_maps_browser_key="test-browser-key"))) as server, \
            chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        trip = api_trip(alice)
        add_stops(alice, trip, CASTLE, MARKET)
        page = open_page(browser, server, session=alice.token)
        page.context.route("https://maps.googleapis.com/**", lambda route: route.abort())
        page.goto(f"/#/trips/{trip['id']}")
        page.locator(".schematic").wait_for()
        assert page.locator(".schematic .map-stop").count() == 2
        assert page.locator(".map-canvas").is_hidden()
