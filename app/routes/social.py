"""Comments and votes on stops. Human-only; viewers read, editors write.

An `@agent` comment is handed to the trip agent, which answers in the same
thread (app/agent/ambient.py) when AI is configured."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.routing import Route

from ..ids import new_id, utcnow
from ..errors import NotFound
from .common import body, member, ok, services
from .openapi import describe


class NewComment(BaseModel):
    model_config = ConfigDict(extra="forbid")
    body: str = Field(min_length=1, max_length=2000)


class Vote(BaseModel):
    model_config = ConfigDict(extra="forbid")
    value: Literal[1, -1, 0]


async def _on_stop(request: Request, needs: str = "viewer", model: type[BaseModel] | None = None):
    """(trip id, stop id, user, parsed body) for a route about one stop: the
    caller's role first, then the body, then that the stop is in the trip."""
    trip_id, stop_id = request.path_params["tripId"], request.path_params["stopId"]
    user, _ = await member(request, trip_id, needs=needs)
    args = await body(request, model) if model is not None else None
    found = await services(request).db.fetchval("SELECT 1 FROM stops WHERE id = ? AND trip_id = ?", (stop_id, trip_id))
    if not found:
        raise NotFound("No such stop in this trip", code="stop_not_found")
    return trip_id, stop_id, user, args


def _comment(row) -> dict:
    return {"id": row["id"], "stopId": row["stop_id"], "userId": row["user_id"], "author": row["author"],
            "byAgent": row["user_id"] is None, "body": row["body"], "createdAt": row["created_at"]}


@describe(summary="Comments on a stop, oldest first")
async def list_comments(request: Request):
    trip_id, stop_id, _, _ = await _on_stop(request)
    rows = await services(request).db.fetchall(
        "SELECT id, stop_id, user_id, author, body, created_at FROM comments WHERE trip_id = ? AND stop_id = ? "
        "ORDER BY created_at, id", (trip_id, stop_id))
    return ok({"comments": [_comment(r) for r in rows]})


@describe(body=NewComment, summary="Comment on a stop (editors and owners); @agent asks the trip agent")
async def add_comment(request: Request):
    trip_id, stop_id, user, args = await _on_stop(request, "editor", NewComment)
    svc = services(request)
    row = {"id": new_id(), "trip_id": trip_id, "stop_id": stop_id, "user_id": user["id"],
           "author": user["displayName"], "body": args.body.strip(), "created_at": utcnow()}
    await svc.db.execute_write(
        f"INSERT INTO comments ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})", tuple(row.values()))
    svc.trip_cache.invalidate(trip_id)
    if "@agent" in args.body.lower() and svc.ai is not None:
        from ..agent.ambient import on_stop_comment

        svc.background.spawn(on_stop_comment(svc, trip_id, stop_id, user, args.body), name="stop-comment-reply")
    return ok(_comment(row), status=201)


@describe(body=Vote, summary="Vote +1/-1 on a stop, or 0 to take your vote back (editors and owners)")
async def vote(request: Request):
    trip_id, stop_id, user, args = await _on_stop(request, "editor", Vote)
    svc = services(request)
    if args.value == 0:
        await svc.db.execute_write("DELETE FROM votes WHERE stop_id = ? AND user_id = ?", (stop_id, user["id"]))
    else:
        await svc.db.execute_write(
            "INSERT INTO votes (trip_id, stop_id, user_id, value) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (stop_id, user_id) DO UPDATE SET value = excluded.value",
            (trip_id, stop_id, user["id"], args.value))
    svc.trip_cache.invalidate(trip_id)
    rows = await svc.db.fetchall("SELECT user_id, value FROM votes WHERE stop_id = ?", (stop_id,))
    return ok({"stopId": stop_id, "up": sum(1 for r in rows if r[1] > 0), "down": sum(1 for r in rows if r[1] < 0),
               "mine": args.value})


routes = [
    Route("/api/trips/{tripId}/stops/{stopId}/comments", list_comments, methods=["GET"]),
    Route("/api/trips/{tripId}/stops/{stopId}/comments", add_comment, methods=["POST"]),
    Route("/api/trips/{tripId}/stops/{stopId}/vote", vote, methods=["PUT"]),
]
