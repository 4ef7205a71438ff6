"""Take the plan anywhere: the calendar feed, its download, and GPX.

`GET /api/calendar/{token}.ics` is the one route here without a session:
calendar apps subscribe with a plain GET, so the link carries the secret
(app/exports/feeds.py). Everything else is for members of the trip.
"""

from __future__ import annotations

from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..exports import feeds
from ..exports.files import calendar_file, file_name, gpx_file, matches
from .common import member, ok, public_base, services
from .openapi import describe

ICS = "text/calendar; charset=utf-8"
GPX = "application/gpx+xml"


def _attachment(name: str) -> str:
    return f"attachment; filename=\"{name}\"; filename*=UTF-8''{quote(name)}"


def _feed_links(request: Request, token: str) -> dict:
    url = f"{public_base(request)}/api/calendar/{token}.ics"
    # webcal:// opens the calendar app's subscribe dialog; apps fetch it over
    # https, so it is offered only where the server is reached over https.
    webcal = "webcal://" + url.removeprefix("https://") if url.startswith("https://") else None
    return {"url": url, "webcalUrl": webcal}


@describe(summary="Your calendar link for this trip: whether it is on (the link itself was shown once)")
async def feed_status(request: Request):
    trip_id = request.path_params["tripId"]
    user, _ = await member(request, trip_id)
    return ok(await feeds.status(services(request).db, trip_id, user["id"]))


@describe(summary="Turn on your calendar link (a new link replaces the old one); the link is shown only now")
async def create_feed(request: Request):
    trip_id = request.path_params["tripId"]
    user, _ = await member(request, trip_id)
    token, status = await feeds.create(services(request).db, trip_id, user["id"])
    return ok({**status, **_feed_links(request, token)}, status=201)


@describe(summary="Turn off your calendar link: calendars subscribed to it stop updating")
async def revoke_feed(request: Request):
    trip_id = request.path_params["tripId"]
    user, _ = await member(request, trip_id)
    await feeds.revoke(services(request).db, trip_id, user["id"])
    return ok({"enabled": False})


@describe(summary="The calendar feed (iCalendar) a subscription link opens; ETag / If-None-Match")
async def feed(request: Request):
    svc = services(request)
    opened = await feeds.open_feed(svc.db, request.path_params["token"], svc.last_use)
    body, etag = await calendar_file(svc.trip_cache, opened.trip_id, page_url=public_base(request),
                                     updated_at=opened.updated_at)
    headers = {"ETag": etag, "Cache-Control": "private, no-cache"}
    if matches(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=headers)
    return Response(body, media_type=ICS, headers=headers)


@describe(summary="Download the trip's calendar (.ics), the same content as the feed")
async def download_calendar(request: Request):
    trip_id = request.path_params["tripId"]
    await member(request, trip_id)
    svc = services(request)
    body, etag = await calendar_file(svc.trip_cache, trip_id, page_url=public_base(request),
                                     updated_at=await feeds.trip_updated_at(svc.db, trip_id))
    title = (await svc.trip_cache.entry(trip_id)).trip.title
    return Response(body, media_type=ICS, headers={
        "ETag": etag, "Cache-Control": "private, no-cache",
        "Content-Disposition": _attachment(f"{file_name(title)}.ics")})


@describe(summary="A day as GPX: its located stops as waypoints and a route along the legs")
async def day_gpx(request: Request):
    return await _gpx(request, request.path_params["dayId"])


@describe(summary="The whole trip as GPX: waypoints and a route per day")
async def trip_gpx(request: Request):
    return await _gpx(request, None)


async def _gpx(request: Request, day_id: str | None) -> Response:
    trip_id = request.path_params["tripId"]
    await member(request, trip_id)
    svc = services(request)
    text, name = await gpx_file(svc.trip_cache, svc.places, trip_id, page_url=public_base(request), day_id=day_id)
    return Response(text, media_type=GPX, headers={"Content-Disposition": _attachment(name),
                                                   "Cache-Control": "private, no-cache"})


routes = [
    Route("/api/calendar/{token}.ics", feed, methods=["GET"]),
    Route("/api/trips/{tripId}/calendar", feed_status, methods=["GET"]),
    Route("/api/trips/{tripId}/calendar", create_feed, methods=["POST"]),
    Route("/api/trips/{tripId}/calendar", revoke_feed, methods=["DELETE"]),
    Route("/api/trips/{tripId}/calendar.ics", download_calendar, methods=["GET"]),
    Route("/api/trips/{tripId}/days/{dayId}/route.gpx", day_gpx, methods=["GET"]),
    Route("/api/trips/{tripId}/trip.gpx", trip_gpx, methods=["GET"]),
]
