"""What every benchmark shares: the servers as deployed, a tiny keep-alive
HTTP/1.1 client, timed load, rounds alternated against the floor, and the
report (medians, spreads, the machine's load average).

Wayline runs as it is deployed: `python -m app` (uvicorn, access log on) in
its own process. The floor is `bench._apps:floor` under the same uvicorn with
the same access log. Both are measured with the same client, so its overhead
cancels out of the ratios. Loops are bounded in requests and time.

`--root DIR` measures another checkout of Wayline (for example the commit
before a change) with the same benchmark code."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Awaitable, Callable, Iterator

ROOT = Path(__file__).resolve().parent.parent
SECRET = "bench-secret-not-a-real-one-0000000000"


# -- servers ----------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, timeout_s: float = 30.0) -> float:
    """Seconds until the port accepts a connection."""
    start = time.perf_counter()
    while time.perf_counter() - start < timeout_s:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return time.perf_counter() - start
        except OSError:
            time.sleep(0.01)
    raise RuntimeError("server did not start")


@dataclass
class Server:
    port: int
    proc: subprocess.Popen
    started_s: float  # from spawn to the port accepting connections

    def rss_mib(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmRSS")


@contextmanager
def _run(argv: list[str], cwd: Path, env: dict[str, str], port: int, log: Path) -> Iterator[Server]:
    with open(log, "ab") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env={**os.environ, **env}, stdout=out, stderr=out)
        try:
            wait_for_port(port, proc)
            yield Server(port, proc, time.perf_counter() - t0)
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


# Without a Google key places and routes come from OpenStreetMap: its services
# point at the discard port, so nothing leaves the machine and legs are the
# labelled estimates (as before the provider existed; `--root` of an older
# checkout ignores these).
CLOSED = "http://127.0.0.1:9"


def wayline_env(tmp: Path, **extra: str) -> dict[str, str]:
    return {"WAYLINE_DB": str(tmp / "bench.db"), "WAYLINE_UPLOADS": str(tmp / "uploads"),
            "WAYLINE_SECRET": SECRET, "OPENAI_API_KEY": "", "GOOGLE_MAPS_API_KEY": "",
            "WAYLINE_NOMINATIM_URL": CLOSED, "WAYLINE_OVERPASS_URL": f"{CLOSED}/api/interpreter",
            "WAYLINE_OSRM_URL": f"{CLOSED}/routed-{{profile}}",
            # Every simulated member signs up from loopback: the sign-up quota would stop them.
            "WAYLINE_SIGNUPS_PER_ADDRESS_HOUR": "100000",
            "WAYLINE_KEPT_ANSWERS_MB_PER_USER": "100000",
            # A bench's clients write as fast as the server answers, far past a person's pace.
            "WAYLINE_WRITES_PER_USER_MINUTE": "100000000", "WAYLINE_WRITES_PER_USER_HOUR": "100000000", **extra}


@contextmanager
def wayline(tmp: Path, root: Path = ROOT, *, command: tuple[str, ...] = (), **env: str) -> Iterator[Server]:
    """`python -m app` from `root`, as deployed (uvicorn, access log on);
    `command=("boot",)` runs the image's command (Litestream with a replica)."""
    port = free_port()
    with _run([sys.executable, "-m", "app", *command], root,
              {**wayline_env(tmp, **env), "HOST": "127.0.0.1", "PORT": str(port), "PYTHONPATH": str(root)},
              port, tmp / "wayline.log") as server:
        yield server


@contextmanager
def floor(tmp: Path, payload: bytes, write_payload: bytes | None = None) -> Iterator[Server]:
    """The bare Starlette floor (bench/_apps.py) under uvicorn with the access log on."""
    port = free_port()
    (tmp / "floor-payload.json").write_bytes(payload)
    env = {"BENCH_PAYLOAD": str(tmp / "floor-payload.json"), "BENCH_FLOOR_DB": str(tmp / "floor.db"),
           "PYTHONPATH": str(ROOT)}
    if write_payload is not None:
        (tmp / "floor-write.json").write_bytes(write_payload)
        env["BENCH_WRITE_PAYLOAD"] = str(tmp / "floor-write.json")
    with _run([sys.executable, "-m", "uvicorn", "--factory", "bench._apps:floor", "--host", "127.0.0.1",
               "--port", str(port), "--log-level", "info"], ROOT, env, port, tmp / "floor.log") as server:
        yield server


