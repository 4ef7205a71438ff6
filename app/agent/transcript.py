"""The stored chat in, Responses API input items out.

The client (useChat) sends the whole conversation on every request, but the
history is the server's: every turn is stored in the trip's timeline, so
the input is rebuilt from the stored messages (timeline.chat_history), and
from the client only the new member message and approval responses are
taken (chat.py). An invented assistant message, a rewritten tool result or
an edited earlier member message in the request never reaches the model.

The model sees: member text and this trip's attachments (the latest ones
inline, read from the store), prior assistant prose only (tool and UI parts
of earlier turns are not replayed), and, for the turn being continued after
approvals, its full function-call transcript as stored, since `store=False`
keeps no state at the provider.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, TYPE_CHECKING

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from ..errors import AppError
from .deps import AgentDeps
from .. import media_for_model as files
from .timeline import text_of

WINDOW = 30                 # messages of history given to the model
INLINE_FILE_MESSAGES = 2    # user messages whose attachments are given inline
TEXT_CHARS = 4000
OUTPUT_CHARS = 4000


class UIPartIn(BaseModel):
    """One part of a client's UIMessage. Only the fields the server reads are
    typed (anything else passes through untouched); a text or reasoning part
    must carry its text as a string."""

    model_config = ConfigDict(extra="allow")
    type: str = Field(max_length=200)
    text: str | None = None          # lengths: the body limit bounds them; chat.prepare checks the new text
    url: str | None = None
    mediaType: str | None = None
    filename: str | None = None
    toolCallId: str | None = None
    toolName: str | None = None
    state: str | None = None

    @model_validator(mode="after")
    def _text_is_text(self) -> UIPartIn:
        if self.type in ("text", "reasoning") and self.text is None:
            raise ValueError(f"a {self.type} part needs its text as a string")
        return self


def _as_dicts(parts: list[UIPartIn]) -> list[dict[str, Any]]:
    # Checked against the schema, then handed on as the plain dicts the
    # transcript code reads (only the fields the client sent).
    return [part.model_dump(exclude_unset=True) for part in parts]


if TYPE_CHECKING:   # what the validator below hands on
    PartsIn = list[dict[str, Any]]
else:
    PartsIn = Annotated[list[UIPartIn], AfterValidator(_as_dicts)]


class UIMessageIn(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str | None = Field(default=None, max_length=200)
    role: str = Field(max_length=20)
    parts: PartsIn = Field(default_factory=list, max_length=400)


def tool_name(part: dict) -> str | None:
    kind = part.get("type")
    if isinstance(kind, str) and kind.startswith("tool-"):
        return kind[5:]
    if kind == "dynamic-tool" and isinstance(part.get("toolName"), str):
        return part["toolName"]
    return None


def function_call(call_id: str, name: str, tool_input: Any) -> dict:
    return {"type": "function_call", "call_id": call_id, "name": name,
            "arguments": json.dumps(tool_input if tool_input is not None else {}, ensure_ascii=False)}


def function_output(call_id: str, output: Any, limit: int = OUTPUT_CHARS) -> dict:
    """`limit`: a read tool's own bound on its answer (readDay's day is longer than most)."""
    text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    if len(text) > limit:
        text = text[:limit] + "…(truncated)"
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def compact_output(output: Any) -> Any:
    """Write-tool echoes carry a whole TripDto for the client; the model and
    the stored timeline only need whether it worked."""
    if isinstance(output, dict) and "trip" in output:
        trip = output.get("trip")
        return {k: v for k, v in output.items() if k != "trip"} | (
            {"version": trip.get("version")} if isinstance(trip, dict) else {})
    return output


def settled_tool_items(part: dict) -> list[dict]:
    """function_call + function_call_output for a tool part the client holds."""
    name, call_id = tool_name(part), part.get("toolCallId")
    if not name or not isinstance(call_id, str):
        return []
    state = part.get("state")
    if state == "output-available":
        result: Any = compact_output(part.get("output"))
    elif state == "output-error":
        result = {"error": str(part.get("errorText") or "failed")[:500]}
    elif state == "output-denied":
        result = {"denied": True, "note": "A member denied this change; nothing was changed."}
    elif state == "approval-requested":
        result = {"pending": True, "note": "No member approved this change; nothing was changed."}
    else:
        result = {"note": "This call has no result; nothing was changed."}
    return [function_call(call_id, name, part.get("input")), function_output(call_id, result)]


async def _user_content(svc: AgentDeps, trip_id: str, parts: list[dict], inline: bool,
                        own_hosts: tuple[str, ...]) -> list[dict]:
    content: list[dict] = []
    text = text_of(parts)[:TEXT_CHARS]
    if text:
        content.append({"type": "input_text", "text": text})
    for part in parts:
        if part.get("type") != "file":
            continue
        try:
            upload = await files.resolve(svc.db, trip_id, part.get("url"), own_hosts)
        except AppError:
            continue  # a file that is gone (or never was ours) is just skipped in history
        if upload.media_type not in files.SUPPORTED_TYPES:
            continue
        if inline:
            content.append(await files.model_content(svc.files, upload))
        else:
            content.append({"type": "input_text", "text": f"[attached earlier: {upload.filename} {upload.url}]"})
    return content


def _has_files(message: dict) -> bool:
    return any(isinstance(p, dict) and p.get("type") == "file" for p in message["parts"])


async def build_input(svc: AgentDeps, trip_id: str, history: list[dict], *, continuing: bool,
                      answered: frozenset[str] = frozenset(), own_hosts: tuple[str, ...] = ()) -> list[dict]:
    """Input items for the model from stored messages (`{"role", "parts"}`,
    oldest first, as timeline.chat_history returns them). With `continuing`,
    the last message is the assistant turn being continued: its settled tool
    parts are replayed in order, but for the calls in `answered` (the
    approvals being settled now, which the caller adds)."""
    window = history[-WINDOW:]
    users_with_files = [i for i, m in enumerate(window) if m["role"] == "user" and _has_files(m)]
    inline = set(users_with_files[-INLINE_FILE_MESSAGES:])
    items: list[dict] = []
    for index, message in enumerate(window):
        last = index == len(window) - 1
        if message["role"] == "user":
            content = await _user_content(svc, trip_id, message["parts"], index in inline, own_hosts)
            if content:
                items.append({"role": "user", "content": content})
        elif message["role"] == "assistant" and continuing and last:
            prose: list[str] = []
            for part in message["parts"]:
                if part.get("type") == "text" and isinstance(part.get("text"), str):
                    prose.append(part["text"])
                    continue
                if tool_name(part) is None or part.get("toolCallId") in answered:
                    continue
                if prose:
                    items.append({"role": "assistant", "content": "".join(prose)[:TEXT_CHARS]})
                    prose = []
                items.extend(settled_tool_items(part))
            if prose:
                items.append({"role": "assistant", "content": "".join(prose)[:TEXT_CHARS]})
        elif message["role"] == "assistant":
            text = text_of(message["parts"])[:TEXT_CHARS]
            if text:
                items.append({"role": "assistant", "content": text})
    return items
