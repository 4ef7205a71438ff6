"""AI and Google features in the browser, against the stand-ins: place search
when adding a stop, find places to eat, optimize a day (preview, Apply Plan),
and an agent chat turn whose write tool is approved and adds a stop."""

from __future__ import annotations

import json
from datetime import date, timedelta

import pytest

from browser.a11y import announced, nested_live_regions, watch_announcements, watch_live_regions
from browser.harness import (chromium, live, offline, open_ai_help, open_chat, open_page, shot, stop_card, stop_times,
                             timeline_caught_up, ui_add_stop, ui_create_trip, ui_signup)
from browser.scripts import proposing_responder, quiet_responder, recommending_responder, tool_call
from standins.google_standin import google_settings
from standins.openai_standin import Reply, ai_settings, message_item

pytestmark = pytest.mark.browser


def soon(days: int) -> str:
    return (date.today() + timedelta(days=days)).isoformat()


def test_place_search_eat_and_optimize_with_preview_and_apply(settings, openai_standin, google_standin):
    openai_standin.responder = quiet_responder
    app_settings = offline(google_settings(ai_settings(settings, openai_standin), google_standin))
    with live(app_settings) as server, chromium() as browser:
        page = open_page(browser, server)
        ui_signup(page, "alice", "Alice")
        ui_create_trip(page, "Lisbon food trip", start=soon(1), end=soon(2))

        # Add a stop through Google place search.
        page.locator("[data-testid=add-stop]").click()
        dialog = page.get_by_role("dialog")
        dialog.get_by_role("searchbox").fill("Castelo")
        dialog.get_by_role("button", name="Search", exact=True).click()
        dialog.locator(".place-pick", has_text="Castelo de São Jorge").wait_for()
        assert dialog.locator(".osm-credit").count() == 0  # Google answered: no OpenStreetMap credit
        dialog.locator(".place-pick", has_text="Castelo de São Jorge").click()
        assert dialog.get_by_label("Name").input_value() == "Castelo de São Jorge"
        dialog.get_by_label("Set time (optional)").fill("10:00")
        shot(page, "10-add-stop-search")
        dialog.get_by_role("button", name="Add stop").click()
        stop_card(page, "Castelo de São Jorge").wait_for()
        ui_add_stop(page, "Miradouro de Santa Luzia", duration=30, lat=38.7117, lng=-9.1301)
        ui_add_stop(page, "LX Factory", kind="activity", duration=90, lat=38.7036, lng=-9.1784)
        assert page.locator(".leg").count() == 2

        # Find places to eat: each suggestion applies on its own.
        panel = open_ai_help(page)
        panel.get_by_label("Meal").select_option("lunch")
        panel.get_by_role("button", name="Find places to eat").click()
        first = panel.locator(".suggestion").first
        first.wait_for()
        name = first.locator("h4").inner_text()
        assert "check" in first.inner_text().lower()  # every food suggestion says to check allergies/diets
        assert panel.locator(".osm-credit").count() == 0
        # An edited start its hours rule out is said before Add (on the periods the suggestion carries).
        start = first.get_by_label(f"Start time for {name}")
        planned = start.input_value()
        start.fill("04:00")
        first.get_by_text("Won't fit the opening hours; latest start").wait_for()
        start.fill(planned)
        first.get_by_text("Won't fit the opening hours").wait_for(state="detached")
        shot(page, "11-assistant-eat")
        first.get_by_role("button", name="Add to day").click()
        first.get_by_text("Added").wait_for()
        stop_card(page, name).wait_for()

        # Optimize: the first time asks for preferences (409), then previews and applies.
        panel.get_by_role("button", name="Optimize my day").click()
        panel.get_by_text("needs your preferences once").wait_for()
        panel.get_by_role("button", name="Open Preferences").click()
        panel.get_by_role("heading", name="Your defaults").wait_for()
        assert "only you can see" in panel.locator(".pref-section.private").inner_text()
        assert "every member of this trip" in panel.locator(".pref-section.shared").inner_text()
        shot(page, "12-preferences")
        # Saving the trip's shared choices is choosing too: Optimize works after it.
        panel.get_by_role("button", name="Save for everyone").click()
        page.get_by_text("Saved the trip's shared choices").wait_for()

        open_ai_help(page)
        panel.get_by_role("button", name="Optimize my day").click()
        preview = panel.locator(".draft")
        preview.wait_for()
        # The day changes before Apply: one clear message, and Apply can no longer be pressed.
        ui_add_stop(page, "Feira da Ladra", kind="activity", duration=45, lat=38.7150, lng=-9.1250)
        panel.get_by_role("button", name="Apply Plan").click()
        panel.locator(".draft .error-box").wait_for()
        assert panel.locator(".draft .error-box").all_inner_texts() == [
            "The day changed since this preview, so it cannot be applied. Optimize again for a fresh plan."]
        assert panel.get_by_role("button", name="Apply Plan").is_disabled()
        shot(page, "13a-optimize-stale")

        stops_before = page.locator(".timeline .stop").count()
        panel.get_by_role("button", name="Optimize my day").click()
        panel.locator(".draft .error-box").wait_for(state="detached")
        preview.wait_for()
        text = preview.inner_text().lower()
        assert "before" in text and "after" in text
        assert preview.locator(".ba-list li.added").count() == 1
        shot(page, "13-optimize-preview")
        panel.get_by_role("button", name="Apply Plan").click()
        panel.get_by_text("Plan applied").wait_for()
        page.wait_for_function(f"() => document.querySelectorAll('.timeline .stop').length === {stops_before + 1}")
        assert stop_times(page)["Castelo de São Jorge"][:1] == ("10:00",)  # the set time never moves
        shot(page, "14-optimize-applied")
        page.errors.check()


