"""Live trip pages: GET /api/trips/:tripId/live (server-sent events) and
PUT .../presence, against the real app on uvicorn (LiveServer), read with
httpx streaming. Two cases that need a client which stops reading, or a call
on the app's own loop, drive the app's ASGI callable on a TestClient's loop."""

from __future__ import annotations

import asyncio
import json
import socket
import sqlite3
import time
from datetime import UTC, datetime, timedelta

import anyio
import httpx

from app.auth import token_hash
from app.ids import iso
from app.live.sse import MAX_QUEUED
from app.web.application import create_app
from helpers import LiveServer, make_client, new_trip, op, signup, use
from nodetest import ROOT, node_test
from standins.openai_standin import ai_settings

# How long a wait for an event may take before the test fails: it only bounds
# an event that never comes, so it is generous (a loaded two-core machine is
# many times slower than one alone). How fast events come is measured by
# bench/live.py (p99 under 250 ms for 1,000 streams), not here.
WITHIN_S = 30.0
OPEN_S = 30.0
PASSWORD = "correct horse"
PRESENCE_KEYS = {"userId", "displayName", "dayId"}


class Feed:
    """One open live stream, read in the background into `events` (dicts
    with id, event, data) and `comments` (keep-alive lines)."""

    def __init__(self, client: httpx.AsyncClient, trip_id: str, last_event_id: str | None = None,
                 query: str = ""):
        self.client, self.trip_id = client, trip_id
        self.headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
        self.query = query
        self.events: list[dict] = []
        self.comments = 0
        self.ended = False
        self._seen = 0

    async def __aenter__(self) -> Feed:
        self._cm = self.client.stream("GET", f"/api/trips/{self.trip_id}/live{self.query}", headers=self.headers)
        self.response = await self._cm.__aenter__()
        self._task = asyncio.get_running_loop().create_task(self._read()) if self.response.status_code == 200 else None
        return self

    async def __aexit__(self, *exc) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        await self._cm.__aexit__(None, None, None)

    async def _read(self) -> None:
        event: dict = {}
        try:
            async for line in self.response.aiter_lines():
                if line.startswith(":"):
                    self.comments += 1
                elif line:
                    name, _, value = line.partition(": ")
                    event[name] = json.loads(value) if name == "data" else value
                elif event:
                    self.events.append(event)
                    event = {}
        except httpx.HTTPError:
            pass
        finally:
            self.ended = True

    async def next(self, kind: str, timeout: float = WITHIN_S, where=lambda data: True) -> dict:
        """The next event of `kind` (skipping others) whose data passes `where`."""
        with anyio.fail_after(timeout):
            while True:
                while self._seen < len(self.events):
                    event = self.events[self._seen]
                    self._seen += 1
                    if event["event"] == kind and where(event["data"]):
                        return event
                assert not self.ended, f"the stream ended while waiting for {kind!r}: {self.events}"
                await asyncio.sleep(0.005)

    async def seen(self, kind: str, where=lambda data: True, timeout: float = WITHIN_S) -> dict:
        """The latest event of `kind` passing `where`, whenever it came (order aside)."""
        with anyio.fail_after(timeout):
            while True:
                found = [e for e in self.events if e["event"] == kind and where(e["data"])]
                if found:
                    return found[-1]
                assert not self.ended, f"the stream ended while waiting for {kind!r}: {self.events}"
                await asyncio.sleep(0.005)

    async def hello(self) -> dict:
        return await self.next("hello", timeout=OPEN_S)

    async def until_ended(self, timeout: float = WITHIN_S) -> None:
        with anyio.fail_after(timeout):
            while not self.ended:
                await asyncio.sleep(0.005)

    def kinds(self) -> list[str]:
        return [e["event"] for e in self.events]


async def member_client(base: str, name: str) -> httpx.AsyncClient:
    client = httpx.AsyncClient(base_url=base, timeout=10)
    r = await client.post("/api/auth/signup", json={"username": name, "password": PASSWORD})
    assert r.status_code == 201, r.text
    client.user = r.json()["data"]["user"]
    return client


async def a_trip(owner: httpx.AsyncClient, *members: tuple[httpx.AsyncClient, str]) -> dict:
    """A 3-day trip of `owner` with one stop; each (client, role) joins by invite."""
    r = await owner.post("/api/trips", json={"title": "Lisbon", "startDate": "2026-12-10", "days": 3,
                                            "destination": {"name": "Lisbon", "lat": 38.72, "lng": -9.14}})
    trip = r.json()["data"]
    r = await owner.post(f"/api/trips/{trip['id']}/ops/insert_stop?full=1",
                         json={"dayId": trip["days"][0]["id"], "name": "Castle", "lat": 38.71, "lng": -9.13})
    trip = r.json()["data"]["trip"]
    for client, role in members:
        token = (await owner.post(f"/api/trips/{trip['id']}/invites", json={"role": role})).json()["data"]["token"]
        assert (await client.post(f"/api/invites/{token}/accept", json={})).status_code == 200
    return trip


async def another_session(base: str, member: httpx.AsyncClient) -> httpx.AsyncClient:
    """The same member signed in again (another device): a session of its own."""
    client = httpx.AsyncClient(base_url=base, timeout=10)
    r = await client.post("/api/auth/signin", json={"username": member.user["username"], "password": PASSWORD})
    assert r.status_code == 200, r.text
    client.user = member.user
    return client


