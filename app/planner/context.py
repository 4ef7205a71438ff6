"""One day as the TripDto shows it: the cached aggregate, the shown legs and
the day's places, plus the checks every planner feature starts with."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Iterable

from ..errors import NotFound, Unavailable
from ..legs import Leg

from ..review import ReviewResult, day_fingerprint, light_copy, review_day
from ..services import Services
from ..trips.model import Day, Trip
from ..trips.ops import TRIP_OPS, OpContext
from ..trips.service import validate_args


@dataclass
class DayContext:
    """One day as the TripDto shows it. `trip` is the cached aggregate: read only."""

    trip: Trip
    day: Day
    legs: list[Leg]
    places: dict[str, dict] | None   # food stops' Google JSON for the hours rule (None: no Google)

    @property
    def date(self) -> str:
        return self.trip.day_date(self.day)

    def review(self) -> ReviewResult:
        return review_day(self.trip, self.day, self.legs, self.trip.prefs, self.places)

    def fingerprint(self) -> str:
        return day_fingerprint(self.trip, self.day)


async def load_day(svc: Services, trip_id: str, day_id: str) -> DayContext:
    """The day with its shown legs and its restaurants' hours. Membership is
    the caller's to check first."""
    entry = await svc.trip_cache.entry(trip_id)
    day = entry.trip.day(day_id)
    places = await food_places(svc, day.stops)
    return DayContext(entry.trip, day, list(entry.legs.get(day.id, [])), places)


async def food_places(svc: Services, stops: Iterable) -> dict[str, dict] | None:
    """The places provider's JSON for each food stop's place (cached); a place
    it cannot answer for is left out, so its hours stay unknown."""
    if svc.places is None:
        return None
    ids = sorted({s.place_id for s in stops if s.kind == "food" and s.place_id})
    answers = await asyncio.gather(*(svc.places.place(pid) for pid in ids), return_exceptions=True)
    places = {}
    for pid, answer in zip(ids, answers):
        if isinstance(answer, (Unavailable, NotFound)):
            continue
        if isinstance(answer, BaseException):
            raise answer
        places[pid] = answer["raw"]
    return places


def require_ai(svc: Services):
    if svc.ai is None:
        raise Unavailable("AI features are off: this server has no OpenAI API key (OPENAI_API_KEY). "
                          "Everything else works.", code="ai_unavailable")
    return svc.ai


def simulate(trip: Trip, ops: list[tuple[str, dict]], day_ids: Iterable[str]) -> Trip:
    """The trip after `ops`, on a copy (the same apply functions apply_ops runs)."""
    out = light_copy(trip, day_ids)
    ctx = OpContext(actor_id="planner", now="")
    for name, args in ops:
        TRIP_OPS[name].apply(out, validate_args(name, args), ctx)
    return out


def new_refs(before: Day, after: Day) -> dict[str, str]:
    """Stops a draft would add get stable refs (new-1, new-2, ...) in day order."""
    old = {s.id for s in before.stops}
    added = [s.id for s in after.stops if s.id not in old]
    return {sid: f"new-{k}" for k, sid in enumerate(added, 1)}
