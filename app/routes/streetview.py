"""Street-view images from our own origin (app/providers/streetview.py): members only,
never Google's URL or key. 404 for anyone else, an unknown or unsigned name,
or a server without Google."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..errors import NotFound
from .common import member, services
from .openapi import describe


@describe(summary="A street-view image grounded for this trip (JPEG)")
async def image(request: Request):
    trip_id = request.path_params["tripId"]
    await member(request, trip_id)
    svc = services(request)
    if svc.street_view is None:
        raise NotFound("No such image")
    data = await svc.street_view.image_for(trip_id, request.path_params["name"])
    return Response(data, media_type="image/jpeg", headers={
        "Cache-Control": "private, max-age=86400", "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "sandbox; default-src 'none'"})


routes = [Route("/api/trips/{tripId}/street-view/{name}", image, methods=["GET"])]
