"""Browser-test harness: Debian's Chromium driven by Playwright's sync API
against the real app on a loopback port.

`playwright install` cannot download browsers here, so tests launch Debian's
build by path: its headless shell (package chromium-headless-shell, the old
headless mode that Playwright itself runs headless tests in: the same Blink,
without the desktop browser around it, about a third less CPU per test), or
/usr/bin/chromium when the shell is not installed; WAYLINE_CHROMIUM names
another. A missing browser is a FAILURE with a clear message, never a skip:
these tests are part of the suite's contract.
"""

from __future__ import annotations

import os
import re
import struct
import threading
import time
import zlib
from contextlib import contextmanager
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from browser.page_state import console_tail, note_pages
from helpers import LiveServer
from app.settings import Settings
from app.tls import tls_context
from app.web.application import create_app

HEADLESS_SHELL = "/usr/bin/chromium-headless-shell"
CHROMIUM = os.environ.get("WAYLINE_CHROMIUM") or (HEADLESS_SHELL if os.path.isfile(HEADLESS_SHELL)
                                                  else "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
SCREENSHOTS = Path(__file__).resolve().parent.parent / "screenshots"
DESKTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}
PASSWORD = "correct horse"
# Test pages poll quickly; the product default (12 s) is checked in test_browser_core.
FAST_POLL_MS = 1000
# How long any one wait may take before the test fails. Every wait is for
# something the page does (an element shown, an attribute it sets when a
# region has rendered or a read finished, a request answered), never for a
# stretch of time, so this only bounds a page that never gets there. It is
# generous on purpose: alone a wait takes well under a second, but a two-core
# machine running two suites and their Chromiums can be ten times slower.
# (How fast changes reach a page is measured by bench/live.py, not here.)
PAGE_DEADLINE_MS = 60_000

# Resource errors (a 404 from an optional route, a 409 the page explains) are
# the page's business and are collected apart, for a test that asks
# (`open_page(..., failed_requests=True)`: `page.failed_requests`); uncaught
# exceptions, console errors and CSP violations fail the test.
IGNORED_CONSOLE = re.compile(r"Failed to load resource|the server responded with a status")

# The page's Content-Security-Policy is the server's own (app/web/csp.py);
# a violation is a console error and fails the test. Nothing is intercepted
# on the way: Playwright's routing turns the browser's HTTP cache off and
# sends every request through the driver and this process (2.6x the CPU of
# a reload), so the harness routes nothing by default.
# Tiles never come from the network in tests: the server's tile URL points
# at a loopback stand-in that answers a plain land-coloured PNG for any tile
# (`tiles="fail"` makes a page's tile requests fail, to see the fallback).
# Reads the page's IndexedDB (public/offline/kept.js) without ever creating
# it: `use(db, done)` calls `done(value)`; `none` when there is no database
# yet. A database this made first would have none of the page's stores, and
# the page would keep nothing for the rest of the test (one did, racing the
# page's own first open: the read threw and the test waited out its timeout).
KEPT_DB = """(use, none) => new Promise((resolve) => {
  const open = indexedDB.open("wayline");
  open.onupgradeneeded = () => open.transaction.abort();
  open.onerror = () => resolve(none);
  open.onsuccess = () => {
    const db = open.result;
    use(db, (value) => { db.close(); resolve(value); });
  };
})"""
# How many rows a store of it holds: 0 before the page made the store, -1 with no database.
KEPT_ROWS = f"""([store]) => ({KEPT_DB})((db, done) => {{
  if (!db.objectStoreNames.contains(store)) return done(0);
  const req = db.transaction(store).objectStore(store).count();
  req.onsuccess = () => done(req.result);
}}, -1)"""
# Whether the page keeps its last answer of a read (its URL) for offline use.
KEPT_READ = f"""([url]) => ({KEPT_DB})((db, done) => {{
  if (!db.objectStoreNames.contains("reads")) return done(false);
  const req = db.transaction("reads").objectStore("reads").get(url);
  req.onsuccess = () => done(Boolean(req.result));
}}, false)"""


def png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\0" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


BLANK_TILE = png(256, 256, (236, 240, 234))


