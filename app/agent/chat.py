"""`POST .../agent/chat`: one agent turn, streamed as the AI SDK UI message stream.

A request either starts a turn (the last message is the member's) or
continues one after approvals (the last message is the assistant turn whose
write-tool parts now hold `approval-responded`). The history is the
server's: the model's input is rebuilt from the stored chat
(timeline.chat_history); from the request only the new member message and
the approval responses are taken. `prepare()` does everything
that can still fail as plain HTTP (membership, a bad attachment URL, a
viewer responding to approvals, verifying and spending approvals); then the
turn runs in a tracked background task that feeds a queue the response
drains. If the client goes away mid-stream the task still finishes and
persists the assistant message (shutdown drains it).

Per model round (at most AI_MAX_TOOL_STEPS): one guarded `svc.ai.stream` (agent_chat),
reasoning summaries and text streamed as they come, then each function call:
read tools run at once and the loop continues; `showCard` becomes a
`data-spec` part (turncards.py); write tools (from TRIP_OPS) are validated
against the trip, signed (approvals.py) and end the turn with
`tool-approval-request`. Approved writes of a continuation are applied in
order on one aggregate in ONE `apply_ops` call and each is echoed as
`{ok, summary, trip}`. A street-view request (grounding.py) is answered
without a model call.

Ids: the assistant message has its own id (`start {messageId}`, kept across
continuations; approvals are signed with it). The turn id is the id of the
member message that started the turn, also kept across continuations (the
assistant row records it): usage rows, log lines and spans carry it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any
from collections.abc import AsyncIterator, Sequence

from ..ids import new_id
from ..ai import OUTPUT_MESSAGES, require_ai, unusable_round
from ..errors import AppError, Conflict, Forbidden, Invalid
from ..markdown_links import check_links
from .deps import AgentDeps
from ..trips.model import Trip
from ..trips.ops import TRIP_OPS, OpContext, validate_args
from ..trips import store
from ..trips.apply import apply_ops
from .. import media_for_model as files
from ..read_tools import AGENT_READ_TOOLS, ToolContext, read_tool_specs, run_read_tool
from . import approvals, focus, grounding, timeline, tools
from .cardtool import SHOW_CARD, tool_spec as card_tool_spec
from .snapshot import agent_snapshot
from .ui_stream import DONE, sse
from .transcript import (OUTPUT_CHARS, WINDOW, UIMessageIn, build_input, compact_output, function_call,
                         function_output, tool_name)
from .turncards import TurnCards, recent_cards

log = logging.getLogger("wayline.agent")

MAX_TEXT = 4000
CHAT_MAX_OUTPUT_TOKENS = 3000
# The AI SDK finish reason for a round `unusable_round` turns down.
UNUSABLE_FINISH = {"refusal": "content-filter", "incomplete": "length", "empty": "error"}
UNCHANGED_CARD = "The card is unchanged: it already shows what you asked for."   # a refine that changed nothing

CHAT_INSTRUCTIONS = """You are Wayline's trip agent in the shared chat of the members planning this trip.
Facts come from your tools and from the trip below: never invent places, opening hours, prices, times or ids.

When a member asks you to create or fill a multi-day plan:
1. Research with tools first: placeSearch / placeNearby / placeDetail for sights and food, lodgingSearch
   for stays, checkWeather for the dates, routes when travel time matters.
2. Draft and ask: present a day-by-day proposal and ask whether to write it into the trip (for example
   reply "确认" / "confirm"). Do not call write tools in that proposal turn.
3. After the member confirms, write it: update_day / insert_stop with names, placeIds and coordinates
   from tool results. Every write is shown to the members for approval before it happens. Put estimated
   prices (tickets, lodging, meals) in the stop note; call add_expense only when a member explicitly asks
   to record a spend.
