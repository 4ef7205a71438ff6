"""The one module that owns SQLite: connections, PRAGMAs, migrations, the
single serialized writer, transactions and the change signal.

Writes run on one writer connection: `Database.write()` (several hops,
holding an asyncio lock throughout) or `transact()`/`queue()` (one hop,
grouped on the writer's thread), each inside `BEGIN IMMEDIATE`, which
takes SQLite's write lock up front, so two processes sharing the file queue
on the busy timeout instead of failing midway through a transaction. Reads
use a small pool of separate connections; in WAL mode they never wait for
the writer.

The change signal: a transaction says which trips it changed and how
(`tx.touch(trip_id, "content")`); right after its COMMIT, and only then, the
database tells every `on_change` listener (the trips in memory, the timeline
heads, live streams) once per trip. A write to a table that holds trip data
without a touch is a bug that would serve stale pages: it is refused (rolled
back) instead of committed, so a forgotten announcement fails its tests.
`tx.after_commit(fn)` runs `fn` after the COMMIT, before the announcement
(the in-memory trips publish the new version there, so listeners see it).

Every aiosqlite call is a hop to the connection's thread and back (about
0.1-0.3 ms under load). `transact(work)` runs a whole write transaction,
BEGIN IMMEDIATE to COMMIT, as ONE hop: `work(tx)` is plain synchronous code
on the writer's thread with the raw sqlite3 connection; transactions queued
this way while the writer is busy commit together (`queue`: group commit,
each failure isolated). `read_with(fn)` does the same for a read. Ops and
trip loads use these; small writes elsewhere use `write()`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import sqlite3
import threading
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar
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
ChangeListener = Callable[[str, frozenset[str]], None]
T = TypeVar("T")


@functools.lru_cache(maxsize=1024)
def _trip_table_written(sql: str) -> str | None:
    """The trip table a statement writes, if any (statements repeat: cached)."""
    match = _WRITE_SQL.match(sql)
    table = match.group(1).lower() if match is not None else None
    return table if table in TRIP_TABLES else None


def _submit(conn: aiosqlite.Connection, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
    """Queue `fn(raw sqlite3 connection, *args)` on the connection's own
    thread, now; the thread runs its queue in order. aiosqlite has no public
    call for this: it is what its `_execute` does (the one place we reach
    inside aiosqlite)."""
    if not conn._running or conn._connection is None:   # as _execute checks: closing or closed
        raise ValueError("the connection is closed")
    future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
    conn._tx.put_nowait((future, lambda: fn(conn._conn, *args)))
    return future


async def on_thread(conn: aiosqlite.Connection, fn: Callable[..., T], *args: Any) -> T:
    """`fn(raw sqlite3 connection, *args)` on the connection's thread, in one hop."""
    return await _submit(conn, fn, *args)


async def _connect(path: str) -> aiosqlite.Connection:
    conn = await aiosqlite.connect(path, isolation_level=None)  # we manage transactions
    conn.row_factory = sqlite3.Row
    await conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    await conn.execute("PRAGMA foreign_keys = ON")
    await conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def _rollback_now(raw: sqlite3.Connection) -> None:
    """Roll back if a transaction is still open: SQLite ends it by itself on
    some errors (a full disk, an I/O error), and a second error from
    ROLLBACK must not hide the first. Runs on the connection's thread."""
    if raw.in_transaction:
        try:
            raw.execute("ROLLBACK")
        except sqlite3.Error:
            log.exception("rollback failed")


async def _rollback(conn: aiosqlite.Connection) -> None:
    """`_rollback_now` for an aiosqlite connection, in one hop."""
    await on_thread(conn, _rollback_now)


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


class Changes:
    """What a transaction will announce after its commit: the trips it
    touched (`touch`) and callbacks to run first (`after_commit`)."""

    def __init__(self) -> None:
        self.changes: dict[str, set[str]] = {}
        self.callbacks: list[Callable[[], None]] = []

    def touch(self, trip_id: str, *kinds: str) -> None:
        if not kinds or not CHANGE_KINDS.issuperset(kinds):
            raise ValueError(f"touch needs kinds among {sorted(CHANGE_KINDS)}, got {kinds!r}")
        self.changes.setdefault(trip_id, set()).update(kinds)

    def after_commit(self, callback: Callable[[], None]) -> None:
        self.callbacks.append(callback)


