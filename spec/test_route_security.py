"""Every route of a trip, as an attacker would try it.

The routes are read from the app itself, so a route added later is covered
without touching this file: an outsider (signed in, not a member) gets 404
for every route under /api/trips/{tripId} and for its uploads, an anonymous
caller 401, and malformed bodies get a 4xx, never a 500."""

from __future__ import annotations

import re

import pytest
from starlette.routing import Route

from helpers import join, new_trip, op, png_bytes, signup, use
from standins.google_standin import google_settings
from test_agent_support import agent_client

PNG = png_bytes()


@pytest.fixture
def world(settings, openai_standin, google_standin):
    with agent_client(google_settings(settings, google_standin), openai_standin) as client:
        owner, outsider = signup(client, "owner"), signup(client, "outsider")
        use(client, owner)
        trip = new_trip(client)
        t, day = trip["id"], trip["days"][0]["id"]
        stop = op(client, t, "insert_stop", dayId=day, name="Castle", lat=38.7139, lng=-9.1335)
        stop_id = stop.json()["data"]["trip"]["days"][0]["stops"][0]["id"]
        upload = client.post(f"/api/trips/{t}/media", files={"file": ("a.png", PNG, "image/png")}).json()["data"]
        name = upload["url"].rsplit("/", 1)[1]
        params = {"tripId": t, "dayId": day, "stopId": stop_id, "name": name, "userId": owner["id"],
                  "op": "add_day", "draftId": "0" * 16, "suggestionId": "0" * 16, "inviteId": "0" * 16,
                  "placeId": "ChIJ-castle", "token": "x", "messageId": "0" * 16, "tokenId": "0" * 16,
                  "mediaId": upload["id"]}
        yield {"client": client, "owner": owner, "outsider": outsider, "params": params, "openai": openai_standin}


def trip_routes(app):
    for route in app.routes:
        if isinstance(route, Route) and "{tripId}" in route.path:
            for method in sorted(route.methods - {"HEAD"}):
                yield method, route.path


def fill(path: str, params: dict) -> str:
    path = re.sub(r"{(\w+):\w+}", r"{\1}", path)  # {placeId:path} -> {placeId}
    for key, value in params.items():
        path = path.replace("{" + key + "}", value)
    assert "{" not in path, f"test does not know a parameter of {path}"
    return path


def call(client, method: str, path: str, body: bytes | None = None):
    headers = {"Content-Type": "application/json"} if method != "GET" else {}
    content = (b"{}" if body is None else body) if method != "GET" else None
    return client.request(method, path, content=content, headers=headers)


def test_an_outsider_gets_404_on_every_trip_route(world):
    client = world["client"]
    use(client, world["outsider"])
    routes = list(trip_routes(client.app))
    assert len(routes) > 30  # planner, agent, places, media... all covered
    for method, path in routes:
        r = call(client, method, fill(path, world["params"]))
        assert r.status_code == 404, (method, path, r.status_code, r.text[:200])
        assert r.json()["error"]["code"]
    assert world["openai"].request_count == 0  # nothing reached the model for an outsider


def test_anonymous_callers_get_401_on_every_trip_route(world):
    client = world["client"]
    client.cookies.clear()
    for method, path in trip_routes(client.app):
        r = call(client, method, fill(path, world["params"]))
        assert r.status_code == 401, (method, path, r.status_code, r.text[:200])


def test_malformed_bodies_never_cause_a_500(world):
    client = world["client"]
    use(client, world["owner"])
    for route in client.app.routes:
        if not isinstance(route, Route) or not route.path.startswith("/api/"):
            continue
        for method in sorted(route.methods & {"POST", "PUT", "PATCH", "DELETE"}):
            path = fill(route.path, world["params"])
            for body in (b"{not json", b"[]", b'"text"', b'{"unexpected": {"deep": [1, 2, {"x": null}]}}'):
                r = call(client, method, path, body)
                assert r.status_code < 500, (method, path, body, r.status_code, r.text[:300])
                if r.status_code >= 400:
                    text = r.text.lower()
                    assert "traceback" not in text and "sqlite" not in text


def test_a_viewer_cannot_write_through_any_ai_path(world, settings):
    client = world["client"]
    viewer = signup(client, "viewer")
    join(client, world["owner"], world["params"]["tripId"], viewer, "viewer")
    t = world["params"]["tripId"]
    before = client.get(f"/api/trips/{t}").json()["data"]["version"]
    for path in (f"/api/trips/{t}/drafts/{'0' * 16}/apply", f"/api/trips/{t}/agent/suggestions/{'0' * 16}/approve",
                 f"/api/trips/{t}/agent/suggestions/{'0' * 16}/apply", f"/api/trips/{t}/ops/add_day"):
        r = client.post(path, json={"approved": True} if "suggestions" in path else {})
        assert r.status_code == 403, (path, r.status_code, r.text)
    assert client.get(f"/api/trips/{t}").json()["data"]["version"] == before
