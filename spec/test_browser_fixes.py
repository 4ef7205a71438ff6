"""The smaller things a group hit (issue 21, item 6), each seen in the page:
places to eat that no longer fit go once one was used; the balances table
fits 360 px (and says so when a table must scroll); a refused upload's toast
shows over the dialog, and the files a note links are listed there with
Remove (a 375 px phone); closing the panel leaves nothing to scroll sideways;
a note's attachment shows as the image, in a stop, a day note and an AI
card; a finger drags a stop past tall cards to one far above; and a deep
link returns to its day after sign-in, after sign-up, and through an invite."""

from __future__ import annotations

from datetime import date

import pytest

from browser.a11y import assert_accessible, live_roles_around, small_targets
from browser.harness import (PASSWORD, add_stops, api, api_op, api_trip, api_user, chromium, live, names_on_screen,
                             no_sideways_scroll, offline, open_ai_help, open_page, panel_button, shot,
                             stop_card)
from helpers import png_bytes
from standins.osm_standin import osm_settings
from test_browser_findings import next_weekday, trip_on

pytestmark = pytest.mark.browser

TINY_PNG = png_bytes()   # a whole PNG: uploads refuse a damaged one (app/media.py)
PHONE = {"width": 360, "height": 740}
LAPTOP = {"width": 1280, "height": 800}


def test_places_to_eat_that_no_longer_fit_go_once_one_is_used(settings, osm_standin):
    with live(offline(osm_settings(settings, osm_standin))) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        trip = trip_on(alice, next_weekday(date(2026, 6, 1), {1}), 1)
        add_stops(alice, trip, {"name": "Rundetaarn", "placeId": "osm:way/26574020", "lat": 55.6814, "lng": 12.5757,
                                "durationMin": 60})
        page = open_page(browser, server, viewport=LAPTOP, session=alice.token)
        page.goto(f"/#/trips/{trip['id']}")
        panel = open_ai_help(page)
        panel.get_by_label("Meal").select_option("lunch")
        panel.get_by_role("button", name="Find places to eat").click()
        cards = panel.locator(".suggestion")
        cards.nth(1).wait_for()
        used = cards.first.locator("h4").inner_text()
        cards.first.get_by_role("button", name="Add to day").click()
        stop_card(page, used).wait_for()
        # The one used stays, marked; the others were worked out for the day before it.
        panel.locator(".ideas-outdated").wait_for()
        assert panel.locator(".suggestion").count() == 1
        assert panel.locator(".suggestion.applied h4").inner_text() == used
        shot(page, "ideas-outdated-1280")
        panel.get_by_role("button", name="Find places to eat again").click()
        panel.locator(".suggestion:not(.applied)").first.wait_for()
        assert panel.locator(".ideas-outdated").count() == 0
        page.errors.check()


