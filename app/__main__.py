"""python -m app: settings from the environment, then uvicorn.
python -m app backup PATH: a checked, consistent copy of the live database.
python -m app restore [--from PATH | --replica] [--at TIMESTAMP]: into an empty data directory.
python -m app boot: what the image runs (app/replica.py): with WAYLINE_REPLICA_URL, restore
  the replica if the volume has no database, then serve under `litestream replicate`."""

from __future__ import annotations

import argparse
import errno
import logging
import sqlite3
import sys
import tempfile
from pathlib import Path

from .settings import Settings
from .web.application import create_app
from .web.uvicorn_server import run

USAGE = ("usage: python -m app            (serve)\n"
         "       python -m app backup PATH\n"
         "       python -m app restore (--from PATH | --replica) [--at TIMESTAMP]\n"
         "       python -m app boot       (restore if needed, serve under Litestream: docs/deploy.md)")
PROVIDERS = {"google": "Google Places and Routes", "osm": "OpenStreetMap (Nominatim, Overpass, OSRM)"}


def run_backup(settings: Settings, dest: str) -> int:
    from .backup import BackupFailed, backup

    try:
        done = backup(settings.db_path, dest)
    except (BackupFailed, sqlite3.Error) as exc:
        print(f"backup failed: {exc}", file=sys.stderr, flush=True)
        return 1
    except OSError as exc:
        print(f"backup failed: {os_words(exc)}", file=sys.stderr, flush=True)
        return 1
    print(f"backup: {done.path} ({done.size} bytes, {done.trips} trips, {done.users} accounts), integrity ok",
          flush=True)
    return 0


def run_restore(settings: Settings, args: list[str]) -> int:
    from . import restore

    parser = argparse.ArgumentParser(prog="python -m app restore", description="Restore into an empty data "
                                     "directory (WAYLINE_DB must not exist); the copy is checked first.")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--from", dest="path", metavar="PATH", help="a backup file (python -m app backup)")
    source.add_argument("--replica", action="store_true", help="the Litestream replica (WAYLINE_REPLICA_URL)")
    parser.add_argument("--at", metavar="TIMESTAMP", help="with --replica: as it was then (RFC 3339, UTC)")
    options = parser.parse_args(args)
    if options.at and not options.replica:
        parser.error("--at goes with --replica (a backup file has one moment only)")
    if options.replica and settings.replica is None:
        parser.error("--replica needs WAYLINE_REPLICA_URL (and its keys) in the environment")
    try:
        if options.replica:
            done = restore.from_replica(settings, options.at)
            if done is None:
                raise restore.RestoreFailed("the replica holds no database yet")
        else:
            done = restore.from_backup(settings, options.path)
    except restore.RestoreFailed as exc:
        print(f"restore failed: {exc}", file=sys.stderr, flush=True)
        return 1
    except OSError as exc:
        print(f"restore failed: {os_words(exc)}", file=sys.stderr, flush=True)
        return 1
    print(f"restore: {done.line()}", flush=True)
    return 0


def boot(settings: Settings) -> int:
    if settings.replica is None:
        return serve(settings)
    from . import replica, restore

    try:
        print(restore.restore_on_boot(settings), flush=True)
        replica.exec_replicated(settings)   # does not return
    except (restore.RestoreFailed, replica.ReplicaError, OSError) as exc:
        # Never start empty over a replica we could not read: the new,
        # empty database would be replicated on top of it.
        print(f"boot failed: {exc}", file=sys.stderr, flush=True)
        return 1
    return 0


def os_words(exc: OSError) -> str:
    """An OSError as words ("/data/x is a file, not a directory"), not "[Errno 17] File exists: '/data'"."""
    where = Path(exc.filename) if exc.filename else None
    # mkdir(parents=True) names the first path that is in the way; say what is wrong with it.
    if where is not None and where.exists() and not where.is_dir() and exc.errno in (errno.EEXIST, errno.ENOTDIR):
        return f"{where} is a file, not a directory"
    if where is not None and exc.errno == errno.ENOTDIR:
        blocker = next((p for p in where.parents if p.exists()), None)
        if blocker is not None and not blocker.is_dir():
            return f"{blocker} is a file, not a directory"
    return f"{exc.strerror or exc}" + (f": {where}" if where is not None else "")


def data_dir_problem(settings: Settings) -> str | None:
    """Why the server could not keep its files where the environment says, in
    one line; None when it can. Checked before uvicorn starts: the lifespan's
    own failure is a traceback and "Application startup failed"."""
    folders = [("WAYLINE_DB", Path(settings.db_path).parent)]
    if settings.replica is None:   # with a replica, uploads live in the bucket
        folders.append(("WAYLINE_UPLOADS", Path(settings.uploads_dir)))
    for name, folder in folders:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            tempfile.TemporaryFile(dir=folder).close()
        except OSError as exc:
            why = os_words(exc)
            return (f"{name}: cannot write in {folder} ({why}): point {name} at a directory this user can write, "
                    "or fix its permissions")
    return None


def serve(settings: Settings) -> int:
    problem = data_dir_problem(settings)
    if problem is not None:
        print(problem, file=sys.stderr, flush=True)
        return 1
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for line in settings.key_report():
        print(line, flush=True)
    print(f"places and routes: {PROVIDERS[settings.places_provider]}", flush=True)
    if settings.replica is not None:
        print(f"uploads: in {settings.replica_url} (replicated)", flush=True)
    # Forwarded headers are read by app/web/client_address.py, and only from
    # WAYLINE_TRUSTED_PROXIES: uvicorn must not rewrite the peer from them.
    run(create_app(settings), host=settings.host, port=settings.port, proxy_headers=False, log_level="info")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    settings = Settings.from_env()
    if not args:
        return serve(settings)
    if len(args) == 2 and args[0] == "backup":
        return run_backup(settings, args[1])
    if args[0] == "restore":
        return run_restore(settings, args[1:])
    if args == ["boot"]:
        return boot(settings)
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
