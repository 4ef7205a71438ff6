"""READ_TOOLS: the one table of tools that read and never change a trip.

The read-side sibling of TRIP_OPS (app/trips/ops.py). A tool is one async
function `(ctx: ToolContext, args: <ToolArgs model>) -> ToolResult`,
registered with `@read_tool(name, description, action)`; its arguments'
pydantic model is taken from the function's `args` annotation, and its JSON
schema (strict when it can be) from that model. Who is offered a tool is part
of its entry: `agent` (the trip agent, app/agent/chat.py and ambient.py:
`AGENT_READ_TOOLS`, `read_tool_specs()`) and `mcp` (outside assistants,
app/assistants/tools.py, under the snake_case of its name with the trip's id
added). Both run it with `run_read_tool`.

Place search, nearby, details and routes come from the places provider
(Google or OpenStreetMap), lodging from Places with type lodging (no
scraping), weather from Open-Meteo, and `readTripMedia` reads this trip's
uploads (app/media_for_model.py; never fetched over the network). `readDay`
gives the agent one day in full when its bounded snapshot (app/agent/snapshot.py)
shows that day as an outline or a line. The trip as the agent's snapshot, the
day review, the day's shortest order and the timeline's latest lines are for
assistants (the agent has them in its context already).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal, Protocol, get_type_hints
from collections.abc import Awaitable, Callable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from . import media_for_model
from .agent import timeline
from .agent.snapshot import DAY_CHARS, capped_day, day_json, fit_days, trip_snapshot
from .ai_schema import strict_schema
from .db import Database
from .errors import AppError, NotFound, Unavailable
from .filestore import FileStore
from .legs import estimate
from .planner.shortest import shortest_preview
from .providers.maps import PlacesProvider
from .providers.weather import Weather
from .review.facts import FactSources, load_day
from .settings import Settings
from .trips.model import Trip

MAX_RESULTS = 8
OUTPUT_CHARS = 12_000


class ToolDeps(FactSources, Protocol):
    """What read tools use of the app (the core has all of it)."""

    db: Database
    settings: Settings
    places: PlacesProvider
    weather: Weather
    files: FileStore


@dataclass(frozen=True)
class ToolContext:
    deps: ToolDeps
    trip: Trip                            # the trip the tools run for (read only)
    own_hosts: tuple[str, ...] = ()       # hosts whose upload URLs count as this server's


@dataclass
class ToolResult:
    output: Any = None                  # JSON for the stream and the model
    error: str | None = None            # set instead of output when the tool failed: plain words, shown to people
    detail: str | None = None           # what went wrong, for the model only (field names, what to do instead)
    model_items: list[dict[str, Any]] = field(default_factory=list)  # extra input items (inline images/PDFs)
    limit: int | None = None            # a tool that bounds its own answer: where it is cut (else the caller's cut)

    def for_model(self) -> str:
        failure = {"error": self.error, **({"detail": self.detail} if self.detail else {})}
        text = json.dumps(failure if self.error else self.output, ensure_ascii=False)
        limit = self.limit or OUTPUT_CHARS
        return text if len(text) <= limit else text[:limit] + "…(truncated)"


class ToolArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


ToolFunction = Callable[[ToolContext, Any], Awaitable[ToolResult]]


@dataclass(frozen=True)
class ReadTool:
    name: str
    description: str                 # for the model
    action: str                      # what it does, in words for people ("check the weather")
    args: type[ToolArgs]             # from the function's `args` annotation
    run: ToolFunction
    agent: bool = True               # offered to the trip agent
    mcp: bool = False                # offered to outside assistants (app/assistants/)
    # Asks the places or routes provider (each may be a paid Google call): an
    # assistant's call counts against its member's place lookups (app/quotas.py).
    # The agent's do not: each of its tool rounds is a model call, which the AI
    # limits bound already.
    looks_up: bool = False

    def spec(self) -> dict[str, Any]:
        """The tool as a function the model may call (OpenAI Responses API shape)."""
        return function_spec(self.name, self.description, self.args)


READ_TOOLS: dict[str, ReadTool] = {}


def read_tool(name: str, description: str, action: str, *, agent: bool = True,
              mcp: bool = False, looks_up: bool = False) -> Callable[[ToolFunction], ToolFunction]:
    def register(fn: ToolFunction) -> ToolFunction:
        model = get_type_hints(fn)["args"]
        if not (isinstance(model, type) and issubclass(model, ToolArgs)):
            raise TypeError(f"read tool {name}: annotate `args` with its ToolArgs model")
        READ_TOOLS[name] = ReadTool(name, description, action, model, fn, agent=agent, mcp=mcp, looks_up=looks_up)
        return fn

    return register


def function_spec(name: str, description: str, model: type[BaseModel]) -> dict[str, Any]:
    """A function tool's spec from its argument model: strict when the model
    can be expressed strictly (free-form maps cannot), else plain JSON schema."""
    try:
        return {"type": "function", "name": name, "description": description,
                "parameters": strict_schema(model), "strict": True}
    except TypeError:
        return {"type": "function", "name": name, "description": description,
                "parameters": model.model_json_schema(), "strict": False}


def read_tool_specs() -> list[dict[str, Any]]:
    """The agent's read tools, as functions for the model."""
    return [tool.spec() for tool in AGENT_READ_TOOLS.values()]


