"""The one module that owns SQLite: connections, PRAGMAs, migrations, the
single serialized writer, transactions and the change signal.

Writes go through `Database.write()`: an asyncio lock serializes them inside
this process and `BEGIN IMMEDIATE` takes SQLite's write lock up front, so two
processes sharing the file queue on the busy timeout instead of failing midway
through a transaction. Reads use a small pool of separate connections; in WAL
mode they never wait for the writer.

The change signal: a transaction says which trips it changed and how
(`tx.touch(trip_id, "content")`); right after its COMMIT, and only then, the
database tells every `on_change` listener (the TripDto cache, the timeline
heads, live streams) once per trip. A write to a table that holds trip data
without a touch is a bug that would serve stale pages: it is refused (rolled
back) instead of committed, so a forgotten announcement fails its tests.
"""

from __future__ import annotations

import asyncio
import logging
import re
import sqlite3
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from collections.abc import AsyncIterator, Callable, Iterable

import aiosqlite

from .ids import utcnow

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
BUSY_TIMEOUT_MS = 10_000
READERS = 2
log = logging.getLogger("wayline")

# How a transaction changed a trip (what listeners need to refresh):
# content: days, stops, expenses, details, shared choices (a new version);
# social: comments and votes; members: who belongs and their roles;
# timeline: agent timeline rows; suggestions: a suggestion's status;
# deleted: the trip is gone.
CHANGE_KINDS = frozenset({"content", "social", "members", "timeline", "suggestions", "deleted"})
# Tables whose rows some cache or live page shows: writing them needs a touch.
TRIP_TABLES = frozenset({"trips", "days", "stops", "expenses", "trip_preferences", "members", "comments",
                         "votes", "agent_messages", "agent_suggestions"})
_WRITE_SQL = re.compile(r"^\s*(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)"
                        r"\s+[\"`\[]?(\w+)", re.IGNORECASE)
ChangeListener = Callable[[str, frozenset], None]


async def _connect(path: str) -> aiosqlite.Connection:
    conn = await aiosqlite.connect(path, isolation_level=None)  # we manage transactions
    conn.row_factory = sqlite3.Row
    await conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    await conn.execute("PRAGMA foreign_keys = ON")
    await conn.execute("PRAGMA synchronous = NORMAL")
    return conn


async def _rollback(conn: aiosqlite.Connection) -> None:
    """Roll back if a transaction is still open: SQLite ends it by itself on
    some errors (a full disk, an I/O error), and a second error from
    ROLLBACK must not hide the first."""
    if conn.in_transaction:
        try:
            await conn.execute("ROLLBACK")
        except sqlite3.Error:
            log.exception("rollback failed")


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


class Transaction:
    """One write transaction: the writer connection's methods (`execute`,
    `execute_fetchall`, `executemany`, ...) plus `touch`, which records the
    trips it changes for the after-commit announcement."""

    def __init__(self, conn: aiosqlite.Connection):
        self.conn = conn
        self.changes: dict[str, set[str]] = {}

    def touch(self, trip_id: str, *kinds: str) -> None:
        if not kinds or not CHANGE_KINDS.issuperset(kinds):
            raise ValueError(f"touch needs kinds among {sorted(CHANGE_KINDS)}, got {kinds!r}")
        self.changes.setdefault(trip_id, set()).update(kinds)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)


class Database:
    def __init__(self, path: str):
        self.path = path
        self._writer: aiosqlite.Connection | None = None
        self._write_lock = asyncio.Lock()
        self._readers: asyncio.Queue[aiosqlite.Connection] = asyncio.Queue()
        self._all_readers: list[aiosqlite.Connection] = []
        self._written: set[str] = set()   # tables of TRIP_TABLES the open transaction wrote
        self.on_change: list[ChangeListener] = []

    @classmethod
    async def open(cls, path: str, *, readers: int = READERS) -> Database:
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        db = cls(path)
        try:
            db._writer = await _connect(path)
            await db._writer.execute("PRAGMA journal_mode = WAL")
            await migrate(db._writer)
            await db._writer.set_trace_callback(db._trace)
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

    def _trace(self, sql: str) -> None:
        # Runs on the writer's thread for every statement it executes.
        match = _WRITE_SQL.match(sql)
        if match is not None and match.group(1).lower() in TRIP_TABLES:
            self._written.add(match.group(1).lower())

    @asynccontextmanager
    async def write(self) -> AsyncIterator[Transaction]:
        """One write transaction: BEGIN IMMEDIATE ... COMMIT, rolled back on
        error; after the commit the touched trips are announced."""
        async with self._write_lock:
            conn = self._writer
            assert conn is not None, "database is closed"
            await conn.execute("BEGIN IMMEDIATE")
            self._written.clear()
            tx = Transaction(conn)
            try:
                yield tx
                if self._written and not tx.changes:
                    raise RuntimeError(f"a write to {sorted(self._written)} did not say which trip it changed "
                                       "(tx.touch): refused so no page shows stale data")
            except BaseException:
                await _rollback(conn)
                raise
            try:
                await conn.execute("COMMIT")
            except BaseException:   # e.g. a full disk at commit: never leave the writer inside a transaction
                await _rollback(conn)
                raise
            self._announce(tx.changes)

    def _announce(self, changes: dict[str, set[str]]) -> None:
        for trip_id, kinds in changes.items():
            frozen = frozenset(kinds)
            for listener in self.on_change:
                try:
                    listener(trip_id, frozen)
                except Exception:  # a listener must never undo or fail a committed write
                    log.exception("change listener failed")

    async def execute_write(self, sql: str, params: Iterable[Any] = ()) -> int:
        """A single-statement write (of a table no page shows) in its own
        transaction; returns rowcount."""
        async with self.write() as tx:
            cursor = await tx.execute(sql, tuple(params))
            return cursor.rowcount

    # -- reads --------------------------------------------------------------

    async def ping(self) -> None:
        await self.fetchval("SELECT 1")

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
