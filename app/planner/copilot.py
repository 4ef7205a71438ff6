"""The copilot: answers a question about one day and recommends among the
fixes review computed (by id). It cannot change the plan.

The model sees the day's verified facts (at most 40 stops, notes cut to 300
characters, computed times, legs, review findings with their fix ids) and
answers `copilot_answer {answer, recommendedFixIds}`; the schema it is sent
lists the fix ids review computed as an `enum` (an always-empty list when
there are none). An answer that still names an id review did not compute
(a provider without strict decoding) is rejected as a whole, never trimmed
into something the model did not say (product.md, principle 1): the member
gets a plain 502, the usage row is failed and nothing is cached.

The answer is judged as the member will see it: key-shaped text redacted
(`AI.redact`), then refused when it has nothing to read (zero-width
characters count as nothing) or is longer than a history turn may be.

Answers are cached in SQLite by a hash of (the day's ids, facts, question,
earlier turns): the same question about the same day costs no model call and
no usage row; another trip's day with the same facts is another day.
"""

from __future__ import annotations

import hashlib
import json
import logging
import unicodedata
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..ai_schema import with_choices
from ..ai import OUTPUT_MESSAGES, AIOutputError, require_ai
from ..db import Tx
from .deps import PlannerDeps
from ..ids import utcnow
from ..legs import by_pair
from ..review.facts import DayContext, full_review
from ..review.findings import ReviewResult
from ..trips.schedule import clock_label, day_schedule

log = logging.getLogger("wayline.copilot")

MAX_QUESTION = 500
# An answer goes back as a turn of the next question's history: one longer than a
# turn may be would make every follow-up a 422.
MAX_ANSWER = 4000
MAX_TURNS = 4
MAX_STOPS = 40
NOTE_CHARS = 300
COPILOT_MAX_OUTPUT_TOKENS = 1500
CACHE_ROWS_PER_DAY = 50

INSTRUCTIONS = """You are Wayline's copilot for one day of a trip. Answer the traveller's question in a few plain
sentences, using only the facts given (verified by the server: stops, computed times, travel legs, review findings).
You cannot change the plan. When a computed fix would help, recommend it by putting its id in recommendedFixIds;
use only fix ids that appear in the findings, and [] when none applies. Never invent times, places or prices.
Never claim a place meets a dietary need or an allergy: say to check with the restaurant."""


def has_words(text: str) -> bool:
    """Something to read: str.strip() keeps zero-width spaces and joiners (Cf),
    so an answer of nothing else showed as a blank reply."""
    return any(not ch.isspace() and unicodedata.category(ch) not in ("Cf", "Cc") for ch in text)


def _with_words(text: str) -> str:
    # The pattern's \S (and its "must not be blank") lets zero-width characters through.
    if not has_words(text):
        raise ValueError("must not be blank")
    return text


class Turn(BaseModel):
    """An earlier question (held to a question's length: the history is not a
    way around it) or answer, each with words in it."""

    model_config = ConfigDict(extra="forbid")
    role: Literal["user", "assistant"]
    text: str = Field(min_length=1, max_length=MAX_ANSWER, pattern=r"\S")

    _words = field_validator("text")(_with_words)

    @model_validator(mode="after")
    def _question_length(self) -> Turn:
        if self.role == "user" and len(self.text) > MAX_QUESTION:
            raise ValueError(f"an earlier question is at most {MAX_QUESTION} characters, as a question is")
        return self


class CopilotQuestion(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1, max_length=MAX_QUESTION, pattern=r"\S")
    history: list[Turn] = Field(default_factory=list, max_length=MAX_TURNS)

    _words = field_validator("question")(_with_words)


class CopilotAnswer(BaseModel):
    """The `copilot_answer` structured output."""

    model_config = ConfigDict(extra="forbid")
    answer: str
    recommendedFixIds: list[str]


def _note(text: str | None) -> str | None:
    text = (text or "").strip()
    if not text:
        return None
    return text if len(text) <= NOTE_CHARS else text[:NOTE_CHARS] + "…"


