"""Load and save the Trip aggregate with hand-written SQL.

`save` writes only what changed between the loaded snapshot and the mutated
aggregate and bumps `trips.version` once; `append_message` adds a row to the
trip's timeline. Both run on the caller's open write transaction and touch
it, so the change is announced after the commit.
"""

from __future__ import annotations

import json

import aiosqlite

from ..db import Transaction
from ..ids import new_id, utcnow
from ..errors import NotFound
from ..preferences import dumps, parse_trip
from .model import Day, Expense, Stop, Trip

STOP_COLUMNS = ("id", "day_id", "position", "kind", "name", "place_id", "lat", "lng", "address",
                "set_time", "duration_min", "meal", "note", "created_by", "created_at")
EXPENSE_COLUMNS = ("id", "title", "amount_minor", "currency", "paid_by", "split_json", "day_id",
                   "stop_id", "created_by", "created_at")
DAY_COLUMNS = ("id", "position", "title", "note", "start_time")
TRIP_COLUMNS = ("title", "dest_name", "dest_lat", "dest_lng", "start_date", "timezone", "currency")


async def load(conn: aiosqlite.Connection, trip_id: str) -> Trip:
    rows = await conn.execute_fetchall(
        "SELECT id, title, dest_name, dest_lat, dest_lng, start_date, timezone, currency, version, created_by "
        "FROM trips WHERE id = ?", (trip_id,))
    if not rows:
        raise NotFound("Trip not found")
    t = rows[0]
    trip = Trip(**{k: t[k] for k in t.keys()})
    days = {}
    for r in await conn.execute_fetchall(
            f"SELECT {', '.join(DAY_COLUMNS)} FROM days WHERE trip_id = ? ORDER BY position", (trip_id,)):
        day = Day(**{k: r[k] for k in DAY_COLUMNS})
        day.title, day.note = day.title or "", day.note or ""
        days[day.id] = day
        trip.days.append(day)
    for r in await conn.execute_fetchall(
            f"SELECT {', '.join(STOP_COLUMNS)} FROM stops WHERE trip_id = ? ORDER BY position", (trip_id,)):
        days[r["day_id"]].stops.append(Stop(**{k: r[k] for k in STOP_COLUMNS}))
    for r in await conn.execute_fetchall(
            f"SELECT {', '.join(EXPENSE_COLUMNS)} FROM expenses WHERE trip_id = ? ORDER BY created_at, id", (trip_id,)):
        values = {k: r[k] for k in EXPENSE_COLUMNS}
        values["split"] = json.loads(values.pop("split_json"))
        trip.expenses.append(Expense(**values))
    trip.member_ids = [r[0] for r in await conn.execute_fetchall(
        "SELECT user_id FROM members WHERE trip_id = ? ORDER BY joined_at, user_id", (trip_id,))]
    prefs = await conn.execute_fetchall("SELECT prefs_json FROM trip_preferences WHERE trip_id = ?", (trip_id,))
    trip.prefs = parse_trip(prefs[0][0] if prefs else None)
    return trip


def _stop_row(trip_id: str, s: Stop) -> tuple:
    return (trip_id, *[getattr(s, c) for c in STOP_COLUMNS])


def _expense_row(trip_id: str, e: Expense) -> tuple:
    return (trip_id, e.id, e.title, e.amount_minor, e.currency, e.paid_by,
            json.dumps(e.split, sort_keys=True), e.day_id, e.stop_id, e.created_by, e.created_at)


def _day_row(trip_id: str, d: Day) -> tuple:
    return (trip_id, d.id, d.position, d.title, d.note, d.start_time)


async def _sync(conn, table: str, columns: tuple[str, ...], before: dict, after: dict) -> None:
    """Delete, insert and update the rows that differ (rows are (trip_id, id, ...))."""
    gone = [k for k in before if k not in after]
    if gone:
        await conn.executemany(f"DELETE FROM {table} WHERE id = ?", [(k,) for k in gone])
    placeholders = ", ".join("?" for _ in range(len(columns) + 1))
    new = [row for k, row in after.items() if k not in before]
    if new:
        await conn.executemany(f"INSERT INTO {table} (trip_id, {', '.join(columns)}) VALUES ({placeholders})", new)
    assignments = ", ".join(f"{c} = ?" for c in columns[1:])
    changed = [(*row[2:], row[1]) for k, row in after.items() if k in before and before[k] != row]
    if changed:
        await conn.executemany(f"UPDATE {table} SET {assignments} WHERE id = ?", changed)


async def save(conn: Transaction, before: Trip, after: Trip) -> None:
    tid = after.id
    conn.touch(tid, "content")
    # Days first (stops reference them), stop deletions before day deletions
    # happen via ON DELETE CASCADE anyway.
    await _sync(conn, "days", DAY_COLUMNS,
                {d.id: _day_row(tid, d) for d in before.days}, {d.id: _day_row(tid, d) for d in after.days})
    await _sync(conn, "stops", STOP_COLUMNS,
                {s.id: _stop_row(tid, s) for s in before.all_stops()},
                {s.id: _stop_row(tid, s) for s in after.all_stops()})
    await _sync(conn, "expenses", ("id", "title", "amount_minor", "currency", "paid_by", "split_json",
                                   "day_id", "stop_id", "created_by", "created_at"),
                {e.id: _expense_row(tid, e) for e in before.expenses},
                {e.id: _expense_row(tid, e) for e in after.expenses})
    if before.prefs != after.prefs:
        await conn.execute(
            "INSERT INTO trip_preferences (trip_id, prefs_json) VALUES (?, ?) "
            "ON CONFLICT (trip_id) DO UPDATE SET prefs_json = excluded.prefs_json", (tid, dumps(after.prefs)))
    after.version = before.version + 1
    await conn.execute(
        f"UPDATE trips SET {', '.join(f'{c} = ?' for c in TRIP_COLUMNS)}, version = ?, updated_at = ? WHERE id = ?",
        (*[getattr(after, c) for c in TRIP_COLUMNS], after.version, utcnow(), tid))


async def append_message(conn: Transaction, trip_id: str, *, role: str, parts: list, source: str,
                         actor_user_id: str | None = None, actor_name: str | None = None,
                         stop_id: str | None = None, op: str | None = None, message_id: str | None = None) -> dict:
    """Append to the trip's timeline on an open write transaction; returns the row as a dict."""
    conn.touch(trip_id, "timeline")
    seq_rows = await conn.execute_fetchall("SELECT COALESCE(MAX(seq), 0) + 1 FROM agent_messages WHERE trip_id = ?",
                                           (trip_id,))
    row = {
        "id": message_id or new_id(), "trip_id": trip_id, "seq": seq_rows[0][0], "role": role,
        "parts_json": json.dumps(parts, ensure_ascii=False), "actor_user_id": actor_user_id,
        "actor_name": actor_name, "source": source, "stop_id": stop_id, "op": op, "created_at": utcnow(),
    }
    await conn.execute(
        f"INSERT INTO agent_messages ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})", tuple(row.values()))
    return row
