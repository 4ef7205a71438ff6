"""The agent's tools: read tools that run at once, write tools from TRIP_OPS.

Write tools are generated from the registry (every `OpSpec` with
`agent=True`): the op's name, its description and the strict JSON schema of
its argument model. They never run without a member's approval (chat.py).
Strict schemas make every field present, so in tool arguments `null` means
"leave as it is" (nulls are dropped before validation). To clear a field
(unpin a stop's set time, say) the model lists it in `clear`, which every write
tool with nullable fields gets, generated from the op's model like the rest.
Ops whose arguments cannot be expressed strictly (free-form share maps) are
offered non-strict.

Read tools never change a trip: place search, nearby, details, routes (from the
places provider: Google or OpenStreetMap)
and lodging (Places with type lodging; no scraping), Open-Meteo weather, and
`readTripMedia` for this trip's uploads (files.py; never fetched over the
network).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from ..ai_schema import strict_schema
from ..errors import AppError, Invalid, Unavailable
from ..legs import estimate
from .deps import AgentDeps
from ..trips.model import Trip
from ..trips.ops import TRIP_OPS
from . import files

MAX_RESULTS = 8
OUTPUT_CHARS = 12_000


class ToolArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PlaceSearch(ToolArgs):
    query: str = Field(min_length=1, max_length=200, description="What to look for, e.g. 'pastelaria near Belém'")
    lat: float | None = Field(default=None, description="Bias results near this point; null: the trip's destination")
    lng: float | None = None


class PlaceNearby(ToolArgs):
    lat: float = Field(ge=-90, le=90)
    lng: float = Field(ge=-180, le=180)
    radiusM: int | None = Field(default=None, ge=50, le=50_000, description="Search radius in metres; null: 1500")
    types: list[str] | None = Field(default=None,
                                    description="Place types (Google Places Table A names), "
                                                "e.g. ['restaurant', 'museum']")


class PlaceDetail(ToolArgs):
    placeId: str = Field(min_length=1, max_length=300)


class Routes(ToolArgs):
    fromLat: float
    fromLng: float
    toLat: float
    toLng: float
    mode: Literal["walk", "transit", "drive", "bicycle"]


class CheckWeather(ToolArgs):
    startDate: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="YYYY-MM-DD")
    days: int = Field(ge=1, le=16)
    lat: float | None = Field(default=None, description="null: the trip's destination")
    lng: float | None = None


class LodgingSearch(ToolArgs):
    query: str | None = Field(default=None, max_length=200,
                              description="e.g. 'boutique hotel Alfama'; null: any lodging")
    lat: float | None = Field(default=None, description="null: the trip's destination")
    lng: float | None = None
    radiusM: int | None = Field(default=None, ge=100, le=50_000)


class ReadTripMedia(ToolArgs):
    url: str = Field(max_length=2000, description="A /api/uploads/trips/<tripId>/<name> URL of this trip")


READ_TOOLS: dict[str, tuple[type[ToolArgs], str]] = {
    "placeSearch": (PlaceSearch, "Search places by text. Use it before proposing any place."),
    "placeNearby": (PlaceNearby, "Places near a point, optionally of some types."),
    "placeDetail": (PlaceDetail, "Details of one place: address, rating, price level, opening hours."),
    "routes": (Routes, "Travel time and distance between two points in one mode."),
    "checkWeather": (CheckWeather, "Daily weather for trip dates: forecast when near, typical values otherwise."),
    "lodgingSearch": (LodgingSearch, "Hotels and other lodging near a point or matching a query."),
    "readTripMedia": (ReadTripMedia, "Read a file uploaded to this trip (text, image or PDF) by its upload URL."),
}


# What each read tool does, in words for people: tool cards and errors use
# these, never the tool's name.
READ_TOOL_ACTIONS = {
    "placeSearch": "search for places", "placeNearby": "look for places nearby", "placeDetail": "look up a place",
    "routes": "work out the travel time", "checkWeather": "check the weather",
    "lodgingSearch": "search for places to stay", "readTripMedia": "read a file",
}


def _function(name: str, description: str, model: type[BaseModel]) -> dict:
    try:
        return {"type": "function", "name": name, "description": description,
                "parameters": strict_schema(model), "strict": True}
    except TypeError:
        return {"type": "function", "name": name, "description": description,
                "parameters": model.model_json_schema(), "strict": False}


def read_tool_specs() -> list[dict]:
    return [_function(name, desc, model) for name, (model, desc) in READ_TOOLS.items()]


def write_tool_names() -> list[str]:
    return [name for name, spec in TRIP_OPS.items() if spec.agent]


def clearable_fields(model: type[BaseModel]) -> tuple[str, ...]:
    """What a tool call may clear: the op's own list (`Args.clearable`)."""
    return getattr(model, "clearable", ())


