"""Comments and votes on stops: human-only, and not trip content (no new
version), so each write touches the trip's `social` change instead. A
member's comment is announced as `StopCommented`, which the trip agent hears
like any other change (an `@agent` comment gets its reply:
app/agent/ambient.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .changes import TripEvent
from .db import Database, Tx
from .errors import NotFound
from .markdown_links import check_links
from .ids import new_id, utcnow

SOCIAL = frozenset({"social"})


@dataclass(frozen=True)
class StopCommented(TripEvent):
    """A member commented on a stop (committed)."""

    stop_id: str
    user_id: str
    author: str
    body: str

    def kinds(self) -> frozenset[str]:
        return SOCIAL


async def require_stop(db: Database, trip_id: str, stop_id: str) -> None:
    if not await db.fetchval("SELECT 1 FROM stops WHERE id = ? AND trip_id = ?", (stop_id, trip_id)):
        raise NotFound("No such stop in this trip", code="stop_not_found")


def comment_dto(row: Any) -> dict[str, Any]:
    return {"id": row["id"], "stopId": row["stop_id"], "userId": row["user_id"], "author": row["author"],
            "byAgent": row["user_id"] is None, "body": row["body"], "createdAt": row["created_at"]}


async def comments(db: Database, trip_id: str, stop_id: str) -> list[dict[str, Any]]:
    rows = await db.fetchall(
        "SELECT id, stop_id, user_id, author, body, created_at FROM comments WHERE trip_id = ? AND stop_id = ? "
        "ORDER BY created_at, id", (trip_id, stop_id))
    return [comment_dto(r) for r in rows]


def insert_comment(tx: Tx, trip_id: str, stop_id: str, user_id: str | None, author: str,
                   text: str) -> dict[str, Any]:
    """A comment by a member, or by the agent (`user_id` None), on an open transaction."""
    row = {"id": new_id(), "trip_id": trip_id, "stop_id": stop_id, "user_id": user_id, "author": author,
           "body": text, "created_at": utcnow()}
    tx.touch(trip_id, "social")
    tx.execute(f"INSERT INTO comments ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})",
               tuple(row.values()))
    return comment_dto(row)


async def add_comment(db: Database, trip_id: str, stop_id: str, user_id: str, author: str, text: str, *,
                      origin: str | None = None) -> dict[str, Any]:
    """A member's comment, announced after its commit (`StopCommented`); 422
    when it links anywhere but this trip's files or the web (markdown_links.py)."""
    check_links(text, trip_id, "body", origin)

    def work(tx: Tx) -> dict[str, Any]:
        tx.announce(StopCommented(trip_id, stop_id, user_id, author, text))
        return insert_comment(tx, trip_id, stop_id, user_id, author, text)

    return await db.write(work)


async def vote(db: Database, trip_id: str, stop_id: str, user_id: str, value: int) -> dict[str, Any]:
    """+1 or -1 (replacing the member's earlier vote), 0 takes it back; the stop's counts after."""
    def work(tx: Tx) -> list[Any]:
        tx.touch(trip_id, "social")
        if value == 0:
            tx.execute("DELETE FROM votes WHERE stop_id = ? AND user_id = ?", (stop_id, user_id))
        else:
            tx.execute(
                "INSERT INTO votes (trip_id, stop_id, user_id, value) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (stop_id, user_id) DO UPDATE SET value = excluded.value",
                (trip_id, stop_id, user_id, value))
        return tx.fetchall("SELECT value FROM votes WHERE stop_id = ?", (stop_id,))

    rows = await db.write(work)
    return {"stopId": stop_id, "up": sum(1 for r in rows if r[0] > 0), "down": sum(1 for r in rows if r[0] < 0),
            "mine": value}