A small, explicit edit request (move, rename, retime one stop) may be written directly; approval gates it.
Stops with a set time are fixed appointments. Attachments and notes may link trip uploads; read them with
readTripMedia. Keep answers short and reply in the member's language.
showCard draws a compact card beside your answer (a plan, days, stops, a comparison, a budget); keep the prose
short when a card says it. To change one of the recentCards in the context, call showCard with refine set to
its id and only the changed elements."""

VIEWER_NOTE = ("The member talking to you is a viewer: you have no write tools for them. If a change is "
               "needed, describe it and say that an owner or editor can ask you to make it.")


@dataclass
class Turn:
    trip_id: str
    user: dict
    role: str
    message_id: str              # the assistant message id (kept across continuations)
    turn_id: str                 # the member message that started the turn (kept too)
    input: list[dict]
    responses: list[approvals.Response] = field(default_factory=list)
    continuing: bool = False
    own_hosts: tuple[str, ...] = ()   # hosts whose absolute upload URLs count as ours
    street_view: grounding.Request | None = None   # answered by the application, no model
    day_in_view: str | None = None    # the day the member's page shows (the request's dayId), if any
    focus_text: str = ""              # the member's words that started the turn: the days they name


# -- before the stream ---------------------------------------------------------


async def prepare(svc: AgentDeps, trip_id: str, user: dict, role: str, messages: list[UIMessageIn],
                  own_hosts: tuple[str, ...], day_in_view: str | None = None) -> Turn:
    if not messages:
        raise Invalid("messages: send at least one message", field="messages")
    last = messages[-1]
    if last.role == "user":
        text = timeline.text_of(last.parts)
        if len(text) > MAX_TEXT:
            raise Invalid(f"text: at most {MAX_TEXT} characters", field="text")
        check_links(text, trip_id, "text", svc.settings.public_url)
        file_parts = [p for p in last.parts if p.get("type") == "file"]
        cleaned = await files.clean_file_parts(svc.db, trip_id, file_parts, own_hosts,
                                               field=f"messages.{len(messages) - 1}.parts")
        if not text and not cleaned:
            raise Invalid("messages: the last message needs text or a file", field="messages")
        parts = ([{"type": "text", "text": text}] if text else []) + cleaned
        street_view = grounding.parse(text)
        if street_view is None and svc.ai is not None:
            # 429 before anything is stored, for the size the turn's first call reserves
            await svc.ai.check_share(user["id"], trip_id, "agent_chat", max_output_tokens=CHAT_MAX_OUTPUT_TOKENS)
        row = await svc.db.write(lambda tx: store.append_message(
            tx, trip_id, role="user", parts=parts, source="mention" if "@agent" in text.lower() else "chat",
            message_id=timeline.usable_client_id(last.id), actor_user_id=user["id"],
            actor_name=user["displayName"]))
        # The history is the stored chat up to this message, never the client's copy of it.
        items = [] if street_view else await build_input(
            svc, trip_id, await timeline.chat_history(svc, trip_id, row["id"], WINDOW), continuing=False,
            own_hosts=own_hosts)
        return Turn(trip_id, user, role, "msg_" + new_id(), row["id"], items, own_hosts=own_hosts,
                    street_view=street_view, day_in_view=day_in_view, focus_text=text)
    if last.role != "assistant":
        raise Invalid("messages: the last message must be the member's or the assistant turn to continue",
                      field="messages")
    responded = [p for p in last.parts if tool_name(p) and p.get("state") == "approval-responded"]
    message_id = timeline.usable_client_id(last.id)
    if not responded or message_id is None:
        raise Invalid("messages: nothing to continue (no approval responses)", field="messages")
    if role == "viewer":
        raise Forbidden("Only owners and editors can approve or deny changes to the trip")
    history = await timeline.chat_history(svc, trip_id, message_id, WINDOW)
    if not history or history[-1]["id"] != message_id or history[-1]["role"] != "assistant":
        raise Invalid("messages: nothing to continue (no such turn of the agent)", field="messages")
    # From the client: only its approval responses, each checked against what the server signed.
    responses = [await approvals.redeem(svc, trip_id, message_id, p, user["id"]) for p in responded]
    answered = frozenset(r.tool_call_id for r in responses if r.error is None)
    items = await build_input(svc, trip_id, history, continuing=True, answered=answered, own_hosts=own_hosts)
    turn_id = await timeline.turn_of(svc, trip_id, message_id) or message_id
    started = next((timeline.text_of(m["parts"]) for m in history if m["id"] == turn_id), "")
    return Turn(trip_id, user, role, message_id, turn_id, items, responses, continuing=True, own_hosts=own_hosts,
                day_in_view=day_in_view, focus_text=started)


# -- applying approved writes -------------------------------------------------------


@dataclass
class Outcome:
    ok: bool
    summary: str = ""
    error: str = ""


async def apply_batch(svc: AgentDeps, trip_id: str, user_id: str,
                      calls: list[tuple[str, dict]]) -> tuple[list[Outcome], bytes | None]:
    """Apply approved writes in order on one aggregate with ONE apply_ops call.

    A dry run on a working copy first finds the calls that cannot apply (each
    gets its own error); the rest go to apply_ops with a precondition that
    the trip is still the one the dry run saw (retried once if it moved)."""
    outcomes: list[Outcome] = []
    for attempt in range(2):
        trip = await svc.trips.trip(trip_id)
        working, good, outcomes = trip.edit(), [], []
        for name, args in calls:
            try:
                validated = validate_args(name, args)
                TRIP_OPS[name].apply(working, validated, OpContext(actor_id=user_id, now="", rules=svc.trips.op_rules))
                good.append((name, validated))
                outcomes.append(Outcome(True))
            except AppError as exc:
                outcomes.append(Outcome(False, error=exc.message))
        if not good:
            return outcomes, None

        def unchanged(current: Trip, seen: int = trip.version) -> None:
            if current.version != seen:
                raise Conflict("The trip changed while applying", code="trip_moved")

        try:
            applied = await apply_ops(svc.trips, trip_id, user_id, good, precondition=unchanged, source="agent")
        except Conflict as exc:
            if exc.code == "trip_moved" and attempt == 0:
                continue
            return [o if not o.ok else Outcome(False, error=exc.message) for o in outcomes], None
        except AppError as exc:
            return [o if not o.ok else Outcome(False, error=exc.message) for o in outcomes], None
        summaries = iter(applied.summaries)
        for o in outcomes:
            if o.ok:
                o.summary = next(summaries)
        return outcomes, await svc.trip_cache.json_for(trip_id, user_id, applied.role)
    return outcomes, None


# -- the stream ----------------------------------------------------------------------


class _Emitter:
    """Chunks for the client (a queue the response drains) and the parts we
    persist for the assistant message."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.parts: list[dict] = []

    def __call__(self, type_: str, **fields: Any) -> None:
        self.queue.put_nowait(sse(type_, **fields))


