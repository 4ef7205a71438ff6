"""Offline in Chromium (issue 27), with browsers whose profile lives on disk,
as on a phone: the service worker, its cache and IndexedDB survive closing
the browser, which is then started again with no network (a cold start).

- A trip opened once opens cold offline: the trips list and the trip, with
  "Offline: showing the plan as of HH:MM", its images from kept thumbnails,
  and controls that need the server disabled and saying so.
- A comment, a vote and a move made offline are kept; back online they
  arrive once and the other member sees them live; a move whose stop was
  deleted meanwhile is reported to its author and not made.
- A write whose answer was lost is sent again with its key and applied once.
- A new page version waits for the next start (never mid-edit).
- Signing out clears what the device kept.
Screenshots of the offline views at 1280 and 360 px (spec/screenshots/, with WAYLINE_SCREENSHOTS=1)."""

from __future__ import annotations

import re
import shutil
import time

import pytest

from app.filestore import StoreUnavailable
from app.web.application import PUBLIC_DIR
from app.web.service_worker import ShellWorker
from browser.a11y import assert_accessible, live_roles_around
from browser.harness import (KEPT_READ, KEPT_ROWS, PAGE_DEADLINE_MS, add_stops, api, api_op, api_trip, api_user,
                             chromium, live, names_on_screen, no_sideways_scroll, open_installed, open_page,
                             playwright_driver, png, shot, stop_card)

pytestmark = pytest.mark.browser
VIEW = png(960, 640, (70, 130, 180))   # wider than a thumbnail (480 px)

WIDE = {"width": 1280, "height": 800}
NARROW = {"width": 360, "height": 740}


IMAGE_SHOWN = "() => { const i = document.querySelector('.note-img'); return i && i.complete && i.naturalWidth > 0; }"
DESCRIPTION = ("(el) => el.getAttribute('aria-describedby').split(' ')"
               ".map((id) => document.getElementById(id).textContent).join(' ')")
ONLY_CASTLE = ("() => [...document.querySelectorAll('.timeline .stop-name')].map((e) => e.textContent).join()"
               " === 'Castle'")


def scene(server, note_image: bool = True):
    """Alice's trip with Bob as an editor: Castle, Belém and Jerónimos on day 1,
    Sintra on day 2; Castle's note shows an uploaded image."""
    alice, bob = api_user(server, "alice", "Alice"), api_user(server, "bob", "Bob")
    trip = api_trip(alice, bob, title="Lisbon offline")
    stops = dict(zip(["Castle", "Belém", "Jerónimos"], add_stops(
        alice, trip, {"name": "Castle", "lat": 38.7139, "lng": -9.1335},
        {"name": "Belém", "lat": 38.6916, "lng": -9.2160}, {"name": "Jerónimos", "lat": 38.6979, "lng": -9.2067})))
    stops["Sintra"] = add_stops(alice, trip, {"name": "Sintra", "lat": 38.7876, "lng": -9.3905}, day=1)[0]
    if note_image:
        r = alice.post(f"/api/trips/{trip['id']}/media", files={"file": ("view.png", VIEW, "image/png")})
        assert r.status_code == 201, r.text
        api_op(alice, trip["id"], "update_stop", stopId=stops["Castle"], note=f"![The view]({r.json()['data']['url']})")
    return alice, bob, api(alice, "GET", f"/api/trips/{trip['id']}"), stops


def install(p, profile, server, user, trip, *, viewport=WIDE, phone=False, images=True):
    """Opens the trips list and the trip online, waits until the service
    worker controls the page and the trip (and its image) is kept; closes the browser."""
    page = open_installed(p, profile, server, session=user.token, viewport=viewport, phone=phone)
    page.goto("/#/")
    page.get_by_role("heading", name="Your trips").wait_for()
    page.locator(f"[data-trip-id='{trip['id']}']").click()
    page.locator(".timeline .stop").first.wait_for()
    page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    page.wait_for_function(KEPT_READ, arg=[f"/api/trips/{trip['id']}"])
    page.wait_for_function(KEPT_READ, arg=["/api/trips"])
    for day in trip["days"]:   # every day's review, not only the day shown
        page.wait_for_function(KEPT_READ, arg=[f"/api/trips/{trip['id']}/days/{day['id']}/review"])
    if images:
        page.wait_for_function(KEPT_ROWS, arg=["media"])
    page.errors.check()
    page.context.close()


