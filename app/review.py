"""A day's status from plain rules (no model), each finding with the fixes
the server computed as exact registry ops.

Rules: a set time the previous stop plus travel cannot reach (`unreachable`),
a set time before the previous stop ends (`overlap`), a stop its place's
opening hours rule out (`closed`) and a meal at an odd time (`meal_time`)
(app/review_hours.py), an outdoor stop on a day the forecast says is wet
(`weather`, app/review_weather.py), a walk over the trip's limit
(`long_walk`), an avoided mode in a leg (`avoided_mode`), more stops than the
pace holds (`pace`), the same place twice (`duplicate`), and a path that
crosses back on itself (`backtracking`).

Every fix is *verified* before it is offered: it is validated against
TRIP_OPS and applied to a light copy of the trip, the day is re-timed (known
legs reused, new pairs estimated exactly as app.legs would) and re-checked. A
fix is kept only when it removes its finding and introduces no finding that
was not there before, on this day and on any other day it changes (a move or
a swap to another day). So every fix applies through `apply_ops` and helps.

Finding and fix ids are hashes of (trip id, day id, kind, stop ids, op args):
the same day gives the same ids, which is what lets the copilot recommend a
fix by id and lets its answer cache stay valid.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any
from collections.abc import Iterable

from .errors import AppError
from .legs import Leg, by_pair, choose_mode, estimate, haversine_m
from .preferences import PACE_STOPS, TripPreferences
from .review_hours import MOVE_SLACK_MIN, closed, meal_time
from .review_issues import NOT_VISITS, DayFacts, Elsewhere, Issue, PlaceBook, has_point, issue_key, quote
from .review_path import backtracking, duplicates
from .review_weather import indoor_visits, weather as weather_rule
from .trips.model import DAY_START, Day, Trip
from .trips.ops import TRIP_OPS, OpContext
from .trips.service import validate_args
from .trips.schedule import clock_label, day_schedule, to_minutes

MAX_SIMULATIONS = 160                     # bounds the fix search on a pathological day
MAX_CROSSINGS = 3                         # a path crossing itself more often needs Optimize, not a list
POSITIONS_PER_DAY = 4                     # cheapest insertion points tried on another day
SWAPS_PER_DAY = 4                         # indoor visits tried for a swap on another day
MATERIAL_KINDS = {"unreachable", "overlap", "closed", "weather", "duplicate", "backtracking", "avoided_mode",
                  "long_walk", "expense_unlinked", "currency_mismatch"}
_CTX = OpContext(actor_id="review", now="")
_q = quote


@dataclass(frozen=True)
class Fix:
    id: str
    label: str
    op: str
    args: dict

    def to_json(self) -> dict:
        return {"id": self.id, "label": self.label, "op": self.op, "args": self.args}


@dataclass(frozen=True)
class Finding:
    id: str
    kind: str
    severity: str             # "problem" | "warning" | "info" (an observation: not material, no toast)
    message: str
    stop_ids: tuple[str, ...]
    fixes: tuple[Fix, ...] = ()
    day_id: str | None = None

    @property
    def key(self) -> tuple:
        return issue_key(self.kind, self.stop_ids, self.day_id)

    @property
    def material(self) -> bool:
        """A risk the trip agent may speak up about (observations never are)."""
        return self.kind in MATERIAL_KINDS and self.severity != "info"

    def to_json(self) -> dict:
        return {"id": self.id, "kind": self.kind, "severity": self.severity, "message": self.message,
                "stopIds": list(self.stop_ids), "fixes": [f.to_json() for f in self.fixes]}


@dataclass(frozen=True)
class ReviewResult:
    status: str               # "ok" | "warning" | "problem"
    findings: tuple[Finding, ...]

    def to_json(self) -> dict:
        return {"status": self.status, "findings": [f.to_json() for f in self.findings]}


def _hash(*parts: Any) -> str:
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# -- legs -----------------------------------------------------------------------


def estimate_leg(a, b, prefs: TripPreferences) -> Leg:
    """The leg app.legs.day_legs would estimate without Google (same mode rule)."""
    mode = choose_mode(haversine_m(a.lat, a.lng, b.lat, b.lng), prefs)
    leg = estimate(a.id, b.id, (a.lat, a.lng), (b.lat, b.lng), mode)
    if mode == "walk" and leg.distance_m > prefs.longestWalkM and choose_mode(leg.distance_m, prefs) != "walk":
        leg = estimate(a.id, b.id, (a.lat, a.lng), (b.lat, b.lng), choose_mode(leg.distance_m, prefs))
    return leg


def legs_for(day: Day, known: dict[tuple[str, str], Leg], prefs: TripPreferences) -> dict[tuple[str, str], Leg]:
    """Consecutive legs of `day`: known ones reused, new pairs estimated."""
    out = {}
    for a, b in zip(day.stops, day.stops[1:]):
        if has_point(a) and has_point(b):
            out[(a.id, b.id)] = known.get((a.id, b.id)) or estimate_leg(a, b, prefs)
    return out


# -- rules ------------------------------------------------------------------------


def _timing(facts: DayFacts) -> list[Issue]:
    day, slots, issues = facts.day, facts.slots, []
    for i in range(1, len(day.stops)):
        stop, prev, slot, before = day.stops[i], day.stops[i - 1], slots[i], slots[i - 1]
        if not stop.set_time or slot.start >= slot.earliest:
            continue
        late = slot.earliest - slot.start
        if slot.start < before.end:
            kind = "overlap"
            message = (f"{_q(stop.name)} is set for {stop.set_time}, but {_q(prev.name)} before it runs "
                       f"until {clock_label(before.end)}.")
        else:
            kind = "unreachable"
            message = (f"{_q(stop.name)} is set for {stop.set_time}, but after {_q(prev.name)} ends at "
                       f"{clock_label(before.end)} the {slot.travel_min}-min trip arrives at "
                       f"{clock_label(slot.earliest)}.")
        issue = Issue(kind, "problem", message, (prev.id, stop.id))
        issue.candidates.append((f"Clear the set time of {_q(stop.name)}", "update_stop",
                                 {"stopId": stop.id, "setTime": None}))
        if prev.duration_min - late >= 5:
            issue.candidates.append((f"Shorten {_q(prev.name)} to {prev.duration_min - late} min", "update_stop",
                                     {"stopId": prev.id, "durationMin": prev.duration_min - late}))
        # Earlier for the set-time stop, or the previous free stop after it.
        issue.movers = [(stop.id, range(0, i))] + ([(prev.id, range(i, len(day.stops)))] if not prev.set_time else [])
        issues.append(issue)
    return issues


def _leg_rules(facts: DayFacts) -> list[Issue]:
    day, legs, prefs, issues = facts.day, facts.legs, facts.prefs, []
    names = {s.id: s.name for s in day.stops}
    for (a, b), leg in legs.items():
        pair = f"{_q(names[a])} to {_q(names[b])}"
        if leg.mode in prefs.avoidModes:
            issue = Issue("avoided_mode", "problem",
                           f"The trip avoids {leg.mode}, but the leg from {pair} is by {leg.mode}.", (a, b))
            rest = [m for m in prefs.avoidModes if m != leg.mode]
            issue.candidates.append((f"Allow {leg.mode} on this trip", "set_trip_preferences", {"avoidModes": rest}))
            issues.append(issue)
        elif leg.mode == "walk" and leg.distance_m > prefs.longestWalkM:
            issue = Issue("long_walk", "warning",
                           f"The walk from {pair} is {leg.distance_m} m, over the trip's longest walk of "
                           f"{prefs.longestWalkM} m.", (a, b))
            other = next((m for m in ("transit", prefs.transport, "drive", "bicycle")
                          if m != "walk" and m in prefs.avoidModes), None)
            if other is not None:
                issue.candidates.append((f"Allow {other} on this trip", "set_trip_preferences",
                                         {"avoidModes": [m for m in prefs.avoidModes if m != other]}))
            issue.movers = [(b, range(len(day.stops)))]
            issues.append(issue)
    return issues


def _pace(facts: DayFacts) -> list[Issue]:
    trip, day, prefs = facts.trip, facts.day, facts.prefs
    visits = [s for s in day.stops if s.kind not in NOT_VISITS]
    limit = PACE_STOPS[prefs.pace]
    if len(visits) <= limit:
        return []
    issue = Issue("pace", "warning",
                   f"This day has {len(visits)} stops; a {prefs.pace} pace holds {limit}.",
                   tuple(s.id for s in visits[limit:]))
    free = [s for s in visits if not s.set_time]
    following = trip.days[day.position + 1] if day.position + 1 < len(trip.days) else None
    if free and following is not None:
        last = free[-1]
        issue.candidates.append((f"Move {_q(last.name)} to Day {following.position + 1}", "move_stop",
                                 {"stopId": last.id, "toDayId": following.id, "position": len(following.stops)}))
    return [issue]


RULES = (_timing, closed, meal_time, weather_rule, _leg_rules, _pace, duplicates, backtracking)


def _detect(trip: Trip, day: Day, legs: dict, prefs: TripPreferences, book: PlaceBook,
            weather: dict | None, keys_only: bool = False) -> list[Issue]:
    """Every issue (uncapped, so fix verification compares like with like)."""
    facts = DayFacts(trip, day, day_schedule(day, legs), legs, prefs, book, weather, keys_only)
    return [issue for rule in RULES for issue in rule(facts)]


# -- fix verification ---------------------------------------------------------------


class _Simulator:
    """Applies candidate fixes to copies of the trip and re-runs the rules on
    every day the op changes (the reviewed day, and the other day of a move
    or a swap)."""

    def __init__(self, trip: Trip, day: Day, known: dict, prefs: TripPreferences, book: PlaceBook,
                 weather: dict | None, trip_legs: dict[str, list[Leg]], original: set[tuple]):
        self.trip, self.day_id, self.known, self.prefs = trip, day.id, known, prefs
        self.book, self.weather, self.trip_legs = book, weather, trip_legs
        self.original = original
        self.budget = MAX_SIMULATIONS
        self._before: dict[str, set[tuple]] = {}   # other day id -> its keys as the trip is
        self._left: dict[str, set[tuple] | None] = {}   # stop id -> this day's keys without it

    def _legs(self, day: Day, prefs: TripPreferences, estimate_all: bool) -> dict:
        known = {} if estimate_all else self.known if day.id == self.day_id else by_pair(
            self.trip_legs.get(day.id, []))
        return legs_for(day, known, prefs)

    def _keys(self, trip: Trip, day: Day, prefs: TripPreferences, estimate_all: bool = False) -> tuple[set, dict]:
        legs = self._legs(day, prefs, estimate_all)
        return {i.key for i in _detect(trip, day, legs, prefs, self.book, self.weather, keys_only=True)}, legs

    def _other_day(self, op: str, args: dict) -> str | None:
        """The other day an op changes besides the reviewed one."""
        if op == "move_stop":
            target = args.get("toDayId")
        elif op == "swap_stops":
            target = next((d.id for d in self.trip.days for s in d.stops
                           if s.id in (args.get("stopId"), args.get("otherStopId")) and d.id != self.day_id), None)
        else:
            return None
        return target if target != self.day_id else None

    def _slots(self, day: Day) -> list:
        return day_schedule(day, self._legs(day, self.prefs, False))

    def keys_before(self, day_id: str) -> set[tuple]:
        if day_id not in self._before:
            self._before[day_id] = self._keys(self.trip, self.trip.day(day_id), self.prefs)[0]
        return self._before[day_id]

    def _apply(self, op: str, args: dict) -> Trip | None:
        """The trip after the op, on a copy-on-write edit (it copies only what
        the op touches; the reviewed trip may be the one readers share); None
        if it cannot apply (or the budget is spent)."""
        if self.budget <= 0:
            return None
        self.budget -= 1
        trip = self.trip.edit()
        try:
            TRIP_OPS[op].apply(trip, validate_args(op, args), _CTX)
        except AppError:
            return None
        return trip

    def outcome(self, op: str, args: dict) -> tuple[set[tuple], float, bool] | None:
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

    def _without(self, stop_id: str) -> set[tuple] | None:
        """The reviewed day's keys once `stop_id` has left it: the same for
        every move of that stop to another day, so computed once."""
        if stop_id not in self._left:
            trip = self._apply("delete_stop", {"stopId": stop_id})
            self._left[stop_id] = None if trip is None else self._keys(trip, trip.day(self.day_id), self.prefs)[0]
        return self._left[stop_id]

    def helps(self, issue: Issue, op: str, args: dict) -> tuple[bool, float]:
        allowed = self.original - {issue.key}
        if issue.kind == "pace":
            allowed.add(issue.key)   # one stop at a time is progress; the finding may stay

        def fine(keys: set[tuple]) -> bool:
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

    def best_move(self, issue: Issue, day: Day) -> tuple[str, str, dict] | None:
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

    def elsewhere(self, issue: Issue, plan: Elsewhere) -> list[tuple[str, str, dict]]:
        """A move to the first listed day where the stop verifiably fits, and
        (with `plan.swap`) a swap with an indoor visit of the first listed day
        where one verifiably helps."""
        _, stop = self.trip.stop(plan.stop_id)
        found = [next((fix for day_id in plan.day_ids if (fix := self._move_to(issue, stop, day_id))), None)]
        if plan.swap:
            found.append(next((fix for day_id in plan.day_ids if (fix := self._swap_on(issue, stop, day_id))), None))
        return [fix for fix in found if fix is not None]

    def _move_to(self, issue: Issue, stop, day_id: str) -> tuple[str, str, dict] | None:
        target = self.trip.day(day_id)
        date, slots = self.trip.day_date(target), self._slots(target)
        # Where its hours could allow it (roughly: after the stop it would follow), cheapest detour first.
        plausible = [p for p in _cheapest_positions(target, stop) if self.book.fits_around(
            stop, date, slots[p - 1].end if p else _day_start(target), MOVE_SLACK_MIN)]
        for position in plausible[:POSITIONS_PER_DAY]:
            args = {"stopId": stop.id, "toDayId": day_id, "position": position}
            if self.helps(issue, "move_stop", args)[0]:
                return f"Move {_q(stop.name)} to {_day_name(target)}", "move_stop", args
        return None

    def _swap_on(self, issue: Issue, stop, day_id: str) -> tuple[str, str, dict] | None:
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


def _cheapest_positions(day: Day, stop) -> list[int]:
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
                cost += haversine_m(a.lat, a.lng, b.lat, b.lng)
        if before is not None and after is not None and has_point(before) and has_point(after):
            cost -= haversine_m(before.lat, before.lng, after.lat, after.lng)
        return cost

    return sorted(range(n + 1), key=lambda p: (detour(p), -p))


# -- public API ---------------------------------------------------------------------


def _finding(trip: Trip, day: Day, issue: Issue, fixes: list[tuple[str, str, dict]]) -> Finding:
    fid = "f_" + _hash(trip.id, day.id, issue.kind, sorted(issue.stop_ids))
    built = tuple(Fix("x_" + _hash(fid, op, args), label, op, args) for label, op, args in fixes)
    return Finding(fid, issue.kind, issue.severity, issue.message, issue.stop_ids, built, day.id)


def review_day(trip: Trip, day: Day, legs: Iterable[Leg], prefs: TripPreferences,
               places: dict[str, dict] | None = None, *, weather: dict[str, dict] | None = None,
               trip_legs: dict[str, list[Leg]] | None = None, with_fixes: bool = True,
               book: PlaceBook | None = None) -> ReviewResult:
    """The day's findings, worst first within the day's order of rules. Pure.

    `legs` are the day's legs as shown (TripDto); `places` maps a stop's
    placeId to its place JSON (Google, or OpenStreetMap with `source: osm`)
    for the hours and weather rules (None or missing: unknown, so those rules
    are silent for it); `weather` maps a date to app.weather's day (forecast
    or typical; None: the weather rule is silent); `trip_legs` are the other
    days' shown legs (day id -> legs) for fixes that move a stop there
    (estimated when missing). `book` may carry hours already computed."""
    known = by_pair(legs)
    book = book or PlaceBook(places)
    current = legs_for(day, known, prefs)
    issues = _detect(trip, day, current, prefs, book, weather)
    sim = _Simulator(trip, day, known, prefs, book, weather, trip_legs or {}, {i.key for i in issues})
    crossings = [i for i in issues if i.kind == "backtracking"]
    shown = [i for i in issues if i.kind != "backtracking" or i in crossings[:MAX_CROSSINGS]]
    findings = []
    for issue in shown:
        fixes: list[tuple[str, str, dict]] = []
        if with_fixes:
            fixes = [c for c in issue.candidates if sim.helps(issue, c[1], c[2])[0]]
            move = sim.best_move(issue, day) if issue.movers else None
            if move is not None:
                fixes.append(move)
            for plan in issue.elsewhere:
                fixes += sim.elsewhere(issue, plan)
        findings.append(_finding(trip, day, issue, fixes))
    return ReviewResult(_status(findings), tuple(findings))


def _status(findings: Iterable[Finding]) -> str:
    severities = {f.severity for f in findings}
    return "problem" if "problem" in severities else "warning" if "warning" in severities else "ok"


def day_fingerprint(trip: Trip, day: Day) -> str:
    """What a day's schedule depends on: the date, the start, the shared travel
    choices and every stop's place, time and length in order."""
    return _hash(trip.day_date(day), day.start_time, trip.prefs.model_dump(),
                 [(s.id, s.kind, s.place_id, s.lat, s.lng, s.set_time, s.duration_min, s.meal) for s in day.stops])