def run(settings, test, **overrides):
    """Run `test(server)` (async) against the real app on uvicorn."""
    with LiveServer(create_app(settings, **overrides)) as server:
        anyio.run(test, server)


# -- changes reach the other members ------------------------------------------------


def test_each_kind_of_change_reaches_another_members_stream(settings, openai_standin):
    openai_standin.reply_json({"addressed": False})  # the chat message's ambient check

    async def test(server):
        alice, bob = await member_client(server.url, "alice"), await member_client(server.url, "bob")
        trip = await a_trip(alice, (bob, "editor"))
        t, stop = trip["id"], trip["days"][0]["stops"][0]["id"]
        async with Feed(alice, t) as feed:
            assert feed.response.headers["content-type"].startswith("text/event-stream")
            hello = await feed.hello()
            assert hello["data"]["resumed"] is False and hello["data"]["connectionId"] and hello["id"]

            day2 = trip["days"][1]["id"]
            r = await bob.post(f"/api/trips/{t}/ops/update_day", json={"dayId": day2, "title": "Sintra"})
            version = r.json()["data"]["change"]["version"]
            assert (await feed.next("trip"))["data"] == {"version": version}
            operation_seq = (await feed.next("timeline"))["data"]["seq"]

            r = await bob.post(f"/api/trips/{t}/stops/{stop}/comments", json={"body": "Book ahead"})
            assert r.status_code == 201
            assert (await feed.next("social"))["data"] == {}
            assert (await bob.put(f"/api/trips/{t}/stops/{stop}/vote", json={"value": 1})).status_code == 200
            await feed.next("social")

            r = await bob.post(f"/api/trips/{t}/agent/messages", json={"text": "Shall we take the tram?"})
            assert r.status_code == 201, r.text
            seq = r.json()["data"]["message"]["seq"]
            assert seq > operation_seq
            assert (await feed.next("timeline"))["data"] == {"seq": seq}

            ids = [int(e["id"].split("-")[1]) for e in feed.events if e["event"] not in ("hello", "presence")]
            assert ids == sorted(ids) and len(set(ids)) == len(ids), "event ids count up"
            text = json.dumps(feed.events)
            assert "Sintra" not in text and "Book ahead" not in text and "tram" not in text, "no content in events"
        await alice.aclose()
        await bob.aclose()

    run(ai_settings(settings, openai_standin), test)


def test_outsiders_get_404_and_anonymous_callers_401(client):
    owner = signup(client, "owner")
    trip = new_trip(client)
    outsider = signup(client, "outsider")
    use(client, outsider)
    r = client.get(f"/api/trips/{trip['id']}/live")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    r = client.put(f"/api/trips/{trip['id']}/presence", json={"connectionId": "x", "dayId": None})
    assert r.status_code == 404
    client.cookies.clear()
    assert client.get(f"/api/trips/{trip['id']}/live").status_code == 401
    use(client, owner)
    assert client.get("/api/trips/nope/live").status_code == 404


# -- membership is live --------------------------------------------------------------


def test_a_removed_members_stream_closes_and_a_role_change_is_announced(settings):
    async def test(server):
        alice, bob = await member_client(server.url, "alice"), await member_client(server.url, "bob")
        trip = await a_trip(alice, (bob, "editor"))
        t = trip["id"]
        async with Feed(bob, t) as bobs, Feed(bob, t) as second_tab, Feed(alice, t) as alices:
            await bobs.hello()
            await alices.next("presence", where=lambda people: len(people) == 2, timeout=OPEN_S)

            r = await alice.patch(f"/api/trips/{t}/members/{bob.user['id']}", json={"role": "viewer"})
            assert r.status_code == 200
            await bobs.next("members")
            assert not bobs.ended, "a role change keeps the stream open"

            assert (await alice.delete(f"/api/trips/{t}/members/{bob.user['id']}")).status_code == 200
            gone = await bobs.next("gone")
            assert gone["data"] == {"reason": "removed"}
            await bobs.until_ended()
            await second_tab.until_ended()
            await alices.next("members")
            await alices.seen("presence", where=lambda people: [p["userId"] for p in people] == [alice.user["id"]])
        async with Feed(bob, t) as again:
            assert again.response.status_code == 404
        await alice.aclose()
        await bob.aclose()

    run(settings, test)


def test_deleting_the_trip_ends_its_streams(settings):
    async def test(server):
        alice, bob = await member_client(server.url, "alice"), await member_client(server.url, "bob")
        trip = await a_trip(alice, (bob, "viewer"))
        async with Feed(bob, trip["id"]) as feed:
            await feed.hello()
            assert (await alice.delete(f"/api/trips/{trip['id']}")).status_code == 200
            assert (await feed.next("gone"))["data"] == {"reason": "deleted"}
            await feed.until_ended()
        await alice.aclose()
        await bob.aclose()

    run(settings, test)


