"""A day's status from plain rules (no model), each finding with the fixes
the server computed as exact registry ops.

The rules (rules.py and its neighbours) find issues on a day's facts
(issues.py: `DayFacts`, `PlaceBook`); the fix search (fixes.py) keeps only
the fixes that verifiably help; this module turns issues into findings
(`review_day`) and compares two versions of a trip (`material_risks`).

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

from ..legs import Leg, by_pair, legs_for
from ..preferences import TripPreferences
from ..trips.model import Day, Trip
from .fixes import FixSearch
from .issues import Candidate, Issue, Json, Key, PlaceBook, issue_key, quote as _q
from .rules import detect

MAX_CROSSINGS = 3                         # a path crossing itself more often needs Optimize, not a list
MATERIAL_KINDS = {"unreachable", "overlap", "closed", "weather", "duplicate", "backtracking", "avoided_mode",
                  "long_walk", "expense_unlinked", "currency_mismatch"}


@dataclass(frozen=True)
class Fix:
    id: str
    label: str
    op: str
    args: Json

    def to_json(self) -> Json:
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
    def key(self) -> Key:
        return issue_key(self.kind, self.stop_ids, self.day_id)

    @property
    def material(self) -> bool:
        """A risk the trip agent may speak up about (observations never are)."""
        return self.kind in MATERIAL_KINDS and self.severity != "info"

    def to_json(self) -> Json:
        return {"id": self.id, "kind": self.kind, "severity": self.severity, "message": self.message,
                "stopIds": list(self.stop_ids), "fixes": [f.to_json() for f in self.fixes]}


@dataclass(frozen=True)
class ReviewResult:
    status: str               # "ok" | "warning" | "problem"
    findings: tuple[Finding, ...]

    def to_json(self) -> Json:
        return {"status": self.status, "findings": [f.to_json() for f in self.findings]}


def _hash(*parts: Any) -> str:
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]



def _finding(trip: Trip, day: Day, issue: Issue, fixes: list[Candidate]) -> Finding:
    fid = "f_" + _hash(trip.id, day.id, issue.kind, sorted(issue.stop_ids))
    built = tuple(Fix("x_" + _hash(fid, op, args), label, op, args) for label, op, args in fixes)
    return Finding(fid, issue.kind, issue.severity, issue.message, issue.stop_ids, built, day.id)


def review_day(trip: Trip, day: Day, legs: Iterable[Leg], prefs: TripPreferences,
               places: dict[str, Json] | None = None, *, weather: dict[str, Json] | None = None,
               trip_legs: dict[str, list[Leg]] | None = None, with_fixes: bool = True,
               book: PlaceBook | None = None) -> ReviewResult:
    """The day's findings, worst first within the day's order of rules. Pure.

    `legs` are the day's legs as shown (TripDto); `places` maps a stop's
    placeId to its place JSON (Google, or OpenStreetMap with `source: osm`)
    for the hours and weather rules (None or missing: unknown, so those rules
    are silent for it); `weather` maps a date to app.providers.weather's day (forecast
    or typical; None: the weather rule is silent); `trip_legs` are the other
    days' shown legs (day id -> legs) for fixes that move a stop there
    (estimated when missing). `book` may carry hours already computed."""
    known = by_pair(legs)
    book = book or PlaceBook(places)
    issues = detect(trip, day, legs_for(day, known, prefs), prefs, book, weather)
    search = FixSearch(trip, day, known, prefs, book, weather, trip_legs or {}, {i.key for i in issues})
    crossings = [i for i in issues if i.kind == "backtracking"]
    shown = [i for i in issues if i.kind != "backtracking" or i in crossings[:MAX_CROSSINGS]]
    findings = [_finding(trip, day, issue, search.fixes_for(issue) if with_fixes else []) for issue in shown]
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
                   legs_after: dict[str, list[Leg]] | None = None, places: dict[str, Json] | None = None,
                   weather: dict[str, Json] | None = None) -> list[Finding]:
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
    old_keys: set[Key] = set()
    old_crossings: dict[str, int] = {}
    for d in changed:
        if d.id in old_days:
            found = [f for f in review_day(before, old_days[d.id], (legs_before or {}).get(d.id, []), before.prefs,
                                           weather=weather, with_fixes=False, book=book).findings if f.material]
            old_keys |= {f.key for f in found}
            old_crossings[d.id] = sum(f.kind == "backtracking" for f in found)
    risks: list[Finding] = []
    for d in changed:
        now = review_day(after, d, (legs_after or {}).get(d.id, []), after.prefs, weather=weather,
                         trip_legs=legs_after, book=book).findings
        # A stop added on an existing crossing renames it; only more crossings are new.
        more_crossings = sum(f.kind == "backtracking" for f in now) > old_crossings.get(d.id, 0)
        risks += [f for f in now if f.material and f.key not in old_keys
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
