"""Idempotency-Key on writes (app/idempotency.py, app/web/idempotent_writes.py):
a write sent again with the same key is applied once and answered with the
first answer; a different body under the same key is a 422; repeats sent at
the same time (real concurrency, on uvicorn) still apply once."""

from __future__ import annotations

import asyncio
import sqlite3
import time

import anyio
import httpx

from app.idempotency import fingerprint
from app.web.application import create_app
from helpers import LiveServer, join, make_client, new_trip, signup, use

PASSWORD = "correct horse"


def keyed(client, path, body, key, method="POST"):
    return client.request(method, path, json=body, headers={"Idempotency-Key": key})


def stops_of(client, trip_id, day=0):
    return client.get(f"/api/trips/{trip_id}").json()["data"]["days"][day]["stops"]


def test_an_op_sent_twice_with_one_key_is_applied_once_and_answered_the_same(client):
    signup(client, "alice")
    trip = new_trip(client)
    path = f"/api/trips/{trip['id']}/ops/insert_stop"
    body = {"dayId": trip["days"][0]["id"], "name": "Belém Tower"}
    first = keyed(client, path, body, "k-1")
    again = keyed(client, path, body, "k-1")
    assert first.status_code == again.status_code == 200
    assert again.content == first.content
    assert again.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers
    # A replayed answer holds a trip like the first: never sniffed, never stored by a browser or proxy.
    assert (again.headers["x-content-type-options"], again.headers["cache-control"]) == ("nosniff", "no-store")
    assert [s["name"] for s in stops_of(client, trip["id"])] == ["Belém Tower"]
    assert client.get(f"/api/trips/{trip['id']}").json()["data"]["version"] == first.json()["data"]["change"]["version"]
    # Another key is another write.
    assert keyed(client, path, body, "k-2").status_code == 200
    assert len(stops_of(client, trip["id"])) == 2


def test_several_edits_as_one_change_sent_twice_with_one_key_are_applied_once(client):
    # POST /ops (a review fix, a suggestion's patch) is a write like any other:
    # a resend after a lost answer adds nothing and gets the first answer.
    signup(client, "alice")
    trip = new_trip(client)
    day = trip["days"][0]["id"]
    body = {"edits": [{"op": "insert_stop", "args": {"dayId": day, "name": "Belém Tower"}},
                      {"op": "insert_stop", "args": {"dayId": day, "name": "Jerónimos"}}]}
    first = keyed(client, f"/api/trips/{trip['id']}/ops", body, "e-1")
    again = keyed(client, f"/api/trips/{trip['id']}/ops", body, "e-1")
    assert first.status_code == again.status_code == 200
    assert again.content == first.content and again.headers["idempotent-replayed"] == "true"
    assert [s["name"] for s in stops_of(client, trip["id"])] == ["Belém Tower", "Jerónimos"]
    assert client.get(f"/api/trips/{trip['id']}").json()["data"]["version"] == trip["version"] + 1


def test_a_repeat_with_another_body_is_refused_and_changes_nothing(client):
    signup(client, "alice")
    trip = new_trip(client)
    path = f"/api/trips/{trip['id']}/ops/insert_stop"
    assert keyed(client, path, {"dayId": trip["days"][0]["id"], "name": "Belém"}, "k").status_code == 200
    r = keyed(client, path, {"dayId": trip["days"][0]["id"], "name": "Sintra"}, "k")
    assert r.status_code == 422
    assert r.json()["error"]["code"] == "idempotency_key_reused"
    r = keyed(client, f"/api/trips/{trip['id']}/ops/add_day", {}, "k")  # another path, same key
    assert r.status_code == 422
    assert [s["name"] for s in stops_of(client, trip["id"])] == ["Belém"]
    assert len(client.get(f"/api/trips/{trip['id']}").json()["data"]["days"]) == 2


def test_comments_and_votes_sent_twice_count_once(client):
    alice = signup(client, "alice")
    trip = new_trip(client)
    r = client.post(f"/api/trips/{trip['id']}/ops/insert_stop", json={"dayId": trip["days"][0]["id"], "name": "Belém"})
    stop = r.json()["data"]["change"]["days"][0]["stops"][0]
    bob = signup(client, "bob")
    join(client, alice, trip["id"], bob)
    base = f"/api/trips/{trip['id']}/stops/{stop['id']}"
    for _ in range(3):
        assert keyed(client, f"{base}/comments", {"body": "Sunset here?"}, "c-1").status_code == 201
        assert keyed(client, f"{base}/vote", {"value": 1}, "v-1", method="PUT").status_code == 200
    assert [c["body"] for c in client.get(f"{base}/comments").json()["data"]["comments"]] == ["Sunset here?"]
    votes = stops_of(client, trip["id"])[0]["votes"]
    assert (votes["up"], votes["mine"]) == (1, 1)


