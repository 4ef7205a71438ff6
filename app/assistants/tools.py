"""The MCP tools: what an outside assistant may read, and how it proposes.

Read tools (annotated read-only) reuse what the page and the agent use: the
trip as the agent sees it (with the TripDto's legs), the day review with its
computed fixes, Shortest order as a preview (stored nowhere), the agent's
place search, the timeline's recent lines, a suggestion's status.

Write tools are generated from TRIP_OPS, one per op offered to the agent,
with the op's own argument schema (as the HTTP ops endpoint takes it) plus the
trip's id. None of them changes the trip: each files a pending suggestion
(app/assistants/proposals.py). `propose_fix` does the same for a fix of the
day's review. No tool calls a model: MCP uses no AI budget.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..agent import timeline
from ..agent.snapshot import trip_snapshot
from ..read_tools import ToolContext, run_read_tool
from .deps import AssistantDeps
from ..errors import AppError, Invalid, validation_error
from ..planner.shortest import shortest_preview
from ..review.facts import load_day
from ..trips import catalog
from ..trips.ops import TRIP_OPS
from . import proposals
from .tokens import Caller, role_for

Id = Field(min_length=1, max_length=64)
MAX_TIMELINE = 50
PROPOSES = ("Does not change the trip: files a suggestion that a member approves or denies in Wayline, with the "
            "review's verdict, and answers its suggestionId (follow it with get_suggestion).")


class ToolError(Exception):
    """A failed call, in words the assistant can pass on to a person."""


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NoArgs(Args):
    pass


class TripRef(Args):
    tripId: str = Id


class DayRef(TripRef):
    dayId: str = Id


class PlaceQuery(TripRef):
    query: str = Field(min_length=1, max_length=200, description="What to look for, e.g. 'bakery near Nyhavn'")
    lat: float | None = Field(default=None, ge=-90, le=90, description="Near this point; omit: the destination")
    lng: float | None = Field(default=None, ge=-180, le=180)


class TimelineQuery(TripRef):
    limit: int = Field(default=20, ge=1, le=MAX_TIMELINE)


class SuggestionRef(TripRef):
    suggestionId: str = Id


class FixRef(DayRef):
    fixId: str = Field(min_length=1, max_length=64, description="A fix's id from review_day")


Run = Callable[[AssistantDeps, Caller, Any], Awaitable[Any]]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    schema: dict
    run: Run                    # (svc, caller, arguments) -> JSON
    read_only: bool
    args: type[BaseModel] | None = None   # read tools: validated here; write tools: by TRIP_OPS


async def _list_trips(svc: AssistantDeps, caller: Caller, _: NoArgs) -> dict:
    trips = await catalog.trips_of(svc.db, caller.user_id)
    shown = [t for t in trips if caller.trip_id in (None, t["id"])]
    for t in shown:
        t["canPropose"] = caller.scope == "propose" and t["role"] != "viewer"
    return {"trips": shown}


async def _get_trip(svc: AssistantDeps, caller: Caller, a: TripRef) -> dict:
    await role_for(svc, caller, a.tripId)
    view = await svc.trip_cache.entry(a.tripId)
    return trip_snapshot(view.trip, view.legs)


async def _review_day(svc: AssistantDeps, caller: Caller, a: DayRef) -> dict:
    await role_for(svc, caller, a.tripId)
    ctx = await load_day(svc, a.tripId, a.dayId)
    return {"dayId": a.dayId, "date": ctx.date, **ctx.review().to_json(),
            "howToFix": "propose_fix with a fix's id files it as a suggestion for the group."}


async def _shortest(svc: AssistantDeps, caller: Caller, a: DayRef) -> dict:
    await role_for(svc, caller, a.tripId)
    ctx = await load_day(svc, a.tripId, a.dayId, fixes=False)
    return {**await shortest_preview(svc, ctx), "note": "A preview only: nothing was changed or stored."}


async def _search_places(svc: AssistantDeps, caller: Caller, a: PlaceQuery) -> dict:
    await role_for(svc, caller, a.tripId)
    trip = (await svc.trips.get(a.tripId)).trip
    found = await run_read_tool(ToolContext(svc, trip), "placeSearch",
                                json.dumps({"query": a.query, "lat": a.lat, "lng": a.lng}))
    if found.error:
        raise ToolError(found.error)
    return found.output


async def _recent_timeline(svc: AssistantDeps, caller: Caller, a: TimelineQuery) -> dict:
    await role_for(svc, caller, a.tripId)
    rows = await svc.db.fetchall(
        f"SELECT {timeline.MESSAGE_COLUMNS} FROM agent_messages WHERE trip_id = ? ORDER BY seq DESC LIMIT ?",
        (a.tripId, a.limit))
    lines = []
    for row in reversed(rows):
        text = timeline.text_of(json.loads(row["parts_json"]))
        if text:
            who = row["actor_name"] or ("Wayline agent" if row["role"] == "assistant" else "Wayline")
            lines.append({"at": row["created_at"], "who": who, "kind": row["source"], "text": text[:1000]})
    return {"lines": lines}


async def _get_suggestion(svc: AssistantDeps, caller: Caller, a: SuggestionRef) -> dict:
    return await proposals.suggestion(svc, caller, a.tripId, a.suggestionId)


async def _propose_fix(svc: AssistantDeps, caller: Caller, a: FixRef) -> dict:
    return await proposals.propose_fix(svc, caller, a.tripId, a.dayId, a.fixId)


def _read(name: str, model: type[Args], run: Run, description: str, *, read_only: bool = True) -> Tool:
    return Tool(name, description, model.model_json_schema(), run, read_only, model)


READ_TOOLS = [
    _read("list_trips", NoArgs, _list_trips, "The trips you can see, with your role and whether you may propose."),
    _read("get_trip", TripRef, _get_trip, "A trip: its days, stops (ids, times as the page shows them, places), "
          "expenses and shared choices."),
    _read("review_day", DayRef, _review_day, "The day review: problems and warnings from plain rules (timing, "
          "opening hours, weather, walks, duplicates), each with fixes the server computed and checked."),
    _read("shortest_order", DayRef, _shortest, "The day's free stops in the order with the least travel, as a "
          "preview of the moves and the times after them. Changes nothing."),
    _read("search_places", PlaceQuery, _search_places, "Search places by text near the trip's destination. Use it "
          "before proposing a stop, for its placeId and coordinates."),
    _read("recent_timeline", TimelineQuery, _recent_timeline, "The latest lines of the trip's timeline: the "
          "group's messages, edits and suggestions, oldest first."),
    _read("get_suggestion", SuggestionRef, _get_suggestion, "A suggestion you filed: pending, applied, stale or "
          "expired, who denied it, and the review's verdict."),
]


def _op_tool(op_name: str) -> Tool:
    spec = TRIP_OPS[op_name]
    schema = spec.args.model_json_schema()
    schema["properties"] = {"tripId": {"type": "string", "minLength": 1, "maxLength": 64,
                                       "description": "The trip (from list_trips)"}, **schema.get("properties", {})}
    schema["required"] = ["tripId", *schema.get("required", [])]

    async def run(svc: AssistantDeps, caller: Caller, arguments: dict) -> dict:
        args = dict(arguments)
        trip_id = args.pop("tripId", None)
        if not isinstance(trip_id, str) or not trip_id:
            raise Invalid("tripId: required", field="tripId")
        return await proposals.propose_op(svc, caller, trip_id, op_name, args)

    return Tool(op_name, f"{spec.description} {PROPOSES}", schema, run, read_only=False)


PROPOSE_FIX = _read("propose_fix", FixRef, _propose_fix, f"Propose one fix from review_day. {PROPOSES}",
                    read_only=False)
WRITE_TOOLS = [*(_op_tool(name) for name, spec in TRIP_OPS.items() if spec.agent), PROPOSE_FIX]
TOOLS = {tool.name: tool for tool in [*READ_TOOLS, *WRITE_TOOLS]}


def offered(caller: Caller) -> list[Tool]:
    """Read tools for every token; the proposing ones for `propose` tokens
    (the role is checked per trip on each call)."""
    return READ_TOOLS + (WRITE_TOOLS if caller.scope == "propose" else [])


async def call(svc: AssistantDeps, caller: Caller, name: str, arguments: dict | None) -> Any:
    """Run a tool; raises ToolError with plain words for anything that fails."""
    tool = TOOLS.get(name)
    if tool is None or tool not in offered(caller):
        raise ToolError(f"There is no tool called {name!r} for this assistant.")
    try:
        if tool.args is not None:
            try:
                parsed = tool.args.model_validate(arguments or {})
            except ValidationError as exc:
                raise validation_error(exc) from None
            return await tool.run(svc, caller, parsed)
        return await tool.run(svc, caller, arguments or {})
    except AppError as exc:
        raise ToolError(exc.message) from None