def reopen_offline(p, profile, server, trip, *, viewport=WIDE, phone=False):
    """The browser started again with no network, straight at the trip, a
    day later: the browser's HTTP cache (an upload is fresh for an hour) is
    gone, so what shows comes from what the page kept."""
    shutil.rmtree(profile / "Default" / "Cache", ignore_errors=True)
    page = open_installed(p, profile, server, offline=True, viewport=viewport, phone=phone)
    # Playwright's offline mode does not always reach the service worker's own requests: cut the uploads too,
    # and should one reach the server, its file storage is out of reach (503), so the image can only be the
    # kept thumbnail. (Not a 404: a refusal is passed on, never answered with a kept copy: public/sw.js.)
    page.context.route("**/api/uploads/**", lambda route: route.abort("internetdisconnected"))

    async def unreachable(key):
        raise StoreUnavailable("the test's uploads are out of reach")

    server.app.state.services.files.open = unreachable
    page.goto(f"/#/trips/{trip['id']}")
    page.get_by_test_id("offline-line").wait_for()
    return page


def thread(page, stop):
    card = stop_card(page, stop)
    card.get_by_role("button", name=re.compile(r"comments?$")).click()
    return card


def test_a_trip_opened_once_opens_cold_offline_and_what_is_done_there_arrives_once(tmp_path, settings):
    with live(settings) as server, playwright_driver() as p:
        alice, bob, trip, stops = scene(server)
        profile = tmp_path / "alice-phone"
        install(p, profile, server, alice, trip)

        page = reopen_offline(p, profile, server, trip)
        assert page.evaluate("() => navigator.onLine") is False
        line = page.get_by_test_id("offline-line")
        assert re.fullmatch(r"Offline: showing the plan as of \d\d:\d\d", line.locator(".offline-title").inner_text())
        assert names_on_screen(page) == ["Castle", "Belém", "Jerónimos"]
        # The note's image is the kept thumbnail: 480 px wide, where the upload is 960.
        page.wait_for_function(IMAGE_SHOWN)
        assert page.evaluate("() => document.querySelector('.note-img').naturalWidth") == 480
        # Controls that need the server are disabled and say why.
        delete = page.get_by_role("button", name="Delete Castle")
        assert delete.is_disabled()
        assert "Needs a connection" in page.evaluate(DESCRIPTION, delete.element_handle())
        assert page.get_by_role("button", name="Add day").is_disabled()
        assert page.get_by_role("button", name="Edit Castle").is_enabled()   # update_stop is kept offline
        # Day 2, never shown on this device, has its review too.
        page.locator(".rail .day-btn").nth(1).click()
        page.get_by_test_id("review-status").wait_for()
        page.locator(".rail .day-btn").nth(0).click()
        stop_card(page, "Castle").wait_for()
        shot(page, "offline-1280-trip")
        assert_accessible(page, "the trip offline at 1280")

        # Offline: a comment, a vote, and two moves (one of a stop Bob is about to delete).
        before = api(bob, "GET", f"/api/trips/{trip['id']}")["version"]
        card = thread(page, "Castle")
        card.get_by_label("Comment on Castle").fill("Sunset from the walls!")
        card.get_by_role("button", name="Comment", exact=True).click()
        card.locator(".comment-waiting").wait_for()
        stop_card(page, "Castle").get_by_role("button", name=re.compile("^Vote for Castle")).click()
        move(page, "Jerónimos", "Day 2")
        move(page, "Belém", "Day 2")
        page.get_by_text("4 changes wait to be sent").wait_for()
        assert names_on_screen(page) == ["Castle"]   # the moves show where they were made
        assert stop_card(page, "Castle").get_by_role("button", name=re.compile("^Vote for Castle")).get_attribute(
            "aria-pressed") == "true"
        page.get_by_text("4 changes wait to be sent").click()
        shot(page, "offline-1280-waiting")
        assert_accessible(page, "the trip offline with waiting changes at 1280")

        # Meanwhile Bob, online, deletes Belém; his page is open and live.
        api_op(bob, trip["id"], "delete_stop", stopId=stops["Belém"])
        bob_page = open_installed(p, tmp_path / "bob", server, session=bob.token, viewport=WIDE)
        bob_page.goto(f"/#/trips/{trip['id']}")
        bob_page.wait_for_function("() => document.documentElement.dataset.sync === 'live'")

        page.context.set_offline(False)
        refused = page.get_by_test_id("refused-write")
        refused.wait_for()
        assert refused.locator(".refused-title").inner_text() == "Not sent: Move “Belém” to Day 2"
        assert "Before your change reached the trip, Bob removed “Belém” from Day 1" in refused.inner_text()
        page.wait_for_function("() => !document.querySelector('[data-testid=waiting-writes]')")
        page.get_by_test_id("offline-line").wait_for(state="detached")
        shot(page, "offline-1280-refused")
        assert_accessible(page, "a refused change at 1280")

        # All three arrived once: one comment, one vote, one move (and one version for it).
        now = api(bob, "GET", f"/api/trips/{trip['id']}")
        assert now["version"] == before + 2   # Bob's delete and Alice's move; the refused move changed nothing
        assert [[s["name"] for s in d["stops"]] for d in now["days"]] == [["Castle"], ["Sintra", "Jerónimos"]]
        castle = now["days"][0]["stops"][0]
        assert castle["votes"]["up"] == 1
        comments = api(bob, "GET", f"/api/trips/{trip['id']}/stops/{stops['Castle']}/comments")["comments"]
        assert [c["body"] for c in comments] == ["Sunset from the walls!"]
        # Bob sees it all live, without reloading: the move, the vote, the comment count.
        bob_page.wait_for_function(ONLY_CASTLE)
        castle_on_bob = stop_card(bob_page, "Castle")
        castle_on_bob.get_by_role("button", name=re.compile(r"^Vote for Castle, 1 so far")).wait_for()
        castle_on_bob.get_by_role("button", name="1 comment").wait_for()
        # The refusal is an alert of its own, in no other live region (nested ones are read twice).
        assert live_roles_around(refused) == ["alert"]
        page.get_by_role("button", name="Dismiss: Move “Belém” to Day 2").focus()
        page.keyboard.press("Enter")
        refused.wait_for(state="detached")
        # The keyboard goes on past the emptied line (to the day's heading), not back to the page's start.
        page.wait_for_function("() => document.activeElement.matches('.day-heading')")
        assert page.evaluate(KEPT_ROWS, ["outbox"]) == 0
        page.errors.check()
        bob_page.errors.check()


