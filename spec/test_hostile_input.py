"""Hostile request bodies (issue 12, failures 4, 5 and 6): sizes bounded
before and while reading, nesting refused before parsing, chat parts checked
by a schema, lone surrogates refused: a clear 4xx, never a 500."""

from __future__ import annotations

import json
import select
import socket
import tempfile
import time
from pathlib import Path

import httpx
import pytest

from app.web import bodies
from app.web.application import create_app
from helpers import LiveServer, new_trip, op, signup
from test_agent_support import agent_client, user_message

JSON = {"Content-Type": "application/json"}


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def test_deep_nesting_is_400_on_every_kind_of_json_route_and_64_levels_pass(client):
    anonymous = client.post("/api/auth/signin", content=nested(20_000), headers=JSON)
    assert anonymous.status_code == 400 and anonymous.json()["error"]["code"] == "too_deep"
    signup(client, "alice")
    trip = new_trip(client)
    for path in (f"/api/trips/{trip['id']}/ops/insert_stop", "/api/trips", f"/api/trips/{trip['id']}/invites",
                 "/api/users/preferences"):
        method = client.put if path.endswith("preferences") else client.post
        r = method(path, content=b'{"a": ' + nested(20_000) + b"}", headers=JSON)
        assert r.status_code == 400 and r.json()["error"]["code"] == "too_deep", (path, r.text)
    # 64 levels are parsed (and then refused as the wrong shape, not as too deep).
    r = client.post(f"/api/trips/{trip['id']}/ops/insert_stop", content=b'{"a": ' + nested(63) + b"}", headers=JSON)
    assert r.status_code == 422
    # Brackets inside strings are text, not nesting.
    day = trip["days"][0]["id"]
    r = op(client, trip["id"], "insert_stop", dayId=day, name="[" * 100, note='\\"{' * 300)
    assert r.status_code == 200, r.text


def test_lone_surrogates_are_422_naming_the_field(client):
    signup(client, "alice")
    trip = new_trip(client)
    day = trip["days"][0]["id"]
    r = client.post(f"/api/trips/{trip['id']}/ops/insert_stop",
                    content=b'{"dayId": "' + day.encode() + b'", "name": "a\\ud800b"}', headers=JSON)
    assert r.status_code == 422 and r.json()["error"]["field"] == "name"
    r = client.post("/api/trips", content=b'{"title": "x\\udfff", "startDate": "2026-01-01", "days": 1}', headers=JSON)
    assert r.status_code == 422 and r.json()["error"]["field"] == "title"
    # A proper pair (an emoji) is text.
    r = client.post(f"/api/trips/{trip['id']}/ops/insert_stop",
                    content=b'{"dayId": "' + day.encode() + b'", "name": "\\ud83d\\ude00"}', headers=JSON)
    assert r.status_code == 200 and r.json()["data"]["change"]["days"][0]["stops"][0]["name"] == "\U0001F600"
    assert client.get(f"/api/trips/{trip['id']}").status_code == 200


def test_nan_infinity_and_huge_integers_are_malformed_not_500(client):
    signup(client, "alice")
    trip = new_trip(client)
    day = trip["days"][0]["id"]
    url = f"/api/trips/{trip['id']}/ops/insert_stop"
    for raw in (b'{"dayId": "%s", "name": "x", "lat": NaN, "lng": 1}' % day.encode(),
                b'{"dayId": "%s", "name": "x", "durationMin": Infinity}' % day.encode(),
                b'{"dayId": "%s", "name": "x", "durationMin": %s}' % (day.encode(), b"9" * 5000)):
        r = client.post(url, content=raw, headers=JSON)
        assert r.status_code == 400 and r.json()["error"]["code"] == "malformed_json", r.text
    r = op(client, trip["id"], "insert_stop", dayId=day, name="x", durationMin=10**30)
    assert r.status_code == 422 and r.json()["error"]["field"] == "durationMin"


def test_json_bodies_over_their_limit_are_413_before_parsing(client):
    big = b'{"username": "alice", "password": "' + b"x" * (bodies.SMALL_JSON + 10) + b'"}'
    r = client.post("/api/auth/signin", content=big, headers=JSON)
    assert r.status_code == 413 and r.json()["error"]["code"] == "too_large"
    signup(client, "alice")
    trip = new_trip(client)
    day = trip["days"][0]["id"]
    # An op may be larger than small JSON (the longest note, each character an
    # escaped surrogate pair, and generous whitespace), up to its own limit.
    note = "\\ud83d\\ude00" * 4000
    gap = " " * 20_000
    raw = f'{{"dayId": "{day}", "name": "x",{gap}"note": "{note}"}}'.encode()
    assert bodies.SMALL_JSON < len(raw) < bodies.OP_BODY
    assert client.post(f"/api/trips/{trip['id']}/ops/insert_stop", content=raw, headers=JSON).status_code == 200
    r = client.post(f"/api/trips/{trip['id']}/ops/insert_stop", content=b" " * (bodies.OP_BODY + 1), headers=JSON)
    assert r.status_code == 413
    assert client.post("/api/trips", content=raw, headers=JSON).status_code == 413