async def instructions_for(svc: AgentDeps, trip: Trip, user: dict, role: str, base: str,
                           cards: list[dict] | None = None, days: Sequence[str] = ()) -> str:
    """The prompt with its context; `days`: the days this call is about
    (focus.py), in full when the trip is too long to send whole."""
    now = timeline.now_dt(svc)
    # Off the event loop: a month of full days takes a few tens of milliseconds to weigh.
    snapshot = await asyncio.to_thread(agent_snapshot, trip, days, now=now)
    # The trip's shared choices only: the agent answers in the group's chat (and writes notes every
    # member reads), so a member's private defaults (food, price, usual transport) never reach it.
    context: dict[str, Any] = {"today": now.date().isoformat(),
                               "member": {"name": user["displayName"], "role": role},
                               "tripChoices": trip.prefs.model_dump(), "trip": snapshot}
    if cards:
        context["recentCards"] = cards
    note = f"\n\n{VIEWER_NOTE}" if role == "viewer" else ""
    return f"{base}{note}\n\nContext (JSON):\n{json.dumps(context, ensure_ascii=False)}"


def stream(svc: AgentDeps, turn: Turn) -> AsyncIterator[bytes]:
    """Start the turn in the background; the returned iterator is the body."""
    emit = _Emitter()
    svc.background.spawn(_run(svc, turn, emit), name=f"agent-chat-{turn.message_id}")

    async def body() -> AsyncIterator[bytes]:
        while True:
            item = await emit.queue.get()
            if item is None:
                return
            yield item

    return body()


async def _run(svc: AgentDeps, turn: Turn, emit: _Emitter) -> None:
    base_parts: list[dict] = []
    with svc.telemetry.span("wayline.agent.turn", **{
            "wayline.trip_id": turn.trip_id, "wayline.turn_id": turn.turn_id,
            "wayline.message_id": turn.message_id, "wayline.continuation": turn.continuing}):
        try:
            if turn.continuing:
                base_parts = await timeline.stored_parts(svc, turn.trip_id, turn.message_id) or []
            emit("start", messageId=turn.message_id)
            if turn.street_view is not None:
                reason = await _street_view(svc, turn, emit)
            else:
                if turn.responses:
                    await _settle_approvals(svc, turn, emit, base_parts)
                if turn.responses and all(r.error is not None for r in turn.responses):
                    reason = "stop"  # only refused approvals: nothing new for the model, no model call
                else:
                    reason = await _loop(svc, turn, emit)
            emit("finish", finishReason=reason)
        except Exception as exc:  # never leave the client hanging; never leak internals
            log.exception("agent chat turn %s failed", turn.turn_id)
            emit("error", errorText=exc.message if isinstance(exc, AppError) else "The agent failed. Please try again.")
            emit("finish", finishReason="error")
        finally:
            # Stored before [DONE]: a client that continues (or reads the history)
            # right after the stream ends finds the message.
            parts = base_parts + emit.parts
            if parts:
                try:
                    await asyncio.shield(timeline.upsert_assistant(svc, turn.trip_id, turn.message_id, parts,
                                                                   turn_id=turn.turn_id))
                except Exception:
                    log.exception("agent chat turn %s: could not persist the assistant message", turn.turn_id)
            emit.queue.put_nowait(DONE)
            emit.queue.put_nowait(None)


