"""The card renderer (public/panels/cards.js) in the browser: the dev gallery
draws every catalog component at desktop and phone width, strings stay text,
a hostile spec that skipped the server draws nothing dangerous, and pressing a
card's buttons only calls the two callbacks (no request leaves the page)."""

from __future__ import annotations

import struct
import zlib

import pytest

from app.agent.cards import CATALOG
from browser.harness import chromium, live, nothing_else_sent, offline, open_page, shot

pytestmark = pytest.mark.browser


def png(width: int = 64, height: int = 40) -> bytes:
    """A small solid PNG standing in for Google's street-view image."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + bytes((96, 140, 170)) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def open_gallery(browser, server, *, phone: bool):
    page = open_page(browser, server, phone=phone, poll_ms=None)
    if not phone:
        page.set_viewport_size({"width": 1366, "height": 850})
    page.route("**/api/trips/*/street-view/*", lambda route: route.fulfill(status=200, content_type="image/png",
                                                                          body=png()))
    page.goto("/cards-gallery.html")
    page.locator("body[data-ready=true]").wait_for()
    image = page.locator(".gc-street-img")
    image.scroll_into_view_if_needed()  # it loads lazily
    image.evaluate("img => img.complete || new Promise((resolve) => img.addEventListener('load', resolve))")
    page.evaluate("window.scrollTo(0, 0)")
    return page


def full_shot(page, name: str) -> None:
    shot(page, name)
    shot(page, f"{name}-full", full_page=True)


def test_gallery_draws_every_component_and_presses_only_call_back(settings):
    with live(offline(settings)) as server, chromium() as browser:
        page = open_gallery(browser, server, phone=False)
        for name in CATALOG:
            assert page.locator(f".gen-card [data-card-type={name}]").count() >= 1, name
        street_view = page.locator("[data-card-type=StreetViewImage] img")
        assert street_view.get_attribute("alt") == "Street view of Torvehallerne"
        assert page.locator(".gc-img-missing").count() == 0

        # Accessible structure: titles are headings, buttons are buttons, money is a table.
        page.get_by_role("heading", name="Two easy days in Lisbon", level=3).wait_for()
        page.get_by_role("heading", name="Castelo de São Jorge", level=4).wait_for()
        assert page.get_by_role("row", name="Total 49.20 EUR").count() == 1
        assert page.locator(".gen-card button").count() == page.locator("[data-card-type=ActionButton]").count() == 4

        # A script in a prop is shown as text: no element, nothing ran.
        hostile = page.locator(".gallery-item", has_text="Text stays text")
        assert "<script>window.cardsPwned = true</script>" in hostile.inner_text()
        assert hostile.locator("script, .gen-card img").count() == 0
        assert page.evaluate("window.cardsPwned") is None
        full_shot(page, "30-cards-desktop")

        # Presses call the callbacks and nothing else.
        requests = []
        page.on("request", lambda request: requests.append(request.url))
        page.get_by_role("button", name="Add a rainy-day option").click()
        page.get_by_role("button", name="Show this stop").click()
        page.get_by_role("button", name="Show day 1").click()
        assert page.evaluate("window.cardEvents") == [
            {"kind": "followUp", "text": "Add a rainy-day option to day 2"},
            {"kind": "focus", "dayId": "day-a", "stopId": "stop-castelo"},
            {"kind": "focus", "dayId": "day-a", "stopId": None},
        ]
        assert nothing_else_sent(page, requests) == []
        assert page.url.endswith("/cards-gallery.html")
        page.errors.check()

        phone = open_gallery(browser, server, phone=True)
        assert phone.locator(".gen-card [data-card-type]").count() == page.locator(".gen-card [data-card-type]").count()
        widths = phone.evaluate("[...document.querySelectorAll('.gen-card')].map(c => c.scrollWidth - c.clientWidth)")
        assert widths and max(widths) == 0  # nothing overflows sideways at 390 px
        full_shot(phone, "31-cards-phone")
        phone.errors.check()


HOSTILE = {
    "root": "r",
    "elements": {
        "r": {"type": "TripPlanCard", "props": {"title": "T"},
              "children": ["frame", "proto", "ctor", "img", "link", "chain", "text", "r", "missing", "day"]},
        "frame": {"type": "IFrame", "props": {"src": "https://evil.example"}, "children": []},
        "proto": {"type": "__proto__", "props": {}, "children": []},
        "ctor": {"type": "constructor", "props": {}, "children": []},
        "img": {"type": "StreetViewImage", "props": {"imageUrl": "https://evil.example/x.jpg", "placeName": "x"}},
        "link": {"type": "ActionButton", "props": {"label": "Open", "action": {"kind": "url", "url": "https://e"}}},
        "chain": {"type": "ActionButton", "props": {"label": "Chain", "action": {"kind": "followUp"}}},
        "text": {"type": "Text", "props": {"text": "<b>bold</b> <a href='javascript:alert(1)'>x</a>"}},
        "day": {"type": "DaySummary", "props": {"dayId": "d", "date": "2026-13-45", "title": "No such date",
                                                "stops": ["ok", {"$state": "/x"}, 7]}},
    },
}


def test_renderer_draws_nothing_outside_the_catalog_even_without_the_server(settings):
    with live(offline(settings)) as server, chromium() as browser:
        page = open_page(browser, server, poll_ms=None)
        page.goto("/cards-gallery.html")
        page.locator("body[data-ready=true]").wait_for()
        drawn = page.evaluate("""async (spec) => {
            const { renderSpec } = await import("/panels/cards.js");
            const node = renderSpec(spec, {});
            const cycle = renderSpec({root: "a",
                                      elements: {a: {type: "TripPlanCard", props: {title: "A"}, children: ["a"]}}});
            return {
              types: [...node.querySelectorAll("[data-card-type]")].map((e) => e.dataset.cardType),
              tags: [...node.querySelectorAll("*")].map((e) => e.tagName.toLowerCase()),
              text: node.textContent,
              cycle: cycle.querySelectorAll("[data-card-type]").length,
              nothing: renderSpec({root: "x", elements: {x: {type: "Marquee"}}}),
              broken: renderSpec("<b>x</b>"),
            };
        }""", HOSTILE)
        assert drawn["types"] == ["TripPlanCard", "Text", "DaySummary"]
        assert not {"iframe", "img", "a", "b", "script", "button"} & set(drawn["tags"])
        assert "<b>bold</b> <a href='javascript:alert(1)'>x</a>" in drawn["text"]
        assert drawn["text"].endswith("No such dateok")  # a bad date and non-string lines are left out
        assert drawn["cycle"] == 1 and drawn["nothing"] is None and drawn["broken"] is None
        page.errors.check()
