"""Trips and the ops endpoint: the HTTP face of the one write path."""

from __future__ import annotations

import json

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
from ..trips.dto import tagged_trip_json, trip_json
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


def echo(summary: str | list[str], trip: list[bytes]) -> Response:
    text = summary if isinstance(summary, str) else "; ".join(summary)
    return raw_ok(b'{"ok":true,"summary":', json.dumps(text, ensure_ascii=False).encode(), b',"trip":', *trip, b"}")


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


@describe(summary="The full TripDto (ETag / If-None-Match for cheap polling)")
async def get_trip(request: Request):
    user = await signed_in(request)
    payload, etag = await tagged_trip_json(services(request).trip_cache, request.path_params["tripId"], user["id"])
    headers = {"ETag": etag, "Cache-Control": "private, no-cache"}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    response = raw_ok(payload)
    response.headers.update(headers)
    return response


@describe(body=UpdateTrip, summary="Update trip details (the update_trip op)")
async def patch_trip(request: Request):
    return await _run_op(request, request.path_params["tripId"], "update_trip")


@describe(summary="Delete the trip (owner only)")
async def delete_trip(request: Request):
    trip_id = request.path_params["tripId"]
    await member(request, trip_id, needs="owner")
    svc = services(request)
    await catalog.delete_trip(svc.db, svc.files, trip_id)
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
    if made_on is not None and base_version is None:
        applied = await apply_replayed(svc.trips, trip_id, user["id"], op_name, data, made_on)
    else:
        applied = await apply_op(svc.trips, trip_id, user["id"], op_name, data, base_version=base_version)
    return echo(applied.summaries, await svc.trip_cache.pieces_for(trip_id, user["id"], applied.role))


@describe(summary="Apply one trip operation (see TRIP_OPS); optional baseVersion gives 409 when stale; "
                 "madeOnVersion sends an op made offline (409 changed_meanwhile when another member changed "
                 "what it changes since)",
          variants=("op", {name: spec.args for name, spec in TRIP_OPS.items()}))
async def run_op(request: Request):
    return await _run_op(request, request.path_params["tripId"], request.path_params["op"])


@describe(body=Edits, summary="Apply several trip operations as one change (a review fix, a suggestion's patch): "
                           "all or nothing, one version, one timeline line; optional baseVersion gives 409 when stale")
async def run_edits(request: Request):
    trip_id = request.path_params["tripId"]
    user, _ = await member(request, trip_id)
    change = parse(Edits, await read_json(request))
    svc = services(request)
    applied = await apply_ops(svc.trips, trip_id, user["id"], as_pairs(change.edits),
                              base_version=change.baseVersion, one_change=True)
    return echo(one_sentence(applied.summaries), await svc.trip_cache.pieces_for(trip_id, user["id"], applied.role))


routes = [
    Route("/api/trips", list_trips, methods=["GET"]),
    Route("/api/trips", create_trip, methods=["POST"]),
    Route("/api/trips/{tripId}", get_trip, methods=["GET"]),
    Route("/api/trips/{tripId}", patch_trip, methods=["PATCH"]),
    Route("/api/trips/{tripId}", delete_trip, methods=["DELETE"]),
    Route("/api/trips/{tripId}/ops", run_edits, methods=["POST"]),
    Route("/api/trips/{tripId}/ops/{op}", run_op, methods=["POST"]),
]
