"""The trips a person has: create one (its owner and empty days), delete one
(with its uploads), list them. Trip content changes go through apply.py."""

from __future__ import annotations

from datetime import date
from typing import Any

from .. import media, quotas
from ..db import Database, Tx
from ..filestore import FileStore
from ..ids import new_id, utcnow
from ..roles import require_role_in


async def create_trip(db: Database, owner_id: str, *, title: str, start_date: date, days: int,
                      destination: dict[str, Any] | None, timezone: str, currency: str,
                      days_per_trip: int, trips_per_user: int) -> str:
    """The new trip's id; 413 over the days-per-trip quota, 429 when the owner
    has made as many trips as they may (counted in the same transaction, so
    parallel requests cannot pass it together)."""
    quotas.check_days(days, days_per_trip)
    trip_id, now = new_id(), utcnow()
    dest = destination or {}

    def work(tx: Tx) -> None:
        quotas.check_trip_count(tx.fetchval("SELECT COUNT(*) FROM trips WHERE created_by = ?", (owner_id,)),
                                trips_per_user)
        tx.touch(trip_id, "content", "members")
        tx.execute(
            "INSERT INTO trips (id, title, dest_name, dest_lat, dest_lng, start_date, timezone, currency, version, "
            "created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)",
            (trip_id, title, dest.get("name"), dest.get("lat"), dest.get("lng"), start_date.isoformat(),
             timezone, currency, owner_id, now, now))
        tx.execute("INSERT INTO members (trip_id, user_id, role, joined_at) VALUES (?, ?, 'owner', ?)",
                   (trip_id, owner_id, now))
        tx.executemany("INSERT INTO days (id, trip_id, position, title, note) VALUES (?, ?, ?, '', '')",
                       [(new_id(), trip_id, i) for i in range(days)])

    await db.write(work)
    return trip_id


async def delete_trip(db: Database, files: FileStore, trip_id: str, actor_id: str) -> None:
    """Delete the trip, everything in it (cascades) and its uploaded files.
    The actor must still be an owner when the write runs: one demoted or
    removed by another owner after the route checked them is refused."""
    def work(tx: Tx) -> None:
        require_role_in(tx, trip_id, actor_id, "owner")
        tx.touch(trip_id, "deleted")
        tx.execute("DELETE FROM trips WHERE id = ?", (trip_id,))

    await db.write(work)
    await media.delete_trip_files(files, trip_id)


async def trips_of(db: Database, user_id: str) -> list[dict[str, Any]]:
    """The trips a user belongs to, for their list (soonest first)."""
    rows = await db.fetchall(
        "SELECT t.id, t.title, t.start_date, t.dest_name, t.version, m.role, "
        "(SELECT COUNT(*) FROM days d WHERE d.trip_id = t.id) AS day_count, "
        "(SELECT COUNT(*) FROM members x WHERE x.trip_id = t.id) AS member_count "
        "FROM members m JOIN trips t ON t.id = m.trip_id WHERE m.user_id = ? ORDER BY t.start_date, t.title",
        (user_id,))
    return [{"id": r["id"], "title": r["title"], "startDate": r["start_date"], "destination": r["dest_name"],
             "days": r["day_count"], "members": r["member_count"], "role": r["role"], "version": r["version"]}
            for r in rows]
