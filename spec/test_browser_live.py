"""public/live.js in Chromium against the real app: events arrive, presence
is sent, a removed member's module stops, and a stream that keeps failing
falls back to polling by itself. (The planner page wires the module in; this
drives the module alone on a page of our origin.)"""

from __future__ import annotations

import httpx
import pytest

from browser.harness import PASSWORD, chromium, live, open_page

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


def got(page, kind: str, check: str = "true", timeout_ms: int = 2000):
    """Wait until the page received a `kind` event whose `data` passes `check` (JS)."""
    page.wait_for_function(f"() => window.got.some(([k, data]) => k === {kind!r} && ({check}))",
                           timeout=timeout_ms)
    return page.evaluate(f"() => window.got.filter(([k, data]) => k === {kind!r} && ({check})).at(-1)[1]")


def new_trip(page, days: int) -> dict:
    r = page.request.post("/api/trips", data={"title": "Lisbon", "startDate": "2026-12-10", "days": days})
    assert r.status == 201
    return r.json()["data"]


def signed_up(client: httpx.Client, name: str) -> httpx.Client:
    assert client.post("/api/auth/signup", json={"username": name, "password": PASSWORD}).status_code == 201
    return client


def test_live_module_delivers_events_sends_presence_and_stops_when_removed(settings):
    with live(settings) as server, chromium() as browser, httpx.Client(base_url=server.url, timeout=10) as bob:
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

        version = bob.post(f"/api/trips/{t}/ops/update_day", json={"dayId": day2, "title": "Sintra"}) \
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
        page.wait_for_timeout(500)  # ten retry intervals
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
        page.wait_for_function("() => window.fellBack === 1", timeout=5000)
        page.wait_for_timeout(300)
        assert page.evaluate("() => [window.fellBack, window.got.length, document.body.innerText.includes('429')]") \
            == [1, 0, False]
        page.errors.check()
