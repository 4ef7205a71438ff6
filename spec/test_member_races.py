"""Members' changes racing each other over real connections: an owner's
request that was checked before another owner demoted them must not then
act as an owner (the rule is checked in the write, app/members.py)."""

from __future__ import annotations

import json
import socket
import threading

import httpx

from app.web.application import create_app
from helpers import LiveServer, join, new_trip, signup, use

WAIT_S = 30


class BodyGate:
    """Wraps the app: `reading` is set when a route first asks for a request's
    body, i.e. after it checked the caller's role; the client has sent only
    the head, so the request waits there until the test sends the body."""

    def __init__(self, app):
        self.app, self.reading = app, threading.Event()

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] == "GET":
            return await self.app(scope, receive, send)

        async def watched():
            self.reading.set()
            return await receive()

        return await self.app(scope, watched, send)


def held_request(server: LiveServer, method: str, path: str, token: str, payload: dict):
    """Send a request's head only; returns (socket, body) for `finish`."""
    body = json.dumps(payload).encode()
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=WAIT_S)
    sock.sendall((f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
                  f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                  f"Cookie: wayline_session={token}\r\nConnection: close\r\n\r\n").encode())
    return sock, body


def finish(sock: socket.socket, body: bytes) -> tuple[int, dict]:
    with sock:
        sock.sendall(body)
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    head, _, rest = raw.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(rest)


def roles(client: httpx.Client, trip_id: str) -> dict[str, str]:
    members = client.get(f"/api/trips/{trip_id}/members").json()["data"]["members"]
    return {m["username"]: m["role"] for m in members}


def two_owners(server: LiveServer):
    client = httpx.Client(base_url=server.url, timeout=WAIT_S)
    ann, ben, cat = signup(client, "ann"), signup(client, "ben"), signup(client, "cat")
    use(client, ann)
    trip = new_trip(client)
    join(client, ann, trip["id"], ben, "editor")
    join(client, ann, trip["id"], cat, "viewer")
    use(client, ann)
    assert client.patch(f"/api/trips/{trip['id']}/members/{ben['id']}", json={"role": "owner"}).status_code == 200
    return client, trip["id"], ann, ben, cat


def test_an_owner_demoted_mid_request_cannot_make_someone_owner(settings):
    """It answered 200: ben, an owner when his PATCH was checked, made cat an
    owner after ann had made him a viewer (the trip had an owner ann never chose)."""
    gate = BodyGate(create_app(settings))
    with LiveServer(gate) as server:
        client, trip_id, ann, ben, cat = two_owners(server)
        gate.reading.clear()
        sock, body = held_request(server, "PATCH", f"/api/trips/{trip_id}/members/{cat['id']}", ben["token"],
                                  {"role": "owner"})
        assert gate.reading.wait(WAIT_S)      # ben's request passed the route's owner check
        use(client, ann)
        assert client.patch(f"/api/trips/{trip_id}/members/{ben['id']}", json={"role": "viewer"}).status_code == 200
        status, answer = finish(sock, body)
        assert status == 403 and answer["error"]["code"] == "forbidden", answer
        assert "owner" in answer["error"]["message"] and "viewer" in answer["error"]["message"]
        assert roles(client, trip_id) == {"ann": "owner", "ben": "viewer", "cat": "viewer"}
        client.close()


def test_an_owner_removed_mid_request_cannot_make_an_invite(settings):
    """It answered 201: a link into the trip, made by someone no longer in it."""
    gate = BodyGate(create_app(settings))
    with LiveServer(gate) as server:
        client, trip_id, ann, ben, _ = two_owners(server)
        use(client, ann)
        links = len(client.get(f"/api/trips/{trip_id}/invites").json()["data"]["invites"])
        gate.reading.clear()
        sock, body = held_request(server, "POST", f"/api/trips/{trip_id}/invites", ben["token"], {"role": "editor"})
        assert gate.reading.wait(WAIT_S)
        use(client, ann)
        assert client.delete(f"/api/trips/{trip_id}/members/{ben['id']}").status_code == 200
        status, answer = finish(sock, body)
        assert status == 404 and answer["error"]["code"] == "not_found", answer
        assert len(client.get(f"/api/trips/{trip_id}/invites").json()["data"]["invites"]) == links
        client.close()


def test_two_owners_demoting_each_other_at_once_leave_one_owner(settings):
    """Both requests are in flight together: one wins, the other is refused in
    words (ben is no longer an owner, or would leave the trip without one),
    and the trip always keeps an owner. A guard: this held before the fix too."""
    gate = BodyGate(create_app(settings))
    with LiveServer(gate) as server:
        client, trip_id, ann, ben, _ = two_owners(server)
        gate.reading.clear()
        first = held_request(server, "PATCH", f"/api/trips/{trip_id}/members/{ben['id']}", ann["token"],
                             {"role": "editor"})
        assert gate.reading.wait(WAIT_S)
        gate.reading.clear()
        second = held_request(server, "PATCH", f"/api/trips/{trip_id}/members/{ann['id']}", ben["token"],
                              {"role": "editor"})
        assert gate.reading.wait(WAIT_S)       # both passed the route's check as owners
        assert finish(*first)[0] == 200
        status, answer = finish(*second)
        assert (status, answer["error"]["code"]) in {(403, "forbidden"), (409, "last_owner")}, answer
        use(client, ann)
        assert roles(client, trip_id) == {"ann": "owner", "ben": "editor", "cat": "viewer"}
        client.close()
