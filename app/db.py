"""The one module that owns SQLite: connections, PRAGMAs, migrations, the
writer, transactions, and the announcement of what committed.

Writes have one API: `await db.write(fn)`. The database owns its writer: one
thread with its own standard-library sqlite3 connection, which runs `fn(tx)`
inside BEGIN IMMEDIATE ... COMMIT (rolled back if it raises) and returns what
`fn` returned. `fn` is plain synchronous code doing only database work
through `tx` (`execute`, `executemany`, `fetchall`, `fetchone`, `fetchval`),
and says what it changed: `tx.touch(trip_id, kind)` (app/changes.py's
CHANGE_KINDS) or `tx.announce(event)` for a typed event. BEGIN IMMEDIATE
takes SQLite's write lock up front, so a second process sharing the file
queues on the busy timeout instead of failing midway.

Group commit: the transactions queued while the writer is busy run together
in one BEGIN ... COMMIT (one commit, one wake-up of the event loop for all of
them). If one of them fails, that group is rolled back and each runs again
on its own, so each outcome is exactly what it would have been alone: a
failure commits nothing of its own and undoes nothing of the others'. So
`fn` may run twice and acts only through `tx`.

After the COMMIT, and only then, in commit order: the transaction's
`after_commit` callbacks, then its events go to `db.changes` (a ChangeBus:
caches, heads, live pages, the agent). A write to a table that holds trip
data without an announcement is a bug that would serve stale pages: it is
refused (rolled back) instead of committed, so a forgotten announcement
fails its tests. A caller cancelled while its write is queued does not stop
it: the commit, if it happens, is still announced.

Reads: `await db.read(fn, *args)` runs `fn(connection, *args)` on one of a
few reader threads (each its own connection; in WAL mode they never wait for
the writer); `fetchall`, `fetchone`, `fetchval` for a single statement.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import queue
import re
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar
from collections.abc import Callable, Iterable, Sequence

from .changes import CHANGE_KINDS, ChangeBus, TripChanged, TripEvent
from .ids import utcnow

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
BUSY_TIMEOUT_MS = 10_000
READERS = 2
log = logging.getLogger("wayline")

# Tables whose rows some cache or live page shows: writing them needs an announcement.
TRIP_TABLES = frozenset({"trips", "days", "stops", "expenses", "trip_preferences", "members", "comments",
                         "votes", "agent_messages", "agent_suggestions"})
_WRITE_SQL = re.compile(r"^\s*(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)"
                        r"\s+[\"`\[]?(\w+)", re.IGNORECASE)
T = TypeVar("T")
Params = Iterable[Any]


@functools.lru_cache(maxsize=1024)
def _trip_table_written(sql: str) -> str | None:
    """The trip table a statement writes, if any (statements repeat: cached)."""
    match = _WRITE_SQL.match(sql)
    table = match.group(1).lower() if match is not None else None
    return table if table in TRIP_TABLES else None


def connect(path: str) -> sqlite3.Connection:
    """A connection as the app uses them: we manage transactions, rows by name."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def _rollback(conn: sqlite3.Connection) -> None:
    """Roll back if a transaction is still open: SQLite ends it by itself on
    some errors (a full disk, an I/O error), and a second error from
    ROLLBACK must not hide the first."""
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            log.exception("rollback failed")