def move(page, stop: str, day: str) -> None:
    stop_card(page, stop).get_by_role("button", name=f"Move {stop}").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("To day").select_option(label=day)
    dialog.get_by_role("button", name="Move", exact=True).click()
    dialog.wait_for(state="detached")


def test_the_offline_views_on_a_phone(tmp_path, settings):
    """360 px: the trips list (a trip never opened here says it is not kept),
    the trip with a change waiting, the chat's note; nothing scrolls sideways;
    axe finds nothing critical or serious."""
    with live(settings) as server, playwright_driver() as p:
        alice, bob, trip, stops = scene(server, note_image=False)
        other = api_trip(bob, alice, title="Porto weekend")   # Alice is a member, never opened it here
        profile = tmp_path / "alice-phone"
        install(p, profile, server, alice, trip, viewport=NARROW, phone=True, images=False)

        page = open_installed(p, profile, server, offline=True, viewport=NARROW, phone=True)
        page.goto("/#/")
        page.get_by_test_id("offline-line").wait_for()
        assert page.get_by_test_id("offline-line").locator(".offline-title").inner_text().startswith(
            "Offline: showing your trips as of ")
        not_kept = page.locator(f"[data-trip-id='{other['id']}']")
        assert "Not kept on this device" in not_kept.inner_text()
        assert not_kept.evaluate("(el) => el.tagName") == "DIV"   # not a link offline
        assert page.get_by_role("button", name="New trip").is_disabled()
        assert no_sideways_scroll(page) == 0
        shot(page, "offline-360-trips")
        assert_accessible(page, "the trips list offline at 360")

        page.locator(f"[data-trip-id='{trip['id']}']").click()
        page.locator(".timeline .stop").first.wait_for()
        move(page, "Belém", "Day 2")
        page.get_by_text("1 change waits to be sent").wait_for()
        assert no_sideways_scroll(page) == 0
        page.evaluate("() => window.scrollTo(0, 0)")
        shot(page, "offline-360-trip")
        assert_accessible(page, "the trip offline at 360")

        page.locator(".mobile-tabs").get_by_role("button", name=re.compile("AI help")).click()
        page.locator(".side-offline").wait_for()
        assert "need a connection" in page.locator(".side-offline").inner_text()
        assert no_sideways_scroll(page) == 0
        shot(page, "offline-360-help")
        assert_accessible(page, "AI help offline at 360")
        page.errors.check()
        page.context.close()

        # The phone is switched off and on again, still offline: the move is still kept, and shown.
        page = reopen_offline(p, profile, server, trip, viewport=NARROW, phone=True)
        page.get_by_text("1 change waits to be sent").wait_for()
        assert names_on_screen(page) == ["Castle", "Jerónimos"]
        # Back online, it is sent.
        page.context.set_offline(False)
        page.wait_for_function("() => !document.querySelector('[data-testid=waiting-writes]')")
        now = api(alice, "GET", f"/api/trips/{trip['id']}")
        assert [[s["name"] for s in d["stops"]] for d in now["days"]] == [["Castle", "Jerónimos"], ["Sintra", "Belém"]]
        page.errors.check()