class _TileHandler(BaseHTTPRequestHandler):
    # Kept-alive connections: a page asks for about nine tiles at once, and
    # HTTP/1.0 would open a connection (and a thread here) for each.
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", str(len(BLANK_TILE)))
        self.send_header("Cache-Control", "max-age=86400")
        self.end_headers()
        self.wfile.write(BLANK_TILE)

    def log_message(self, *args) -> None:
        pass


def tile_host() -> str:
    """The origin of the process's tile stand-in, started on first use."""
    if "tiles" not in _shared:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _TileHandler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        _shared["tiles"] = f"http://127.0.0.1:{server.server_address[1]}"
    return _shared["tiles"]


def require_chromium() -> None:
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(
            f"Chromium is missing at {CHROMIUM}. The browser tests need Debian's Chromium: "
            "run `apt-get install -y chromium-headless-shell` (scripts/test does this when run as root).",
            pytrace=False,
        )
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.fail("Playwright is not installed: `pip install -e '.[test]'`.", pytrace=False)


# One Playwright driver and one Chromium per test process, started by its
# first browser test and stopped at the end of the session (spec/conftest.py,
# which also lets the other tests run their own asyncio loops beside it):
# starting both costs about a CPU-second, and the suite has about 70 browser
# tests. Each test still gets its own contexts (cookies, storage, service
# workers, cache), and whatever it leaves open is closed after it.
_shared: dict = {}


def _playwright():
    require_chromium()
    if "playwright" not in _shared:
        from playwright.sync_api import sync_playwright

        _shared["playwright"] = sync_playwright().start()
    return _shared["playwright"]


def _browser():
    browser = _shared.get("browser")
    if browser is None or not browser.is_connected():   # the first test, or Chromium went away
        browser = _shared["browser"] = _playwright().chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    return browser


def stop_shared_browser() -> None:
    """The end of the session: the worker's Chromium and driver go."""
    browser, driver = _shared.pop("browser", None), _shared.pop("playwright", None)
    if browser is not None and browser.is_connected():
        browser.close()
    if driver is not None:
        driver.stop()


@contextmanager
def driver_set_aside():
    """Runs the block with the driver's loop not marked as running on this
    thread (for a test that runs its own asyncio loop), then marks it again.
    Nothing talks to the driver meanwhile: no page is open between tests."""
    import asyncio

    marked = asyncio._get_running_loop()
    if marked is None:
        yield
        return
    asyncio._set_running_loop(None)
    try:
        yield
    finally:
        asyncio._set_running_loop(marked)


def _close_all(contexts) -> None:
    from playwright.sync_api import Error

    for context in contexts:
        try:
            context.close()
        except Error:
            pass   # already gone with its browser


@contextmanager
def chromium():
    """The process's headless Chromium; the contexts opened in the block are closed after it."""
    browser = _browser()
    before = set(browser.contexts)
    try:
        yield browser
    except BaseException as exc:   # what the pages showed goes with the failure (browser/page_state.py)
        if browser.is_connected():
            note_pages(exc, [c for c in browser.contexts if c not in before])
        raise
    finally:
        if browser.is_connected():
            _close_all([c for c in browser.contexts if c not in before])


@contextmanager
def live(settings, **overrides):
    if settings.map_tiles_url == Settings.map_tiles_url:   # OSM's real tiles: the stand-in's instead
        settings = replace(settings, map_tiles_url=tile_host() + "/{z}/{x}/{y}.png")
    with LiveServer(create_app(settings, **overrides)) as server:
        server.clients = []  # api_user's HTTP clients, closed with the server
        try:
            yield server
        finally:
            for client in server.clients:
                client.close()


class PageErrors(list):
    def check(self) -> None:
        assert not self, "the page raised errors:\n" + "\n".join(self)


def _context_options(server, phone: bool, viewport: dict | None) -> dict:
    return {"base_url": server.url, "viewport": viewport or (PHONE if phone else DESKTOP), "device_scale_factor": 1,
            "is_mobile": phone, "has_touch": phone, "locale": "en-GB", "timezone_id": "Europe/Lisbon"}


