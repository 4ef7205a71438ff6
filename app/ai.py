"""The gateway to the model provider: the ONLY module that imports `openai`,
and the only way a feature reaches the provider.

Every call is guarded by the app-wide limits (`app/aiusage.py`): the gateway
reserves the slot (one `BEGIN IMMEDIATE`) before any network I/O, calls,
records the provider's real usage, and closes the row as failed on any error,
refusal, unusable answer, rejected answer or cancellation. A refused
reservation raises 503 `ai_limit` / 429 `busy` and the provider is not
contacted.

- `AI.structured(feature=..., ...)`: one request whose answer must match a
  pydantic model (Structured Outputs, a strict JSON schema). The answer is
  validated; a refusal, a cut-off or malformed answer, or one that does not
  match the schema raises `AIOutputError`. Nothing is ever guessed or
  repaired. A feature that judges the answer against its own facts passes
  `validate`, which runs while the usage row is still open.
- `AI.stream(feature=..., ...)`: one streamed model round with function tools,
  as small normalized events (see its docstring) for the agent's tool loops.
  With `reasoning=True` and `OPENAI_REASONING_SUMMARY` set it asks for
  reasoning summaries, which arrive as ReasoningStart/Delta/End events.

Both take an optional `turn_id` (the member message that started an agent
turn): it is written on the usage row, logged and put on the model call's
OpenTelemetry span, with the provider's response id.
- `describe_ai_error(exc)`: plain (status, code, message) for any failure;
  `sanitize(text)`: redacts key-shaped text wherever provider text could
  leave the process.

Every request sends `store=False` (nothing is kept on OpenAI's side), the
configured model, the caller's `max_output_tokens` (capped by the limits) and
the per-call timeout; the SDK's own retries are off (`max_retries=0`) so one
call is one request and the limits count what is really sent.

`openai` is imported when an `AI` is built (a key is set), not when this
module is imported: it is a large share of the cold start, and a server
without a key never needs it.

Failures are raised as `AIError` (an `AppError`, so a route can let it
propagate and the client gets `{"error": {"code", "message"}}`). The SDK
exception is never attached as its cause or context: its text can hold the
provider's raw body, which can echo the key.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import re
from contextlib import aclosing
from typing import Any, TypeVar
from collections.abc import AsyncGenerator, Callable

from pydantic import BaseModel, ValidationError

from .ai_events import (Completed, FunctionCall, ReasoningDelta, ReasoningEnd, ReasoningStart, StreamEvent,
                        StreamFailed, TextDelta, Usage)
from .ai_schema import strict_schema
from .aiusage import AIUsage, UsageGuard
from .errors import AppError, Unavailable
from .settings import Settings
from .telemetry import Span, Telemetry
from .tls import tls_context

DEFAULT_BASE_URL = "https://api.openai.com/v1"
FORMAT_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

M = TypeVar("M", bound=BaseModel)


# -- errors -------------------------------------------------------------------


class AIError(AppError):
    """A model call that failed. `usage` holds what the provider reported as
    spent (zeros when it refused before working, None when unknown)."""

    status, code = 503, "ai_error"

    def __init__(self, message: str, *, code: str | None = None, status: int | None = None,
                 usage: Usage | None = None, **extra: Any):
        super().__init__(message, code=code, **extra)
        if status is not None:
            self.status = status
        self.usage = usage


class AIOutputError(AIError):
    """The provider answered, but the answer cannot be used: a refusal, a
    cut-off or malformed answer, or one that does not match the schema.
    `reason` is a key of OUTPUT_MESSAGES."""

    status, code = 502, "ai_bad_output"

    def __init__(self, message: str, *, reason: str, usage: Usage | None = None):
        super().__init__(message, usage=usage)
        self.reason = reason


MESSAGES = {
    "ai_timeout": "The AI provider took too long to answer. Please try again.",
    "ai_unreachable": "The AI provider could not be reached. Please try again later.",
    "ai_auth": "AI is unavailable: the provider did not accept the server's API key. "
               "An administrator needs to check it.",
    "ai_provider_busy": "The AI provider is busy right now. Please try again in a minute.",
    "ai_provider_busy_for": "The AI provider is busy right now. Please try again in {wait}.",
    "ai_quota": "AI is unavailable: the provider account has used up its quota or credit. "
                "An administrator needs to check it.",
    "ai_provider_error": "The AI provider had a problem. Please try again later.",
    "ai_rejected": "The AI provider rejected the request. An administrator may need to check the AI settings.",
    "ai_error": "The AI request failed. Please try again.",
}
OUTPUT_MESSAGES = {
    "refusal": "The AI declined to answer this request.",
    "incomplete": "The AI answer was cut off before it finished. Please try again.",
    "failed": "The AI could not finish its answer. Please try again.",
    "malformed": "The AI answer was not in the expected form. Please try again.",
    "schema": "The AI answer was not in the expected form. Please try again.",
    "empty": "The AI gave an empty answer. Please try again.",
    "too_long": "The AI answer was too long to use. Please ask a narrower question.",
    "unknown_ids": "The AI answer named something Wayline did not offer it, so it was not used. Please try again.",
}


def provider_error(exc: BaseException) -> AIError:
    """Turn any SDK/transport failure into an AIError with a plain message."""
    if isinstance(exc, AIError):
        return exc
    import openai  # already loaded whenever an AI client made the failing call

    if isinstance(exc, (openai.APITimeoutError, TimeoutError)):
        code, usage = "ai_timeout", None
    elif isinstance(exc, openai.APIConnectionError):
        code, usage = "ai_unreachable", None
    elif isinstance(exc, openai.APIStatusError):
        # The provider answered with an error status, so nothing was generated.
        usage = Usage()
        status = exc.status_code
        if status in (401, 403):
            code = "ai_auth"
        elif status == 429 and exc.code == "insufficient_quota":
            code = "ai_quota"   # also a 429, but no wait ends it: only the account's owner can
        elif status == 429:
            wait = _retry_after_s(exc.response.headers)
            if wait is not None:
                # The provider says when; the client gets it as data and as the
                # Retry-After header (app/errors.py), the member in words.
                words = f"{wait} seconds" if wait < 120 else f"{-(-wait // 60)} minutes"
                return AIError(MESSAGES["ai_provider_busy_for"].format(wait=words), code="ai_provider_busy",
                               usage=Usage(), retryAfterS=wait)
            code = "ai_provider_busy"
        elif status >= 500:
            code = "ai_provider_error"
        else:
            code = "ai_rejected"
    else:
        code, usage = "ai_error", None
    return AIError(MESSAGES[code], code=code, usage=usage)


# A provider's wait longer than this is not passed on as a promise: past it the
# member is better served by "in a minute" and trying again than by a long wait.
MAX_RETRY_AFTER_S = 600


def _retry_after_s(headers: Any) -> int | None:
    """Whole seconds from the provider's `retry-after-ms` or `retry-after`
    (seconds; an HTTP date is not worth parsing for a hint), at least 1; None
    when absent, unreadable or longer than MAX_RETRY_AFTER_S."""
    for name, scale in (("retry-after-ms", 1000), ("retry-after", 1)):
        try:
            value = float(headers.get(name) or "")
        except ValueError:
            continue
        if 0 <= value / scale <= MAX_RETRY_AFTER_S:
            return max(1, math.ceil(value / scale))
    return None


def describe_ai_error(exc: BaseException) -> tuple[int, str, str]:
    """(HTTP status for our client, error code, plain message) for a failure.

    Never contains the key or the provider's raw body: the message comes from
    our own table, not from the exception text."""
    error = provider_error(exc)
    return error.status, error.code, sanitize(error.message)


# -- redaction ----------------------------------------------------------------

_KEY_SHAPES = [
    (re.compile(r"\bsk-[A-Za-z0-9_\-*]{6,}"), "[redacted key]"),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{10,}"), "[redacted key]"),
    (re.compile(r"(?i)\bBearer\s+[A-Za-z0-9._~+/=\-]+"), "Bearer [redacted]"),
]


def sanitize(text: Any, secrets: tuple[str | None, ...] = ()) -> str:
    """Redact key-shaped text (sk-..., AIza..., Bearer tokens) and any exact
    `secrets` given. Apply it to anything provider-derived that leaves the
    process: log fields, error details, stream error text."""
    out = str(text)
    for secret in secrets:
        if secret and len(secret) >= 6:
            out = out.replace(secret, "[redacted key]")
    for pattern, replacement in _KEY_SHAPES:
        out = pattern.sub(replacement, out)
    return out


# -- results and stream events -----------------------------------------------


def _usage_from(raw: Any) -> Usage:
    if raw is None:
        return Usage()

    def num(obj: Any, name: str) -> int:
        value = getattr(obj, name, None) if obj is not None else None
        return value if isinstance(value, int) else 0

    return Usage(
        input_tokens=num(raw, "input_tokens"),
        output_tokens=num(raw, "output_tokens"),
        cached_input_tokens=num(getattr(raw, "input_tokens_details", None), "cached_tokens"),
        reasoning_tokens=num(getattr(raw, "output_tokens_details", None), "reasoning_tokens"),
    )


def _failed(exc: BaseException) -> StreamFailed:
    error = provider_error(exc)
    return StreamFailed(error.status, error.code, sanitize(error.message), error.usage)


# -- the client ---------------------------------------------------------------


class AI:
    """One AsyncOpenAI client per app (built by app/lifecycle.py when
    OPENAI_API_KEY is set), guarded by the app's `AIUsage`. Call `close()` on
    shutdown."""

    def __init__(self, settings: Settings, usage: AIUsage, telemetry: Telemetry | None = None):
        if not settings.openai_api_key:
            raise ValueError("AI needs OPENAI_API_KEY")
        import openai  # here, not at module level: only a server with a key pays for the SDK

        self.settings = settings
        self.usage = usage
        self.telemetry = telemetry or Telemetry()
        self.model = settings.openai_model
        self.timeout_s = settings.ai_timeout_ms / 1000
        self._client = openai.AsyncOpenAI(
            api_key=settings.openai_api_key,
            base_url=settings.openai_base_url or DEFAULT_BASE_URL,
            max_retries=0,
            timeout=self.timeout_s,
            # The SDK's own client, with the process's one TLS context (app/tls.py).
            http_client=openai.DefaultAsyncHttpxClient(verify=tls_context()),
        )

    async def close(self) -> None:
        await self._client.close()

    def redact(self, text: str) -> str:
        """`sanitize` with this server's own keys: for the model's words that a
        feature shows a member (a gateway can echo the key; a note can hold one)."""
        return sanitize(text, (self.settings.openai_api_key, self.settings.google_maps_api_key))

    async def check_share(self, user_id: str, trip_id: str | None, feature: str, *, everyone: bool = False,
                          max_output_tokens: int | None = None) -> None:
        """429 `ai_user_limit` when the member's share of today's budget is spent:
        an explicit ask (a chat turn) says so before it starts; with `everyone`,
        503 `ai_limit` when the app's is. The reservation of each call still
        decides (app/aiusage.py)."""
        await self.usage.check_share(user_id, trip_id, feature, everyone=everyone,
                                     max_output_tokens=max_output_tokens)

    def _guard(self, feature: str, user_id: str | None, trip_id: str | None, max_output_tokens: int,
               turn_id: str | None):
        return self.usage.guard(user_id=user_id, trip_id=trip_id, feature=feature,
                                max_output_tokens=max_output_tokens, model=self.model, turn_id=turn_id)

    def _span(self, kind: str, feature: str, trip_id: str | None, turn_id: str | None) -> Span:
        return self.telemetry.start(f"wayline.ai.{kind}", **{
            "gen_ai.operation.name": "chat", "gen_ai.request.model": self.model, "wayline.ai.feature": feature,
            "wayline.trip_id": trip_id, "wayline.turn_id": turn_id})

    async def structured(self, *, feature: str, user_id: str | None, trip_id: str | None, name: str,
                         schema: type[M], instructions: str, input: list | str, max_output_tokens: int,
                         validate: Callable[[M], Any] | None = None, turn_id: str | None = None) -> Any:
        """One guarded Structured Outputs request; the validated answer.

        `name` is the `text.format.name` (a-z A-Z 0-9 _ -, at most 64; the
        evaluation harnesses script the model by it). Raises Unavailable /
        Busy when the limits refuse (the provider is not contacted), AIError
        for provider failures and AIOutputError for unusable answers.

        `validate(answer)` (sync or async) judges the answer against the
        feature's own facts while the usage row is still open: raising
        (e.g. a fix id review never computed) closes the row as failed with
        the error's code and propagates; what it returns is what this returns.
        Without it the parsed answer is returned."""
        if not FORMAT_NAME.match(name):
            raise ValueError(f"invalid structured output name {name!r}")
        text_format = {"format": {"type": "json_schema", "name": name,
                                  "schema": strict_schema(schema), "strict": True}}
        span = self._span("structured", feature, trip_id, turn_id)
        error: str | None = "failed"
        try:
            async with self._guard(feature, user_id, trip_id, max_output_tokens, turn_id) as guard:
                try:
                    answer = await self._create_structured(guard, schema, text_format, instructions, input)
                    checked = answer if validate is None else validate(answer)
                    result = await checked if inspect.isawaitable(checked) else checked
                    error = None
                    return result
                finally:
                    _span_usage(span, guard)
        except AppError as exc:
            error = exc.code
            raise
        finally:
            span.end(error)

    async def _create_structured(self, guard: UsageGuard, schema: type[M], text_format: dict, instructions: str,
                                 input: list | str) -> M:
        failure: AIError | None = None
        try:
            async with asyncio.timeout(self.timeout_s):
                response = await self._client.responses.create(  # type: ignore[call-overload]  # text: a dict
                    model=self.model, instructions=instructions, input=input,
                    max_output_tokens=guard.max_output_tokens, store=False, text=text_format,
                )
        except Exception as exc:
            failure = provider_error(exc)
        if failure is not None:
            raise failure  # outside the except block: no __context__ holding the provider's text
        usage = _usage_from(getattr(response, "usage", None))
        guard.record(usage.input_tokens, usage.output_tokens)
        guard.response_id = _response_id(response)
        text = _structured_text(response, usage)
        try:
            return schema.model_validate_json(text)
        except ValidationError as exc:
            problems = exc.errors(include_url=False, include_input=False)
            malformed = any(e.get("type") == "json_invalid" for e in problems)
            reason = "malformed" if malformed else "schema"
            raise AIOutputError(OUTPUT_MESSAGES[reason], reason=reason, usage=usage) from None

    async def stream(self, *, feature: str, user_id: str | None, trip_id: str | None, instructions: str,
                     input: list | str, tools: list[dict], max_output_tokens: int, turn_id: str | None = None,
                     reasoning: bool = False) -> AsyncGenerator[StreamEvent, None]:
        """One guarded, streamed model round with function tools, as normalized events.

        Iterate it inside `contextlib.aclosing(...)`, so a consumer that stops
        early closes the usage row at once (as failed, `abandoned`). A refused
        reservation raises Unavailable / Busy from the first iteration, before
        the provider is contacted.

        `tools` are Responses API function tools:
        `{"type": "function", "name", "description", "parameters": strict_schema(Args), "strict": True}`.
        Yields, in order:
          - `TextDelta(delta, item_id)`        visible text as it arrives;
          - `ReasoningStart(id)`, `ReasoningDelta(id, delta)`, `ReasoningEnd(id, text)`
            for each reasoning summary part the provider streams (asked for
            only with `reasoning=True` and OPENAI_REASONING_SUMMARY set);
          - `FunctionCall(call_id, name, arguments, item_id)` when one call is
            complete (arguments: the JSON string, unvalidated);
          - exactly one terminal event, then the iterator ends:
            `Completed(usage, status, text, refusal, incomplete_reason,
            function_calls, output_items)` or
            `StreamFailed(status, code, message, usage)`.
        The usage row is closed before the terminal event is yielded: completed,
        or failed for a StreamFailed, a refusal or a cut-off round. Provider
        trouble never raises (timeouts, HTTP errors, a mid-stream `error`
        event, `response.failed`, a stream that ends early all become
        StreamFailed). The whole round is bounded by the per-call timeout. To
        continue after tool calls, resend the transcript: previous input
        items, each `FunctionCall.as_input_item()`, then its
        `function_call_output`; there is no server-side state (store=False)."""
        terminal: Completed | StreamFailed | None = None
        summary = self.settings.openai_reasoning_summary if reasoning else None
        # Not the current span: this is an async generator (see app/telemetry.py).
        span = self._span("stream", feature, trip_id, turn_id)
        error: str | None = "failed"
        try:
            async with self._guard(feature, user_id, trip_id, max_output_tokens, turn_id) as guard:
                try:
                    async with aclosing(self._stream_round(instructions, input, tools, guard.max_output_tokens,
                                                           summary)) as events:
                        async for event in events:
                            if isinstance(event, (Completed, StreamFailed)):
                                terminal = event  # _stream_round always ends with exactly one
                                break
                            yield event
                    assert terminal is not None   # _stream_round always ends with a terminal event
                    _settle(guard, terminal)
                    error = guard.failure
                finally:
                    _span_usage(span, guard)
        except AppError as exc:  # a refused reservation
            error = exc.code
            raise
        finally:
            span.end(error)
        assert terminal is not None
        yield terminal

    async def _stream_round(self, instructions: str, input: list | str, tools: list[dict],
                            max_output_tokens: int, summary: str | None) -> AsyncGenerator[StreamEvent, None]:
        """The provider side of `stream` (unguarded: only `stream` calls it)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        kwargs: dict[str, Any] = {"tools": tools} if tools else {}
        if summary:
            kwargs["reasoning"] = {"summary": summary}
        try:
            async with asyncio.timeout_at(deadline):
                stream = await self._client.responses.create(
                    model=self.model, instructions=instructions, input=input,
                    max_output_tokens=max_output_tokens, store=False, stream=True, **kwargs,
                )
        except Exception as exc:
            yield _failed(exc)
            return
        calls: list[FunctionCall] = []
        try:
            events = stream.__aiter__()
            while True:
                try:
                    async with asyncio.timeout_at(deadline):
                        event = await events.__anext__()
                except StopAsyncIteration:
                    yield StreamFailed(503, "ai_provider_error", MESSAGES["ai_provider_error"])
                    return
                except Exception as exc:
                    yield _failed(exc)
                    return
                kind = getattr(event, "type", "")
                if kind == "response.output_text.delta":
                    yield TextDelta(delta=event.delta, item_id=event.item_id)
                elif kind == "response.reasoning_summary_part.added":
                    yield ReasoningStart(_summary_id(event))
                elif kind == "response.reasoning_summary_text.delta":
                    yield ReasoningDelta(_summary_id(event), event.delta)
                elif kind == "response.reasoning_summary_part.done":
                    yield ReasoningEnd(_summary_id(event), getattr(event.part, "text", "") or "")
                elif kind == "response.output_item.done" and getattr(event.item, "type", "") == "function_call":
                    item = event.item
                    call = FunctionCall(call_id=item.call_id, name=item.name, arguments=item.arguments or "",
                                        item_id=item.id or "")
                    calls.append(call)
                    yield call
                elif kind in ("response.completed", "response.incomplete"):
                    yield _completed(event.response, calls)
                    return
                elif kind == "response.failed":
                    usage = _usage_from(getattr(event.response, "usage", None))
                    yield StreamFailed(503, "ai_provider_error", MESSAGES["ai_provider_error"], usage)
                    return
                elif kind == "error":
                    yield StreamFailed(503, "ai_provider_error", MESSAGES["ai_provider_error"])
                    return
        finally:
            await stream.close()


