"""Live streams: N open streams on one trip, one write, the time until the
last stream has the event; and the server's memory per open stream.

    .venv/bin/python bench/live.py [--streams 1000] [--writes 30]

The server is the real app (python -m app's server class) in its own
process on loopback; the clients are one asyncio process of raw sockets
(a protocol per stream that only looks for the event, so the client's own
cost stays small). Streams belong to ceil(N / 8) members, the per-user limit.
Each write is an `update_trip` op by another member; its latency runs from
sending the op until the last stream has `event: trip` with the new
version. RSS is the server's VmRSS before and after opening the streams.
Targets: p99 < 250 ms for 1,000 streams, < 20 KiB per open stream.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _loadgen import ROOT, free_port, wayline_env

PASSWORD = "correct horse"
PER_USER = 8
TARGET_P99_MS = 250
TARGET_KIB = 20
SERVER = ("from app.web.uvicorn_server import run; from bench._apps import wayline; "
          "run(wayline(), host='127.0.0.1', port={port}, log_level='warning', access_log=False)")


class Reader(asyncio.Protocol):
    """One open stream: notes when it is open and when the awaited version arrives."""

    def __init__(self, request: bytes, opened: asyncio.Event):
        self.request = request
        self.opened = opened
        self.hello = False
        self.tail = b""
        self.awaited: bytes | None = None
        self.arrived: float | None = None
        self.closed = False
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport) -> None:
        self.transport = transport
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        seen = self.tail + data
        self.tail = seen[-64:]
        if not self.hello and b"event: hello" in seen:
            self.hello = True
            self.opened.set()
        if self.awaited is not None and self.arrived is None and self.awaited in seen:
            self.arrived = now

    def connection_lost(self, exc) -> None:
        self.closed = True
        self.opened.set()


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def raise_fd_limit(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            raise SystemExit(f"need {needed} open files, the hard limit is {hard} (ulimit -n)")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


def setup(base: str, users: int) -> tuple[dict, list[str], httpx.Client]:
    """A trip, `users` members (their session cookies) and a writer client."""
    writer = httpx.Client(base_url=base, timeout=30)
    writer.post("/api/auth/signup", json={"username": "writer", "password": PASSWORD}).raise_for_status()
    trip = writer.post("/api/trips", json={
        "title": "Bench", "startDate": "2026-12-01", "days": 5,
        "destination": {"name": "Lisbon", "lat": 38.72, "lng": -9.14}}).json()["data"]
    cookies = []
    for i in range(users):
        with httpx.Client(base_url=base, timeout=30) as member:
            member.post("/api/auth/signup", json={"username": f"member{i}", "password": PASSWORD}).raise_for_status()
            token = writer.post(f"/api/trips/{trip['id']}/invites", json={"role": "viewer"}).json()["data"]["token"]
            member.post(f"/api/invites/{token}/accept", json={}).raise_for_status()
            member.get(f"/api/trips/{trip['id']}").raise_for_status()
            cookies.append(f"wayline_session={member.cookies.get('wayline_session')}")
    return trip, cookies, writer


async def measure(port: int, pid: int, trip: dict, cookies: list[str], writer: httpx.Client, streams: int,
                  writes: int) -> dict:
    trip_id = trip["id"]
    loop = asyncio.get_running_loop()
    readers: list[Reader] = []

    async def open_one(i: int) -> None:
        request = (f"GET /api/trips/{trip_id}/live HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                   f"Cookie: {cookies[i // PER_USER]}\r\nAccept: text/event-stream\r\n\r\n").encode()
        opened = asyncio.Event()
        reader = Reader(request, opened)
        await loop.create_connection(lambda: reader, "127.0.0.1", port)
        await asyncio.wait_for(opened.wait(), 30)
        if reader.closed:
            raise RuntimeError(f"stream {i} was refused")
        readers.append(reader)

    # Warm the route once (imports, caches), then take the baseline.
    await open_one(0)
    readers.pop().transport.close()
    await asyncio.sleep(1.0)
    before = rss_kib(pid)
    started = time.perf_counter()
    for batch in range(0, streams, 100):
        await asyncio.gather(*(open_one(i) for i in range(batch, min(streams, batch + 100))))
    ramp_s = time.perf_counter() - started
    await asyncio.sleep(2.0)  # presence settles
    after = rss_kib(pid)

    latencies, medians = [], []
    version = trip["version"]
    for n in range(writes):
        version += 1  # the only writer: each op makes the next version
        for r in readers:
            r.awaited, r.arrived = b'event: trip\ndata: {"version":%d}' % version, None
        t0 = time.perf_counter()
        # The write runs in a thread so that this loop keeps reading the streams meanwhile.
        response = await asyncio.to_thread(writer.post, f"/api/trips/{trip_id}/ops/update_trip",
                                           json={"title": f"Bench {n}"})
        assert response.json()["data"]["change"]["trip"]["version"] == version
        deadline = time.perf_counter() + 10
        while any(r.arrived is None for r in readers) and time.perf_counter() < deadline:
            await asyncio.sleep(0.001)
        missing = sum(r.arrived is None for r in readers)
        if missing:
            raise RuntimeError(f"{missing} streams did not get version {version}")
        arrivals = sorted(r.arrived - t0 for r in readers)
        latencies.append(arrivals[-1] * 1000)
        medians.append(arrivals[len(arrivals) // 2] * 1000)
        await asyncio.sleep(0.3)
    latencies.sort()
    return {"before_kib": before, "after_kib": after, "ramp_s": ramp_s, "latencies": latencies,
            "medians": medians, "open": sum(not r.closed for r in readers)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--writes", type=int, default=30)
    args = parser.parse_args()
    raise_fd_limit(args.streams * 2 + 512)  # both ends of every stream live on this machine
    load_before = load()
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        # The benches' environment: no keys, a fixed secret, OSM pointing nowhere.
        env = {**os.environ, **wayline_env(Path(tmp))}
        proc = subprocess.Popen([sys.executable, "-c", SERVER.format(port=port)], cwd=ROOT, env=env)
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.time() + 15
            while True:
                try:
                    httpx.get(f"{base}/healthz", timeout=1).raise_for_status()
                    break
                except httpx.HTTPError:
                    if time.time() > deadline:
                        raise RuntimeError("the server did not start") from None
                    time.sleep(0.1)
            trip, cookies, writer = setup(base, math.ceil(args.streams / PER_USER))
            result = asyncio.run(measure(port, proc.pid, trip, cookies, writer, args.streams, args.writes))
            writer.close()
        finally:
            proc.terminate()
            proc.wait(15)
    lat = result["latencies"]
    p99 = lat[min(len(lat) - 1, math.ceil(len(lat) * 0.99) - 1)]
    per_stream = (result["after_kib"] - result["before_kib"]) / args.streams
    print(f"streams open          : {result['open']} on one trip ({math.ceil(args.streams / PER_USER)} members), "
          f"opened in {result['ramp_s']:.1f} s")
    print(f"last stream has it    : p50 {statistics.median(lat):.1f} ms, p99 {p99:.1f} ms, max {lat[-1]:.1f} ms "
          f"over {len(lat)} writes (target p99 < {TARGET_P99_MS} ms)")
    print(f"median stream has it  : p50 {statistics.median(result['medians']):.1f} ms")
    print(f"server RSS            : {result['before_kib']} KiB -> {result['after_kib']} KiB, "
          f"{per_stream:.1f} KiB per open stream (target < {TARGET_KIB} KiB)")
    print(f"load average          : {load_before} before, {load()} after")


if __name__ == "__main__":
    main()
