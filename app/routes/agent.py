"""The trip agent's HTTP face (`/api/trips/{tripId}/agent/...`).

The agent's own routes (a chat turn, debug info) answer 404 when AI is not
configured (`svc.ai is None`), before anything else. The timeline is the
group's chat, so it works without AI: its reads (messages, events), posting
a message (then always the group's, never the agent's: addressing.py), and
the suggestion decisions (outside assistants, MCP and app/assistants/, file
suggestions whether or not this server has a model).
Every route is for members only (404 for everyone else). The chat route
streams the AI SDK UI message stream, not the `{data}` envelope.
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import unquote_plus, urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from .. import media_for_model as files
from ..agent import ambient, chat, debug, suggestions, timeline
from ..agent.ui_stream import HEADERS
from ..agent.transcript import UIMessageIn
from ..errors import Invalid, NotFound
from ..core import Core
from ..roles import require_role
from .common import body, member, ok, raw_ok, services
from .openapi import describe

MAX_TEXT = 4000


def agent_services(request: Request) -> Core:
    svc = services(request)
    if svc.ai is None:
        raise NotFound("Not found")
    return svc


def own_hosts(request: Request, svc: Core) -> tuple[str, ...]:
    """Hosts whose absolute upload URLs are ours: this request's Host and the public URL's."""
    hosts = [request.headers.get("host", "")]
    if svc.settings.public_url:
        hosts.append(urlsplit(svc.settings.public_url).netloc)
    return tuple(h for h in hosts if h)


class FilePartIn(BaseModel):
    model_config = ConfigDict(extra="ignore")
    type: Literal["file"]
    mediaType: str = Field(max_length=200)
    url: str = Field(max_length=2000)
    filename: str | None = Field(default=None, max_length=255)


class NewMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str | None = None
    files: list[FilePartIn] = Field(default_factory=list, max_length=files.MAX_FILES)
    groupOnly: bool = False   # the member chose the group: the agent does not answer, whatever the words

    @field_validator("text")
    @classmethod
    def _trim(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip()
        if len(value) > MAX_TEXT:
            raise ValueError(f"at most {MAX_TEXT} characters")
        return value


class ChatRequest(BaseModel):
    """What DefaultChatTransport POSTs (`id`, `trigger`, `messageId` are ignored)."""

    model_config = ConfigDict(extra="ignore")
    messages: list[UIMessageIn] | None = Field(default=None, max_length=400)
    message: UIMessageIn | None = None
    dayId: str | None = Field(default=None, max_length=64,
                              description="The day the page shows: on a long trip the agent reads it in full "
                                          "(ignored when not a day of this trip)")


class Approval(BaseModel):
    """The AI SDK approval response shape."""

    model_config = ConfigDict(extra="forbid")
    id: str | None = Field(default=None, max_length=64)
    approved: bool | None = None
    reason: str | None = Field(default=None, max_length=500)


@describe(summary="The agent timeline: about 200 latest messages and active suggestions")
async def list_messages(request: Request):
    svc = services(request)
    trip_id = request.path_params["tripId"]
    user, _ = await member(request, trip_id)
    return ok(await timeline.history(svc, trip_id, user["id"]))


@describe(body=NewMessage, summary="Post a chat message; `addressed`: the agent will answer it (see addressing.py)")
async def post_message(request: Request):
    svc = services(request)   # the group's chat works without AI (the message is then never the agent's)
    trip_id = request.path_params["tripId"]
    user, _ = await member(request, trip_id)
    args = await body(request, NewMessage)
    parts = await files.clean_file_parts(svc.db, trip_id, [f.model_dump() for f in args.files], own_hosts(request, svc))
    text = args.text or ""
    if not text and not args.files:
        raise Invalid("text: write a message or attach a file", field="text")
    if not text and not parts:
        raise Invalid("files: none of these file types can be attached", field="files")
    message_parts = ([{"type": "text", "text": text}] if text else []) + parts
    addressed, row = await ambient.post_message(svc, trip_id, user, text, message_parts, group_only=args.groupOnly)
    return ok({"addressed": addressed, "message": timeline.message_dto(row)}, status=201)


@describe(body=ChatRequest, stream=True, summary="One agent turn as the AI SDK UI message stream")
async def chat_turn(request: Request):
    svc = agent_services(request)
    trip_id = request.path_params["tripId"]
    user, role = await member(request, trip_id)   # the body's size is bounded by app/web/bodies.py (4 MiB)
    args = await body(request, ChatRequest)
    messages = args.messages or ([args.message] if args.message else [])
    turn = await chat.prepare(svc, trip_id, user, role, messages, own_hosts(request, svc), args.dayId)
    return StreamingResponse(chat.stream(svc, turn), headers=HEADERS, media_type="text/event-stream")


@describe(summary="Copy debug info: safe correlation ids of a message and its turn (never its text)")
async def message_debug(request: Request):
    svc = agent_services(request)
    trip_id = request.path_params["tripId"]
    await member(request, trip_id)
    return ok(await debug.debug_info(svc, trip_id, request.path_params["messageId"]))


class EventsQuery(BaseModel):
    """The poll's query (read by hand below: this route is hot); described for the API document."""

    after: int = Field(default=0, ge=0, le=10**18 - 1)