async def run_read_tool(ctx: ToolContext, name: str, raw_arguments: str) -> ToolResult:
    """Run one read tool on its JSON arguments. Never raises for bad input or
    provider trouble: the error goes back (to the model, the stream) as the
    tool's error."""
    tool = READ_TOOLS[name]
    try:
        args = tool.args.model_validate(json.loads(raw_arguments or "{}"))
    except (ValueError, ValidationError) as exc:
        if isinstance(exc, ValidationError):
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            detail = f"{where}: {first.get('msg')}" if where else first.get("msg")
        else:
            detail = "the arguments are not JSON"
        return ToolResult(error=f"Could not {tool.action}: the request was incomplete.",
                          detail=f"Invalid arguments for {name}: {detail}")
    try:
        return await tool.run(ctx, args)
    except AppError as exc:
        return ToolResult(error=exc.message)


# -- the tools ------------------------------------------------------------------------


def _place(p: dict[str, Any]) -> dict[str, Any]:
    keep = ("placeId", "name", "lat", "lng", "address", "rating", "userRatingCount", "priceLevel", "primaryType",
            "businessStatus")
    return {k: p.get(k) for k in keep if p.get(k) is not None}


def _near(trip: Trip, lat: float | None, lng: float | None) -> tuple[float | None, float | None]:
    if lat is not None and lng is not None:
        return lat, lng
    return trip.dest_lat, trip.dest_lng


class PlaceSearch(ToolArgs):
    query: str = Field(min_length=1, max_length=200, description="What to look for, e.g. 'pastelaria near Belém'")
    lat: float | None = Field(default=None, ge=-90, le=90,
                              description="Bias results near this point; null: the trip's destination")
    lng: float | None = Field(default=None, ge=-180, le=180)


@read_tool("placeSearch", "Search places by text, near the trip's destination unless a point is given. Use it "
           "before proposing any place, for its placeId and coordinates.", "search for places", mcp=True,
           looks_up=True)
async def place_search(ctx: ToolContext, args: PlaceSearch) -> ToolResult:
    lat, lng = _near(ctx.trip, args.lat, args.lng)
    found = await ctx.deps.places.search_text(args.query, lat=lat, lng=lng, max_results=MAX_RESULTS)
    return ToolResult({"places": [_place(p) for p in found]})


