"""A day's status from plain rules (no model), each finding with the fixes
the server computed as exact registry ops.

Rules: a set time the previous stop plus travel cannot reach (`unreachable`),
a set time before the previous stop ends (`overlap`), a restaurant closed at
its computed time per app.hours (`closed`), a walk over the trip's limit
(`long_walk`), an avoided mode in a leg (`avoided_mode`), more stops than the
pace holds (`pace`), the same place twice (`duplicate`), and a path that
crosses back on itself (`backtracking`).

Every fix is *verified* before it is offered: it is validated against
TRIP_OPS and applied to a light copy of the trip, the day is re-timed (known
legs reused, new pairs estimated exactly as app.legs would) and re-checked. A
fix is kept only when it removes its finding and introduces no finding that
was not there before. So every fix applies through `apply_ops` and helps.

Finding and fix ids are hashes of (trip id, day id, kind, stop ids, op args):
the same day gives the same ids, which is what lets the copilot recommend a
fix by id and lets its answer cache stay valid.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any, Iterable

from .errors import AppError
from .hours import check_hours
from .legs import Leg, choose_mode, estimate, haversine_m
from .preferences import PACE_STOPS, TripPreferences
from .trips.model import Day, Trip
from .trips.ops import TRIP_OPS, OpContext
from .trips.service import validate_args
from .trips.schedule import Slot, day_schedule, to_hhmm, to_minutes

DUPLICATE_RADIUS_M = 50
NOT_VISITS = ("stay", "transit")          # a hotel or a transfer is not a visit for the pace
MAX_SIMULATIONS = 160                     # bounds the fix search on a pathological day
MAX_CROSSINGS = 3                         # a path crossing itself more often needs Optimize, not a list
MATERIAL_KINDS = {"unreachable", "overlap", "closed", "duplicate", "backtracking", "avoided_mode",
                  "long_walk", "expense_unlinked", "currency_mismatch"}
_CTX = OpContext(actor_id="review", now="")


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
    severity: str             # "warning" | "problem"
    message: str
    stop_ids: tuple[str, ...]
    fixes: tuple[Fix, ...] = ()
    day_id: str | None = None

    @property
    def key(self) -> tuple:
        return _key(self.kind, self.stop_ids, self.day_id)

    def to_json(self) -> dict:
        return {"id": self.id, "kind": self.kind, "severity": self.severity, "message": self.message,
                "stopIds": list(self.stop_ids), "fixes": [f.to_json() for f in self.fixes]}


@dataclass(frozen=True)
class ReviewResult:
    status: str               # "ok" | "warning" | "problem"
    findings: tuple[Finding, ...]

    def fix_ids(self) -> set[str]:
        return {fx.id for f in self.findings for fx in f.fixes}

    def to_json(self) -> dict:
        return {"status": self.status, "findings": [f.to_json() for f in self.findings]}


@dataclass
class _Issue:
    """A rule's raw result: what is wrong and which fixes might help."""

    kind: str
    severity: str
    message: str
    stop_ids: tuple[str, ...]
    candidates: list[tuple[str, str, dict]] = field(default_factory=list)  # (label, op, args)
    # Stops worth trying at other positions: (stop id, the positions to try).
    movers: list[tuple[str, range]] = field(default_factory=list)

    @property
    def key(self) -> tuple:
        return _key(self.kind, self.stop_ids, None)


def _key(kind: str, stop_ids: Iterable[str], day_id: str | None) -> tuple:
    # The pace finding is about the day, not about which stops happen to be last.
    return (kind, day_id) if kind == "pace" else (kind, tuple(sorted(stop_ids)))


def _hash(*parts: Any) -> str:
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _q(name: str) -> str:
    return f"“{name}”"


# -- legs -----------------------------------------------------------------------


def estimate_leg(a, b, prefs: TripPreferences) -> Leg:
    """The leg app.legs.day_legs would estimate without Google (same mode rule)."""
    mode = choose_mode(haversine_m(a.lat, a.lng, b.lat, b.lng), prefs)
    leg = estimate(a.id, b.id, (a.lat, a.lng), (b.lat, b.lng), mode)
    if mode == "walk" and leg.distance_m > prefs.longestWalkM and choose_mode(leg.distance_m, prefs) != "walk":
        leg = estimate(a.id, b.id, (a.lat, a.lng), (b.lat, b.lng), choose_mode(leg.distance_m, prefs))
    return leg


def _has_point(s) -> bool:
    return s.lat is not None and s.lng is not None