# -- a keep-alive HTTP/1.1 client --------------------------------------------------


def request(method: str, path: str, port: int, *, cookie: str | None = None, body: bytes | None = None,
            headers: dict[str, str] | None = None) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    if cookie:
        lines.append(f"Cookie: {cookie}")
    for name, value in (headers or {}).items():
        lines.append(f"{name}: {value}")
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b"")


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes


class Conn:
    """One keep-alive connection; `send` a pre-encoded request, get the reply."""

    def __init__(self, port: int):
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def __aenter__(self) -> Conn:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        return self

    async def __aexit__(self, *exc) -> None:
        self.writer.close()

    async def send(self, raw: bytes) -> Reply:
        self.writer.write(raw)
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0][9:12])
        headers = {}
        for line in lines[1:]:
            if b":" in line:
                name, _, value = line.partition(b":")
                headers[name.strip().lower().decode()] = value.strip().decode("latin-1")
        if headers.get("transfer-encoding") == "chunked":   # a streamed answer (e.g. compressed as it goes)
            return Reply(status, headers, await self._chunks())
        length = int(headers.get("content-length", 0))
        body = await self.reader.readexactly(length) if length else b""
        return Reply(status, headers, body)

    async def _chunks(self) -> bytes:
        body = b""
        while size := int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16):
            body += await self.reader.readexactly(size)
            await self.reader.readexactly(2)
        await self.reader.readuntil(b"\r\n")   # the empty trailer
        return body


def expect(reply: Reply, *statuses: int) -> Reply:
    if reply.status not in statuses:
        raise RuntimeError(f"unexpected status {reply.status}: {reply.body[:300]!r}")
    return reply


def update_stop_requests(port: int, cookie: str, trip_id: str, stop_id: str) -> list[bytes]:
    """One client's writes: its stop's duration back and forth, so every op
    really changes the trip (new times) and answers the whole trip."""
    path = f"/api/trips/{trip_id}/ops/update_stop"
    return [request("POST", path, port, cookie=cookie, body=json.dumps({"stopId": stop_id, "durationMin": m}).encode())
            for m in (45, 50)]


def print_runs(runs: dict[str, list[dict]], unit: str = "ops/s") -> None:
    """Each side's medians (and spread over the rounds): throughput, p50, p99."""
    width = max(len(name) for name in runs)
    for name, rows in runs.items():
        print(f"  {name:<{width}}: {unit} {spread([r['rps'] for r in rows], '{:.0f}')}  "
              f"p50 {spread([r['p50_ms'] for r in rows], '{:.1f}')} ms  "
              f"p99 {spread([r['p99_ms'] for r in rows], '{:.1f}')} ms")


def shape(text: str) -> tuple[int, int]:
    """`--shape 30x15`: days x stops per day."""
    days, stops = text.lower().split("x")
    return int(days), int(stops)


def shapes(text: str) -> list[tuple[int, int]]:
    """`--shapes 5x8,30x15`."""
    return [shape(part) for part in text.split(",")]


async def body_of(port: int, raw: bytes) -> bytes:
    """One request on a fresh connection; its body (a 200 expected)."""
    async with Conn(port) as conn:
        return expect(await conn.send(raw), 200).body


# -- timed load ----------------------------------------------------------------------


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q / 100))]


def stats(latencies_s: list[float], elapsed_s: float) -> dict:
    ms = [v * 1000 for v in latencies_s]
    return {"requests": len(ms), "rps": len(ms) / elapsed_s, "p50_ms": statistics.median(ms),
            "p95_ms": pct(ms, 95), "p99_ms": pct(ms, 99), "max_ms": max(ms)}