def test_closing_a_users_streams_for_account_deletion(settings):
    with make_client(settings) as client:
        alice = signup(client, "alice")
        trip = new_trip(client)
        svc = client.app.state.services
        first, second = InProcessStream(client, alice, trip["id"]), InProcessStream(client, alice, trip["id"])
        first.wait_for("hello")
        second.wait_for("hello")
        client.portal.call(_call, svc.live.close_user, alice["id"])
        for stream in (first, second):
            stream.wait_until_finished()
            assert stream.kinds()[-1] == "gone" and stream.events[-1]["data"] == {"reason": "account"}
        assert len(svc.live) == 0


def test_deleting_the_account_or_signing_out_everywhere_ends_that_users_streams(settings):
    async def test(server):
        alice, bob, carol = [await member_client(server.url, name) for name in ("alice", "bob", "carol")]
        trip = await a_trip(alice, (bob, "editor"), (carol, "editor"))
        async with Feed(bob, trip["id"]) as bobs, Feed(carol, trip["id"]) as carols, Feed(alice, trip["id"]) as alices:
            for feed in (bobs, carols, alices):
                await feed.hello()
            r = await bob.request("DELETE", "/api/users/me", json={"password": PASSWORD})
            assert r.status_code == 200, r.text
            assert (await bobs.next("gone"))["data"] == {"reason": "account"}
            await bobs.until_ended()
            assert (await carol.post("/api/auth/signout", json={"everywhere": True})).status_code == 200
            # Her account goes on: her pages must not say it was deleted.
            assert (await carols.next("gone"))["data"] == {"reason": "signedOut"}
            await carols.until_ended()
            await alices.next("members")   # the others only hear that the members changed
        for c in (alice, bob, carol):
            await c.aclose()

    run(settings, test)


def test_a_sessions_streams_end_with_it(settings):
    """Signing out ends that session's open pages only; a password change ends
    the other sessions' pages (a stolen cookie stops hearing the trip) and
    keeps the one that changed it."""
    async def test(server):
        alice, bob = await member_client(server.url, "alice"), await member_client(server.url, "bob")
        trip = await a_trip(alice, (bob, "editor"))
        laptop = await another_session(server.url, bob)
        async with Feed(bob, trip["id"]) as phone_page, Feed(laptop, trip["id"]) as laptop_page:
            await phone_page.hello()
            await laptop_page.hello()
            assert (await laptop.post("/api/auth/signout", json={})).status_code == 200
            assert (await laptop_page.next("gone"))["data"] == {"reason": "signedOut"}
            await laptop_page.until_ended()
            assert not phone_page.ended, "the phone's session goes on"

        thief = httpx.AsyncClient(base_url=server.url, timeout=10, cookies=dict(bob.cookies))
        thief.user = bob.user
        r = await bob.post("/api/auth/signin", json={"username": "bob", "password": PASSWORD})
        async with Feed(bob, trip["id"]) as owners_page, Feed(thief, trip["id"]) as thiefs_page:
            await owners_page.hello()
            await thiefs_page.hello()
            r = await bob.post("/api/auth/password", json={"currentPassword": PASSWORD,
                                                               "newPassword": "another long passphrase"})
            assert r.status_code == 200, r.text
            assert (await thiefs_page.next("gone"))["data"] == {"reason": "signedOut"}
            await thiefs_page.until_ended()
            assert not owners_page.ended, "the page of the session that changed it stays"
        for c in (alice, bob, laptop, thief):
            await c.aclose()

    run(settings, test)


def test_a_stream_ends_when_its_session_expires(settings):
    """A session expires after 30 days by the calendar: its open page's
    stream went on telling the page of changes it could no longer read, and
    the page learned only at its next request. On the first keep-alive tick
    after the expiry the stream ends with `gone` "expired"; a stream of the
    member's other session goes on."""
    async def test(server):
        alice, bob = await member_client(server.url, "alice"), await member_client(server.url, "bob")
        trip = await a_trip(alice, (bob, "editor"))
        laptop = await another_session(server.url, bob)
        soon = iso(datetime.now(UTC) + timedelta(seconds=1.5))
        with sqlite3.connect(settings.db_path) as db:
            db.execute("UPDATE sessions SET expires_at = ? WHERE token_hash = ?",
                       (soon, token_hash(laptop.cookies["wayline_session"])))
        async with Feed(bob, trip["id"]) as phone_page, Feed(laptop, trip["id"]) as laptop_page:
            await phone_page.hello()
            await laptop_page.hello()
            assert (await laptop_page.next("gone"))["data"] == {"reason": "expired"}
            await laptop_page.until_ended()
            assert datetime.now(UTC) >= datetime.fromisoformat(soon.replace("Z", "+00:00")), "not before its time"
            assert not phone_page.ended, "the phone's session goes on"
        for c in (alice, bob, laptop):
            await c.aclose()

    run(settings, test, live_keepalive_s=0.1)


async def _call(fn, *args):
    return fn(*args)


# -- limits ------------------------------------------------------------------------------


