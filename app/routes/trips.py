"""Trips and the ops endpoint: the HTTP face of the one write path."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..errors import BadRequest, Invalid
from ..fields import LAST_DATE, CurrencyCode, TimeZone, TripDate, last_day_fits
from ..trips.apply import apply_op, apply_ops, one_sentence
from ..trips.edits import Edits, as_pairs
from ..trips.replay import apply_replayed
from ..trips import catalog
from ..trips.dto import (TripCache, View, member_etag, member_length, member_pieces, member_variant,
                         member_view, trip_json)
from ..web import compression
from ..trips.ops import MAX_DAYS, TRIP_OPS, Destination, Title, UpdateTrip
from .common import member, ok, parse, raw_ok, read_json, services, signed_in
from .openapi import describe


class NewTrip(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: Title
    startDate: TripDate
    days: int = Field(ge=1, le=MAX_DAYS, strict=True)
    destination: Destination | None = None
    timezone: TimeZone = "UTC"
    currency: CurrencyCode = "EUR"

    @field_validator("days")
    @classmethod
    def _ends_in_calendar(cls, days: int, info: ValidationInfo) -> int:
        start = info.data.get("startDate")
        if start is not None and not last_day_fits(start, days):
            raise ValueError(f"the trip's last day would fall after {LAST_DATE.isoformat()}")
        return days


class FullEcho(BaseModel):
    full: Literal["1"] | None = Field(default=None, description="1: answer the whole trip (`trip`) instead of `change`")


class TripChange(BaseModel):
    """What an op changed, from the version the writer's page most likely
    showed (`fromVersion`; null when unknown: read the whole trip). A page on
    `fromVersion` replaces its trip's own fields (`trip`, with the caller's
    role), orders its days as `dayIds`, replaces the days in `days` and, when
    present, the members (with `formerMembers`), expenses (with `expenseSummary`) and preferences.
    A page on another version reads the whole trip instead."""

    fromVersion: int | None
    version: int
    trip: dict[str, Any]
    dayIds: list[str]
    days: list[dict[str, Any]]
    members: list[dict[str, Any]] | None = None
    formerMembers: list[dict[str, Any]] | None = None   # sent with `members`
    expenses: list[dict[str, Any]] | None = None
    expenseSummary: dict[str, Any] | None = None
    preferences: dict[str, Any] | None = None


class OpAnswer(BaseModel):
    """An op's answer: `change` by default, the whole TripDto as `trip` with ?full=1."""

    ok: bool
    summary: str
    change: TripChange | None = None
    trip: dict[str, Any] | None = None


def echo(summary: str | list[str], trip: list[bytes], *, key: bytes = b"trip") -> Response:
    text = summary if isinstance(summary, str) else "; ".join(summary)
    return raw_ok(b'{"ok":true,"summary":', json.dumps(text, ensure_ascii=False).encode(), b',"', key, b'":', *trip,
                  b"}")


async def op_echo(request: Request, trip_cache: TripCache, trip_id: str, user_id: str, role: str,
                  summary: str | list[str], before: View | None) -> Response:
    """An op's answer: what changed since the view the writer most likely
    shows (`change`, which the page applies: public/planner/store.js), or
    the whole trip (`trip`) with ?full=1."""
    # Most ops carry no query string: do not parse one (Starlette's QueryParams, a few us an op).
    if request.scope["query_string"] and request.query_params.get("full") == "1":
        return echo(summary, await trip_cache.pieces_for(trip_id, user_id, role))
    return echo(summary, await trip_cache.change_for(trip_id, user_id, role, before), key=b"change")


@describe(summary="Trips you are a member of")
async def list_trips(request: Request):
    user = await signed_in(request)
    return ok({"trips": await catalog.trips_of(services(request).db, user["id"])})


@describe(body=NewTrip, summary="Create a trip; you become its owner")
async def create_trip(request: Request):
    user = await signed_in(request)
    args = parse(NewTrip, await read_json(request))
    svc = services(request)
    trip_id = await catalog.create_trip(
        svc.db, user["id"], title=args.title, start_date=args.startDate, days=args.days,
        destination=args.destination.model_dump() if args.destination else None,
        timezone=args.timezone, currency=args.currency, days_per_trip=svc.settings.days_per_trip,
        trips_per_user=svc.settings.trips_per_user)
    return raw_ok(await trip_json(svc.trip_cache, trip_id, user["id"]), status=201)