def _write_tool_model(model: type[BaseModel]) -> type[BaseModel]:
    names = clearable_fields(model)
    if not names:
        return model
    return create_model(f"{model.__name__}Tool", __base__=model, clear=(
        list[Literal[tuple(names)]],
        Field(default_factory=list, description="Fields to clear (set to nothing), e.g. setTime to unpin a stop"),
    ))


def write_tool_specs() -> list[dict]:
    return [_function(name, f"{TRIP_OPS[name].description} Changes the trip: a member must approve it. "
                            "In the arguments, null means 'leave unchanged'; list fields to empty in clear.",
                      _write_tool_model(TRIP_OPS[name].args))
            for name in write_tool_names()]


def is_write_tool(name: str) -> bool:
    spec = TRIP_OPS.get(name)
    return spec is not None and spec.agent


def parse_arguments(raw: str, op_name: str | None = None) -> dict:
    """The model's JSON arguments with nulls dropped (null = not given); for a
    write op, the fields named in `clear` are set to null explicitly."""
    value = json.loads(raw or "{}")
    if not isinstance(value, dict):
        raise ValueError("arguments must be a JSON object")
    clear = value.pop("clear", None) if op_name else None
    args = {k: v for k, v in value.items() if v is not None}
    if clear:
        allowed = clearable_fields(TRIP_OPS[op_name].args)
        for name in clear:
            if name not in allowed:
                raise Invalid(f"clear: {name!r} cannot be cleared", field="clear")
            if name in args:
                raise Invalid(f"clear: {name!r} is both set and cleared", field="clear")
            args[name] = None
    return args


# -- running read tools ----------------------------------------------------------


@dataclass
class ToolResult:
    output: Any = None                  # JSON for the stream and the model
    error: str | None = None            # set instead of output when the tool failed: plain words, shown to people
    detail: str | None = None           # what went wrong, for the model only (field names, what to do instead)
    model_items: list[dict] = field(default_factory=list)  # extra input items (inline images/PDFs)

    def for_model(self) -> str:
        failure = {"error": self.error, **({"detail": self.detail} if self.detail else {})}
        text = json.dumps(failure if self.error else self.output, ensure_ascii=False)
        return text if len(text) <= OUTPUT_CHARS else text[:OUTPUT_CHARS] + "…(truncated)"


def _place(p: dict) -> dict:
    keep = ("placeId", "name", "lat", "lng", "address", "rating", "userRatingCount", "priceLevel", "primaryType",
            "businessStatus")
    return {k: p.get(k) for k in keep if p.get(k) is not None}


DAY_NAMES = ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat")


def _hours(raw: dict) -> list[str] | None:
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


def _near(trip: Trip, lat: float | None, lng: float | None) -> tuple[float | None, float | None]:
    if lat is not None and lng is not None:
        return lat, lng
    return trip.dest_lat, trip.dest_lng


