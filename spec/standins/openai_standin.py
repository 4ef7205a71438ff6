"""A loopback stand-in for the OpenAI Responses API, for tests.

A real HTTP server (`loopback.LoopbackServer`: 127.0.0.1, a free port, one
thread per request) speaking `POST {base}/responses` the way the real API does: a
JSON `Response` object, or, when the request has `"stream": true`, SSE
events (`event: <type>` + `data: <json>`, chunked) in the real order:
response.created, response.in_progress, response.output_item.added,
response.content_part.added, response.output_text.delta...,
response.output_text.done, response.content_part.done (or the refusal and
function_call_arguments equivalents), response.output_item.done, then
response.completed / response.incomplete with `usage`. HTTP errors carry the
real error body `{"error": {"message", "type", "param", "code"}}`.

The real `openai` SDK (its own HTTP client) and the app running in a
TestClient's event-loop thread both reach it over a socket.

Like the real API, a strict structured-output schema (`text.format`) or a
strict function tool's `parameters` outside the Structured Outputs subset is
refused with a 400 `invalid_json_schema` before any reply is taken
(`strict_schema.schema_problems`); `strict_schema.conforms(schema, value)`
tells a test whether strict decoding could produce an answer.

Usage in a test module:

    from standins.openai_standin import ai_settings, openai_standin  # noqa: F401

    def test_something(settings, openai_standin):
        openai_standin.reply_json({"answer": "Go", "recommendedFixIds": []})
        with make_client(ai_settings(settings, openai_standin)) as client:
            ...
        body = openai_standin.requests[0].body          # the JSON the SDK sent

Scripting (a FIFO: each request takes the next scripted reply; a request with
nothing scripted gets a 500 "nothing scripted" error, and is still recorded):

    reply_json(obj)                     a message whose output_text is json.dumps(obj)
    reply_text(text)                    a plain text message
    reply_refusal(text)                 a message with a refusal part
    reply_incomplete(text, reason=...)  status "incomplete" (max_output_tokens)
    reply_function_call(name, args)     one function_call item (args: dict or JSON string)
    reply_function_calls([(name, args), ...], text=None)
    reply_output(items)                 raw output items, for anything else
    fail(status, message=None, code=None, headers=None)   an HTTP error (401/429/500/...);
                                        headers: e.g. {"Retry-After": "7"}, as the real API sends on a 429
    drop(text="")                       the connection closes mid-reply: a stream after some text
                                        (no terminal event), or a JSON body cut short
    stream_error(message, code, text="")    200 SSE that emits some text, then an `error` event
    delay(seconds)                      the next request served waits first (timeouts, races)
    hold() / release()                  requests wait at a gate until released (concurrency)
    wait_for_requests(n)                block until n requests arrived
    responder = fn(RecordedRequest) -> Reply   used when the script is empty

Every reply method takes `usage=(input_tokens, output_tokens)` (default
(100, 50)), `delay=` seconds before answering, `chunk_delay=` seconds
between streamed events, and `reasoning=[summary, ...]`: a reasoning item
first in the output whose summary parts stream as
response.reasoning_summary_part.added, response.reasoning_summary_text.delta...,
response.reasoning_summary_text.done, response.reasoning_summary_part.done.
"""

from __future__ import annotations

import itertools
import socket
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .loopback import LoopbackHandler, LoopbackServer, RecordedRequest
from .strict_schema import schema_problems

TEST_KEY = "sk-test-wayline-standin-0123456789abcdef"
DEFAULT_USAGE = (100, 50)
_ids = itertools.count(1)


def _id(prefix: str) -> str:
    return f"{prefix}_standin{next(_ids):06d}"


@dataclass
class Reply:
    kind: str = "output"  # output | http_error | stream_error | drop
    output: list[dict] = field(default_factory=list)
    status: str = "completed"
    incomplete_reason: str | None = None
    usage: tuple[int, int] = DEFAULT_USAGE
    http_status: int = 200
    error: dict | None = None
    delay: float = 0.0
    chunk_delay: float = 0.0
    response_id: str = field(default_factory=lambda: _id("resp"))
    headers: dict[str, str] = field(default_factory=dict)   # extra response headers (http_error)


def message_item(text: str | None = None, refusal: str | None = None) -> dict:
    part = ({"type": "refusal", "refusal": refusal} if refusal is not None
            else {"type": "output_text", "text": text or "", "annotations": [], "logprobs": []})
    return {"id": _id("msg"), "type": "message", "status": "completed", "role": "assistant", "content": [part]}


def reasoning_item(summaries: list[str]) -> dict:
    return {"id": _id("rs"), "type": "reasoning", "status": "completed",
            "summary": [{"type": "summary_text", "text": text} for text in summaries]}


