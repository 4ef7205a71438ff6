"""Live updates in Chromium against the real app.

The module alone (public/live.js on a page of our origin): events arrive,
presence is sent, a removed member's module stops, and a stream that keeps
failing falls back to polling by itself.

The planner page: another member's change shows without a reload (these
pages poll so rarely that only the stream can explain it; how fast it comes
is bench/live.py's business),
what is being typed survives it, presence avatars sit on the day each member
looks at, a removed member or a deleted trip lands on the trips list told why,
and a refused stream falls back to polling without a word on screen."""

from __future__ import annotations

import json
import re
from contextlib import ExitStack, contextmanager
from urllib.parse import urlsplit

import httpx
import pytest

from browser.harness import (PAGE_DEADLINE_MS, PASSWORD, add_stops, api, api_op, api_trip, api_user, chromium,
                             drag_stop_before, live, names_on_screen, no_sideways_scroll, offline, open_page,
                             page_timers_pass, reads_done, shot, stop_card)
from standins.weather_standin import weather_settings

pytestmark = pytest.mark.browser

START = """async ([tripId, options]) => {
  const { startLive } = await import('/live.js');
  window.got = [];
  window.fellBack = 0;
  window.liveAgain = 0;
  window.live = startLive(tripId, {
    onEvent: (kind, data) => window.got.push([kind, data]),
    onFallback: () => { window.fellBack += 1; },
    onLive: () => { window.liveAgain += 1; },
  }, options);
}"""


def got(page, kind: str, check: str = "true"):
    """Wait until the page received a `kind` event whose `data` passes `check` (JS)."""
    page.wait_for_function(f"() => window.got.some(([k, data]) => k === {kind!r} && ({check}))")
    return page.evaluate(f"() => window.got.filter(([k, data]) => k === {kind!r} && ({check})).at(-1)[1]")


def new_trip(page, days: int) -> dict:
    r = page.request.post("/api/trips", data={"title": "Lisbon", "startDate": "2026-12-10", "days": days})
    assert r.status == 201
    return r.json()["data"]


def signed_up(client: httpx.Client, name: str) -> httpx.Client:
    assert client.post("/api/auth/signup", json={"username": name, "password": PASSWORD}).status_code == 201
    return client


def test_live_module_delivers_events_sends_presence_and_stops_when_removed(settings):
    with live(settings) as server, chromium() as browser, \
            httpx.Client(base_url=server.url, timeout=PAGE_DEADLINE_MS / 1000) as bob:
        signed_up(bob, "bob")
        page = open_page(browser, server, poll_ms=None)
        page.goto("/api.js")  # any document of our origin
        r = page.request.post("/api/auth/signup", data={"username": "alice", "password": PASSWORD})
        assert r.status == 201
        trip = new_trip(page, days=2)
        t, day2 = trip["id"], trip["days"][1]["id"]
        token = page.request.post(f"/api/trips/{t}/invites", data={"role": "editor"}).json()["data"]["token"]
        assert bob.post(f"/api/invites/{token}/accept", json={}).status_code == 200
        alice_id = page.request.get("/api/auth/me").json()["data"]["user"]["id"]

        page.evaluate(START, [t, {}])
        assert got(page, "hello")["resumed"] is False

        version = bob.post(f"/api/trips/{t}/ops/update_day?full=1", json={"dayId": day2, "title": "Sintra"}) \
            .json()["data"]["trip"]["version"]
        assert got(page, "trip", f"data.version === {version}") == {"version": version}

        page.evaluate(f"() => window.live.setPresence({day2!r})")
        people = got(page, "presence", f"data.some(p => p.dayId === {day2!r})")
        assert people == [{"userId": alice_id, "displayName": "alice", "dayId": day2}]

        # Alice joins a trip of Bob's and Bob removes her: the module hears `gone` and stops.
        page.evaluate("() => window.live.stop()")
        bobs = bob.post("/api/trips", json={"title": "Porto", "startDate": "2026-12-10", "days": 1}).json()["data"]
        token = bob.post(f"/api/trips/{bobs['id']}/invites", json={"role": "viewer"}).json()["data"]["token"]
        assert page.request.post(f"/api/invites/{token}/accept", data={}).status == 200
        opened = []
        page.on("request", lambda request: opened.append(request.url) if "/live" in request.url else None)
        page.evaluate(START, [bobs["id"], {"retryMs": 50}])
        got(page, "hello")
        assert bob.delete(f"/api/trips/{bobs['id']}/members/{alice_id}").status_code == 200
        assert got(page, "gone") == {"reason": "removed"}
        page_timers_pass(page, 500)  # ten retry intervals on the page's clock
        assert page.evaluate("() => window.live.live") is False
        assert len(opened) == 1, f"no reconnect after gone: {opened}"
        page.errors.check()