class PlaceNearby(ToolArgs):
    lat: float = Field(ge=-90, le=90)
    lng: float = Field(ge=-180, le=180)
    radiusM: int | None = Field(default=None, ge=50, le=50_000, description="Search radius in metres; null: 1500")
    types: list[str] | None = Field(default=None,
                                    description="Place types (Google Places Table A names), "
                                                "e.g. ['restaurant', 'museum']")


@read_tool("placeNearby", "Places near a point, optionally of some types.", "look for places nearby", looks_up=True)
async def place_nearby(ctx: ToolContext, args: PlaceNearby) -> ToolResult:
    found = await ctx.deps.places.search_nearby(args.lat, args.lng, radius_m=args.radiusM or 1500,
                                                types=args.types or None, max_results=MAX_RESULTS)
    return ToolResult({"places": [_place(p) for p in found]})


class PlaceDetail(ToolArgs):
    placeId: str = Field(min_length=1, max_length=300)


DAY_NAMES = ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat")


def _hours(raw: dict[str, Any]) -> list[str] | None:
    """Usual weekly hours as lines; Google's own text when it sent one, and an
    OpenStreetMap place's `opening_hours` value as it stands."""
    if raw.get("source") == "osm":
        value = (raw.get("tags") or {}).get("opening_hours")
        return [value] if value else None
    hours = raw.get("regularOpeningHours")
    if not isinstance(hours, dict):
        return None
    if hours.get("weekdayDescriptions"):
        return list(hours["weekdayDescriptions"])
    lines = []
    for period in hours.get("periods") or []:
        opens, closes = period.get("open") or {}, period.get("close")
        if closes is None:
            return ["Open 24 hours"]
        day = DAY_NAMES[opens.get("day", 0) % 7]
        lines.append(f"{day} {opens.get('hour', 0):02d}:{opens.get('minute', 0):02d}–"
                     f"{closes.get('hour', 0):02d}:{closes.get('minute', 0):02d}")
    return lines or None


@read_tool("placeDetail", "Details of one place: address, rating, price level, opening hours.", "look up a place",
           looks_up=True)
async def place_detail(ctx: ToolContext, args: PlaceDetail) -> ToolResult:
    place = await ctx.deps.places.place(args.placeId)
    raw = place.get("raw") or {}
    return ToolResult({**_place(place), "openingHours": _hours(raw), "googleMapsUri": raw.get("googleMapsUri")})


class Routes(ToolArgs):
    fromLat: float
    fromLng: float
    toLat: float
    toLng: float
    mode: Literal["walk", "transit", "drive", "bicycle"]


@read_tool("routes", "Travel time and distance between two points in one mode.", "work out the travel time",
           looks_up=True)
async def routes(ctx: ToolContext, args: Routes) -> ToolResult:
    a, b = (args.fromLat, args.fromLng), (args.toLat, args.toLng)
    places = ctx.deps.places
    try:
        route = await places.route(a, b, args.mode)
    except Unavailable:
        route = None   # routing is down: the labelled estimate, as the legs do
    if route is not None:
        return ToolResult({"mode": args.mode, "durationMin": round(route.duration_s / 60),
                           "distanceM": route.distance_m, "source": places.name})
    leg = estimate("a", "b", a, b, args.mode)
    return ToolResult({"mode": args.mode, "durationMin": round(leg.duration_s / 60), "distanceM": leg.distance_m,
                       "source": "estimate"})


class CheckWeather(ToolArgs):
    startDate: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="YYYY-MM-DD")
    days: int = Field(ge=1, le=16)
    lat: float | None = Field(default=None, description="null: the trip's destination")
    lng: float | None = None


@read_tool("checkWeather", "Daily weather for trip dates: forecast when near, typical values otherwise.",
           "check the weather")
