"""python -m app: settings from the environment, then uvicorn.
python -m app backup PATH: a checked, consistent copy of the live database."""

from __future__ import annotations

import logging
import sqlite3
import sys

from .web.application import create_app
from .web.uvicorn_server import run
from .settings import Settings

USAGE = "usage: python -m app            (serve)\n       python -m app backup PATH"
PROVIDERS = {"google": "Google Places and Routes", "osm": "OpenStreetMap (Nominatim, Overpass, OSRM)"}


def run_backup(settings: Settings, dest: str) -> int:
    from .backup import BackupFailed, backup

    try:
        done = backup(settings.db_path, dest)
    except (BackupFailed, sqlite3.Error, OSError) as exc:
        print(f"backup failed: {exc}", file=sys.stderr, flush=True)
        return 1
    print(f"backup: {done.path} ({done.size} bytes, {done.trips} trips, {done.users} accounts), integrity ok",
          flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    settings = Settings.from_env()
    if args:
        if len(args) == 2 and args[0] == "backup":
            return run_backup(settings, args[1])
        print(USAGE, file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for line in settings.key_report():
        print(line, flush=True)
    print(f"places and routes: {PROVIDERS[settings.places_provider]}", flush=True)
    # Forwarded headers are read by app/web/client_address.py, and only from
    # WAYLINE_TRUSTED_PROXIES: uvicorn must not rewrite the peer from them.
    run(create_app(settings), host=settings.host, port=settings.port, proxy_headers=False, log_level="info")
    return 0


if __name__ == "__main__":
    sys.exit(main())