def test_a_write_whose_answer_was_lost_is_sent_again_with_its_key_and_applied_once(tmp_path, settings):
    """The move reaches the server but its answer never reaches the page (the
    connection dropped): the page keeps it, sends it again with the same
    Idempotency-Key when Wayline answers again, and the server applies it once."""
    with live(settings) as server, playwright_driver() as p:
        alice, bob, trip, stops = scene(server, note_image=False)
        page = open_installed(p, tmp_path / "alice", server, session=alice.token, viewport=WIDE)
        page.goto(f"/#/trips/{trip['id']}")
        page.locator(".timeline .stop").first.wait_for()
        version = api(bob, "GET", f"/api/trips/{trip['id']}")["version"]
        sent = []

        def answer_lost_once(route):
            sent.append(route.request.headers.get("idempotency-key"))
            response = route.fetch()           # the server applies it...
            if len(sent) == 1:
                route.abort("connectionreset")   # ...and the answer is lost on the way
            else:
                route.fulfill(response=response)

        page.route("**/ops/move_stop", answer_lost_once)
        move(page, "Jerónimos", "Day 2")
        # Wayline answers again (the page's probe): the kept move goes again, with the same key.
        deadline = time.monotonic() + PAGE_DEADLINE_MS / 1000
        while len(sent) < 2 and time.monotonic() < deadline:
            page.wait_for_timeout(100)   # the route handler runs while Playwright waits
        page.wait_for_function("() => !document.querySelector('[data-testid=waiting-writes]')")
        assert len(sent) == 2 and sent[0] and sent[0] == sent[1]
        now = api(bob, "GET", f"/api/trips/{trip['id']}")
        assert now["version"] == version + 1
        assert [[s["name"] for s in d["stops"]] for d in now["days"]] == [["Castle", "Belém"], ["Sintra", "Jerónimos"]]
        page.wait_for_function("() => document.querySelectorAll('.timeline .stop').length === 2")
        assert page.evaluate(KEPT_ROWS, ["outbox"]) == 0
        page.errors.check()


