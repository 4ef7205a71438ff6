"""Restoring a database into an empty data directory, checked before it is used.

`python -m app restore --from PATH` takes a backup file (`python -m app
backup`), `--replica [--at TIMESTAMP]` the Litestream replica (app/replica.py)
as it was at that moment. Either way the copy is written next to the
database's path, checked (`PRAGMA integrity_check`; every migration it
records is one this code knows), brought up to date with the pending
migrations, and only then renamed onto the path. A database already there is
never overwritten: restoring over a live file would lose whatever it holds
that the copy does not (docs/deploy.md says how to move one away).

Boot uses the same path (`restore_on_boot`): a machine whose volume has no
database restores the replica before the server starts.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path


from . import replica
from .backup import BUSY_TIMEOUT_MS, counts, integrity_problems
from .db import migrate, migration_files
from .settings import Settings


class RestoreFailed(Exception):
    pass


@dataclass(frozen=True)
class Restored:
    path: Path
    source: str
    trips: int
    users: int
    migrated: list[str]

    def line(self) -> str:
        brought = f", {len(self.migrated)} migrations applied" if self.migrated else ""
        return (f"restored {self.path} from {self.source} ({self.trips} trips, {self.users} accounts){brought}, "
                "integrity ok")


def _sidecars(db: Path) -> list[Path]:
    return [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")]


def ensure_empty(db_path: str) -> Path:
    db = Path(db_path).resolve()
    present = [p for p in _sidecars(db) if p.exists()]
    if present:
        raise RestoreFailed(f"there is already a database at {db}: restore only into an empty data directory "
                            "(stop the server and move the files away first)")
    db.parent.mkdir(parents=True, exist_ok=True)
    return db


def utc_timestamp(text: str) -> str:
    """`--at` as Litestream reads it (RFC 3339 in UTC); a time without a zone is UTC."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise RestoreFailed(f"--at must be a time like 2026-12-01T18:30:00Z, got {text!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _partial(db: Path) -> Path:
    partial = db.with_name(db.name + ".restoring")
    for leftover in _sidecars(partial):   # from a restore that died midway
        leftover.unlink(missing_ok=True)
    return partial


def from_backup(settings: Settings, source: str) -> Restored:
    db = ensure_empty(settings.db_path)
    origin = Path(source).resolve()
    if not origin.is_file():
        raise RestoreFailed(f"no backup file at {origin}")
    partial = _partial(db)
    try:
        reader = sqlite3.connect(f"{origin.as_uri()}?mode=ro", uri=True)
        try:
            reader.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            copy = sqlite3.connect(partial)
            try:
                reader.backup(copy)
            finally:
                copy.close()
        finally:
            reader.close()
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        _discard(partial)
        raise RestoreFailed(f"{origin} is not a readable SQLite database ({exc})") from None
    return _check_and_place(partial, db, str(origin))


def from_replica(settings: Settings, at: str | None = None) -> Restored | None:
    """The replica (as of `at`) into place; None when the bucket has none yet."""
    db = ensure_empty(settings.db_path)
    partial = _partial(db)
    try:
        found = replica.restore_into(settings, partial, utc_timestamp(at) if at else None)
    except replica.ReplicaError as exc:
        _discard(partial)
        raise RestoreFailed(str(exc)) from None
    if not found:
        return None
    location = settings.replica
    source = location.db_url if location is not None else "the replica"
    return _check_and_place(partial, db, source + (f" as of {at}" if at else ""))


def restore_on_boot(settings: Settings) -> str:
    """Before the server starts: the replica when the volume has no database.
    Returns the one line to log."""
    db = Path(settings.db_path).resolve()
    if any(p.exists() for p in _sidecars(db)):
        return f"replica: {db} is here; starting from it (a database on the volume is never replaced)"
    done = from_replica(settings)
    if done is None:
        return f"replica: no database at {db} and none in the replica yet: starting a new one"
    return "replica: " + done.line()


def _check_and_place(partial: Path, db: Path, source: str) -> Restored:
    try:
        conn = sqlite3.connect(partial)
        try:
            conn.execute("PRAGMA journal_mode = DELETE")   # one self-contained file to rename
            problems = integrity_problems(conn)
            if problems:
                raise RestoreFailed(f"the copy from {source} failed its integrity check: " + "; ".join(problems))
            _check_migrations(conn, source)
        finally:
            conn.close()
        migrated = asyncio.run(_migrate(partial))
        conn = sqlite3.connect(partial)
        try:
            trips, users = counts(conn)
        finally:
            conn.close()
        with open(partial, "rb") as handle:
            os.fsync(handle.fileno())
        if db.exists():   # someone started a server meanwhile: never replace it
            raise RestoreFailed(f"a database appeared at {db} while restoring; it was left as it is")
        # Litestream's local state of a database that is gone: left beside the
        # restored one it would describe the wrong history.
        shutil.rmtree(db.with_name(f".{db.name}-litestream"), ignore_errors=True)
        os.replace(partial, db)
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        # (SQLite's message about a damaged file can quote bytes that are not UTF-8.)
        raise RestoreFailed(f"the copy from {source} is not a usable database ({exc})") from None
    finally:
        _discard(partial)
    return Restored(db, source, trips, users, migrated)


def _check_migrations(conn: sqlite3.Connection, source: str) -> None:
    try:
        recorded = {row[0] for row in conn.execute("SELECT name FROM _migrations")}
    except sqlite3.OperationalError:
        raise RestoreFailed(f"the copy from {source} is not a Wayline database (no migrations table)") from None
    unknown = sorted(recorded - {path.stem for path in migration_files()})
    if unknown:
        raise RestoreFailed(f"the copy from {source} was made by a newer Wayline (migrations unknown here: "
                            f"{', '.join(unknown)}): restore it with that version")


def _migrate_now(path: Path) -> list[str]:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        return migrate(conn)
    finally:
        conn.close()


async def _migrate(path: Path) -> list[str]:
    return await asyncio.to_thread(_migrate_now, path)


def _discard(partial: Path) -> None:
    for leftover in _sidecars(partial):
        leftover.unlink(missing_ok=True)