def legs_for(day: Day, known: dict[tuple[str, str], Leg], prefs: TripPreferences) -> dict[tuple[str, str], Leg]:
    """Consecutive legs of `day`: known ones reused, new pairs estimated."""
    out = {}
    for a, b in zip(day.stops, day.stops[1:]):
        if _has_point(a) and _has_point(b):
            out[(a.id, b.id)] = known.get((a.id, b.id)) or estimate_leg(a, b, prefs)
    return out


# -- rules ------------------------------------------------------------------------


def _timing(day: Day, slots: list[Slot]) -> list[_Issue]:
    issues = []
    for i in range(1, len(day.stops)):
        stop, prev, slot, before = day.stops[i], day.stops[i - 1], slots[i], slots[i - 1]
        if not stop.set_time or slot.start >= slot.earliest:
            continue
        late = slot.earliest - slot.start
        if slot.start < before.end:
            kind = "overlap"
            message = (f"{_q(stop.name)} is set for {stop.set_time}, but {_q(prev.name)} before it runs "
                       f"until {to_hhmm(before.end)}.")
        else:
            kind = "unreachable"
            message = (f"{_q(stop.name)} is set for {stop.set_time}, but after {_q(prev.name)} ends at "
                       f"{to_hhmm(before.end)} the {slot.travel_min}-min trip arrives at {to_hhmm(slot.earliest)}.")
        issue = _Issue(kind, "problem", message, (prev.id, stop.id))
        issue.candidates.append((f"Clear the set time of {_q(stop.name)}", "update_stop",
                                 {"stopId": stop.id, "setTime": None}))
        if prev.duration_min - late >= 5:
            issue.candidates.append((f"Shorten {_q(prev.name)} to {prev.duration_min - late} min", "update_stop",
                                     {"stopId": prev.id, "durationMin": prev.duration_min - late}))
        # Earlier for the set-time stop, or the previous free stop after it.
        issue.movers = [(stop.id, range(0, i))] + ([(prev.id, range(i, len(day.stops)))] if not prev.set_time else [])
        issues.append(issue)
    return issues


def _first_fitting(place: dict, date: str, earliest: int, duration: int, latest: str | None) -> int | None:
    """The first start from `earliest` (15-min steps) that fits the hours, if any."""
    if latest is None:
        return None
    last = to_minutes(latest)
    start = int(math.ceil(earliest / 15) * 15)
    while start <= last:
        if check_hours(place, date, to_hhmm(start), duration).fits:
            return start
        start += 15
    return last if earliest <= last else None


def _closed(trip: Trip, day: Day, slots: list[Slot], places: dict | None) -> list[_Issue]:
    if not places:
        return []
    date, issues = trip.day_date(day), []
    for stop, slot in zip(day.stops, slots):
        raw = places.get(stop.place_id) if stop.kind == "food" and stop.place_id else None
        if raw is None or slot.start >= 24 * 60:
            continue
        check = check_hours(raw, date, to_hhmm(slot.start), stop.duration_min)
        if check.status == "none" or check.fits:
            continue
        when = f"{to_hhmm(slot.start)}–{to_hhmm(slot.end)}"
        closes = f" (it closes at {check.closes_at})" if check.closes_at else ""
        hours = "its opening hours" if check.status == "confirmed" else "its usual opening hours"
        issue = _Issue("closed", "problem" if check.status == "confirmed" else "warning",
                       f"{_q(stop.name)} at {when} on {date} does not fit {hours} with 30 minutes "
                       f"before closing{closes}.", (stop.id,))
        best = _first_fitting(raw, date, slot.earliest, stop.duration_min, check.latest_start)
        if best is not None:
            issue.candidates.append((f"Set {_q(stop.name)} to {to_hhmm(best)}", "update_stop",
                                     {"stopId": stop.id, "setTime": to_hhmm(best)}))
        issue.movers = [(stop.id, range(len(day.stops)))]
        issues.append(issue)
    return issues


