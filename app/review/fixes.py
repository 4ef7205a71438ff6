"""The fix search: candidate fixes are applied to copies of the trip and
kept only when verified.

Every fix is *verified* before it is offered: it is validated against
TRIP_OPS and applied to a light copy of the trip, the day is re-timed (known
legs reused, new pairs estimated exactly as app.legs would) and re-checked. A
fix is kept only when it removes its finding and introduces no finding that
was not there before, on this day and on any other day it changes (a move or
a swap to another day). So every fix applies through `apply_ops` and helps.
"""

from __future__ import annotations

from ..errors import AppError
from ..legs import Leg, by_pair, legs_for
from ..preferences import TripPreferences
from ..trips.model import DAY_START, Day, Stop, Trip
from ..trips.ops import simulate
from ..trips.schedule import Slot, day_schedule, to_minutes
from .clock_rules import MOVE_SLACK_MIN
from .issues import Candidate, Elsewhere, Issue, Json, Key, Legs, PlaceBook, has_point, meters_between, quote as _q
from .rules import detect
from .weather_rule import indoor_visits

MAX_SIMULATIONS = 160                     # bounds the fix search on a pathological day
POSITIONS_PER_DAY = 4                     # cheapest insertion points tried on another day
SWAPS_PER_DAY = 4                         # indoor visits tried for a swap on another day


