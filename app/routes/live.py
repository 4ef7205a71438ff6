"""Live trip pages: the event stream and presence. Parse, call app/live/, respond."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.routing import Route

from ..auth import session_ends, token_hash
from .common import body, member, ok, services, session_token
from .openapi import describe

ID = Field(min_length=1, max_length=64)


class Presence(BaseModel):
    model_config = ConfigDict(extra="forbid")
    connectionId: str = ID
    dayId: str | None = Field(default=None, min_length=1, max_length=64)


@describe(summary="Server-sent events for an open trip page: what changed (ids and versions), presence",
          stream="text/event-stream: hello, trip, social, timeline, suggestion, members, presence, reset, gone")
async def live(request: Request):
    trip_id = request.path_params["tripId"]
    user, _ = await member(request, trip_id)
    # EventSource sends the header on its own reconnects; the page passes the
    # query parameter when it opens a new EventSource after a failure.
    last = request.headers.get("last-event-id") or request.query_params.get("lastEventId")
    token = session_token(request.scope)
    svc = services(request)
    response = await svc.live.open(trip_id, user, last, token_hash(token) if token else "")
    # Its session may have ended while the stream was being opened (signed out, or the password changed on
    # another device): that ending's close_user ran before the stream was registered and missed it. Any
    # ending from now on reaches it; the one that may have slipped by is looked for once, here. Its expiry
    # is read at the same time: the stream ends with the session (app/live/hub.py, on a keep-alive tick).
    if token:
        ends = await session_ends(svc.db, token)
        if ends is None:
            svc.live.close_user(user["id"], session=token_hash(token), signed_out=True)
        else:
            response.stream.session_ends = ends
    return response


@describe(body=Presence, summary="The day this page shows, for the other members' presence avatars")
async def presence(request: Request):
    trip_id = request.path_params["tripId"]
    user, _ = await member(request, trip_id)
    args = await body(request, Presence)
    await services(request).live.set_day(trip_id, user["id"], args.connectionId, args.dayId)
    return ok({"dayId": args.dayId})


routes = [
    Route("/api/trips/{tripId}/live", live, methods=["GET"]),
    Route("/api/trips/{tripId}/presence", presence, methods=["PUT"]),
]
