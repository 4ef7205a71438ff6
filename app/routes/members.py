"""Members, roles and invite links: parse, call app/members.py, respond."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.routing import Route

from .. import members
from .common import body, member, ok, services, signed_in
from .openapi import describe


class NewInvite(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["editor", "viewer"]
    expiresInHours: int = Field(default=members.INVITE_HOURS_DEFAULT, ge=1, le=24 * 30, strict=True)


class RoleChange(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["owner", "editor", "viewer"]


@describe(summary="Members of the trip (owners also see open invites)")
async def list_members(request: Request):
    trip_id = request.path_params["tripId"]
    _, role = await member(request, trip_id)
    return ok(await members.list_members(services(request).db, trip_id, with_invites=role == "owner"))


@describe(body=NewInvite, summary="Create an invite link (owner only)")
async def create_invite(request: Request):
    trip_id = request.path_params["tripId"]
    user, _ = await member(request, trip_id, needs="owner")
    args = await body(request, NewInvite)
    svc = services(request)
    invite = await members.create_invite(svc.db, trip_id, user["id"], args.role, args.expiresInHours)
    # Never from the request's Host (anyone can send one): WAYLINE_PUBLIC_URL, or
    # a path the page makes absolute from the address it was opened at.
    base = (svc.settings.public_url or "").rstrip("/")
    return ok({**invite, "url": f"{base}/#/invite/{invite['token']}"}, status=201)


@describe(summary="The trip's open invite links, who made each and who joined through it (owner only)")
async def list_invites(request: Request):
    trip_id = request.path_params["tripId"]
    await member(request, trip_id, needs="owner")
    return ok({"invites": await members.list_invites(services(request).db, trip_id)})


@describe(summary="Revoke an invite link (owner only)")
async def revoke_invite(request: Request):
    trip_id = request.path_params["tripId"]
    user, _ = await member(request, trip_id, needs="owner")
    await members.revoke_invite(services(request).db, trip_id, user["id"], request.path_params["inviteId"])
    return ok({"revoked": True})


@describe(summary="What an invite link is for: the trip, the role, who invited (signed in)")
async def show_invite(request: Request):
    await signed_in(request)
    invite = await members.open_invite(services(request).db, request.path_params["token"])
    return ok({k: invite[k] for k in ("tripTitle", "role", "expiresAt", "startDate", "destination", "inviterName")})


@describe(summary="Accept an invite link and join the trip")
async def accept_invite(request: Request):
    user = await signed_in(request)
    joined = await members.accept_invite(services(request).db, request.path_params["token"], user["id"])
    return ok(joined)


@describe(body=RoleChange, summary="Change a member's role (owner only)")
async def change_role(request: Request):
    trip_id, target = request.path_params["tripId"], request.path_params["userId"]
    user, _ = await member(request, trip_id, needs="owner")
    args = await body(request, RoleChange)
    await members.change_role(services(request).db, trip_id, user["id"], target, args.role)
    return ok({"userId": target, "role": args.role})


@describe(summary="Remove a member (owner), or leave the trip yourself")
async def remove_member(request: Request):
    trip_id, target = request.path_params["tripId"], request.path_params["userId"]
    user, _ = await member(request, trip_id)
    await members.remove_member(services(request).db, trip_id, user["id"], target)
    return ok({"removed": True})


routes = [
    Route("/api/trips/{tripId}/members", list_members, methods=["GET"]),
    Route("/api/trips/{tripId}/members/{userId}", change_role, methods=["PATCH"]),
    Route("/api/trips/{tripId}/members/{userId}", remove_member, methods=["DELETE"]),
    Route("/api/trips/{tripId}/invites", list_invites, methods=["GET"]),
    Route("/api/trips/{tripId}/invites", create_invite, methods=["POST"]),
    Route("/api/trips/{tripId}/invites/{inviteId}", revoke_invite, methods=["DELETE"]),
    Route("/api/invites/{token}", show_invite, methods=["GET"]),
    Route("/api/invites/{token}/accept", accept_invite, methods=["POST"]),
]
