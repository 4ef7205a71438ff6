"""`python -m app restore --from PATH` (issue 25): a backup file into an empty
data directory, checked before it is used, never over a database that is
there; and `python -m app boot` without a replica is the plain server."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from helpers import make_client, new_trip, op, run_app_cli, signup, wait_until_serving

ROOT = Path(__file__).resolve().parent.parent


def run_app(*args: str, db: Path, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """`python -m app ARGS` in a process of its own, forked with the app already imported."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("WAYLINE_", "AWS_"))}
    return run_app_cli(list(args), cwd=cwd, env={**clean, "WAYLINE_DB": str(db), "PYTHONPATH": str(ROOT), **env})


def a_backup(settings, tmp_path) -> tuple[Path, str]:
    with make_client(settings) as client:
        signup(client, "alice")
        trip = new_trip(client, title="Lisbon")
        assert op(client, trip["id"], "update_trip", title="Lisbon in May").status_code == 200
    backup = tmp_path / "wayline-backup.db"
    done = run_app("backup", str(backup), db=Path(settings.db_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return backup, trip["id"]


def test_a_backup_restores_into_an_empty_directory_and_serves(settings, tmp_path):
    backup, trip_id = a_backup(settings, tmp_path)
    fresh = tmp_path / "new-machine" / "data" / "wayline.db"
    done = run_app("restore", "--from", str(backup), db=fresh, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"restore: restored {fresh} from {backup} (1 trips, 1 accounts)")
    assert done.stdout.strip().endswith("integrity ok")
    assert sorted(p.name for p in fresh.parent.iterdir()) == ["wayline.db"]   # nothing half-done beside it
    with make_client(settings.with_(db_path=str(fresh))) as client:
        client.post("/api/auth/signin", json={"username": "alice", "password": "correct horse"})
        trip = client.get(f"/api/trips/{trip_id}").json()["data"]
        assert trip["title"] == "Lisbon in May" and trip["version"] == 2


def test_restore_never_overwrites_and_refuses_what_it_cannot_trust(settings, tmp_path):
    backup, _ = a_backup(settings, tmp_path)
    live = Path(settings.db_path)
    before = live.read_bytes()
    refused = run_app("restore", "--from", str(backup), db=live, cwd=tmp_path)
    assert refused.returncode == 1 and "already a database" in refused.stderr
    assert live.read_bytes() == before

    # A WAL left behind counts as a database too: restoring beside it would replay it onto the copy.
    lone_wal = tmp_path / "wal-only" / "wayline.db"
    lone_wal.parent.mkdir()
    lone_wal.with_name("wayline.db-wal").write_bytes(b"")
    assert run_app("restore", "--from", str(backup), db=lone_wal, cwd=tmp_path).returncode == 1

    # A copy made by a newer Wayline (a migration this code does not know) is refused, and nothing is left.
    newer = tmp_path / "newer.db"
    newer.write_bytes(backup.read_bytes())
    with sqlite3.connect(newer) as conn:
        conn.execute("INSERT INTO _migrations (name, applied_at) VALUES ('9999_from_the_future', 'x')")
    target = tmp_path / "a" / "wayline.db"
    done = run_app("restore", "--from", str(newer), db=target, cwd=tmp_path)
    assert done.returncode == 1 and "9999_from_the_future" in done.stderr
    assert list(target.parent.iterdir()) == []

    # A damaged file fails its integrity check; a file that is not SQLite says so.
    damaged = tmp_path / "damaged.db"
    data = bytearray(backup.read_bytes())
    page = 4096
    # Scribble over the head of every page after the second (its b-tree header: a scribble in a page's
    # free space, where offset 100 often falls, is no damage SQLite can see, so it depended on the schema).
    for at in range(2 * page, len(data), page):
        data[at:at + 64] = b"\xff" * 64
    damaged.write_bytes(bytes(data))
    done = run_app("restore", "--from", str(damaged), db=target, cwd=tmp_path)
    assert done.returncode == 1 and "restore failed" in done.stderr, done.stdout
    assert list(target.parent.iterdir()) == []
    text = tmp_path / "notes.txt"
    text.write_text("not a database")
    done = run_app("restore", "--from", str(text), db=target, cwd=tmp_path)
    assert done.returncode == 1 and "not a" in done.stderr
    assert list(target.parent.iterdir()) == []

    # Usage mistakes are plain errors.
    assert run_app("restore", db=target, cwd=tmp_path).returncode == 2
    at_without_replica = run_app("restore", "--from", str(backup), "--at", "2026-01-01T00:00:00Z", db=target,
                                 cwd=tmp_path)
    assert at_without_replica.returncode == 2 and "--at goes with --replica" in at_without_replica.stderr
    no_replica = run_app("restore", "--replica", db=target, cwd=tmp_path)
    assert no_replica.returncode == 2 and "WAYLINE_REPLICA_URL" in no_replica.stderr


def test_boot_without_a_replica_is_the_plain_server(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    db = tmp_path / "data" / "wayline.db"
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("WAYLINE_", "AWS_"))}
    log_path = tmp_path / "boot.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "app", "boot"], cwd=tmp_path, stdout=log,
                                stderr=subprocess.STDOUT, env={**clean, "WAYLINE_DB": str(db), "HOST": "127.0.0.1",
                                                               "PORT": str(port), "PYTHONPATH": str(ROOT)})
    try:
        wait_until_serving(proc, f"http://127.0.0.1:{port}", lambda: log_path.read_text(errors="replace"))
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    output = log_path.read_text(errors="replace")
    assert db.is_file()
    assert "replica" not in output and "litestream" not in output.lower()


def test_the_server_refuses_a_bad_environment_in_one_line_before_it_starts(tmp_path):
    """`python -m app` with a port out of range or a data directory it cannot
    write used to die in uvicorn with a traceback ("bind(): port must be
    0-65535", "Application startup failed"). Each is one line saying what to
    set, exit 1, and nothing is served or created."""
    a_file = tmp_path / "data"
    a_file.write_text("a file where the data directory should be")
    db = tmp_path / "ok" / "wayline.db"
    cases = [
        ({"PORT": "99999"}, db, "PORT must be a port number from 1 to 65535, got 99999"),
        ({"PORT": "http"}, db, "PORT must be a number, got 'http'"),
        ({"WAYLINE_REPLICA_URL": "tigris/wayline"}, db, "WAYLINE_REPLICA_URL: must look like s3://bucket/path"),
        ({}, a_file / "wayline.db", f"WAYLINE_DB: cannot write in {a_file} ({a_file} is a file, not a directory): "
                                    "point WAYLINE_DB at a directory this user can write"),
        ({"WAYLINE_UPLOADS": str(a_file / "uploads")}, db,
         f"WAYLINE_UPLOADS: cannot write in {a_file / 'uploads'} ({a_file} is a file, not a directory)"),
    ]
    for env, where, line in cases:
        done = run_app(db=where, cwd=tmp_path, **env)
        assert done.returncode == 1, (env, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, (env, done.stderr)
        assert done.stderr.startswith(line), (env, done.stderr)
        assert not db.exists()
