"""App factories for benchmarks, run in a child process.

`floor` is what every benchmark compares against: a bare Starlette app under
the same uvicorn, with the same access log, run by `uvicorn --factory bench._apps:floor`.

GET (any path) answers the bytes in BENCH_PAYLOAD with an ETag, and a 304 when
If-None-Match matches it; POST (any path) does one SQLite write (an UPDATE
in autocommit on one aiosqlite connection, WAL, synchronous=NORMAL, like the
app) and answers the bytes in BENCH_WRITE_PAYLOAD (or BENCH_PAYLOAD). Every
POST changes the ETag, so pollers re-read after a write as they do on the app.
"""

from __future__ import annotations

import os
from contextlib import asynccontextmanager
from pathlib import Path

import aiosqlite
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route


def wayline():
    """Wayline from the environment's settings (bench/live.py serves it itself)."""
    from app.web.application import create_app
    from app.settings import Settings

    return create_app(Settings.from_env(dotenv=None))


def floor():
    payload = Path(os.environ["BENCH_PAYLOAD"]).read_bytes()
    write_file = os.environ.get("BENCH_WRITE_PAYLOAD")
    write_payload = Path(write_file).read_bytes() if write_file else payload
    state = {"version": 0, "db": None}

    @asynccontextmanager
    async def lifespan(app):
        db = await aiosqlite.connect(os.environ["BENCH_FLOOR_DB"], isolation_level=None)
        for pragma in ("journal_mode = WAL", "synchronous = NORMAL", "busy_timeout = 10000"):
            await db.execute(f"PRAGMA {pragma}")
        await db.execute("CREATE TABLE IF NOT EXISTS counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)")
        await db.execute("INSERT OR IGNORE INTO counter (id, n) VALUES (1, 0)")
        state["db"] = db
        try:
            yield
        finally:
            await db.close()

    async def read(request):
        etag = f'"v{state["version"]}"'
        if request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers={"ETag": etag})
        return Response(payload, media_type="application/json", headers={"ETag": etag})

    async def write(request):
        await request.body()
        await state["db"].execute("UPDATE counter SET n = n + 1 WHERE id = 1")
        state["version"] += 1
        return Response(write_payload, media_type="application/json")

    return Starlette(routes=[Route("/{path:path}", read, methods=["GET"]),
                             Route("/{path:path}", write, methods=["POST", "PUT"])], lifespan=lifespan)