def open_page(browser, server, *, phone: bool = False, poll_ms: int | None = FAST_POLL_MS, storage: dict | None = None,
              viewport: dict | None = None, tiles: str = "blank", session: str | None = None,
              service_workers: str = "block", failed_requests: bool = False):
    """A fresh browser context (its own cookies) and page on the live server.

    `tiles`: "blank" (a stand-in PNG) or "fail" (tile requests fail).
    `session`: a session token (from `api_user`) to start signed in.
    `service_workers`: "block" by default (the offline tests, which need the
    page's service worker, pass "allow" or use `open_installed`).
    `failed_requests`: collect every answer of 400 or more the page gets in
    `page.failed_requests` ("404 GET /api/…"). Only when asked: listening
    has the driver hand every response of the page to this process (about
    0.07 CPU-seconds a page load); unasked, `page.failed_requests` is None."""
    context = browser.new_context(**_context_options(server, phone, viewport), service_workers=service_workers)
    return _prepare(context, context.new_page(), server, poll_ms=poll_ms, storage=storage, tiles=tiles, session=session,
                    failed_requests=failed_requests)


@contextmanager
def playwright_driver():
    """Playwright itself, for tests that launch browsers with a profile on disk
    (`open_installed`); the ones launched in the block are closed after it."""
    p = _playwright()
    _shared["installed"] = []
    try:
        yield p
    except BaseException as exc:
        note_pages(exc, _shared["installed"])
        raise
    finally:
        _close_all(_shared.pop("installed"))


def open_installed(p, profile: Path, server, *, offline: bool = False, phone: bool = False,
                   viewport: dict | None = None, session: str | None = None, poll_ms: int | None = FAST_POLL_MS):
    """A browser whose profile lives in `profile`: what the page installed (its
    service worker, caches, IndexedDB) survives closing it, as on a phone.
    `offline=True` starts it with no network: a cold start offline.
    Close it with `page.context.close()`."""
    context = p.chromium.launch_persistent_context(
        str(profile), executable_path=CHROMIUM, args=CHROMIUM_ARGS, offline=offline, service_workers="allow",
        **_context_options(server, phone, viewport))
    _shared.setdefault("installed", []).append(context)
    page = context.pages[0] if context.pages else context.new_page()
    return _prepare(context, page, server, poll_ms=poll_ms, storage=None, tiles="blank", session=session,
                    failed_requests=False)


def _prepare(context, page, server, *, poll_ms, storage, tiles, session, failed_requests: bool):
    if session:   # it lasts, as the server's does: a browser started again is still signed in
        context.add_cookies([{"name": "wayline_session", "value": session, "url": server.url,
                              "expires": time.time() + 30 * 86400}])
    if tiles == "fail":
        context.route(f"{tile_host()}/**", lambda route: route.abort())
    script = ""
    if poll_ms is not None:
        script += f"localStorage.setItem('wayline.pollMs', '{int(poll_ms)}');"
    for key, value in (storage or {}).items():
        script += f"localStorage.setItem({key!r}, {value!r});"
    if script:
        context.add_init_script(script)
    context.set_default_timeout(PAGE_DEADLINE_MS)
    errors = PageErrors()
    tail = page.console_tail = console_tail()   # every level, for a failure's notes

    def console(msg) -> None:
        tail.append(f"{msg.type}: {msg.text}")
        if msg.type == "error" and not IGNORED_CONSOLE.search(msg.text):
            errors.append(f"console: {msg.text}")

    page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
    page.on("console", console)
    page.errors = errors
    page.failed_requests = None
    if failed_requests:
        page.failed_requests = []
        page.on("response", lambda r: page.failed_requests.append(
            f"{r.status} {r.request.method} {urlsplit(r.url).path}") if r.status >= 400 else None)
    page.wait_for_function = _polling_wait(page)
    return page


# A predicate given as a function ("() => …", "(arg) => …", "async …",
# "function …"); anything else is an expression, checked as `() => (…)`.
_FUNCTION = re.compile(r"^\s*(async\s+)?(function\b|\([^()]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)")
# Checks the predicate inside the page until it is truthy or `ms` pass:
# one call through the driver per wait instead of two per check.
_POLL = """async ([arg, ms, every]) => {
  const check = (CHECK);
  const deadline = performance.now() + ms;
  for (;;) {
    const value = await check(arg);
    if (value) return { value };
    if (performance.now() >= deadline) return null;
    await new Promise((done) => setTimeout(done, every));
  }
}"""