def test_keys_belong_to_their_user(client):
    alice = signup(client, "alice")
    trip = new_trip(client)
    bob = signup(client, "bob")
    join(client, alice, trip["id"], bob)
    path = f"/api/trips/{trip['id']}/ops/insert_stop"
    body = {"dayId": trip["days"][0]["id"], "name": "Belém"}
    assert keyed(use(client, alice), path, body, "same").status_code == 200
    r = keyed(use(client, bob), path, body, "same")
    assert r.status_code == 200 and "idempotent-replayed" not in r.headers
    assert len(stops_of(client, trip["id"])) == 2


def test_refusals_are_kept_too_and_a_bad_key_is_a_clear_400(client):
    signup(client, "alice")
    trip = new_trip(client)
    path = f"/api/trips/{trip['id']}/ops/move_stop"
    body = {"stopId": "gone", "toDayId": trip["days"][0]["id"], "position": 0}
    first = keyed(client, path, body, "m-1")
    assert first.status_code == 404
    again = keyed(client, path, body, "m-1")
    assert (again.status_code, again.content) == (404, first.content)
    assert again.headers["idempotent-replayed"] == "true"
    r = keyed(client, f"/api/trips/{trip['id']}/ops/add_day", {}, "x" * 300)
    assert r.status_code == 400 and r.json()["error"]["code"] == "bad_idempotency_key"
    assert len(client.get(f"/api/trips/{trip['id']}").json()["data"]["days"]) == 2


def test_without_a_session_the_key_changes_nothing(client):
    r = client.post("/api/trips", json={"title": "x"}, headers={"Idempotency-Key": "k"})
    assert r.status_code == 401


def test_a_key_is_forgotten_after_a_day(settings):
    with make_client(settings) as client:
        signup(client, "alice")
        trip = new_trip(client)
        path = f"/api/trips/{trip['id']}/ops/insert_stop"
        body = {"dayId": trip["days"][0]["id"], "name": "Belém"}
        assert keyed(client, path, body, "old").status_code == 200
        # The answer is stored just after it is sent (a repeat meanwhile gets it
        # from memory): age the key once the database holds it.
        deadline = time.monotonic() + 60
        with sqlite3.connect(settings.db_path) as db:
            while db.execute("SELECT status FROM idempotency_keys").fetchone()[0] is None:
                assert time.monotonic() < deadline, "the first answer was never stored"
                time.sleep(0.01)
            db.execute("UPDATE idempotency_keys SET created_at = '2020-01-01T00:00:00.000Z'")
        r = keyed(client, path, body, "old")
        assert r.status_code == 200 and "idempotent-replayed" not in r.headers
        assert len(stops_of(client, trip["id"])) == 2


def test_a_try_again_later_answer_is_not_kept(settings):
    """429 says "try again later", and the outbox does, with the same key: the
    repeat runs again instead of getting the refusal back for a day."""
    with make_client(settings.with_(trips_per_user=1)) as client:
        signup(client, "alice")
        first = new_trip(client)
        payload = {"title": "Porto", "startDate": "2026-12-10", "days": 1, "timezone": "Europe/Lisbon",
                   "currency": "EUR"}
        r = keyed(client, "/api/trips", payload, "t-2")
        assert r.status_code == 429 and r.json()["error"]["code"] == "quota_exceeded"
        assert client.delete(f"/api/trips/{first['id']}").status_code in (200, 204)
        r = keyed(client, "/api/trips", payload, "t-2")
        assert r.status_code == 201 and "idempotent-replayed" not in r.headers
        again = keyed(client, "/api/trips", payload, "t-2")   # from now on the first answer: this one
        assert (again.status_code, again.content) == (201, r.content)
        assert [t["title"] for t in client.get("/api/trips").json()["data"]["trips"]] == ["Porto"]


def test_a_request_cut_short_by_a_restart_is_not_run_again(settings):
    """A row without an answer and no request in flight: the process stopped
    mid-request; whether the change was made is unknown, so it is not made again."""
    with make_client(settings) as client:
        user = signup(client, "alice")
        trip = new_trip(client)
    path = f"/api/trips/{trip['id']}/ops/add_day"
    with sqlite3.connect(settings.db_path) as db:
        db.execute("INSERT INTO idempotency_keys (user_id, key, fingerprint, created_at) "
                   "VALUES (?, 'cut', ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
                   (user["id"], fingerprint("POST", path, "", b"{}")))
    with make_client(settings) as client:
        use(client, user)
        r = keyed(client, path, {}, "cut")
        assert r.status_code == 409 and r.json()["error"]["code"] == "idempotency_unknown"
        assert "not known whether" in r.json()["error"]["message"]
        assert len(client.get(f"/api/trips/{trip['id']}").json()["data"]["days"]) == 2


