"""Calendar subscriptions: one private feed link per member and trip.

The link's token is the trip's id and 32 random bytes, shown once and stored
as its sha256; a new link
replaces the old one, revoking deletes it, and the feed ends with the
membership (calendar_feeds cascades from members, migration 0025). Reading a
feed checks the membership again, so a member who left never gets the trip
even if a row outlived it.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime

from ..auth import LastUse, token_hash
from ..db import Database, Tx
from ..errors import NotFound
from ..ids import utcnow


@dataclass(frozen=True)
class Feed:
    trip_id: str
    user_id: str
    updated_at: datetime   # the trip's last change: the feed's LAST-MODIFIED


async def status(db: Database, trip_id: str, user_id: str) -> dict:
    """Whether this member has a feed link (never the link itself: it was shown once)."""
    row = await db.fetchone("SELECT created_at, last_used_at FROM calendar_feeds WHERE trip_id = ? AND user_id = ?",
                            (trip_id, user_id))
    if row is None:
        return {"enabled": False, "createdAt": None, "lastUsedAt": None}
    return {"enabled": True, "createdAt": row["created_at"], "lastUsedAt": row["last_used_at"]}


async def create(db: Database, trip_id: str, user_id: str) -> tuple[str, dict]:
    """A new feed token for this member (replacing any earlier link) and its status."""
    # The trip's id leads the token, so with trips on several machines the link
    # is replayed to the trip's home like any trip route (app/web/trip_homes.py).
    token = f"{trip_id}.{secrets.token_urlsafe(32)}"
    now = utcnow()

    def work(tx: Tx) -> None:
        tx.execute("DELETE FROM calendar_feeds WHERE trip_id = ? AND user_id = ?", (trip_id, user_id))
        tx.execute("INSERT INTO calendar_feeds (token_hash, trip_id, user_id, created_at) VALUES (?, ?, ?, ?)",
                   (token_hash(token), trip_id, user_id, now))

    await db.write(work)
    return token, {"enabled": True, "createdAt": now, "lastUsedAt": None}


async def revoke(db: Database, trip_id: str, user_id: str) -> bool:
    return bool(await db.write(lambda tx: tx.execute("DELETE FROM calendar_feeds WHERE trip_id = ? AND user_id = ?",
                                                     (trip_id, user_id)).rowcount))


async def open_feed(db: Database, token: str, last_use: LastUse) -> Feed:
    """The feed a token opens; 404 for an unknown or revoked token or a member who left."""
    key = token_hash(token)
    row = await db.fetchone(
        "SELECT f.trip_id, f.user_id, t.updated_at FROM calendar_feeds f "
        "JOIN members m ON m.trip_id = f.trip_id AND m.user_id = f.user_id "
        "JOIN trips t ON t.id = f.trip_id WHERE f.token_hash = ?", (key,))
    if row is None:
        raise NotFound("This calendar link is not valid any more", code="feed_not_found")
    if last_use.due(key):
        await db.write(lambda tx: tx.execute("UPDATE calendar_feeds SET last_used_at = ? WHERE token_hash = ?",
                                             (utcnow(), key)))
    return Feed(row["trip_id"], row["user_id"], datetime.fromisoformat(row["updated_at"].replace("Z", "+00:00")))


async def trip_updated_at(db: Database, trip_id: str) -> datetime:
    value = await db.fetchval("SELECT updated_at FROM trips WHERE id = ?", (trip_id,))
    if value is None:
        raise NotFound("Trip not found")
    return datetime.fromisoformat(value.replace("Z", "+00:00"))
