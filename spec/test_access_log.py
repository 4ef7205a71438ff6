"""The access log (app/web/access_log.py): uvicorn's line for every answer,
written once per turn of the event loop, never holding a token that opens a
trip (an invite's, a calendar feed's)."""

from __future__ import annotations

import io
import re

import httpx

from app.web.access_log import AccessLog, redact
from app.web.application import create_app
from helpers import LiveServer, make_client, new_trip, signup, use

LINE = re.compile(r'^INFO:     127\.0\.0\.1:\d+ - "(?P<method>[A-Z]+) (?P<path>\S+) HTTP/1\.1" (?P<status>\d{3})$')


def test_tokens_in_paths_are_written_as_token_and_nothing_else_changes():
    assert redact("/api/invites/abc123") == "/api/invites/[token]"
    assert redact("/api/invites/abc123/accept") == "/api/invites/[token]/accept"
    assert redact("/invite/abc123?from=mail") == "/invite/[token]?from=mail"
    assert redact("/api/calendar/abc.def.ics") == "/api/calendar/[token].ics"
    assert redact("/api/calendar/abc123") == "/api/calendar/[token]"
    assert redact("/api/trips/t1/calendar.ics") == "/api/trips/t1/calendar.ics"
    assert redact("/api/invitesX/abc") == "/api/invitesX/abc"


def test_every_answer_has_its_line_and_no_token_reaches_the_log(settings):
    with make_client(settings) as client:   # an invite and a calendar feed that really open the trip
        owner = signup(client)
        trip = new_trip(client)
        invite_token = client.post(f"/api/trips/{trip['id']}/invites", json={"role": "viewer"}).json()["data"]["token"]
        feed = client.post(f"/api/trips/{trip['id']}/calendar", json={}).json()["data"]
    feed_token = feed["url"].rsplit("/", 1)[1].removesuffix(".ics")
    log = io.StringIO()
    with (LiveServer(create_app(settings), AccessLog(log)) as server,
          httpx.Client(base_url=server.url, timeout=30) as http):
        assert http.get("/healthz").status_code == 200
        assert http.get(f"/api/invites/{invite_token}").status_code in (200, 401)
        assert http.get(f"/api/calendar/{feed_token}.ics").status_code == 200
        assert http.get(f"/invite/{invite_token}", params={"from": "mail"}).status_code == 200
        assert http.get("/api/trips", params={"q": "a b"}).status_code == 401
        use(http, owner)
        assert http.get(f"/api/trips/{trip['id']}").status_code == 200
    # The server has stopped: every turn that answered has written its lines.
    lines = log.getvalue().splitlines()
    parsed = [LINE.match(line) for line in lines]
    assert all(parsed), lines
    seen = [(m["method"], m["path"], m["status"]) for m in parsed if m is not None]
    assert ("GET", "/healthz", "200") in seen
    assert ("GET", "/api/calendar/[token].ics", "200") in seen
    assert ("GET", "/invite/[token]?from=mail", "200") in seen
    assert ("GET", "/api/trips?q=a+b", "401") in seen
    assert ("GET", f"/api/trips/{trip['id']}", "200") in seen
    assert any(path == "/api/invites/[token]" for _, path, _ in seen)
    assert invite_token not in log.getvalue() and feed_token not in log.getvalue()