def test_concurrent_repeats_apply_once_and_all_get_the_first_answer(settings):
    """Twelve copies of one write (and of one comment) race on real sockets."""

    async def scenario(server):
        async with httpx.AsyncClient(base_url=server.url, timeout=20) as alice:
            r = await alice.post("/api/auth/signup", json={"username": "alice", "password": PASSWORD})
            assert r.status_code == 201
            r = await alice.post("/api/trips", json={"title": "Lisbon", "startDate": "2026-12-10", "days": 2})
            trip = r.json()["data"]
            path = f"/api/trips/{trip['id']}/ops/insert_stop"
            body = {"dayId": trip["days"][0]["id"], "name": "Belém"}
            answers = await asyncio.gather(*[alice.post(path, json=body, headers={"Idempotency-Key": "race"})
                                             for _ in range(12)])
            assert {a.status_code for a in answers} == {200}
            assert len({a.content for a in answers}) == 1
            assert sum("idempotent-replayed" not in a.headers for a in answers) == 1
            stop = answers[0].json()["data"]["change"]["days"][0]["stops"][0]
            comments = f"/api/trips/{trip['id']}/stops/{stop['id']}/comments"
            answers = await asyncio.gather(*[alice.post(comments, json={"body": "Go early"},
                                                        headers={"Idempotency-Key": "race-c"}) for _ in range(12)])
            assert {a.status_code for a in answers} == {201}
            # A different body racing under a key in flight is refused, never given the other's answer.
            mixed = await asyncio.gather(*[alice.post(path, json={**body, "name": f"Stop {i}"},
                                                      headers={"Idempotency-Key": "mixed"}) for i in range(6)])
            assert sorted(a.status_code for a in mixed) == [200] + [422] * 5
            trip_now = (await alice.get(f"/api/trips/{trip['id']}")).json()["data"]
            assert [s["name"] for s in trip_now["days"][0]["stops"]] == ["Belém"] + [
                a.json()["data"]["change"]["days"][0]["stops"][-1]["name"] for a in mixed if a.status_code == 200]
            assert len((await alice.get(comments)).json()["data"]["comments"]) == 1

    with LiveServer(create_app(settings)) as server:
        anyio.run(scenario, server)



def test_one_member_cannot_fill_the_disk_with_kept_answers(settings):
    """Every keyed write keeps its whole answer for a day. Unbounded, a member
    repeating a cheap write under new keys kept a whole trip per request
    (`?full=1`): 320 MB in 15 s on a long trip, a full volume for everyone.
    Past what one account may keep (WAYLINE_KEPT_ANSWERS_MB_PER_USER: 32 MiB,
    1 here), a new key is refused before anything runs; repeats of kept keys,
    other members and writes without a key go on."""
    with make_client(settings.with_(kept_answers_mb_per_user=1)) as client:
        bob = signup(client, "bob")
        signup(client, "alice")
        trip = new_trip(client)
        day = trip["days"][0]["id"]
        for i in range(8):
            assert client.post(f"/api/trips/{trip['id']}/ops/insert_stop",
                               json={"dayId": day, "name": f"Stop {i}", "note": "n" * 4000}).status_code == 200
        path = f"/api/trips/{trip['id']}/ops/update_trip?full=1"
        answers = []
        for i in range(200):
            r = keyed(client, path, {"title": f"Lisbon {i}"}, f"fill-{i}")
            if r.status_code != 200:
                break
            answers.append(r)
        assert r.status_code == 429, "every keyed answer was kept"
        error = r.json()["error"]
        assert (error["code"], error["quota"]) == ("quota_exceeded", "kept_answers_mb_per_user")
        assert "Idempotency-Key" in error["message"] and int(r.headers["retry-after"]) == error["retryAfterS"] > 0
        size = len(answers[0].content)
        assert size > 32_000 and 1024 * 1024 <= size * len(answers) < 1024 * 1024 + 3 * size
        with sqlite3.connect(settings.db_path) as db:
            kept = db.execute("SELECT SUM(LENGTH(body)) FROM idempotency_keys").fetchone()[0]
        assert kept < 1024 * 1024 + 3 * size
        # The refused write did not run; a kept key still gets its first answer.
        assert client.get(f"/api/trips/{trip['id']}").json()["data"]["title"] == f"Lisbon {len(answers) - 1}"
        again = keyed(client, path, {"title": "Lisbon 0"}, "fill-0")
        assert (again.status_code, again.content) == (200, answers[0].content)
        # Without a key the member still edits; another member's keys are their own.
        assert client.post(path, json={"title": "Porto"}).status_code == 200
        use(client, bob)
        assert keyed(client, "/api/trips", {"title": "Bob's", "startDate": "2027-01-01", "days": 1},
                     "bob-1").status_code == 201
