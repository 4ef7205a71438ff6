"""Ambient replies: the agent answers plain timeline messages addressed to it,
and `@agent` mentions in stop comments.

Who a plain message (`POST .../agent/messages`) is for is decided at once by
addressing.py, before any model call: the group (no model call at all; every
message is the group's on a server without AI), the
agent (an `@agent` mention, or its own turn going on: a confirmation, a
choice, a question), or, only for an unclear message right after the
agent's reply, the model (`is_addressed {addressed}`, feature agent_ambient)
in the background. An ambient reply uses read tools only and its own
prompt, which does not offer writes: when a change is needed it asks the
member to write again starting with @agent (the page then streams a chat
turn, where writes can be approved).

A message that asks for street view (grounding.py) is always addressed and
answered by the application, without a model call. Every reply records the
member message it answers as its turn id (and so do its model calls).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import json
import logging
from contextlib import aclosing
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict

from ..ai import require_ai, unusable_round
from ..errors import AppError
from .deps import AgentDeps
from ..db import Tx
from ..markdown_links import check_links
from ..social import StopCommented, insert_comment
from ..trips import store
from ..trips.model import Trip
from .. import media_for_model as files
from ..read_tools import AGENT_READ_TOOLS, ToolContext, ToolResult, read_tool_specs, run_read_tool
from . import addressing, focus, grounding, timeline
from .chat import instructions_for

log = logging.getLogger("wayline.agent")

AGENT_NAME = "Wayline agent"
AMBIENT_MAX_OUTPUT_TOKENS = 1200
ADDRESSED_MAX_OUTPUT_TOKENS = 50
HISTORY = 12

AMBIENT_INSTRUCTIONS = """You are Wayline's trip agent, reading the shared chat of a group planning a trip.
A member's message was addressed to you; answer it briefly, in the member's language.
You can look things up with your tools (places, lodging, routes, weather, a day of the trip in full, the trip's
uploaded files).
Facts come from tools and from the trip below: never invent places, opening hours, prices, times or ids.
You do not change the trip from this chat. If the member wants a change, describe it and ask them to
write again starting with @agent, so the change can be written and approved."""

ADDRESSED_INSTRUCTIONS = """Members of a travel group chat with each other; an AI assistant (the trip agent) also
reads the chat. Decide whether the NEWEST message is addressed to the assistant: a request or question for it,
or a reply to something it just said. Messages between members are not addressed to it.
Answer with is_addressed: {"addressed": true|false}."""


class IsAddressed(BaseModel):
    """Structured output `is_addressed` (spec section 10)."""

    model_config = ConfigDict(extra="forbid")
    addressed: bool


# -- plain messages --------------------------------------------------------------


async def post_message(svc: AgentDeps, trip_id: str, user: dict, text: str, parts: list[dict], *,
                       group_only: bool = False) -> tuple[bool, dict]:
    """Append a member's plain message and decide who it is for
    (addressing.py): the group (nothing more happens, no model call), the
    agent (its reply is made in the background), or, for an unclear
    message right after the agent's reply, the model's `is_addressed`.
    `group_only`: the member chose the group. Without AI (`svc.ai` None)
    every message is the group's: the timeline is the group's chat either
    way. A street-view request that is not for a member is answered by the
    application (with AI on). Returns (the agent answers: decided now, the
    stored row)."""
    check_links(text, trip_id, "text", svc.settings.public_url)

    def work(tx: Tx) -> tuple[Any, dict[str, Any]]:
        return timeline.latest_chat(tx, trip_id), store.append_message(
            tx, trip_id, role="user", parts=parts, source="mention" if addressing.mentions_agent(text) else "chat",
            actor_user_id=user["id"], actor_name=user["displayName"])

    previous, row = await svc.db.write(work)
    if group_only:
        return False, row
    after_agent = addressing.after_agent(previous, datetime.now(UTC))   # created_at is the real clock
    decision = addressing.decide(text, after_agent=after_agent, members=(await svc.trips.get(trip_id)).members,
                                 ai_on=svc.ai is not None)
    if decision.why in ("member", "no_ai"):   # the group's, whatever it asks (street view too)
        return False, row
    street_view = grounding.parse(text)
    if street_view is not None:
        svc.background.spawn(_street_view_reply(svc, trip_id, row, street_view), name=f"agent-street-{row['id']}")
        return True, row
    if decision.to == "group":
        return False, row
    svc.background.spawn(_maybe_reply(svc, trip_id, user, row, decision), name=f"agent-ambient-{row['id']}")
    return decision.to == "agent", row


async def _street_view_reply(svc: AgentDeps, trip_id: str, row: dict, request: grounding.Request) -> None:
    try:
        parts = await grounding.answer(svc, trip_id, request)
        await svc.db.write(lambda tx: store.append_message(tx, trip_id, role="assistant", parts=parts,
                                                           source=row["source"], actor_name=AGENT_NAME,
                                                           turn_id=row["id"]))
    except Exception:
        log.exception("street view reply to %s failed", row["id"])


async def _maybe_reply(svc: AgentDeps, trip_id: str, user: dict, row: dict, decision: addressing.Decision) -> None:
    try:
        if decision.to == "ask" and not await _ask_addressed(svc, trip_id, user, row):
            return
        trip = await svc.trips.trip(trip_id)
        items = await _recent_items(svc, trip_id, row["seq"])
        days = focus.mentioned(trip, timeline.text_of(json.loads(row["parts_json"])))
        reply = await read_only_reply(svc, trip, user, items, turn_id=row["id"], days=days)
        if reply:
            await svc.db.write(lambda tx: store.append_message(
                tx, trip_id, role="assistant", parts=[{"type": "text", "text": reply}], source=row["source"],
                actor_name=AGENT_NAME, turn_id=row["id"]))
    except AppError as exc:
        log.info("ambient reply skipped: %s (turn %s)", exc.code, row["id"])
    except Exception:
        log.exception("ambient reply failed")


async def _ask_addressed(svc: AgentDeps, trip_id: str, user: dict, row: dict) -> bool:
    recent = await svc.db.fetchall(
        "SELECT role, actor_name, parts_json FROM agent_messages WHERE trip_id = ? AND seq <= ? "
        "AND source NOT IN ('operation', 'stop_comment') ORDER BY seq DESC LIMIT 8", (trip_id, row["seq"]))
    lines = [{"from": "assistant" if r["role"] == "assistant" else (r["actor_name"] or "member"),
              "text": timeline.text_of(json.loads(r["parts_json"]))[:500]} for r in reversed(recent)]
    answer = await require_ai(svc.ai).structured(
        feature="agent_ambient", user_id=user["id"], trip_id=trip_id, name="is_addressed", schema=IsAddressed,
        instructions=ADDRESSED_INSTRUCTIONS, input=json.dumps({"messages": lines}, ensure_ascii=False),
        max_output_tokens=ADDRESSED_MAX_OUTPUT_TOKENS, turn_id=row["id"])
    return answer.addressed


async def _recent_items(svc: AgentDeps, trip_id: str, up_to_seq: int, stop_id: str | None = None) -> list[dict]:
    """The conversation so far as model input (the newest message's files inline)."""
    where = "source = 'stop_comment' AND stop_id = ?" if stop_id else "source NOT IN ('operation', 'stop_comment')"
    params = (trip_id, up_to_seq, stop_id) if stop_id else (trip_id, up_to_seq)
    rows = await svc.db.fetchall(
        f"SELECT role, actor_name, parts_json FROM agent_messages WHERE trip_id = ? AND seq <= ? AND {where} "
        f"ORDER BY seq DESC LIMIT {HISTORY}", params)
    items: list[dict[str, Any]] = []
    for i, r in enumerate(reversed(rows)):
        parts = json.loads(r["parts_json"])
        text = timeline.text_of(parts)[:4000]
        if r["role"] == "assistant":
            if text:
                items.append({"role": "assistant", "content": text})
            continue
        said = f"{r['actor_name'] or 'member'}: {text}"
        content: list[dict[str, Any]] = [{"type": "input_text", "text": said}] if text else []
        if i == len(rows) - 1:
            for part in parts:
                if part.get("type") == "file":
                    try:
                        upload = await files.resolve(svc.db, trip_id, part.get("url"))
                    except AppError:
                        continue
                    content.append(await files.model_content(svc.files, upload))
        if content:
            items.append({"role": "user", "content": content})
    return items


async def read_only_reply(svc: AgentDeps, trip: Trip, user: dict, items: list[dict], extra: str = "", *,
                          turn_id: str | None = None, days: Sequence[str] = ()) -> str:
    """A reply with read tools only, one guarded model round (agent_ambient) per
    step; "" when the model did not finish. A round that fails or is unusable
    (refused, cut off) leaves nothing to post, even after earlier rounds said
    something: that was the way to an answer ("Let me check the forecast") and
    a tool call, not one, and the group would read a promise nothing follows.
    So does the step limit reached while it still looks things up; a spent AI
    budget raises from the round (nothing posted either). `days`: the days
    the message is about (focus.py), in full on a long trip."""
    role = await svc.db.fetchval("SELECT role FROM members WHERE trip_id = ? AND user_id = ?",
                                 (trip.id, user["id"])) or "viewer"
    instructions = await instructions_for(svc, trip, user, role, AMBIENT_INSTRUCTIONS + extra, days=days)
    specs = read_tool_specs()
    texts: list[str] = []
    for _ in range(svc.settings.ai_max_tool_steps):
        calls = []
        async with aclosing(require_ai(svc.ai).stream(feature="agent_ambient", user_id=user["id"], trip_id=trip.id,
                                          instructions=instructions, input=items, tools=specs,
                                          max_output_tokens=AMBIENT_MAX_OUTPUT_TOKENS, turn_id=turn_id)) as events:
            async for event in events:
                if event.type == "function_call":
                    calls.append(event)
                elif event.type == "completed":
                    if unusable_round(event) is not None:
                        return ""   # a refusal, or a sentence cut off mid-way
                    if event.text:
                        texts.append(event.text)
                        items.append({"role": "assistant", "content": event.text})
                elif event.type == "error":
                    return ""
        if not calls:
            return "\n\n".join(texts).strip()
        for call in calls:
            if call.name in AGENT_READ_TOOLS:
                result = await run_read_tool(ToolContext(svc, trip), call.name, call.arguments)
            else:
                result = ToolResult(error=f"{call.name} is not available here; ask the member to use @agent.")
            items += [call.as_input_item(), {"type": "function_call_output", "call_id": call.call_id,
                                             "output": result.for_model()}] + result.model_items
    return ""   # the step limit, still calling tools: no answer yet


# -- stop comments -------------------------------------------------------------------


def on_stop_comment(svc: AgentDeps, event: StopCommented) -> None:
    """A member's comment on a stop committed (the AGENT phase of
    app/changes.py). With `@agent` in it (and AI on) the mention joins the
    timeline as a stop_comment row and the reply is produced, in the
    background."""
    if svc.ai is None or not addressing.mentions_agent(event.body):
        return
    user = {"id": event.user_id, "displayName": event.author}
    svc.background.spawn(_mention_and_reply(svc, event.trip_id, event.stop_id, user, event.body),
                         name=f"agent-stop-{event.stop_id}")


async def _mention_and_reply(svc: AgentDeps, trip_id: str, stop_id: str, user: dict[str, Any], body: str) -> None:
    row = await svc.db.write(lambda tx: store.append_message(
        tx, trip_id, role="user", parts=[{"type": "text", "text": body[:4000]}], source="stop_comment",
        stop_id=stop_id, actor_user_id=user["id"], actor_name=user["displayName"]))
    await _reply_on_stop(svc, trip_id, stop_id, user, row)


async def _reply_on_stop(svc: AgentDeps, trip_id: str, stop_id: str, user: dict, row: dict) -> None:
    try:
        street_view = grounding.parse(timeline.text_of(json.loads(row["parts_json"])))
        if street_view is not None:
            parts = await grounding.answer(svc, trip_id, street_view)
            reply = timeline.text_of(parts)  # the comment keeps the text; the timeline row the card too
        else:
            trip = await svc.trips.trip(trip_id)
            day, stop = trip.stop(stop_id)
            items = await _recent_items(svc, trip_id, row["seq"], stop_id=stop_id)
            extra = (f"\n\nThis conversation is the comment thread of the stop {stop.name!r} (id {stop.id}) on "
                     f"{trip.day_date(day)}; answer about that stop, in a few sentences of plain text.")
            days = [day.id, *focus.mentioned(trip, timeline.text_of(json.loads(row["parts_json"])))]
            reply = await read_only_reply(svc, trip, user, items, extra, turn_id=row["id"], days=days)
            parts = [{"type": "text", "text": reply}]
        if not reply:
            return

        def answer(tx: Tx) -> None:
            store.append_message(tx, trip_id, role="assistant", parts=parts, source="stop_comment",
                                 stop_id=stop_id, actor_name=AGENT_NAME, turn_id=row["id"])
            insert_comment(tx, trip_id, stop_id, None, AGENT_NAME, reply[:4000])

        await svc.db.write(answer)
    except AppError as exc:
        log.info("stop comment reply skipped: %s (turn %s)", exc.code, row["id"])
    except Exception:
        log.exception("stop comment reply failed")
