"""Optimize my day: verified facts -> the model's ids -> exact edits -> a preview.

1. Facts: the day's stops (at most 25), the legs the TripDto shows, and up to
   12 Google places near the day (one Nearby request per type, at most four
   types from the trip's interests and the person's cuisines), none that
   cannot open that day (`open_that_day`).
2. The model (`plan_day`) returns ids only: an order for the stops without a
   set time and up to four candidate places, each after an existing stop.
3. The schema sent lists the ids that exist (`plan_schema`: `enum`s built from
   the facts), and `check_plan` validates those ids with pydantic against the
   facts all the same; any id it was not given, a pinned stop moved, a free stop missing or doubled, or more
   than four additions rejects the whole answer (502 `plan_rejected`). Nothing
   is repaired.
4. `build_draft` makes exact registry ops (move_stop / insert_stop): pinned
   stops keep their index and time, free stops fill the other slots in the
   model's order; added stops start when the previous stop ends plus the leg
   (the same legs the TripDto computes) and last the pace's visit length, or
   a meal's length for a restaurant, which must then fit its opening hours
   or the plan is rejected.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo, model_validator
from pydantic_core import PydanticCustomError

from .. import legs as legs_mod
from ..ai_schema import with_choices
from ..errors import AppError, Conflict, Invalid, Unavailable
from ..hours.rules import DAY, check_at, hours_on
from ..meals import FOOD_NOTE, MEAL_MINUTES, MEALS, meal_for
from ..legs import by_pair, haversine_m
from ..providers.maps import in_country
from ..ai import require_ai
from .deps import PlannerDeps
from ..review.facts import DayContext, trip_country
from ..trips.ops import simulate
from .drafts import new_refs, preview_draft, store_draft
from ..review.ordering import day_stops, order_edits
from .shortest import SAVING_WORTH_MIN, solve, summary_of
from .shortest_order import EXACT_LIMIT, free_count
from .candidates import centre, cuisine_types, interest_types, is_food, score, usable
from ..preferences import PACE_STOPS, PACE_VISIT_MIN, EffectivePreferences
from ..trips.model import Day
from ..trips.schedule import clock_label, day_schedule

PLAN_MAX_STOPS = 25
PLAN_MAX_CANDIDATES = 12
PLAN_MAX_TYPES = 4
PLAN_MAX_ADDITIONS = 4
PLAN_MAX_OUTPUT_TOKENS = 2500
DEFAULT_PLAN_TYPES = ["tourist_attraction", "restaurant"]

PLAN_INSTRUCTIONS = """You help plan one day of a trip in Wayline. \
The facts are verified by the server; you only choose ids.
Return JSON with:
- order: every id in freeStopIds exactly once, in the order to visit them. Stops with a set time are pinned:
  never list them; they keep their place and their time.
- additions: at most 4 places from candidates (by placeId), each with afterStopId = the id of an existing stop
  it should follow. Add a place only when it suits the pace, interests, cuisines and budget; [] is fine.
