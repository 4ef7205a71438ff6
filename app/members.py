"""Members, roles and invite links: who belongs to a trip. Human-only: no AI
path reaches these. Every change touches the trip's `members` (and `social`
when votes go with a member), so caches and live pages follow.

An invite link ends for a member an owner removes: every link made before
the removal (the one they used, or any other) refuses them; an owner who
wants them back makes a new link. Leaving by yourself is not a removal."""

from __future__ import annotations

from typing import Any

import secrets
import sqlite3
from datetime import datetime, timedelta, UTC

from .auth import token_hash
from .db import Database, Tx
from .errors import AppError, Conflict, NotFound
from .ids import iso, new_id, utcnow
from .roles import require_role_in

INVITE_HOURS_DEFAULT = 72


async def list_members(db: Database, trip_id: str, *, with_invites: bool) -> dict:
    """Members oldest first; open invites too when `with_invites` (owners)."""
    members = [{"userId": r[0], "username": r[1], "displayName": r[2], "role": r[3], "joinedAt": r[4]}
               for r in await db.fetchall(
                   "SELECT u.id, u.username, u.display_name, m.role, m.joined_at FROM members m "
                   "JOIN users u ON u.id = m.user_id WHERE m.trip_id = ? ORDER BY m.joined_at", (trip_id,))]
    invites = []
    if with_invites:
        invites = [{"id": r[0], "role": r[1], "expiresAt": r[2], "createdAt": r[3]}
                   for r in await db.fetchall(
                       "SELECT id, role, expires_at, created_at FROM invites WHERE trip_id = ? "
                       "AND revoked_at IS NULL AND expires_at > ? ORDER BY created_at", (trip_id, utcnow()))]
    return {"members": members, "invites": invites}


def _invites_and_uses(conn: sqlite3.Connection, trip_id: str, now: str) -> tuple[list[Any], list[Any]]:
    """The trip's open links and who joined through them, in one read transaction."""
    conn.execute("BEGIN")
    try:
        rows = conn.execute(
            "SELECT i.id, i.role, i.created_at, i.expires_at, u.display_name FROM invites i "
            "LEFT JOIN users u ON u.id = i.created_by "
            "WHERE i.trip_id = ? AND i.revoked_at IS NULL AND i.expires_at > ? ORDER BY i.created_at",
            (trip_id, now)).fetchall()
        uses = conn.execute(
            "SELECT x.invite_id, x.user_id, u.display_name, x.used_at FROM invite_uses x "
            "JOIN invites i ON i.id = x.invite_id JOIN users u ON u.id = x.user_id "
            "WHERE i.trip_id = ? ORDER BY x.used_at", (trip_id,)).fetchall()
    finally:
        conn.execute("COMMIT")
    return rows, uses


async def list_invites(db: Database, trip_id: str) -> list[dict]:
    """The trip's open links (not revoked, not expired), oldest first, each with
    who made it and who joined through it. Tokens are never shown again."""
    rows, uses = await db.read(_invites_and_uses, trip_id, utcnow())
    joined: dict[str, list[dict]] = {}
    for invite_id, user_id, name, used_at in uses:
        joined.setdefault(invite_id, []).append({"userId": user_id, "displayName": name, "joinedAt": used_at})
    return [{"id": r[0], "role": r[1], "createdAt": r[2], "expiresAt": r[3], "createdByName": r[4],
             "joined": joined.get(r[0], [])} for r in rows]


async def create_invite(db: Database, trip_id: str, user_id: str, role: str, hours: int) -> dict:
    """A new invite link's token (shown once; only its hash is stored)."""
    token = secrets.token_urlsafe(24)
    expires = iso(datetime.now(UTC) + timedelta(hours=hours))
    invite_id = new_id()

    def work(tx: Tx) -> None:
        require_role_in(tx, trip_id, user_id, "owner")
        tx.execute("INSERT INTO invites (id, trip_id, token_hash, role, created_by, created_at, expires_at) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?)",
                   (invite_id, trip_id, token_hash(token), role, user_id, utcnow(), expires))

    await db.write(work)
    return {"id": invite_id, "token": token, "role": role, "expiresAt": expires}


async def revoke_invite(db: Database, trip_id: str, actor_id: str, invite_id: str) -> None:
    def work(tx: Tx) -> int:
        require_role_in(tx, trip_id, actor_id, "owner")
        return int(tx.execute("UPDATE invites SET revoked_at = ? WHERE id = ? AND trip_id = ? AND revoked_at IS NULL",
                              (utcnow(), invite_id, trip_id)).rowcount)

    if not await db.write(work):
        raise NotFound("No such open invite")


class RemovedFromTrip(AppError):
    status, code = 403, "removed_from_trip"


