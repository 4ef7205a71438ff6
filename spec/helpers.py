"""Test helpers: sign up members, make trips, run ops, serve the app on a real port.

Imported by tests as `from helpers import ...` (spec/ is on sys.path); fixtures
live in conftest.py."""

from __future__ import annotations

import asyncio
import itertools
import multiprocessing
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import TypeVar

import httpx
import uvicorn
from starlette.testclient import TestClient

from app.providers.outbound import OutboundClient
from app.tls import tls_context
from app.web.application import create_app
from app.web.access_log import AccessLog
from app.web.uvicorn_server import Server
from app.settings import Settings

T = TypeVar("T")

_names = itertools.count(1)

# A provider's client in tests waits as long as a loaded machine needs for a loopback
# stand-in's answer: these deadlines only bound what never comes. A test of a timeout
# sets its own `provider_read_timeout_s` (the stand-in holding the call far longer).
PATIENT_PROVIDERS = {"provider_connect_timeout_s": 30.0, "provider_read_timeout_s": 60.0}


@asynccontextmanager
async def provider_client(settings: Settings, **options) -> AsyncIterator[OutboundClient]:
    """The providers' client as the app makes it (app/lifecycle.py), closed afterwards."""
    http = OutboundClient.for_providers(settings, **options)
    try:
        yield http
    finally:
        await http.aclose()