def _stream_chunked(port: int, path: str, headers: dict[str, str], chunks, *, chunk_size: int) -> tuple[int, int]:
    """Send a chunked request until the server answers (or the chunks run
    out); returns (status, bytes of body sent)."""
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nTransfer-Encoding: chunked\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
        sock.sendall(head.encode())
        for chunk in chunks:
            readable, _, _ = select.select([sock], [], [], 0)
            if readable:
                break
            try:
                sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(chunk)
        else:
            try:
                sock.sendall(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass
        answer = b""
        while b"\r\n" not in answer:
            data = sock.recv(4096)
            if not data:
                break
            answer += data
    return int(answer.split(b" ", 2)[1]), sent


def test_a_chunked_json_body_is_cut_off_at_its_limit(settings):
    chunk = b"x" * (64 * 1024)
    with LiveServer(create_app(settings)) as server:
        body = (chunk for _ in range(2000))   # 125 MiB if it were all read
        status, sent = _stream_chunked(server.port, "/api/auth/signin", JSON, body, chunk_size=len(chunk))
    assert status == 413
    assert sent < 64 * 1024 * 1024, "the server kept reading a body far past its limit"


def test_a_chunked_upload_is_refused_before_it_is_spooled(settings, tmp_path, monkeypatch):
    spool = tmp_path / "spool"
    spool.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spool))   # where an over-large part would be spooled
    with LiveServer(create_app(settings)) as server:
        with httpx.Client(base_url=server.url) as http:
            r = http.post("/api/auth/signup", json={"username": "alice", "password": "correct horse"})
            cookie = r.cookies["wayline_session"]
            trip = http.post("/api/trips", json={"title": "T", "startDate": "2026-05-01", "days": 1}).json()["data"]
        boundary = "b0undary"
        head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n"
                f"Content-Type: text/plain\r\n\r\n").encode()
        chunk = b"a" * (256 * 1024)
        body = iter([head, *(chunk for _ in range(800))])   # 200 MiB if it were all read
        status, sent = _stream_chunked(server.port, f"/api/trips/{trip['id']}/media",
                                       {"Content-Type": f"multipart/form-data; boundary={boundary}",
                                        "Cookie": f"wayline_session={cookie}"}, body, chunk_size=len(chunk))
    assert status == 413
    assert sent < 64 * 1024 * 1024
    spooled = sum(p.stat().st_size for p in spool.rglob("*") if p.is_file())
    assert spooled <= bodies.UPLOAD_BODY
    assert not any(Path(settings.uploads_dir).rglob("*.txt"))



def read_until_closed(sock: socket.socket, dribble: bytes = b"", within_s: float = 20.0) -> bytes | None:
    """What the server sends before it closes `sock`, sending `dribble` (one
    byte of a head or a body, say) every tenth of a second meanwhile; None if
    it is still open after `within_s`."""
    deadline, got = time.monotonic() + within_s, b""
    while time.monotonic() < deadline:
        readable, _, _ = select.select([sock], [], [], 0.1)   # the server's bytes or close, or the next byte's turn
        if readable:
            try:
                chunk = sock.recv(4096)
            except ConnectionError:
                return got
            if not chunk:
                return got
            got += chunk
        elif dribble:
            try:
                sock.sendall(dribble)
            except OSError:
                return got
    return None


def test_a_request_head_that_never_arrives_whole_is_closed(settings):
    """uvicorn gives a request's head no deadline: a connection that sent
    nothing, or a header byte every few seconds, stayed open as long as its
    client liked (40 s and counting over HTTP), and some 4,000 of them from
    anyone, no account needed, take every file the process may open. The
    head now has `head_timeout_s` (20 s; half a second here); a request that
    arrives whole is answered, and a kept-alive connection waits as before."""
    with LiveServer(create_app(settings), head_timeout_s=0.5) as server:
        address = ("127.0.0.1", server.port)
        with socket.create_connection(address) as silent, socket.create_connection(address) as slow, \
                socket.create_connection(address) as kept:
            slow.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            kept.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert b"200 OK" in kept.recv(4096)
            assert read_until_closed(silent) == b"", "a connection that sent nothing was kept open"
            assert read_until_closed(slow, dribble=b"X") == b"", "a head sent a byte at a time was kept open"
            # After an answer, a whole request on the kept-alive connection is answered as before.
            kept.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert b"200 OK" in kept.recv(4096)
            # ...but the next head, started and never finished, has its deadline too.
            kept.sendall(b"GET /healthz HTTP/1.1\r\n")
            assert read_until_closed(kept, dribble=b"Y") == b""
        assert httpx.get(f"{server.url}/healthz").status_code == 200