def test_balances_fit_a_phone_and_the_stop_dialog_refuses_an_upload_and_removes_one(settings):
    with live(offline(settings)) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice Wonderland-Smithson")
        bob = api_user(server, "bob", "Carolina Fernández de la Vega")
        trip = api_trip(alice, bob)
        t = trip["id"]
        ids = [alice.user["id"], bob.user["id"]]
        api_op(alice, t, "add_expense", title="Dinner for everyone", amountMinor=12045, currency="EUR", paidBy=ids[0])
        api_op(bob, t, "add_expense", title="Sushi", amountMinor=18000, currency="JPY", paidBy=ids[1])
        page = open_page(browser, server, viewport=PHONE, phone=True, session=alice.token)
        page.goto(f"/#/trips/{t}?view=expenses")
        page.locator(".balance-card").nth(1).wait_for()
        for card in page.locator(".balance-card").all():
            box = card.locator(".table-scroll")
            head = card.locator("thead th", has_text="Balance")
            assert head.bounding_box()["x"] + head.bounding_box()["width"] <= \
                box.bounding_box()["x"] + box.bounding_box()["width"] + 0.5, "the Balance column is cut off"
            assert card.locator(".scroll-hint").is_hidden()
        assert small_targets(page, ".expense") == []                    # Edit and Delete, for a finger
        shot(page, "expenses-balances-360")
        page.set_viewport_size({"width": 250, "height": 740})   # narrower than any phone: the table must scroll
        page.locator(".balance-card .scroll-hint").first.wait_for()
        assert "Scroll sideways" in page.locator(".balance-card .scroll-hint").first.inner_text()
        page.set_viewport_size(PHONE)

        # A file the server refuses: the toast shows over the dialog, not behind its backdrop.
        page.goto(f"/#/trips/{t}")
        page.locator("[data-testid=add-stop]").click()
        dialog = page.get_by_role("dialog")
        dialog.locator("input[type=file]").set_input_files(
            files=[{"name": "run-me.exe", "mimeType": "application/octet-stream", "buffer": b"MZ\x90\x00" * 64}])
        toast = dialog.locator(".toast-error")
        toast.wait_for()
        # Read once, as an alert: not inside another live region (a status around it reads it twice).
        assert live_roles_around(toast) == ["alert"]
        box = toast.bounding_box()
        # Toasts let taps through (pointer-events: none); to ask what is painted on top, let them take hits.
        assert page.evaluate("""([x, y]) => {
            for (const el of document.querySelectorAll('.toasts, .toast')) el.style.pointerEvents = 'auto';
            return Boolean(document.elementFromPoint(x, y).closest('.toast'));
        }""", [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2]), "the toast is under the backdrop"
        shot(page, "upload-refused-360")

        # The files the note links, each with Remove (public/planner/attachments.js), on a 375 px phone:
        # Alice (an owner) removes one she attached; Bob removed his own already, so that one only
        # leaves the note; the rest of what she typed stays, and Add stop saves it.
        page.set_viewport_size({"width": 375, "height": 812})
        stop_dialog = page.get_by_role("dialog", name="Add a stop to day 1")
        bus = bob.post(f"/api/trips/{t}/media", files={"file": ("bus-map.png", TINY_PNG, "image/png")}).json()["data"]
        note = stop_dialog.get_by_label("Note", exact=True)
        note.fill(f"Meet at the gate.\nBus: ![bus-map.png]({bus['url']}) then walk.")
        stop_dialog.locator("input[type=file]").set_input_files(
            files=[{"name": "tickets.png", "mimeType": "image/png", "buffer": TINY_PNG}])
        files = stop_dialog.locator("[data-testid=note-files]")
        remove_tickets = files.get_by_role("button", name="Remove tickets.png")
        remove_tickets.wait_for()
        tickets = next(m for m in api(alice, "GET", f"/api/trips/{t}/media")["media"] if m["filename"] == "tickets.png")
        assert note.input_value() == (f"Meet at the gate.\nBus: ![bus-map.png]({bus['url']}) then walk.\n"
                                      f"![tickets.png]({tickets['url']})\n")
        assert files.locator(".attachment-name").all_inner_texts() == ["bus-map.png", "tickets.png"]
        for thumb in files.locator("img.attachment-thumb").element_handles():
            page.wait_for_function("(img) => img.complete && img.naturalWidth > 0", arg=thumb)
        box = remove_tickets.bounding_box()
        assert box["height"] >= 44 and box["width"] >= 44, box          # a finger's target
        assert small_targets(page, ".dialog-head") == []                # and the dialog's Close
        assert small_targets(page, "dialog .btn-sm") == []              # and Attach a file
        assert small_targets(page, "dialog details.more > summary") == []   # and the Location disclosure
        plus_one = stop_dialog.locator(".next-day-choice").bounding_box()  # the (+1) box's label row
        assert plus_one["height"] >= 44, plus_one
        assert no_sideways_scroll(page) == 0
        files.scroll_into_view_if_needed()
        page.evaluate("() => document.querySelectorAll('.toast').forEach((t) => t.remove())")  # for the picture
        assert_accessible(page, "the stop dialog's attached files at 375 px")
        shot(page, "note-files-375")

        remove_tickets.click()
        confirm = page.get_by_role("dialog", name="Remove “tickets.png”?")
        confirm.get_by_role("button", name="Cancel").click()            # changed her mind: nothing happens
        assert tickets["id"] in [m["id"] for m in api(alice, "GET", f"/api/trips/{t}/media")["media"]]
        remove_tickets.focus()
        page.keyboard.press("Enter")                                    # the keyboard way
        shot(page, "note-file-confirm-375")
        confirm.get_by_role("button", name="Remove").click()
        files.get_by_role("status").filter(has_text="Removed “tickets.png” from the trip").wait_for()
        assert note.input_value() == f"Meet at the gate.\nBus: ![bus-map.png]({bus['url']}) then walk.\n"
        assert tickets["id"] not in [m["id"] for m in api(alice, "GET", f"/api/trips/{t}/media")["media"]]
        remove_bus = files.get_by_role("button", name="Remove bus-map.png")
        assert remove_bus.evaluate("(b) => b === document.activeElement"), "focus was lost"

        api(bob, "DELETE", f"/api/trips/{t}/media/{bus['id']}")         # Bob, meanwhile, on his phone
        remove_bus.click()
        page.get_by_role("dialog", name="Remove “bus-map.png”?").get_by_role("button", name="Remove").click()
        files.get_by_role("status").filter(has_text="“bus-map.png” had already been removed").wait_for()
        files.scroll_into_view_if_needed()
        shot(page, "note-file-gone-375")
        assert note.input_value() == "Meet at the gate.\nBus: then walk.\n"
        assert files.locator("section").is_hidden()                     # no file left to list
        stop_dialog.get_by_label("Name", exact=True).fill("Castle")
        stop_dialog.get_by_role("button", name="Add stop").focus()
        page.keyboard.press("Enter")
        stop_card(page, "Castle").get_by_text("Bus: then walk.").wait_for()
        # The day's header (and its Add stop) was rebuilt with the new stop: focus is back on it, not on the body.
        focused = page.evaluate("() => document.activeElement.outerHTML.slice(0, 100)")
        assert page.locator("[data-testid=add-stop]").evaluate("(b) => b === document.activeElement"), focused
        stops = api(alice, "GET", f"/api/trips/{t}")["days"][0]["stops"]
        assert [s["note"] for s in stops if s["name"] == "Castle"] == ["Meet at the gate.\nBus: then walk.\n"]
        page.errors.check()