def _summary_id(event: Any) -> str:
    return f"{event.item_id}:{event.summary_index}"


def _response_id(response: Any) -> str | None:
    value = getattr(response, "id", None)
    return value if isinstance(value, str) else None


def _span_usage(span: Span, guard: UsageGuard) -> None:
    span.set(**{"gen_ai.response.id": guard.response_id, "gen_ai.usage.input_tokens": guard.input_tokens,
                "gen_ai.usage.output_tokens": guard.output_tokens})


def unusable_round(done: Completed) -> str | None:
    """Why a streamed round that ended normally still gives the member nothing
    usable: "refusal", "incomplete" (cut off, e.g. max_output_tokens) or
    "empty" (no text and no tool call); None when it is usable. Its plain
    words are OUTPUT_MESSAGES[reason]. One rule for the usage row (failed) and
    for what a feature tells the member, who would otherwise see nothing or a
    sentence that simply stops."""
    if done.refusal:
        return "refusal"
    if done.status == "incomplete":
        return "incomplete"
    if not done.text.strip() and not done.function_calls:
        return "empty"
    return None


def _settle(guard: UsageGuard, terminal: Completed | StreamFailed) -> None:
    """A streamed round's outcome on its usage row: real counts when known (a
    timeout leaves them unknown, so the reservation stays counted); failed for
    an error or an unusable round (`unusable_round`)."""
    if terminal.usage is not None:
        guard.record(terminal.usage.input_tokens, terminal.usage.output_tokens)
    if isinstance(terminal, Completed):
        guard.response_id = terminal.response_id
    if isinstance(terminal, StreamFailed):
        guard.fail(terminal.code)
    elif (reason := unusable_round(terminal)) is not None:
        guard.fail(reason)


