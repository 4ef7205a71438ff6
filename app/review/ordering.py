"""The day in another order: what Shortest order's exact search needs from a
day (its stops with their set times and the starts their hours and meals
allow), the move_stop edits that reach an order, and the fix search's use
of that search on estimated legs (`best_order`).

One definition for the Shortest order button (app/planner/shortest.py), for
Optimize's shortest alternative and for the review's "reorder the day" fix."""

from __future__ import annotations

from ..legs import estimate_leg
from ..planner.shortest_order import EXACT_LIMIT, DayStop, free_count, shortest_order
from ..preferences import TripPreferences
from ..trips.model import DAY_START, Day
from ..trips.schedule import to_minutes
from .issues import Json, Legs, PlaceBook, has_point
from .starts import start_ranges


def day_stops(day: Day, date: str, places: dict[str, Json] | PlaceBook | None) -> list[DayStop]:
    """The day as Shortest order's search reads it: set times pin, hours and
    meal windows bound the free stops, a hotel at either end stays there."""
    book = places if isinstance(places, PlaceBook) else PlaceBook(places)
    return [DayStop(s.id, s.duration_min, to_minutes(s.set_time) if s.set_time else None,
                    None if s.set_time else start_ranges(s, date, book), s.kind) for s in day.stops]


def order_edits(day: Day, target: list[str]) -> list[tuple[str, Json]]:
    """move_stop ops that turn the day's order into `target` (existing ids only)."""
    current = [s.id for s in day.stops]
    edits: list[tuple[str, Json]] = []
    for k, sid in enumerate(target):
        if current[k] != sid:
            edits.append(("move_stop", {"stopId": sid, "toDayId": day.id, "position": k}))
            current.remove(sid)
            current.insert(k, sid)
    return edits


def best_order(day: Day, date: str, known: Legs, prefs: TripPreferences, book: PlaceBook,
               loose: frozenset[str] = frozenset()) -> list[str] | None:
    """The order of the day with the least travel that fits every set time,
    opening period and meal window (but those of the `loose` stops, which do
    not fit anywhere now), on the legs the review times a day with (the
    shown ones, new pairs estimated); None when no order fits or the day has
    more free stops than the exact search takes."""
    stops = [s if s.id not in loose else DayStop(s.id, s.duration_min, s.set_start, None, s.kind)
             for s in day_stops(day, date, book)]
    if len(stops) < 2 or free_count(stops) > EXACT_LIMIT:
        return None
    travel: dict[tuple[str, str], int | None] = {}
    for a in day.stops:
        for b in day.stops:
            if a is b:
                continue
            if not (has_point(a) and has_point(b)):
                travel[(a.id, b.id)] = 0
                continue
            leg = known.get((a.id, b.id)) or estimate_leg(a, b, prefs)
            travel[(a.id, b.id)] = leg.duration_s
    try:
        result = shortest_order(stops, travel, to_minutes(day.start_time or DAY_START), explain=False)
    except ValueError:
        return None
    return list(result.order) if result.feasible else None