@describe(summary="Poll: messages with seq > after, active suggestions, the trip version", query=EventsQuery)
async def events(request: Request):
    svc = services(request)
    trip_id = request.path_params["tripId"]
    user, _ = await member(request, trip_id)
    raw = _query_value(request, "after", "0")
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 18:
        raise Invalid("after: must be an integer >= 0", field="after")
    return raw_ok(await timeline.events_json(svc, trip_id, user["id"], int(raw)))


def _query_value(request: Request, name: str, default: str) -> str:
    """One query parameter without building QueryParams (this route is polled)."""
    for pair in request.scope.get("query_string", b"").decode("latin-1").split("&"):
        key, _, value = pair.partition("=")
        if key == name:
            return unquote_plus(value)
    return default


async def _decide(request: Request, approved_default: bool | None, force: bool | None = None):
    svc = services(request)
    trip_id, suggestion_id = request.path_params["tripId"], request.path_params["suggestionId"]
    user, role = await member(request, trip_id)  # 401/404 before anything about the body
    args = await body(request, Approval)
    if args.id is not None and args.id != suggestion_id:
        raise Invalid("id: must be the suggestion id of the path", field="id")
    approved = force if force is not None else (args.approved if args.approved is not None else approved_default)
    if approved is None:
        raise Invalid("approved: required (true to apply, false to dismiss)", field="approved")
    if not approved:
        return ok(await suggestions.dismiss(svc, trip_id, suggestion_id, user["id"], args.reason))
    require_role(role, "editor")
    reconsider = svc.watch.evaluator.reconsider if svc.watch is not None else None   # the agent looks again
    applied = await suggestions.apply_suggestion(svc, trip_id, suggestion_id, user["id"], reconsider)
    return raw_ok(await svc.trip_cache.json_for(trip_id, user["id"], applied.role))


@describe(body=Approval, summary="Approve (apply, answers the TripDto) or dismiss for yourself (approved: false)")
async def approve(request: Request):
    return await _decide(request, None)


@describe(body=Approval, summary="Alias of approve with approved defaulting to true")
async def apply(request: Request):
    return await _decide(request, True)


@describe(body=Approval, summary="Hide the suggestion for yourself only")
async def dismiss(request: Request):
    return await _decide(request, False, force=False)


BASE = "/api/trips/{tripId}/agent"
events_route = Route(f"{BASE}/events", events, methods=["GET"])   # the hot path (every open page polls it): first
routes = [
    events_route,
    Route(f"{BASE}/messages", list_messages, methods=["GET"]),
    Route(f"{BASE}/messages", post_message, methods=["POST"]),
    Route(f"{BASE}/messages/{{messageId}}/debug", message_debug, methods=["GET"]),
    Route(f"{BASE}/chat", chat_turn, methods=["POST"]),
    Route(f"{BASE}/suggestions/{{suggestionId}}/approve", approve, methods=["POST"]),
    Route(f"{BASE}/suggestions/{{suggestionId}}/apply", apply, methods=["POST"]),
    Route(f"{BASE}/suggestions/{{suggestionId}}/dismiss", dismiss, methods=["POST"]),
]
