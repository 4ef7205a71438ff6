"""The MCP tools: what an outside assistant may read, and how it proposes.

Read tools (annotated read-only) are the shared ones offered to assistants
(`mcp=True` in app/read_tools.py: the trip as the agent sees it, the day
review with its computed fixes, Shortest order as a preview, place search,
the timeline's recent lines), each under the snake_case of its name with the
trip's id added, plus what only an assistant asks: the trips its token
reaches and the status of a suggestion it filed.

Write tools are generated from TRIP_OPS, one per op offered to the agent,
with the op's own argument schema (as the HTTP ops endpoint takes it) plus the
trip's id. None of them changes the trip: each files a pending suggestion
(app/assistants/proposals.py). `propose_fix` does the same for a fix of the
day's review. No tool calls a model: MCP uses no AI budget.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..read_tools import READ_TOOLS as SHARED_READ_TOOLS, ReadTool, ToolContext, run_read_tool
from .deps import AssistantDeps
from ..errors import AppError, Invalid, validation_error
from ..trips import catalog
from ..trips.ops import TRIP_OPS
from . import proposals
from .tokens import Caller, role_for

Id = Field(min_length=1, max_length=64)
PROPOSES = ("Does not change the trip: files a suggestion that a member approves or denies in Wayline, with the "
            "review's verdict, and answers its suggestionId (follow it with get_suggestion).")


class ToolError(Exception):
    """A failed call, in words the assistant can pass on to a person."""


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NoArgs(Args):
    pass


class SuggestionRef(Args):
    tripId: str = Id
    suggestionId: str = Id


class FixRef(Args):
    tripId: str = Id
    dayId: str = Id
    fixId: str = Field(min_length=1, max_length=64, description="A fix's id from review_day")


Run = Callable[[AssistantDeps, Caller, Any], Awaitable[Any]]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    schema: dict
    run: Run                    # (svc, caller, arguments) -> JSON
    read_only: bool
    args: type[BaseModel] | None = None   # validated here when set; else by what the tool runs (TRIP_OPS, READ_TOOLS)


def mcp_name(name: str) -> str:
    """An MCP tool's name, in the snake_case of the write tools (op names): placeSearch -> place_search."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def _with_trip_id(schema: dict) -> dict:
    """A trip tool's arguments for an assistant: the trip's id, then the tool's own."""
    trip_id = {"type": "string", "minLength": 1, "maxLength": 64, "description": "The trip (from list_trips)"}
    return {**schema, "properties": {"tripId": trip_id, **schema.get("properties", {})},
            "required": ["tripId", *schema.get("required", [])]}


def _trip_id(arguments: dict) -> tuple[str, dict]:
    args = dict(arguments)
    trip_id = args.pop("tripId", None)
    if not isinstance(trip_id, str) or not trip_id:
        raise Invalid("tripId: must be a trip's id as list_trips gives it", field="tripId")
    return trip_id, args


async def _list_trips(svc: AssistantDeps, caller: Caller, _: NoArgs) -> dict:
    trips = await catalog.trips_of(svc.db, caller.user_id)
    shown = [t for t in trips if caller.trip_id in (None, t["id"])]
    for t in shown:
        t["canPropose"] = caller.scope == "propose" and t["role"] != "viewer"
    return {"trips": shown}


async def _get_suggestion(svc: AssistantDeps, caller: Caller, a: SuggestionRef) -> dict:
    return await proposals.suggestion(svc, caller, a.tripId, a.suggestionId)


async def _propose_fix(svc: AssistantDeps, caller: Caller, a: FixRef) -> dict:
    return await proposals.propose_fix(svc, caller, a.tripId, a.dayId, a.fixId)


def _own(name: str, model: type[Args], run: Run, description: str, *, read_only: bool = True) -> Tool:
    return Tool(name, description, model.model_json_schema(), run, read_only, model)


def _read_tool(tool: ReadTool) -> Tool:
    """A shared read tool (app/read_tools.py) for an assistant: its arguments plus the trip's id,
    run on the trip as the token's member may see it."""

    async def run(svc: AssistantDeps, caller: Caller, arguments: dict) -> Any:
        trip_id, args = _trip_id(arguments)
        try:
            # Checked here with the API's words ("limit: must be at most 50"): the shared
            # runner's detail is for the agent, under the agent's name for the tool (getTrip).
            tool.args.model_validate(args)
        except ValidationError as exc:
            raise validation_error(exc) from None
        await role_for(svc, caller, trip_id)
        if tool.looks_up:
            svc.place_lookups.take(caller.user_id, svc.settings.place_lookups_per_user_minute,
                                   svc.settings.place_lookups_per_user_hour)
        trip = (await svc.trips.get(trip_id)).trip
        result = await run_read_tool(ToolContext(svc, trip), tool.name, json.dumps(args))
        if result.error:   # an assistant is a model: the detail (which field, what to do) is for it too
            raise ToolError(f"{result.error} {result.detail}" if result.detail else result.error)
        return result.output

    return Tool(mcp_name(tool.name), tool.description, _with_trip_id(tool.args.model_json_schema()), run,
                read_only=True)


# Reading what this assistant may see: the trips of its token, the suggestions it filed.
LIST_TRIPS = _own("list_trips", NoArgs, _list_trips,
                  "The trips you can see, with your role and whether you may propose.")
GET_SUGGESTION = _own("get_suggestion", SuggestionRef, _get_suggestion, "A suggestion you filed: its status "
                      "(pending, applied, stale, expired or resolved), what it changes, who denied or applied it, "
                      "and the review's verdict.")
READ_ONLY = [LIST_TRIPS, *(_read_tool(tool) for tool in SHARED_READ_TOOLS.values() if tool.mcp), GET_SUGGESTION]


def _op_tool(op_name: str) -> Tool:
    spec = TRIP_OPS[op_name]

    async def run(svc: AssistantDeps, caller: Caller, arguments: dict) -> dict:
        trip_id, args = _trip_id(arguments)
        return await proposals.propose_op(svc, caller, trip_id, op_name, args)

    return Tool(op_name, f"{spec.description} {PROPOSES}", _with_trip_id(spec.args.model_json_schema()), run,
                read_only=False)


PROPOSE_FIX = _own("propose_fix", FixRef, _propose_fix, f"Propose one fix from review_day. {PROPOSES}",
                   read_only=False)
WRITE_TOOLS = [*(_op_tool(name) for name, spec in TRIP_OPS.items() if spec.agent), PROPOSE_FIX]
TOOLS = {tool.name: tool for tool in [*READ_ONLY, *WRITE_TOOLS]}


def offered(caller: Caller) -> list[Tool]:
    """Read tools for every token; the proposing ones for `propose` tokens
    (the role is checked per trip on each call)."""
    return READ_ONLY + (WRITE_TOOLS if caller.scope == "propose" else [])


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