async def _street_view(svc: AgentDeps, turn: Turn, emit: _Emitter) -> str:
    """An explicit street-view request: the application's answer, no model call."""
    assert turn.street_view is not None   # the turn is a street-view request
    parts = await grounding.answer(svc, turn.trip_id, turn.street_view)
    emit("start-step")
    for part in parts:
        if part["type"] == "text":
            _say(emit, f"txt_{turn.message_id}_sv", part["text"])
            continue
        emit(part["type"], id=part["id"], data=part["data"])
        emit.parts.append(part)
    emit("finish-step")
    return "stop"


async def _settle_approvals(svc: AgentDeps, turn: Turn, emit: _Emitter, base_parts: list[dict]) -> None:
    approved = [r for r in turn.responses if r.error is None and r.approved]
    outcomes, trip_bytes = await apply_batch(svc, turn.trip_id, turn.user["id"],
                                             [(r.tool_name, r.input) for r in approved])
    await approvals.settle(svc, [r.approval_id for r, o in zip(approved, outcomes) if o.ok], "applied")
    await approvals.settle(svc, [r.approval_id for r, o in zip(approved, outcomes) if not o.ok], "failed")
    by_call = {r.tool_call_id: o for r, o in zip(approved, outcomes)}
    trip_json = json.loads(trip_bytes) if trip_bytes else None
    emit("start-step")
    for r in turn.responses:
        stored = next((p for p in base_parts if p.get("toolCallId") == r.tool_call_id), None)
        update: dict[str, Any]
        if r.error is not None:
            emit("tool-output-error", toolCallId=r.tool_call_id, errorText=r.error)
            result: Any = {"error": r.error}
            update = {"state": "output-error", "errorText": r.error}
        elif not r.approved:
            emit("tool-output-denied", toolCallId=r.tool_call_id)
            result = {"denied": True, "note": "A member denied this change; nothing was changed."}
            update = {"state": "output-denied", "approval": {"id": (stored or {}).get("approval", {}).get("id"),
                                                              "approved": False, "reason": r.reason}}
        elif by_call[r.tool_call_id].ok:
            output = {"ok": True, "summary": by_call[r.tool_call_id].summary, "trip": trip_json}
            emit("tool-output-available", toolCallId=r.tool_call_id, output=output)
            result = compact_output(output)
            update = {"state": "output-available", "output": result}
        else:
            error = by_call[r.tool_call_id].error
            emit("tool-output-error", toolCallId=r.tool_call_id, errorText=error)
            result, update = {"error": error}, {"state": "output-error", "errorText": error}
        if r.error is not None:
            continue  # a refused (forged or replayed) part never rewrites history or reaches the model
        if stored is not None:
            stored.update(update)
        turn.input += [function_call(r.tool_call_id, r.tool_name, r.input), function_output(r.tool_call_id, result)]
    emit("finish-step")