def test_a_new_version_of_the_page_waits_for_the_next_start(tmp_path, settings):
    """The service worker update flow: a changed page is installed beside the
    running one and takes over only when no page uses the old one; the page
    being edited is never reloaded or switched under the member."""
    with live(settings) as server, playwright_driver() as p:
        alice, bob, trip, stops = scene(server, note_image=False)
        page = open_installed(p, tmp_path / "alice", server, session=alice.token, viewport=WIDE)
        page.goto(f"/#/trips/{trip['id']}")
        page.locator(".timeline .stop").first.wait_for()
        page.wait_for_function("() => navigator.serviceWorker.controller !== null")
        first = page.evaluate("() => caches.keys()")
        assert len(first) == 1 and first[0].startswith("wayline-shell-")
        page.evaluate("() => { window.sameDocument = true; }")
        card = thread(page, "Castle")
        card.get_by_label("Comment on Castle").fill("Half-written thought")

        # A new version of the page is deployed: one of its files changed, so /sw.js changes.
        deployed = tmp_path / "public"
        shutil.copytree(PUBLIC_DIR, deployed)
        with (deployed / "styles.css").open("a") as css:
            css.write("\n/* the next version */\n")
        server.app.state.shell_worker = ShellWorker(deployed)
        page.evaluate("() => navigator.serviceWorker.getRegistration().then((r) => r.update())")
        page.wait_for_function("() => navigator.serviceWorker.getRegistration().then((r) => Boolean(r.waiting))")
        # Installed and waiting: the open page keeps its document, its draft and the old version.
        assert page.evaluate("() => window.sameDocument") is True
        assert card.get_by_label("Comment on Castle").input_value() == "Half-written thought"
        # Both shells are there: the running worker's (still serving this page) and the waiting one's.
        assert sorted(page.evaluate("() => caches.keys()")) == sorted([first[0], next_cache(deployed)])
        page.errors.check()
        page.close()

        # The next start: the new version runs, the old shell is gone.
        again = page.context.new_page()
        again.goto(f"/#/trips/{trip['id']}")
        again.locator(".timeline .stop").first.wait_for()
        again.wait_for_function("([name]) => caches.keys().then((k) => k.length === 1 && k[0] === name)",
                                arg=[next_cache(deployed)])


def test_signing_out_clears_what_the_device_kept(tmp_path, settings):
    with live(settings) as server, playwright_driver() as p:
        alice, bob, trip, stops = scene(server)
        profile = tmp_path / "alice"
        install(p, profile, server, alice, trip)
        page = open_installed(p, profile, server, offline=True, viewport=WIDE)
        page.context.route("**/api/uploads/**", lambda route: route.abort("internetdisconnected"))
        page.goto(f"/#/trips/{trip['id']}")
        page.locator(".timeline .stop").first.wait_for()
        move(page, "Belém", "Day 2")
        page.get_by_role("button", name=re.compile("^Account")).click()
        page.get_by_role("button", name="Sign out", exact=True).click()
        # A change not sent yet is named before it is lost.
        dialog = page.get_by_role("dialog")
        assert "1 change made without a connection has not been sent yet" in dialog.inner_text()
        dialog.get_by_role("button", name="Sign out").click()
        page.get_by_role("heading", name="Welcome back").wait_for()
        for store in ("reads", "media", "outbox"):
            assert page.evaluate(KEPT_ROWS, [store]) == 0, store
        # Back online, the server hears of the sign-out too: the session is over.
        page.context.set_offline(False)
        page.reload()
        page.get_by_role("heading", name="Welcome back").wait_for()
        assert page.evaluate("() => fetch('/api/auth/me').then((r) => r.json())")["data"]["user"] is None
        assert page.evaluate("() => localStorage.getItem('wayline.signOutPending')") is None
        page.errors.check()


def next_cache(public_dir) -> str:
    """The cache name a worker of this page version fills."""
    head = ShellWorker(public_dir).script().split(b";\n", 1)[0]
    return "wayline-shell-" + re.search(rb'"version": "([0-9a-f]+)"', head).group(1).decode()