def test_live_module_falls_back_to_polling_when_the_stream_keeps_failing(settings):
    with live(settings, live_max_per_user=0) as server, chromium() as browser:
        page = open_page(browser, server, poll_ms=None)
        page.goto("/api.js")
        assert page.request.post("/api/auth/signup", data={"username": "alice", "password": PASSWORD}).status == 201
        trip = new_trip(page, days=1)
        # Every attempt is refused (429); after three the module falls back, once, and says nothing on screen.
        page.evaluate(START, [trip["id"], {"retryMs": 30, "maxFailures": 3, "fallbackRetryMs": 60000}])
        page.wait_for_function("() => window.fellBack === 1")
        page_timers_pass(page, 300)  # ten more retry intervals: no second fallback, no stream
        assert page.evaluate("() => [window.fellBack, window.got.length, document.body.innerText.includes('429')]") \
            == [1, 0, False]
        page.errors.check()


# -- the planner page --------------------------------------------------------------

NO_POLL_MS = 600_000  # pages whose poll never fires during a test: what they show came by the stream
CASTLE = {"name": "Castelo de São Jorge", "lat": 38.7139, "lng": -9.1335}
MARKET = {"name": "Time Out Market", "kind": "food", "meal": "lunch", "lat": 38.7069, "lng": -9.1460}
BELEM = {"name": "Belém Tower", "lat": 38.6916, "lng": -9.2160}
STOPS_SHOWN = ("(want) => [...document.querySelectorAll('.timeline .stop .stop-name')]"
               ".map(x => x.textContent).join('|') === want")


def open_trip(browser, server, client, trip: dict, *, poll_ms: int | None = NO_POLL_MS, live_expected: bool = True,
              **kw):
    page = open_page(browser, server, session=client.token, poll_ms=poll_ms, **kw)
    page.goto(f"/#/trips/{trip['id']}")
    page.locator(".timeline .stop, .timeline-empty:not([hidden])").first.wait_for()
    if live_expected:
        page.wait_for_function("() => document.documentElement.dataset.sync === 'live'")
    page.evaluate("() => { window.sameDocument = true; }")  # gone after a reload
    return page


def day_item(page, index: int):
    return page.locator(".rail .day-item").nth(index)


def avatar(within, name: str, where: str = "is looking at this day"):
    return within.get_by_role("img", name=f"{name} {where}", exact=True)


def start_typing(page, stop_name: str, text: str):
    """Opens a stop's comments, types `text` there and returns a check that the
    words, the focus and the caret are all still where the typing left them."""
    card = stop_card(page, stop_name)
    card.get_by_role("button", name=re.compile(r"^\d+ comments?$")).click()
    box = card.get_by_label(f"Comment on {stop_name}")
    box.click()
    box.press_sequentially(text)
    page.evaluate("() => { window.typingIn = document.activeElement; }")

    def still_typing():
        assert box.input_value() == text
        assert page.evaluate("() => document.activeElement === window.typingIn && window.typingIn.isConnected")
        assert page.evaluate("() => window.typingIn.selectionStart") == len(text)
    return still_typing


