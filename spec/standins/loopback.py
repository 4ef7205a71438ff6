"""The plumbing every loopback stand-in server shares, for tests.

`LoopbackServer` runs a ThreadingHTTPServer on 127.0.0.1 (a free port, one
thread per request) in a background thread, records every request it serves
(`requests`, `calls` per path, `last(path)`, `wait_for_requests(n)`) and hands
each parsed request to the subclass's `serve(request, handler)`, where `handler`
is the `LoopbackHandler` that writes JSON bodies or a chunked SSE stream back.

`PathScriptedServer` adds what the Google and weather stand-ins script the same
way: failures and delays chosen by path prefix, and a `handle(...)` that returns
(status, JSON payload).
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

# The client hung up mid-reply: expected in timeout tests, never an error.
CLIENT_GONE = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)


@dataclass
class RecordedRequest:
    method: str
    path: str  # without the query string
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-case names
    body: Any  # parsed JSON (None if not JSON)
    raw: bytes = field(default=b"", repr=False)


class LoopbackServer:
    """A started-on-demand loopback HTTP server; subclasses implement `serve`."""

    name = "loopback-standin"  # the serving thread's name
    base_path = ""  # appended to the origin in `url` (e.g. "/v1")
    methods: tuple[str, ...] = ("GET", "POST")  # others: 501, as http.server answers
    server_header: str | None = None  # the Server header's product; None: http.server's
    json_content_type = "application/json"

    def __init__(self) -> None:
        self.lock = threading.RLock()  # re-entrant: a subclass may record() while holding it
        self.arrived = threading.Condition(self.lock)
        self.stopping = threading.Event()
        self.requests: list[RecordedRequest] = []
        self.calls: Counter[str] = Counter()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------

    def start(self) -> Self:
        server = ThreadingHTTPServer(("127.0.0.1", 0), LoopbackHandler)
        server.daemon_threads = False  # server_close() joins every request thread
        server.standin = self  # type: ignore[attr-defined]
        server.handle_error = lambda request, address: None  # client gone mid-reply (timeout tests)
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=self.name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "stand-in not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}{self.base_path}"

    # -- recorded requests -----------------------------------------------------

    def record(self, request: RecordedRequest) -> None:
        with self.arrived:
            self.calls[request.path] += 1
            self.requests.append(request)
            self.arrived.notify_all()

    @property
    def request_count(self) -> int:
        with self.lock:
            return len(self.requests)

    def last(self, path: str) -> RecordedRequest:
        with self.lock:
            return [r for r in self.requests if r.path == path][-1]

    def wait_for_requests(self, n: int, timeout: float = 60.0) -> None:
        """Block until n requests arrived (AssertionError after `timeout`)."""
        deadline = time.monotonic() + timeout
        with self.arrived:
            while len(self.requests) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"stand-in saw {len(self.requests)} requests, expected {n}")
                self.arrived.wait(left)

    def reset(self) -> None:
        with self.lock:
            self.requests.clear()
            self.calls.clear()

    # -- serving (called from request threads) ---------------------------------

    def response_headers(self) -> dict[str, str]:
        """Extra headers on every response (after Content-Type/-Length/Connection)."""
        return {}

    def serve(self, request: RecordedRequest, handler: LoopbackHandler) -> None:  # pragma: no cover
        raise NotImplementedError


class LoopbackHandler(BaseHTTPRequestHandler):
    """Parses a request for its stand-in's `serve` and writes the answer back."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # quiet
        pass

    @property
    def standin(self) -> LoopbackServer:
        return self.server.standin  # type: ignore[attr-defined]

    def version_string(self) -> str:
        return f"{self.standin.server_header or self.server_version} {self.sys_version}"

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _serve(self, method: str) -> None:
        standin = self.standin
        if method not in standin.methods:
            self.send_error(501, f"Unsupported method ({method!r})")
            return
        split = urlsplit(self.path)
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = {k.lower(): v for k, v in self.headers.items()}
        request = RecordedRequest(method, split.path, parse_qs(split.query), headers, body, raw)
        try:
            standin.serve(request, self)
        except CLIENT_GONE:
            pass
        finally:
            self.close_connection = True

    # -- writing answers -------------------------------------------------------

    def _send_standin_headers(self) -> None:
        self.send_header("Connection", "close")
        for name, value in self.standin.response_headers().items():
            self.send_header(name, value)
        self.end_headers()

    def send_json(self, status: int, payload: Any) -> None:
        self.send_body(status, self.standin.json_content_type, json.dumps(payload).encode())

    def send_body(self, status: int, content_type: str, data: bytes) -> None:
        """Any body (an HTML error page, a broken JSON reply)."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self._send_standin_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def send_bytes(self, status: int, content_type: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self._send_standin_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def start_event_stream(self) -> None:
        """A 200 `text/event-stream`, chunked; then `send_event`s, then `end_event_stream`."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Transfer-Encoding", "chunked")
        self._send_standin_headers()

    def send_event(self, event: str, data: Any) -> None:
        frame = f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
        self.wfile.flush()

    def end_event_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class PathScriptedServer(LoopbackServer):
    """A JSON API stand-in: every request is recorded and answered with
    `handle(method, path, query, headers, body) -> (status, payload)`; tests
    script failures and delays for paths starting with a prefix."""

    def __init__(self) -> None:
        super().__init__()
        self._failures: list[list] = []  # [prefix, status, message, times left or None]
        self._delays: dict[str, float] = {}
        self._holds: dict[str, int] = {}  # prefix -> how many must wait together
        self._waiting: Counter[str] = Counter()
        self.together: Counter[str] = Counter()  # prefix -> the most requests held at once

    def fail(self, prefix: str, status: int = 500, message: str | None = None, times: int | None = None) -> None:
        """Answer an error on paths starting with prefix (times=None: until reset)."""
        with self.lock:
            self._failures.append([prefix, status, message, times])

    def delay(self, prefix: str, seconds: float) -> None:
        with self.lock:
            self._delays[prefix] = seconds

    def hold(self, prefix: str, until: int) -> None:
        """Hold requests on paths starting with prefix until `until` of them
        wait at once (HOLD_S at most), then answer them all: `together[prefix]`
        reaching `until` proves the client sent them together, with no timing."""
        with self.lock:
            self._holds[prefix] = until

    def reset(self) -> None:
        with self.lock:
            self._failures.clear()
            self._delays.clear()
            self._holds.clear()
            self.together.clear()
        super().reset()

    def waited(self, path: str) -> bool:
        """Wait out a scripted hold and delay; False when the stand-in is stopping."""
        with self.lock:
            wait = max([s for p, s in self._delays.items() if path.startswith(p)], default=0.0)
            held = [(p, n) for p, n in self._holds.items() if path.startswith(p)]
        for prefix, until in held:
            self._held(prefix, until)
        return not (wait and self.stopping.wait(wait))

    HOLD_S = 30.0  # a client that sends one at a time gets its answers late, not never

    def _held(self, prefix: str, until: int) -> None:
        deadline = time.monotonic() + self.HOLD_S
        with self.arrived:
            self._waiting[prefix] += 1
            self.together[prefix] = max(self.together[prefix], self._waiting[prefix])
            self.arrived.notify_all()
            while self.together[prefix] < until and not self.stopping.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self.arrived.wait(min(left, 0.5))
            self._waiting[prefix] -= 1

    def scripted_failure(self, path: str) -> tuple[int, str | None] | None:
        with self.lock:
            for failure in self._failures:
                prefix, status, message, times = failure
                if path.startswith(prefix) and (times is None or times > 0):
                    if times is not None:
                        failure[3] = times - 1
                    return status, message
        return None

    def serve(self, request: RecordedRequest, handler: LoopbackHandler) -> None:
        self.record(request)
        status, payload = self.handle(request.method, request.path, request.query, request.headers, request.body)
        handler.send_json(status, payload)

    def handle(self, method, path, query, headers, body) -> tuple[int, Any]:  # pragma: no cover
        raise NotImplementedError