def migration_files() -> list[Path]:
    return sorted(MIGRATIONS_DIR.glob("[0-9][0-9][0-9][0-9]_*.sql"))


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply pending migrations in order; each with its record in one transaction."""
    conn.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    applied = {row[0] for row in conn.execute("SELECT name FROM _migrations")}
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
            conn.executescript(f"BEGIN IMMEDIATE;\n{sql}\n;{record}\nCOMMIT;")
        except Exception:
            _rollback(conn)
            raise
        done.append(name)
    return done


class Tx:
    """A write transaction on the writer's thread: the connection's statements,
    and what the transaction will announce after its commit."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        self.written: set[str] = set()   # trip tables its statements wrote (the announcement guard)
        self._touched: dict[str, set[str]] = {}
        self._events: list[TripEvent] = []
        self.callbacks: list[Callable[[], None]] = []

    # The guard reads each statement's text here, on the calling thread with
    # the GIL held: SQLite's trace callback did it from inside each step,
    # taking the GIL once more per statement while the loop held it (a wait
    # of up to the switch interval, on the writer that every op queues on).
    def execute(self, sql: str, params: Params = ()) -> sqlite3.Cursor:
        table = _trip_table_written(sql)
        if table is not None:
            self.written.add(table)
        return self.conn.execute(sql, tuple(params))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> sqlite3.Cursor:
        table = _trip_table_written(sql)
        if table is not None:
            self.written.add(table)
        return self.conn.executemany(sql, rows)

    def fetchall(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        return self.execute(sql, params).fetchall()   # through execute: an UPDATE ... RETURNING is a write

    def fetchone(self, sql: str, params: Params = ()) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self.execute(sql, params).fetchone()
        return row

    def fetchval(self, sql: str, params: Params = ()) -> Any:
        row = self.fetchone(sql, params)
        return None if row is None else row[0]

    def touch(self, trip_id: str, *kinds: str) -> None:
        """The trip changed in these ways (one `TripChanged` per trip, kinds merged)."""
        if not kinds or not CHANGE_KINDS.issuperset(kinds):
            raise ValueError(f"touch needs kinds among {sorted(CHANGE_KINDS)}, got {kinds!r}")
        self._touched.setdefault(trip_id, set()).update(kinds)

    def announce(self, event: TripEvent) -> None:
        """A typed event for the subscribers (app/changes.py), after the commit."""
        self._events.append(event)

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Run `callback` right after the COMMIT, before the events are heard."""
        self.callbacks.append(callback)

    @property
    def announced(self) -> bool:
        return bool(self._touched or self._events)

    def events(self) -> list[TripEvent]:
        touched: list[TripEvent] = [TripChanged(trip_id, frozenset(kinds)) for trip_id, kinds in self._touched.items()]
        return touched + self._events


class _Write:
    """A write queued for the writer: its work, its transaction, its outcome."""

    __slots__ = ("fn", "future", "tx", "result", "error")

    def __init__(self, fn: Callable[[Tx], Any], future: asyncio.Future[Any]):
        self.fn, self.future = fn, future
        self.tx: Tx | None = None
        self.result: Any = None
        self.error: BaseException | None = None

    def run(self, writer: _Writer) -> None:
        """The work inside the open transaction, from a fresh start."""
        self.tx, self.error = Tx(writer.conn), None
        self.result = self.fn(self.tx)
        if self.tx.written and not self.tx.announced:
            raise RuntimeError(f"a write to {sorted(self.tx.written)} did not say which trip it changed "
                               "(tx.touch): refused so no page shows stale data")


class _Writer(threading.Thread):
    """The thread that owns the write connection. Writes wait in `pending`;
    the event loop hands them over at the end of its turn (so what one turn
    queues, and what queues while the thread is busy, goes as one group);
    the thread runs the group as one transaction (or one by one after a
    failure) and hands the outcomes back to the loop in one call."""

    def __init__(self, path: str, loop: asyncio.AbstractEventLoop, finish: Callable[[list[_Write]], None]):
        super().__init__(name="wayline-db-writer", daemon=True)
        self.path, self.loop, self.finish = path, loop, finish
        self.pending: list[_Write] = []          # queued, not yet taken by the thread
        self.lock = threading.Lock()             # guards pending and handing
        self.handing = False                     # a hand-over is on its way: later writes join it
        self.wake: queue.SimpleQueue[bool] = queue.SimpleQueue()   # True: take what is pending; False: stop
        self.ready: asyncio.Future[None] = loop.create_future()
        self.conn: sqlite3.Connection

    def add(self, item: _Write) -> None:
        """On the loop: queue a write; the first one of a group schedules the hand-over."""
        with self.lock:
            self.pending.append(item)
            start, self.handing = not self.handing, True
        if start:
            self.loop.call_soon(self.wake.put, True)

    def stop(self) -> None:
        self.wake.put(False)

    def run(self) -> None:
        try:
            self.conn = connect(self.path)
            self.conn.execute("PRAGMA journal_mode = WAL")
            migrate(self.conn)
        except BaseException as exc:
            self.loop.call_soon_threadsafe(_settle_ready, self.ready, exc)
            return
        self.loop.call_soon_threadsafe(_settle_ready, self.ready, None)
        try:
            while self.wake.get():
                with self.lock:   # everything queued until now commits together
                    batch, self.pending, self.handing = self.pending, [], False
                if batch:
                    self._run(batch)
                    self.loop.call_soon_threadsafe(self.finish, batch)
        finally:
            self.conn.close()

    def _run(self, batch: list[_Write]) -> None:
        conn = self.conn
        if len(batch) > 1:
            try:
                conn.execute("BEGIN IMMEDIATE")
                for item in batch:
                    item.run(self)
                conn.execute("COMMIT")
                return
            except BaseException:   # one failed (or the COMMIT did): each runs again on its own
                _rollback(conn)
        for item in batch:
            try:
                conn.execute("BEGIN IMMEDIATE")
                item.run(self)
                conn.execute("COMMIT")
            except BaseException as exc:   # a failed COMMIT (a full disk) too: never leave a transaction open
                _rollback(conn)
                item.error = exc


def _settle_ready(ready: asyncio.Future[None], error: BaseException | None) -> None:
    if not ready.done():
        if error is None:
            ready.set_result(None)
        else:
            ready.set_exception(error)


class _Reader:
    """A read connection with its own thread."""

    def __init__(self, path: str):
        self.path = path
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wayline-db-reader")
        self.conn: sqlite3.Connection | None = None

    def open(self) -> None:
        self.conn = connect(self.path)

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        assert self.conn is not None
        return fn(self.conn, *args)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class Database:
    def __init__(self, path: str):
        self.path = path
        self.changes = ChangeBus()   # who hears what committed (app/changes.py)
        self._writer: _Writer | None = None
        self._readers: asyncio.Queue[_Reader] = asyncio.Queue()
        self._all_readers: list[_Reader] = []

    @classmethod
    async def open(cls, path: str, *, readers: int = READERS) -> Database:
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        db = cls(path)
        try:
            loop = asyncio.get_running_loop()
            writer = db._writer = _Writer(path, loop, db._finish)
            writer.start()
            await writer.ready   # WAL and the migrations, before any reader opens
            for _ in range(readers):
                reader = _Reader(path)
                db._all_readers.append(reader)
                await loop.run_in_executor(reader.executor, reader.open)
                db._readers.put_nowait(reader)
        except BaseException:
            await db.close()  # a failed start must not leave connection threads behind
            raise
        return db

    async def close(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None and writer.is_alive():
            writer.wake.put(True)    # what is queued before this still runs
            writer.stop()
            await asyncio.to_thread(writer.join)
        loop = asyncio.get_running_loop()
        for reader in self._all_readers:
            await loop.run_in_executor(reader.executor, reader.close)
            reader.executor.shutdown(wait=False)
        self._all_readers.clear()

    # -- writes -------------------------------------------------------------

    def write(self, fn: Callable[[Tx], T]) -> asyncio.Future[T]:
        """Queue `fn(tx)` for the writer, now, as a whole transaction; await
        the result for what `fn` returned (or what it raised)."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        writer = self._writer
        if writer is None:
            future.set_exception(sqlite3.ProgrammingError("the database is closed"))
            return future
        writer.add(_Write(fn, future))
        return future

    def _finish(self, batch: list[_Write]) -> None:
        """On the loop, as soon as the writer answers (a callback, not a task,
        so it runs whether or not the callers still wait): in commit order,
        each committed write's callbacks and events, then its caller."""
        for item in batch:
            if item.error is None and item.tx is not None:
                for callback in item.tx.callbacks:
                    try:
                        callback()
                    except Exception:
                        log.exception("after-commit callback failed")
                self.changes.publish(item.tx.events())
            if item.future.done():   # the caller was cancelled
                continue
            if item.error is None:
                item.future.set_result(item.result)
            else:
                item.future.set_exception(item.error)

    # -- reads --------------------------------------------------------------

    async def read(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(connection, *args)` on a reader's thread."""
        reader = await self._readers.get()
        try:
            return await asyncio.get_running_loop().run_in_executor(reader.executor, reader.call, fn, *args)
        finally:
            self._readers.put_nowait(reader)

    async def fetchall(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        return await self.read(_fetchall, sql, tuple(params))

    async def fetchone(self, sql: str, params: Params = ()) -> sqlite3.Row | None:
        return await self.read(_fetchone, sql, tuple(params))

    async def fetchval(self, sql: str, params: Params = ()) -> Any:
        row = await self.fetchone(sql, params)
        return None if row is None else row[0]

    async def ping(self) -> None:
        await self.fetchval("SELECT 1")


def _fetchall(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> list[sqlite3.Row]:
    return conn.execute(sql, params).fetchall()


def _fetchone(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute(sql, params).fetchone()
    return row
