"""Helpers every route uses: services, the signed-in user, membership,
validated bodies and the `{data: ...}` envelope."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..auth import COOKIE, require_user, user_for_token
from ..web.bodies import parse_json
from ..errors import BadRequest, NotFound, validation_error
from ..roles import require_role
from ..core import Core

M = TypeVar("M", bound=BaseModel)


def services(request: Request) -> Core:
    return request.scope["state"]["services"]


COOKIE_PREFIX = COOKIE.encode() + b"="


def session_token(scope) -> str | None:
    """Our session cookie straight from the raw headers: every signed-in
    request needs it, and parsing every cookie on the page costs more."""
    for name, value in scope["headers"]:
        if name == b"cookie":
            for part in value.split(b";"):
                part = part.strip()
                if part.startswith(COOKIE_PREFIX):
                    return part[len(COOKIE_PREFIX):].decode("latin-1").strip('"') or None
    return None


async def current_user(request: Request) -> dict | None:
    scope = request.scope
    if "user" not in scope:
        svc = services(request)
        scope["user"] = await user_for_token(svc.db, session_token(scope), svc.sessions)
    return scope["user"]


# Requests that only read; every other method of a signed-in account counts
# against its pace of changes (app/quotas.py), except signing in and out.
READS = frozenset({"GET", "HEAD", "OPTIONS"})


async def signed_in(request: Request) -> dict:
    user = require_user(await current_user(request))
    scope = request.scope
    if request.method not in READS and "paced" not in scope and not scope["path"].startswith("/api/auth/"):
        scope["paced"] = True   # once a request, whichever helper asks first
        svc = services(request)
        svc.writes.take(user["id"], svc.settings.writes_per_user_minute, svc.settings.writes_per_user_hour)
    return user


async def trip_role(svc: Core, user_id: str, trip_id: str) -> str | None:
    role, _ = await svc.trip_cache.membership(trip_id, user_id)
    return role


async def member(request: Request, trip_id: str, needs: str = "viewer") -> tuple[dict, str]:
    """The signed-in user and their role on the trip.

    Non-members get 404 so that another group's trip is never revealed;
    members without the role get 403."""
    user = await signed_in(request)
    role = await trip_role(services(request), user["id"], trip_id)
    if role is None:
        raise NotFound("Trip not found")
    require_role(role, needs)
    return user, role


async def read_json(request: Request) -> Any:
    """The body as JSON ({} when empty); its size was bounded by
    app.web.bodies.BodyLimitMiddleware while it was read."""
    return parse_json(await request.body())


def parse(model: type[M], data: Any) -> M:
    if not isinstance(data, dict):
        raise BadRequest("The body must be a JSON object", code="malformed_json")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc) from None


async def body(request: Request, model: type[M]) -> M:
    return parse(model, await read_json(request))


def public_base(request: Request) -> str:
    """The address people reach this server at (WAYLINE_PUBLIC_URL, else this
    request's), for links that leave the page: calendar feeds, the MCP URL.
    (Invite links never use the request's Host: app/routes/members.py.)"""
    return (services(request).settings.public_url or str(request.base_url)).rstrip("/")


def ok(data: Any, status: int = 200) -> Response:
    return JSONResponse({"data": data}, status_code=status)


def raw_ok(*pieces: bytes, status: int = 200) -> Response:
    """`pieces` joined are already the JSON of the data; wrap without
    re-encoding, in one join (a trip is hundreds of kB on a long trip)."""
    return Response(b"".join((b'{"data":', *pieces, b"}")), status_code=status, media_type="application/json")
