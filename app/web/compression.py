"""Compressed JSON answers: brotli when the client accepts it, else gzip.

A TripDto (215 kB for 30 days x 15 stops) is compressed once per view of
the trip and kept with it (`View.derived`), so every member reading the same
version gets the same compressed bytes: never compressed per request. Other
JSON answers over `MIN_BYTES` are compressed per answer by Starlette's
GZipMiddleware (app/web/application.py), which leaves an answer that already
has a Content-Encoding and live streams (text/event-stream) alone.

Brotli at quality 4 makes that trip 13 kB in about 1.6 ms; gzip at level 6
16 kB in about 2.4 ms (docs/performance.md)."""

from __future__ import annotations

import gzip
from collections.abc import Awaitable, Callable, MutableMapping

import brotli
from starlette.middleware.gzip import GZipMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

MIN_BYTES = 4096        # below a few KB the headers and the work are not worth it
BROTLI_QUALITY = 4
GZIP_LEVEL = 6
CODINGS = ("br", "gzip")   # in the order we prefer them


def choose(accept_encoding: str | None) -> str | None:
    """The coding to answer in for this Accept-Encoding, or None (identity).
    A coding with q=0 is refused; otherwise ours are preferred in CODINGS' order."""
    if not accept_encoding:
        return None
    accepted = set()
    for item in accept_encoding.split(","):
        name, _, params = item.strip().partition(";")
        q = params.strip()
        if q.startswith("q=") and _zero(q[2:]):
            continue
        accepted.add(name.strip().lower())
    for coding in CODINGS:
        if coding in accepted:
            return coding
    return "gzip" if "*" in accepted else None


def _zero(value: str) -> bool:
    try:
        return float(value) == 0
    except ValueError:
        return False


def compress(body: bytes, coding: str) -> bytes:
    if coding == "br":
        return brotli.compress(body, quality=BROTLI_QUALITY)
    return gzip.compress(body, GZIP_LEVEL, mtime=0)


def once(store: MutableMapping[str, object], key: str, body: Callable[[], bytes], coding: str) -> tuple[bytes, bool]:
    """`body()` compressed with `coding`, kept in `store` (what lives as long
    as the bytes it was made from) under `key`: the work is done once, and
    the body is made only then (a reader that gets the compressed bytes
    needs no joined copy of it kept). (bytes, whether they were made now)."""
    slot = f"compressed:{coding}:{key}"
    packed = store.get(slot)
    if isinstance(packed, bytes):
        return packed, False
    packed = store[slot] = compress(body(), coding)
    return packed, True


class GzipWhenAccepted:
    """Starlette's GZipMiddleware (answers over MIN_BYTES, live streams and
    answers with their own Content-Encoding left alone), entered only when
    the request accepts gzip: otherwise its pass-through responder still
    inspects every answer's headers, a cost on every cached read."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.gzip = GZipMiddleware(app, minimum_size=MIN_BYTES, compresslevel=GZIP_LEVEL)

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        # Either app's own coroutine, not awaited here: no frame of ours for
        # the request's life. A live stream is never compressed (an event
        # stream), so it skips GZipMiddleware's responder, which it would
        # otherwise keep for hours.
        if scope["type"] == "http" and not is_live_stream(scope["path"]) and any(
                name == b"accept-encoding" and b"gzip" in value.lower() for name, value in scope["headers"]):
            return self.gzip(scope, receive, send)
        return self.app(scope, receive, send)


def is_live_stream(path: str) -> bool:
    """GET /api/trips/:id/live (app/routes/live.py)."""
    return path.endswith("/live") and path.startswith("/api/trips/")