def test_closing_the_panel_leaves_nothing_to_scroll_sideways_and_notes_show_their_images(settings):
    with live(offline(settings)) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        trip = api_trip(alice)
        t, day = trip["id"], trip["days"][0]["id"]
        page = open_page(browser, server, viewport=LAPTOP, session=alice.token)
        upload = page.request.post(f"/api/trips/{t}/media", multipart={
            "file": {"name": "tickets.png", "mimeType": "image/png", "buffer": TINY_PNG}},
            headers={"Cookie": f"wayline_session={alice.token}"})
        assert upload.status == 201, upload.text()
        url = upload.json()["data"]["url"]
        api_op(alice, t, "update_day", dayId=day, note=f"Bring these:\n![tickets.png]({url})")
        add_stops(alice, trip, {"name": "Castelo de São Jorge", "lat": 38.7139, "lng": -9.1335,
                                "note": f"Our tickets: ![tickets.png]({url})"})
        page.goto(f"/#/trips/{t}")
        page.locator(".day-note img.note-img[alt='tickets.png']").wait_for()
        page.locator(".stop .md img.note-img[alt='tickets.png']").wait_for()
        assert "![" not in page.locator(".day-view").inner_text()

        open_ai_help(page)
        page.locator("#side-panel").get_by_role("button", name="Close AI help").click()
        page.wait_for_function("() => !document.querySelector('#side-panel').classList.contains('open')")
        page.mouse.wheel(400, 0)                                  # try to scroll sideways
        assert no_sideways_scroll(page) == 0
        assert page.evaluate("() => document.scrollingElement.scrollLeft") == 0
        page.errors.check()


def test_a_finger_drags_a_stop_past_tall_cards_to_one_far_above(settings):
    long_note = "Meet at the entrance. " * 30
    with live(offline(settings)) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        trip = api_trip(alice)
        stops = [{"name": f"Stop {n}", "lat": 38.71 + n / 1000, "lng": -9.14, "durationMin": 60, "note": long_note}
                 for n in range(1, 5)]
        add_stops(alice, trip, *stops)
        page = open_page(browser, server, viewport=PHONE, phone=True, session=alice.token)
        page.goto(f"/#/trips/{trip['id']}")
        last = stop_card(page, "Stop 4")
        last.wait_for()
        assert last.bounding_box()["height"] > 300                 # a phone's card with a long note is tall
        last.locator(".drag-handle").scroll_into_view_if_needed()
        # A finger goes down on the last stop's handle: the cards shrink to their names and the
        # whole day comes into view, so the first stop is where the finger can reach it.
        reach = page.evaluate("""() => {
            const stop = (name) => [...document.querySelectorAll('.timeline .stop')]
                .find((s) => s.querySelector('.stop-name').textContent === name);
            const handle = stop('Stop 4').querySelector('.drag-handle');
            const h = handle.getBoundingClientRect();
            const at = (x, y) => ({ pointerId: 7, pointerType: 'touch', isPrimary: true, bubbles: true,
                                    cancelable: true, clientX: x, clientY: y });
            handle.dispatchEvent(new PointerEvent('pointerdown', at(h.x + 4, h.y + 4)));
            const first = stop('Stop 1').getBoundingClientRect();
            const bars = document.querySelector('.rail').getBoundingClientRect().bottom;
            const tabs = document.querySelector('.mobile-tabs').getBoundingClientRect().top;
            return { top: first.top, bottom: first.bottom, bars, tabs, x: first.x + first.width / 2 };
        }""")
        assert reach["top"] >= reach["bars"] and reach["top"] + 12 <= reach["tabs"], reach
        shot(page, "drag-compact-360")
        # The finger lifts on the first stop where it is now (a live update of the
        # trip's legs may have moved the cards a little since the finger went down).
        page.evaluate("""() => {
            const first = [...document.querySelectorAll('.timeline .stop')]
                .find((s) => s.querySelector('.stop-name').textContent === 'Stop 1').getBoundingClientRect();
            const at = { pointerId: 7, pointerType: 'touch', isPrimary: true, bubbles: true, cancelable: true,
                         clientX: first.x + first.width / 2, clientY: first.top + 6 };
            window.dispatchEvent(new PointerEvent('pointermove', at));
            window.dispatchEvent(new PointerEvent('pointerup', at));
        }""")
        page.get_by_text("Moved “Stop 4”").wait_for()
        assert names_on_screen(page) == ["Stop 4", "Stop 1", "Stop 2", "Stop 3"]
        page.errors.check()