async def check_weather(ctx: ToolContext, args: CheckWeather) -> ToolResult:
    lat, lng = _near(ctx.trip, args.lat, args.lng)
    if lat is None or lng is None:
        return ToolResult(error="Weather needs a point: the trip has no destination coordinates.")
    try:
        start = date.fromisoformat(args.startDate)
    except ValueError:
        return ToolResult(error="Could not check the weather: the date was not a real date.",
                          detail="startDate must be a real date (YYYY-MM-DD)")
    return ToolResult({"days": await ctx.deps.weather.days(lat, lng, start, args.days)})


class LodgingSearch(ToolArgs):
    query: str | None = Field(default=None, max_length=200,
                              description="e.g. 'boutique hotel Alfama'; null: any lodging")
    lat: float | None = Field(default=None, description="null: the trip's destination")
    lng: float | None = None
    radiusM: int | None = Field(default=None, ge=100, le=50_000)


@read_tool("lodgingSearch", "Hotels and other lodging near a point or matching a query.",
           "search for places to stay", looks_up=True)
async def lodging_search(ctx: ToolContext, args: LodgingSearch) -> ToolResult:
    lat, lng = _near(ctx.trip, args.lat, args.lng)
    places = ctx.deps.places
    if args.query:
        found = await places.search_text(args.query, lat=lat, lng=lng, radius_m=args.radiusM or 5000,
                                         max_results=MAX_RESULTS, included_type="lodging")
    elif lat is not None and lng is not None:
        found = await places.search_nearby(lat, lng, radius_m=args.radiusM or 3000, types=["lodging"],
                                           max_results=MAX_RESULTS)
    else:
        return ToolResult(error="Could not search for places to stay: the trip has no destination yet.",
                          detail="Give a query or a point to search for lodging.")
    return ToolResult({"lodging": [_place(p) for p in found]})


class ReadTripMedia(ToolArgs):
    url: str = Field(max_length=2000, description="A /api/uploads/trips/<tripId>/<name> URL of this trip")


@read_tool("readTripMedia", "Read a file uploaded to this trip (text, image or PDF) by its upload URL.",
           "read a file")
async def read_trip_media(ctx: ToolContext, args: ReadTripMedia) -> ToolResult:
    upload = await media_for_model.resolve(ctx.deps.db, ctx.trip.id, args.url, ctx.own_hosts, field="url")
    if upload.media_type not in media_for_model.SUPPORTED_TYPES:
        return ToolResult(error=f"{upload.filename} is a kind of file the AI cannot read.",
                          detail=f"{upload.media_type} is not supported")
    content = await media_for_model.model_content(ctx.deps.files, upload)
    meta = {"url": upload.url, "filename": upload.filename, "mediaType": upload.media_type, "size": upload.size}
    if content["type"] == "input_text":
        return ToolResult({**meta, "text": content["text"]})
    # Images and PDFs go to the model inline, in a message after the tool output.
    note = {"type": "input_text", "text": f"The file {upload.filename} read with readTripMedia:"}
    return ToolResult({**meta, "attached": True}, model_items=[{"role": "user", "content": [note, content]}])


# -- the trip as assistants read it (the agent has these in its context) ---------------


class DayRef(ToolArgs):
    dayId: str = Field(min_length=1, max_length=64)


class RecentLines(ToolArgs):
    limit: int = Field(default=20, ge=1, le=50)


class TripRead(ToolArgs):
    dayId: str | None = Field(default=None, min_length=1, max_length=64,
                              description="One day in full; null: the whole trip (a long trip's later days come as "
                                          "an outline, to read by their dayId)")


# One answer's room: under the MCP server's cut (app/assistants/server.py OUTPUT_CHARS, 60,000), which
# would end the JSON mid-way. A two-week trip with notes is already longer; one day always fits.
TRIP_ANSWER_CHARS = 50_000


def _outline_words(full: int, outlined: int, lines: int, days: int) -> str:
    return (f"{lines} of the {days} days are an outline here (too long for one answer): read each in full with "
            "get_trip and its dayId.")