def function_call_item(name: str, arguments: dict | str, call_id: str | None = None) -> dict:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": _id("fc"), "type": "function_call", "status": "completed",
            "call_id": call_id or _id("call"), "name": name, "arguments": args}


ERRORS = {
    400: ("invalid_request_error", None, "Invalid request."),
    401: ("invalid_request_error", "invalid_api_key", None),  # message echoes the key, like the real API
    403: ("invalid_request_error", "unsupported_country_region_territory",
          "Country, region, or territory not supported"),
    404: ("invalid_request_error", "model_not_found", "The model does not exist or you do not have access to it."),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached for requests. Please try again in 20s."),
    500: ("server_error", None, "The server had an error while processing your request. Sorry about that!"),
    503: ("server_error", None, "The engine is currently overloaded, please try again later."),
}


class OpenAIStandIn(LoopbackServer):
    name = "openai-standin"
    base_path = "/v1"
    methods = ("POST",)
    server_header = "openai-standin"

    def __init__(self) -> None:
        super().__init__()
        self.responder: Callable[[RecordedRequest], Reply] | None = None
        self._script: deque[Reply] = deque()
        self._delays: deque[float] = deque()
        self._gate = threading.Event()
        self._gate.set()
        self.in_flight = 0
        self.max_in_flight = 0

    def stop(self) -> None:
        self.stopping.set()
        self._gate.set()  # held requests wake, see `stopping` and give up
        super().stop()

    # -- scripting -------------------------------------------------------------

    def _push(self, reply: Reply) -> Reply:
        with self.lock:
            self._script.append(reply)
        return reply

    def _reply(self, output: list[dict], usage=None, delay=0.0, chunk_delay=0.0, reasoning=None, **extra) -> Reply:
        if reasoning:
            output = [reasoning_item(list(reasoning))] + output
        return self._push(Reply(output=output, usage=tuple(usage or DEFAULT_USAGE), delay=delay,
                                chunk_delay=chunk_delay, **extra))

    def reply_json(self, obj: Any, **kw) -> Reply:
        return self._reply([message_item(json.dumps(obj))], **kw)

    def reply_text(self, text: str, **kw) -> Reply:
        return self._reply([message_item(text)], **kw)

    def reply_refusal(self, text: str = "I'm sorry, I can't help with that.", **kw) -> Reply:
        return self._reply([message_item(refusal=text)], **kw)

    def reply_incomplete(self, text: str = "", reason: str = "max_output_tokens", **kw) -> Reply:
        item = message_item(text)
        item["status"] = "incomplete"
        return self._reply([item], status="incomplete", incomplete_reason=reason, **kw)

    def reply_function_call(self, name: str, arguments: dict | str, *, call_id: str | None = None, **kw) -> Reply:
        return self._reply([function_call_item(name, arguments, call_id)], **kw)

    def reply_function_calls(self, calls: list[tuple[str, dict | str]], text: str | None = None, **kw) -> Reply:
        items = [message_item(text)] if text else []
        items += [function_call_item(name, args) for name, args in calls]
        return self._reply(items, **kw)

    def reply_output(self, items: list[dict], **kw) -> Reply:
        return self._reply(items, **kw)

    def fail(self, status: int, message: str | None = None, *, code: str | None = None,
             type: str | None = None, delay: float = 0.0, headers: dict[str, str] | None = None) -> Reply:
        default_type, default_code, default_message = ERRORS.get(status, ("server_error", None, "Error."))
        error = {"message": message or default_message, "type": type or default_type, "param": None,
                 "code": code or default_code}
        return self._push(Reply(kind="http_error", http_status=status, error=error, delay=delay,
                                headers=dict(headers or {})))

    def drop(self, text: str = "", **kw) -> Reply:
        return self._reply([message_item(text)], kind="drop", **kw)

    def stream_error(self, message: str = "An error occurred while processing your request.",
                     code: str = "server_error", text: str = "", **kw) -> Reply:
        output = [message_item(text)] if text else []
        return self._reply(output, kind="stream_error",
                           error={"message": message, "code": code, "param": None}, **kw)

    def delay(self, seconds: float) -> None:
        with self.lock:
            self._delays.append(seconds)

    def hold(self) -> None:
        self._gate.clear()

    def release(self) -> None:
        self._gate.set()

    def reset(self) -> None:
        with self.lock:
            self._script.clear()
            self._delays.clear()
        super().reset()

    # -- serving (called from request threads) ---------------------------------

    def response_headers(self) -> dict[str, str]:
        return {"x-request-id": _id("req")}

    def serve(self, request: RecordedRequest, handler: LoopbackHandler) -> None:
        if not request.path.rstrip("/").endswith("/responses"):
            handler.send_json(404, {"error": {"message": f"Invalid URL (POST {request.path})",
                                              "type": "invalid_request_error", "param": None, "code": None}})
            return
        invalid = _invalid_schema(request.body if isinstance(request.body, dict) else {})
        if invalid is not None:
            with self.lock:
                self.record(request)
            handler.send_json(400, {"error": {"message": invalid, "type": "invalid_request_error",
                                              "param": "text.format.schema", "code": "invalid_json_schema"}})
            return
        reply, delay = self._take(request)
        with self.lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self._wait(delay):
                self._answer(handler, request, reply)
        finally:
            with self.lock:
                self.in_flight -= 1

    def _take(self, request: RecordedRequest) -> tuple[Reply, float]:
        """Record the request and take the next scripted reply, in one step: the
        n-th recorded request gets the n-th reply even when requests race."""
        with self.lock:
            self.record(request)
            extra_delay = self._delays.popleft() if self._delays else 0.0
            reply = self._script.popleft() if self._script else None
        if reply is None:
            reply = self.responder(request) if self.responder else Reply(
                kind="http_error", http_status=500,
                error={"message": "openai stand-in: nothing scripted for this request",
                       "type": "server_error", "param": None, "code": None})
        return reply, extra_delay + reply.delay

    def _wait(self, seconds: float) -> bool:
        """Sleep, then pass the hold() gate, waking early when the stand-in stops; False if stopping."""
        if seconds > 0:
            self.stopping.wait(seconds)
        while not self._gate.wait(0.05):
            if self.stopping.is_set():
                return False
        return not self.stopping.is_set()

    def _answer(self, handler: LoopbackHandler, recorded: RecordedRequest, reply: Reply) -> None:
        request_body = recorded.body if isinstance(recorded.body, dict) else {}
        if reply.kind == "http_error":
            error = dict(reply.error or {})
            if reply.http_status == 401 and not error.get("message"):
                key = recorded.headers.get("authorization", "").removeprefix("Bearer ").strip()
                error["message"] = (f"Incorrect API key provided: {key}. You can find your API key at "
                                    "https://platform.openai.com/account/api-keys.")
            data = json.dumps({"error": error}).encode()
            handler.send_response(reply.http_status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            for name, value in reply.headers.items():
                handler.send_header(name, value)
            handler._send_standin_headers()
            handler.wfile.write(data)
            handler.wfile.flush()
            return
        if reply.kind == "drop":
            _drop(handler, request_body, reply)
            return
        if request_body.get("stream"):
            handler.start_event_stream()
            for event in stream_events(request_body, reply):
                if reply.chunk_delay and not self._wait(reply.chunk_delay):
                    return
                handler.send_event(event["type"], event)
            handler.end_event_stream()
            return
        handler.send_json(200, response_object(request_body, reply, status=reply.status, output=reply.output,
                                                with_usage=True))


def _drop(handler: LoopbackHandler, request_body: dict, reply: Reply) -> None:
    """Start the answer, then close the socket: a stream stops after its text
    deltas (no terminal event, no end chunk); a JSON body stops halfway."""
    if request_body.get("stream"):
        events = stream_events(request_body, reply)
        deltas = [i for i, e in enumerate(events) if e["type"] == "response.output_text.delta"]
        handler.start_event_stream()
        for event in events[: (deltas[-1] + 1) if deltas else 2]:   # else just created + in_progress
            handler.send_event(event["type"], event)
    else:
        data = json.dumps(response_object(request_body, reply, status="completed", output=reply.output,
                                          with_usage=True)).encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler._send_standin_headers()
        handler.wfile.write(data[: len(data) // 2])
    handler.wfile.flush()
    handler.close_connection = True
    handler.connection.shutdown(socket.SHUT_RDWR)


def _invalid_schema(body: dict) -> str | None:
    """The real API's message for a strict schema it would refuse, else None."""
    fmt = (body.get("text") or {}).get("format") or {}
    checked = [(f"response format '{fmt.get('name')}'", fmt.get("schema"))] if (
        fmt.get("type") == "json_schema" and fmt.get("strict")) else []
    checked += [(f"function '{t.get('name')}'", t.get("parameters")) for t in body.get("tools") or []
                if t.get("type") == "function" and t.get("strict")]
    for what, schema in checked:
        problems = schema_problems(schema)
        if problems:
            return f"Invalid schema for {what}: {problems[0]}."
    return None


def response_object(request_body: dict, reply: Reply, *, status: str, output: list[dict],
                    with_usage: bool) -> dict:
    usage = None
    if with_usage:
        tokens_in, tokens_out = reply.usage
        usage = {"input_tokens": tokens_in, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                 "output_tokens": tokens_out, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": tokens_in + tokens_out}
    return {
        "id": reply.response_id,
        "object": "response", "created_at": int(time.time()), "status": status,
        "background": False, "error": None,
        "incomplete_details": {"reason": reply.incomplete_reason} if status == "incomplete" else None,
        "instructions": request_body.get("instructions"),
        "max_output_tokens": request_body.get("max_output_tokens"), "max_tool_calls": None,
        "model": request_body.get("model", "gpt-standin"), "output": output,
        "parallel_tool_calls": True, "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None}, "service_tier": "default",
        "store": request_body.get("store", True), "temperature": 1.0,
        "text": request_body.get("text") or {"format": {"type": "text"}},
        "tool_choice": "auto", "tools": request_body.get("tools") or [], "top_p": 1.0,
        "truncation": "disabled", "usage": usage, "user": None, "metadata": {},
    }


def stream_events(request_body: dict, reply: Reply) -> list[dict]:
    """The SSE events the real API sends for this reply, in order."""
    events: list[dict] = []

    def emit(kind: str, **data: Any) -> None:
        events.append({"type": kind, "sequence_number": len(events), **data})

    start = response_object(request_body, reply, status="in_progress", output=[], with_usage=False)
    emit("response.created", response=start)
    emit("response.in_progress", response=start)
    for index, item in enumerate(reply.output):
        if item["type"] == "message":
            emit("response.output_item.added", output_index=index,
                 item={**item, "status": "in_progress", "content": []})
            for ci, part in enumerate(item["content"]):
                common = {"item_id": item["id"], "output_index": index, "content_index": ci}
                if part["type"] == "output_text":
                    emit("response.content_part.added", **common, part={**part, "text": ""})
                    for piece in _pieces(part["text"]):
                        emit("response.output_text.delta", **common, delta=piece, logprobs=[])
                    if reply.kind == "stream_error":
                        break
                    emit("response.output_text.done", **common, text=part["text"], logprobs=[])
                else:
                    emit("response.content_part.added", **common, part={"type": "refusal", "refusal": ""})
                    for piece in _pieces(part["refusal"]):
                        emit("response.refusal.delta", **common, delta=piece)
                    emit("response.refusal.done", **common, refusal=part["refusal"])
                emit("response.content_part.done", **common, part=part)
            if reply.kind == "stream_error":
                break
            emit("response.output_item.done", output_index=index, item=item)
        elif item["type"] == "function_call":
            emit("response.output_item.added", output_index=index,
                 item={**item, "arguments": "", "status": "in_progress"})
            # Long arguments come in at most ~64 deltas (a 10,000-element card stays quick to serve).
            for piece in _pieces(item["arguments"], max(8, len(item["arguments"]) // 64)):
                emit("response.function_call_arguments.delta", item_id=item["id"], output_index=index, delta=piece)
            emit("response.function_call_arguments.done", item_id=item["id"], output_index=index,
                 arguments=item["arguments"], name=item["name"])
            emit("response.output_item.done", output_index=index, item=item)
        elif item["type"] == "reasoning":
            emit("response.output_item.added", output_index=index, item={**item, "summary": [], "status": None})
            for si, part in enumerate(item["summary"]):
                common = {"item_id": item["id"], "output_index": index, "summary_index": si}
                emit("response.reasoning_summary_part.added", **common, part={"type": "summary_text", "text": ""})
                for piece in _pieces(part["text"]):
                    emit("response.reasoning_summary_text.delta", **common, delta=piece)
                emit("response.reasoning_summary_text.done", **common, text=part["text"])
                emit("response.reasoning_summary_part.done", **common, part=part)
            emit("response.output_item.done", output_index=index, item=item)
        else:
            emit("response.output_item.added", output_index=index, item=item)
            emit("response.output_item.done", output_index=index, item=item)
    if reply.kind == "stream_error":
        emit("error", **(reply.error or {}))
        return events
    final = response_object(request_body, reply, status=reply.status, output=reply.output, with_usage=True)
    emit("response.incomplete" if reply.status == "incomplete" else "response.completed", response=final)
    return events


def _pieces(text: str, size: int = 8) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


def ai_settings(settings, standin: OpenAIStandIn, **changes):
    """`settings` with AI enabled against the stand-in (a key-shaped test key)."""
    return settings.with_(openai_api_key=TEST_KEY, openai_base_url=standin.url, **changes)
