"""The one module that owns SQLite: connections, PRAGMAs, migrations, the
single serialized writer and transactions.

Writes go through `Database.write()`: an asyncio lock serializes them inside
this process and `BEGIN IMMEDIATE` takes SQLite's write lock up front, so two
processes sharing the file queue on the busy timeout instead of failing midway
through a transaction. Reads use a small pool of separate connections; in WAL
mode they never wait for the writer.
"""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Iterable

import aiosqlite

from .ids import utcnow

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
BUSY_TIMEOUT_MS = 10_000
READERS = 2


async def _connect(path: str) -> aiosqlite.Connection:
    conn = await aiosqlite.connect(path, isolation_level=None)  # we manage transactions
    conn.row_factory = sqlite3.Row
    await conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    await conn.execute("PRAGMA foreign_keys = ON")
    await conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def migration_files() -> list[Path]:
    return sorted(MIGRATIONS_DIR.glob("[0-9][0-9][0-9][0-9]_*.sql"))


async def migrate(conn: aiosqlite.Connection) -> list[str]:
    """Apply pending migrations in order; each with its record in one transaction."""
    await conn.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    applied = {row[0] for row in await conn.execute_fetchall("SELECT name FROM _migrations")}
    done = []
    for path in migration_files():
        name = path.stem
        if name in applied:
            continue
        sql = path.read_text(encoding="utf-8")
        record = f"INSERT INTO _migrations (name, applied_at) VALUES ('{name}', '{utcnow()}');"
        try:
            # executescript runs the script verbatim, so the BEGIN/COMMIT here
            # wrap the migration and its record in one transaction.
            await conn.executescript(f"BEGIN IMMEDIATE;\n{sql}\n;{record}\nCOMMIT;")
        except Exception:
            if conn.in_transaction:
                await conn.execute("ROLLBACK")
            raise
        done.append(name)
    return done


class Database:
    def __init__(self, path: str):
        self.path = path
        self._writer: aiosqlite.Connection | None = None
        self._write_lock = asyncio.Lock()
        self._readers: asyncio.Queue[aiosqlite.Connection] = asyncio.Queue()
        self._all_readers: list[aiosqlite.Connection] = []

    @classmethod
    async def open(cls, path: str, *, readers: int = READERS) -> "Database":
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        db = cls(path)
        try:
            db._writer = await _connect(path)
            await db._writer.execute("PRAGMA journal_mode = WAL")
            await migrate(db._writer)
            for _ in range(readers):
                reader = await _connect(path)
                db._all_readers.append(reader)
                db._readers.put_nowait(reader)
        except BaseException:
            await db.close()  # a failed start must not leave connection threads behind
            raise
        return db

    async def close(self) -> None:
        async with self._write_lock:
            for conn in [*self._all_readers, self._writer]:
                if conn is not None:
                    await conn.close()
            self._all_readers.clear()
            self._writer = None

    # -- writes -------------------------------------------------------------

    @asynccontextmanager
    async def write(self) -> AsyncIterator[aiosqlite.Connection]:
        """One write transaction: BEGIN IMMEDIATE ... COMMIT, rolled back on error."""
        async with self._write_lock:
            conn = self._writer
            assert conn is not None, "database is closed"
            await conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                await conn.execute("ROLLBACK")
                raise
            else:
                await conn.execute("COMMIT")

    async def execute_write(self, sql: str, params: Iterable[Any] = ()) -> int:
        """A single-statement write in its own transaction; returns rowcount."""
        async with self.write() as conn:
            cursor = await conn.execute(sql, tuple(params))
            return cursor.rowcount

    # -- reads --------------------------------------------------------------

    @asynccontextmanager
    async def read(self) -> AsyncIterator[aiosqlite.Connection]:
        conn = await self._readers.get()
        try:
            yield conn
        finally:
            self._readers.put_nowait(conn)

    async def fetchall(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        async with self.read() as conn:
            return list(await conn.execute_fetchall(sql, tuple(params)))

    async def fetchone(self, sql: str, params: Iterable[Any] = ()) -> sqlite3.Row | None:
        async with self.read() as conn:
            async with conn.execute(sql, tuple(params)) as cursor:
                return await cursor.fetchone()

    async def fetchval(self, sql: str, params: Iterable[Any] = ()) -> Any:
        row = await self.fetchone(sql, params)
        return None if row is None else row[0]
