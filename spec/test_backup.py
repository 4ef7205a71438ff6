"""`python -m app backup PATH` (issue 12): a consistent, checked copy of the
database while a live server writes to it, which restores to a working app."""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import subprocess
import threading

import httpx

from app.web.application import create_app
from helpers import LiveServer, make_client, run_app_cli, signup

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_backup(settings, dest, cwd, umask: int | None = None) -> subprocess.CompletedProcess:
    """`python -m app backup DEST` in a process of its own, forked with the app already imported."""
    env = {**os.environ, "WAYLINE_DB": settings.db_path, "PYTHONPATH": ROOT}
    return run_app_cli(["backup", str(dest)], env=env, cwd=cwd, umask=umask)


def test_backup_of_a_database_a_live_server_is_writing(settings, tmp_path):
    dest = tmp_path / "backups" / "wayline-backup.db"
    stop, warmed_up = threading.Event(), threading.Event()
    acknowledged: list[int] = []
    with LiveServer(create_app(settings)) as server:
        with httpx.Client(base_url=server.url) as http:
            me = http.post("/api/auth/signup", json={"username": "alice", "password": "correct horse"}).json()["data"]
            trip = http.post("/api/trips", json={"title": "Busy", "startDate": "2026-05-01", "days": 1}).json()["data"]

            def writer():   # bounded: at most 2000 writes
                for i in range(2000):
                    if stop.is_set():
                        return
                    r = http.post(f"/api/trips/{trip['id']}/ops/add_expense",
                                  json={"title": f"Coffee {i}", "amountMinor": 250, "currency": "EUR",
                                        "paidBy": me["user"]["id"]})
                    assert r.status_code == 200, r.text
                    acknowledged.append(r.json()["data"]["change"]["version"])
                    if len(acknowledged) == 5:
                        warmed_up.set()

            thread = threading.Thread(target=writer)
            thread.start()
            try:
                assert warmed_up.wait(timeout=30)
                first = run_backup(settings, dest, tmp_path)
                before_second = acknowledged[-1]
                second = run_backup(settings, dest, tmp_path)   # replaces the first
                still_writing = len(acknowledged) < 2000
            finally:
                stop.set()
                thread.join(timeout=30)
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    assert "integrity ok" in second.stdout and still_writing
    assert not dest.with_name(dest.name + ".partial").exists()
    with sqlite3.connect(dest) as copy:
        assert copy.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert copy.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        version = copy.execute("SELECT version FROM trips").fetchone()[0]
        expenses = copy.execute("SELECT COUNT(*) FROM expenses").fetchone()[0]
        ops = copy.execute("SELECT COUNT(*) FROM agent_messages WHERE source = 'operation'").fetchone()[0]
    # One moment of the database: every committed op is whole (its row, its event and its version),
    # and everything acknowledged before the backup started is in it.
    assert version - 1 == ops == expenses
    assert version >= before_second
    # Restoring is copying the file back: the app opens it and serves the trip.
    restored = tmp_path / "restored" / "wayline.db"
    restored.parent.mkdir()
    shutil.copy(dest, restored)
    with make_client(settings.with_(db_path=str(restored))) as client:
        r = client.post("/api/auth/signin", json={"username": "alice", "password": "correct horse"})
        assert r.status_code == 200
        assert client.get(f"/api/trips/{trip['id']}").json()["data"]["version"] == version


def test_backup_refuses_a_missing_database_and_the_live_path(settings, tmp_path):
    missing = run_backup(settings.with_(db_path=str(tmp_path / "nope.db")), tmp_path / "b.db", tmp_path)
    assert missing.returncode == 1 and "no database" in missing.stderr
    with make_client(settings):
        pass
    same = run_backup(settings, settings.db_path, tmp_path)
    assert same.returncode == 1 and "must not overwrite" in same.stderr


def test_backup_files_are_readable_by_their_owner_only(settings, tmp_path):
    """Issue 22, item 11: backups were written 0644, though they hold password
    and session hashes. 0600 whatever the umask, and when replacing an older one."""
    with make_client(settings) as client:
        signup(client, "alice")
    dest = tmp_path / "b.db"
    dest.write_bytes(b"an older, world-readable backup")
    dest.chmod(0o644)
    done = run_backup(settings, dest, tmp_path, umask=0o000)
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(dest.stat().st_mode) == 0o600
    assert sqlite3.connect(dest).execute("SELECT COUNT(*) FROM users").fetchone()[0] == 1
    assert not list(tmp_path.glob("b.db?*"))   # no partial or journal left


def test_a_backup_into_a_folder_or_under_a_file_fails_in_words_and_leaves_no_copy(settings, tmp_path):
    """`backup /data/backups` (a folder, not a file name) used to copy the
    database to /data/backups.partial, fail its rename with "[Errno 21] Is a
    directory" and leave that copy of every password hash behind."""
    with make_client(settings) as client:
        signup(client, "alice")
    folder = tmp_path / "backups"
    folder.mkdir()
    into_folder = run_backup(settings, folder, tmp_path)
    assert into_folder.returncode == 1 and "Traceback" not in into_folder.stderr
    assert into_folder.stderr.strip() == f"backup failed: {folder} is a directory: name the backup file, " \
                                         f"e.g. {folder / 'wayline.db'}"
    assert not list(tmp_path.glob("*.partial")) and list(folder.iterdir()) == []
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a folder")
    under_file = run_backup(settings, a_file / "wayline.db", tmp_path)
    assert under_file.returncode == 1
    assert under_file.stderr.strip() == f"backup failed: {a_file} is a file, not a directory"