async def _loop(svc: AgentDeps, turn: Turn, emit: _Emitter) -> str:
    trip = await svc.trips.trip(turn.trip_id)
    can_write = turn.role != "viewer"
    specs = read_tool_specs() + [card_tool_spec()] + (tools.write_tool_specs() if can_write else [])
    offered = await recent_cards(svc, trip)
    cards = TurnCards(trip, offered)
    instructions = await instructions_for(svc, trip, turn.user, turn.role, CHAT_INSTRUCTIONS, offered,
                                          days=turn_focus(trip, turn))
    working = trip.edit()  # proposed writes of this turn are checked in order on one copy
    unchanged_card = False
    for step in range(svc.settings.ai_max_tool_steps):
        emit("start-step")
        calls, reason = await _model_round(svc, turn, emit, instructions, specs, step)
        if reason is not None:
            emit("finish-step")
            return reason
        waiting = more = False
        for call in calls:
            name = call.name
            if name == SHOW_CARD:
                # No tool chunks: the card itself is the message's data-spec part.
                part, output = cards.show(call.arguments)
                if part is not None:
                    emit("data-spec", id=part["id"], data=part["data"])
                    emit.parts.append(part)
                turn.input += [call.as_input_item(), function_output(call.call_id, output)]
                unchanged_card |= bool(output.get("unchanged"))
                # A card that was drawn whole needs no answer; a refused or trimmed one is
                # reported back so the model can fix it.
                more |= not output.get("shown") or bool(output.get("dropped"))
            elif name in AGENT_READ_TOOLS:
                emit("tool-input-start", toolCallId=call.call_id, toolName=name)
                emit("tool-input-available", toolCallId=call.call_id, toolName=name, input=_loads(call.arguments))
                result = await run_read_tool(ToolContext(svc, trip, turn.own_hosts), name, call.arguments)
                if result.error:
                    emit("tool-output-error", toolCallId=call.call_id, errorText=result.error)
                else:
                    emit("tool-output-available", toolCallId=call.call_id, output=result.output)
                emit.parts.append({"type": f"tool-{name}", "toolCallId": call.call_id, "input": _loads(call.arguments),
                                   **({"state": "output-error", "errorText": result.error} if result.error else
                                      {"state": "output-available", "output": _storable(result.output)})})
                # A tool that bounds its own answer (readDay: a day in full) is not cut to 4,000 here.
                turn.input += [call.as_input_item(),
                               function_output(call.call_id, result.for_model(), result.limit or OUTPUT_CHARS),
                               *result.model_items]
                more = True
            elif can_write and tools.is_write_tool(name):
                waiting |= await _propose_write(svc, turn, emit, working, call)
                more = True
            else:
                emit("tool-input-start", toolCallId=call.call_id, toolName=name)
                emit("tool-input-error", toolCallId=call.call_id, toolName=name, input=_loads(call.arguments),
                     errorText=f"There is no tool named {name}.")
                turn.input += [call.as_input_item(), function_output(call.call_id, {"error": f"No tool {name}"})]
                more = True
        if not more and unchanged_card and not any(p["type"] in ("text", "data-spec") for p in emit.parts):
            _say(emit, f"txt_{turn.message_id}_{step}_same", UNCHANGED_CARD)   # never an empty answer
        emit("finish-step")
        if waiting:
            return "tool-calls"
        if not more:
            return "stop"
    return "other"  # the step limit: the answer so far stands


def turn_focus(trip: Trip, turn: Turn) -> list[str]:
    """The days a turn is about: those the member's words name, the day
    their page shows, and, after approvals, the days those writes named."""
    return [*focus.mentioned(trip, turn.focus_text), *([turn.day_in_view] if turn.day_in_view else []),
            *focus.named(trip, [r.input for r in turn.responses if r.error is None])]


def _say(emit: _Emitter, text_id: str, text: str) -> None:
    """A sentence of the application's own in the answer (streamed and stored)."""
    emit("text-start", id=text_id)
    emit("text-delta", id=text_id, delta=text)
    emit("text-end", id=text_id)
    emit.parts.append({"type": "text", "text": text})


async def _propose_write(svc: AgentDeps, turn: Turn, emit: _Emitter, working: Trip, call) -> bool:
    """Validate a write call against the turn's working copy; ask for approval.
    Returns True when an approval was requested."""
    name = call.name
    emit("tool-input-start", toolCallId=call.call_id, toolName=name)
    try:
        args = tools.parse_arguments(call.arguments, name)
        validated = validate_args(name, args)
        # The deployment's rules (the days quota, the page's origin for links), as the write checks them.
        TRIP_OPS[name].apply(working, validated, OpContext(actor_id=turn.user["id"], now="", rules=svc.trips.op_rules))
        shown = validated.model_dump(mode="json", exclude_unset=True)
    except (ValueError, AppError) as exc:
        error = exc.message if isinstance(exc, AppError) else "The arguments are not a JSON object."
        emit("tool-input-error", toolCallId=call.call_id, toolName=name, input=_loads(call.arguments), errorText=error)
        turn.input += [call.as_input_item(), function_output(call.call_id, {"error": error})]
        return False
    approval = await approvals.issue(svc, turn.trip_id, turn.message_id, call.call_id, name, shown, turn.user["id"])
    emit("tool-input-available", toolCallId=call.call_id, toolName=name, input=shown)
    emit("tool-approval-request", approvalId=approval, toolCallId=call.call_id)
    emit.parts.append({"type": f"tool-{name}", "toolCallId": call.call_id, "state": "approval-requested",
                       "input": shown, "approval": {"id": approval}})
    return True


