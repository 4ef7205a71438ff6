"""uvicorn's server, told to end the app's long-lived responses when
shutdown starts, and able to end one connection at once.

uvicorn stops accepting connections, then waits for every open response to
finish, and only then runs the app's lifespan shutdown. A live stream never
finishes by itself, so the lifespan alone would wait forever: this server
calls `lifecycle.begin_shutdown` first. `python -m app` and the tests' live
server both run it.

A live stream whose client stopped reading cannot be ended politely: uvicorn
closes a connection gracefully, which waits for the unread bytes to leave,
for ever when nobody reads them, and even a closed socket keeps trying to
send what the kernel holds (the peer sees no end). So each request's scope
carries `scope["extensions"]["wayline.connection"]`: `abort()` resets the
connection (SO_LINGER 0, then `transport.abort()`: the socket closes at
once with a RST and its buffered bytes are dropped), and
`limit_write_buffer(n)` pauses the response's writes once n bytes wait in
the transport (uvicorn's default is 64 KiB). app/live/sse.py uses both.

A request's head must arrive whole within `HEAD_TIMEOUT_S` of the
connection opening, or of its first byte after an answer. uvicorn has no
such deadline: a connection that sent nothing, or one header byte every few
seconds, was held for as long as the client liked (a slowloris), and about
4,000 of them, opened by anyone without an account, take every file the
process may open.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import resource
import socket
import struct
import sys
from typing import Any

import uvicorn
from uvicorn.config import HTTP_PROTOCOLS
from uvicorn.importer import import_from_string

from .. import lifecycle
from ..live.sse import CONNECTION
from .access_log import AccessLog


def reset(transport: asyncio.Transport) -> None:
    """Close the connection now, dropping what is unsent (a RST, not a FIN behind unread bytes)."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass   # already gone
    transport.abort()


class HeldHead:
    """A connection's transport that holds a small write until the next one,
    so a response's head and body leave in one send (uvicorn writes them
    separately: two system calls and two packets for every answer; the send
    was the largest item of a write's profile). At most one write under
    `HOLD` bytes waits: the next write (even an empty one, the end of an
    answer with a Content-Length) sends it with its own bytes at once, and
    what nothing follows in the same turn of the event loop (a stream's
    head) goes out at the end of that turn; closing sends it first.
    Everything else is the transport's."""

    HOLD = 4096

    def __init__(self, transport: asyncio.Transport) -> None:
        self.transport = transport
        self.held = b""
        self.due = False   # a flush at the end of the turn is scheduled

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self.held:
            data, self.held = self.held + data, b""
            self.transport.write(data)
        elif len(data) >= self.HOLD:
            self.transport.write(data)
        elif data:
            self.held = bytes(data)
            if not self.due:
                self.due = True
                asyncio.get_running_loop().call_soon(self.flush)

    def writelines(self, lines: Any) -> None:
        self.write(b"".join(lines))

    def flush(self) -> None:
        self.due = False
        data, self.held = self.held, b""
        if data and not self.transport.is_closing():
            self.transport.write(data)

    def close(self) -> None:
        self.flush()
        self.transport.close()

    def write_eof(self) -> None:
        self.flush()
        self.transport.write_eof()

    def get_write_buffer_size(self) -> int:
        return self.transport.get_write_buffer_size() + len(self.held)

    def __getattr__(self, name: str) -> Any:   # is_closing, get_extra_info, pause_reading, abort, ...
        return getattr(self.transport, name)


HEAD_TIMEOUT_S = 20.0   # for a request's head (the request line and headers) to arrive whole


