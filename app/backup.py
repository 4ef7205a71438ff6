"""`python -m app backup PATH`: a consistent copy of the live database.

SQLite's online backup API copies every page in one step under one read
transaction, so the copy is the database as of one moment even while the
server writes (WAL: the server is never blocked). The copy is written next
to PATH, switched to a single-file journal, checked with
`PRAGMA integrity_check`, and only then renamed onto PATH, so PATH is always
either the previous good backup or the new one.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

BUSY_TIMEOUT_MS = 10_000


class BackupFailed(Exception):
    pass


@dataclass(frozen=True)
class Backup:
    path: Path
    size: int
    trips: int
    users: int


def integrity_problems(conn: sqlite3.Connection) -> list[str]:
    """What `PRAGMA integrity_check` finds (the first few); empty when the file is whole."""
    # A damaged file's messages quote its bytes, which need not be UTF-8.
    conn.text_factory = lambda raw: raw.decode("utf-8", "replace")
    try:
        problems = [row[0] for row in conn.execute("PRAGMA integrity_check")]
    finally:
        conn.text_factory = str
    return [] if problems == ["ok"] else problems[:5]


def counts(conn: sqlite3.Connection) -> tuple[int, int]:
    """Trips and accounts in a copy (what the command's one line reports)."""
    trips = conn.execute("SELECT COUNT(*) FROM trips").fetchone()[0]
    users = conn.execute("SELECT COUNT(*) FROM users").fetchone()[0]
    return trips, users


def backup(db_path: str, dest: str | Path) -> Backup:
    source_file = Path(db_path).resolve()
    if not source_file.is_file():
        raise BackupFailed(f"no database at {source_file}")
    target = Path(dest).resolve()
    if target == source_file:
        raise BackupFailed("the backup must not overwrite the live database")
    if target.is_dir():
        # Else the copy is made beside it and the last rename fails ("Is a directory").
        raise BackupFailed(f"{target} is a directory: name the backup file, e.g. {target / 'wayline.db'}")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    partial.unlink(missing_ok=True)
    # Created empty (an empty file is an empty database) and readable by its
    # owner only, whatever the umask: a backup holds password and session hashes.
    os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    # Read-only: the backup never writes the live file.
    source = sqlite3.connect(f"{source_file.as_uri()}?mode=ro", uri=True)
    try:
        source.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        copy = sqlite3.connect(partial)
        try:
            source.backup(copy)   # all pages in one step: one consistent snapshot
            copy.execute("PRAGMA journal_mode = DELETE")   # one self-contained file
            problems = integrity_problems(copy)
            if problems:
                raise BackupFailed("the copy failed its integrity check: " + "; ".join(problems))
            trips, users = counts(copy)
        finally:
            copy.close()
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    finally:
        source.close()
    try:
        with open(partial, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)   # a copy of every password hash must not stay behind
        raise
    return Backup(target, target.stat().st_size, trips, users)
