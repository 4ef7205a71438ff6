"""Seed a benchmark database with plain SQL while no server runs: users with
sessions, trips of any shape, members, many trips at once.

Creating 10,000 trips or a 1,200-stop trip through the API would take
minutes; SQL takes a second. The schema comes from the measured checkout's own
migrations (`migrate`), and the server is started afterwards, so it begins with
nothing in memory, like a restarted deployment."""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from _loadgen import wayline_env

NOW = "2026-01-01T00:00:00.000Z"
CENTRE = (38.7223, -9.1393)


def migrate(tmp: Path, root: Path) -> Path:
    """Create the database with `root`'s migrations; returns its path."""
    env = wayline_env(tmp)
    code = ("import asyncio, sys; from app.db import Database\n"
            "async def main():\n    db = await Database.open(sys.argv[1]); await db.close()\n"
            "asyncio.run(main())")
    subprocess.run([sys.executable, "-c", code, env["WAYLINE_DB"]], cwd=root, check=True,
                   env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})
    return Path(env["WAYLINE_DB"])


@dataclass
class TripIds:
    id: str
    days: list[str]
    stops: list[list[str]]
    members: list[str] = field(default_factory=list)


def _id() -> str:
    return secrets.token_hex(8)


class Seed:
    def __init__(self, db_path: Path):
        self.conn = sqlite3.connect(db_path)
        self.conn.execute("PRAGMA foreign_keys = ON")

    def __enter__(self) -> Seed:
        return self

    def __exit__(self, *exc) -> None:
        self.conn.commit()
        self.conn.close()

    def users(self, n: int, prefix: str = "user") -> list[tuple[str, str]]:
        """n users, each with a session: [(user id, cookie header value)]."""
        out, users, sessions = [], [], []
        for _ in range(n):
            uid, token = _id(), secrets.token_urlsafe(32)
            users.append((uid, f"{prefix}{uid[:10]}", f"{prefix} {uid[:4]}", "scrypt$16384$00$00", NOW))
            sessions.append((hashlib.sha256(token.encode()).hexdigest(), uid, NOW, "2099-01-01T00:00:00.000Z"))
            out.append((uid, f"wayline_session={token}"))
        self.conn.executemany("INSERT INTO users (id, username, display_name, password_hash, created_at) "
                              "VALUES (?, ?, ?, ?, ?)", users)
        self.conn.executemany("INSERT INTO sessions (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
                              sessions)
        return out

    def trips(self, owner: str, n: int, days: int, stops_per_day: int, members: list[str] = (), *,
              distinct: bool = False) -> list[TripIds]:
        """n trips of days x stops_per_day stops (with coordinates, so legs are
        computed), owned by `owner`, with `members` as editors. `distinct`:
        each trip's places moved a little (about 11 m a trip), so no two trips
        share a route."""
        out, trips, member_rows, day_rows, stop_rows = [], [], [], [], []
        for k in range(n):
            shift = 0.0001 * k if distinct else 0.0
            t = TripIds(_id(), [], [], [owner, *members])
            trips.append((t.id, "Bench", "Lisbon", CENTRE[0], CENTRE[1], "2026-12-01", "Europe/Lisbon", "EUR", 1,
                          owner, NOW, NOW))
            member_rows += [(t.id, uid, "owner" if uid == owner else "editor", f"{NOW[:-5]}{i:03d}Z")
                            for i, uid in enumerate(t.members)]
            for d in range(days):
                day_id = _id()
                t.days.append(day_id)
                day_rows.append((day_id, t.id, d, "", ""))
                ids = []
                for i in range(stops_per_day):
                    sid = _id()
                    ids.append(sid)
                    lat = CENTRE[0] - 0.01 + 0.004 * (i % 8) + shift
                    lng = CENTRE[1] - 0.01 + 0.003 * (d % 8) + 0.0005 * (i // 8)
                    stop_rows.append((sid, t.id, day_id, i, "sight", f"Stop {d}.{i}", lat, lng, 45, owner, NOW))
                t.stops.append(ids)
            out.append(t)
        c = self.conn
        c.executemany("INSERT INTO trips (id, title, dest_name, dest_lat, dest_lng, start_date, timezone, currency, "
                      "version, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", trips)
        c.executemany("INSERT INTO members (trip_id, user_id, role, joined_at) VALUES (?, ?, ?, ?)", member_rows)
        c.executemany("INSERT INTO days (id, trip_id, position, title, note) VALUES (?, ?, ?, ?, ?)", day_rows)
        c.executemany("INSERT INTO stops (id, trip_id, day_id, position, kind, name, lat, lng, duration_min, "
                      "created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", stop_rows)
        return out


def cached_read_bench(doc: str, title: str, name: str, path_of, target: float) -> None:
    """The whole of a read bench on one member's 5 x 8 trip: parse the
    arguments, seed, start Wayline, GET `path_of(trip)` (read once first, so
    cached) against the floor answering the same bytes (bench/trip_read.py,
    bench/calendar_feed.py)."""
    import tempfile

    from _loadgen import footer, header, parser, read_vs_floor, wayline

    p = parser(doc.splitlines()[0])
    p.add_argument("--connections", type=int, default=8)
    args = p.parse_args()
    header(title, args)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        with Seed(migrate(tmp, args.root)) as seed:
            [(owner, cookie)] = seed.users(1)
            [trip] = seed.trips(owner, 1, 5, 8)
        with wayline(tmp, args.root) as app:
            read_vs_floor(name, args, app, path_of(trip), cookie, tmp, target)
    footer()