_NAVIGATED = re.compile(r"context was destroyed|Cannot find context")


def _polling_wait(page):
    """page.wait_for_function with the same contract, CSP-safe: Playwright
    compiles its predicate with `new Function` inside the page, which the
    pages' Content-Security-Policy (no 'unsafe-eval') refuses; page.evaluate
    goes through the DevTools protocol, which the policy does not govern.
    The predicate is checked in the page (every `polling` ms, 50 by
    default); a navigation meanwhile starts the check again in the new
    document, within the same deadline."""
    from playwright.sync_api import Error

    def wait(expression: str, *, arg=None, polling=None, timeout=None):
        seconds = (PAGE_DEADLINE_MS if timeout is None else timeout) / 1000
        every = polling if isinstance(polling, (int, float)) else 50
        deadline = time.monotonic() + seconds
        script = _POLL.replace("CHECK", expression if _FUNCTION.match(expression) else f"() => ({expression})")
        while True:
            left_ms = max(0.0, (deadline - time.monotonic()) * 1000)
            try:
                found = page.evaluate(script, [arg, left_ms, every])
            except Error as exc:
                if not _NAVIGATED.search(str(exc)) or time.monotonic() > deadline:
                    raise
                continue   # the page navigated: check in the new document
            if found is None:
                raise AssertionError(f"the page did not get there in {seconds:g} s: {expression} (arg={arg!r})")
            return found["value"]

    return wait


def api_user(server, username: str, display_name: str | None = None) -> httpx.Client:
    """A member signed up over HTTP (quicker than the form): a client acting as
    them, with `.user` and `.token` (start a browser signed in with it)."""
    client = httpx.Client(base_url=server.url, timeout=PAGE_DEADLINE_MS / 1000, verify=tls_context())
    server.clients.append(client)
    body = {"username": username, "password": PASSWORD, **({"displayName": display_name} if display_name else {})}
    r = client.post("/api/auth/signup", json=body)
    assert r.status_code == 201, r.text
    client.user = r.json()["data"]["user"]
    client.token = r.cookies.get("wayline_session")
    return client


def api(client: httpx.Client, method: str, path: str, body: dict | None = None):
    r = client.request(method, path, json={} if body is None and method != "GET" else body)
    assert r.status_code < 300, f"{method} {path}: {r.status_code} {r.text}"
    return r.json()["data"]


def api_trip(owner: httpx.Client, *members: httpx.Client, title: str = "Lisbon with friends", start: str = "2026-12-14",
             days: int = 2, currency: str = "EUR") -> dict:
    """A trip owned by `owner` that `members` joined as editors."""
    trip = api(owner, "POST", "/api/trips", {
        "title": title, "startDate": start, "days": days, "timezone": "Europe/Lisbon", "currency": currency,
        "destination": {"name": "Lisbon", "lat": 38.7223, "lng": -9.1393}})
    for m in members:
        invite = api(owner, "POST", f"/api/trips/{trip['id']}/invites", {"role": "editor"})
        api(m, "POST", f"/api/invites/{invite['token']}/accept")
    return trip


def api_op(client: httpx.Client, trip_id: str, op_name: str, **args) -> dict:
    """One op, answered with the whole trip (`trip`, ?full=1)."""
    return api(client, "POST", f"/api/trips/{trip_id}/ops/{op_name}?full=1", args)


def add_stops(client: httpx.Client, trip: dict, *stops: dict, day: int = 0) -> list[str]:
    """Adds stops to a day over HTTP; their ids, in order."""
    day_id = trip["days"][day]["id"]
    ids = []
    for stop in stops:
        res = api_op(client, trip["id"], "insert_stop", dayId=day_id, **stop)
        ids.append(res["trip"]["days"][day]["stops"][-1]["id"])
    return ids


def names_on_screen(page) -> list[str]:
    return page.locator(".timeline .stop .stop-name").all_inner_texts()