def test_another_members_drag_shows_live_with_their_avatar_on_the_day_they_look_at(settings):
    with live(offline(settings)) as server, chromium() as browser:
        alice, bob = api_user(server, "alice", "Alice"), api_user(server, "bob", "Bob")
        trip = api_trip(alice, bob)
        add_stops(alice, trip, CASTLE, MARKET, BELEM)
        a = open_trip(browser, server, alice, trip)
        b = open_trip(browser, server, bob, trip)

        # Both on day 1: each sees the other there, never themselves.
        avatar(day_item(a, 0), "Bob").wait_for()
        assert day_item(a, 0).locator(".presence-avatar").get_attribute("data-user-id") == bob.user["id"]
        avatar(day_item(b, 0), "Alice").wait_for()
        assert a.locator(".presence-avatar").count() == 1 and b.locator(".presence-avatar").count() == 1

        # Bob drags Belém to the top; Alice's page shows it without a reload.
        trip_reads = []
        trip_path = f"/api/trips/{trip['id']}"
        a.on("request", lambda r: trip_reads.append(r.url) if urlsplit(r.url).path == trip_path else None)
        drag_stop_before(b, BELEM["name"], CASTLE["name"])
        expected = [BELEM["name"], CASTLE["name"], MARKET["name"]]
        a.wait_for_function(STOPS_SHOWN, arg="|".join(expected))
        assert names_on_screen(a) == expected
        assert a.evaluate("() => window.sameDocument") is True

        # Bob looks at day 2, then at the expenses: his avatar follows him.
        day_item(b, 1).locator(".day-btn").click()
        avatar(day_item(a, 1), "Bob").wait_for()
        # A stream delivers in order, so with Bob's move heard every event of the drag
        # was heard before it; once the reads they asked for are done: one change, one read.
        reads_done(a)
        assert len(trip_reads) == 1, trip_reads
        assert day_item(a, 0).locator(".presence-avatar").count() == 0
        b.locator(".rail-view", has_text="Expenses").click()
        avatar(a.locator(".rail-head"), "Bob", "has this trip open").wait_for()
        assert a.locator(".day-item .presence-avatar").count() == 0

        # Bob leaves the planner for his trips list: his stream ends, and he is gone from Alice's rail.
        b.get_by_role("link", name="Trips", exact=True).click()
        b.get_by_role("heading", name="Your trips").wait_for()
        a.locator(".presence-avatar").first.wait_for(state="detached")
        b.errors.check()
        a.errors.check()


def test_a_comment_being_typed_survives_other_members_changes_arriving_live(settings):
    with live(offline(settings)) as server, chromium() as browser:
        alice, bob = api_user(server, "alice", "Alice"), api_user(server, "bob", "Bob")
        trip = api_trip(alice, bob)
        castle, _ = add_stops(alice, trip, {**CASTLE, "setTime": "10:00"}, MARKET)
        page = open_trip(browser, server, alice, trip)
        card = stop_card(page, CASTLE["name"])
        still_typing = start_typing(page, CASTLE["name"], "Go early, the queue gets lo")

        # Bob's vote (the trip's votes change, no new version).
        api(bob, "PUT", f"/api/trips/{trip['id']}/stops/{castle}/vote", {"value": 1})
        page.get_by_role("button", name=f"Vote for {CASTLE['name']}, 1 so far").wait_for()
        still_typing()
        # Bob changes the very stop being commented on (a new version: its card is patched).
        api_op(bob, trip["id"], "update_stop", stopId=castle, durationMin=120)
        card.locator(".t-end", has_text="12:00").wait_for()
        still_typing()
        # Bob moves the other stop before it (the card being typed in moves down the list).
        api_op(bob, trip["id"], "move_stop", stopId=castle, toDayId=trip["days"][0]["id"], position=1)
        page.wait_for_function(STOPS_SHOWN, arg=f"{MARKET['name']}|{CASTLE['name']}")
        still_typing()
        # Bob comments: his comment shows up in the open thread, the draft stays.
        api(bob, "POST", f"/api/trips/{trip['id']}/stops/{castle}/comments", {"body": "Tickets online are cheaper."})
        card.locator(".comment", has_text="Tickets online are cheaper.").wait_for()
        still_typing()
        assert page.evaluate("() => window.sameDocument") is True
        shot(page, "live-comment-kept")

        # Another day and back: the thread is drawn again with the draft from the store.
        page.locator(".day-btn").nth(1).click()
        page.locator(".timeline-empty").wait_for()
        page.locator(".day-btn").nth(0).click()
        box = card.get_by_label(f"Comment on {CASTLE['name']}")
        assert box.input_value() == "Go early, the queue gets lo"
        box.press_sequentially("ng.")
        box.press("Control+Enter")
        card.locator(".comment", has_text="Go early, the queue gets long.").wait_for()
        assert box.input_value() == ""
        page.errors.check()