@read_tool("getTrip", "A trip: its days, stops (ids, times as the page shows them, places), expenses and shared "
           "choices; with a dayId, that day only.", "read the trip", agent=False, mcp=True)
async def get_trip(ctx: ToolContext, args: TripRead) -> ToolResult:
    view = await ctx.deps.trip_cache.entry(ctx.trip.id)
    snapshot = trip_snapshot(view.trip, view.legs)
    if args.dayId is None:   # its first days in full, the later ones a line each (as many as it takes)
        return ToolResult(fit_days(snapshot, budget=TRIP_ANSWER_CHARS, words=_outline_words, outline=False))
    days = [d for d in snapshot["days"] if d["id"] == args.dayId]
    if not days:
        raise NotFound(f"No day {args.dayId} in this trip", code="day_not_found")
    return ToolResult({**snapshot, "days": days})


class DayRead(ToolArgs):
    dayId: str = Field(min_length=1, max_length=64, description="The id of one of this trip's days")


@read_tool("readDay", "One day of this trip in full: every stop with its id, times, place, coordinates and "
           "note. Use it for a day the trip in your context shows only as an outline or a line.", "read the day")
async def read_day(ctx: ToolContext, args: DayRead) -> ToolResult:
    # The trip the turn started from, with estimated legs: the same times as the agent's snapshot.
    day = next((d for d in ctx.trip.days if d.id == args.dayId), None)
    if day is None:
        return ToolResult(error="Could not read the day: it is not a day of this trip.",
                          detail=f"dayId {args.dayId!r} is not one of this trip's days; use a day id from the trip "
                                 "in your context")
    # At most DAY_CHARS (long notes of a long day cut shorter), so the answer is never cut mid-JSON.
    return ToolResult({"day": capped_day(day_json(ctx.trip, day))}, limit=DAY_CHARS + 1_000)


@read_tool("reviewDay", "The day review: problems and warnings from plain rules (timing, opening hours, weather, "
           "walks, duplicates), each with fixes the server computed and checked.", "review the day",
           agent=False, mcp=True)
async def review_day(ctx: ToolContext, args: DayRef) -> ToolResult:
    day = await load_day(ctx.deps, ctx.trip.id, args.dayId)
    return ToolResult({"dayId": args.dayId, "date": day.date, **day.review().to_json(),
                       "howToFix": "propose_fix with a fix's id files it as a suggestion for the group."})


@read_tool("shortestOrder", "The day's free stops in the order with the least travel, as a preview of the moves "
           "and the times after them. Changes nothing.", "work out the shortest order", agent=False, mcp=True,
           looks_up=True)
async def shortest_order(ctx: ToolContext, args: DayRef) -> ToolResult:
    day = await load_day(ctx.deps, ctx.trip.id, args.dayId, fixes=False)
    preview = await shortest_preview(ctx.deps, day)
    return ToolResult({**preview, "note": "A preview only: nothing was changed or stored."})


@read_tool("recentTimeline", "The latest lines of the trip's timeline: the group's messages, edits and "
           "suggestions, oldest first.", "read the timeline", agent=False, mcp=True)
async def recent_timeline(ctx: ToolContext, args: RecentLines) -> ToolResult:
    rows = await ctx.deps.db.fetchall(
        f"SELECT {timeline.MESSAGE_COLUMNS} FROM agent_messages WHERE trip_id = ? ORDER BY seq DESC LIMIT ?",
        (ctx.trip.id, args.limit))
    lines = []
    for row in reversed(rows):
        text = timeline.text_of(json.loads(row["parts_json"]))
        if text:
            who = row["actor_name"] or ("Wayline agent" if row["role"] == "assistant" else "Wayline")
            lines.append({"at": row["created_at"], "who": who, "kind": row["source"], "text": text[:1000]})
    return ToolResult({"lines": lines})


AGENT_READ_TOOLS = {name: tool for name, tool in READ_TOOLS.items() if tool.agent}
