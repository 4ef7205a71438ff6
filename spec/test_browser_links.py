"""The page draws only this trip's uploads as images (issue 22, failure 8).

A note saved before the server checked links (or text the server cannot
refuse, such as the agent's words) may hold `![a](/api/uploads/../trips/
<id>/live?1)`: the browser resolves it to the trip's live stream and opened
it for every viewer. The renderer (public/links.js) resolves and normalises
each address first: such an image is shown as its words, and the browser
asks for nothing."""

from __future__ import annotations

import sqlite3

import pytest
from browser.harness import add_stops, api_trip, api_user, chromium, live, open_page, stop_card
from helpers import png_bytes

pytestmark = pytest.mark.browser

PNG = png_bytes()


def test_a_note_that_climbs_out_of_the_uploads_is_shown_as_words_and_fetches_nothing(settings):
    with live(settings) as server:
        alice = api_user(server, "alice", "Alice")
        trip = api_trip(alice)
        t = trip["id"]
        photo = alice.post(f"/api/trips/{t}/media", files={"file": ("castle.png", PNG, "image/png")}).json()["data"]
        [castle, museum] = add_stops(alice, trip, {"name": "Castle", "note": f"![castle]({photo['url']})"},
                                     {"name": "Museum"})
        token = alice.token
    # Written behind the server's back (as before the check existed), then served by a fresh start.
    hostile = (f"Tickets ![a](/api/uploads/../trips/{t}/live?1) and ![b](/api/uploads/%2e%2e/trips/{t}/live) "
               f"[me](/api/auth/me) [site](https://www.museu.example/)")
    with sqlite3.connect(settings.db_path) as conn:
        conn.execute("UPDATE stops SET note = ? WHERE id = ?", (hostile, museum))
    with live(settings) as server, chromium() as browser:
        page = open_page(browser, server, session=token)
        images: list[str] = []
        page.on("request", lambda r: images.append(r.url) if r.resource_type == "image" else None)
        page.goto(f"/#/trips/{t}")
        museum_card = stop_card(page, "Museum")
        museum_card.get_by_text("Tickets").wait_for()
        stop_card(page, "Castle").locator("img.note-img[alt='castle']").wait_for()
        assert museum_card.locator("img").count() == 0
        assert museum_card.get_by_role("link", name="site").get_attribute("href") == "https://www.museu.example/"
        assert museum_card.get_by_role("link", name="me").count() == 0
        assert "Tickets a and b me site" in " ".join(museum_card.inner_text().split())
        # The only image the page asked for is this trip's upload.
        assert [u for u in images if "/api/" in u] == [f"{server.url}{photo['url']}"], images
        page.errors.check()
