"""HTTP hygiene: error shape, status codes, cross-site refusal, OpenAPI, config."""

from __future__ import annotations

import json

import pytest

import httpx
from starlette.testclient import TestClient

from app.web.application import create_app
from helpers import LiveServer, make_client, new_trip, op, signup, use
from app.routes.openapi import PARAM


def test_config_key_set_is_pinned_and_holds_no_secret(settings):
    secret_settings = settings.with_(openai_api_key="sk-test-abcdefghijklmnopqrstuvwxyz",
                                     google_maps_api_key="AIzaServerKeyServerKeyServerKey12345",
                                     google_maps_browser_key="browser-key")
    with make_client(secret_settings) as client:
        r = client.get("/api/config")
        data = r.json()["data"]
        assert set(data) == {"googleMapsBrowserKey", "aiEnabled", "placesEnabled", "placesProvider", "mapTilesUrl",
                             "mapAttribution", "currencyExponents", "limits", "offlineOps", "memberOps"}
        assert data["googleMapsBrowserKey"] == "browser-key" and data["aiEnabled"] and data["placesEnabled"]
        assert "sk-test" not in r.text and "AIzaServer" not in r.text


def test_map_tiles_default_to_openstreetmap_and_a_deployer_can_change_them(settings, tmp_path):
    with make_client(settings) as client:
        data = client.get("/api/config").json()["data"]
        assert data["mapTilesUrl"] == "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
        assert "OpenStreetMap" in data["mapAttribution"]
    from app.settings import Settings

    env = {"WAYLINE_DB": str(tmp_path / "env.db"), "WAYLINE_UPLOADS": str(tmp_path / "up"),
           "WAYLINE_MAP_TILES_URL": "https://tiles.example/{z}/{x}/{y}.png",
           "WAYLINE_MAP_ATTRIBUTION": "© Example Maps"}
    with make_client(Settings.from_env(env=env, dotenv=None)) as client:
        data = client.get("/api/config").json()["data"]
        assert data["mapTilesUrl"] == "https://tiles.example/{z}/{x}/{y}.png"
        assert data["mapAttribution"] == "© Example Maps"


