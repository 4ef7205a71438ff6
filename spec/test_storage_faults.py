"""A full disk or a read-only database (issue 12, failure 6): writes answer
503 `storage_unavailable` in plain words, reads keep working, nothing is
half-written, and the server recovers by itself when space returns. Real
SQLite files: `max_page_count` on the writer makes the file "full",
`query_only` makes it refuse writes as a read-only file does."""

from __future__ import annotations

import asyncio

import logging
import os
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from app.tls import tls_context
from helpers import make_client, new_trip, op, png_bytes, signup


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


# -- uploads on a full disk ------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]


class ServerOnSmallDisk:
    """`python -m app` whose uploads folder is a 512 KiB tmpfs of its own: a
    real full disk (ENOSPC from the kernel) without touching the machine's.
    `unshare -rm` gives the server a private mount namespace (no root needed
    where user namespaces are allowed); the test sees its view through
    /proc/<pid>/root."""

    def __init__(self, tmp: Path):
        self.uploads = tmp / "uploads"
        self.uploads.mkdir()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "WAYLINE_DB": str(tmp / "wayline.db"), "WAYLINE_UPLOADS": str(self.uploads),
               "HOST": "127.0.0.1", "PORT": str(self.port), "PYTHONPATH": str(ROOT)}
        script = f'mount -t tmpfs -o size=512k tmpfs "{self.uploads}" && exec "{sys.executable}" -m app'
        self.log = tmp / "server.log"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(["unshare", "-rm", "sh", "-c", script], cwd=tmp, env=env,
                                         stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while True:
            assert self.proc.poll() is None, self.log.read_text()
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2, verify=tls_context()).status_code == 200:
                    break
            except httpx.TransportError:
                assert time.monotonic() < deadline, self.log.read_text()
                time.sleep(0.05)

    def files(self) -> list[str]:
        """What the server sees in its uploads folder (the tmpfs)."""
        seen = Path(f"/proc/{self.proc.pid}/root") / self.uploads.relative_to("/")
        return sorted(str(p.relative_to(seen)) for p in seen.rglob("*") if p.is_file())

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=60)


def test_an_upload_on_a_full_disk_is_503_and_leaves_no_partial_file(tmp_path):
    """Issue 22, failure 6: it answered 500 and left `<id>.part` behind."""
    server = ServerOnSmallDisk(tmp_path)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            r = http.post("/api/auth/signup", json={"username": "alice", "password": "correct horse"})
            assert r.status_code == 201, r.text
            trip = http.post("/api/trips", json={"title": "T", "startDate": "2026-12-10", "days": 1}).json()["data"]
            photo = png_bytes(8 + 200 * 1024)
            saved = []
            for i in range(5):
                r = http.post(f"/api/trips/{trip['id']}/media", files={"file": (f"p{i}.png", photo, "image/png")})
                if r.status_code != 201:
                    break
                saved.append(r.json()["data"])
            assert len(saved) == 2, [s["url"] for s in saved]
            assert r.status_code == 503, r.text
            error = r.json()["error"]
            assert error["code"] == "storage_unavailable" and "errno" not in r.text.lower()
            # No partial file, no record of the refused one; the others are whole.
            assert server.files() == sorted(f"{trip['id']}/{s['url'].rsplit('/', 1)[1]}" for s in saved)
            assert len(http.get(f"/api/trips/{trip['id']}/media").json()["data"]["media"]) == 2
            assert http.get(saved[0]["url"]).content == photo
            # Space returns (a trip and its files deleted): uploads work again, no restart.
            assert http.delete(f"/api/trips/{trip['id']}").status_code == 200
            other = http.post("/api/trips", json={"title": "U", "startDate": "2026-12-10", "days": 1}).json()["data"]
            r = http.post(f"/api/trips/{other['id']}/media", files={"file": ("p.png", photo, "image/png")})
            assert r.status_code == 201, r.text
    finally:
        server.stop()
