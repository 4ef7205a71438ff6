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

import functools
import hashlib
import json
from dataclasses import dataclass
from typing import Any
from collections.abc import Iterable

from ..hours.rules import hours_on, on_date
from ..legs import Leg, by_pair, legs_for
from ..preferences import TripPreferences
from ..trips.model import Day, Trip
from ..trips.schedule import Slot, date_label, day_schedule
from .fixes import FixSearch, SearchResult
from .issues import DAY_WIDE, NOT_VISITS, Edits, Issue, Json, Key, PlaceBook, issue_key, search_keys
from .issues import quote as _q
from .remedies import strategies_for
from .why_not import no_fix_reason
from .rules import detect

MATERIAL_KINDS = {"unreachable", "overlap", "closed", "weather", "duplicate", "backtracking", "avoided_mode",
                  "long_walk", "expense_unlinked", "currency_mismatch"}


@dataclass(frozen=True)
class Fix:
    id: str
    label: str
    edits: Edits

    @property
    def op(self) -> str | None:
        """The op of a one-edit fix (the form older readers know); None for several."""
        return self.edits[0][0] if len(self.edits) == 1 else None

    @property
    def args(self) -> Json | None:
        return self.edits[0][1] if len(self.edits) == 1 else None

    def to_json(self) -> Json:
        out: Json = {"id": self.id, "label": self.label,
                     "edits": [{"op": op, "args": args} for op, args in self.edits]}
        if len(self.edits) == 1:
            out["op"], out["args"] = self.edits[0]
        return out


@dataclass(frozen=True)
class Finding:
    id: str
    kind: str
    severity: str             # "problem" | "warning" | "info" (an observation: not material, no toast)
    message: str
    stop_ids: tuple[str, ...]
    fixes: tuple[Fix, ...] = ()
    day_id: str | None = None
    no_fix_reason: str | None = None   # plain words, when there is no fix
    count: int = 1                     # how often the problem occurs (path crossings)

    @property
    def key(self) -> Key:
        return issue_key(self.kind, self.stop_ids, self.day_id)

    @property
    def material(self) -> bool:
        """A risk the trip agent may speak up about (observations never are)."""
        return self.kind in MATERIAL_KINDS and self.severity != "info"

    def to_json(self) -> Json:
        out: Json = {"id": self.id, "kind": self.kind, "severity": self.severity, "message": self.message,
                     "stopIds": list(self.stop_ids), "fixes": [f.to_json() for f in self.fixes]}
        if self.day_id is not None:
            out["dayId"] = self.day_id
        if self.no_fix_reason and not self.fixes:
            out["noFixReason"] = self.no_fix_reason
        return out


@dataclass(frozen=True)
class ReviewResult:
    status: str               # "ok" | "warning" | "problem"
    findings: tuple[Finding, ...]
    not_checked: tuple[Json, ...] = ()   # checks that could not run: [{check, message, stopIds?}]

    def to_json(self) -> Json:
        return {"status": self.status, "findings": [f.to_json() for f in self.findings],
                "notChecked": list(self.not_checked)}


def _hash(*parts: Any) -> str:
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def fix_id(finding_id: str, edits: Edits) -> str:
    # A one-edit fix keeps the id it always had (finding, op, args).
    if len(edits) == 1:
        return "x_" + _hash(finding_id, edits[0][0], edits[0][1])
    return "x_" + _hash(finding_id, [[op, args] for op, args in edits])


def _finding(trip: Trip, day: Day, issue: Issue, result: SearchResult | None) -> Finding:
    fid = "f_" + _hash(trip.id, day.id, issue.kind,
                       [] if issue.kind in DAY_WIDE else sorted(issue.stop_ids))
    fixes = tuple(Fix(fix_id(fid, c.edits), c.label, c.edits) for c in (result.fixes if result else []))
    return Finding(fid, issue.kind, issue.severity, issue.message, issue.stop_ids, fixes, day.id,
                   result.no_fix_reason if result else None, issue.count)


def review_day(trip: Trip, day: Day, legs: Iterable[Leg], prefs: TripPreferences,
               places: dict[str, Json] | None = None, *, weather: dict[str, Json] | None = None,
               trip_legs: dict[str, list[Leg]] | None = None, with_fixes: bool = True,
               book: PlaceBook | None = None, alternatives: dict[str, list[Json]] | None = None,
               unreadable: frozenset[str] = frozenset()) -> ReviewResult:
    """The day's findings, worst first within the day's order of rules. Pure.

    `legs` are the day's legs as shown (TripDto); `places` maps a stop's
    placeId to its place JSON (Google, or OpenStreetMap with `source: osm`)
    for the hours and weather rules (None: no places provider; missing: not
    known, so those rules are silent for it and the result says what could
    not be checked); `weather` maps a date to app.providers.weather's day
    (forecast or typical; None: unknown, likewise); `trip_legs` are the other
    days' shown legs (day id -> legs) for fixes that move a stop there
    (estimated when missing). `book` may carry hours already computed.
    `alternatives` (stop id -> places nearby serving the same meal, each
    {placeId, name, lat, lng, address?, raw}) lets a fix replace a meal
    when nothing else works. `unreadable`: place ids the provider could not
    answer for just now (their hours are not checked, and it says why)."""
    known = by_pair(legs)
    if alternatives:
        places = {**(places or {}), **{a["placeId"]: a["raw"] for alts in alternatives.values() for a in alts}}
        book = None
    book = book or PlaceBook(places)
    shown = legs_for(day, known, prefs)
    issues = detect(trip, day, shown, prefs, book, weather)
    search = FixSearch(trip, day, known, prefs, book, weather, trip_legs or {}, search_keys(issues),
                       alternatives)
    # An observation (`info`) has nothing to fix: no search, so no reason why one found nothing either.
    findings = [_finding(trip, day, issue, search.fixes_for(issue, strategies_for(search, issue),
                                                             functools.partial(no_fix_reason, search, issue))
                         if with_fixes and issue.severity != "info" else None) for issue in issues]
    return ReviewResult(_status(findings), tuple(findings),
                        not_checked(trip, day, places, weather, day_schedule(day, shown), unreadable))


