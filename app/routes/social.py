"""Comments and votes on stops: parse, call app/social.py, respond.
Viewers read, editors write; an `@agent` comment also asks the trip agent."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.routing import Route

from .. import social
from .common import body, member, ok, services
from .openapi import describe


class NewComment(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # Stored trimmed (the route strips it), so a blank one is refused here, not saved empty.
    body: str = Field(min_length=1, max_length=2000, pattern=r"\S")


class Vote(BaseModel):
    model_config = ConfigDict(extra="forbid")
    value: Literal[1, -1, 0]


async def _on_stop(request: Request, needs: str = "viewer", model: type[BaseModel] | None = None):
    """(trip id, stop id, user, parsed body) for a route about one stop: the
    caller's role first, then the body, then that the stop is in the trip."""
    trip_id, stop_id = request.path_params["tripId"], request.path_params["stopId"]
    user, _ = await member(request, trip_id, needs=needs)
    args = await body(request, model) if model is not None else None
    await social.require_stop(services(request).db, trip_id, stop_id)
    return trip_id, stop_id, user, args


@describe(summary="Comments on a stop, oldest first")
async def list_comments(request: Request):
    trip_id, stop_id, _, _ = await _on_stop(request)
    return ok({"comments": await social.comments(services(request).db, trip_id, stop_id)})


@describe(body=NewComment, summary="Comment on a stop (editors and owners); @agent asks the trip agent")
async def add_comment(request: Request):
    trip_id, stop_id, user, args = await _on_stop(request, "editor", NewComment)
    svc = services(request)
    comment = await social.add_comment(svc.db, trip_id, stop_id, user["id"], user["displayName"], args.body.strip(),
                                       origin=svc.settings.public_url)
    return ok(comment, status=201)


@describe(body=Vote, summary="Vote +1/-1 on a stop, or 0 to take your vote back (editors and owners)")
async def vote(request: Request):
    trip_id, stop_id, user, args = await _on_stop(request, "editor", Vote)
    return ok(await social.vote(services(request).db, trip_id, stop_id, user["id"], args.value))


routes = [
    Route("/api/trips/{tripId}/stops/{stopId}/comments", list_comments, methods=["GET"]),
    Route("/api/trips/{tripId}/stops/{stopId}/comments", add_comment, methods=["POST"]),
    Route("/api/trips/{tripId}/stops/{stopId}/vote", vote, methods=["PUT"]),
]
