"""A full disk or a read-only database (issue 12, failure 6): writes answer
503 `storage_unavailable` in plain words, reads keep working, nothing is
half-written, and the server recovers by itself when space returns. Real
SQLite files: `max_page_count` on the writer makes the file "full",
`query_only` makes it refuse writes as a read-only file does."""

from __future__ import annotations

import asyncio

import logging
import sqlite3

import pytest

from helpers import make_client, new_trip, op, signup


def on_writer(client, sql: str) -> None:
    """Run a PRAGMA on the app's writer connection (the fault injection)."""
    db = client.app.state.services.db

    def run():
        db._writer.conn.execute(sql)   # the writer is idle between requests: nothing else uses it

    client.portal.call(asyncio.to_thread, run)


def fill_disk(client) -> None:
    db = client.app.state.services.db

    def run():
        pages = db._writer.conn.execute("PRAGMA page_count").fetchone()[0]
        db._writer.conn.execute(f"PRAGMA max_page_count = {pages}")

    client.portal.call(asyncio.to_thread, run)


def assert_plain_503(r) -> None:
    assert r.status_code == 503, r.text
    error = r.json()["error"]
    assert error["code"] == "storage_unavailable"
    assert "sqlite" not in r.text.lower() and "disk is full" not in r.text.lower()


@pytest.fixture
def client(settings):
    with make_client(settings) as c:
        yield c


def test_a_full_disk_refuses_writes_plainly_keeps_reads_and_recovers(client):
    signup(client, "alice")
    trip = new_trip(client)
    day = trip["days"][0]["id"]
    fill_disk(client)
    note = "n" * 4000
    for _ in range(200):
        r = op(client, trip["id"], "insert_stop", dayId=day, name="Stop", note=note)
        if r.status_code != 200:
            break
    assert_plain_503(r)
    # Reads keep working, and what they show is whole: one stop per committed version.
    seen = client.get(f"/api/trips/{trip['id']}")
    assert seen.status_code == 200
    data = seen.json()["data"]
    assert len(data["days"][0]["stops"]) == data["version"] - trip["version"]
    assert client.get(f"/api/trips/{trip['id']}/members").status_code == 200
    assert_plain_503(op(client, trip["id"], "insert_stop", dayId=day, name="Stop", note=note))
    # Space returns: the next write works without a restart.
    on_writer(client, "PRAGMA max_page_count = 1073741823")
    r = op(client, trip["id"], "insert_stop", dayId=day, name="Stop", note=note)
    assert r.status_code == 200, r.text
    assert r.json()["data"]["trip"]["version"] == data["version"] + 1


def test_sign_in_and_sign_up_with_a_full_disk_are_503_not_500(client):
    signup(client, "alice")
    client.cookies.clear()
    for i in range(200):   # sessions fill the last pages
        r = client.post("/api/auth/signin", json={"username": "alice", "password": "correct horse"})
        if r.status_code != 200:
            break
        if i == 0:
            fill_disk(client)
    assert_plain_503(r)
    assert_plain_503(client.post("/api/auth/signup", json={"username": "bob", "password": "correct horse"}))
    assert client.get("/api/auth/me").status_code == 200   # the session it had still reads
    on_writer(client, "PRAGMA max_page_count = 1073741823")
    assert client.post("/api/auth/signin", json={"username": "alice", "password": "correct horse"}).status_code == 200


def test_a_read_only_database_refuses_writes_plainly_and_recovers(client):
    signup(client, "alice")
    trip = new_trip(client)
    on_writer(client, "PRAGMA query_only = 1")
    assert_plain_503(op(client, trip["id"], "add_day"))
    assert_plain_503(client.post("/api/trips", json={"title": "x", "startDate": "2026-01-01", "days": 1}))
    assert client.get(f"/api/trips/{trip['id']}").json()["data"]["version"] == trip["version"]
    assert len(client.get("/api/trips").json()["data"]["trips"]) == 1
    on_writer(client, "PRAGMA query_only = 0")
    assert op(client, trip["id"], "add_day").status_code == 200


def test_other_database_errors_stay_500s_that_are_logged(client, monkeypatch, caplog):
    from app import members

    async def broken(*args, **kwargs):
        raise sqlite3.IntegrityError("UNIQUE constraint failed: members.trip_id")

    signup(client, "alice")
    trip = new_trip(client)
    monkeypatch.setattr(members, "list_members", broken)
    with caplog.at_level(logging.ERROR, logger="wayline"):
        r = client.get(f"/api/trips/{trip['id']}/members")
    assert r.status_code == 500 and r.json()["error"]["code"] == "internal"
    assert "UNIQUE" not in r.text
    assert any("unhandled error" in rec.message for rec in caplog.records)