def test_the_ninth_stream_of_one_user_is_429_and_a_closed_one_frees_its_place(settings):
    async def test(server):
        alice = await member_client(server.url, "alice")
        trips = [await a_trip(alice) for _ in range(2)]
        feeds = [Feed(alice, trips[i % 2]["id"]) for i in range(8)]  # the limit counts every trip
        for feed in feeds:
            await feed.__aenter__()
            await feed.hello()
        r = await alice.get(f"/api/trips/{trips[0]['id']}/live")
        assert r.status_code == 429
        error = r.json()["error"]
        assert error["code"] == "too_many_streams" and "tabs" in error["message"]
        await feeds.pop().__aexit__()
        # The server frees the place when it notices the disconnect (at once, but asynchronously).
        with anyio.fail_after(WITHIN_S):
            while True:
                ninth = Feed(alice, trips[0]["id"])
                await ninth.__aenter__()
                if ninth.response.status_code == 200:
                    break
                await ninth.__aexit__()
                await asyncio.sleep(0.02)
        await ninth.hello()
        await ninth.__aexit__()
        for feed in feeds:
            await feed.__aexit__()
        await alice.aclose()

    run(settings, test)


def test_the_process_wide_limit_is_429(settings):
    async def test(server):
        alice, bob = await member_client(server.url, "alice"), await member_client(server.url, "bob")
        trip = await a_trip(alice, (bob, "viewer"))
        async with Feed(alice, trip["id"]) as one, Feed(alice, trip["id"]) as two:
            await one.hello()
            await two.hello()
            r = await bob.get(f"/api/trips/{trip['id']}/live")
            assert r.status_code == 429 and r.json()["error"]["code"] == "too_many_streams"
        await alice.aclose()
        await bob.aclose()

    run(settings, test, live_max_streams=2)


def test_a_client_that_stops_reading_is_dropped_not_buffered(settings):
    with make_client(settings) as client:
        alice = signup(client, "alice")
        trip = new_trip(client, days=1)
        t = trip["id"]
        stop = op(client, t, "insert_stop", dayId=trip["days"][0]["id"], name="Sé").json()["data"]["trip"]
        stop_id = stop["days"][0]["stops"][0]["id"]
        svc = client.app.state.services
        stalled = InProcessStream(client, alice, t, stalled=True)
        try:
            stalled.wait_for_start()
            assert len(svc.live) == 1
            for i in range(MAX_QUEUED + 2):  # every vote is a `social` event nobody reads
                r = client.put(f"/api/trips/{t}/stops/{stop_id}/vote", json={"value": 1 if i % 2 else -1})
                assert r.status_code == 200
            deadline = time.monotonic() + 5
            while len(svc.live) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert len(svc.live) == 0, "the stalled stream was dropped"
        finally:
            stalled.resume()
        stalled.wait_until_finished()  # and its response ends once the socket drains
        assert stalled.kinds().count("social") <= MAX_QUEUED, "nothing was queued past the bound"


TCP_ESTABLISHED = 1


def open_unread_stream(server, cookie: str, trip_id: str) -> tuple[socket.socket, int]:
    """A raw connection that asks for the live stream with a 1 KiB receive
    buffer, reads the status line and headers, and then never reads again."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    sock.settimeout(OPEN_S)
    sock.connect(("127.0.0.1", server.port))
    sock.sendall(f"GET /api/trips/{trip_id}/live HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 f"Cookie: wayline_session={cookie}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        got = sock.recv(1)
        assert got, head
        head += got
    return sock, int(head.split()[1])


def established(sock: socket.socket) -> bool:
    """The connection as the kernel sees it (tcpi_state is TCP_INFO's first byte)."""
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0] == TCP_ESTABLISHED


def test_streams_that_never_read_are_closed_for_real_and_cannot_exceed_the_limit(settings):
    """Issue 22, failure 2: 8 streams with a 1 KiB receive buffer that never
    read; heavy activity made the hub drop them from its counts, but the
    connections stayed open (a send without a timeout; `drop()` only set a
    flag), so 8 more streams were accepted: 16 open connections for one user.
    Now a dropped stream, or a write that cannot complete within the send
    timeout, aborts its connection, and the limit counts open connections.

    To fill the buffers in seconds rather than minutes, the server's sockets
    get a 4 KiB send buffer (set on the listening socket, which accepted ones
    inherit; the kernel's own would grow to megabytes) and a keep-alive line
    every 2 ms on top of the edits."""
    server = LiveServer(create_app(settings, live_send_timeout_s=2.0, live_keepalive_s=0.002))
    server.socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    with server, httpx.Client(base_url=server.url, timeout=30) as alice:
        alice.post("/api/auth/signup", json={"username": "alice", "password": PASSWORD}).raise_for_status()
        cookie = alice.cookies["wayline_session"]
        trip = alice.post("/api/trips", json={"title": "T", "startDate": "2026-12-10", "days": 1}).json()["data"]
        streams = [open_unread_stream(server, cookie, trip["id"]) for _ in range(8)]
        assert [status for _, status in streams] == [200] * 8
        socks = [sock for sock, _ in streams]
        try:
            # Heavy activity: every edit is a `trip` and a `timeline` event on each stream.
            deadline = time.monotonic() + 90
            title = 0
            while any(established(s) for s in socks):
                assert time.monotonic() < deadline, f"{sum(map(established, socks))} connections still open"
                for _ in range(20):
                    title += 1
                    r = alice.post(f"/api/trips/{trip['id']}/ops/update_trip", json={"title": f"Edit {title}"})
                    assert r.status_code == 200, r.text
            # Every connection the server let go of is closed, and the places are free for new pages.
            assert not any(established(s) for s in socks)
            more = [open_unread_stream(server, cookie, trip["id"]) for _ in range(9)]
            socks += [sock for sock, _ in more]
            assert [status for _, status in more] == [200] * 8 + [429]
            open_streams = [sock for sock, status in streams + more if status == 200 and established(sock)]
            assert len(open_streams) <= 8
        finally:
            for sock in socks:
                sock.close()