def test_the_add_stop_dialogs_positions_follow_the_day_while_it_is_open(settings):
    """Bob adds and removes stops while Alice fills the add-stop dialog: its
    Position list follows, her choice and what she typed stay, and the stop
    lands where she chose."""
    with live(offline(settings)) as server, chromium() as browser:
        alice, bob = api_user(server, "alice", "Alice"), api_user(server, "bob", "Bob")
        trip = api_trip(alice, bob)
        day = trip["days"][0]["id"]
        castle, market = add_stops(alice, trip, CASTLE, MARKET)
        page = open_trip(browser, server, alice, trip)
        page.locator("[data-testid=add-stop]").click()
        dialog = page.get_by_role("dialog")
        dialog.get_by_label("Name").fill("Miradouro da Graça")
        position = dialog.get_by_label("Position")
        position.select_option(label=f"After {CASTLE['name']}")

        belem = api_op(bob, trip["id"], "insert_stop", dayId=day, **BELEM)["trip"]["days"][0]["stops"][-1]["id"]
        position.locator("option", has_text=f"After {BELEM['name']}").wait_for(state="attached")
        api_op(bob, trip["id"], "delete_stop", stopId=market)
        page.wait_for_function("(gone) => ![...document.querySelectorAll('dialog option')]"
                               ".some((o) => o.text === gone)", arg=f"After {MARKET['name']}")
        assert position.input_value() == castle
        assert dialog.get_by_label("Name").input_value() == "Miradouro da Graça"

        position.select_option(value=belem)
        dialog.get_by_role("button", name="Add stop").click()
        page.wait_for_function(STOPS_SHOWN, arg=f"{CASTLE['name']}|{BELEM['name']}|Miradouro da Graça")
        page.errors.check()


@pytest.mark.parametrize("refusal", ["500", "blocked"])
def test_a_refused_stream_falls_back_to_polling_and_says_nothing(settings, refusal):
    with live(offline(settings)) as server, chromium() as browser:
        alice, bob = api_user(server, "alice", "Alice"), api_user(server, "bob", "Bob")
        trip = api_trip(alice, bob)
        castle, market = add_stops(alice, trip, CASTLE, MARKET)
        page = open_page(browser, server, session=alice.token)  # polls every FAST_POLL_MS
        refused = []

        def refuse(route):
            refused.append(route.request.url)
            if refusal == "500":
                route.fulfill(status=500, content_type="text/plain", body="Bad gateway")
            else:
                route.abort()
        page.context.route(lambda url: urlsplit(url).path.endswith("/live"), refuse)
        page.goto(f"/#/trips/{trip['id']}")
        stop_card(page, CASTLE["name"]).wait_for()
        still_typing = start_typing(page, CASTLE["name"], "Shall we book?")

        api_op(bob, trip["id"], "move_stop", stopId=market, toDayId=trip["days"][0]["id"], position=0)
        page.wait_for_function(STOPS_SHOWN, arg=f"{MARKET['name']}|{CASTLE['name']}")  # by a poll
        still_typing()
        api(bob, "PUT", f"/api/trips/{trip['id']}/stops/{castle}/vote", {"value": 1})
        page.get_by_role("button", name=f"Vote for {CASTLE['name']}, 1 so far").wait_for()
        still_typing()

        assert refused, "the page never tried the stream"
        assert page.evaluate("() => document.documentElement.dataset.sync") == "poll"
        # Nothing on screen about it: no toast, no alert, no status code.
        assert page.locator(".toast, [role=alert]").count() == 0
        assert not re.search(r"\b(500|stream|live|connect\w*|offline)\b", page.locator("main").inner_text(), re.I)
        page.errors.check()


