"""Quotas (issue 22, failure 7): 60 accounts came from one address in 2 s;
one account uploaded 80 MiB in 0.6 s and created 200 trips of 30 days in
1 s. On a 1 GB volume that fills the disk and every write becomes 503 for
everyone. Each refusal is 429 (too many) or 413 (too large), in plain words."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from app.settings import Settings
from app.tls import tls_context
from app.web.application import create_app
from app.quotas import PLACE_LOOKUPS, Pace
from helpers import LiveServer, make_client, new_trip, op, png_bytes, signup, use
from standins.google_standin import google_settings

PASSWORD = "correct horse"


def assert_quota(r, status: int, quota: str) -> None:
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert error["code"] == "quota_exceeded" and error["quota"] == quota
    assert "quota" not in error["message"].lower() and "_" not in error["message"]   # words, not field names


def test_the_defaults_suit_a_small_group_server():
    s = Settings.from_env(env={}, dotenv=None)
    assert (s.signups_per_address_hour, s.trips_per_user, s.days_per_trip, s.upload_mb_per_trip,
            s.upload_mb_per_user) == (10, 50, 30, 200, 100)
    env = {"WAYLINE_SIGNUPS_PER_ADDRESS_HOUR": "3", "WAYLINE_TRIPS_PER_USER": "4", "WAYLINE_DAYS_PER_TRIP": "90",
           "WAYLINE_UPLOAD_MB_PER_TRIP": "5", "WAYLINE_UPLOAD_MB_PER_USER": "6"}
    s = Settings.from_env(env=env, dotenv=None)
    assert (s.signups_per_address_hour, s.trips_per_user, s.days_per_trip, s.upload_mb_per_trip,
            s.upload_mb_per_user) == (3, 4, 90, 5, 6)
    assert (s.writes_per_user_minute, s.writes_per_user_hour) == (120, 1500)
    paced = Settings.from_env(env={"WAYLINE_WRITES_PER_USER_MINUTE": "7", "WAYLINE_WRITES_PER_USER_HOUR": "70"},
                              dotenv=None)
    assert (paced.writes_per_user_minute, paced.writes_per_user_hour) == (7, 70)
    for bad in ({"WAYLINE_TRIPS_PER_USER": "0"}, {"WAYLINE_WRITES_PER_USER_MINUTE": "0"},
                {"WAYLINE_DAYS_PER_TRIP": "400"}, {"WAYLINE_UPLOAD_MB_PER_USER": "x"}):
        with pytest.raises(SystemExit):
            Settings.from_env(env=bad, dotenv=None)


def test_sign_ups_from_one_address_racing_in_parallel_stop_at_the_quota(settings):
    """60 parallel sign-ups from one address on a real server: exactly the quota get in."""
    with LiveServer(create_app(settings.with_(signups_per_address_hour=5))) as server:
        def sign_up(i: int) -> int:
            # A client of its own per sign-up (one connection, no shared cookies), with the process's
            # TLS context: a default one reads the CA bundle again (about 30 ms of CPU each).
            return httpx.post(f"{server.url}/api/auth/signup", json={"username": f"bot{i}", "password": PASSWORD},
                              timeout=60, verify=tls_context()).status_code

        with ThreadPoolExecutor(max_workers=20) as pool:
            answers = list(pool.map(sign_up, range(60)))
        assert answers.count(201) == 5 and answers.count(429) == 55, answers
        r = httpx.post(f"{server.url}/api/auth/signup", json={"username": "late", "password": PASSWORD})
        assert_quota(r, 429, "signups_per_address_hour")
        assert r.json()["error"]["retryAfterS"] > 0
        # Signing in is not signing up.
        assert httpx.post(f"{server.url}/api/auth/signin", json={"username": "bot0", "password": PASSWORD},
                          timeout=60).status_code in (200, 401)


def test_sign_ups_count_per_address_an_ipv6_network_per_64(settings):
    limited = settings.with_(signups_per_address_hour=2, trusted_proxies=("10.0.0.0/8",))
    with TestClient(create_app(limited), client=("10.0.0.2", 5000)) as client:
        def sign_up(name: str, address: str):
            client.cookies.clear()
            return client.post("/api/auth/signup", json={"username": name, "password": PASSWORD},
                               headers={"X-Forwarded-For": address})

        assert sign_up("ann1", "2001:db8:1:2::1").status_code == 201
        assert sign_up("ann2", "2001:db8:1:2:ffff::7").status_code == 201
        assert_quota(sign_up("ann3", "2001:db8:1:2:abcd::9"), 429, "signups_per_address_hour")
        assert sign_up("bea1", "2001:db8:1:3::1").status_code == 201   # the next /64 is someone else
        # A name already taken is not counted against the address.
        assert sign_up("bea1", "2001:db8:1:3::1").status_code == 409
        assert sign_up("bea2", "2001:db8:1:3::1").status_code == 201
        assert sign_up("cat1", "198.51.100.1").status_code == 201


def test_trips_per_user_hold_under_parallel_creates(settings):
    with LiveServer(create_app(settings.with_(trips_per_user=5))) as server:
        with httpx.Client(base_url=server.url, timeout=60) as alice:
            alice.post("/api/auth/signup", json={"username": "alice", "password": PASSWORD}).raise_for_status()

            def create(i: int) -> int:
                return alice.post("/api/trips", json={"title": f"T{i}", "startDate": "2026-12-10",
                                                      "days": 30}).status_code

            with ThreadPoolExecutor(max_workers=10) as pool:
                answers = list(pool.map(create, range(20)))
            assert answers.count(201) == 5 and answers.count(429) == 15, answers
            r = alice.post("/api/trips", json={"title": "One more", "startDate": "2026-12-10", "days": 1})
            assert_quota(r, 429, "trips_per_user")
            trips = alice.get("/api/trips").json()["data"]["trips"]
            assert len(trips) == 5
            # Deleting one makes room; another account has its own quota.
            assert alice.delete(f"/api/trips/{trips[0]['id']}").status_code == 200
            assert alice.post("/api/trips", json={"title": "Again", "startDate": "2026-12-10",
                                                  "days": 1}).status_code == 201
        with httpx.Client(base_url=server.url, timeout=60) as bob:
            bob.post("/api/auth/signup", json={"username": "bob", "password": PASSWORD}).raise_for_status()
            assert bob.post("/api/trips", json={"title": "B", "startDate": "2026-12-10", "days": 1}).status_code == 201


def test_days_per_trip(settings):
    with TestClient(create_app(settings.with_(days_per_trip=3))) as client:
        signup(client, "alice")
        r = client.post("/api/trips", json={"title": "Long", "startDate": "2026-12-10", "days": 4})
        assert_quota(r, 413, "days_per_trip")
        assert client.get("/api/trips").json()["data"]["trips"] == []
        trip = new_trip(client, days=2)
        assert op(client, trip["id"], "add_day").status_code == 200
        assert_quota(op(client, trip["id"], "add_day"), 413, "days_per_trip")
        after = client.get(f"/api/trips/{trip['id']}").json()["data"]
        assert len(after["days"]) == 3 and after["version"] == trip["version"] + 1
    # A deployment may allow more than the default 30.
    with TestClient(create_app(settings.with_(days_per_trip=60))) as client:
        signup(client, "carol")
        assert len(new_trip(client, days=45)["days"]) == 45


def upload(client, trip_id: str, size: int, name: str = "photo.png"):
    data = png_bytes(size)
    return client.post(f"/api/trips/{trip_id}/media", files={"file": (name, data, "image/png")})


def stored(settings) -> list[Path]:
    return [p for p in Path(settings.uploads_dir).rglob("*") if p.is_file()]


def test_upload_bytes_per_trip_and_per_user(settings):
    MiB = 1024 * 1024
    limited = settings.with_(upload_mb_per_trip=3, upload_mb_per_user=4)
    with TestClient(create_app(limited)) as client:
        alice, bob = signup(client, "alice"), signup(client, "bob")
        use(client, alice)
        first, second = new_trip(client), new_trip(client)
        for _ in range(2):
            assert upload(client, first["id"], MiB).status_code == 201
        r = upload(client, first["id"], MiB + 1)
        assert_quota(r, 413, "upload_bytes_per_trip")
        assert upload(client, first["id"], MiB).status_code == 201          # exactly 3 MiB fits
        assert upload(client, second["id"], MiB).status_code == 201         # alice: 4 MiB in all
        assert_quota(upload(client, second["id"], 1024), 413, "upload_bytes_per_user")
        assert len(stored(settings)) == 4                                   # nothing written for a refusal
        # The trip's room is shared by its members; bob's own room is untouched.
        token = client.post(f"/api/trips/{first['id']}/invites", json={"role": "editor"}).json()["data"]["token"]
        use(client, bob)
        client.post(f"/api/invites/{token}/accept", json={})
        assert_quota(upload(client, first["id"], 1024), 413, "upload_bytes_per_trip")
        assert upload(client, new_trip(client)["id"], 2 * MiB - 1024).status_code == 201


def test_parallel_uploads_cannot_pass_the_quota_together(settings):
    """80 MiB went up in 0.6 s: 16 parallel uploads of 1.5 MiB against a 5 MiB room."""
    limited = settings.with_(upload_mb_per_trip=5, upload_mb_per_user=5)
    with LiveServer(create_app(limited)) as server, httpx.Client(base_url=server.url, timeout=60) as http:
        http.post("/api/auth/signup", json={"username": "alice", "password": PASSWORD}).raise_for_status()
        trip = http.post("/api/trips", json={"title": "T", "startDate": "2026-12-10", "days": 1}).json()["data"]
        photo = png_bytes(8 + 1536 * 1024)

        def send(i: int) -> int:
            return http.post(f"/api/trips/{trip['id']}/media",
                             files={"file": (f"p{i}.png", photo, "image/png")}).status_code

        with ThreadPoolExecutor(max_workers=16) as pool:
            answers = list(pool.map(send, range(16)))
        assert answers.count(201) == 3 and answers.count(413) == 13, answers
        media = http.get(f"/api/trips/{trip['id']}/media").json()["data"]["media"]
        assert len(media) == 3 and sum(m["size"] for m in media) <= 5 * 1024 * 1024
        assert len(stored(limited)) == 3   # a refused file written before the last check is removed


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_an_accounts_changes_are_paced_per_minute_and_hour_and_refused_whole(settings):
    """One account writing in a loop grew the database for everyone; a
    person's pace passes. Past the minute's or the hour's count a write is
    429 with Retry-After, and changes nothing; reads, signing out and other
    members go on."""
    clock = Clock()
    with make_client(settings.with_(writes_per_user_minute=5, writes_per_user_hour=8),
                     writes=Pace(clock=clock)) as client:
        bob = signup(client, "bob")
        alice = signup(client, "alice")
        trip = new_trip(client)   # alice's first write
        day = trip["days"][0]["id"]
        for i in range(4):
            assert op(client, trip["id"], "insert_stop", dayId=day, name=f"Stop {i}").status_code == 200
        version = client.get(f"/api/trips/{trip['id']}").json()["data"]["version"]
        r = op(client, trip["id"], "insert_stop", dayId=day, name="One too many")
        assert_quota(r, 429, "writes_per_user_minute")
        wait = int(r.headers["Retry-After"])
        assert 1 <= wait <= 61 and r.json()["error"]["retryAfterS"] == wait
        assert r.json()["error"]["message"].startswith("You are making changes faster than Wayline takes them")
        assert client.get(f"/api/trips/{trip['id']}").json()["data"]["version"] == version, "nothing changed"
        use(client, bob)
        new_trip(client, title="Bob's")   # his own pace
        use(client, alice)
        clock.now += 61   # a minute later: three more make eight in the hour
        for i in range(3):
            assert op(client, trip["id"], "insert_stop", dayId=day, name=f"Later {i}").status_code == 200
        clock.now += 61
        r = op(client, trip["id"], "insert_stop", dayId=day, name="Past the hour's")
        assert_quota(r, 429, "writes_per_user_hour")
        assert 3000 < int(r.headers["Retry-After"]) <= 3600
        assert client.post("/api/auth/signout", json={}).status_code == 200, "signing out is never paced"


def test_an_accounts_place_lookups_are_paced_before_google_is_asked(settings, google_standin):
    """A search, places nearby and a place's details may each be a paid
    Google call: one account looking places up in a loop spent without end.
    Past the minute's or the hour's count a lookup is 429 with Retry-After
    and Google is not asked; a lookup the server refuses as invalid is not
    counted; another member looks up at their own pace."""
    clock = Clock()
    paced = google_settings(settings, google_standin).with_(place_lookups_per_user_minute=3,
                                                            place_lookups_per_user_hour=5)
    with make_client(paced, place_lookups=Pace(PLACE_LOOKUPS, clock=clock)) as client:
        bob = signup(client, "bob")
        alice = signup(client, "alice")
        trip = new_trip(client)
        t = trip["id"]
        assert op(client, t, "update_trip", destination={"name": "Lisbon", "lat": 38.7223,
                                                         "lng": -9.1393}).status_code == 200
        r = client.post(f"/api/trips/{t}/invites", json={"role": "viewer"})
        token = r.json()["data"]["token"]
        found = client.get(f"/api/trips/{t}/places/search", params={"q": "pastéis"})
        assert found.status_code == 200 and found.json()["data"]["places"]
        assert client.get(f"/api/trips/{t}/places/search", params={"q": " "}).status_code == 422  # not counted
        assert client.get(f"/api/trips/{t}/places/nearby").status_code == 200
        place_id = found.json()["data"]["places"][0]["placeId"]
        assert client.get(f"/api/trips/{t}/places/{place_id}").status_code == 200
        asked = sum(google_standin.calls.values())
        r = client.get(f"/api/trips/{t}/places/search", params={"q": "tiles"})
        assert_quota(r, 429, "place_lookups_per_user_minute")
        assert 1 <= int(r.headers["Retry-After"]) <= 61
        assert r.json()["error"]["message"].startswith("You are looking places up faster than Wayline")
        assert_quota(client.get(f"/api/trips/{t}/places/nearby"), 429, "place_lookups_per_user_minute")
        assert sum(google_standin.calls.values()) == asked, "Google is not asked past the pace"
        use(client, bob)
        assert client.post(f"/api/invites/{token}/accept", json={}).status_code == 200
        assert client.get(f"/api/trips/{t}/places/search", params={"q": "tiles"}).status_code == 200  # his own
        use(client, alice)
        clock.now += 61
        for q in ("castle", "tram"):
            assert client.get(f"/api/trips/{t}/places/search", params={"q": q}).status_code == 200
        clock.now += 61
        r = client.get(f"/api/trips/{t}/places/search", params={"q": "fado"})
        assert_quota(r, 429, "place_lookups_per_user_hour")
        assert 3000 < int(r.headers["Retry-After"]) <= 3600
        assert "type the place's details yourself" in r.json()["error"]["message"]
        assert op(client, t, "insert_stop", dayId=trip["days"][0]["id"], name="Fado house").status_code == 200