# -- resume ------------------------------------------------------------------------------


def test_a_reconnect_with_last_event_id_receives_what_it_missed(settings):
    async def test(server):
        alice, bob = await member_client(server.url, "alice"), await member_client(server.url, "bob")
        trip = await a_trip(alice, (bob, "editor"))
        t, stop = trip["id"], trip["days"][0]["stops"][0]["id"]
        async with Feed(alice, t) as feed:
            await feed.hello()
            await bob.post(f"/api/trips/{t}/ops/update_trip", json={"title": "Porto"})
            last = (await feed.next("trip"))["id"]
            await feed.next("timeline")
        # Alice's page is offline while Bob edits twice and comments. Bob's own
        # page shows each change go out before he makes the next, so each is an
        # event of its own (changes sent out together are one event).
        versions = []
        async with Feed(bob, t) as bobs:
            await bobs.hello()
            for title in ("Braga", "Faro"):
                r = await bob.post(f"/api/trips/{t}/ops/update_trip", json={"title": title})
                versions.append(r.json()["data"]["change"]["version"])
                assert (await bobs.next("trip"))["data"] == {"version": versions[-1]}
            await bob.post(f"/api/trips/{t}/stops/{stop}/comments", json={"body": "Lunch here"})
            await bobs.next("social")
        async with Feed(alice, t, last_event_id=last) as resumed:
            assert (await resumed.hello())["data"]["resumed"] is True
            assert (await resumed.next("trip"))["data"] == {"version": versions[0]}
            assert (await resumed.next("trip"))["data"] == {"version": versions[1]}
            await resumed.next("social")
            assert "reset" not in resumed.kinds()
            replayed = [e["id"] for e in resumed.events if e["event"] in ("trip", "timeline", "social")]
            assert last not in replayed and len(replayed) == len(set(replayed))
        # The query parameter works the same (a new EventSource cannot set the header).
        async with Feed(alice, t, query=f"?lastEventId={last}") as by_query:
            assert (await by_query.hello())["data"]["resumed"] is True
            assert (await by_query.next("trip"))["data"] == {"version": versions[0]}
        # An id from another process (a restart) or garbage: start over.
        for stale in ("0000beef-3", "nonsense"):
            async with Feed(alice, t, last_event_id=stale) as fresh:
                assert (await fresh.hello())["data"]["resumed"] is False
                await fresh.next("reset")
        await alice.aclose()
        await bob.aclose()

    run(settings, test)


def test_an_id_from_another_trip_malformed_or_in_the_future_starts_over(settings):
    """Event ids count across every trip of the process, so an id another
    trip's stream handed out lies within this trip's range; resuming from it
    would claim `resumed: true` and skip this trip's events before it."""
    async def test(server):
        alice = await member_client(server.url, "alice")
        here, there = await a_trip(alice), await a_trip(alice)
        async with Feed(alice, here["id"]) as mine, Feed(alice, there["id"]) as other:
            await mine.hello()
            await other.hello()
            await alice.post(f"/api/trips/{here['id']}/ops/update_trip", json={"title": "Missed"})
            await mine.next("trip")
            await alice.post(f"/api/trips/{there['id']}/ops/update_trip", json={"title": "Elsewhere"})
            foreign = (await other.next("trip"))["id"]
            epoch, _, n = foreign.partition("-")
        for stale in (foreign, f"{epoch}-{int(n) + 1000}", f"{epoch}-", f"{epoch}--1", f"{epoch}-1e3",
                      f"{epoch}-{'9' * 30}", "-" + n, ""):
            async with Feed(alice, here["id"], query=f"?lastEventId={stale}") as fresh:
                assert (await fresh.hello())["data"]["resumed"] is False, stale
                if stale:
                    await fresh.next("reset")
        await alice.aclose()

    run(settings, test)


def test_a_stream_opening_while_its_trip_is_deleted_is_refused_not_left_open(settings):
    """The membership check passes, the trip is deleted before the stream is
    registered: the deletion must send the check round again (404), or the
    stream would open on a trip that no longer exists and never end."""
    import threading

    app = create_app(settings)
    reached = threading.Event()
    release: asyncio.Event | None = None
    server_loop: asyncio.AbstractEventLoop | None = None

    class HeldOnce:
        def __init__(self, real):
            self.real, self.held = real, False

        async def membership(self, trip_id, user_id):
            nonlocal release, server_loop
            answer = await self.real.membership(trip_id, user_id)
            if not self.held:
                self.held = True
                release, server_loop = asyncio.Event(), asyncio.get_running_loop()
                reached.set()
                await release.wait()
            return answer

    async def test(server):
        hub = app.state.services.live
        hub.trip_cache = HeldOnce(hub.trip_cache)
        alice = await member_client(server.url, "alice")
        trip = await a_trip(alice)
        feed = Feed(alice, trip["id"])
        opening = asyncio.get_running_loop().create_task(feed.__aenter__())
        await anyio.to_thread.run_sync(reached.wait, OPEN_S)
        assert reached.is_set()
        assert (await alice.delete(f"/api/trips/{trip['id']}")).status_code == 200
        assert server_loop is not None and release is not None
        server_loop.call_soon_threadsafe(release.set)
        await opening
        try:
            assert feed.response.status_code == 404, "no stream on a deleted trip"
            assert len(hub) == 0
        finally:
            await feed.__aexit__()
            await alice.aclose()

    with LiveServer(app) as server:
        anyio.run(test, server)


