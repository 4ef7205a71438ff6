"""What one model round yields, as plain values: the stream's events (text,
reasoning summaries, function calls, the end or the failure) and the tokens
it used. Kept apart from the gateway (app/ai.py) so that code reading a
round's events needs nothing of the provider's client."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class Usage:
    """Tokens from the Responses API's `usage`. `input_tokens` includes cached
    input; `output_tokens` includes reasoning (both billed)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class TextDelta:
    """A piece of the assistant's visible text, in order."""

    delta: str
    item_id: str = ""
    type: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True)
class ReasoningStart:
    """A reasoning summary part begins. `id` names it until its ReasoningEnd
    (the reasoning item's id and the part's index)."""

    id: str
    type: Literal["reasoning_start"] = "reasoning_start"


@dataclass(frozen=True)
class ReasoningDelta:
    """A piece of a reasoning summary, in order."""

    id: str
    delta: str
    type: Literal["reasoning_delta"] = "reasoning_delta"


@dataclass(frozen=True)
class ReasoningEnd:
    """A reasoning summary part is complete; `text` is all of it."""

    id: str
    text: str
    type: Literal["reasoning_end"] = "reasoning_end"


@dataclass(frozen=True)
class FunctionCall:
    """The model finished asking for one function call. `arguments` is the raw
    JSON string (validate it with the tool's pydantic model)."""

    call_id: str
    name: str
    arguments: str
    item_id: str = ""
    type: Literal["function_call"] = "function_call"

    def as_input_item(self) -> dict[str, Any]:
        """The item to resend in the next round's `input` (store=False keeps
        no state), followed by `{"type": "function_call_output", "call_id",
        "output"}`."""
        return {"type": "function_call", "call_id": self.call_id, "name": self.name,
                "arguments": self.arguments}


@dataclass(frozen=True)
class Completed:
    """The round ended. `status` is "completed" or "incomplete" (then
    `incomplete_reason`, e.g. "max_output_tokens"); `text` is all visible text,
    `refusal` any refusal text, `function_calls` every call requested, and
    `output_items` the raw output items as JSON dicts."""

    usage: Usage
    status: str = "completed"
    text: str = ""
    refusal: str | None = None
    incomplete_reason: str | None = None
    function_calls: tuple[FunctionCall, ...] = ()
    output_items: tuple[dict, ...] = field(default=(), repr=False)
    response_id: str | None = None
    type: Literal["completed"] = "completed"


@dataclass(frozen=True)
class StreamFailed:
    """The round failed. (status, code, message) as from `describe_ai_error`;
    `usage` is what the provider reported, or None when unknown."""

    status: int
    code: str
    message: str
    usage: Usage | None = None
    type: Literal["error"] = "error"


StreamEvent = TextDelta | ReasoningStart | ReasoningDelta | ReasoningEnd | FunctionCall | Completed | StreamFailed