def test_agent_chat_turn_with_an_approval_adds_a_stop(settings, openai_standin):
    chat_rounds = []

    def responder(request):
        body = request.body or {}
        if body.get("stream") and body.get("tools"):
            chat_rounds.append(body)
            if len(chat_rounds) == 1:
                return tool_call("insert_stop", {
                    "dayId": day_id[0], "kind": "food", "name": "Pastéis de Belém", "durationMin": 45,
                    "lat": 38.6975, "lng": -9.2032, "note": "Custard tarts; check allergies with the bakery."})
            return Reply(output=[message_item("Done: Pastéis de Belém is on day 1.")])
        return quiet_responder(request)

    day_id: list[str] = []
    openai_standin.responder = responder
    with live(offline(ai_settings(settings, openai_standin))) as server, chromium() as browser:
        page = open_page(browser, server)
        ui_signup(page, "alice", "Alice")
        trip_id = ui_create_trip(page, "Belém day", start=soon(5), end=soon(5))
        day_id.append(page.locator(".day-view").get_attribute("data-day-id"))
        ui_add_stop(page, "Mosteiro dos Jerónimos", set_time="10:00", duration=90, lat=38.6979, lng=-9.2068)

        panel = open_chat(page)
        panel.get_by_label("Message", exact=True).fill("@agent add Pastéis de Belém after the monastery")
        assert "Goes to the AI" in panel.locator(".composer-hint").inner_text()
        panel.get_by_role("button", name="Send").click()

        card = panel.locator(".tool-card.state-approval-requested")
        card.wait_for()
        assert "Add “Pastéis de Belém” to day 1" in card.inner_text()
        assert stop_card(page, "Pastéis de Belém").count() == 0  # nothing written yet
        shot(page, "15-agent-approval")
        card.get_by_role("button", name="Approve").click()

        stop_card(page, "Pastéis de Belém").wait_for()
        panel.locator(".tool-card.state-output-available").wait_for()
        panel.locator(".msg.from-agent", has_text="Pastéis de Belém is on day 1").wait_for()
        assert len(chat_rounds) == 2
        # Once the page has read the timeline, the server's copies replace the streamed ones: no duplicates.
        timeline_caught_up(page, trip_id)
        assert panel.locator(".msg.from-agent", has_text="Pastéis de Belém is on day 1").count() == 1
        assert panel.locator(".msg.mine", has_text="@agent add Pastéis de Belém").count() == 1
        shot(page, "16-agent-applied")
        page.errors.check()