def png_bytes(size: int | None = None) -> bytes:
    """A whole 1x1 PNG (uploads check that an image is all there, app/media.py);
    `size`: padded to exactly that many bytes with a private ancillary chunk."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")

    head = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", (1).to_bytes(4, "big") * 2 + bytes([8, 2, 0, 0, 0]))
    head += chunk(b"IDAT", zlib.compress(b"\x00\xff\x80\x00"))
    if size is not None:
        head += chunk(b"waDd", os.urandom(size - len(head) - 24))
    return head + chunk(b"IEND", b"")


async def held_at_its_write(db, start: Callable[[], Awaitable[T]]) -> tuple[asyncio.Future[T], Callable[[], None]]:
    """Starts `start()` and holds it at its database write: its checks have
    passed, the write has not run. Returns the running task and `release`,
    which lets the write run. Meanwhile the test commits what the held write
    has to see (a revoked link, a removed member). Only the held call's
    write waits: the database's own `write` is back before this returns."""
    gate, waiting = asyncio.Event(), asyncio.Event()
    real = db.write

    def held(work):
        async def later():
            await gate.wait()
            return await real(work)

        waiting.set()
        return asyncio.ensure_future(later())

    db.write = held
    try:
        task = asyncio.ensure_future(start())
        reached = asyncio.ensure_future(waiting.wait())
        await asyncio.wait({task, reached}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        db.write = real
    if not waiting.is_set():   # it ended before writing: a test mistake, shown rather than waited on for ever
        reached.cancel()
        outcome = task.exception() or task.result()
        raise AssertionError(f"the call ended before its write: {outcome!r}")
    return task, gate.set


def concurrent_client(client: TestClient, **kwargs) -> httpx.AsyncClient:
    """An async client on `client`'s app as it runs (its core started), for
    requests that must overlap on the app's own loop (in `client.portal.call`)."""
    async def app(scope, receive, send):
        await client.app({**scope, "state": client.app_state.copy()}, receive, send)

    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver", **kwargs)


def make_client(settings: Settings, **overrides) -> TestClient:
    return TestClient(create_app(settings, **overrides), base_url="http://testserver")


def signup(client: TestClient, username: str | None = None, password: str = "correct horse") -> dict:
    """Signs up on `client` (its cookie jar now holds this user's session).

    Returns the user with its session `token`, so a test can switch between
    several members on one app with `use(client, user)`."""
    username = username or f"user{next(_names)}"
    r = client.post("/api/auth/signup", json={"username": username, "password": password})
    assert r.status_code == 201, r.text
    return {**r.json()["data"]["user"], "token": r.cookies.get("wayline_session")}


def use(client: TestClient, user: dict) -> TestClient:
    """Act as `user` (from `signup`) on this client from now on."""
    client.cookies.clear()  # one session cookie only, whatever domain httpx filed it under
    client.cookies.set("wayline_session", user["token"])
    return client


def join(client: TestClient, owner: dict, trip_id: str, user: dict, role: str = "editor") -> None:
    """`owner` invites `user` to the trip with `role`; leaves the client acting as `user`."""
    use(client, owner)
    r = client.post(f"/api/trips/{trip_id}/invites", json={"role": role})
    assert r.status_code == 201, r.text
    use(client, user)
    r = client.post(f"/api/invites/{r.json()['data']['token']}/accept", json={})
    assert r.status_code == 200, r.text


def new_trip(client: TestClient, days: int = 2, **fields) -> dict:
    payload = {"title": "Lisbon", "startDate": "2026-12-10", "days": days,
               "destination": {"name": "Lisbon", "lat": 38.7223, "lng": -9.1393},
               "timezone": "Europe/Lisbon", "currency": "EUR", **fields}
    r = client.post("/api/trips", json=payload)
    assert r.status_code == 201, r.text
    return r.json()["data"]


def add_sights(client: TestClient, trip: dict, per_day: int) -> None:
    """`per_day` sights with coordinates on every day of `trip`, one change a day."""
    for d, day in enumerate(trip["days"]):
        edits = [{"op": "insert_stop", "args": {"dayId": day["id"], "kind": "sight", "name": f"Sight {d}.{i}",
                                                  "lat": 38.70 + 0.004 * i, "lng": -9.15 + 0.003 * d}}
                 for i in range(per_day)]
        r = client.post(f"/api/trips/{trip['id']}/ops", json={"edits": edits})
        assert r.status_code == 200, r.text


def op(client: TestClient, trip_id: str, op_name: str, *, full: bool = True, **args):
    """One op. `full`: ask for the whole trip in the answer (`data.trip`, as
    most tests read it); without it the answer is `data.change`."""
    return client.post(f"/api/trips/{trip_id}/ops/{op_name}{'?full=1' if full else ''}", json=args)


@contextmanager
def refused_port() -> Iterator[int]:
    """A loopback port that refuses connections: bound but not listening, so
    no other test (or xdist worker) can take it while the test runs."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


# How long a server may take to start: a loaded machine (load 20-45 on 2 cores) starts a
# process several times slower than a quiet one. Only a server that never answers waits it out.
SERVER_START_DEADLINE_S = 120


def wait_until_serving(proc: subprocess.Popen, url: str, log: Callable[[], str]) -> None:
    """Poll `{url}/healthz` until `proc` (a `python -m app ...` it serves) answers 200;
    fail with the server's log when it ends first or never answers."""
    deadline = time.monotonic() + SERVER_START_DEADLINE_S
    # One client for every try, with the process's TLS context: each new client
    # would read the CA bundle again (about 30 ms of CPU).
    with httpx.Client(timeout=10, verify=tls_context()) as http:
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"the server ended with {proc.returncode} before it answered:\n{log()}")
            try:
                if http.get(f"{url}/healthz").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"the server did not answer in {SERVER_START_DEADLINE_S} s:\n{log()}")
            time.sleep(0.05)