def test_a_full_buffer_is_replayed_whole_and_an_older_id_gets_a_reset(settings):
    from app.live.hub import RING_SIZE

    with make_client(settings) as client:
        alice = signup(client, "alice")
        trip = new_trip(client, days=1)
        t = trip["id"]
        stop = op(client, t, "insert_stop", dayId=trip["days"][0]["id"], name="Sé").json()["data"]["trip"]
        stop_id = stop["days"][0]["stops"][0]["id"]
        observer = InProcessStream(client, alice, t)  # sees each vote's event before the next vote
        first = InProcessStream(client, alice, t)
        old_id = first.wait_for("hello")["id"]
        first.disconnect()
        first.wait_until_finished()

        def vote(i: int) -> None:
            client.put(f"/api/trips/{t}/stops/{stop_id}/vote", json={"value": 1 if i % 2 else -1})
            observer.wait_for_count("social", i + 1)

        for i in range(RING_SIZE):
            vote(i)
        whole = InProcessStream(client, alice, t, last_event_id=old_id)
        assert whole.wait_for("hello")["data"]["resumed"] is True
        whole.wait_for_count("social", RING_SIZE)
        assert "reset" not in whole.kinds()
        whole.disconnect()

        vote(RING_SIZE)  # the oldest missed event leaves the buffer
        again = InProcessStream(client, alice, t, last_event_id=old_id)
        assert again.wait_for("hello")["data"]["resumed"] is False
        again.wait_for("reset")
        again.disconnect()
        observer.disconnect()


# -- presence and keep-alive ---------------------------------------------------------------


def test_presence_shows_which_day_each_member_looks_at(settings):
    async def test(server):
        alice, bob = await member_client(server.url, "alice"), await member_client(server.url, "bob")
        trip = await a_trip(alice, (bob, "viewer"))
        other = await a_trip(bob)
        t, day1, day2 = trip["id"], trip["days"][0]["id"], trip["days"][1]["id"]
        async with Feed(alice, t) as alices, Feed(bob, t) as bobs, Feed(bob, t) as bobs_tab:
            alice_conn = (await alices.hello())["data"]["connectionId"]
            bob_conn = (await bobs.hello())["data"]["connectionId"]
            await bobs_tab.hello()
            r = await bob.put(f"/api/trips/{t}/presence", json={"connectionId": bob_conn, "dayId": day2})
            assert r.status_code == 200, r.text
            people = (await alices.next("presence", where=lambda p: any(x["dayId"] == day2 for x in p)))["data"]
            assert all(set(p) == PRESENCE_KEYS for p in people)
            assert {p["userId"]: p["dayId"] for p in people} == {alice.user["id"]: None, bob.user["id"]: day2}
            assert len(people) == 2, "one entry per member, not per tab"
            assert next(p for p in people if p["userId"] == bob.user["id"])["displayName"] == "bob"

            # Bob's other tab shows day 1: his newest choice is what the others see. His first
            # tab then confirms the day it shows (as a page does every minute): not a new
            # choice, so the two tabs do not take turns (the stream opened after it sees day 1).
            bobs_tab_conn = bobs_tab.events[0]["data"]["connectionId"]
            assert (await bob.put(f"/api/trips/{t}/presence",
                                  json={"connectionId": bobs_tab_conn, "dayId": day1})).status_code == 200
            await alices.next("presence", where=lambda p: {x["userId"]: x["dayId"] for x in p}[bob.user["id"]] == day1)
            assert (await bob.put(f"/api/trips/{t}/presence",
                                  json={"connectionId": bob_conn, "dayId": day2})).status_code == 200
            async with Feed(alice, t) as later:
                people = (await later.next("presence", timeout=OPEN_S))["data"]
                assert {p["userId"]: p["dayId"] for p in people}[bob.user["id"]] == day1

            bad_day = await bob.put(f"/api/trips/{t}/presence",
                                    json={"connectionId": bob_conn, "dayId": other["days"][0]["id"]})
            assert bad_day.status_code == 422 and bad_day.json()["error"]["field"] == "dayId"
            not_yours = await bob.put(f"/api/trips/{t}/presence", json={"connectionId": alice_conn, "dayId": day2})
            assert not_yours.status_code == 404

        async with Feed(alice, t) as alone:
            people = (await alone.next("presence", where=lambda p: len(p) == 1, timeout=OPEN_S))["data"]
            assert people[0]["userId"] == alice.user["id"]
        await alice.aclose()
        await bob.aclose()

    run(settings, test)