def day_facts(ctx: DayContext, review: ReviewResult) -> dict:
    """What the model may rely on; also the cache key's content."""
    slots = day_schedule(ctx.day, by_pair(ctx.legs))
    stops = []
    for stop, slot in list(zip(ctx.day.stops, slots))[:MAX_STOPS]:
        stops.append({k: v for k, v in {
            "id": stop.id, "name": stop.name, "kind": stop.kind, "setTime": stop.set_time,
            "start": clock_label(slot.start), "end": clock_label(slot.end), "startMinutes": slot.start,
            "endMinutes": slot.end, "durationMin": stop.duration_min,
            "meal": stop.meal, "note": _note(stop.note)}.items() if v is not None})
    return {
        "trip": ctx.trip.title, "date": ctx.date, "dayTitle": ctx.day.title or None, "dayNote": _note(ctx.day.note),
        "dayStart": ctx.day.start_time or "09:00", "stops": stops,
        "omittedStops": max(0, len(ctx.day.stops) - MAX_STOPS),
        "legs": [leg.for_model() for leg in ctx.legs],
        "review": {"status": review.status, "findings": [
            {"id": f.id, "kind": f.kind, "severity": f.severity, "message": f.message, "stopIds": list(f.stop_ids),
             "fixes": [{"id": x.id, "label": x.label} for x in f.fixes]} for f in review.findings]},
        "sharedPreferences": ctx.trip.prefs.model_dump(),
    }


def cache_key(trip_id: str, day_id: str, facts: dict, ask: CopilotQuestion) -> str:
    # The day's ids too: an empty day of two trips of the same title and date has the
    # same facts, and another group's saved reply came back as "Same question as before".
    payload = {"tripId": trip_id, "dayId": day_id, "facts": facts, "question": ask.question,
               "history": [t.model_dump() for t in ask.history]}
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


async def ask_copilot(svc: PlannerDeps, ctx: DayContext, user_id: str, ask: CopilotQuestion) -> dict:
    ai = require_ai(svc.ai)
    review = await full_review(svc, ctx)
    facts = day_facts(ctx, review)
    key = cache_key(ctx.trip.id, ctx.day.id, facts, ask)
    cached = await svc.db.fetchval("SELECT answer_json FROM copilot_cache WHERE key = ?", (key,))
    if cached is not None:
        return {**json.loads(cached), "cached": True}
    known = [fix.id for finding in review.findings for fix in finding.fixes]
    messages = [{"role": "user", "content": "Facts about the day (JSON, verified by Wayline):\n"
                                            + json.dumps(facts, ensure_ascii=False, separators=(",", ":"))}]
    messages += [{"role": t.role, "content": t.text} for t in ask.history]
    messages.append({"role": "user", "content": ask.question})

    def usable(reply: CopilotAnswer) -> CopilotAnswer:
        # Judged as the member will see it: redacting can lengthen it past a turn.
        reply = reply.model_copy(update={"answer": ai.redact(reply.answer)})
        if not has_words(reply.answer):
            raise AIOutputError(OUTPUT_MESSAGES["empty"], reason="empty")
        if len(reply.answer) > MAX_ANSWER:
            raise AIOutputError(OUTPUT_MESSAGES["too_long"], reason="too_long")
        unknown = [fix_id for fix_id in reply.recommendedFixIds if fix_id not in known]
        if unknown:
            # The count only: the ids are the model's text.
            log.warning("copilot: rejected an answer naming %d fix id(s) that review did not compute", len(unknown))
            raise AIOutputError(OUTPUT_MESSAGES["unknown_ids"], reason="unknown_ids")
        return reply

    reply = await ai.structured(feature="copilot", user_id=user_id, trip_id=ctx.trip.id, name="copilot_answer",
                                    schema=with_choices(CopilotAnswer, {"recommendedFixIds[]": known}),
                                    instructions=INSTRUCTIONS, input=messages,
                                    max_output_tokens=COPILOT_MAX_OUTPUT_TOKENS, validate=usable)
    answer = {"answer": reply.answer, "recommendedFixIds": list(dict.fromkeys(reply.recommendedFixIds))}

    def keep(tx: Tx) -> None:
        tx.execute(
            "INSERT OR REPLACE INTO copilot_cache (key, trip_id, day_id, answer_json, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (key, ctx.trip.id, ctx.day.id, json.dumps(answer, ensure_ascii=False), utcnow()))
        # Keep the newest answers per day; older facts will not come back often.
        tx.execute(
            "DELETE FROM copilot_cache WHERE trip_id = ? AND day_id = ? AND key NOT IN (SELECT key FROM copilot_cache "
            "WHERE trip_id = ? AND day_id = ? ORDER BY created_at DESC LIMIT ?)",
            (ctx.trip.id, ctx.day.id, ctx.trip.id, ctx.day.id, CACHE_ROWS_PER_DAY))

    await svc.db.write(keep)
    return {**answer, "cached": False}