def loopback_socket() -> socket.socket:
    """A TCP socket bound to a free loopback port, to hand to uvicorn.

    Its protocol is named (IPPROTO_TCP, not the default 0) because asyncio
    turns Nagle's algorithm off (TCP_NODELAY) only on connections whose socket
    says it is TCP: without it, every answer on a kept-alive connection (its
    headers and body are two writes) waited about 40 ms for the client's
    delayed ACK, 80 times over for one page load in the browser tests. A
    server uvicorn binds itself (`python -m app`) gets this right already."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    return sock


class LiveServer:
    """The real app on uvicorn in a thread, for tests that need real sockets
    (the app's own server class: live streams end when it shuts down).

    The listening socket is bound here (port 0) and handed to uvicorn, so two
    xdist workers can never race for the same port."""

    def __init__(self, app, access: AccessLog | None = None, **server_options):
        self.app = app
        self.socket = loopback_socket()
        self.port = self.socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        # An idle keep-alive connection is never closed under a test's client: on a loaded machine
        # uvicorn's 5 s default lapses between two requests, and a request sent as the server closes
        # the connection fails ("Server disconnected without sending a response").
        config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_keep_alive=600)
        # access lines only when given (app/web/access_log.py); `server_options`: e.g. head_timeout_s
        self.server = Server(config, access, **server_options)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + SERVER_START_DEADLINE_S
        while not self.server.started:
            if not self.thread.is_alive():
                raise RuntimeError("the live server stopped before it started (its error is in the log above)")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the live server did not start in {SERVER_START_DEADLINE_S} s")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(timeout=15)
        self.socket.close()


def mcp_session(base_url: str, token: str, work):
    """Run `await work(session)` in an initialized session of the official MCP
    client SDK, over streamable HTTP to `{base_url}/mcp` with this bearer token
    (an outside assistant as it connects); returns what `work` returns. Runs
    in a thread of its own: a browser test's thread already has Playwright's
    event loop."""
    from concurrent.futures import ThreadPoolExecutor

    import anyio
    from httpx2 import AsyncClient
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def go():
        # The process's TLS context: a default one reads the CA bundle again (about 30 ms of CPU).
        async with AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30, verify=tls_context()) as http:
            async with streamable_http_client(f"{base_url}/mcp", http_client=http) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await work(session)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, go).result()


# Modules the tests' fork server imports before it forks anything (`forked_context`).
FORKSERVER_PRELOAD = {"app.__main__"}


def forked_context(*preload: str) -> multiprocessing.context.BaseContext:
    """multiprocessing's forkserver context: one clean, single-threaded server
    process per test process imports the app (and `preload`) once; every
    process asked of it is a fork of that server, a real process of its own
    that need not start an interpreter and import the app again (about 0.75
    CPU-seconds each). Preloads named after the server started are imported
    by each child instead."""
    FORKSERVER_PRELOAD.update(preload)
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(sorted(FORKSERVER_PRELOAD))
    return context


def _app_cli_child(args: list[str], env: dict[str, str], cwd: str, out: str, err: str, umask: int | None) -> None:
    """In the forked process: `python -m app ARGS` with this environment, folder,
    umask and its output in these files; its exit status is main's."""
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    if umask is not None:
        os.umask(umask)
    for fd, path in ((1, out), (2, err)):
        file = os.open(path, os.O_WRONLY | os.O_TRUNC)
        os.dup2(file, fd)
        os.close(file)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", closefd=False)
    sys.argv = ["python -m app", *args]
    from app.__main__ import main

    try:
        code = main(args)
    except SystemExit as exit_:   # argparse's usage errors; a settings error's line, as the interpreter prints it
        if isinstance(exit_.code, str):
            print(exit_.code, file=sys.stderr)
        code = exit_.code if isinstance(exit_.code, int) else 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def run_app_cli(args: list[str], *, env: Mapping[str, str], cwd: str | Path, timeout: float = 60,
                umask: int | None = None) -> subprocess.CompletedProcess:
    """`python -m app ARGS` (backup, restore) as its own process, forked from
    the fork server (`forked_context`) instead of a new interpreter: its own
    environment, working folder, file descriptors and exit status; answers as
    `subprocess.run(..., capture_output=True, text=True)` does."""
    with tempfile.TemporaryDirectory(prefix="wayline-cli-") as folder:
        out, err = Path(folder) / "stdout", Path(folder) / "stderr"
        out.touch()
        err.touch()
        process = forked_context().Process(target=_app_cli_child,
                                           args=(list(args), dict(env), str(cwd), str(out), str(err), umask))
        process.start()
        process.join(timeout)
        if process.exitcode is None:
            process.kill()
            process.join()
            raise subprocess.TimeoutExpired(["python", "-m", "app", *args], timeout)
        return subprocess.CompletedProcess(["python", "-m", "app", *args], process.exitcode,
                                           out.read_text(encoding="utf-8"), err.read_text(encoding="utf-8"))