def not_checked(trip: Trip, day: Day, places: dict[str, Json] | None,
                weather: dict[str, Json] | None, slots: Iterable[Slot] = (),
                unreadable: frozenset[str] = frozenset()) -> tuple[Json, ...]:
    """The checks that could not run on this day, in plain words: opening
    hours of stops whose place (or its hours) is unknown, and the weather
    when it could not be read. A day that could not be checked never looks
    fine by default. A stop's hours are judged on the date it starts on, as
    the `closed` rule checks them (past midnight: the next date); `slots`
    give the starts (a stop without one counts from the day's midnight)."""
    out = []
    starts = {slot.stop_id: slot.start for slot in slots}
    date = trip.day_date(day)
    visits = [s for s in day.stops if s.kind not in NOT_VISITS]
    unknown = [s for s in visits if s.place_id and (places is None or _no_hours(places.get(s.place_id), date,
                                                                                 starts.get(s.id, 0)))]
    # A place the provider could not answer for just now may well list hours: not "none are known".
    unread = [s for s in unknown if places is not None and s.place_id in unreadable]
    unread_ids = {s.id for s in unread}
    for stops, why in ((unread, "its place could not be read just now" if len(unread) == 1 else
                        "their places could not be read just now"),
                       ([s for s in unknown if s.id not in unread_ids],
                        "no place data could be read" if places is None else "no opening hours are known")):
        if stops:
            names = ", ".join(_q(s.name) for s in stops[:3]) + (f" and {len(stops) - 3} more"
                                                               if len(stops) > 3 else "")
            out.append({"check": "hours", "stopIds": [s.id for s in stops],
                        "message": f"Opening hours not checked for {names}: {why}."})
    if visits and (weather is None or trip.dated(day) not in weather):
        # Without a destination there is no place to ask the forecast for: say what would help.
        why = "the trip has no destination set" if trip.dest_lat is None or trip.dest_lng is None else \
            "the forecast could not be read"
        out.append({"check": "weather", "stopIds": [],
                    "message": f"Weather not checked for {date_label(trip.dated(day))}: {why}."})
    return tuple(out)


def _no_hours(raw: Json | None, date: str | None, start: int) -> bool:
    return raw is None or date is None or hours_on(raw, on_date(date, start)[0], meal=False) is None


def added_findings(before: Trip, after: Trip, day_id: str, *, legs_before: Iterable[Leg], legs_after: Iterable[Leg],
                   places: dict[str, Json] | None = None, weather: dict[str, Json] | None = None) -> list[Finding]:
    """The warnings and problems a change adds to one day (observations
    aside): what a planner suggestion or draft must never bring. The same
    rules as the review, on the legs each side shows."""
    book = PlaceBook(places)
    old_day = next(d for d in before.days if d.id == day_id)
    new_day = next(d for d in after.days if d.id == day_id)
    old = [f for f in review_day(before, old_day, legs_before, before.prefs, weather=weather, with_fixes=False,
                                 book=book).findings if f.severity != "info"]
    new = review_day(after, new_day, legs_after, after.prefs, weather=weather, with_fixes=False, book=book).findings
    old_keys = {f.key for f in old}
    crossings = sum(f.count for f in old if f.kind == "backtracking")
    return [f for f in new if f.severity != "info" and (
        f.key not in old_keys or (f.kind == "backtracking" and f.count > crossings))]


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
            old_crossings[d.id] = sum(f.count for f in found if f.kind == "backtracking")
    risks: list[Finding] = []
    for d in changed:
        now = review_day(after, d, (legs_after or {}).get(d.id, []), after.prefs, weather=weather,
                         trip_legs=legs_after, book=book).findings
        # The path's one finding is new when it crosses itself more often than before.
        more_crossings = sum(f.count for f in now if f.kind == "backtracking") > old_crossings.get(d.id, 0)
        risks += [f for f in now if f.material and (f.key not in old_keys or f.kind == "backtracking")
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
            edits = (("delete_expense", {"expenseId": e.id}),)
            fix = Fix(fix_id(fid, edits), f"Delete the expense {_q(e.title)}", edits)
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