def test_suggestion_card_appears_and_approve_applies_it(settings, openai_standin):
    openai_standin.responder = proposing_responder
    with live(offline(ai_settings(settings, openai_standin))) as server, chromium() as browser:
        page = open_page(browser, server)
        ui_signup(page, "alice", "Alice")
        ui_create_trip(page, "Tight schedule", start=soon(3), end=soon(3))
        ui_add_stop(page, "Museu Nacional do Azulejo", set_time="10:00", duration=120, lat=38.7247, lng=-9.1135)
        # A second fixed appointment inside the first: the review flags it, the agent proposes a fix.
        ui_add_stop(page, "Oceanário de Lisboa", set_time="10:30", duration=90, lat=38.7635, lng=-9.0937)
        bar = page.locator("[data-testid=tray-bar]")
        bar.wait_for()  # after the debounce (1.5 s), the model call and the page's read
        assert bar.inner_text().strip() == "1 suggestion from the AI"
        bar.focus()
        page.keyboard.press("Enter")                  # the keyboard way, from here to the applied change
        card = page.locator(".sugg-card")
        card.wait_for()
        where = card.locator(".sugg-where").inner_text()
        assert where.startswith("Day 1 · ")   # which day (and stop) it is about
        shot(page, "17-suggestion-card")
        ocean = page.locator(".stop").filter(has=page.locator(".stop-name", has_text="Oceanário de Lisboa"))
        before = ocean.locator(".t-start").inner_text()
        approve = card.get_by_role("button", name=f"Approve the suggestion for {where}", exact=True)
        for _ in range(3):                            # the place's button, then Approve
            if approve.evaluate("(b) => b === document.activeElement"):
                break
            page.keyboard.press("Tab")
        assert approve.evaluate("(b) => b === document.activeElement"), "Approve is not next in the tab order"
        page.keyboard.press("Enter")
        card.wait_for(state="detached")
        bar.wait_for(state="hidden")
        # Focus goes on to the day's heading below the tray, not back to the page's start.
        focused = page.evaluate("() => document.activeElement.outerHTML.slice(0, 120)")
        assert focused.startswith('<h2 class="day-heading"'), f"focus went to {focused}"
        page.wait_for_function(
            "(before) => { const s = [...document.querySelectorAll('.stop')]"
            ".find(x => x.querySelector('.stop-name').textContent.includes('Oceanário'));"
            " return s && s.querySelector('.t-start').textContent !== before; }", arg=before)
        # The header was rebuilt with the day's new times: the heading kept the keyboard.
        assert page.evaluate("() => document.activeElement.matches('.day-heading')")
        page.errors.check()


def test_a_review_recommends_a_fix_that_applies_once(settings, openai_standin):
    openai_standin.responder = recommending_responder
    with live(offline(ai_settings(settings, openai_standin))) as server, chromium() as browser:
        page = open_page(browser, server)
        ui_signup(page, "alice", "Alice")
        ui_create_trip(page, "Clash", start=soon(3), end=soon(3))
        ui_add_stop(page, "Museu Nacional do Azulejo", set_time="10:00", duration=120, lat=38.7247, lng=-9.1135)
        ui_add_stop(page, "Oceanário de Lisboa", set_time="10:30", duration=90, lat=38.7635, lng=-9.0937)
        panel = open_ai_help(page)
        watch_live_regions(page)
        panel.get_by_role("button", name="Review this day").click()
        apply = panel.locator(".copilot-log .btn-fix")
        apply.wait_for()
        assert apply.inner_text().startswith("Apply: ")
        apply.focus()
        page.keyboard.press("Enter")                    # by keyboard: the keyboard stays on what it did
        applied = panel.locator(".copilot-log .pill", has_text="Applied")
        applied.wait_for()
        assert applied.evaluate("(p) => p === document.activeElement"), "focus was lost with the button"
        assert nested_live_regions(page) == []          # the log reads its progress line, once
        assert panel.locator(".copilot-log .btn-fix").count() == 0  # nothing left to press twice
        # Who speaks, for a screen reader (the bubbles' sides say it only to the eye).
        assert panel.locator(".copilot-log .visually-hidden").all_inner_texts() == ["You asked:", "Copilot:"]
        page.locator(".stop[data-pinned=false]", has_text="Oceanário de Lisboa").wait_for()
        shot(page, "18b-review-fix-applied")
        page.errors.check()


def test_a_refused_first_question_leaves_no_invitation_to_ask_above_it(settings, openai_standin):
    """The member's AI share is spent: the first question about the day is
    refused. The log shows the question and why, not the empty log's "ask
    anything about this day" above them."""
    from browser.harness import api, api_trip, api_user

    openai_standin.responder = quiet_responder
    one_call = settings.with_(ai_daily_limit=4, ai_user_daily_share=0.25)
    with live(offline(ai_settings(one_call, openai_standin))) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        trip = api_trip(alice)
        api(alice, "POST", f"/api/trips/{trip['id']}/days/{trip['days'][0]['id']}/copilot",
            {"question": "Is the day realistic?", "history": []})   # her one call today
        page = open_page(browser, server, viewport={"width": 375, "height": 812}, phone=True, session=alice.token)
        page.goto(f"/#/trips/{trip['id']}")
        panel = open_ai_help(page)
        assert "ask anything about this day" in panel.locator(".copilot-log").inner_text()
        watch_live_regions(page)
        panel.get_by_role("button", name="Review this day").click()
        panel.locator(".copilot-log .error-box", has_text="You have used your share").wait_for()
        assert nested_live_regions(page) == []          # the log reads its progress line and the refusal, once
        shot(page, "review-share-spent-375")
        assert "ask anything about this day" not in panel.locator(".copilot-log").inner_text()
        page.errors.check()