def test_a_removed_member_and_a_deleted_trip_land_on_the_trips_list_told_why(settings):
    with live(offline(settings)) as server, chromium() as browser:
        alice, bob, carol = (api_user(server, n, n.title()) for n in ("alice", "bob", "carol"))
        trip = api_trip(alice, bob, carol)
        mine = api(bob, "POST", "/api/trips", {"title": "Bob's own weekend", "startDate": "2026-12-20", "days": 1})
        b = open_trip(browser, server, bob, trip)
        c = open_trip(browser, server, carol, trip)

        api(alice, "DELETE", f"/api/trips/{trip['id']}/members/{bob.user['id']}")
        b.get_by_text("You are no longer a member of “Lisbon with friends”.").wait_for()
        b.locator(".trip-card", has_text=mine["title"]).wait_for()
        assert b.url.endswith("#/") and b.locator(".trip-card", has_text="Lisbon with friends").count() == 0
        assert c.locator(".planner").is_visible()  # Carol is still a member

        api(alice, "DELETE", f"/api/trips/{trip['id']}")
        c.get_by_text("“Lisbon with friends” was deleted.").wait_for()
        c.get_by_role("heading", name="Your trips").wait_for()
        b.errors.check()
        c.errors.check()


@contextmanager
def looking_at(client: httpx.Client, trip_id: str, day_id: str | None):
    """A member's open page as the server sees it: a held stream and its presence."""
    with client.stream("GET", f"/api/trips/{trip_id}/live", headers={"Accept": "text/event-stream"}) as r:
        assert r.status_code == 200
        lines = r.iter_lines()  # held: dropping the iterator would close the response
        hello = next(line for line in lines if line.startswith("data:"))
        connection = json.loads(hello[5:])["connectionId"]
        api(client, "PUT", f"/api/trips/{trip_id}/presence", {"connectionId": connection, "dayId": day_id})
        yield
        lines.close()


def test_presence_avatars_keep_members_apart_on_the_rail_and_the_phone_day_strip(settings, weather_standin):
    # With the weather on, so the rail's days are as full as they get.
    with live(offline(weather_settings(settings, weather_standin))) as server, chromium() as browser:
        names = ["Bob", "Carol", "Sam", "Sam", "Dave", "Erin", "Frank", "Gina", "Hal"]
        alice = api_user(server, "alice", "Alice")
        others = [api_user(server, f"{n.lower()}{i}", n) for i, n in enumerate(names)]
        trip = api_trip(alice, *others, days=3)
        add_stops(alice, trip, CASTLE, MARKET)
        day = [d["id"] for d in trip["days"]]
        where = [day[0], day[0], day[1], day[1], day[2], day[2], day[2], day[2], None]
        with ExitStack() as held:
            for client, day_id in zip(others, where):
                held.enter_context(looking_at(client, trip["id"], day_id))
            held.enter_context(looking_at(alice, trip["id"], day[0]))  # Alice's other tab: not shown to her
            desktop = {"width": 1366, "height": 850}
            for width, page in (("1366", open_trip(browser, server, alice, trip, viewport=desktop)),
                                ("390", open_trip(browser, server, alice, trip, phone=True))):
                rail = page.locator(".rail")
                avatar(day_item(page, 0), "Carol").wait_for()
                day_item(page, 2).locator(".day-weather").wait_for()
                assert day_item(page, 0).get_by_role("img").evaluate_all("els => els.map(e => e.ariaLabel)") == [
                    "Bob is looking at this day", "Carol is looking at this day"]
                # Two members called Sam: two avatars, one per member.
                sams = day_item(page, 1).locator(".presence-avatar")
                assert sorted(sams.evaluate_all("els => els.map(e => [e.ariaLabel, e.dataset.userId])")) == sorted([
                    ["Sam is looking at this day", others[2].user["id"]],
                    ["Sam is looking at this day", others[3].user["id"]]])
                # Four on one day: two faces and "+2".
                assert day_item(page, 2).get_by_role("img").evaluate_all("els => els.map(e => e.ariaLabel)") == [
                    "Dave is looking at this day", "Erin is looking at this day", "2 more are looking at this day"]
                assert rail.get_by_role("img", name=re.compile("Alice")).count() == 0
                if width == "1366":
                    avatar(page.locator(".rail-head"), "Hal", "has this trip open").wait_for()
                else:
                    assert day_item(page, 2).locator(".presence").is_visible()
                shot(page, f"live-rail-{width}")
                assert no_sideways_scroll(page) == 0, width
                page.errors.check()
