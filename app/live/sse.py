"""One open live stream: its bounded queue of frames and the ASGI response
that writes them.

A stream waits on one future; the hub wakes it by queueing frames. A client
that reads too slowly (uvicorn pauses our writes while its socket buffer is
full) lets its queue fill up; at MAX_QUEUED frames the hub drops the stream
instead of buffering without bound, and the page reconnects and resumes.

A stream that is dropped, or whose write cannot complete within the send
timeout (a few seconds), ends its connection for real: the write is given
up and the connection aborted (app/web/uvicorn_server.py puts the abort in
the scope), so a client that never reads cannot keep sockets open after the
hub let go of them. The hub counts a stream's place until its response has
ended, which is when the connection is closed.
"""

from __future__ import annotations

import asyncio
import math
import json
import time
from typing import Any
from collections.abc import Callable

MAX_QUEUED = 64
# The ASGI extension with the connection's controls (`abort()`, `limit_write_buffer(n)`),
# which app/web/uvicorn_server.py puts in every request's scope.
CONNECTION = "wayline.connection"
# A stream's frames are tens of bytes: past this many unsent, its writes wait
# (and a client that stopped reading is found, and costs, 16 KiB, not 64).
WRITE_BUFFER = 16 * 1024
RETRY_MS = 3000          # EventSource's reconnect delay after the stream ends
KEEPALIVE = b": keepalive\n\n"
HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache, no-store"),
    (b"x-accel-buffering", b"no"),  # proxies that honour it pass events through at once
]


def encode(data: Any) -> bytes:
    """Compact JSON: one line, so it fits one `data:` field."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


def frame(event_id: str, kind: str, data: bytes, *, retry: bool = False) -> bytes:
    """One SSE event; `data` is already JSON (`encode`)."""
    head = b"retry: %d\n" % RETRY_MS if retry else b""
    return head + b"id: " + event_id.encode() + b"\nevent: " + kind.encode() + b"\ndata: " + data + b"\n\n"


class Stream:
    """A member's open page on a trip. `day_id` and `day_order` are its presence
    (the day it looks at; the newest choice wins among one user's tabs) and
    `seen_at` when the page last confirmed it (monotonic; presence expires);
    `session` is the hash of the session it was opened with (it ends with it)."""

    __slots__ = ("trip_id", "user_id", "display_name", "connection_id", "session", "session_ends", "day_id",
                 "day_order", "seen_at", "pending", "waiter", "closed", "sending", "ended")

    def __init__(self, trip_id: str, user_id: str, display_name: str, connection_id: str, session: str = ""):
        self.trip_id = trip_id
        self.user_id = user_id
        self.display_name = display_name
        self.connection_id = connection_id
        self.session = session
        self.session_ends = math.inf   # when its session expires (Unix seconds): the stream ends with it
        self.day_id: str | None = None
        self.day_order = 0
        self.seen_at = time.monotonic()
        self.pending: list[bytes] = []
        self.waiter: asyncio.Future | None = None
        self.closed = False
        self.sending: asyncio.Timeout | None = None   # the deadline of a write in progress
        self.ended = False                            # its response is over: the connection is closed

    def push(self, data: bytes) -> bool:
        """Queue a frame; False when the queue is full (the hub then drops the stream)."""
        if self.closed:
            return True
        if len(self.pending) >= MAX_QUEUED:
            return False
        self.pending.append(data)
        self._wake()
        return True

    def close(self, last: bytes | None = None, *, abort: bool = False) -> None:
        """End the stream after what is queued (and `last`, if given); with
        `abort`, give up a write in progress and end the connection at once."""
        if abort and self.sending is not None:
            self.sending.reschedule(asyncio.get_running_loop().time())
        if self.closed:
            return
        if last is not None:
            self.pending.append(last)
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)


class LiveResponse:
    """The stream's HTTP response: the headers, then frames as they are queued,
    until the stream is closed or the client goes away. `on_end(stream)` runs
    once either happens (the hub forgets the stream and frees its place).
    A write that cannot complete within `send_timeout_s` (or that the hub
    gives up, `Stream.close(abort=True)`) aborts the connection."""

    def __init__(self, stream: Stream, on_end: Callable[[Stream], None], send_timeout_s: float = 5.0):
        self.stream = stream
        self.on_end = on_end
        self.send_timeout_s = send_timeout_s
        self.aborted = False

    async def __call__(self, scope, receive, send) -> None:
        stream = self.stream
        loop = asyncio.get_running_loop()
        connection = (scope.get("extensions") or {}).get(CONNECTION) or {}
        if "limit_write_buffer" in connection:
            connection["limit_write_buffer"](WRITE_BUFFER)
        watcher = loop.create_task(self._until_disconnect(receive))
        try:
            start = {"type": "http.response.start", "status": 200, "headers": HEADERS}
            if not await self._send(connection, send, start):
                return
            while True:
                if not stream.pending:
                    if stream.closed:
                        break
                    stream.waiter = loop.create_future()
                    try:
                        await stream.waiter
                    finally:
                        stream.waiter = None
                    continue
                chunk = b"".join(stream.pending)
                stream.pending.clear()
                if not await self._send(connection, send, {"type": "http.response.body", "body": chunk,
                                                      "more_body": True}):
                    return
            await self._send(connection, send, {"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            if self.aborted:   # the server notices the reset connection before we return (no "incomplete response")
                await asyncio.wait({watcher}, timeout=1)
            watcher.cancel()
            self.on_end(stream)

    async def _send(self, connection: dict, send, message) -> bool:
        """Write one message; False when it could not be written in time (or
        was given up) and the connection was aborted."""
        try:
            async with asyncio.timeout(self.send_timeout_s) as deadline:
                self.stream.sending = deadline
                await send(message)
            return True
        except TimeoutError:
            if "abort" in connection:
                connection["abort"]()   # the socket closes now; its unread bytes are dropped
                self.aborted = True
            self.stream.close()
            return False
        finally:
            self.stream.sending = None

    async def _until_disconnect(self, receive) -> None:
        try:
            while (await receive())["type"] != "http.disconnect":
                pass
        finally:   # also when receiving fails (a request body over the limit): never left open
            self.on_end(self.stream)