async def _model_round(svc: AgentDeps, turn: Turn, emit: _Emitter, instructions: str, specs: list[dict],
                       step: int) -> tuple[list, str | None]:
    """One streamed model round. Returns the function calls, and a finish
    reason when the turn must end now (error, cut off)."""
    text_id, text, calls, reason = None, [], [], None
    reasoning = _Reasoning(emit, f"rsn_{turn.message_id}_{step}")
    ai = require_ai(svc.ai)
    try:
        async with aclosing(ai.stream(feature="agent_chat", user_id=turn.user["id"], trip_id=turn.trip_id,
                                      instructions=instructions, input=turn.input, tools=specs,
                                      max_output_tokens=CHAT_MAX_OUTPUT_TOKENS, turn_id=turn.turn_id,
                                      reasoning=True)) as events:
            async for event in events:
                if event.type == "text_delta":
                    if text_id is None:
                        text_id = f"txt_{turn.message_id}_{step}_{len(emit.parts)}"
                        emit("text-start", id=text_id)
                    emit("text-delta", id=text_id, delta=event.delta)
                    text.append(event.delta)
                elif event.type in ("reasoning_start", "reasoning_delta", "reasoning_end"):
                    reasoning.on(event)
                elif event.type == "function_call":
                    calls.append(event)
                elif event.type == "completed":
                    problem = unusable_round(event)
                    if problem is not None:
                        # The page shows error chunks, not finish reasons: without
                        # this a refusal or an empty round is a reply with no words.
                        emit("error", errorText=OUTPUT_MESSAGES[problem])
                        reason = UNUSABLE_FINISH[problem]
                elif event.type == "error":
                    emit("error", errorText=event.message)
                    reason = "error"
    except AppError as exc:  # usage limit or busy: refused before the provider was called
        # The protocol's error chunk carries text only (the AI SDK's schema is
        # strict), so the refusal's data (when AI is back: `resetsAt`) goes just
        # before it as a transient data chunk, kept in no message.
        emit("data-refusal", data=exc.to_json()["error"], transient=True)
        emit("error", errorText=exc.message)
        reason = "error"
    reasoning.close_open()
    if text_id is not None:
        emit("text-end", id=text_id)
        emit.parts.append({"type": "text", "text": "".join(text)})
        turn.input.append({"role": "assistant", "content": "".join(text)})
    return calls, reason


class _Reasoning:
    """Reasoning summaries of one round as `reasoning-start/-delta/-end`
    chunks, each kept as a `{type: "reasoning", text}` part (never given
    back to the model: transcript.py replays text and tool parts only)."""

    def __init__(self, emit: _Emitter, prefix: str) -> None:
        self.emit, self.prefix = emit, prefix
        self.open: dict[str, tuple[str, list[str]]] = {}   # provider id -> (our chunk id, text so far)
        self.count = 0

    def on(self, event) -> None:
        if event.type == "reasoning_start" and event.id not in self.open:
            self.count += 1
            self.open[event.id] = (f"{self.prefix}_{self.count}", [])
            self.emit("reasoning-start", id=self.open[event.id][0])
        elif event.type == "reasoning_delta" and event.id in self.open:
            self.open[event.id][1].append(event.delta)
            self.emit("reasoning-delta", id=self.open[event.id][0], delta=event.delta)
        elif event.type == "reasoning_end" and event.id in self.open:
            self._end(event.id, event.text)

    def _end(self, provider_id: str, text: str | None = None) -> None:
        chunk_id, pieces = self.open.pop(provider_id)
        self.emit("reasoning-end", id=chunk_id)
        text = text or "".join(pieces)
        if text.strip():
            self.emit.parts.append({"type": "reasoning", "text": text})

    def close_open(self) -> None:
        """A round that ended mid-summary (an error) still closes what it opened."""
        for provider_id in list(self.open):
            self._end(provider_id)


STORED_OUTPUT_CHARS = 8000


def _storable(output: Any) -> Any:
    """Read results as kept in the shared timeline: bounded (history is read often)."""
    if len(json.dumps(output, ensure_ascii=False)) <= STORED_OUTPUT_CHARS:
        return output
    return {"truncated": True, "note": "This result was too large to keep in the timeline."}


def _loads(raw: str) -> Any:
    try:
        return json.loads(raw or "{}")
    except ValueError:
        return {"raw": raw[:500]}
