"""Load and save the Trip aggregate with hand-written SQL.

`load_trip` reads the whole aggregate with plain sqlite3 calls (one read
transaction on a reader's thread: `db.read(load_trip, trip_id)`).
`write_changes` writes what an edit copy changed (trips/model.py: an object
that is not the original's is a changed or new row) and bumps
`trips.version` once, inside the one write path's transaction (apply.py,
which announces the ops). `append_message` is the one way a row joins a
trip's timeline: on an open write transaction (`db.write`), it takes the
next `seq` and touches the trip's timeline, so pages hear of it after the
commit.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from typing import Any, TypeVar
from collections.abc import Callable, Mapping, Set

from ..db import Tx
from ..errors import NotFound
from ..ids import new_id, utcnow
from ..preferences import dumps, parse_trip
from .model import Day, Expense, Stop, Trip

STOP_COLUMNS = ("id", "day_id", "position", "kind", "name", "place_id", "lat", "lng", "address",
                "set_time", "duration_min", "meal", "note", "created_by", "created_at")
EXPENSE_COLUMNS = ("id", "title", "amount_minor", "currency", "paid_by", "split_json", "day_id",
                   "stop_id", "created_by", "created_at")
DAY_COLUMNS = ("id", "position", "title", "note", "start_time")
TRIP_COLUMNS = ("title", "dest_name", "dest_lat", "dest_lng", "start_date", "timezone", "currency")
Row = tuple[Any, ...]
Obj = TypeVar("Obj")


def load_trip(conn: sqlite3.Connection, trip_id: str) -> Trip:
    rows = conn.execute(
        "SELECT id, title, dest_name, dest_lat, dest_lng, start_date, timezone, currency, version, created_by "
        "FROM trips WHERE id = ?", (trip_id,)).fetchall()
    if not rows:
        raise NotFound("Trip not found")
    t = rows[0]
    trip = Trip(**{k: t[k] for k in t.keys()})
    days = {}
    for r in conn.execute(f"SELECT {', '.join(DAY_COLUMNS)} FROM days WHERE trip_id = ? ORDER BY position",
                          (trip_id,)):
        day = Day(*r)
        day.title, day.note = day.title or "", day.note or ""
        days[day.id] = day
        trip.days.append(day)
    # Values every stop repeats (its day's id, kind, author, often the time it
    # was made) are shared, not one string per row: a 30 x 15 trip kept in
    # memory is then about 100 kB smaller.
    shared: dict[Any, Any] = {}
    for r in conn.execute(f"SELECT {', '.join(STOP_COLUMNS)} FROM stops WHERE trip_id = ? ORDER BY position",
                          (trip_id,)):
        day = days[r[1]]
        day.stops.append(Stop(r[0], day.id, r[2], shared.setdefault(r[3], r[3]), r[4], r[5], r[6], r[7], r[8], r[9],
                              r[10], r[11], r[12], shared.setdefault(r[13], r[13]), shared.setdefault(r[14], r[14])))
    for r in conn.execute(f"SELECT {', '.join(EXPENSE_COLUMNS)} FROM expenses WHERE trip_id = ? "
                          "ORDER BY created_at, id", (trip_id,)):
        values = dict(zip(EXPENSE_COLUMNS, r))
        values["split"] = json.loads(values.pop("split_json"))
        trip.expenses.append(Expense(**values))
    trip.member_ids = [r[0] for r in conn.execute(
        "SELECT user_id FROM members WHERE trip_id = ? ORDER BY joined_at, user_id", (trip_id,))]
    prefs = conn.execute("SELECT prefs_json FROM trip_preferences WHERE trip_id = ?", (trip_id,)).fetchall()
    trip.prefs, trip.prefs_set = parse_trip(prefs[0][0] if prefs else None), bool(prefs)
    return trip


def load_stored_days(conn: sqlite3.Connection, trip_id: str, version: int) -> dict[str, tuple[bytes, float]] | None:
    """The trip's stored days ({day id: (body, legs_until)}, migration 0036)
    if they were stored for `version`, else None (none, or of another version)."""
    stamp = conn.execute("SELECT version FROM trip_bodies WHERE trip_id = ?", (trip_id,)).fetchall()
    if not stamp or stamp[0][0] != version:
        return None
    return {r[0]: (r[1], r[2]) for r in conn.execute(
        "SELECT day_id, body, legs_until FROM day_bodies WHERE trip_id = ?", (trip_id,)) if isinstance(r[1], bytes)}


def _stop_row(trip_id: str, s: Stop) -> Row:
    return (trip_id, *[getattr(s, c) for c in STOP_COLUMNS])


def _expense_row(trip_id: str, e: Expense) -> Row:
    return (trip_id, e.id, e.title, e.amount_minor, e.currency, e.paid_by,
            json.dumps(e.split, sort_keys=True), e.day_id, e.stop_id, e.created_by, e.created_at)


def _day_row(trip_id: str, d: Day) -> Row:
    return (trip_id, d.id, d.position, d.title, d.note, d.start_time)


@functools.cache
def _insert_sql(table: str, columns: tuple[str, ...]) -> str:
    """INSERT for rows (trip_id, id, ...) of `table`: built once, so every op
    sends the same statement text (SQLite's statement cache hits)."""
    return (f"INSERT INTO {table} (trip_id, {', '.join(columns)}) "
            f"VALUES ({', '.join('?' for _ in range(len(columns) + 1))})")


@functools.cache
def _update_sql(table: str, columns: tuple[str, ...], changed: tuple[int, ...]) -> str:
    """UPDATE of the columns at `changed` (indexes into a row: trip_id, id, ...):
    an op sets only what it changed, so the indexes on the others (a stop's
    day and position) are not rewritten (with the trip row's, 50 -> 30 us of SQLite an op)."""
    return f"UPDATE {table} SET {', '.join(f'{columns[i - 1]} = ?' for i in changed)} WHERE id = ?"


def _upsert(tx: Tx, table: str, columns: tuple[str, ...], rows: list[Row], new: Set[str],
            old: Mapping[str, Row]) -> None:
    """Insert the rows (trip_id, id, ...) whose id is in `new`, update in the
    others the columns that differ from their row in `old`."""
    inserts = [row for row in rows if row[1] in new]
    if inserts:
        tx.executemany(_insert_sql(table, columns), inserts)
    updates: dict[tuple[int, ...], list[Row]] = {}
    for row in rows:
        if row[1] not in new:
            was = old[row[1]]
            changed = tuple(i for i in range(2, len(row)) if row[i] != was[i])
            if changed:   # (trip_id and id never differ)
                updates.setdefault(changed, []).append((*[row[i] for i in changed], row[1]))
    for changed, params in updates.items():
        tx.executemany(_update_sql(table, columns, changed), params)


def _changed(before: Mapping[str, Obj], after: Mapping[str, Obj], row: Callable[[Obj], Row]
             ) -> tuple[list[Row], Set[str], list[str], dict[str, Row]]:
    """(rows to write, ids among them that are new, ids gone, the rows they
    replace by id) between two {id: object} maps; an object that is the
    original is unchanged."""
    rows, old = [], {}
    for key, obj in after.items():
        was = before.get(key)
        if was is obj:
            continue
        now = row(obj)
        if was is None:
            rows.append(now)
        elif (then := row(was)) != now:
            rows.append(now)
            old[key] = then
    return rows, after.keys() - before.keys(), [k for k in before if k not in after], old


@functools.cache
def _trip_sql(changed: tuple[str, ...]) -> str:
    """The version bump, with the trip's own fields an op changed (the check is `AND version = ?`)."""
    return (f"UPDATE trips SET {''.join(f'{c} = ?, ' for c in changed)}version = ?, updated_at = ? "
            "WHERE id = ? AND version = ?")


def _same_day(was: Day, now: Day) -> bool:
    return was is now or was.id == now.id


def stored_version(tx: Tx, trip_id: str) -> int | None:
    rows = tx.fetchall("SELECT version FROM trips WHERE id = ?", (trip_id,))
    return rows[0][0] if rows else None


def write_changes(tx: Tx, before: Trip, after: Trip) -> bool:
    """Write what `after` (an edit of `before`) changed and bump the version;
    False (nothing written) if the stored trip is not at `before.version`.

    Only days whose stop list is not the original's can hold changed stops.
    Days are inserted first and deleted last (their stops go with them), so
    a stop moved out of a deleted day keeps its row."""
    tid = after.id
    after.version = before.version + 1
    changed = tuple(c for c in TRIP_COLUMNS if getattr(after, c) != getattr(before, c))
    if not tx.execute(_trip_sql(changed), (*[getattr(after, c) for c in changed], after.version, utcnow(), tid,
                                           before.version)).rowcount:
        return False
    if len(before.days) == len(after.days) and all(map(_same_day, before.days, after.days)):
        # Most ops keep every day in its place and copy only the days they
        # touch: compare those (this runs on the writer, holding the GIL
        # the event loop waits for, once per op on every day of the trip).
        touched = [(was, now) for was, now in zip(before.days, after.days) if was is not now]
        old_days, new_days = {was.id: was for was, _ in touched}, {now.id: now for _, now in touched}
        changed_lists = [now for was, now in touched if was.stops is not now.stops]
        old_stops = {s.id: s for was, now in touched if was.stops is not now.stops for s in was.stops}
    else:
        old_days, new_days = {d.id: d for d in before.days}, {d.id: d for d in after.days}
        changed_lists = [d for d in after.days if d.id not in old_days or old_days[d.id].stops is not d.stops]
        old_stops = {s.id: s for d in before.days if d.id not in new_days or new_days[d.id].stops is not d.stops
                     for s in d.stops}
    day_rows, new_day_ids, gone_days, was_days = _changed(old_days, new_days, lambda d: _day_row(tid, d))
    _upsert(tx, "days", DAY_COLUMNS, day_rows, new_day_ids, was_days)
    new_stops = {s.id: s for d in changed_lists for s in d.stops}
    stop_rows, new_stop_ids, gone_stops, was_stops = _changed(old_stops, new_stops, lambda s: _stop_row(tid, s))
    if gone_stops:
        tx.executemany("DELETE FROM stops WHERE id = ?", [(k,) for k in gone_stops])
    _upsert(tx, "stops", STOP_COLUMNS, stop_rows, new_stop_ids, was_stops)
    if gone_days:
        tx.executemany("DELETE FROM days WHERE id = ?", [(k,) for k in gone_days])
    expense_rows, new_expense_ids, gone_expenses, was_expenses = _changed(
        {e.id: e for e in before.expenses}, {e.id: e for e in after.expenses}, lambda e: _expense_row(tid, e))
    if gone_expenses:
        tx.executemany("DELETE FROM expenses WHERE id = ?", [(k,) for k in gone_expenses])
    _upsert(tx, "expenses", EXPENSE_COLUMNS, expense_rows, new_expense_ids, was_expenses)
    if (before.prefs is not after.prefs and before.prefs != after.prefs) or after.prefs_set != before.prefs_set:
        tx.execute("INSERT INTO trip_preferences (trip_id, prefs_json) VALUES (?, ?) "
                   "ON CONFLICT (trip_id) DO UPDATE SET prefs_json = excluded.prefs_json", (tid, dumps(after.prefs)))
    return True


def append_message(tx: Tx, trip_id: str, *, role: str, parts: list[Any], source: str,
                   actor_user_id: str | None = None, actor_name: str | None = None,
                   stop_id: str | None = None, op: str | None = None, message_id: str | None = None,
                   turn_id: str | None = None) -> dict[str, Any]:
    """Append to the trip's timeline on an open write transaction; returns the row as a dict.

    Member messages keep the client's id (`message_id`): with an id this trip
    already holds, nothing is written and the stored row is returned (no
    duplicates on continuation or retry); an id taken by another trip is
    never reused (the row gets a fresh server id). `turn_id` (agent
    answers): the member message the answer belongs to."""
    if message_id is not None:
        found = tx.fetchone("SELECT * FROM agent_messages WHERE id = ?", (message_id,))
        if found is not None:
            if found["trip_id"] == trip_id:
                return dict(found)
            message_id = None
    tx.touch(trip_id, "timeline")
    values = (message_id or new_id(), trip_id, role, _PARTS_JSON(parts), actor_user_id,
              actor_name, source, stop_id, op, turn_id, utcnow())
    # The next seq in the same statement (one statement a row: each is a GIL round trip on the writer).
    seq = tx.execute(_APPEND_SQL, (*values, trip_id)).fetchall()[0][0]
    return {**dict(zip(_MESSAGE_GIVEN, values)), "seq": seq}


# json.dumps(parts, ensure_ascii=False), without building an encoder per row (on the writer, every op).
_PARTS_JSON = json.JSONEncoder(ensure_ascii=False).encode
_MESSAGE_GIVEN = ("id", "trip_id", "role", "parts_json", "actor_user_id", "actor_name", "source", "stop_id", "op",
                  "turn_id", "created_at")
_APPEND_SQL = (f"INSERT INTO agent_messages ({', '.join(_MESSAGE_GIVEN)}, seq) "
               f"SELECT {', '.join('?' for _ in _MESSAGE_GIVEN)}, COALESCE(MAX(seq), 0) + 1 FROM agent_messages "
               "WHERE trip_id = ? RETURNING seq")
