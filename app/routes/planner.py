"""The planner's routes: day review, the copilot, eat/explore/optimize drafts
and applying a draft. Parse -> call -> respond; the rules live in
app/review/findings.py, app/planner/copilot.py and app/planner/."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.routing import Route

from .. import preferences
from ..planner.copilot import CopilotQuestion, ask_copilot
from ..review.facts import full_review, load_day
from ..planner.drafts import apply_draft
from ..planner.optimize import optimize_day
from ..planner.shortest import shortest_draft
from ..planner.nearby import suggest
from ..trips.dto import trip_json
from ..fields import ServiceTime
from ..meals import Meal
from .common import body, member, ok, raw_ok, services
from .openapi import describe


class EatRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    meal: Meal | None = None


class NoOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ApplyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    startTime: ServiceTime | None = None   # a set time on the day plan's clock: "24:30" is 00:30 the next morning
    durationMin: int | None = Field(default=None, ge=5, le=24 * 60, strict=True)


def _ids(request: Request) -> tuple[str, str]:
    return request.path_params["tripId"], request.path_params["dayId"]


@describe(summary="The day's status from plain rules, with computed fixes (no model call)")
async def review(request: Request):
    trip_id, day_id = _ids(request)
    await member(request, trip_id)
    svc = services(request)
    ctx = await load_day(svc, trip_id, day_id)
    # The version its fixes were worked out on: a fix is sent back with it as
    # `baseVersion`, so one made stale by another member's edit is refused (409
    # stale) instead of applied to a plan it was not checked against.
    return ok({**(await full_review(svc, ctx)).to_json(), "version": ctx.trip.version})


@describe(body=CopilotQuestion, summary="Ask the copilot about the day; it recommends only computed fixes")
async def copilot(request: Request):
    trip_id, day_id = _ids(request)
    user, _ = await member(request, trip_id)
    ask = await body(request, CopilotQuestion)
    svc = services(request)
    ctx = await load_day(svc, trip_id, day_id)
    return ok(await ask_copilot(svc, ctx, user["id"], ask))


async def _suggestions(request: Request, *, explore: bool):
    trip_id, day_id = _ids(request)
    user, _ = await member(request, trip_id)
    meal = None if explore else (await body(request, EatRequest)).meal
    if explore:
        await body(request, NoOptions)
    svc = services(request)
    # The day's places and weather: every suggestion is checked by the review first.
    ctx = await load_day(svc, trip_id, day_id, fixes=False)
    prefs = await preferences.effective(svc.db, user["id"], ctx.trip.prefs, ctx.trip.prefs_set)
    return ok({"suggestions": await suggest(svc, ctx, user["id"], prefs, meal=meal, explore=explore)})


@describe(body=EatRequest, summary="Find places to eat: Google search + ranking, hours checked; no model call")
async def eat(request: Request):
    return await _suggestions(request, explore=False)


@describe(body=NoOptions, summary="Explore nearby: Google search + ranking; no model call")
async def explore(request: Request):
    return await _suggestions(request, explore=True)


@describe(body=NoOptions, summary="Optimize my day: a draft (edits + preview) from the model's ids; 409 preferences")
async def optimize(request: Request):
    trip_id, day_id = _ids(request)
    user, _ = await member(request, trip_id)
    await body(request, NoOptions)
    svc = services(request)
    ctx = await load_day(svc, trip_id, day_id, fixes=False)
    prefs = await preferences.effective(svc.db, user["id"], ctx.trip.prefs, ctx.trip.prefs_set)
    return ok(await optimize_day(svc, ctx, user["id"], prefs))


@describe(body=NoOptions, summary="Shortest order: the day's free stops in the order with the least travel, exactly, "
                                  "as a draft (no model call); 409 no_order when no order fits")
async def shortest(request: Request):
    trip_id, day_id = _ids(request)
    user, _ = await member(request, trip_id)
    await body(request, NoOptions)
    svc = services(request)
    ctx = await load_day(svc, trip_id, day_id, fixes=False)
    return ok({"draft": await shortest_draft(svc, ctx, user["id"])})


@describe(body=ApplyRequest, summary="Apply a draft exactly as previewed (editors and owners); 409 stale or hours")
async def apply(request: Request):
    trip_id, draft_id = request.path_params["tripId"], request.path_params["draftId"]
    user, role = await member(request, trip_id, needs="editor")   # viewers: 403 before any lookup
    edits = await body(request, ApplyRequest)
    svc = services(request)
    applied = await apply_draft(svc, trip_id, draft_id, user["id"], start_time=edits.startTime,
                                duration_min=edits.durationMin)
    if applied is None:
        return raw_ok(await trip_json(svc.trip_cache, trip_id, user["id"]))
    return raw_ok(await svc.trip_cache.json_for(trip_id, user["id"], applied.role))


DAY = "/api/trips/{tripId}/days/{dayId}"
routes = [
    Route(f"{DAY}/review", review, methods=["GET"]),
    Route(f"{DAY}/copilot", copilot, methods=["POST"]),
    Route(f"{DAY}/eat", eat, methods=["POST"]),
    Route(f"{DAY}/explore", explore, methods=["POST"]),
    Route(f"{DAY}/optimize", optimize, methods=["POST"]),
    Route(f"{DAY}/shortest", shortest, methods=["POST"]),
    Route("/api/trips/{tripId}/drafts/{draftId}/apply", apply, methods=["POST"]),
]
