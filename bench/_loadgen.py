"""A tiny keep-alive HTTP/1.1 load generator for loopback benchmarks.

Both sides of every comparison are measured with this same client, so its
own overhead cancels out of the ratios we report. Loops are bounded in
requests and time."""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import socket
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


async def _worker(host: str, port: int, request: bytes, deadline: float, limit: int, latencies: list[float]) -> int:
    reader, writer = await asyncio.open_connection(host, port)
    done = 0
    try:
        while done < limit and time.perf_counter() < deadline:
            t0 = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            status = head[9:12]
            if status != b"200":
                raise RuntimeError(f"unexpected status {status!r}: {head[:200]!r}")
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            await reader.readexactly(length)
            latencies.append(time.perf_counter() - t0)
            done += 1
    finally:
        writer.close()
    return done


def measure(port: int, path: str, *, cookie: str | None = None, connections: int = 8, seconds: float = 4.0,
            max_requests: int = 200_000) -> dict:
    headers = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
    if cookie:
        headers += f"Cookie: {cookie}\r\n"
    request = (headers + "\r\n").encode()

    async def run():
        latencies: list[float] = []
        deadline = time.perf_counter() + seconds
        t0 = time.perf_counter()
        counts = await asyncio.gather(*[
            _worker("127.0.0.1", port, request, deadline, max_requests // connections, latencies)
            for _ in range(connections)])
        elapsed = time.perf_counter() - t0
        latencies.sort()
        return {
            "requests": sum(counts), "rps": sum(counts) / elapsed,
            "p50_ms": statistics.median(latencies) * 1000,
            "p95_ms": latencies[int(len(latencies) * 0.95)] * 1000,
        }

    return asyncio.run(run())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve(factory: str, env: dict[str, str]):
    """Run `uvicorn --factory factory` on a free loopback port in a child process."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", factory, "--host", "127.0.0.1", "--port", str(port),
         "--log-level", "warning", "--no-access-log"],
        cwd=ROOT, env={**os.environ, **env})
    try:
        deadline = time.time() + 15
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError(f"{factory} did not start")
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


def compare(app_port: int, app_path: str, bare_port: int, *, cookie: str | None = None, rounds: int = 5,
            seconds: float = 2.0, connections: int = 8) -> dict:
    """Alternate the two servers round by round and keep the median ratio, so
    background load on the machine hits both sides alike."""
    measure(app_port, app_path, cookie=cookie, seconds=0.5, connections=connections)
    measure(bare_port, "/", seconds=0.5, connections=connections)
    rows = []
    for _ in range(rounds):
        bare = measure(bare_port, "/", seconds=seconds, connections=connections)
        app = measure(app_port, app_path, cookie=cookie, seconds=seconds, connections=connections)
        rows.append((app["rps"] / bare["rps"], app, bare))
    rows.sort(key=lambda r: r[0])
    ratio, app, bare = rows[len(rows) // 2]
    return {"ratio": ratio, "app": app, "bare": bare, "ratios": [round(r[0], 2) for r in rows]}


def report(name: str, result: dict, target: float) -> None:
    app, bare = result["app"], result["bare"]
    print(f"bare starlette : {bare['rps']:8.0f} req/s  p50 {bare['p50_ms']:.2f} ms  p95 {bare['p95_ms']:.2f} ms")
    print(f"{name:<15}: {app['rps']:8.0f} req/s  p50 {app['p50_ms']:.2f} ms  p95 {app['p95_ms']:.2f} ms")
    print(f"ratio          : {result['ratio']:.2f} median of {result['ratios']} (target >= {target})")


def run_against_bare(name: str, target: float, env: dict[str, str], prepare) -> None:
    """The whole comparison: start Wayline with `env` (plus a temp database),
    let `prepare(base_url) -> (path, cookie, body)` set up the data, serve the
    same body from a bare Starlette endpoint, alternate rounds, print the ratio."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {"WAYLINE_DB": f"{tmp}/bench.db", "WAYLINE_UPLOADS": f"{tmp}/uploads", "OPENAI_API_KEY": "",
               "GOOGLE_MAPS_API_KEY": "", **env}
        with serve("bench._apps:wayline", env) as port:
            path, cookie, body = prepare(f"http://127.0.0.1:{port}")
            Path(tmp, "payload.json").write_bytes(body)
            with serve("bench._apps:bare", {"BENCH_PAYLOAD": f"{tmp}/payload.json"}) as bare_port:
                result = compare(port, path, bare_port, cookie=cookie, rounds=args.rounds, seconds=args.seconds,
                                 connections=args.connections)
    print(f"payload: {len(body)} bytes, {args.connections} keep-alive connections")
    report(name, result, target)
