"""The AI SDK UI message stream (v1), as `useChat` / DefaultChatTransport read it.

Framing: every chunk is `data: <json>\\n\\n`, the stream ends with
`data: [DONE]\\n\\n`, there are no `event:` lines, and the response carries
`x-vercel-ai-ui-message-stream: v1`. The client validates each chunk against a
strict schema (unknown keys are rejected), so `chunk()` refuses any key the
protocol does not list for that type: a typo here fails loudly in our tests
instead of silently breaking every browser.
"""

from __future__ import annotations

import json
from typing import Any

HEADERS = {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "connection": "keep-alive",
    "x-vercel-ai-ui-message-stream": "v1",
    "x-accel-buffering": "no",
}

DONE = b"data: [DONE]\n\n"

FINISH_REASONS = ("stop", "length", "content-filter", "tool-calls", "error", "other")

# type -> (required keys, optional keys), besides "type" itself.
CHUNK_KEYS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "start": (frozenset(), frozenset({"messageId", "messageMetadata"})),
    "start-step": (frozenset(), frozenset()),
    "finish-step": (frozenset(), frozenset()),
    "finish": (frozenset(), frozenset({"finishReason", "messageMetadata"})),
    "abort": (frozenset(), frozenset({"reason"})),
    "error": (frozenset({"errorText"}), frozenset()),
    "text-start": (frozenset({"id"}), frozenset({"providerMetadata"})),
    "text-delta": (frozenset({"id", "delta"}), frozenset({"providerMetadata"})),
    "text-end": (frozenset({"id"}), frozenset({"providerMetadata"})),
    "reasoning-start": (frozenset({"id"}), frozenset({"providerMetadata"})),
    "reasoning-delta": (frozenset({"id", "delta"}), frozenset({"providerMetadata"})),
    "reasoning-end": (frozenset({"id"}), frozenset({"providerMetadata"})),
    "tool-input-start": (frozenset({"toolCallId", "toolName"}),
                         frozenset({"providerExecuted", "dynamic", "title"})),
    "tool-input-delta": (frozenset({"toolCallId", "inputTextDelta"}), frozenset()),
    "tool-input-available": (frozenset({"toolCallId", "toolName", "input"}),
                             frozenset({"providerExecuted", "providerMetadata", "dynamic", "title"})),
    "tool-input-error": (frozenset({"toolCallId", "toolName", "input", "errorText"}),
                         frozenset({"providerExecuted", "providerMetadata", "dynamic", "title"})),
    "tool-approval-request": (frozenset({"approvalId", "toolCallId"}), frozenset()),
    "tool-output-available": (frozenset({"toolCallId", "output"}),
                              frozenset({"preliminary", "dynamic", "providerExecuted"})),
    "tool-output-error": (frozenset({"toolCallId", "errorText"}),
                          frozenset({"dynamic", "providerExecuted"})),
    "tool-output-denied": (frozenset({"toolCallId"}), frozenset()),
}


def chunk(type_: str, **fields: Any) -> dict[str, Any]:
    """One chunk dict, checked against the protocol's key set for its type.

    `data-<name>` chunks take `data` and optionally `id` and `transient`."""
    if type_.startswith("data-"):
        required, optional = frozenset({"data"}), frozenset({"id", "transient"})
    else:
        try:
            required, optional = CHUNK_KEYS[type_]
        except KeyError:
            raise ValueError(f"unknown UI message stream chunk type {type_!r}") from None
    fields = {k: v for k, v in fields.items() if v is not None or k in required}
    missing = required - fields.keys()
    unknown = fields.keys() - required - optional
    if missing or unknown:
        raise ValueError(f"chunk {type_!r}: missing {sorted(missing)}, unknown {sorted(unknown)}")
    if type_ == "finish" and "finishReason" in fields and fields["finishReason"] not in FINISH_REASONS:
        raise ValueError(f"finishReason {fields['finishReason']!r} is not one of {FINISH_REASONS}")
    return {"type": type_, **fields}


def encode(item: dict[str, Any]) -> bytes:
    """SSE framing for one chunk."""
    return b"data: " + json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode() + b"\n\n"


def sse(type_: str, **fields: Any) -> bytes:
    return encode(chunk(type_, **fields))