- summary: two or three plain sentences for the traveller about what changed and why.
The server computes every time and travel leg. A restaurant must be open for the whole meal on the date
(a candidate's openOnDate lists its opening periods; the server checks, and refuses a plan that breaks this).
Prefer orders without backtracking or long transfers.
Never claim a place meets a dietary need or an allergy."""


class PlanAddition(BaseModel):
    model_config = ConfigDict(extra="forbid")
    placeId: str
    afterStopId: str


class PlanDay(BaseModel):
    """The `plan_day` structured output: ids only."""

    model_config = ConfigDict(extra="forbid")
    order: list[str]
    additions: list[PlanAddition]
    summary: str


class PlanRejected(AppError):
    """The model answered, but not with something Wayline may apply."""

    status, code = 502, "plan_rejected"


@dataclass(frozen=True)
class PlanFacts:
    free_ids: tuple[str, ...]        # stops without a set time, in day order
    pinned_ids: frozenset[str]       # stops with a set time
    names: dict                      # every stop id -> name
    candidates: dict                 # placeId -> normalized Google place


def _refuse(reason: str) -> PydanticCustomError:
    return PydanticCustomError("plan_rejected", "{reason}", {"reason": reason})


class CheckedPlan(PlanDay):
    """A plan_day answer validated against the ids the server gave (context)."""

    @model_validator(mode="after")
    def _against_facts(self, info: ValidationInfo) -> CheckedPlan:
        facts = info.context
        if not isinstance(facts, PlanFacts):
            raise _refuse("there were no facts to check it against")
        q = lambda sid: f"“{facts.names[sid]}”"  # noqa: E731
        for sid in self.order:
            if sid in facts.pinned_ids:
                raise _refuse(f"it moved {q(sid)}, which has a set time")
            if sid not in facts.names:
                raise _refuse("it named a stop that is not on this day")
        doubled = next((sid for sid in self.order if self.order.count(sid) > 1), None)
        if doubled is not None:
            raise _refuse(f"it listed {q(doubled)} twice")
        missing = next((sid for sid in facts.free_ids if sid not in self.order), None)
        if missing is not None:
            raise _refuse(f"it left out {q(missing)}")
        if len(self.additions) > PLAN_MAX_ADDITIONS:
            raise _refuse(f"it added {len(self.additions)} places; at most {PLAN_MAX_ADDITIONS} are allowed")
        seen: set[str] = set()
        for add in self.additions:
            if add.placeId not in facts.candidates:
                raise _refuse("it named a place Wayline did not offer")
            if add.placeId in seen:
                raise _refuse(f"it added “{facts.candidates[add.placeId]['name']}” twice")
            seen.add(add.placeId)
            if add.afterStopId not in facts.names:
                raise _refuse("it put a place after a stop that is not on this day")
        return self


def plan_schema(facts: PlanFacts) -> type[PlanDay]:
    """`plan_day` for this call: its schema lists the ids that exist (the free
    stops, the candidates, the day's stops). CheckedPlan still refuses any
    other id: no plan can be built from one."""
    return with_choices(PlanDay, {"order[]": facts.free_ids, "additions[].placeId": list(facts.candidates),
                                  "additions[].afterStopId": list(facts.names)})


def check_plan(plan: PlanDay, facts: PlanFacts) -> CheckedPlan:
    try:
        return CheckedPlan.model_validate(plan.model_dump(), context=facts)
    except ValidationError as exc:
        raise PlanRejected(f"The AI plan was refused: {exc.errors()[0]['msg']}. Nothing was changed; "
                           f"please try again.") from None


# -- facts ---------------------------------------------------------------------------


def plan_types(prefs: EffectivePreferences) -> list[str]:
    """At most four Places types: the trip's interests and the person's
    cuisines, with a sights or restaurants default standing in for either
    when it is empty, so the model always sees both kinds."""
    sights = interest_types(prefs.trip.interests) or DEFAULT_PLAN_TYPES[:1]
    food = cuisine_types(prefs.user.cuisines) or DEFAULT_PLAN_TYPES[1:]
    mixed = [t for pair in zip(sights, food) for t in pair] + sights[len(food):] + food[len(sights):]
    return list(dict.fromkeys(mixed))[:PLAN_MAX_TYPES]


async def collect_candidates(svc: PlannerDeps, ctx: DayContext, prefs: EffectivePreferences) -> list[dict]:
    """Up to 12 usable Google places near the day, taken in turn from each
    type's ranking so every chosen type is represented. Empty without Google."""
    anchor = centre(ctx.day.stops, ctx.trip)
    if anchor is None:
        return []
    spread = max((haversine_m(anchor[0], anchor[1], s.lat, s.lng) for s in ctx.day.stops
                  if s.lat is not None and s.lng is not None),
                 default=0.0)
    radius = min(5000.0, max(1500.0, spread + 500))
    types = plan_types(prefs)
    answers = await asyncio.gather(*(svc.places.search_nearby(anchor[0], anchor[1], radius_m=radius, types=[t])
                                     for t in types), return_exceptions=True)
    rankings = []
    for answer in answers:
        if isinstance(answer, Unavailable):
            continue  # one type's search failing leaves the others
        if isinstance(answer, BaseException):
            raise answer
        found = [p for p in ({**p, "raw": in_country(p["raw"], trip_country(ctx.trip))} for p in answer
                             if usable(p, ctx.day)) if open_that_day(p, ctx.date)]
        rankings.append(sorted(found, key=lambda p: (-score(p, anchor, prefs, cuisine=is_food(p)), p["placeId"])))
    chosen: dict[str, dict] = {}
    for rank in range(20):
        for ranking in rankings:
            if rank < len(ranking) and len(chosen) < PLAN_MAX_CANDIDATES:
                chosen.setdefault(ranking[rank]["placeId"], ranking[rank])
    return list(chosen.values())


def open_that_day(place: dict, date: str) -> bool:
    """Whether a place could take a stop on the date at all: the model sees
    no hours, so a place that cannot is never offered to it (a restaurant it
    picked would only have the whole plan refused, the call spent). A
    restaurant needs hours that open that day (no hours are never open); any
    place closed all day is out; a sight with no hours known stays (unknown
    is not closed)."""
    food = is_food(place)
    hours = hours_on(place["raw"], date, meal=food)
    return not food if hours is None else bool(hours.spans)


def open_periods(place: dict, date: str) -> list[str] | None:
    """The place's opening periods on the date as the model reads them
    ("12:00-15:00"; "00:30 (+1)" after midnight; a meal's by its kitchen),
    None when no hours are known: without them it could only guess when a
    restaurant may go, and a guess outside them has the plan refused."""
    hours = hours_on(place["raw"], date, meal=is_food(place))
    if hours is None:
        return None
    return [f"{clock_label(max(o, 0))}-{clock_label(min(c, 2 * DAY))}" for o, c in hours.spans]


def plan_facts(ctx: DayContext, candidates: list[dict]) -> PlanFacts:
    stops = ctx.day.stops
    return PlanFacts(tuple(s.id for s in stops if not s.set_time), frozenset(s.id for s in stops if s.set_time),
                     {s.id: s.name for s in stops}, {p["placeId"]: p for p in candidates})


def model_input(ctx: DayContext, candidates: list[dict], prefs: EffectivePreferences) -> str:
    """The facts as the model reads them. Preferences come from for_model(),
    which carries only whether the person has allergies, never the text."""
    slots = day_schedule(ctx.day, by_pair(ctx.legs))
    pace = ctx.trip.prefs.pace

    def point(x):
        return None if x is None else round(x, 5)

    facts = {
        "date": ctx.date, "dayStart": ctx.day.start_time or "09:00", "pace": pace,
        "stopsPerDay": PACE_STOPS[pace], "visitMinutes": PACE_VISIT_MIN[pace],
        "stops": [{"id": s.id, "name": s.name, "kind": s.kind, "pinned": bool(s.set_time), "setTime": s.set_time,
                   "start": clock_label(slot.start), "end": clock_label(slot.end), "durationMin": s.duration_min,
                   "meal": s.meal, "lat": point(s.lat), "lng": point(s.lng)} for s, slot in zip(ctx.day.stops, slots)],
        "freeStopIds": [s.id for s in ctx.day.stops if not s.set_time],
        "legs": [leg.for_model() for leg in ctx.legs],
        "candidates": [{k: v for k, v in {
            "placeId": p["placeId"], "name": p["name"], "kind": "food" if is_food(p) else "sight",
            "types": (p.get("types") or [])[:4], "rating": p.get("rating"), "userRatingCount": p.get("userRatingCount"),
            "priceLevel": p.get("priceLevel"), "lat": point(p["lat"]), "lng": point(p["lng"]),
            "openOnDate": open_periods(p, ctx.date)}.items()
            if v is not None} for p in candidates],
        "preferences": prefs.for_model(),
    }
    return json.dumps(facts, ensure_ascii=False, separators=(",", ":"))


# -- the draft -------------------------------------------------------------------------


def plan_edits(day: Day, plan: PlanDay, candidates: dict) -> list[tuple[str, dict]]:
    """move_stop ops that put the free stops in the model's order around the
    pinned ones, then insert_stop ops for the additions (durations filled in
    by build_draft)."""
    free = iter(plan.order)
    edits = order_edits(day, [s.id if s.set_time else next(free) for s in day.stops])
    # Several places after one stop keep the model's order: insert the last first.
    for add in reversed(plan.additions):
        place = candidates[add.placeId]
        food = is_food(place)
        args = {"dayId": day.id, "afterStopId": add.afterStopId, "kind": "food" if food else "sight",
                "name": place["name"][:120], "placeId": place["placeId"], "lat": place["lat"], "lng": place["lng"],
                "durationMin": 60, "note": FOOD_NOTE if food else ""}
        if place.get("address"):
            args["address"] = place["address"][:300]
        edits.append(("insert_stop", args))
    return edits


def _pinned_in_place(before: Day, after: Day) -> bool:
    """Hard constraint: set-time stops keep their time and their place among the existing stops."""
    existing = {s.id for s in before.stops}
    kept = [s for s in after.stops if s.id in existing]
    return all((a.id == b.id and a.set_time == b.set_time) for a, b in zip(before.stops, kept) if b.set_time)


async def build_draft(svc: PlannerDeps, ctx: DayContext, plan: CheckedPlan, candidates: dict) -> dict:
    """Exact edits and the preview of what applying them will show."""
    edits = plan_edits(ctx.day, plan, candidates)
    by_place = {args["placeId"]: args for name, args in edits if name == "insert_stop"}
    pace = ctx.trip.prefs.pace
    for args in by_place.values():
        if args["kind"] != "food":
            args["durationMin"] = PACE_VISIT_MIN[pace]
    trip = simulate(ctx.trip, edits)
    day = trip.day(ctx.day.id)
    legs = await legs_mod.day_legs(svc.places, day.stops, trip.prefs)   # the legs the TripDto will show
    pairs = by_pair(legs)
    refs = new_refs(ctx.day, day)
    # A meal's length depends on when it starts, and a start only on what comes
    # before it: fix the added restaurants in day order.
    for stop in day.stops:
        if stop.id not in refs or stop.kind != "food":
            continue
        args = by_place[stop.place_id]
        slot = next(s for s in day_schedule(day, pairs) if s.stop_id == stop.id)
        args["meal"] = stop.meal = meal_for(slot.start)
        args["durationMin"] = stop.duration_min = MEAL_MINUTES[args["meal"]]
    if not _pinned_in_place(ctx.day, day):  # by construction never; checked because it is a hard rule
        raise PlanRejected("The plan would move a stop with a set time; nothing was changed.")
    slots = {s.stop_id: s for s in day_schedule(day, pairs)}
    for sid in refs:
        stop = next(s for s in day.stops if s.id == sid)
        if stop.kind != "food":
            continue
        raw = candidates[stop.place_id]["raw"]
        start = slots[sid].start
        if not check_at(raw, ctx.date, start, stop.duration_min, meal=True).fits:
            meal = MEALS[stop.meal].word if stop.meal in MEALS else "meal"
            raise PlanRejected(f"The AI plan was refused: it put “{stop.name}” at {clock_label(start)}, when it is "
                               f"not open for the whole {meal}. Nothing was changed; please try again.")
    return await preview_draft(svc, ctx, edits, plan.summary, candidate_places(candidates))


def candidate_places(candidates: dict) -> dict:
    return {c["placeId"]: c["raw"] for c in candidates.values()}


def check_day_size(day: Day) -> None:
    if not day.stops:
        # Nothing to order and nothing to add after (an addition follows a stop): a model call could only say so.
        raise Invalid("Optimize my day orders the day's stops and adds places after them: add a stop first.",
                      field="dayId")
    if len(day.stops) > PLAN_MAX_STOPS:
        raise Invalid(f"Optimize my day works on days of at most {PLAN_MAX_STOPS} stops; this one has "
                      f"{len(day.stops)}.", field="dayId")


async def optimize_day(svc: PlannerDeps, ctx: DayContext, user_id: str, prefs: EffectivePreferences) -> dict:
    """POST .../optimize: a stored draft {id, edits, preview, travel}, or a refusal.

    Order: AI configured (503), preferences saved once (409), day size (422),
    today's AI budget and the member's share (503/429, before any place
    search), Google candidates, then the gateway reserves BEFORE the model call
    (503/429 over a limit, provider not called). The answer is checked and
    drafted inside the call (`validate`), so a rejected answer is recorded as
    a failed call and nothing is stored."""
    ai = require_ai(svc.ai)
    if not prefs.saved:
        raise Conflict("Plan with AI needs your preferences once: save them (the defaults are fine) and try again.",
                       code="preferences")
    check_day_size(ctx.day)
    # The place searches below are billed (Google): not for a model call the limits already refuse.
    await ai.check_share(user_id, ctx.trip.id, "plan_day", everyone=True, max_output_tokens=PLAN_MAX_OUTPUT_TOKENS)
    candidates = await collect_candidates(svc, ctx, prefs)
    facts = plan_facts(ctx, candidates)

    checked: list[CheckedPlan] = []

    async def to_draft(plan: PlanDay) -> dict:
        checked.append(check_plan(plan, facts))
        return await build_draft(svc, ctx, checked[-1], facts.candidates)

    draft = await ai.structured(feature="plan_day", user_id=user_id, trip_id=ctx.trip.id, name="plan_day",
                                    schema=plan_schema(facts), instructions=PLAN_INSTRUCTIONS,
                                    input=[{"role": "user", "content": model_input(ctx, candidates, prefs)}],
                                    max_output_tokens=PLAN_MAX_OUTPUT_TOKENS, validate=to_draft)
    draft = await repaired(svc, ctx, checked[-1], facts.candidates, draft)
    shortest = await shortest_alternative(svc, ctx, draft, candidate_places(facts.candidates))
    if shortest is not None and shortest["preview"]["added"]:
        shortest = None   # never offered with a new finding
    draft["travel"]["optimalMin"] = shortest["travel"]["afterMin"] if shortest else None
    out = {"draft": {"id": await store_plan(svc, ctx, user_id, draft), **draft}}
    if shortest and draft["travel"]["afterMin"] - shortest["travel"]["afterMin"] >= SAVING_WORTH_MIN:
        out["shortestDraft"] = {"id": await store_plan(svc, ctx, user_id, shortest), **shortest}
    return out


async def repaired(svc: PlannerDeps, ctx: DayContext, plan: CheckedPlan, candidates: dict, draft: dict) -> dict:
    """The draft, or its repair when it would add a warning or a problem to
    the day (preview.added): the model's picks in the exact shortest order
    that fits every set time, hours and meal; else without the additions
    the new findings name, one at a time; else the picks in the day's own
    order (again without those that bring a finding); else no change. The
    summary says what was left out and why, and a place is only left out
    for a finding that leaving it out clears."""
    if not draft["preview"]["added"]:
        return draft
    reason = draft["preview"]["added"][0]["message"]
    alternative = await shortest_alternative(svc, ctx, draft, candidate_places(candidates))
    if alternative is not None and not alternative["preview"]["added"]:
        alternative["preview"]["summary"] = (f"{plan.summary} Wayline put the stops in another order, because in "
                                             f"the suggested one: {reason}")
        return alternative
    notes: list[str] = []
    plan, draft = await _leave_out(svc, ctx, plan, candidates, draft, notes)
    kept: dict | None = draft
    if draft["preview"]["added"]:
        added = draft["preview"]["added"][0]["message"]
        notes.append(f"Kept the day's order: the suggested one would bring this: {added}")
        plan = plan.model_copy(update={"order": [s.id for s in ctx.day.stops if not s.set_time]})
        try:
            kept = await build_draft(svc, ctx, plan, candidates)
        except PlanRejected:
            kept = None
        if kept is not None:
            plan, kept = await _leave_out(svc, ctx, plan, candidates, kept, notes)
    if kept is None or kept["preview"]["added"]:
        return await preview_draft(svc, ctx, [], "No part of this plan fits the day without a new problem, so "
                                                 "nothing changes.")
    kept["preview"]["summary"] = " ".join([plan.summary, *notes])
    return kept


async def _leave_out(svc: PlannerDeps, ctx: DayContext, plan: CheckedPlan, candidates: dict, draft: dict,
                     notes: list[str]) -> tuple[CheckedPlan, dict]:
    """Leaves the plan's added places out one at a time while the draft has a
    new finding, each noted with why: the place the first finding names, else
    the last one added, and only when leaving it out clears that finding
    (else the order brings it, not the place: the place stays)."""
    while draft["preview"]["added"] and plan.additions:
        first = draft["preview"]["added"][0]
        culprit = _culprit(draft, plan)
        fewer = plan.model_copy(update={"additions": [a for a in plan.additions if a.placeId != culprit]})
        try:
            smaller = await build_draft(svc, ctx, fewer, candidates)
        except PlanRejected:
            notes.append(f"Left out “{candidates[culprit]['name']}”: {first['message']}")
            plan = fewer
            continue   # a restaurant that no longer fits its hours goes next
        if _finding_key(first) in {_finding_key(f) for f in smaller["preview"]["added"]}:
            break
        notes.append(f"Left out “{candidates[culprit]['name']}”: {first['message']}")
        plan, draft = fewer, smaller
    return plan, draft


def _finding_key(finding: dict) -> tuple:
    return finding["kind"], tuple(finding["stopIds"])


def _culprit(draft: dict, plan: CheckedPlan) -> str:
    """The added place the first new finding names (else the last one added),
    among those the plan still adds."""
    adding = {a.placeId for a in plan.additions}
    places = {s["ref"]: s["placeId"] for s in draft["preview"]["stops"] if s["added"] and s["placeId"] in adding}
    for finding in draft["preview"]["added"]:
        named = [places[ref] for ref in finding["stopIds"] if ref in places]
        if named:
            return named[0]
    return plan.additions[-1].placeId


async def store_plan(svc: PlannerDeps, ctx: DayContext, user_id: str, draft: dict) -> str:
    return await store_draft(svc, ctx, user_id, "plan", draft["edits"],
                             {"preview": draft["preview"], "travel": draft["travel"]})


async def shortest_alternative(svc: PlannerDeps, ctx: DayContext, draft: dict, more_places: dict) -> dict | None:
    """The model's plan (its order and its additions) in the exact shortest
    order, as a draft of its own; None when no order fits, when an added
    place would have to come first (an addition is inserted after a stop), or
    when the day has more free stops than the exact search takes: past that
    the search is a long beam (about 100 ms at 23 free stops) that would
    double this request's time for an offer that is not sure to be the
    shortest; the day's own Shortest order still answers it."""
    edits = [(e["op"], e["args"]) for e in draft["edits"]]
    trip = simulate(ctx.trip, edits)
    day = trip.day(ctx.day.id)
    places = {**(ctx.places or {}), **more_places}
    if free_count(day_stops(day, ctx.date, places)) > EXACT_LIMIT:
        return None
    result, matrix = await solve(svc, ctx, day, places)
    if not result.feasible:
        return None
    existing = {s.id for s in ctx.day.stops}
    by_place = {args["placeId"]: args for name, args in edits if name == "insert_stop"}   # one per place
    added = {s.id: by_place[s.place_id] for s in day.stops if s.id not in existing}
    target = list(result.order)
    if not target or target[0] in added:
        return None
    moves = order_edits(ctx.day, [sid for sid in target if sid in existing])
    inserts, anchor = [], None
    for sid in target:
        if sid in existing:
            anchor = sid
        else:
            inserts.append(("insert_stop", {**added[sid], "afterStopId": anchor}))
    # Several places after one stop keep the target's order: insert the last first.
    return await preview_draft(svc, ctx, moves + inserts[::-1], summary_of(result, matrix), more_places)