class SyncTransaction:
    """A write transaction on the writer's thread: the raw connection's
    `execute`, `executemany` and `fetchall`, plus the transaction's `touch`
    and `after_commit`."""

    def __init__(self, conn: sqlite3.Connection, changes: Changes):
        self.conn, self._changes = conn, changes
        self.execute, self.executemany = conn.execute, conn.executemany
        self.touch, self.after_commit = changes.touch, changes.after_commit

    def fetchall(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        return self.conn.execute(sql, tuple(params)).fetchall()


class Transaction(Changes):
    """One write transaction: the writer connection's methods (`execute`,
    `execute_fetchall`, `executemany`, ...), `touch` and `after_commit`, and
    `run(fn, ...)`, which runs `fn(SyncTransaction, ...)` in one hop."""

    def __init__(self, conn: aiosqlite.Connection):
        super().__init__()
        self.conn = conn

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await on_thread(self.conn, lambda raw: fn(SyncTransaction(raw, self), *args, **kwargs))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)


class _Queued:
    """A transaction queued for the writer: its work, what it changed, its
    outcome. Its work may run twice (rolled back in between, when another
    transaction of its group failed), so it only acts through `tx`."""

    __slots__ = ("work", "outcome", "changes", "result", "error")

    def __init__(self, work: Callable[[SyncTransaction], Any], outcome: asyncio.Future[Any]):
        self.work, self.outcome = work, outcome
        self.changes = Changes()
        self.result: Any = None
        self.error: BaseException | None = None

    def run(self, db: Database, raw: sqlite3.Connection) -> None:
        """The work inside the open transaction, from a fresh start."""
        self.changes, self.error = Changes(), None
        db._written.clear()
        self.result = self.work(SyncTransaction(raw, self.changes))
        db._check_touched(self.changes)

    def settle(self) -> None:
        if self.outcome.done():   # the caller was cancelled
            return
        if self.error is None:
            self.outcome.set_result(self.result)
        else:
            self.outcome.set_exception(self.error)