def test_a_failed_question_stays_with_its_day_and_goes_when_asked_again(settings, openai_standin):
    """A question refused (her AI share is spent) showed under whichever
    day was on screen when the refusal came, vanished once she looked at
    another day and back, and its words went back to the other day's
    composer. It stays in its day's log with the reason, its words in that
    day's composer, until she asks there again."""
    from browser.harness import api, api_trip, api_user

    openai_standin.responder = quiet_responder
    one_call = settings.with_(ai_daily_limit=4, ai_user_daily_share=0.25)
    with live(offline(ai_settings(one_call, openai_standin))) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        trip = api_trip(alice, days=2)
        api(alice, "POST", f"/api/trips/{trip['id']}/days/{trip['days'][0]['id']}/copilot",
            {"question": "Is the day realistic?", "history": []})   # her one call today
        page = open_page(browser, server, viewport={"width": 1280, "height": 800}, session=alice.token)
        page.goto(f"/#/trips/{trip['id']}")
        panel = open_ai_help(page)
        composer = panel.get_by_label("Your question about this day")
        composer.fill("Can we fit in a museum?")
        panel.get_by_role("button", name="Ask").click()
        log = panel.locator(".copilot-log")
        log.locator(".error-box", has_text="You have used your share").wait_for()
        assert composer.input_value() == "Can we fit in a museum?"
        page.locator(".day-btn").nth(1).click()
        log.locator(".copilot-empty").wait_for()
        assert log.locator(".error-box").count() == 0 and composer.input_value() == ""
        page.locator(".day-btn").nth(0).click()
        log.locator(".error-box", has_text="You have used your share").wait_for()
        assert "Can we fit in a museum?" in log.inner_text() and "ask anything" not in log.inner_text()
        assert composer.input_value() == "Can we fit in a museum?"
        assert log.locator(".visually-hidden").all_inner_texts() == ["You asked:"]
        shot(page, "review-failed-question-kept-1280")
        panel.get_by_role("button", name="Ask").click()   # asked again: refused again, shown once
        page.wait_for_function("() => document.querySelectorAll('.copilot-log .error-box').length === 1 && "
                               "!document.querySelector('.copilot-log .progress')")
        assert log.inner_text().count("Can we fit in a museum?") == 1
        page.errors.check()


def test_a_copilot_answer_links_nowhere_and_another_day_reads_nothing_again(settings, openai_standin):
    """The model's words are not the server's facts: a Markdown link in an
    answer (a booking page it made up, or one a note talked it into) showed
    as a link whose words hid where it went. It shows as words with the
    address beside them, and no image of another site is fetched. Looking at
    another day and back reads nothing out again: the log was the live
    region emptied and filled, so every earlier answer was read once more."""
    from browser.harness import api_trip, api_user

    def answering(request) -> Reply:
        name = (((request.body or {}).get("text") or {}).get("format") or {}).get("name")
        if name != "copilot_answer":
            return quiet_responder(request)
        return Reply(output=[message_item(json.dumps({"recommendedFixIds": [], "answer":
            "[Book your tickets here](https://tickets.example.net/pay) before 10:00. "
            "![map](https://tickets.example.net/map.png) **Go early.**"}))])

    openai_standin.responder = answering
    with live(offline(ai_settings(settings, openai_standin))) as server, chromium() as browser:
        alice = api_user(server, "alice", "Alice")
        trip = api_trip(alice, days=2)
        page = open_page(browser, server, viewport={"width": 1280, "height": 800}, session=alice.token)
        page.goto(f"/#/trips/{trip['id']}")
        panel = open_ai_help(page)
        log = panel.locator(".copilot-log")
        panel.get_by_label("Your question about this day").fill("Do we need tickets?")
        panel.get_by_role("button", name="Ask").click()
        answer = log.locator(".bubble.theirs")
        answer.wait_for()
        assert answer.locator("a, img").count() == 0, answer.inner_html()
        words = answer.inner_text()
        assert "Book your tickets here (https://tickets.example.net/pay) before 10:00." in words
        assert "map (https://tickets.example.net/map.png)" in words
        assert answer.locator("strong", has_text="Go early.").count() == 1     # the rest of its Markdown stays
        watch_announcements(page, within=".copilot-log")
        page.locator(".day-btn").nth(1).click()
        log.locator(".copilot-empty").wait_for()
        page.locator(".day-btn").nth(0).click()
        log.locator(".bubble.theirs").wait_for()
        assert log.locator(".bubble").count() == 2 and announced(page) == []
        page.errors.check()