def test_a_page_that_stops_confirming_its_presence_leaves_the_list(settings):
    """Bob's phone lost its connection without closing it: the server keeps
    his stream (the socket looks open for about 15 minutes), and showed him on
    his day all that time. A page confirms its presence every minute; one
    that stops leaves the list (here after 1 s), and is back when it confirms."""
    async def test(server):
        alice, bob = await member_client(server.url, "alice"), await member_client(server.url, "bob")
        trip = await a_trip(alice, (bob, "viewer"))
        t, day2 = trip["id"], trip["days"][1]["id"]
        async with Feed(alice, t) as alices, Feed(bob, t) as bobs:
            await alices.hello()
            bob_conn = (await bobs.hello())["data"]["connectionId"]

            async def confirming():   # what bob's page does, here every 0.1 s
                while True:
                    r = await bob.put(f"/api/trips/{t}/presence", json={"connectionId": bob_conn, "dayId": day2})
                    assert r.status_code == 200, r.text
                    await asyncio.sleep(0.1)

            def bob_on_day2(people):
                return any(p["userId"] == bob.user["id"] and p["dayId"] == day2 for p in people)

            for _ in range(2):
                page = asyncio.get_running_loop().create_task(confirming())
                await alices.next("presence", where=bob_on_day2)
                page.cancel()       # the connection is lost; the stream stays open
                await asyncio.gather(page, return_exceptions=True)
                await alices.next("presence", where=lambda people: not bob_on_day2(people))
                assert not bobs.ended, "only the presence went, not the stream"
        await alice.aclose()
        await bob.aclose()

    run(settings, test, live_presence_ttl_s=1.0, live_keepalive_s=0.1)


def test_the_page_confirms_its_presence_every_minute_and_when_shown():
    """public/live.js under node (spec/js/live.test.mjs): the other half of
    the test above, the page's confirmations the server expects."""
    node_test(ROOT / "spec" / "js" / "live.test.mjs")


def test_a_quiet_stream_gets_keep_alive_comments(settings):
    async def test(server):
        alice = await member_client(server.url, "alice")
        trip = await a_trip(alice)
        async with Feed(alice, trip["id"]) as feed:
            with anyio.fail_after(5):
                while feed.comments < 2:
                    await asyncio.sleep(0.02)
        await alice.aclose()

    run(settings, test, live_keepalive_s=0.1)


# -- shutdown ------------------------------------------------------------------------------


def test_shutdown_ends_every_stream_within_the_drain_time(settings):
    from app.core import BackgroundWork

    drain_s = BackgroundWork.drain.__defaults__[0]
    server = LiveServer(create_app(settings)).__enter__()

    async def test():
        alice, bob = await member_client(server.url, "alice"), await member_client(server.url, "bob")
        trip = await a_trip(alice, (bob, "viewer"))
        feeds = [Feed(c, trip["id"]) for c in (alice, alice, bob, bob, bob)]
        for feed in feeds:
            await feed.__aenter__()
            await feed.hello()
        started = time.monotonic()
        server.server.should_exit = True
        for feed in feeds:
            await feed.until_ended(timeout=drain_s)
        await anyio.to_thread.run_sync(server.thread.join, drain_s)
        assert not server.thread.is_alive(), "the server finished shutting down"
        assert time.monotonic() - started < drain_s
        for feed in feeds:
            await feed.__aexit__()
        await alice.aclose()
        await bob.aclose()

    try:
        anyio.run(test)
    finally:
        server.__exit__(None, None, None)


# -- an in-process client on the app's own loop -----------------------------------------------


class InProcessStream:
    """GET .../live through the app's ASGI callable on a TestClient's loop.
    With `stalled`, every body write waits (a client that stopped reading:
    uvicorn's write waits the same way while the socket buffer is full)."""

    def __init__(self, client, user: dict, trip_id: str, *, stalled: bool = False, last_event_id: str | None = None):
        self.client = client
        self.events: list[dict] = []
        self.started = False
        self.finished = False
        headers = [(b"host", b"testserver"), (b"cookie", f"wayline_session={user['token']}".encode())]
        if last_event_id:
            headers.append((b"last-event-id", last_event_id.encode()))
        self.scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
                      "scheme": "http", "path": f"/api/trips/{trip_id}/live", "raw_path": b"", "query_string": b"",
                      "root_path": "", "headers": headers, "client": ("127.0.0.1", 1), "server": ("testserver", 80),
                      "state": {"services": client.app.state.services}}
        self.stalled = stalled
        self.future = client.portal.start_task_soon(self._run)

    async def _run(self) -> None:
        self._gone = asyncio.Event()
        self._writable = asyncio.Event()
        if not self.stalled:
            self._writable.set()
        requested = False

        async def receive():
            nonlocal requested
            if not requested:
                requested = True
                return {"type": "http.request", "body": b"", "more_body": False}
            await self._gone.wait()
            return {"type": "http.disconnect"}

        async def send(message):
            if message["type"] == "http.response.start":
                self.started = True
                return
            await self._writable.wait()
            self._parse(message.get("body", b""))
            if not message.get("more_body", False):
                self.finished = True

        await self.client.app(self.scope, receive, send)
        self.finished = True

    def _parse(self, body: bytes) -> None:
        for block in body.decode().split("\n\n"):
            fields = dict(line.split(": ", 1) for line in block.splitlines() if line and not line.startswith(":"))
            if "event" in fields:
                self.events.append({"id": fields.get("id"), "event": fields["event"],
                                    "data": json.loads(fields["data"])})

    def kinds(self) -> list[str]:
        return [e["event"] for e in self.events]

    def _wait(self, check, what: str, timeout: float = WITHIN_S):
        deadline = time.monotonic() + timeout
        while not check():
            assert time.monotonic() < deadline, f"timed out waiting for {what}: {self.kinds()}"
            time.sleep(0.01)

    def wait_for_start(self) -> None:
        self._wait(lambda: self.started, "the response to start")

    def wait_for(self, kind: str) -> dict:
        self._wait(lambda: kind in self.kinds(), kind)
        return next(e for e in self.events if e["event"] == kind)

    def wait_for_count(self, kind: str, count: int) -> None:
        self._wait(lambda: self.kinds().count(kind) >= count, f"{count} x {kind}")

    def wait_until_finished(self) -> None:
        self._wait(lambda: self.finished and self.future.done(), "the response to end")
        self.future.result()

    def resume(self) -> None:
        self.client.portal.call(_call, self._writable.set)

    def disconnect(self) -> None:
        self.client.portal.call(_call, self._gone.set)