def _leg_rules(day: Day, legs: dict[tuple[str, str], Leg], prefs: TripPreferences) -> list[_Issue]:
    issues = []
    names = {s.id: s.name for s in day.stops}
    for (a, b), leg in legs.items():
        pair = f"{_q(names[a])} to {_q(names[b])}"
        if leg.mode in prefs.avoidModes:
            issue = _Issue("avoided_mode", "problem",
                           f"The trip avoids {leg.mode}, but the leg from {pair} is by {leg.mode}.", (a, b))
            rest = [m for m in prefs.avoidModes if m != leg.mode]
            issue.candidates.append((f"Allow {leg.mode} on this trip", "set_trip_preferences", {"avoidModes": rest}))
            issues.append(issue)
        elif leg.mode == "walk" and leg.distance_m > prefs.longestWalkM:
            issue = _Issue("long_walk", "warning",
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


def _pace(trip: Trip, day: Day, prefs: TripPreferences) -> list[_Issue]:
    visits = [s for s in day.stops if s.kind not in NOT_VISITS]
    limit = PACE_STOPS[prefs.pace]
    if len(visits) <= limit:
        return []
    issue = _Issue("pace", "warning",
                   f"This day has {len(visits)} stops; a {prefs.pace} pace holds {limit}.",
                   tuple(s.id for s in visits[limit:]))
    free = [s for s in visits if not s.set_time]
    following = trip.days[day.position + 1] if day.position + 1 < len(trip.days) else None
    if free and following is not None:
        last = free[-1]
        issue.candidates.append((f"Move {_q(last.name)} to Day {following.position + 1}", "move_stop",
                                 {"stopId": last.id, "toDayId": following.id, "position": len(following.stops)}))
    return [issue]


def _same_place(a, b) -> bool:
    if a.place_id and a.place_id == b.place_id:
        return True
    if a.name.strip().casefold() != b.name.strip().casefold() or not (_has_point(a) and _has_point(b)):
        return False
    return haversine_m(a.lat, a.lng, b.lat, b.lng) <= DUPLICATE_RADIUS_M


def _duplicates(day: Day) -> list[_Issue]:
    issues, seen = [], []
    for stop in day.stops:
        if stop.kind == "stay":   # starting and ending the day at the hotel is normal
            continue
        first = next((s for s in seen if _same_place(s, stop)), None)
        if first is None:
            seen.append(stop)
            continue
        issue = _Issue("duplicate", "warning",
                       f"{_q(stop.name)} is on this day twice.", (first.id, stop.id))
        issue.candidates.append((f"Remove the second {_q(stop.name)}", "delete_stop", {"stopId": stop.id}))
        issues.append(issue)
    return issues


def _project(points: list) -> list[tuple[float, float]]:
    lat0 = math.radians(sum(p.lat for p in points) / len(points))
    return [(p.lng * math.cos(lat0) * 111_320.0, p.lat * 110_540.0) for p in points]


def _orient(a, b, c) -> float:
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])


def _crosses(p1, p2, p3, p4) -> bool:
    """A proper crossing: the segments cut through each other (touching ends do not count)."""
    d1, d2 = _orient(p3, p4, p1), _orient(p3, p4, p2)
    d3, d4 = _orient(p1, p2, p3), _orient(p1, p2, p4)
    eps = 1e-6
    return ((d1 > eps and d2 < -eps) or (d1 < -eps and d2 > eps)) and \
           ((d3 > eps and d4 < -eps) or (d3 < -eps and d4 > eps))


def _backtracking(day: Day) -> list[_Issue]:
    stops = [s for s in day.stops if _has_point(s)]
    if len(stops) < 4:
        return []
    xy = _project(stops)
    index = {s.id: k for k, s in enumerate(day.stops)}
    issues = []
    for i in range(len(stops) - 1):
        for j in range(i + 2, len(stops) - 1):
            if not _crosses(xy[i], xy[i + 1], xy[j], xy[j + 1]):
                continue
            a, b, c, d = stops[i], stops[i + 1], stops[j], stops[j + 1]
            issue = _Issue("backtracking", "warning",
                           f"The route crosses back on itself: {_q(a.name)} → {_q(b.name)} crosses "
                           f"{_q(c.name)} → {_q(d.name)}.", (a.id, b.id, c.id, d.id))
            # Reordering inside the crossing (a 2-opt move when it is one stop) undoes it.
            ia, ib, ic, id_ = (index[x.id] for x in (a, b, c, d))
            window = range(ia, id_ + 1)
            issue.movers = [(s.id, window) for s in day.stops[ib:ic + 1] if not s.set_time]
            issues.append(issue)
    return issues


def _detect(trip: Trip, day: Day, legs: dict, prefs: TripPreferences, places: dict | None) -> list[_Issue]:
    """Every issue (uncapped, so fix verification compares like with like)."""
    slots = day_schedule(day, legs)
    return (_timing(day, slots) + _closed(trip, day, slots, places) + _leg_rules(day, legs, prefs)
            + _pace(trip, day, prefs) + _duplicates(day) + _backtracking(day))


# -- fix verification ---------------------------------------------------------------


def light_copy(trip: Trip, day_ids: Iterable[str] | None = None) -> Trip:
    """A copy that ops may mutate: new day objects and stop lists, new stop
    objects for `day_ids` (all days when None), new expense objects.

    Ops only change stops of the days they touch; `renumber` rewrites every
    stop's position and day, which for untouched days are the same values."""
    wanted = None if day_ids is None else set(day_ids)
    out = copy.copy(trip)
    out.days = [copy.copy(d) for d in trip.days]
    for d in out.days:
        d.stops = [copy.copy(s) for s in d.stops] if wanted is None or d.id in wanted else list(d.stops)
    out.expenses = [copy.copy(e) for e in trip.expenses]
    return out