def no_sideways_scroll(page) -> int:
    """How many pixels the page is wider than the screen (0 is right). Measured
    against the viewport asked for: a phone browser widens innerWidth to fit
    content that overflows."""
    width = page.viewport_size["width"]
    return page.evaluate("(width) => Math.max(0, document.documentElement.scrollWidth - width,"
                         " window.innerWidth - width)", width)


def settled(page) -> None:
    """Waits until the page's fonts are in and no transition or animation is
    under way (a spinner's endless one aside): what a screenshot or a
    measurement of the layout should see."""
    page.wait_for_function("""() => document.fonts.status === 'loaded' && document.getAnimations().every(
        (a) => a.playState !== 'running' || a.effect.getComputedTiming().endTime === Infinity)""")


def shot(page, name: str, *, full_page: bool = False) -> Path:
    """spec/screenshots/<name>.png, to look at, when WAYLINE_SCREENSHOTS=1
    (`WAYLINE_SCREENSHOTS=1 scripts/test spec/test_browser_core.py`). They
    assert nothing, and the suite's 112 cost about 30 CPU-seconds (0.28 a
    capture, PNG encoding in Chromium and the bytes through the driver), so a
    plain run only waits for the page to settle, as a capture would."""
    path = SCREENSHOTS / f"{name}.png"
    settled(page)
    if os.environ.get("WAYLINE_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(path), full_page=full_page)
    return path


def page_timers_pass(page, ms: int) -> None:
    """Lets the page's own clock run `ms`: every timer the page set to fire
    within that time (a retry, a debounce) has fired when this returns, however
    slowly the machine runs. For checks that something does NOT happen."""
    page.evaluate("(ms) => new Promise((done) => setTimeout(done, ms))", ms)


def nothing_else_sent(page, sent: list[str]) -> list[str]:
    """What the page sent before now, as recorded by a "request" listener
    into `sent`: the page fetches a marker, and requests are reported in the
    order the page made them, so once the marker is seen every earlier request
    is in `sent`. Returns `sent` without the marker."""
    marker = f"/nothing-else-sent-{time.monotonic_ns()}"
    with page.expect_request(lambda r: urlsplit(r.url).path == marker):
        page.evaluate("(url) => { fetch(url).catch(() => {}); }", marker)
    return [s for s in sent if marker not in s]


def timeline_caught_up(page, trip_id: str) -> None:
    """Waits until the page holds the trip's whole agent timeline as the server
    has it now (its latest seq) and has no read left to make: the server's
    copies have replaced anything the page showed before the server had it."""
    r = page.request.get(f"/api/trips/{trip_id}/agent/events?after=0")
    assert r.status == 200, r.text()
    latest = r.json()["data"]["latestSeq"]
    page.wait_for_function("(seq) => Number(document.documentElement.dataset.timelineSeq) >= seq"
                           " && document.documentElement.dataset.reading === 'false'", arg=latest)


def reads_done(page) -> None:
    """Waits until the page's sync has no read of the trip or the timeline
    scheduled or in flight (public/planner/sync.js sets data-reading)."""
    page.wait_for_function("() => document.documentElement.dataset.reading === 'false'")


def ui_signup(page, username: str, display_name: str | None = None) -> None:
    page.goto("/#/signup")
    # On a page already open, the form changes after goto returns (the hash's
    # route runs then): fill the sign-up form, not the one it replaces.
    page.get_by_role("heading", name="Create your account").wait_for()
    page.get_by_label("Username").fill(username)
    if display_name:
        page.get_by_label("Display name (optional)").fill(display_name)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Create account").click()
    page.get_by_role("heading", name="Your trips").wait_for()


def ui_signin(page, username: str) -> None:
    page.goto("/#/signin")
    page.get_by_role("heading", name="Welcome back").wait_for()
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()


def ui_create_trip(page, title: str, destination: str = "Lisbon", start: str = "2026-12-10",
                   end: str = "2026-12-11") -> str:
    page.get_by_role("button", name="New trip").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Trip name").fill(title)
    dialog.get_by_label("First day").fill(start)
    dialog.get_by_label("Last day").fill(end)
    dest = dialog.get_by_label("Destination")
    dest.fill(destination)
    dest.dispatch_event("change")
    dialog.get_by_role("button", name="Create trip").click()
    page.locator(".day-view").wait_for()
    return re.search(r"#/trips/([^?]+)", page.url).group(1)


def ui_add_stop(page, name: str, *, kind: str | None = None, set_time: str | None = None, duration: int | None = None,
                lat: float | None = None, lng: float | None = None, meal: str | None = None) -> None:
    page.locator("[data-testid=add-stop]").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Name").fill(name)
    if kind:
        dialog.get_by_label("Kind").select_option(kind)
    if meal:
        dialog.get_by_label("Meal").select_option(meal)
    if set_time:
        dialog.get_by_label("Set time (optional)").fill(set_time)
    if duration:
        dialog.get_by_label("Duration (minutes)").fill(str(duration))
    if lat is not None:
        location = dialog.locator("details.more")
        if location.get_attribute("open") is None:
            location.locator("summary").click()
        dialog.get_by_label("Latitude").fill(str(lat))
        dialog.get_by_label("Longitude").fill(str(lng))
    dialog.get_by_role("button", name="Add stop").click()
    stop_card(page, name).wait_for()


def stop_card(page, name: str):
    """The stop whose own name matches: a finding on another stop may mention it too."""
    return page.locator(".stop").filter(has=page.locator(".stop-name", has_text=name))


def drag_stop_before(page, name: str, onto: str) -> None:
    """Drags stop `name` by its handle onto the top half of stop `onto`, as a
    mouse does: it goes right before it (one move_stop)."""
    stop_card(page, name).locator(".drag-handle").drag_to(stop_card(page, onto), target_position={"x": 120, "y": 6})


def stop_times(page) -> dict[str, tuple[str, str, str]]:
    """Stop name -> (start, end, 'set'|'auto') as the timeline shows them."""
    out = {}
    for item in page.locator(".timeline .stop").all():
        name = item.locator(".stop-name").inner_text()
        out[name] = (item.locator(".t-start").inner_text(), item.locator(".t-end").inner_text(),
                     "set" if item.get_attribute("data-pinned") == "true" else "auto")
    return out


def offline(settings, **changes):
    """`settings` with every provider still at its real default pointed at a
    closed loopback port, so a test never calls a real provider; stand-ins
    already configured (ai_settings, google_settings, weather_settings) stay."""

    dead = "http://127.0.0.1:9"
    real = Settings()
    fixes = {name: dead for name in ("weather_base_url", "google_places_base_url", "google_routes_base_url",
                                     "google_maps_base_url")
             if getattr(settings, name) == getattr(real, name)}
    if settings.openai_base_url is None:
        fixes["openai_base_url"] = dead
    return settings.with_(**{**fixes, **changes})


def panel_button(page, name: str):
    """The Chat or AI help button: in the top bar on wide screens, among the bottom tabs on phones."""
    phone = page.viewport_size["width"] <= 760
    bar = page.locator(".mobile-tabs") if phone else page.locator(".topbar")
    return bar.get_by_role("button", name=name)


def open_chat(page):
    """Opens the group chat in the side panel (if it is not what shows); the panel."""
    panel = page.locator("#side-panel")
    if not panel.evaluate("(el) => el.classList.contains('open') && el.dataset.mode === 'chat'"):
        panel_button(page, "Chat").click()
    panel.locator(".agent-composer").wait_for()
    return panel


def send_chat(panel, text: str) -> None:
    """Types `text` in the chat's composer (in `panel`, the side panel or the page) and sends it."""
    panel.get_by_label("Message", exact=True).fill(text)
    panel.get_by_role("button", name="Send").click()


def open_ai_help(page, tab: str = "This day"):
    """Opens AI help on `tab` ("This day" or "Preferences"); the panel."""
    panel = page.locator("#side-panel")
    if not panel.evaluate("(el) => el.classList.contains('open') && el.dataset.mode === 'help'"):
        panel_button(page, "AI help").click()
    panel.get_by_role("tab", name=tab).click()
    return panel