class Database:
    def __init__(self, path: str):
        self.path = path
        self._writer: aiosqlite.Connection | None = None
        self._write_lock = asyncio.Lock()
        self._readers: asyncio.Queue[aiosqlite.Connection] = asyncio.Queue()
        self._all_readers: list[aiosqlite.Connection] = []
        self._written: set[str] = set()   # tables of TRIP_TABLES the open transaction wrote
        self._queued: list[_Queued] = []   # queued transactions the writer has not taken yet
        self._runner_queued = False        # a _run_queued is on its way on the writer's thread
        self._handing: set[asyncio.Task[None]] = set()
        self._queued_lock = threading.Lock()
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
        table = _trip_table_written(sql)
        if table is not None:
            self._written.add(table)

    def _check_touched(self, tx: Changes) -> None:
        if self._written and not tx.changes:
            raise RuntimeError(f"a write to {sorted(self._written)} did not say which trip it changed "
                               "(tx.touch): refused so no page shows stale data")

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
                self._check_touched(tx)
            except BaseException:
                await _rollback(conn)
                raise
            try:
                await conn.execute("COMMIT")
            except BaseException:   # e.g. a full disk at commit: never leave the writer inside a transaction
                await _rollback(conn)
                raise
            self._committed(tx)

    async def transact(self, work: Callable[[SyncTransaction], T]) -> T:
        """`work(tx)` inside BEGIN IMMEDIATE ... COMMIT in one hop to the
        writer's thread; rolled back if it raises."""
        return await self.queue(work)

    def queue(self, work: Callable[[SyncTransaction], T]) -> asyncio.Future[T]:
        """Queue `transact(work)` for the writer's thread, now, and return
        what to await for its result. Queued transactions run in the order
        they were queued, never inside a `write()` transaction. The
        after-commit steps run even if the caller is cancelled meanwhile (the
        commit may already have happened on the thread).

        Group commit: the transactions queued until the writer gets to them
        run together in one BEGIN IMMEDIATE ... COMMIT (one hop, one commit,
        one wake-up of the loop for all of them). The writer is handed them
        by a task, so what other requests queue while the loop finishes its
        current turn joins the group. If any of them fails, that transaction
        is rolled back and they run again one by one, each in its own, so
        each one's outcome is exactly what it would have been alone: a
        failure commits nothing of its own and undoes nothing of the others'."""
        assert self._writer is not None, "database is closed"
        item = _Queued(work, asyncio.get_running_loop().create_future())
        with self._queued_lock:
            self._queued.append(item)
            start, self._runner_queued = not self._runner_queued, True
        if start:   # else the runner on its way to the thread takes this one too
            task = asyncio.ensure_future(self._hand_over())
            self._handing.add(task)
            task.add_done_callback(self._handing.discard)
        return item.outcome

    async def _hand_over(self) -> None:
        """Put a runner on the writer's thread for what is queued, outside
        any `write()` transaction (it holds the lock throughout)."""
        async with self._write_lock:
            if self._writer is None:   # closed meanwhile: nothing will run them
                with self._queued_lock:
                    items, self._queued, self._runner_queued = self._queued, [], False
                for item in items:
                    item.error = sqlite3.ProgrammingError("the database is closed")
                    item.settle()
                return
            taken: list[_Queued] = []
            _submit(self._writer, self._run_queued, taken).add_done_callback(
                functools.partial(self._finish_queued, taken))

    def _run_queued(self, raw: sqlite3.Connection, items: list[_Queued]) -> None:
        """On the writer's thread: every transaction queued so far, taken into `items`."""
        with self._queued_lock:
            items += self._queued
            self._queued, self._runner_queued = [], False
        if len(items) > 1:
            try:
                raw.execute("BEGIN IMMEDIATE")
                for item in items:
                    item.run(self, raw)
                raw.execute("COMMIT")
                return
            except BaseException:   # one failed (or the COMMIT did): each runs again on its own
                _rollback_now(raw)
        for item in items:
            try:
                raw.execute("BEGIN IMMEDIATE")
                item.run(self, raw)
                raw.execute("COMMIT")
            except BaseException as exc:   # a failed COMMIT (a full disk) too: never leave the writer inside one
                _rollback_now(raw)
                item.error = exc

    def _finish_queued(self, items: list[_Queued], done: asyncio.Future[None]) -> None:
        """On the loop, as soon as the thread answers (a callback, not a task,
        so it runs whether or not the callers still wait): in commit order,
        each committed transaction's after-commit steps, then its caller."""
        # Only if the thread could not run them at all (closed under them).
        failure = asyncio.CancelledError() if done.cancelled() else done.exception()
        for item in items:
            if failure is not None:
                item.error = failure
            elif item.error is None:
                self._committed(item.changes)
            item.settle()

    def _committed(self, tx: Changes) -> None:
        """After COMMIT: the transaction's callbacks, then the announcement.
        Neither may undo or fail a committed write, so errors are logged."""
        for callback in tx.callbacks:
            try:
                callback()
            except Exception:
                log.exception("after-commit callback failed")
        for trip_id, kinds in tx.changes.items():
            frozen = frozenset(kinds)
            for listener in self.on_change:
                try:
                    listener(trip_id, frozen)
                except Exception:
                    log.exception("change listener failed")

    async def execute_write(self, sql: str, params: Iterable[Any] = ()) -> int:
        """A single-statement write (of a table no page shows) in its own
        transaction; returns rowcount."""
        async with self.write() as tx:
            cursor = await tx.execute(sql, tuple(params))
            return int(cursor.rowcount)

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

    async def read_with(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(raw sqlite3 connection, *args)` on a reader's thread, in one hop."""
        async with self.read() as conn:
            return await on_thread(conn, fn, *args)

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

