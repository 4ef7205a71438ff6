"""The review's rules, in the order findings are listed, and `detect`, which
runs them all on one day. Here: a set time the previous stop plus travel
cannot reach (`unreachable`), a set time before the previous stop ends
(`overlap`), an avoided mode in a leg (`avoided_mode`), a walk over the
trip's limit (`long_walk`) and more stops than the pace holds (`pace`).
Elsewhere: clock_rules.py (`closed`, `meal_time`), weather_rule.py
(`weather`), path_rules.py (`duplicate`, `backtracking`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..preferences import MODE_BY, MODE_NAMES, PACE_STOPS, TripPreferences
from ..trips.model import Day, Trip
from ..trips.schedule import clock_label, day_schedule
from .clock_rules import closed, meal_time
from .issues import NOT_VISITS, DayFacts, Issue, Json, Legs, PlaceBook, quote as _q
from .path_rules import backtracking, duplicates
from .weather_rule import weather as weather_rule


def timing(facts: DayFacts) -> list[Issue]:
    day, slots, issues = facts.day, facts.slots, []
    for i in range(1, len(day.stops)):
        stop, prev, slot, before = day.stops[i], day.stops[i - 1], slots[i], slots[i - 1]
        if not stop.set_time or slot.start >= slot.earliest:
            continue
        late = slot.earliest - slot.start
        kind = "overlap" if slot.start < before.end else "unreachable"
        if facts.keys_only:
            message = ""
        elif kind == "overlap":
            message = (f"{_q(stop.name)} is set for {clock_label(slot.start)}, but {_q(prev.name)} before it runs "
                       f"until {clock_label(before.end)}.")
        else:
            message = (f"{_q(stop.name)} is set for {clock_label(slot.start)}, but after {_q(prev.name)} ends at "
                       f"{clock_label(before.end)} the {slot.travel_min}-min trip arrives at "
                       f"{clock_label(slot.earliest)}.")
        issues.append(Issue(kind, "problem", message, (prev.id, stop.id), subject=stop.id,
                            detail={"previous": prev.id, "late": late, "index": i}))
    return issues


def leg_rules(facts: DayFacts) -> list[Issue]:
    day, legs, prefs, issues = facts.day, facts.legs, facts.prefs, []
    names = {s.id: s.name for s in day.stops}
    for (a, b), leg in legs.items():
        pair = f"{_q(names[a])} to {_q(names[b])}"
        if leg.mode in prefs.avoidModes:
            issues.append(Issue("avoided_mode", "problem",
                                f"The trip avoids {MODE_NAMES[leg.mode]}, but the leg from {pair} is "
                                f"{MODE_BY[leg.mode]}.", (a, b),
                                subject=b, detail={"mode": leg.mode}))
        elif leg.mode == "walk" and leg.distance_m > prefs.longestWalkM:
            issues.append(Issue("long_walk", "warning",
                                f"The walk from {pair} is {leg.distance_m} m, over the trip's longest walk of "
                                f"{prefs.longestWalkM} m.", (a, b), subject=b, detail={"mode": leg.mode}))
    return issues


def pace(facts: DayFacts) -> list[Issue]:
    day, prefs = facts.day, facts.prefs
    visits = [s for s in day.stops if s.kind not in NOT_VISITS]
    limit = PACE_STOPS[prefs.pace]
    if len(visits) <= limit:
        return []
    return [Issue("pace", "warning", f"This day has {len(visits)} stops; a {prefs.pace} pace holds {limit}.",
                  tuple(s.id for s in visits[limit:]), detail={"limit": limit, "excess": len(visits) - limit})]


RULES = (timing, closed, meal_time, weather_rule, leg_rules, pace, duplicates, backtracking)
CLOCK_RULES = (timing, closed, meal_time)   # the ones a leg's duration can change


Rule = Callable[[DayFacts], list[Issue]]


def detect(trip: Trip, day: Day, legs: Legs, prefs: TripPreferences, book: PlaceBook,
           weather: dict[str, Json] | None, keys_only: bool = False, rules: Sequence[Rule] = RULES) -> list[Issue]:
    """Every issue (uncapped, so fix verification compares like with like)."""
    facts = DayFacts(trip, day, day_schedule(day, legs), legs, prefs, book, weather, keys_only)
    return [issue for rule in rules for issue in rule(facts)]