def test_an_expense_added_or_changed_offline_shows_in_the_list_and_arrives_once(settings):
    """An expense added offline is in the list at once, marked "Waiting to
    send" (it used to show only in the collapsed list of waiting changes,
    under "No expenses yet.", so a traveller would add it again); one changed
    offline shows its new amount. Deleting waits for the connection and says
    so. The balances stay the server's and say so. Back online each arrives
    once."""
    with live(settings) as server, chromium() as browser:
        alice, bob = api_user(server, "alice", "Alice"), api_user(server, "bob", "Bob")
        trip = api_trip(alice, bob, title="Lisbon offline")
        t = trip["id"]
        taxi = api_op(alice, t, "add_expense", title="Taxi", amountMinor=2000, currency="EUR",
                      paidBy=alice.user["id"])["trip"]["expenses"][0]["id"]
        page = open_page(browser, server, session=bob.token, phone=True, viewport=NARROW)
        page.goto(f"/#/trips/{t}?view=expenses")
        page.locator(f".expense[data-expense-id='{taxi}']").wait_for()
        page.context.set_offline(True)
        page.wait_for_function("() => document.documentElement.dataset.connection === 'offline'")

        page.get_by_role("button", name="Add expense").click()
        dialog = page.get_by_role("dialog")
        dialog.get_by_label("What for").fill("Dinner")
        dialog.get_by_label("Amount").fill("42.50")
        dialog.get_by_role("button", name="Add expense").click()
        dialog.wait_for(state="detached")
        page.get_by_role("button", name="Edit Taxi").click()
        dialog.get_by_label("Amount").fill("25")
        dialog.get_by_role("button", name=re.compile("^Save")).click()
        dialog.wait_for(state="detached")
        page.get_by_text("2 changes wait to be sent").wait_for()

        dinner = page.locator(".expense", has_text="Dinner")
        assert "Waiting to send" in dinner.inner_text() and "42.50 EUR" in dinner.inner_text()
        assert dinner.get_by_role("button").count() == 0   # no edit or delete until the server has it
        changed = page.locator(f".expense[data-expense-id='{taxi}']")
        assert "Waiting to send" in changed.inner_text() and "25.00 EUR" in changed.inner_text()
        # A delete is not kept for later: its button says it needs a connection, so nobody believes an
        # expense gone that is still on everyone's list.
        delete = changed.get_by_role("button", name="Delete Taxi")
        assert delete.is_disabled()
        assert "Needs a connection" in page.evaluate(DESCRIPTION, delete.element_handle())
        assert page.get_by_text("No expenses yet.").count() == 0
        page.get_by_test_id("expenses-waiting").wait_for()
        assert no_sideways_scroll(page) == 0
        shot(page, "offline-360-expenses")

        page.context.set_offline(False)
        page.wait_for_function("() => !document.querySelector('[data-testid=waiting-writes]')")
        page.get_by_test_id("expenses-waiting").wait_for(state="detached")
        now = api(alice, "GET", f"/api/trips/{t}")["expenses"]
        assert sorted((e["title"], e["amountMinor"]) for e in now) == [("Dinner", 4250), ("Taxi", 2500)]
        assert page.locator(".expense").count() == 2 and page.locator(".expense .pending-badge").count() == 0
        assert page.get_by_role("button", name="Delete Taxi").is_enabled()
        page.errors.check()