@describe(summary="The full TripDto (ETag / If-None-Match for cheap polling; brotli or gzip when accepted)")
async def get_trip(request: Request):
    user = await signed_in(request)
    view, role = await member_view(services(request).trip_cache, request.path_params["tripId"], user["id"])
    etag = member_etag(view, user["id"], role)
    headers = {"ETag": etag, "Cache-Control": "private, no-cache", "Vary": "Accept-Encoding"}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    coding = compression.choose(request.headers.get("accept-encoding"))
    if coding is None or member_length(view, user["id"], role) + 9 < compression.MIN_BYTES:
        response = raw_ok(*member_pieces(view, user["id"], role))   # joined once, into the answer
    else:   # compressed once per view and variant, kept with the view (and counted with it)
        packed, made = compression.once(
            view.derived, member_variant(view, user["id"], role),
            lambda: b"".join((b'{"data":', *member_pieces(view, user["id"], role), b"}")), coding)
        if made:
            services(request).trip_cache.account(view)
        response = Response(packed, media_type="application/json", headers={"Content-Encoding": coding})
    response.headers.update(headers)
    return response


@describe(body=UpdateTrip, summary="Update trip details (the update_trip op)", query=FullEcho, answer=OpAnswer)
async def patch_trip(request: Request):
    return await _run_op(request, request.path_params["tripId"], "update_trip")


@describe(summary="Delete the trip (owner only)")
async def delete_trip(request: Request):
    trip_id = request.path_params["tripId"]
    user, _ = await member(request, trip_id, needs="owner")
    svc = services(request)
    await catalog.delete_trip(svc.db, svc.files, trip_id, user["id"])
    return ok({"deleted": True})


def _version(data: dict, name: str) -> int | None:
    value = data.pop(name, None)
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise Invalid(f"{name}: must be an integer", field=name)
    return value


async def _run_op(request: Request, trip_id: str, op_name: str) -> Response:
    user, _ = await member(request, trip_id)
    data = await read_json(request)
    if not isinstance(data, dict):
        raise BadRequest("The body must be a JSON object", code="malformed_json")
    base_version = _version(data, "baseVersion")
    made_on = _version(data, "madeOnVersion")
    svc = services(request)
    before = svc.trip_cache.view_now(trip_id)
    if made_on is not None and base_version is None:
        applied = await apply_replayed(svc.trips, trip_id, user["id"], op_name, data, made_on)
    else:
        applied = await apply_op(svc.trips, trip_id, user["id"], op_name, data, base_version=base_version)
    return await op_echo(request, svc.trip_cache, trip_id, user["id"], applied.role, applied.summaries, before)


@describe(summary="Apply one trip operation (see TRIP_OPS); optional baseVersion gives 409 when stale; "
                  "madeOnVersion sends an op made offline (409 changed_meanwhile when another member changed "
                  "what it changes since). Answers what changed (`change`), or the whole trip with ?full=1",
          query=FullEcho, answer=OpAnswer,
          variants=("op", {name: spec.args for name, spec in TRIP_OPS.items()}))
async def run_op(request: Request):
    return await _run_op(request, request.path_params["tripId"], request.path_params["op"])


@describe(body=Edits, summary="Apply several trip operations as one change (a review fix, a suggestion's patch): "
                           "all or nothing, one version, one timeline line; optional baseVersion gives 409 when stale. "
                           "Answers what changed (`change`), or the whole trip with ?full=1",
          query=FullEcho, answer=OpAnswer)
async def run_edits(request: Request):
    trip_id = request.path_params["tripId"]
    user, _ = await member(request, trip_id)
    change = parse(Edits, await read_json(request))
    svc = services(request)
    before = svc.trip_cache.view_now(trip_id)
    applied = await apply_ops(svc.trips, trip_id, user["id"], as_pairs(change.edits),
                              base_version=change.baseVersion, one_change=True)
    return await op_echo(request, svc.trip_cache, trip_id, user["id"], applied.role, one_sentence(applied.summaries),
                         before)


# The trip read (polled by open pages) and an op (every edit) are matched
# right after the agent's events (app/routes/__init__.py).
hot_routes = [
    Route("/api/trips/{tripId}", get_trip, methods=["GET"]),
    Route("/api/trips/{tripId}/ops/{op}", run_op, methods=["POST"]),
]
routes = [
    *hot_routes,
    Route("/api/trips", list_trips, methods=["GET"]),
    Route("/api/trips", create_trip, methods=["POST"]),
    Route("/api/trips/{tripId}", patch_trip, methods=["PATCH"]),
    Route("/api/trips/{tripId}", delete_trip, methods=["DELETE"]),
    Route("/api/trips/{tripId}/ops", run_edits, methods=["POST"]),
]