def _structured_text(response: Any, usage: Usage) -> str:
    """The answer's JSON text, or AIOutputError for anything else."""
    status = getattr(response, "status", None)
    if status == "incomplete":
        raise AIOutputError(OUTPUT_MESSAGES["incomplete"], reason="incomplete", usage=usage)
    if status in ("failed", "cancelled") or getattr(response, "error", None):
        raise AIOutputError(OUTPUT_MESSAGES["failed"], reason="failed", usage=usage)
    texts: list[str] = []
    for item in getattr(response, "output", None) or []:
        if getattr(item, "type", None) != "message":
            continue
        for part in getattr(item, "content", None) or []:
            if getattr(part, "type", None) == "refusal":
                raise AIOutputError(OUTPUT_MESSAGES["refusal"], reason="refusal", usage=usage)
            if getattr(part, "type", None) == "output_text" and isinstance(getattr(part, "text", None), str):
                texts.append(part.text)
    text = "".join(texts).strip()
    if not text:
        raise AIOutputError(OUTPUT_MESSAGES["malformed"], reason="malformed", usage=usage)
    return text


def _completed(response: Any, calls: list[FunctionCall]) -> Completed:
    texts: list[str] = []
    refusals: list[str] = []
    items: list[dict] = []
    for item in getattr(response, "output", None) or []:
        items.append(item.model_dump(mode="json", exclude_none=True) if hasattr(item, "model_dump") else dict(item))
        if getattr(item, "type", None) != "message":
            continue
        for part in getattr(item, "content", None) or []:
            if getattr(part, "type", None) == "output_text":
                texts.append(part.text or "")
            elif getattr(part, "type", None) == "refusal":
                refusals.append(part.refusal or "")
    details = getattr(response, "incomplete_details", None)
    return Completed(
        usage=_usage_from(getattr(response, "usage", None)),
        status=getattr(response, "status", None) or "completed",
        text="".join(texts),
        refusal="".join(refusals) or None,
        incomplete_reason=getattr(details, "reason", None) if details else None,
        function_calls=tuple(calls),
        output_items=tuple(items),
        response_id=_response_id(response),
    )


def require_ai(ai: AI | None) -> AI:
    """The gateway, or a 503 that says AI is off (no OPENAI_API_KEY): what a
    feature that needs the model checks first."""
    if ai is None:
        raise Unavailable("AI features are off: this server has no OpenAI API key (OPENAI_API_KEY). "
                          "Everything else works.", code="ai_unavailable")
    return ai