def test_a_body_that_never_arrives_whole_is_408_and_its_connection_closed(settings, monkeypatch):
    """A body sent a byte every few seconds held its connection and request
    as long as its client liked (45 s and counting on the sign-in route, no
    account needed). It has 30 s plus a second per 32 KiB its route may take
    (half a second here), then 408 in the API's shape and the connection ends."""
    monkeypatch.setattr(bodies, "BODY_BASE_S", 0.5)
    monkeypatch.setattr(bodies, "BODY_BYTES_PER_S", 10**12)
    with LiveServer(create_app(settings), head_timeout_s=600) as server:   # the head's own deadline out of the way
        with socket.create_connection(("127.0.0.1", server.port)) as slow:
            slow.sendall(b"POST /api/auth/signin HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 1000\r\n\r\n{")
            answer = read_until_closed(slow, dribble=b" ")
        assert answer is not None, "a body sent a byte at a time was waited for"
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408"), head
        assert json.loads(body)["error"] == {"code": "request_timeout",
                                             "message": "The request took too long to arrive; send it again."}
        with httpx.Client(base_url=server.url) as http:   # a body that arrives is read as before
            r = http.post("/api/auth/signup", json={"username": "alice", "password": "correct horse"})
            assert r.status_code == 201
            trip = http.post("/api/trips", json={"title": "T", "startDate": "2026-05-01", "days": 1})
            assert trip.status_code == 201


# -- the chat route --------------------------------------------------------------------------


@pytest.fixture
def chat(settings, openai_standin):
    with agent_client(settings, openai_standin) as client:
        signup(client, "alice")
        trip = new_trip(client)
        yield client, trip, openai_standin


@pytest.mark.parametrize("text", [5, None, ["a"], {"t": 1}])
def test_a_chat_part_whose_text_is_not_text_is_422(chat, text):
    client, trip, standin = chat
    message = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": text}]}
    r = client.post(f"/api/trips/{trip['id']}/agent/chat", json={"messages": [message]})
    assert r.status_code == 422, r.text
    assert r.json()["error"]["field"].startswith("messages.0.parts.0")
    assert standin.requests == []


def test_lone_surrogates_in_chat_and_agent_messages_are_422(chat):
    client, trip, standin = chat
    raw = json.dumps({"messages": [user_message("x")]}).replace('"x"', '"a\\ud800b"').encode()
    r = client.post(f"/api/trips/{trip['id']}/agent/chat", content=raw, headers=JSON)
    assert r.status_code == 422 and r.json()["error"]["field"] == "messages.0.parts.0.text"
    r = client.post(f"/api/trips/{trip['id']}/agent/messages", content=b'{"text": "hi \\udc00"}', headers=JSON)
    assert r.status_code == 422 and r.json()["error"]["field"] == "text"
    assert standin.requests == []
    assert client.get(f"/api/trips/{trip['id']}/agent/messages").status_code == 200


def test_a_chat_body_over_4_mib_is_413(chat):
    client, trip, _ = chat
    big = json.dumps({"messages": [user_message("x" * (bodies.CHAT_BODY + 1))]}).encode()
    r = client.post(f"/api/trips/{trip['id']}/agent/chat", content=big, headers=JSON)
    assert r.status_code == 413


RAW_SURROGATE = b"a\xed\xa0\x80b"   # U+D800 written as UTF-8 bytes (CESU style): not valid UTF-8


def test_raw_bytes_of_a_lone_surrogate_are_422_not_500(chat):
    """Issue 22, failure 5: `json.loads` on bytes let the raw form through
    (only the escaped form was looked for), and storing it answered 500."""
    client, trip, standin = chat
    r = client.post(f"/api/trips/{trip['id']}/agent/messages", content=b'{"text": "' + RAW_SURROGATE + b'"}',
                    headers=JSON)
    assert r.status_code == 422 and r.json()["error"]["field"] == "text", r.text
    r = client.put("/api/users/preferences", content=b'{"cuisines": ["' + RAW_SURROGATE + b'"]}', headers=JSON)
    assert r.status_code == 422 and r.json()["error"]["field"] == "cuisines.0", r.text
    raw = json.dumps({"messages": [user_message("x")]}).encode().replace(b'"x"', b'"' + RAW_SURROGATE + b'"')
    r = client.post(f"/api/trips/{trip['id']}/agent/chat", content=raw, headers=JSON)
    assert r.status_code == 422 and r.json()["error"]["field"] == "messages.0.parts.0.text", r.text
    # In a UTF-16 body (json.loads reads those too) and as a key, too; other bytes
    # that are not UTF-8 stay a 400.
    r = client.put("/api/users/preferences", content='{"allergies": "x\ud800"}'.encode("utf-16-le", "surrogatepass"),
                   headers=JSON)
    assert r.status_code == 422 and r.json()["error"]["field"] == "allergies", r.text
    r = client.put("/api/users/preferences", content=b'{"' + RAW_SURROGATE + b'": 1}', headers=JSON)
    assert r.status_code == 422, r.text
    r = client.put("/api/users/preferences", content=b'{"cuisines": ["\xff\xfe"]}', headers=JSON)
    assert r.status_code == 400 and r.json()["error"]["code"] == "malformed_json", r.text
    assert standin.requests == []
