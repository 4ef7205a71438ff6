"""Your private defaults and the trip's shared choices."""

from __future__ import annotations

from starlette.requests import Request
from starlette.routing import Route

from .. import preferences, uistate
from ..trips.apply import apply_op
from ..trips.ops import SetTripPreferences
from .common import body, member, ok, services, signed_in
from .openapi import describe


@describe(summary="Your private defaults (only you ever see these)")
async def get_mine(request: Request):
    user = await signed_in(request)
    prefs, saved = await preferences.load_user(services(request).db, user["id"])
    return ok({**prefs.model_dump(), "saved": saved})


@describe(body=preferences.SaveUserPreferences, summary="Save your private defaults")
async def put_mine(request: Request):
    user = await signed_in(request)
    prefs = await body(request, preferences.SaveUserPreferences)   # its dumps leave `saved` out
    await preferences.save_user(services(request).db, user["id"], prefs)
    return ok({**prefs.model_dump(), "saved": True})


@describe(summary="Whether your agent panel is open (kept per account)")
async def get_agent_panel(request: Request):
    user = await signed_in(request)
    return ok(await uistate.agent_panel(services(request).db, user["id"]))


@describe(body=uistate.AgentPanel, summary="Open or close your agent panel; answers the written state")
async def put_agent_panel(request: Request):
    user = await signed_in(request)
    panel = await body(request, uistate.AgentPanel)
    return ok(await uistate.save_agent_panel(services(request).db, user["id"], panel))


@describe(summary="How far you have read the trip's group chat (its newest seen message's seq)")
async def get_chat_read(request: Request):
    trip_id = request.path_params["tripId"]
    user, _ = await member(request, trip_id)
    return ok(await uistate.chat_read(services(request).db, trip_id, user["id"]))


@describe(body=uistate.ChatRead, summary="Mark the group chat read up to a seq (forward only); answers what is kept")
async def put_chat_read(request: Request):
    trip_id = request.path_params["tripId"]
    user, _ = await member(request, trip_id)
    read = await body(request, uistate.ChatRead)
    return ok(await uistate.save_chat_read(services(request).db, trip_id, user["id"], read))


@describe(summary="The trip's shared choices (every member sees these)")
async def get_trip(request: Request):
    trip_id = request.path_params["tripId"]
    await member(request, trip_id)
    return ok((await services(request).trips.trip(trip_id)).prefs.model_dump())


@describe(body=SetTripPreferences, summary="Set the trip's shared choices (any member)")
async def put_trip(request: Request):
    trip_id = request.path_params["tripId"]
    user, _ = await member(request, trip_id)
    args = await body(request, SetTripPreferences)
    applied = await apply_op(services(request).trips, trip_id, user["id"], "set_trip_preferences", args)
    return ok(applied.trip.prefs.model_dump())


routes = [
    Route("/api/users/preferences", get_mine, methods=["GET"]),
    Route("/api/users/preferences", put_mine, methods=["PUT"]),
    Route("/api/users/preferences/agent-panel", get_agent_panel, methods=["GET"]),
    Route("/api/users/preferences/agent-panel", put_agent_panel, methods=["PUT"]),
    Route("/api/trips/{tripId}/chat/read", get_chat_read, methods=["GET"]),
    Route("/api/trips/{tripId}/chat/read", put_chat_read, methods=["PUT"]),
    Route("/api/trips/{tripId}/preferences", get_trip, methods=["GET"]),
    Route("/api/trips/{tripId}/preferences", put_trip, methods=["PUT"]),
]
