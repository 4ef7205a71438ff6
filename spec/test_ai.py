"""The AI gateway (app/ai.py) through the real openai SDK against the loopback stand-in:
request shapes, unusable answers, provider errors, streamed rounds, and the
usage row every call opens and closes (however it ends)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from contextlib import aclosing, asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from app.ai import (AI, AIError, AIOutputError, Completed, FunctionCall, ReasoningDelta, ReasoningEnd,
                    ReasoningStart, StreamFailed, TextDelta, describe_ai_error, sanitize)
from app.ai_schema import strict_schema
from app.aiusage import AIUsage
from app.db import Database
from app.errors import Busy, Unavailable
from helpers import refused_port
from standins.openai_standin import TEST_KEY, ai_settings

pytestmark = pytest.mark.anyio


class Fix(BaseModel):
    id: str = Field(description="a fix id the server gave")
    label: str


class Answer(BaseModel):
    answer: str = Field(max_length=2000)
    recommendedFixIds: list[str]
    severity: Literal["low", "medium", "high"]
    best: Fix | None = None
    confidence: float = Field(default=0.5, ge=0, le=1)


GOOD = {"answer": "Swap lunch and the museum.", "recommendedFixIds": ["fix1"], "severity": "low",
        "best": {"id": "fix1", "label": "Swap"}, "confidence": 0.8}


@asynccontextmanager
async def gateway(settings, standin=None, **changes):
    """The real gateway on its own Database (the usage rows it writes)."""
    configured = ai_settings(settings, standin, **changes) if standin else settings.with_(**changes)
    db = await Database.open(configured.db_path)
    ai = AI(configured, AIUsage(db, configured))
    try:
        yield ai
    finally:
        await ai.close()
        await db.close()


async def ask(ai: AI, **overrides) -> Any:
    args = {"feature": "copilot", "user_id": "u1", "trip_id": "t1", "name": "copilot_answer", "schema": Answer,
            "instructions": "You review a day.", "input": [{"role": "user", "content": "Is my day OK?"}],
            "max_output_tokens": 1200, **overrides}
    return await ai.structured(**args)


async def usage_rows(ai: AI) -> list[dict]:
    return [dict(r) for r in await ai.usage.db.fetchall(
        "SELECT status, input_tokens, output_tokens, reserved_output_tokens, feature FROM ai_usage ORDER BY rowid")]


def row(status: str, tokens: tuple[int, int] = (100, 50), reserved: int = 0, feature: str = "copilot") -> dict:
    return {"status": status, "input_tokens": tokens[0], "output_tokens": tokens[1],
            "reserved_output_tokens": reserved, "feature": feature}


# -- structured calls ---------------------------------------------------------


async def test_structured_call_sends_strict_schema_and_store_false(settings, openai_standin):
    openai_standin.reply_json(GOOD, usage=(321, 45))
    async with gateway(settings, openai_standin) as ai:
        answer = await ask(ai)
        assert await usage_rows(ai) == [row("completed", (321, 45))]  # real counts replace the reservation
    assert answer == Answer.model_validate(GOOD)

    [request] = openai_standin.requests
    assert request.path == "/v1/responses"
    assert request.headers["authorization"] == f"Bearer {TEST_KEY}"
    body = request.body
    assert body["model"] == settings.openai_model
    assert body["store"] is False
    assert body["max_output_tokens"] == 1200
    assert body["instructions"] == "You review a day."
    assert "stream" not in body or body["stream"] is False
    fmt = body["text"]["format"]
    assert fmt["type"] == "json_schema" and fmt["name"] == "copilot_answer" and fmt["strict"] is True
    schema = fmt["schema"]
    assert schema == strict_schema(Answer)
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["answer", "recommendedFixIds", "severity", "best", "confidence"]


async def test_sdk_retries_are_off(settings, openai_standin):
    openai_standin.fail(500)
    openai_standin.reply_json(GOOD)
    async with gateway(settings, openai_standin) as ai:
        with pytest.raises(AIError):
            await ask(ai)
    assert openai_standin.request_count == 1  # one call is one request


@pytest.mark.parametrize("script, reason", [
    (lambda s: s.reply_text("{\"answer\": \"cut"), "malformed"),
    (lambda s: s.reply_text("Sure! Here is your plan."), "malformed"),
    (lambda s: s.reply_refusal("I can't help with that."), "refusal"),
    (lambda s: s.reply_json({**GOOD, "severity": "extreme"}), "schema"),
    (lambda s: s.reply_json({"answer": "Missing fields"}), "schema"),
    (lambda s: s.reply_json({**GOOD, "confidence": 7}), "schema"),
    (lambda s: s.reply_incomplete("{\"answer\": \"Swap lunch", reason="max_output_tokens"), "incomplete"),
    (lambda s: s.reply_output([]), "malformed"),
])
async def test_unusable_answers_raise_output_error(settings, openai_standin, script, reason):
    script(openai_standin)
    async with gateway(settings, openai_standin) as ai:
        with pytest.raises(AIOutputError) as caught:
            await ask(ai)
        assert await usage_rows(ai) == [row("failed")]  # what was spent, closed as failed
    error = caught.value
    assert error.reason == reason
    assert (error.status, error.code) == (502, "ai_bad_output")
    # The provider's usage is kept so the usage record holds what was spent.
    assert (error.usage.input_tokens, error.usage.output_tokens) == (100, 50)
    assert "Swap" not in error.message and "help" not in error.message  # never the model's text


@pytest.mark.parametrize("status, code, words", [
    (401, "ai_auth", "API key"),
    (403, "ai_auth", "API key"),
    (429, "ai_provider_busy", "busy"),
    (500, "ai_provider_error", "problem"),
    (503, "ai_provider_error", "problem"),
    (400, "ai_rejected", "rejected"),
    (404, "ai_rejected", "rejected"),
])
async def test_provider_errors_become_plain_messages_without_the_key(settings, openai_standin, status, code, words):
    openai_standin.fail(status)
    async with gateway(settings, openai_standin) as ai:
        with pytest.raises(AIError) as caught:
            await ask(ai)
    error = caught.value
    assert (error.status, error.code) == (503, code)
    assert words in error.message
    assert describe_ai_error(error) == (503, code, error.message)
    for text in (error.message, str(error), repr(error.to_json())):
        assert TEST_KEY not in text and "sk-" not in text and "Incorrect API key" not in text
    assert error.__context__ is None and error.__cause__ is None  # the SDK's text is not attached
    assert (error.usage.input_tokens, error.usage.output_tokens) == (0, 0)


async def test_timeout_is_a_plain_message(settings, openai_standin):
    openai_standin.reply_json(GOOD, delay=3)
    async with gateway(settings, openai_standin, ai_timeout_ms=300) as ai:
        started = time.monotonic()
        with pytest.raises(AIError) as caught:
            await ask(ai)
        assert time.monotonic() - started < 2
        assert await usage_rows(ai) == [row("failed", (0, 0), reserved=1200)]  # unknown: the reservation stays
    assert (caught.value.status, caught.value.code) == (503, "ai_timeout")
    assert caught.value.usage is None  # unknown: the provider may have worked on it


async def test_unreachable_provider_is_a_plain_message(settings):
    with refused_port() as port:
        async with gateway(settings, openai_api_key=TEST_KEY,
                           openai_base_url=f"http://127.0.0.1:{port}/v1") as ai:
            with pytest.raises(AIError) as caught:
                await ask(ai)
    assert (caught.value.status, caught.value.code) == (503, "ai_unreachable")


async def test_describe_ai_error_never_repeats_exception_text():
    status, code, message = describe_ai_error(RuntimeError(f"boom {TEST_KEY} Bearer abc.def"))
    assert (status, code) == (503, "ai_error")
    assert TEST_KEY not in message and "Bearer" not in message and "boom" not in message
    assert describe_ai_error(TimeoutError())[1] == "ai_timeout"


async def test_invalid_format_name_is_refused_before_any_request(settings, openai_standin):
    async with gateway(settings, openai_standin) as ai:
        with pytest.raises(ValueError):
            await ask(ai, name="copilot answer!")
        assert await usage_rows(ai) == []
    assert openai_standin.request_count == 0


# -- the guard around every call ----------------------------------------------


class NotOurFix(Unavailable):
    code = "not_our_fix"


def failures(capsys) -> list[str]:
    """The `error` of each AI_REQUEST_FAILED log line so far."""
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith('{"event":"AI_')]
    return [line["error"] for line in lines if line["event"] == "AI_REQUEST_FAILED"]


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_validate_judges_the_answer_inside_the_guard(settings, openai_standin, capsys, kind):
    """A feature rejecting the answer closes the row as failed with its code;
    an accepted answer returns what validate made of it."""
    openai_standin.reply_json(GOOD, usage=(300, 30))
    openai_standin.reply_json({**GOOD, "recommendedFixIds": ["fix9"]}, usage=(200, 20))

    def only_fix1(answer: Answer) -> str:
        if answer.recommendedFixIds != ["fix1"]:
            raise NotOurFix("The answer named a fix we did not compute.")
        return answer.answer.upper()

    async def only_fix1_async(answer: Answer) -> str:
        await asyncio.sleep(0)
        return only_fix1(answer)

    validate = only_fix1 if kind == "sync" else only_fix1_async
    async with gateway(settings, openai_standin) as ai:
        assert await ask(ai, validate=validate) == "SWAP LUNCH AND THE MUSEUM."
        with pytest.raises(NotOurFix):
            await ask(ai, validate=validate)
        assert await usage_rows(ai) == [row("completed", (300, 30)), row("failed", (200, 20))]
    assert failures(capsys) == ["not_our_fix"]


@pytest.mark.parametrize("limit, refusal", [({"ai_daily_limit": 1}, Unavailable), ({"ai_concurrent": 1}, Busy)])
async def test_a_refused_reservation_never_contacts_the_provider(settings, openai_standin, limit, refusal):
    async with gateway(settings, openai_standin, **limit) as ai:
        taken = await ai.usage.reserve("someone", None, "agent_chat")  # the one slot
        if "ai_daily_limit" in limit:
            await ai.usage.finish(taken, "completed", 10, 5)
        with pytest.raises(refusal):
            await ask(ai)
        with pytest.raises(refusal):
            await collect(ai)
        assert len(await usage_rows(ai)) == 1  # a refused call writes no row
    assert openai_standin.request_count == 0


@pytest.mark.parametrize("headers, wait", [
    ({"Retry-After": "7"}, 7), ({"Retry-After": "0.2"}, 1), ({"retry-after-ms": "1500"}, 2),
    ({"Retry-After": "Wed, 21 Oct 2026 07:28:00 GMT"}, None), ({"Retry-After": "86400"}, None), ({}, None),
])
async def test_a_rate_limited_provider_says_when_to_try_again(settings, openai_standin, headers, wait):
    openai_standin.fail(429, headers=headers)
    async with gateway(settings, openai_standin) as ai:
        with pytest.raises(AIError) as caught:
            await ask(ai)
    error = caught.value
    assert (error.status, error.code) == (503, "ai_provider_busy")
    assert error.extra.get("retryAfterS") == wait and error.headers() == ({"Retry-After": str(wait)} if wait else {})
    assert ("in a minute" in error.message) == (wait is None)


async def test_a_provider_out_of_quota_is_not_busy(settings, openai_standin):
    """OpenAI answers 429 `insufficient_quota` when the account has no credit: no wait ends that."""
    openai_standin.fail(429, "You exceeded your current quota, please check your plan.", code="insufficient_quota")
    async with gateway(settings, openai_standin) as ai:
        with pytest.raises(AIError) as caught:
            await ask(ai)
    assert (caught.value.status, caught.value.code) == (503, "ai_quota")
    assert "administrator" in caught.value.message and "exceeded" not in caught.value.message


# -- sanitize and schemas -----------------------------------------------------


def test_sanitize_redacts_key_shaped_text():
    text = (f"key {TEST_KEY}; project sk-proj-AbCdEf123456_-xyz; masked sk-test-****cdef; "
            "google AIzaSyD-abcdefghijklmnopqrstuvwx; header Authorization: Bearer eyJ.abc-def_ghi; "
            "custom s3cr3t-value-42")
    out = sanitize(text, secrets=("s3cr3t-value-42",))
    for leaked in (TEST_KEY, "sk-proj-AbCd", "****cdef", "AIzaSyD", "eyJ.abc", "s3cr3t"):
        assert leaked not in out
    assert "Bearer [redacted]" in out
    assert sanitize("plain words, skies and task-list") == "plain words, skies and task-list"


def test_strict_schema_rules():
    class Inner(BaseModel):
        stopId: str
        note: str | None = None

    class Outer(BaseModel):
        items: list[Inner] = Field(max_length=4)
        first: Inner = Field(description="the first one")
        kind: Literal["a", "b"] = "a"
        maybe: Inner | None = None

    schema = strict_schema(Outer)

    def walk(node):
        if isinstance(node, dict):
            assert "default" not in node and "maxLength" not in node
            if node.get("type") == "object":
                assert node["additionalProperties"] is False
                assert node["required"] == list(node["properties"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    assert schema["properties"]["first"]["description"] == "the first one"
    assert schema["properties"]["first"]["properties"]["note"]["anyOf"][1] == {"type": "null"}
    assert {"type": "null"} in schema["properties"]["maybe"]["anyOf"]
    assert schema["properties"]["kind"]["enum"] == ["a", "b"]

    class FreeForm(BaseModel):
        args: dict[str, Any]

    with pytest.raises(TypeError):
        strict_schema(FreeForm)


# -- streamed turns -----------------------------------------------------------

SEARCH_TOOL = {"type": "function", "name": "searchPlaces", "description": "Search Google places",
               "parameters": {"type": "object", "properties": {"query": {"type": "string"}},
                              "required": ["query"], "additionalProperties": False},
               "strict": True}


async def collect(ai: AI, **overrides) -> list:
    args = {"feature": "agent_chat", "user_id": "u1", "trip_id": "t1", "instructions": "You are the trip agent.",
            "input": [{"role": "user", "content": "Find pizza"}], "tools": [SEARCH_TOOL], "max_output_tokens": 900,
            **overrides}
    async with aclosing(ai.stream(**args)) as events:
        return [event async for event in events]


async def test_streamed_turn_with_a_function_call(settings, openai_standin):
    openai_standin.reply_function_calls([("searchPlaces", {"query": "pizza near Rossio"})],
                                        text="Let me look that up.", usage=(410, 33))
    async with gateway(settings, openai_standin) as ai:
        events = await collect(ai)
        assert await usage_rows(ai) == [row("completed", (410, 33), feature="agent_chat")]
    kinds = [event.type for event in events]
    assert kinds[-2:] == ["function_call", "completed"]
    assert set(kinds[:-2]) == {"text_delta"}
    assert "".join(e.delta for e in events if isinstance(e, TextDelta)) == "Let me look that up."
    call = events[-2]
    assert isinstance(call, FunctionCall) and call.name == "searchPlaces"
    assert call.arguments == '{"query": "pizza near Rossio"}' and call.call_id.startswith("call_")
    assert call.as_input_item() == {"type": "function_call", "call_id": call.call_id, "name": "searchPlaces",
                                    "arguments": call.arguments}
    done = events[-1]
    assert isinstance(done, Completed)
    assert (done.usage.input_tokens, done.usage.output_tokens) == (410, 33)
    assert done.text == "Let me look that up." and done.function_calls == (call,)
    assert [item["type"] for item in done.output_items] == ["message", "function_call"]

    body = openai_standin.requests[0].body
    assert body["stream"] is True and body["store"] is False
    assert body["tools"] == [SEARCH_TOOL] and body["max_output_tokens"] == 900


async def test_reasoning_summaries_become_events_when_asked_for(settings, openai_standin):
    openai_standin.reply_text("Go early.", reasoning=["Weighing the queue.", "Mornings are quieter."])
    openai_standin.reply_text("Go early.", reasoning=["Summaries the provider sent unasked."])
    async with gateway(settings, openai_standin, openai_reasoning_summary="concise") as ai:
        events = await collect(ai, tools=[], reasoning=True, turn_id="turn-1")
        unasked = await collect(ai, tools=[])
        rows = [dict(r) for r in await ai.usage.db.fetchall("SELECT turn_id, response_id FROM ai_usage ORDER BY rowid")]
    assert openai_standin.requests[0].body["reasoning"] == {"summary": "concise"}
    assert "reasoning" not in openai_standin.requests[1].body
    kinds = [type(e) for e in events]
    assert kinds[0] is ReasoningStart and kinds[-1] is Completed
    starts = [e.id for e in events if isinstance(e, ReasoningStart)]
    ends = [e for e in events if isinstance(e, ReasoningEnd)]
    assert len(starts) == 2 and [e.id for e in ends] == starts
    assert [e.text for e in ends] == ["Weighing the queue.", "Mornings are quieter."]
    assert "".join(e.delta for e in events if isinstance(e, ReasoningDelta) and e.id == starts[0]) == \
        "Weighing the queue."
    assert kinds.index(TextDelta) > max(i for i, k in enumerate(kinds) if k is ReasoningEnd)
    assert events[-1].text == "Go early." and events[-1].response_id == rows[0]["response_id"]
    assert [type(e) for e in unasked].count(ReasoningEnd) == 1   # passed on whenever the provider sends them
    assert rows[0]["turn_id"] == "turn-1" and rows[1]["turn_id"] is None
    assert rows[0]["response_id"].startswith("resp_") and rows[0]["response_id"] != rows[1]["response_id"]


async def test_structured_calls_record_the_turn_and_the_response_id(settings, openai_standin):
    openai_standin.reply_json(GOOD)
    async with gateway(settings, openai_standin) as ai:
        await ask(ai, turn_id="msg-7")
        row = await ai.usage.db.fetchone("SELECT turn_id, response_id FROM ai_usage")
    assert row["turn_id"] == "msg-7" and row["response_id"].startswith("resp_")


async def test_streamed_turn_text_only_and_incomplete(settings, openai_standin):
    openai_standin.reply_text("Day two looks relaxed.")
    openai_standin.reply_incomplete("Day two looks", reason="max_output_tokens")
    async with gateway(settings, openai_standin) as ai:
        first = await collect(ai, tools=[])
        second = await collect(ai, tools=[])
        assert [r["status"] for r in await usage_rows(ai)] == ["completed", "failed"]  # a cut-off round failed
    assert first[-1].text == "Day two looks relaxed." and first[-1].status == "completed"
    assert "tools" not in openai_standin.requests[0].body
    assert second[-1].status == "incomplete" and second[-1].incomplete_reason == "max_output_tokens"


async def test_streamed_turn_failures_end_with_one_error_event(settings, openai_standin):
    openai_standin.fail(429)
    openai_standin.stream_error("Internal error with key sk-test-leaky-123456", text="Partial answer")
    openai_standin.reply_text("A slow answer that never finishes in time", chunk_delay=0.2)
    async with gateway(settings, openai_standin, ai_timeout_ms=500) as ai:
        rate_limited = await collect(ai)
        broken = await collect(ai)
        started = time.monotonic()
        slow = await collect(ai)
        assert time.monotonic() - started < 2
        # 429: nothing spent; mid-stream error: unknown, the reservation stays; timeout: the same.
        assert await usage_rows(ai) == [row("failed", (0, 0), feature="agent_chat"),
                                        row("failed", (0, 0), reserved=900, feature="agent_chat"),
                                        row("failed", (0, 0), reserved=900, feature="agent_chat")]
    assert rate_limited == [StreamFailed(503, "ai_provider_busy", rate_limited[0].message, rate_limited[0].usage)]
    assert [e.type for e in broken][-1] == "error" and broken[0].type == "text_delta"
    assert all("sk-" not in getattr(e, "message", "") for e in broken)
    assert slow[-1].type == "error" and slow[-1].code == "ai_timeout"
    assert sum(e.type == "error" for e in slow) == 1


async def test_a_consumer_that_stops_early_closes_its_row(settings, openai_standin, capsys):
    """Leaving a stream after its first event (or being cancelled mid-round)
    closes the usage row at once and frees the slot for the next call."""
    openai_standin.reply_text("A long answer " * 40, chunk_delay=0.05)
    openai_standin.reply_text("A slow answer", delay=5)
    openai_standin.reply_text("Fine.")
    async with gateway(settings, openai_standin, ai_concurrent=1) as ai:
        async with aclosing(ai.stream(feature="agent_ambient", user_id="u1", trip_id="t1", instructions="Hi.",
                                      input="Hello", tools=[], max_output_tokens=500)) as events:
            async for event in events:
                assert event.type == "text_delta"
                break
        # Closed on leaving, before anything else runs; the reservation stays (the provider was working).
        assert [(r["status"], r["reserved_output_tokens"]) for r in await usage_rows(ai)] == [("failed", 500)]

        task = asyncio.ensure_future(collect(ai, tools=[]))
        await asyncio.to_thread(openai_standin.wait_for_requests, 2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert [r["status"] for r in await usage_rows(ai)] == ["failed", "failed"]
        assert (await collect(ai, tools=[]))[-1].text == "Fine."  # the one slot is free again
        assert [r["status"] for r in await usage_rows(ai)] == ["failed", "failed", "completed"]
    assert failures(capsys) == ["abandoned", "cancelled"]


def test_openai_is_imported_only_when_an_ai_client_is_built(tmp_path):
    """Cold start: a server without a key never imports the SDK (a fresh
    interpreter, so other tests' imports cannot hide it)."""
    script = f"""
import sys
from starlette.testclient import TestClient
import app.ai, app.web.application
from app.settings import Settings
assert "openai" not in sys.modules, "imported with app.ai"
settings = Settings(db_path={str(tmp_path / "w.db")!r}, uploads_dir={str(tmp_path / "up")!r})
with TestClient(app.web.application.create_app(settings)) as client:
    assert client.get("/api/config").status_code == 200
    assert client.app.state.services.ai is None
assert "openai" not in sys.modules, "imported by an app without a key"
assert not any(name.startswith("opentelemetry") for name in sys.modules), "OpenTelemetry without an endpoint"
with TestClient(app.web.application.create_app(settings.with_(openai_api_key="sk-test-cold-start-0000"))) as client:
    assert client.app.state.services.ai is not None
assert "openai" in sys.modules
print("ok")
"""
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