def abortable(protocol: Any, access: AccessLog | None = None, head_timeout_s: float = HEAD_TIMEOUT_S) -> Any:
    """uvicorn's HTTP protocol class (h11's or httptools'), with the
    connection's controls in every request's scope, its access lines
    written by `access` when given (app/web/access_log.py), and a deadline
    for each request's head."""

    class Abortable(protocol):
        app: Any
        head_deadline: asyncio.TimerHandle | None = None
        waited_after: Any = None   # the request before the head being waited for (None: the first)

        def connection_made(self, transport: asyncio.Transport) -> None:
            if access is not None:   # what uvicorn's protocols hand each request's cycle
                self.access_logger, self.access_log = access, True
            super().connection_made(HeldHead(transport))
            self.wait_for_head()   # a new connection: uvicorn's keep-alive timer is not running yet
            app = self.app
            connection = {"abort": lambda: reset(transport),
                          "limit_write_buffer": lambda high: transport.set_write_buffer_limits(high=high)}

            def with_connection(scope, receive, send):
                scope.setdefault("extensions", {})[CONNECTION] = connection
                return app(scope, receive, send)   # not awaited here: no frame of ours for the request's life

            self.app = with_connection

        def waiting_for_head(self) -> bool:
            return self.cycle is None or self.cycle.response_complete

        def wait_for_head(self) -> None:
            if self.head_deadline is not None:
                self.head_deadline.cancel()
            self.waited_after = self.cycle
            self.head_deadline = self.loop.call_later(head_timeout_s, self.head_too_slow)

        def head_too_slow(self) -> None:
            self.head_deadline = None
            if self.cycle is self.waited_after and self.waiting_for_head():
                self.transport.close()   # nothing of ours is in flight: a plain close

        def data_received(self, data: bytes) -> None:
            # The first bytes after an answer stop uvicorn's keep-alive timer: the next head's deadline starts.
            if self.waiting_for_head() and (self.head_deadline is None or self.waited_after is not self.cycle):
                self.wait_for_head()
            super().data_received(data)

        def connection_lost(self, exc: Exception | None) -> None:
            if self.head_deadline is not None:
                self.head_deadline.cancel()
                self.head_deadline = None
            super().connection_lost(exc)

    Abortable.__name__ = f"Abortable{protocol.__name__}"
    return Abortable


class Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, access: AccessLog | None = None,
                 head_timeout_s: float = HEAD_TIMEOUT_S) -> None:
        if isinstance(config.http, str):   # "auto", "h11", "httptools" (a class given by hand is left alone)
            config.http = abortable(import_from_string(HTTP_PROTOCOLS.get(config.http, config.http)), access,
                                    head_timeout_s)
        super().__init__(config)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        services = getattr(getattr(self.config.app, "state", None), "services", None)
        if services is not None:
            lifecycle.begin_shutdown(services)
        await super().shutdown(sockets)


# Every open live stream holds a socket: 2,000 streams (the hub's limit) and
# everything else need more than the usual soft limit of 1,024 files.
OPEN_FILES = 4096


def raise_open_files(wanted: int = OPEN_FILES) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        allowed = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (allowed, hard))


def access_log_for(config: uvicorn.Config) -> AccessLog | None:
    """Our access lines on stdout, where uvicorn's would go, when uvicorn
    would write them (its access log on, at level info)."""
    if not config.access_log or not logging.getLogger("uvicorn.access").isEnabledFor(logging.INFO):
        return None
    return AccessLog(sys.stdout)


def lean_log_records() -> None:
    """No format here names a record's process, thread or source line: do
    not look them up for every record (the multiprocessing module's current
    process alone was about 1% of a write under load, sampled with py-spy;
    the caller's frame, which logging finds by walking the stack, 0.6%:
    `logging._srcfile = None` is the logging HOWTO's documented switch)."""
    logging.logMultiprocessing = logging.logProcesses = logging.logThreads = False
    logging._srcfile = None


# The one event loop thread does nearly all the work; the database's writer
# thread (app/db.py) needs the GIL for a moment between its statements, and
# waits for it up to the switch interval while the loop holds it (5 ms by
# default: up to 5 ms for each statement of each queued op, with 16 clients
# writing). At 0.5 ms the writer's statements follow each other closely.
SWITCH_INTERVAL_S = 0.0005
# The cyclic GC's youngest generation is collected after this many new
# containers (700 by default: every dozen or so ops on a 30 x 15 trip, each
# collection walking what the in-flight requests hold).
GC_YOUNG_THRESHOLD = 10_000


def tune_runtime() -> None:
    """For the server process (python -m app), once, before it serves: GIL
    hand-offs to the writer thread sooner, the cyclic GC less often, and
    what was made at import and app creation (modules, routes, models)
    moved out of the GC's sight (`gc.freeze`), so a full collection walks
    the trips in memory, not the code (measured: docs/performance.md,
    "Fourth round")."""
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, older, oldest)


def run(app, **options) -> None:
    """`uvicorn.run(app, **options)` with this server (and room for the
    streams' sockets), its access lines written by app/web/access_log.py,
    the runtime tuned."""
    raise_open_files()
    lean_log_records()
    config = uvicorn.Config(app, **options)   # configures uvicorn's loggers
    server = Server(config, access_log_for(config))
    tune_runtime()
    server.run()