async def run_read_tool(svc: AgentDeps, trip: Trip, name: str, raw_arguments: str,
                        own_hosts: tuple[str, ...] = ()) -> ToolResult:
    """Run one read tool. Never raises for bad input or provider trouble: the
    error goes back to the model (and the stream) as the tool's error."""
    model, _ = READ_TOOLS[name]
    try:
        args = model.model_validate(json.loads(raw_arguments or "{}"))
    except (ValueError, ValidationError) as exc:
        if isinstance(exc, ValidationError):
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            detail = f"{where}: {first.get('msg')}" if where else first.get("msg")
        else:
            detail = "the arguments are not JSON"
        return ToolResult(error=f"Could not {READ_TOOL_ACTIONS[name]}: the request was incomplete.",
                          detail=f"Invalid arguments for {name}: {detail}")
    try:
        return await _run(svc, trip, name, args, own_hosts)
    except AppError as exc:
        return ToolResult(error=exc.message)


async def _run(svc: AgentDeps, trip: Trip, name: str, args: Any, own_hosts: tuple[str, ...]) -> ToolResult:
    places = svc.places
    places_needed = name in ("placeSearch", "placeNearby", "placeDetail", "lodgingSearch")
    if places_needed and places is None:
        return ToolResult(error="Place search is not set up on this server.",
                          detail="No places provider: say so and do not invent places.")
    if name == "placeSearch":
        lat, lng = _near(trip, args.lat, args.lng)
        found = await places.search_text(args.query, lat=lat, lng=lng, max_results=MAX_RESULTS)
        return ToolResult({"places": [_place(p) for p in found]})
    if name == "placeNearby":
        found = await places.search_nearby(args.lat, args.lng, radius_m=args.radiusM or 1500,
                                           types=args.types or None, max_results=MAX_RESULTS)
        return ToolResult({"places": [_place(p) for p in found]})
    if name == "placeDetail":
        place = await places.place(args.placeId)
        return ToolResult({**_place(place), "openingHours": _hours(place.get("raw") or {}),
                           "googleMapsUri": (place.get("raw") or {}).get("googleMapsUri")})
    if name == "lodgingSearch":
        lat, lng = _near(trip, args.lat, args.lng)
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
    if name == "routes":
        a, b = (args.fromLat, args.fromLng), (args.toLat, args.toLng)
        try:
            route = await places.route(a, b, args.mode) if places is not None else None
        except Unavailable:
            route = None   # routing is down: the labelled estimate, as the legs do
        if route is not None:
            return ToolResult({"mode": args.mode, "durationMin": round(route.duration_s / 60),
                               "distanceM": route.distance_m, "source": places.name})
        leg = estimate("a", "b", a, b, args.mode)
        return ToolResult({"mode": args.mode, "durationMin": round(leg.duration_s / 60), "distanceM": leg.distance_m,
                           "source": "estimate"})
    if name == "checkWeather":
        lat, lng = _near(trip, args.lat, args.lng)
        if lat is None or lng is None or svc.weather is None:
            return ToolResult(error="Weather needs a point: the trip has no destination coordinates.")
        try:
            start = date.fromisoformat(args.startDate)
        except ValueError:
            return ToolResult(error="Could not check the weather: the date was not a real date.",
                              detail="startDate must be a real date (YYYY-MM-DD)")
        return ToolResult({"days": await svc.weather.days(lat, lng, start, args.days)})
    if name == "readTripMedia":
        upload = await files.resolve(svc, trip.id, args.url, own_hosts, field="url")
        if upload.media_type not in files.SUPPORTED_TYPES:
            return ToolResult(error=f"{upload.filename} is a kind of file the AI cannot read.",
                              detail=f"{upload.media_type} is not supported")
        content = await files.model_content(svc, upload)
        meta = {"url": upload.url, "filename": upload.filename, "mediaType": upload.media_type, "size": upload.size}
        if content["type"] == "input_text":
            return ToolResult({**meta, "text": content["text"]})
        # Images and PDFs go to the model inline, in a message after the tool output.
        note = {"type": "input_text", "text": f"The file {upload.filename} read with readTripMedia:"}
        return ToolResult({**meta, "attached": True},
                          model_items=[{"role": "user", "content": [note, content]}])
    return ToolResult(error=f"Unknown tool {name}")
