"""Members, roles and invite links. Human-only: no AI path reaches these."""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta, timezone
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.routing import Route

from ..auth import token_hash
from ..ids import iso, new_id, utcnow
from ..errors import Conflict, Forbidden, NotFound
from .common import body, member, ok, services, signed_in
from .openapi import describe

INVITE_HOURS_DEFAULT = 72


class NewInvite(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["editor", "viewer"]
    expiresInHours: int = Field(default=INVITE_HOURS_DEFAULT, ge=1, le=24 * 30, strict=True)


class RoleChange(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["owner", "editor", "viewer"]


def _invalidate(request: Request, trip_id: str) -> None:
    services(request).trip_cache.invalidate(trip_id)


@describe(summary="Members of the trip (owners also see open invites)")
async def list_members(request: Request):
    trip_id = request.path_params["tripId"]
    _, role = await member(request, trip_id)
    db = services(request).db
    members = [{"userId": r[0], "username": r[1], "displayName": r[2], "role": r[3], "joinedAt": r[4]}
               for r in await db.fetchall(
                   "SELECT u.id, u.username, u.display_name, m.role, m.joined_at FROM members m "
                   "JOIN users u ON u.id = m.user_id WHERE m.trip_id = ? ORDER BY m.joined_at", (trip_id,))]
    invites = []
    if role == "owner":
        invites = [{"id": r[0], "role": r[1], "expiresAt": r[2], "createdAt": r[3]}
                   for r in await db.fetchall(
                       "SELECT id, role, expires_at, created_at FROM invites WHERE trip_id = ? AND revoked_at IS NULL "
                       "AND expires_at > ? ORDER BY created_at", (trip_id, utcnow()))]
    return ok({"members": members, "invites": invites})


@describe(body=NewInvite, summary="Create an invite link (owner only)")
async def create_invite(request: Request):
    trip_id = request.path_params["tripId"]
    user, _ = await member(request, trip_id, needs="owner")
    args = await body(request, NewInvite)
    token = secrets.token_urlsafe(24)
    expires = iso(datetime.now(timezone.utc) + timedelta(hours=args.expiresInHours))
    invite_id = new_id()
    await services(request).db.execute_write(
        "INSERT INTO invites (id, trip_id, token_hash, role, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (invite_id, trip_id, token_hash(token), args.role, user["id"], utcnow(), expires))
    settings = services(request).settings
    base = (settings.public_url or str(request.base_url)).rstrip("/")
    return ok({"id": invite_id, "token": token, "url": f"{base}/#/invite/{token}", "role": args.role,
               "expiresAt": expires}, status=201)


@describe(summary="Revoke an invite link (owner only)")
async def revoke_invite(request: Request):
    trip_id = request.path_params["tripId"]
    await member(request, trip_id, needs="owner")
    changed = await services(request).db.execute_write(
        "UPDATE invites SET revoked_at = ? WHERE id = ? AND trip_id = ? AND revoked_at IS NULL",
        (utcnow(), request.path_params["inviteId"], trip_id))
    if not changed:
        raise NotFound("No such open invite")
    return ok({"revoked": True})


async def _open_invite(db, token: str):
    row = await db.fetchone(
        "SELECT i.id, i.trip_id, i.role, i.expires_at, i.revoked_at, t.title, t.start_date, t.dest_name, "
        "u.display_name AS inviter FROM invites i JOIN trips t ON t.id = i.trip_id "
        "JOIN users u ON u.id = i.created_by WHERE i.token_hash = ?", (token_hash(token),))
    if row is None or row["revoked_at"] is not None:
        raise NotFound("This invite link is not valid (it may have been revoked)", code="invite_invalid")
    if row["expires_at"] <= utcnow():
        raise NotFound("This invite link has expired. Ask the trip owner for a new one.", code="invite_expired")
    return row


@describe(summary="What an invite link is for (signed in)")
async def show_invite(request: Request):
    await signed_in(request)
    row = await _open_invite(services(request).db, request.path_params["token"])
    return ok({"tripTitle": row["title"], "role": row["role"], "expiresAt": row["expires_at"],
               "inviterName": row["inviter"], "startDate": row["start_date"], "destination": row["dest_name"]})


@describe(summary="Accept an invite link and join the trip")
async def accept_invite(request: Request):
    user = await signed_in(request)
    db = services(request).db
    row = await _open_invite(db, request.path_params["token"])
    async with db.write() as conn:
        existing = await conn.execute_fetchall(
            "SELECT role FROM members WHERE trip_id = ? AND user_id = ?", (row["trip_id"], user["id"]))
        if existing:
            role = existing[0][0]  # accepting never lowers (or raises) a role you already have
        else:
            role = row["role"]
            await conn.execute("INSERT INTO members (trip_id, user_id, role, joined_at) VALUES (?, ?, ?, ?)",
                               (row["trip_id"], user["id"], role, utcnow()))
    _invalidate(request, row["trip_id"])
    return ok({"tripId": row["trip_id"], "role": role})


async def _owner_count(conn, trip_id: str) -> int:
    rows = await conn.execute_fetchall("SELECT COUNT(*) FROM members WHERE trip_id = ? AND role = 'owner'", (trip_id,))
    return rows[0][0]


@describe(body=RoleChange, summary="Change a member's role (owner only)")
async def change_role(request: Request):
    trip_id, target = request.path_params["tripId"], request.path_params["userId"]
    await member(request, trip_id, needs="owner")
    args = await body(request, RoleChange)
    async with services(request).db.write() as conn:
        rows = await conn.execute_fetchall("SELECT role FROM members WHERE trip_id = ? AND user_id = ?", (trip_id, target))
        if not rows:
            raise NotFound("No such member")
        if rows[0][0] == "owner" and args.role != "owner" and await _owner_count(conn, trip_id) == 1:
            raise Conflict("A trip needs at least one owner", code="last_owner")
        await conn.execute("UPDATE members SET role = ? WHERE trip_id = ? AND user_id = ?", (args.role, trip_id, target))
    _invalidate(request, trip_id)
    return ok({"userId": target, "role": args.role})


@describe(summary="Remove a member (owner), or leave the trip yourself")
async def remove_member(request: Request):
    trip_id, target = request.path_params["tripId"], request.path_params["userId"]
    user, role = await member(request, trip_id)
    if target != user["id"] and role != "owner":
        raise Forbidden("Only an owner can remove other members")
    async with services(request).db.write() as conn:
        rows = await conn.execute_fetchall("SELECT role FROM members WHERE trip_id = ? AND user_id = ?", (trip_id, target))
        if not rows:
            raise NotFound("No such member")
        if rows[0][0] == "owner" and await _owner_count(conn, trip_id) == 1:
            raise Conflict("The last owner cannot leave; make someone else owner first", code="last_owner")
        await conn.execute("DELETE FROM members WHERE trip_id = ? AND user_id = ?", (trip_id, target))
        await conn.execute("DELETE FROM votes WHERE trip_id = ? AND user_id = ?", (trip_id, target))
    _invalidate(request, trip_id)
    return ok({"removed": True})


routes = [
    Route("/api/trips/{tripId}/members", list_members, methods=["GET"]),
    Route("/api/trips/{tripId}/members/{userId}", change_role, methods=["PATCH"]),
    Route("/api/trips/{tripId}/members/{userId}", remove_member, methods=["DELETE"]),
    Route("/api/trips/{tripId}/invites", create_invite, methods=["POST"]),
    Route("/api/trips/{tripId}/invites/{inviteId}", revoke_invite, methods=["DELETE"]),
    Route("/api/invites/{token}", show_invite, methods=["GET"]),
    Route("/api/invites/{token}/accept", accept_invite, methods=["POST"]),
]