def material_risks(before: Trip, after: Trip, *, legs_before: dict[str, list[Leg]] | None = None,
                   legs_after: dict[str, list[Leg]] | None = None, places: dict[str, dict] | None = None,
                   weather: dict[str, dict] | None = None) -> list[Finding]:
    """Material findings present after an edit that were not present before:
    new impossible timing, overlaps, stops their opening hours rule out,
    outdoor stops on a day the forecast says is wet, duplicates, backtracking,
    avoided modes or long walks, and budget inconsistencies (an expense whose
    stop was deleted, an expense in another currency than the trip's).
    Observations (`info`, e.g. typical weather) and meal times never count.

    Pure, so it can run off an op listener: legs default to estimates (pass
    the shown legs per day id when you have them); `places` and `weather` as
    for `review_day` (None: those rules are silent)."""
    book = PlaceBook(places)
    old_days = {d.id: d for d in before.days}
    changed = [d for d in after.days
               if d.id not in old_days or day_fingerprint(after, d) != day_fingerprint(before, old_days[d.id])]
    old_keys: set[tuple] = set()
    old_crossings: dict[str, int] = {}
    for d in changed:
        if d.id in old_days:
            found = [f for f in review_day(before, old_days[d.id], (legs_before or {}).get(d.id, []), before.prefs,
                                           weather=weather, with_fixes=False, book=book).findings if f.material]
            old_keys |= {f.key for f in found}
            old_crossings[d.id] = sum(f.kind == "backtracking" for f in found)
    risks: list[Finding] = []
    for d in changed:
        found = review_day(after, d, (legs_after or {}).get(d.id, []), after.prefs, weather=weather,
                           trip_legs=legs_after, book=book).findings
        # A stop added on an existing crossing renames it; only more crossings are new.
        more_crossings = sum(f.kind == "backtracking" for f in found) > old_crossings.get(d.id, 0)
        risks += [f for f in found if f.material and f.key not in old_keys
                  and (f.kind != "backtracking" or more_crossings)]
    return risks + _budget_risks(before, after)


