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
        second = migrate(db._writer.conn)   # the writer is idle: nothing else uses its connection
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


def unindexed_foreign_keys(conn: sqlite3.Connection) -> list[str]:
    """Foreign keys (table.columns) that no index starts with: deleting a
    parent row would scan the whole child table."""
    missing = []
    tables = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    for table in tables:
        keys: dict[int, list[tuple[int, str]]] = {}
        for fk in conn.execute(f"PRAGMA foreign_key_list({table})"):
            keys.setdefault(fk[0], []).append((fk[1], fk[3]))    # (seq, from column)
        indexes = [[c[2] for c in sorted(conn.execute(f"PRAGMA index_info({ix[1]})"))]
                   for ix in conn.execute(f"PRAGMA index_list({table})")]
        for columns in keys.values():
            wanted = [name for _, name in sorted(columns)]
            if not any(ix[:len(wanted)] == wanted for ix in indexes):
                missing.append(f"{table}.{','.join(wanted)}")
    return missing


def test_every_foreign_key_has_an_index(tmp_path):
    path = str(tmp_path / "w.db")

    async def go():
        await (await Database.open(path)).close()

    anyio.run(go)
    with sqlite3.connect(path) as conn:
        assert unindexed_foreign_keys(conn) == []


def test_the_index_check_finds_a_foreign_key_without_one():
    with sqlite3.connect(":memory:") as conn:
        conn.executescript("CREATE TABLE p (id TEXT PRIMARY KEY);"
                           "CREATE TABLE c (id TEXT PRIMARY KEY, p_id TEXT REFERENCES p(id), "
                           "q_id TEXT REFERENCES p(id));"
                           "CREATE INDEX c_q ON c(q_id, id);")
        assert unindexed_foreign_keys(conn) == ["c.p_id"]


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


def test_resolved_suggestions_come_to_a_database_made_before_them(tmp_path, monkeypatch):
    """0015 (a suggestion's finding, the status 'resolved') on a database that
    already ran every other migration, 0026's suggestion columns included: the
    rows, their dismissals and the later columns are all still there, and every
    connection takes the new status (and still refuses any other)."""
    import app.db as db_module

    path = str(tmp_path / "w.db")
    others = [p for p in migration_files() if not p.stem.startswith("0015")]

    async def go():
        monkeypatch.setattr(db_module, "migration_files", lambda: others)
        db = await Database.open(path)
        await db.close()
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("INSERT INTO users (id, username, display_name, password_hash, created_at) "
                         "VALUES ('u1', 'ann', 'Ann', 'x', 'now')")
            conn.execute("INSERT INTO trips (id, title, start_date, timezone, currency, version, created_by, "
                         "created_at, updated_at) VALUES ('t1', 'T', '2026-12-10', 'UTC', 'EUR', 3, 'u1', 'n', 'n')")
            conn.execute("INSERT INTO agent_suggestions (id, trip_id, status, severity, confidence, reason, "
                         "suggestion_text, patch_json, trip_version, created_at, updated_at, proposed_as) VALUES "
                         "('s1', 't1', 'pending', 'high', 0.9, 'r', 's', '{\"op\":\"update_stop\",\"args\":{}}', 3, "
                         "'n', 'n', 'Claude via Ann')")
            conn.execute("INSERT INTO agent_suggestion_dismissals (suggestion_id, user_id, created_at) "
                         "VALUES ('s1', 'u1', 'n')")
        monkeypatch.undo()
        db = await Database.open(path)   # 0015 now
        await db.close()

    reader = None
    try:
        anyio.run(go)
        with sqlite3.connect(path) as conn:
            assert conn.execute("SELECT id, status, proposed_as, finding_json FROM agent_suggestions").fetchall() == [
                ("s1", "pending", "Claude via Ann", None)]
            assert conn.execute("SELECT suggestion_id, user_id FROM agent_suggestion_dismissals").fetchall() == [
                ("s1", "u1")]
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            assert unindexed_foreign_keys(conn) == []
        reader = sqlite3.connect(path)
        reader.execute("UPDATE agent_suggestions SET status = 'resolved'")   # the new status is allowed
        reader.commit()
        try:
            reader.execute("UPDATE agent_suggestions SET status = 'gone'")
            raise AssertionError("any other status is still refused")
        except sqlite3.IntegrityError:
            reader.rollback()
    finally:
        if reader is not None:
            reader.close()