def test_a_deep_link_returns_to_its_day_after_sign_in_sign_up_and_an_invite(settings):
    with live(offline(settings)) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        trip = api_trip(alice, days=3)
        t, day3 = trip["id"], trip["days"][2]["id"]
        link = f"/#/trips/{t}?day={day3}"

        page = open_page(browser, server, viewport=PHONE, phone=True)
        page.goto(link)
        page.get_by_role("heading", name="Welcome back").wait_for()
        page.get_by_label("Username").fill("alice")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        page.locator(f".day-view[data-day-id='{day3}']").wait_for()
        assert page.url.endswith(link)
        page.context.close()

        # Sign-up keeps it too (here: the preferences page, which any new account may open).
        page = open_page(browser, server, viewport=LAPTOP)
        page.goto("/#/preferences")
        page.get_by_role("heading", name="Welcome back").wait_for()
        page.get_by_role("link", name="Create an account").click()
        page.get_by_role("heading", name="Create your account").wait_for()
        # A blank form is said in words, at the field to fill, before anything is sent.
        page.get_by_role("button", name="Create account").click()
        page.get_by_role("alert").filter(has_text="Choose a username.").wait_for()
        assert page.evaluate("document.activeElement.name") == "username"
        page.get_by_label("Username").fill("carol")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Create account").click()
        page.get_by_role("heading", name="Your defaults").wait_for()
        page.context.close()

        # Bob has a link to day 3 and an invite: after signing up and joining, he is on day 3.
        invite = api(alice, "POST", f"/api/trips/{t}/invites", {"role": "editor"})["token"]
        page = open_page(browser, server, viewport=PHONE, phone=True)
        page.goto(link)
        page.get_by_role("heading", name="Welcome back").wait_for()
        page.goto(f"/#/invite/{invite}")
        page.get_by_text("Sign in or create an account to join").wait_for()
        page.get_by_role("link", name="Create an account").click()
        page.get_by_role("heading", name="Create your account").wait_for()
        page.get_by_label("Username").fill("bob")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Create account").click()
        page.get_by_role("button", name="Join the trip").click()
        page.locator(f".day-view[data-day-id='{day3}']").wait_for()
        shot(page, "deep-link-after-invite-360")
        page.errors.check()


def test_the_chat_and_ai_help_open_from_their_own_buttons(settings):
    with live(offline(settings)) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        trip = api_trip(alice)
        page = open_page(browser, server, viewport=PHONE, phone=True, session=alice.token)
        page.goto(f"/#/trips/{trip['id']}")
        page.locator(".day-view").wait_for()
        # Without AI on this server the group chat is there all the same; AI help says what is off.
        panel_button(page, "Chat").click()
        page.locator("#side-panel.open .agent-composer").wait_for()
        assert page.locator("#side-panel").get_attribute("aria-label") == "Chat"
        panel_button(page, "AI help").click()
        page.locator("#side-panel.open").wait_for()
        assert page.locator("#side-panel").get_attribute("aria-label") == "AI help"
        page.locator("#side-panel").get_by_role("button", name="Close AI help").focus()
        page.keyboard.press("Enter")
        page.locator("#side-panel.open").wait_for(state="detached")
        # By keyboard: closing gives focus back to the button that opens it, not to the page's body.
        is_focused = "(b) => b === document.activeElement"
        focus = "() => document.activeElement.outerHTML.slice(0, 100)"
        assert panel_button(page, "AI help").evaluate(is_focused), page.evaluate(focus)
        panel_button(page, "Chat").focus()
        page.keyboard.press("Enter")
        page.locator("#side-panel.open .agent-composer").wait_for()
        page.locator("#side-panel").get_by_label("Message", exact=True).focus()
        page.keyboard.press("Escape")                                   # the sheet closes from inside it
        page.locator("#side-panel.open").wait_for(state="detached")
        assert panel_button(page, "Chat").evaluate(is_focused)
        page.set_viewport_size({"width": 1280, "height": 800})          # the top bar's toggles: rebuilt on open
        panel_button(page, "Chat").focus()
        page.keyboard.press("Enter")
        page.locator("#side-panel.open").wait_for()
        assert panel_button(page, "Chat").evaluate(is_focused), page.evaluate(focus)
        page.errors.check()