def _budget_risks(before: Trip, after: Trip) -> list[Finding]:
    old = {e.id: e for e in before.expenses}
    stops_after = {s.id for s in after.all_stops()}
    names = {s.id: s.name for s in before.all_stops()}
    out = []
    for e in after.expenses:
        prior = old.get(e.id)
        if prior is not None and prior.stop_id and prior.stop_id not in stops_after:
            fid = "f_" + _hash(after.id, "", "expense_unlinked", [e.id, prior.stop_id])
            fix = Fix("x_" + _hash(fid, "delete_expense", {"expenseId": e.id}), f"Delete the expense {_q(e.title)}",
                      "delete_expense", {"expenseId": e.id})
            out.append(Finding(fid, "expense_unlinked", "warning",
                               f"The expense {_q(e.title)} was for {_q(names.get(prior.stop_id, 'a stop'))}, "
                               f"which was removed.", (prior.stop_id,), (fix,)))
        was_mismatch = prior is not None and prior.currency != before.currency
        if e.currency != after.currency and not was_mismatch:
            fid = "f_" + _hash(after.id, "", "currency_mismatch", [e.id, e.currency, after.currency])
            out.append(Finding(fid, "currency_mismatch", "warning",
                               f"The expense {_q(e.title)} is in {e.currency}; the trip's currency is "
                               f"{after.currency}.", (), ()))
    return out