def test_a_change_kept_for_a_trip_its_author_was_removed_from_is_said_on_the_trips_list(settings):
    """Bob adds an expense offline; meanwhile Alice removes him from the trip. Back online his page
    leaves the trip (it is not his any more) and the kept expense is refused. Refused changes show only in
    the planner, which cannot open now: the expense was kept for ever and never mentioned. The trips list
    says it, in words and with the trip's name, until he dismisses it. The trip's kept copy goes: it no
    longer opens from his device offline."""
    with live(settings) as server, chromium() as browser:
        alice, bob = api_user(server, "alice", "Alice"), api_user(server, "bob", "Bob")
        trip = api_trip(alice, bob, title="Lisbon offline")
        porto = api_trip(alice, bob, title="Porto")["id"]
        t = trip["id"]
        page = open_page(browser, server, session=bob.token, viewport=WIDE)
        page.goto(f"/#/trips/{porto}")
        page.wait_for_function(f"() => ({KEPT_READ})(['/api/trips/{porto}'])")
        page.wait_for_url(re.compile(r"day="))   # the planner has put its day in the address: it will not again
        page.goto("/#/")
        page.locator(f"[data-trip-id='{t}']").click()
        page.locator(".day-view").wait_for()
        # By its tab, as a member does: a new address typed into the open planner could be
        # written over by the planner keeping the address in step (a render in between).
        page.locator(".rail-view", has_text="Expenses").click()
        page.get_by_role("button", name="Add expense").wait_for()
        page.context.set_offline(True)
        page.wait_for_function("() => document.documentElement.dataset.connection === 'offline'")
        page.get_by_role("button", name="Add expense").click()
        dialog = page.get_by_role("dialog")
        dialog.get_by_label("What for").fill("Dinner")
        dialog.get_by_label("Amount").fill("42.50")
        dialog.get_by_role("button", name="Add expense").click()
        dialog.wait_for(state="detached")
        page.get_by_text("1 change waits to be sent").wait_for()

        assert page.evaluate(KEPT_READ, [f"/api/trips/{t}"])   # the trip opens from this device offline

        api(alice, "DELETE", f"/api/trips/{t}/members/{bob.user['id']}")
        page.context.set_offline(False)
        page.get_by_role("heading", name="Your trips").wait_for()
        # Not his trip any more: it no longer opens from this device either (its kept copy is gone).
        page.wait_for_function(f"() => ({KEPT_READ})(['/api/trips/{t}']).then((here) => !here)")
        refused = page.get_by_test_id("refused-write")
        refused.wait_for()
        assert refused.locator(".refused-title").inner_text() == "Not sent: Add the expense “Dinner” (42.50 EUR)"
        assert ("You are no longer a member of “Lisbon offline”, or it was deleted, so this change was not made."
                in refused.inner_text())
        assert_accessible(page, "a change refused for a trip no longer yours")
        refused.get_by_role("button", name="Dismiss: Add the expense “Dinner” (42.50 EUR)").click()
        refused.wait_for(state="detached")
        page.wait_for_function(f"() => ({KEPT_ROWS})(['outbox']).then((n) => n === 0)")
        assert api(alice, "GET", f"/api/trips/{t}")["expenses"] == []
        # Removed from Porto while his page shows the trips list: the list read next forgets it too.
        assert page.evaluate(KEPT_READ, [f"/api/trips/{porto}"])
        api(alice, "DELETE", f"/api/trips/{porto}/members/{bob.user['id']}")
        page.reload()
        page.get_by_role("heading", name="Your trips").wait_for()
        page.wait_for_function(f"() => ({KEPT_READ})(['/api/trips/{porto}']).then((here) => !here)")
        page.errors.check()


def test_a_sign_out_made_offline_reaches_the_server_when_the_connection_is_back(settings):
    """A shared device: signed out offline, the page left open at sign-in. When
    the connection comes back the server hears of it at once (it used to wait
    for the next start of the page, the session still valid meanwhile)."""
    with live(settings) as server, chromium() as browser:
        alice, bob = api_user(server, "alice", "Alice"), api_user(server, "bob", "Bob")
        trip = api_trip(alice, bob, title="Lisbon offline")
        page = open_page(browser, server, session=alice.token, viewport=WIDE)
        page.goto(f"/#/trips/{trip['id']}")
        page.locator(".day-view").wait_for()
        page.context.set_offline(True)
        page.wait_for_function("() => document.documentElement.dataset.connection === 'offline'")
        page.get_by_role("button", name=re.compile("^Account")).click()
        page.get_by_role("button", name="Sign out", exact=True).click()
        page.get_by_role("heading", name="Welcome back").wait_for()
        assert page.evaluate("() => localStorage.getItem('wayline.signOutPending')") == "1"
        assert api(alice, "GET", "/api/auth/me")["user"]["username"] == "alice"   # the server has not heard yet

        page.context.set_offline(False)
        page.wait_for_function("() => localStorage.getItem('wayline.signOutPending') === null")
        assert api(alice, "GET", "/api/auth/me")["user"] is None
        assert page.get_by_role("heading", name="Welcome back").is_visible()
        page.errors.check()