class FixSearch:
    """Applies candidate fixes to copies of the trip and re-runs the rules on
    every day the op changes (the reviewed day, and the other day of a move
    or a swap)."""

    def __init__(self, trip: Trip, day: Day, known: Legs, prefs: TripPreferences, book: PlaceBook,
                 weather: dict[str, Json] | None, trip_legs: dict[str, list[Leg]], original: set[Key]):
        self.trip, self.day_id, self.known, self.prefs = trip, day.id, known, prefs
        self.book, self.weather, self.trip_legs = book, weather, trip_legs
        self.original = original
        self.budget = MAX_SIMULATIONS
        self._before: dict[str, set[Key]] = {}   # other day id -> its keys as the trip is
        self._left: dict[str, set[Key] | None] = {}   # stop id -> this day's keys without it

    def _legs(self, day: Day, prefs: TripPreferences, estimate_all: bool) -> Legs:
        known = {} if estimate_all else self.known if day.id == self.day_id else by_pair(
            self.trip_legs.get(day.id, []))
        return legs_for(day, known, prefs)

    def _keys(self, trip: Trip, day: Day, prefs: TripPreferences,
              estimate_all: bool = False) -> tuple[set[Key], Legs]:
        legs = self._legs(day, prefs, estimate_all)
        return {i.key for i in detect(trip, day, legs, prefs, self.book, self.weather, keys_only=True)}, legs

    def _other_day(self, op: str, args: Json) -> str | None:
        """The other day an op changes besides the reviewed one."""
        if op == "move_stop":
            target = args.get("toDayId")
        elif op == "swap_stops":
            target = next((d.id for d in self.trip.days for s in d.stops
                           if s.id in (args.get("stopId"), args.get("otherStopId")) and d.id != self.day_id), None)
        else:
            return None
        return target if target != self.day_id else None

    def _slots(self, day: Day) -> list[Slot]:
        return day_schedule(day, self._legs(day, self.prefs, False))

    def keys_before(self, day_id: str) -> set[Key]:
        if day_id not in self._before:
            self._before[day_id] = self._keys(self.trip, self.trip.day(day_id), self.prefs)[0]
        return self._before[day_id]

    def _apply(self, op: str, args: Json) -> Trip | None:
        """The trip after the op, on a copy-on-write edit (it copies only what
        the op touches; the reviewed trip may be the one readers share); None
        if it cannot apply (or the budget is spent)."""
        if self.budget <= 0:
            return None
        self.budget -= 1
        try:
            return simulate(self.trip, [(op, args)], actor_id="review")
        except AppError:
            return None

    def outcome(self, op: str, args: Json) -> tuple[set[Key], float, bool] | None:
        """(keys on the reviewed day after the op, its path length, whether
        the other day it changes gained no finding); None if it cannot apply."""
        other = self._other_day(op, args)
        trip = self._apply(op, args)
        if trip is None:
            return None
        changed_prefs = op == "set_trip_preferences"    # modes may change: estimate every leg
        prefs = trip.prefs if changed_prefs else self.prefs
        keys, legs = self._keys(trip, trip.day(self.day_id), prefs, changed_prefs)
        other_fine = other is None or self._keys(trip, trip.day(other), prefs)[0] <= self.keys_before(other)
        return keys, sum(leg.distance_m for leg in legs.values()), other_fine

    def _without(self, stop_id: str) -> set[Key] | None:
        """The reviewed day's keys once `stop_id` has left it: the same for
        every move of that stop to another day, so computed once."""
        if stop_id not in self._left:
            trip = self._apply("delete_stop", {"stopId": stop_id})
            self._left[stop_id] = None if trip is None else self._keys(trip, trip.day(self.day_id), self.prefs)[0]
        return self._left[stop_id]

    def fixes_for(self, issue: Issue) -> list[Candidate]:
        """The issue's fixes that verifiably help, as (label, op, args): its
        candidates, the best move within the day, moves and swaps to other days."""
        fixes = [c for c in issue.candidates if self.helps(issue, c[1], c[2])[0]]
        move = self.best_move(issue, self.trip.day(self.day_id)) if issue.movers else None
        if move is not None:
            fixes.append(move)
        for plan in issue.elsewhere:
            fixes += self.elsewhere(issue, plan)
        return fixes

    def helps(self, issue: Issue, op: str, args: Json) -> tuple[bool, float]:
        allowed = self.original - {issue.key}
        if issue.kind == "pace":
            allowed.add(issue.key)   # one stop at a time is progress; the finding may stay

        def fine(keys: set[Key]) -> bool:
            return (issue.kind == "pace" or issue.key not in keys) and keys <= allowed

        other = self._other_day(op, args)
        if op == "move_stop" and other is not None:
            # This day is the day without the stop; only the other day needs a simulation.
            left = self._without(args["stopId"])
            if left is None or not fine(left):
                return False, 0.0
            trip = self._apply(op, args)
            return trip is not None and self._keys(trip, trip.day(other), self.prefs)[0] <= self.keys_before(other), 0.0
        result = self.outcome(op, args)
        if result is None:
            return False, 0.0
        keys, length, other_fine = result
        return other_fine and fine(keys), length

    def best_move(self, issue: Issue, day: Day) -> Candidate | None:
        best = None
        ids = [s.id for s in day.stops]
        for stop_id, positions in issue.movers:
            here = ids.index(stop_id)
            for position in positions:
                if position == here or position >= len(ids):
                    continue
                args = {"stopId": stop_id, "toDayId": day.id, "position": position}
                ok, length = self.helps(issue, "move_stop", args)
                if ok and (best is None or length < best[0]):
                    best = (length, stop_id, position)
        if best is None:
            return None
        _, stop_id, position = best
        rest = [s for s in day.stops if s.id != stop_id]
        name = next(s.name for s in day.stops if s.id == stop_id)
        where = f"before {_q(rest[position].name)}" if position < len(rest) else f"after {_q(rest[-1].name)}"
        return f"Move {_q(name)} {where}", "move_stop", {"stopId": stop_id, "toDayId": day.id, "position": position}

    def elsewhere(self, issue: Issue, plan: Elsewhere) -> list[Candidate]:
        """A move to the first listed day where the stop verifiably fits, and
        (with `plan.swap`) a swap with an indoor visit of the first listed day
        where one verifiably helps."""
        _, stop = self.trip.stop(plan.stop_id)
        found = [next((fix for day_id in plan.day_ids if (fix := self._move_to(issue, stop, day_id))), None)]
        if plan.swap:
            found.append(next((fix for day_id in plan.day_ids if (fix := self._swap_on(issue, stop, day_id))), None))
        return [fix for fix in found if fix is not None]

    def _move_to(self, issue: Issue, stop: Stop, day_id: str) -> Candidate | None:
        target = self.trip.day(day_id)
        date, slots = self.trip.dated(target), self._slots(target)
        # Where its hours could allow it (roughly: after the stop it would follow), cheapest detour first.
        plausible = [p for p in _cheapest_positions(target, stop) if self.book.fits_around(
            stop, date, slots[p - 1].end if p else _day_start(target), MOVE_SLACK_MIN)]
        for position in plausible[:POSITIONS_PER_DAY]:
            args = {"stopId": stop.id, "toDayId": day_id, "position": position}
            if self.helps(issue, "move_stop", args)[0]:
                return f"Move {_q(stop.name)} to {_day_name(target)}", "move_stop", args
        return None

    def _swap_on(self, issue: Issue, stop: Stop, day_id: str) -> Candidate | None:
        target = self.trip.day(day_id)
        for other in indoor_visits(target, self.book)[:SWAPS_PER_DAY]:
            args = {"stopId": stop.id, "otherStopId": other.id}
            if self.helps(issue, "swap_stops", args)[0]:
                return f"Swap {_q(stop.name)} with {_q(other.name)} from {_day_name(target)}", "swap_stops", args
        return None


def _day_start(day: Day) -> int:
    return to_minutes(day.start_time or DAY_START)


def _day_name(day: Day) -> str:
    return f"Day {day.position + 1}" + (f" ({day.title})" if day.title else "")


def _cheapest_positions(day: Day, stop: Stop) -> list[int]:
    """Positions in `day` ordered by the straight-line detour of putting
    `stop` there (the end of the day first when nothing has coordinates)."""
    n = len(day.stops)
    if not has_point(stop):
        return list(range(n, -1, -1))

    def detour(position: int) -> float:
        before = day.stops[position - 1] if position > 0 else None
        after = day.stops[position] if position < n else None
        cost = 0.0
        for a, b in ((before, stop), (stop, after)):
            if a is not None and b is not None and has_point(a) and has_point(b):
                cost += meters_between(a, b)
        if before is not None and after is not None and has_point(before) and has_point(after):
            cost -= meters_between(before, after)
        return cost

    return sorted(range(n + 1), key=lambda p: (detour(p), -p))
