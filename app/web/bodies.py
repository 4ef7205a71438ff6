"""Request bodies: a size limit per kind of route, enforced before and while
reading, and JSON parsing that refuses what would hurt the server.

The limit is checked against Content-Length before the handler runs, and
again on every chunk the handler reads (a chunked body has no length), so an
oversized body is answered 413 after at most `limit` bytes were read; the
rest is never buffered. Parsing refuses nesting deeper than `MAX_DEPTH`
(400) with a linear scan before `json.loads` can recurse, NaN/Infinity and
malformed JSON (400), and text with lone surrogates (422 naming the field),
escaped (`"\\ud800"`) or as raw bytes (`ED A0 80`, which `json.loads` decodes
with "surrogatepass"), which could not be stored or sent back as UTF-8.

A body must also arrive in time: `body_seconds(limit)` from its first read
(30 s, plus a second per 32 KiB it may hold: 32 s for a small JSON body,
94 s for an upload), else 408 and the connection closes. Without it a
client that sent a body a byte every few seconds held its connection and
request as long as it liked, no account needed (the sign-in route's body
included).
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from collections.abc import Awaitable
from itertools import accumulate
from typing import Any

from starlette.responses import JSONResponse

from .. import media
from ..errors import BadRequest, Invalid, TooLarge, TooSlow

KIB = 1024
SMALL_JSON = 64 * KIB             # sign-in, comments, invites, preferences, everything else
OP_BODY = 128 * KIB               # one op: a 4000-character note may be escaped 6 bytes a character
CHAT_BODY = 4 * KIB * KIB         # useChat resends the conversation; attachments are URLs, never bytes
MULTIPART_OVERHEAD = 16 * KIB     # boundaries and part headers around the file
UPLOAD_BODY = media.MAX_BYTES + MULTIPART_OVERHEAD
MAX_DEPTH = 64



@dataclass(frozen=True)
class RouteLimit:
    method: str
    path: re.Pattern
    limit: int
    message: str


# The first match wins; anything else is SMALL_JSON.
ROUTE_LIMITS = [
    RouteLimit("POST", re.compile(r"^/api/trips/[^/]+/media$"), UPLOAD_BODY,
               f"Files can be at most {media.MAX_BYTES // (KIB * KIB)} MiB."),
    RouteLimit("POST", re.compile(r"^/api/trips/[^/]+/agent/chat$"), CHAT_BODY,
               "The conversation is too large to send; start a new chat."),
    RouteLimit("POST", re.compile(r"^/api/trips/[^/]+/ops(/[^/]+)?$"), OP_BODY, "This change is too large to send."),
    RouteLimit("PATCH", re.compile(r"^/api/trips/[^/]+$"), OP_BODY, "This change is too large to send."),
    # An assistant's tool call carries one op's arguments: the ops endpoint's limit.
    RouteLimit("POST", re.compile(r"^/mcp$"), OP_BODY, "This request is too large to send."),
]
DEFAULT_LIMIT = RouteLimit("*", re.compile(""), SMALL_JSON, "This request is too large to send.")
BODY_BASE_S = 30.0
BODY_BYTES_PER_S = 32 * KIB   # the slowest upload speed a body is waited for, past the base


def body_seconds(limit: int) -> float:
    """How long a body of a route with this size limit may take to arrive."""
    return BODY_BASE_S + limit / BODY_BYTES_PER_S


def route_limit(method: str, path: str) -> RouteLimit:
    for rule in ROUTE_LIMITS:
        if method == rule.method and rule.path.match(path):
            return rule
    return DEFAULT_LIMIT


class BodyLimitMiddleware:
    """413 for a body over its route's limit: at once from Content-Length,
    or as soon as a chunked body has sent more than the limit."""

    def __init__(self, app):
        self.app = app

    def __call__(self, scope, receive, send) -> Awaitable[None]:
        if scope["type"] != "http":
            return self.app(scope, receive, send)
        rule = route_limit(scope["method"], scope["path"])
        has_body = False
        for name, value in scope["headers"]:
            if name == b"content-length":
                if value.isdigit() and int(value) > rule.limit:
                    error = TooLarge(rule.message)
                    return JSONResponse(error.to_json(), status_code=error.status)(scope, receive, send)
                has_body = has_body or value.strip(b"0 ") != b""
            has_body = has_body or name == b"transfer-encoding"
        if not has_body:
            # Without Transfer-Encoding or a Content-Length there is no body
            # (RFC 9112, 6.3): nothing to bound or wait for. The inner app's
            # coroutine, not awaited here: no frame of ours for the request's
            # life (hours for a live stream).
            return self.app(scope, receive, send)
        # A body, chunked (counted: it has no length) or of the length checked
        # above: read in its time (`body_seconds`).
        return self._counted(scope, receive, send, rule)

    async def _counted(self, scope, receive, send, rule: RouteLimit) -> None:
        limit = rule.limit
        received = 0
        deadline: float | None = None   # set by the body's first read; None again once it is whole
        whole = False

        async def counted_receive():
            nonlocal received, deadline, whole
            if whole:   # later reads wait for the client to go (a live stream): no deadline
                return await receive()
            if deadline is None:
                deadline = asyncio.get_running_loop().time() + body_seconds(limit)
            try:
                async with asyncio.timeout_at(deadline):   # a timer, not a task: most bodies are here already
                    message = await receive()
            except TimeoutError:
                raise TooSlow("The request took too long to arrive; send it again.") from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    # Raised inside the handler's read: the app's error handler answers 413.
                    raise TooLarge(rule.message)
                whole = not message.get("more_body", False)
            else:
                whole = True   # the client went away: nothing more to wait for
            return message

        await self.app(scope, counted_receive, send)


# -- JSON ---------------------------------------------------------------------

_STRING = re.compile(rb'"[^"]*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_DEPTH_STEP = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")   # +1 opens, -1 (as a signed byte) closes
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
# U+D800..U+DFFF written as UTF-8 would be (ED A0..BF xx): not valid UTF-8, but
# `json.loads` decodes bytes with "surrogatepass" and lets them through.
_SURROGATE_RAW = re.compile(rb"\xed[\xa0-\xbf]")


def too_deep(raw: bytes) -> bool:
    """True when a JSON text nests brackets deeper than MAX_DEPTH. No
    recursion and only C-speed passes: drop escaped backslashes and quotes,
    then strings, then everything but brackets; the running sum of +1/-1 is
    the depth."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
        return False
    unescaped = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    brackets = _STRING.sub(b"", unescaped).translate(None, _NOT_BRACKETS).translate(_DEPTH_STEP)
    return max(accumulate(memoryview(brackets).cast("b")), default=0) > MAX_DEPTH


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def lone_surrogate_field(value: Any) -> str | None:
    """The dotted path of the first string (or key) that is not valid
    Unicode, or None. Iterative: depth is already bounded, but a stack is
    as simple as recursion here."""
    stack: list[tuple[tuple, Any]] = [((), value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            if not _encodable(item):
                return ".".join(map(str, path)) or "body"
        elif isinstance(item, dict):
            for key, sub in item.items():
                if not _encodable(key):
                    return ".".join(map(str, path)) or "body"
                stack.append(((*path, key), sub))
        elif isinstance(item, list):
            stack.extend(((*path, index), sub) for index, sub in enumerate(item))
    return None


def parse_json(raw: bytes) -> Any:
    """A request body as JSON ({} when empty); 400 malformed or too deep,
    422 for text with a lone surrogate."""
    if not raw.strip():
        return {}
    if too_deep(raw):
        raise BadRequest(f"The body is nested too deeply (at most {MAX_DEPTH} levels)", code="too_deep")
    try:
        # What json.loads(raw, parse_constant=...) does, without building a decoder per call (half its cost
        # on an op's small body): the encoding detected (UTF-8, 16 or 32), decoded with "surrogatepass".
        value = _DECODER.decode(raw.decode(json.detect_encoding(raw), "surrogatepass"))
    except (ValueError, RecursionError):   # JSONDecodeError, bad UTF-8 and huge integers are ValueErrors
        raise BadRequest("The body is not valid JSON", code="malformed_json") from None
    # A UTF-16/32 body (json.loads detects them; their ASCII has NUL bytes) is checked whole.
    if _SURROGATE_ESCAPE.search(raw) or _SURROGATE_RAW.search(raw) or b"\x00" in raw:
        field = lone_surrogate_field(value)
        if field is not None:
            raise Invalid(f"{field}: contains a character that is not valid text", field=field)
    return value
