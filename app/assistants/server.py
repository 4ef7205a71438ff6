"""The MCP server at /mcp: the official `mcp` SDK's low-level server over
streamable HTTP, mounted in the same app (app/routes/mcp.py authenticates the
bearer token and hands the request here with its Caller in the scope).

Stateless and answered as JSON: every request stands alone (no session to
keep or resume, so a restart or a second request costs nothing), and a tool
call is one POST and its answer. A failed call is a tool result with
`isError: true` and a sentence a person can read, never a protocol error or
a stack trace. Each token gets `calls_per_minute` tool calls in any minute.
"""

from __future__ import annotations

import json
import logging
import time
from collections import deque
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager

from .deps import AssistantDeps
from ..web.bodies import OP_BODY
from . import tools
from .tokens import Caller

log = logging.getLogger("wayline.assistants")
CALLER = "wayline.caller"      # the scope key app/routes/mcp.py puts the Caller under
OUTPUT_CHARS = 60_000          # a tool's text answer (a long trip's snapshot fits)
INSTRUCTIONS = (
    "Wayline is a trip planner shared by a small group. You act for one member. Read with list_trips, get_trip, "
    "review_day, shortest_order, place_search and recent_timeline. Nothing you do changes a trip: each change "
    "tool (and propose_fix) files a suggestion the group approves or denies in Wayline; follow it with "
    "get_suggestion. Use ids exactly as the read tools give them.")


class CallLimiter:
    """At most `per_minute` tool calls per token in any 60 seconds (in memory: a restart forgives)."""

    def __init__(self, per_minute: int, clock=time.monotonic):
        self.per_minute, self.clock = per_minute, clock
        self._calls: dict[str, deque[float]] = {}

    def admit(self, key: str) -> float | None:
        """None when the call may run, else the seconds until it may."""
        now = self.clock()
        calls = self._calls.setdefault(key, deque())
        while calls and calls[0] <= now - 60:
            calls.popleft()
        if len(calls) >= self.per_minute:
            return 60 - (now - calls[0])
        calls.append(now)
        if len(self._calls) > 10_000:   # forget idle tokens
            self._calls = {k: q for k, q in self._calls.items() if q and q[-1] > now - 60}
        return None


class AssistantServer:
    """One per app, built and run by app/assistants/door.py on the first request."""

    def __init__(self, svc: AssistantDeps, *, calls_per_minute: int):
        self.svc = svc
        self.limiter = CallLimiter(calls_per_minute)
        self.server = Server("wayline", version="1", title="Wayline", instructions=INSTRUCTIONS,
                             on_list_tools=self._list_tools, on_call_tool=self._call_tool)
        # The body limit of the ops endpoint (app/web/bodies.py also cuts it off while reading).
        self.manager = StreamableHTTPSessionManager(app=self.server, stateless=True, json_response=True,
                                                    max_request_body_size=OP_BODY)
        self.asgi = StreamableHTTPASGIApp(self.manager)

    async def handle(self, scope, receive, send, caller: Caller) -> None:
        await self.asgi({**scope, CALLER: caller}, receive, _plain_invalid_request(send))

    @staticmethod
    def _caller(ctx: Any) -> Caller:
        return ctx.request.scope[CALLER]

    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[
            types.Tool(name=t.name, description=t.description, input_schema=t.schema,
                       annotations=types.ToolAnnotations(read_only_hint=t.read_only, destructive_hint=False,
                                                         idempotent_hint=t.read_only, open_world_hint=False))
            for t in tools.offered(self._caller(ctx))])

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        caller = self._caller(ctx)
        wait = self.limiter.admit(caller.token_id)
        if wait is not None:
            return _error(f"Too many requests from this assistant: wait {max(1, round(wait))} seconds and try "
                          "again.")
        try:
            output = await tools.call(self.svc, caller, params.name, params.arguments)
        except tools.ToolError as exc:
            return _error(str(exc))
        except Exception:
            # Our bug, not the assistant's: logged with its trace here, plain words there.
            log.exception("mcp tool %s failed", params.name)
            return _error("Something went wrong on Wayline's side. Please try again.")
        text = json.dumps(output, ensure_ascii=False)
        whole = len(text) <= OUTPUT_CHARS
        return types.CallToolResult(content=[types.TextContent(type="text", text=text if whole else
                                                               text[:OUTPUT_CHARS] + "…(truncated)")],
                                    structured_content=output if whole and isinstance(output, dict) else None)


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


INVALID_REQUEST = ("Invalid Request: the body must be one JSON-RPC 2.0 message, an object with \"jsonrpc\": \"2.0\", "
                   "\"method\" and, for a request, \"id\".")


def _plain_invalid_request(send):
    """The SDK answers a body that is JSON but not a JSON-RPC message (a list,
    a string, an object without "method") with pydantic's whole report as the
    error's message (model names, input values, a link to pydantic's site).
    That one answer is rewritten to JSON-RPC's Invalid Request in words; every
    other message passes through as it is."""
    held: dict[str, Any] = {}

    async def wrapped(message):
        if message["type"] == "http.response.start" and message["status"] == 400:
            held["start"], held["body"] = message, b""
            return
        if "start" not in held:
            await send(message)
            return
        held["body"] += message.get("body", b"")
        if message.get("more_body"):
            return
        body = held["body"]
        try:
            answer = json.loads(body)
            if str(answer["error"]["message"]).startswith("Validation error"):
                answer["error"] = {"code": types.INVALID_REQUEST, "message": INVALID_REQUEST}
                body = json.dumps(answer).encode()
        except (ValueError, TypeError, KeyError):
            pass   # not the SDK's JSON-RPC error: as it was
        start = held["start"]
        headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
        await send({**start, "headers": [*headers, (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    return wrapped