class _Simulator:
    def __init__(self, trip: Trip, day: Day, known: dict, prefs: TripPreferences, places: dict | None,
                 original: set[tuple]):
        self.trip, self.day_id, self.known, self.prefs, self.places = trip, day.id, known, prefs, places
        self.original = original
        self.budget = MAX_SIMULATIONS
        # The simulated day and the next one (the pace fix moves a stop there).
        following = [d.id for d in trip.days if d.position == day.position + 1]
        self.touched = [day.id, *following]

    def outcome(self, op: str, args: dict) -> tuple[set[tuple], float] | None:
        """Keys found after applying the op, and the day's path length; None if it cannot apply."""
        if self.budget <= 0:
            return None
        self.budget -= 1
        trip = light_copy(self.trip, self.touched)
        try:
            TRIP_OPS[op].apply(trip, validate_args(op, args), _CTX)
            day = trip.day(self.day_id)
        except AppError:
            return None
        prefs = trip.prefs if op == "set_trip_preferences" else self.prefs
        known = {} if op == "set_trip_preferences" else self.known   # modes may change: estimate all
        legs = legs_for(day, known, prefs)
        keys = {i.key for i in _detect(trip, day, legs, prefs, self.places)}
        return keys, sum(l.distance_m for l in legs.values())

    def helps(self, issue: _Issue, op: str, args: dict) -> tuple[bool, float]:
        result = self.outcome(op, args)
        if result is None:
            return False, 0.0
        keys, length = result
        allowed = self.original - {issue.key}
        if issue.kind == "pace":
            allowed.add(issue.key)   # one stop at a time is progress; the finding may stay
        elif issue.key in keys:
            return False, length
        return keys <= allowed, length

    def best_move(self, issue: _Issue, day: Day) -> tuple[str, str, dict] | None:
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


# -- public API ---------------------------------------------------------------------


def _finding(trip: Trip, day: Day, issue: _Issue, fixes: list[tuple[str, str, dict]]) -> Finding:
    fid = "f_" + _hash(trip.id, day.id, issue.kind, sorted(issue.stop_ids))
    built = tuple(Fix("x_" + _hash(fid, op, args), label, op, args) for label, op, args in fixes)
    return Finding(fid, issue.kind, issue.severity, issue.message, issue.stop_ids, built, day.id)


def review_day(trip: Trip, day: Day, legs: Iterable[Leg], prefs: TripPreferences,
               places: dict[str, dict] | None = None, *, with_fixes: bool = True) -> ReviewResult:
    """The day's findings, worst first within the day's order of rules.

    `legs` are the day's legs as shown (TripDto); `places` maps a food stop's
    placeId to Google's place JSON for the hours rule (None: hours unknown,
    so the rule is silent)."""
    known = {(l.from_stop_id, l.to_stop_id): l for l in legs}
    current = legs_for(day, known, prefs)
    issues = _detect(trip, day, current, prefs, places)
    sim = _Simulator(trip, day, known, prefs, places, {i.key for i in issues})
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
                   legs_after: dict[str, list[Leg]] | None = None,
                   places: dict[str, dict] | None = None) -> list[Finding]:
    """Findings present after an edit that were not present before: new
    impossible timing, overlaps, closed restaurants, duplicates, backtracking,
    avoided modes or long walks, and budget inconsistencies (an expense whose
    stop was deleted, an expense in another currency than the trip's).

    Legs default to estimates (pure, no I/O) so this can run in an op listener;
    pass the shown legs per day id when you have them."""
    old_days = {d.id: d for d in before.days}
    changed = [d for d in after.days
               if d.id not in old_days or day_fingerprint(after, d) != day_fingerprint(before, old_days[d.id])]
    old_keys: set[tuple] = set()
    old_crossings: dict[str, int] = {}
    for d in changed:
        if d.id in old_days:
            found = review_day(before, old_days[d.id], (legs_before or {}).get(d.id, []), before.prefs, places,
                               with_fixes=False).findings
            old_keys |= {f.key for f in found}
            old_crossings[d.id] = sum(f.kind == "backtracking" for f in found)
    risks: list[Finding] = []
    for d in changed:
        found = review_day(after, d, (legs_after or {}).get(d.id, []), after.prefs, places).findings
        # A stop added on an existing crossing renames it; only more crossings are new.
        more_crossings = sum(f.kind == "backtracking" for f in found) > old_crossings.get(d.id, 0)
        risks += [f for f in found if f.kind in MATERIAL_KINDS and f.key not in old_keys
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

