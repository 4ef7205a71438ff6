"""Comments and votes on stops: human-only, and not trip content (no new
version), so each write touches the trip's `social` change instead. An
`@agent` comment is handed to the trip agent (app/agent/ambient.py)."""

from __future__ import annotations

from .db import Database, Transaction
from .errors import NotFound
from .markdown_links import check_links
from .ids import new_id, utcnow


async def require_stop(db: Database, trip_id: str, stop_id: str) -> None:
    if not await db.fetchval("SELECT 1 FROM stops WHERE id = ? AND trip_id = ?", (stop_id, trip_id)):
        raise NotFound("No such stop in this trip", code="stop_not_found")


def comment_dto(row) -> dict:
    return {"id": row["id"], "stopId": row["stop_id"], "userId": row["user_id"], "author": row["author"],
            "byAgent": row["user_id"] is None, "body": row["body"], "createdAt": row["created_at"]}


async def comments(db: Database, trip_id: str, stop_id: str) -> list[dict]:
    rows = await db.fetchall(
        "SELECT id, stop_id, user_id, author, body, created_at FROM comments WHERE trip_id = ? AND stop_id = ? "
        "ORDER BY created_at, id", (trip_id, stop_id))
    return [comment_dto(r) for r in rows]


async def insert_comment(tx: Transaction, trip_id: str, stop_id: str, user_id: str | None, author: str,
                         text: str) -> dict:
    """A comment by a member, or by the agent (`user_id` None), on an open transaction."""
    row = {"id": new_id(), "trip_id": trip_id, "stop_id": stop_id, "user_id": user_id, "author": author,
           "body": text, "created_at": utcnow()}
    tx.touch(trip_id, "social")
    await tx.execute(f"INSERT INTO comments ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})",
                     tuple(row.values()))
    return comment_dto(row)


async def add_comment(db: Database, trip_id: str, stop_id: str, user_id: str, author: str, text: str, *,
                      origin: str | None = None) -> dict:
    """A member's comment; 422 when it links anywhere but this trip's files or the web (markdown_links.py)."""
    check_links(text, trip_id, "body", origin)
    async with db.write() as tx:
        return await insert_comment(tx, trip_id, stop_id, user_id, author, text)


async def vote(db: Database, trip_id: str, stop_id: str, user_id: str, value: int) -> dict:
    """+1 or -1 (replacing the member's earlier vote), 0 takes it back; the stop's counts after."""
    async with db.write() as tx:
        tx.touch(trip_id, "social")
        if value == 0:
            await tx.execute("DELETE FROM votes WHERE stop_id = ? AND user_id = ?", (stop_id, user_id))
        else:
            await tx.execute(
                "INSERT INTO votes (trip_id, stop_id, user_id, value) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (stop_id, user_id) DO UPDATE SET value = excluded.value",
                (trip_id, stop_id, user_id, value))
        rows = await tx.execute_fetchall("SELECT value FROM votes WHERE stop_id = ?", (stop_id,))
    return {"stopId": stop_id, "up": sum(1 for r in rows if r[0] > 0), "down": sum(1 for r in rows if r[0] < 0),
            "mine": value}