async def load(port: int, requests_per_conn: list[list[bytes]], *, seconds: float,
               max_requests: int = 200_000, ok: tuple[int, ...] = (200,)) -> dict:
    """One keep-alive connection per list; each cycles through its requests
    until the time or the request budget runs out."""
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds
    limit = max(1, max_requests // len(requests_per_conn))

    async def worker(requests: list[bytes]) -> None:
        async with Conn(port) as conn:
            for i in range(limit):
                if time.perf_counter() >= deadline:
                    break
                t0 = time.perf_counter()
                expect(await conn.send(requests[i % len(requests)]), *ok)
                latencies.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    await asyncio.gather(*(worker(r) for r in requests_per_conn))
    return stats(latencies, time.perf_counter() - t0)


# -- rounds and the report -----------------------------------------------------------


def parser(description: str, *, rounds: int = 3, seconds: float = 2.0) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--rounds", type=int, default=rounds, help="rounds, alternating the app and the floor")
    p.add_argument("--seconds", type=float, default=seconds, help="seconds per timed run")
    p.add_argument("--root", type=Path, default=ROOT, help="the Wayline checkout to measure (default: this one)")
    return p


def loadavg() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def header(title: str, args: argparse.Namespace) -> None:
    where = "" if args.root.resolve() == ROOT else f" (app from {args.root})"
    print(f"{title}{where}\n  start: {loadavg()}", flush=True)


def alternate(rounds: int, sides: dict[str, Callable[[], Awaitable[dict] | dict]]) -> dict[str, list[dict]]:
    """Run each side once per round, in alternating order, so background
    load on the machine hits both alike."""
    out: dict[str, list[dict]] = {name: [] for name in sides}
    names = list(sides)
    for r in range(rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            result = sides[name]()
            if asyncio.iscoroutine(result):
                result = asyncio.run(result)
            out[name].append(result)
    return out


def spread(values: list[float], fmt: str = "{:.2f}") -> str:
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def verdict(name: str, value: float, target: float, *, at_most: bool) -> str:
    met = value <= target if at_most else value >= target
    sign = "<=" if at_most else ">="
    return f"  {name}: {value:.2f} (target {sign} {target:g}: {'met' if met else 'NOT met'})"


def footer() -> None:
    print(f"  end:   {loadavg()}", flush=True)


def read_vs_floor(title: str, args: argparse.Namespace, app: Server, path: str, cookie: str, tmp: Path,
                  target: float) -> None:
    """Throughput of GET `path` against the floor answering the same bytes,
    with `args.connections` keep-alive connections; prints the ratio."""
    payload = asyncio.run(body_of(app.port, request("GET", path, app.port, cookie=cookie)))
    with floor(tmp, payload) as bare:
        app_reqs = [[request("GET", path, app.port, cookie=cookie)]] * args.connections
        bare_reqs = [[request("GET", path, bare.port)]] * args.connections
        asyncio.run(load(app.port, app_reqs, seconds=0.5))
        asyncio.run(load(bare.port, bare_reqs, seconds=0.5))
        runs = alternate(args.rounds, {"floor": lambda: load(bare.port, bare_reqs, seconds=args.seconds),
                                       title: lambda: load(app.port, app_reqs, seconds=args.seconds)})
    print(f"  payload {len(payload)} bytes, {args.connections} keep-alive connections")
    for name, rows in runs.items():
        print(f"  {name:<12}: req/s {spread([r['rps'] for r in rows], '{:.0f}')}  "
              f"p50 {spread([r['p50_ms'] for r in rows])} ms")
    ratios = [a["rps"] / f["rps"] for a, f in zip(runs[title], runs["floor"])]
    print(f"  ratio (req/s): {spread(ratios)}")
    print(verdict("ratio (median)", statistics.median(ratios), target, at_most=False))