def test_a_stream_whose_request_body_fails_is_ended_not_left_open():
    """A live request sent with an oversized chunked body: reading it fails in
    the disconnect watcher, which must still end the stream (else it would
    hold its place under the limits for ever)."""
    from app.live.sse import LiveResponse, Stream

    stream = Stream("t1", "u1", "Ana", "c1")
    ended = []

    def on_end(s):
        ended.append(s)
        s.close()

    async def receive():
        raise ValueError("body over the limit")

    sent = []

    async def send(message):
        sent.append(message)

    async def run():
        await asyncio.wait_for(LiveResponse(stream, on_end)({"type": "http"}, receive, send), 2)

    asyncio.run(run())
    assert ended and ended[0] is stream
    assert sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}


def test_when_the_members_cannot_be_read_every_stream_of_the_trip_ends(settings):
    """A removal whose member list cannot be read (a failing disk) must not
    leave the removed member listening: every stream of the trip ends with a
    reset, and the pages reconnect through the membership check."""
    app = create_app(settings)

    async def test(server):
        alice, bob = await member_client(server.url, "alice"), await member_client(server.url, "bob")
        trip = await a_trip(alice, (bob, "editor"))
        t = trip["id"]
        async with Feed(bob, t) as bobs, Feed(alice, t) as alices:
            await bobs.hello()
            await alices.hello()

            async def unreadable(trip_id):
                raise OSError("disk I/O error")

            app.state.services.live._member_ids = unreadable
            assert (await alice.delete(f"/api/trips/{t}/members/{bob.user['id']}")).status_code == 200
            await bobs.next("reset")
            await bobs.until_ended()
            await alices.until_ended()
        async with Feed(bob, t) as again:
            assert again.response.status_code == 404
        await alice.aclose()
        await bob.aclose()

    with LiveServer(app) as server:
        anyio.run(test, server)


def test_a_stream_opening_while_its_session_ends_is_not_left_open(settings):
    """The stream's checks pass, then its session ends (signed out, or another
    session changed the password: a stolen cookie) before it is registered:
    the stream must not open, or it would hear the trip's changes and presence
    for as long as its client keeps the connection, with no session at all."""
    import threading

    app = create_app(settings)
    reached = threading.Event()
    release: asyncio.Event | None = None
    server_loop: asyncio.AbstractEventLoop | None = None

    class HeldOnce:
        def __init__(self, real):
            self.real, self.held = real, False

        async def membership(self, trip_id, user_id):
            nonlocal release, server_loop
            answer = await self.real.membership(trip_id, user_id)
            if not self.held:
                self.held = True
                release, server_loop = asyncio.Event(), asyncio.get_running_loop()
                reached.set()
                await release.wait()
            return answer

    async def test(server):
        hub = app.state.services.live
        alice = await member_client(server.url, "alice")
        trip = await a_trip(alice)
        # A client that waits for ever on a quiet stream: only the server can end it.
        thief = httpx.AsyncClient(base_url=server.url, timeout=httpx.Timeout(10, read=None),
                                  cookies=dict(alice.cookies))
        r = await alice.post("/api/auth/signin", json={"username": "alice", "password": PASSWORD})
        assert r.status_code == 200
        hub.trip_cache = HeldOnce(hub.trip_cache)
        feed = Feed(thief, trip["id"])
        opening = asyncio.get_running_loop().create_task(feed.__aenter__())
        await anyio.to_thread.run_sync(reached.wait, OPEN_S)
        assert reached.is_set()
        r = await alice.post("/api/auth/password", json={"currentPassword": PASSWORD,
                                                         "newPassword": "another long passphrase"})
        assert r.status_code == 200, r.text
        assert server_loop is not None and release is not None
        server_loop.call_soon_threadsafe(release.set)
        await opening
        try:
            assert feed.response.status_code == 200   # its checks had passed
            # It ends at once, saying why; it used to stay open (only the client giving up ended it).
            assert (await feed.next("gone"))["data"] == {"reason": "signedOut"}
            await feed.until_ended()
            assert len(hub) == 0
        finally:
            await feed.__aexit__()
            await alice.aclose()
            await thief.aclose()

    with LiveServer(app) as server:
        anyio.run(test, server)