def test_cross_site_posts_are_refused(client):
    signup(client, "alice")
    trip = new_trip(client)
    url = f"/api/trips/{trip['id']}/ops/add_day"
    assert client.post(url, json={}, headers={"Origin": "https://evil.example"}).status_code == 403
    assert client.post(url, json={}, headers={"Sec-Fetch-Site": "cross-site"}).status_code == 403
    form = client.post(url, content=b"title=x", headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert form.status_code == 403 and form.json()["error"]["code"] == "cross_site"
    plain = client.post(url, content=b'{"title": "x"}', headers={"Content-Type": "text/plain"})
    assert plain.status_code == 403
    same = client.post(url, json={}, headers={"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"})
    assert same.status_code == 200
    assert client.get(f"/api/trips/{trip['id']}").json()["data"]["version"] == trip["version"] + 1


def test_the_origin_must_match_in_scheme_host_and_port(settings):
    """Issue 22, failure 9: `Origin: https://host` was accepted by an http
    server when Sec-Fetch-Site was absent (only the host was compared)."""
    with LiveServer(create_app(settings)) as server, httpx.Client(base_url=server.url) as http:
        here = f"127.0.0.1:{server.port}"
        r = http.post("/api/auth/signup", json={"username": "alice", "password": "correct horse"},
                      headers={"Origin": f"http://{here}"})
        assert r.status_code == 201, r.text
        trip = http.post("/api/trips", json={"title": "T", "startDate": "2026-12-10", "days": 1}).json()["data"]
        url = f"/api/trips/{trip['id']}/ops/add_day"
        for origin in (f"https://{here}", f"http://127.0.0.1:{server.port + 1}", "http://127.0.0.1",
                       f"http://{here}.evil.example", f"ws://{here}"):
            r = http.post(url, json={}, headers={"Origin": origin})
            assert r.status_code == 403 and r.json()["error"]["code"] == "cross_site", origin
        assert http.post(url, json={}, headers={"Origin": f"HTTP://{here}"}).status_code == 200


def test_behind_a_proxy_the_origin_is_the_public_url(settings):
    public = settings.with_(public_url="https://wayline.example")
    with make_client(public) as client:
        use(client, signup(client, "alice"))   # the cookie is Secure: set it by hand over plain http
        trip = new_trip(client)
        url = f"/api/trips/{trip['id']}/ops/add_day"
        for origin, status in (("https://wayline.example", 200), ("https://wayline.example:443", 200),
                               ("http://wayline.example", 403), ("https://wayline.example:8443", 403),
                               ("http://testserver", 403)):
            assert client.post(url, json={}, headers={"Origin": origin}).status_code == status, origin
    # Without a public URL, a trusted proxy's X-Forwarded-Proto names the scheme the browser used.
    proxied = settings.with_(trusted_proxies=("10.0.0.0/8",))
    with TestClient(create_app(proxied), base_url="http://wayline.example", client=("10.0.0.2", 5000)) as client:
        use(client, signup(client, "bob"))
        trip = new_trip(client)
        url = f"/api/trips/{trip['id']}/ops/add_day"
        tls = {"X-Forwarded-Proto": "https"}
        assert client.post(url, json={}, headers={"Origin": "https://wayline.example", **tls}).status_code == 200
        assert client.post(url, json={}, headers={"Origin": "http://wayline.example", **tls}).status_code == 403
    # From anyone else the header is ignored.
    with TestClient(create_app(proxied), base_url="http://wayline.example", client=("198.51.100.7", 5000)) as client:
        signup(client, "carol")
        trip = new_trip(client)
        url = f"/api/trips/{trip['id']}/ops/add_day"
        r = client.post(url, json={}, headers={"Origin": "https://wayline.example", "X-Forwarded-Proto": "https"})
        assert r.status_code == 403


def test_malformed_json_is_400_and_wrong_types_are_422_naming_the_field(client):
    signup(client)
    trip = new_trip(client)
    day = trip["days"][0]["id"]
    url = f"/api/trips/{trip['id']}/ops/insert_stop"
    bad = client.post(url, content=b"{not json", headers={"Content-Type": "application/json"})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "malformed_json"
    assert client.post(url, json=[1, 2]).status_code == 400
    for args, field in [({"dayId": day, "name": "x", "durationMin": "long"}, "durationMin"),
                        ({"dayId": day, "name": "x", "setTime": "30:00"}, "setTime"),
                        ({"dayId": day, "name": "x", "lat": 200}, "lat"),
                        ({"dayId": day}, "name"),
                        ({"dayId": day, "name": "x", "colour": "red"}, "colour")]:
        r = client.post(url, json=args)
        assert r.status_code == 422, args
        assert r.json()["error"]["field"] == field
    assert op(client, trip["id"], "no_such_op").status_code == 404
    r = client.post(url, json={"dayId": day, "name": "x", "baseVersion": "1"})
    assert r.status_code == 422 and r.json()["error"]["field"] == "baseVersion"


def test_a_misspelt_preference_is_422_naming_it_not_silently_dropped(client):
    signup(client)
    trip = new_trip(client)
    for path in ("/api/users/preferences", f"/api/trips/{trip['id']}/preferences"):
        r = client.put(path, json={"maxPrice": 2})
        assert r.status_code == 422, (path, r.text)
        assert r.json()["error"]["field"] == "maxPrice"
    assert client.get("/api/users/preferences").json()["data"]["saved"] is False   # nothing was saved
    # What GET answers can be sent back as it is (`saved` is ignored).
    mine = {**client.get("/api/users/preferences").json()["data"], "maxPriceLevel": 2}
    r = client.put("/api/users/preferences", json=mine)
    assert r.status_code == 200, r.text
    assert r.json()["data"] == {**mine, "saved": True}
    assert client.get("/api/users/preferences").json()["data"] == {**mine, "saved": True}


@pytest.mark.parametrize("payload", [None, 0, "x", [], {"dayId": None}, {"dayId": {"a": 1}, "name": ["x"]},
                                     {"dayId": "x" * 10_000, "name": "y"}, {"name": "\u0000"}])
def test_odd_bodies_never_cause_a_500(client, payload):
    signup(client)
    trip = new_trip(client)
    for path in (f"/api/trips/{trip['id']}/ops/insert_stop", f"/api/trips/{trip['id']}/ops/update_stop",
                 f"/api/trips/{trip['id']}/ops/add_expense", "/api/trips", f"/api/trips/{trip['id']}/invites"):
        r = client.post(path, content=json.dumps(payload).encode(), headers={"Content-Type": "application/json"})
        assert 400 <= r.status_code < 500, (path, payload, r.status_code, r.text)
        text = r.text.lower()
        assert "traceback" not in text and "sqlite" not in text and "select " not in text


def test_unknown_api_path_is_a_json_404(client):
    r = client.get("/api/nope")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


def test_openapi_describes_every_route(client):
    doc = client.get("/api/openapi.json").json()
    for route in client.app.routes:
        path = getattr(route, "path", "")
        if not path.startswith("/api") and path != "/healthz":
            continue
        documented = doc["paths"][PARAM.sub(r"{\1}", path)]
        for method in route.methods - {"HEAD"}:
            assert method.lower() in documented, (method, path)
            assert documented[method.lower()]["summary"], (method, path)


def test_signin_is_rate_limited_and_errors_are_plain(client):
    signup(client, "alice")
    client.cookies.clear()
    assert client.post("/api/auth/signin", json={"username": "alice", "password": "wrong one"}).status_code == 401
    for _ in range(9):
        client.post("/api/auth/signin", json={"username": "alice", "password": "wrong one"})
    r = client.post("/api/auth/signin", json={"username": "alice", "password": "correct horse"})
    assert r.status_code == 429 and r.json()["error"]["code"] == "rate_limited"


def test_session_cookie_flags(settings):
    with make_client(settings.with_(public_url="https://wayline.example")) as client:
        r = client.post("/api/auth/signup", json={"username": "alice", "password": "correct horse"})
        cookie = r.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=lax" in cookie and "secure" in cookie
    with make_client(settings) as client:
        r = client.post("/api/auth/signup", json={"username": "bob", "password": "correct horse"})
        assert "secure" not in r.headers["set-cookie"].lower()


def test_passwords_and_sessions_are_stored_hashed(client, settings):
    import sqlite3

    user = signup(client, "alice", password="correct horse")
    with sqlite3.connect(settings.db_path) as conn:
        stored = conn.execute("SELECT password_hash FROM users").fetchone()[0]
        sessions = [r[0] for r in conn.execute("SELECT token_hash FROM sessions")]
    assert stored.startswith("scrypt$") and "correct horse" not in stored
    assert user["token"] not in sessions and len(sessions) == 1


def test_the_start_up_lines_say_what_runs_without_each_key_and_never_a_value():
    from app.settings import Settings

    bare = Settings.from_env(env={}, dotenv=None).key_report()
    assert bare == [
        "OPENAI_API_KEY: not set: the AI features are off",
        "GOOGLE_MAPS_API_KEY: not set: OpenStreetMap answers places and routes",
        "GOOGLE_MAPS_BROWSER_KEY: not set: the page's map uses map tiles",
        "WAYLINE_SECRET: generated on first start and kept in the database (fine as it is)",
    ]
    assert not any("missing" in line for line in bare)   # nothing here reads as a fault
    keyed = Settings.from_env(env={"OPENAI_API_KEY": "sk-secret-1", "GOOGLE_MAPS_API_KEY": "g-secret-2",
                                   "GOOGLE_MAPS_BROWSER_KEY": "b-secret-3", "WAYLINE_SECRET": "w-secret-4"},
                              dotenv=None).key_report()
    assert [line.split(": ", 1)[1] for line in keyed] == ["set"] * 4
    assert "secret" not in " ".join(keyed)


def test_api_answers_are_not_sniffed_or_stored(client):
    """Issue 22, item 11: API responses carried neither `nosniff` nor `Cache-Control: no-store`."""
    signup(client, "alice")
    trip = new_trip(client)
    answers = [client.get("/api/auth/me"), client.get("/api/trips"), client.get("/api/trips/nope"),
               client.post(f"/api/trips/{trip['id']}/ops/add_day", json={}, headers={"Origin": "https://evil.example"}),
               client.post("/api/trips", content=b"{", headers={"Content-Type": "application/json"})]
    for r in answers:
        assert r.headers["x-content-type-options"] == "nosniff", r.request.url
        assert r.headers["cache-control"] == "no-store", r.request.url
    # The trip read keeps its ETag revalidation; pages keep their own headers.
    r = client.get(f"/api/trips/{trip['id']}")
    assert r.headers["cache-control"] == "private, no-cache" and r.headers["x-content-type-options"] == "nosniff"
    page = client.get("/")
    assert page.headers["x-frame-options"] == "DENY" and "content-security-policy" in page.headers
    assert page.headers.get_list("x-content-type-options") == ["nosniff"]


def test_a_live_stream_holds_no_frame_of_our_middlewares(settings):
    """A live stream's request lasts hours, and every middleware that awaits
    the app under it keeps its frame that long (about 0.4 KiB a stream each:
    bench/live.py measured 21.7 KiB a stream, over its 20 KiB target). Ours
    hand a request they have nothing to do with straight to the app under
    them: what they return is that app's own awaitable."""
    from app.web.bodies import BodyLimitMiddleware
    from app.web.compression import GzipWhenAccepted
    from app.web.headers import ResponseHeadersMiddleware
    from app.web.idempotent_writes import IdempotencyMiddleware
    from app.web.same_origin import SameOriginMiddleware

    inner = object()

    def app(scope, receive, send):
        return inner

    scope = {"type": "http", "method": "GET", "path": "/api/trips/t1/live", "query_string": b"",
             "headers": [(b"accept-encoding", b"gzip, deflate, br"), (b"accept", b"text/event-stream")]}
    for middleware in (BodyLimitMiddleware(app), GzipWhenAccepted(app), ResponseHeadersMiddleware(app, settings),
                       IdempotencyMiddleware(app), SameOriginMiddleware(app, settings)):
        assert middleware(scope, None, None) is inner, type(middleware).__name__