def _check_open(row: sqlite3.Row | None) -> sqlite3.Row:
    """The link's row; 404 when it is unknown (its trip deleted too), revoked or expired."""
    if row is None or row["revoked_at"] is not None:
        raise NotFound("This invite link is not valid (it may have been revoked)", code="invite_invalid")
    if row["expires_at"] <= utcnow():
        raise NotFound("This invite link has expired. Ask the trip owner for a new one.", code="invite_expired")
    return row


async def open_invite(db: Database, token: str) -> dict:
    """What an invite link is for: the trip, the role, who invited; 404 when
    revoked, expired or unknown."""
    row = await db.fetchone(
        "SELECT i.id, i.created_at, i.trip_id, i.role, i.expires_at, i.revoked_at, t.title, t.start_date, "
        "t.dest_name, "
        "u.display_name AS inviter FROM invites i JOIN trips t ON t.id = i.trip_id "
        "LEFT JOIN users u ON u.id = i.created_by WHERE i.token_hash = ?", (token_hash(token),))
    row = _check_open(row)
    return {"id": row["id"], "createdAt": row["created_at"], "tripId": row["trip_id"], "tripTitle": row["title"],
            "role": row["role"], "expiresAt": row["expires_at"], "startDate": row["start_date"],
            "destination": row["dest_name"], "inviterName": row["inviter"]}


async def accept_invite(db: Database, token: str, user_id: str) -> dict:
    """Join the trip; accepting never lowers (or raises) a role you already have."""
    invite = await open_invite(db, token)
    trip_id = invite["tripId"]

    def work(tx: Tx) -> dict[str, Any]:
        # Again in the write: the link may have been revoked, or its trip
        # deleted, since it was read above (the join would then go through
        # a closed link, or fail on the trip's foreign key).
        _check_open(tx.fetchone("SELECT revoked_at, expires_at FROM invites WHERE id = ?", (invite["id"],)))
        existing = tx.fetchval("SELECT role FROM members WHERE trip_id = ? AND user_id = ?", (trip_id, user_id))
        if existing:
            return {"tripId": trip_id, "role": existing, "joined": False}
        removed = tx.fetchall(
            "SELECT 1 FROM trip_removals WHERE trip_id = ? AND user_id = ? AND removed_at >= ?",
            (trip_id, user_id, invite["createdAt"]))
        if removed:
            raise RemovedFromTrip("An owner removed you from this trip, so this link no longer lets you in. "
                                  "Ask an owner for a new invite link.")
        now = utcnow()
        tx.touch(trip_id, "members")
        tx.execute("INSERT INTO members (trip_id, user_id, role, joined_at) VALUES (?, ?, ?, ?)",
                   (trip_id, user_id, invite["role"], now))
        tx.execute("INSERT OR IGNORE INTO invite_uses (invite_id, user_id, used_at) VALUES (?, ?, ?)",
                   (invite["id"], user_id, now))
        return {"tripId": trip_id, "role": invite["role"], "joined": True}

    return await db.write(work)


def _role_of(tx: Tx, trip_id: str, user_id: str) -> str:
    role = tx.fetchval("SELECT role FROM members WHERE trip_id = ? AND user_id = ?", (trip_id, user_id))
    if role is None:
        raise NotFound("No such member")
    return str(role)


def _owner_count(tx: Tx, trip_id: str) -> int:
    return int(tx.fetchval("SELECT COUNT(*) FROM members WHERE trip_id = ? AND role = 'owner'", (trip_id,)))


async def change_role(db: Database, trip_id: str, actor_id: str, target: str, role: str) -> None:
    def work(tx: Tx) -> None:
        require_role_in(tx, trip_id, actor_id, "owner")
        current = _role_of(tx, trip_id, target)
        if current == "owner" and role != "owner" and _owner_count(tx, trip_id) == 1:
            raise Conflict("A trip needs at least one owner", code="last_owner")
        tx.touch(trip_id, "members")
        tx.execute("UPDATE members SET role = ? WHERE trip_id = ? AND user_id = ?", (role, trip_id, target))

    await db.write(work)


async def remove_member(db: Database, trip_id: str, actor_id: str, target: str) -> None:
    """An owner removes a member, or a member leaves; their votes go with them."""
    def work(tx: Tx) -> None:
        if target != actor_id:   # checked in the write: see roles.require_role_in
            require_role_in(tx, trip_id, actor_id, "owner")
        current = _role_of(tx, trip_id, target)
        if current == "owner" and _owner_count(tx, trip_id) == 1:
            raise Conflict("The last owner cannot leave; make someone else owner first", code="last_owner")
        tx.touch(trip_id, "members", "social")
        tx.execute("DELETE FROM members WHERE trip_id = ? AND user_id = ?", (trip_id, target))
        tx.execute("DELETE FROM votes WHERE trip_id = ? AND user_id = ?", (trip_id, target))
        if target != actor_id:   # removed by an owner: the links made until now end for them
            tx.execute("INSERT OR REPLACE INTO trip_removals (trip_id, user_id, removed_at) VALUES (?, ?, ?)",
                       (trip_id, target, utcnow()))

    await db.write(work)
