"""Migrations: applied in order, each with its record; re-running is a no-op."""

from __future__ import annotations

import sqlite3

import anyio

from app.db import Database, migrate, migration_files

CORE_TABLES = {"app_settings", "users", "sessions", "trips", "members", "invites", "days", "stops", "expenses",
               "comments", "votes", "media", "agent_messages", "user_preferences", "trip_preferences", "_migrations"}


def schema(path: str) -> dict[str, list[str]]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        tables = [r[0] for r in rows]
        return {t: [c[1] for c in conn.execute(f"PRAGMA table_info({t})")] for t in tables}


def test_migrated_schema_and_rerun_is_a_no_op(tmp_path):
    path = str(tmp_path / "w.db")

    async def go():
        db = await Database.open(path)
        await db.close()
        before = schema(path)
        db = await Database.open(path)
        second = await migrate(db._writer)
        await db.close()
        return before, second

    before, second = anyio.run(go)
    assert second == []
    assert CORE_TABLES <= set(before)
    assert before["stops"][:6] == ["id", "trip_id", "day_id", "position", "kind", "name"]
    assert {"seq", "source", "parts_json", "actor_user_id"} <= set(before["agent_messages"])
    assert schema(path) == before
    with sqlite3.connect(path) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY name")]
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert names == [p.stem for p in migration_files()]


def test_a_failing_migration_leaves_no_record(tmp_path, monkeypatch):
    bad_dir = tmp_path / "migrations"
    bad_dir.mkdir()
    (bad_dir / "0001_ok.sql").write_text("CREATE TABLE a (x INTEGER);")
    (bad_dir / "0002_broken.sql").write_text("CREATE TABLE b (x INTEGER); INSERT INTO nowhere VALUES (1);")
    monkeypatch.setattr("app.db.MIGRATIONS_DIR", bad_dir)
    path = str(tmp_path / "x.db")

    async def go():
        try:
            await Database.open(path)
        except sqlite3.OperationalError:
            return True
        return False

    assert anyio.run(go)
    with sqlite3.connect(path) as conn:
        assert [r[0] for r in conn.execute("SELECT name FROM _migrations")] == ["0001_ok"]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "a" in tables and "b" not in tables
