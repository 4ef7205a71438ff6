"""What the review rules share: the facts of the day under review and the raw
result of a rule (an `Issue`: what is wrong, about which stops). The rules
are listed in rules.py; fixes.py searches and verifies the fixes (the
candidates come from remedies.py) and findings.py turns issues into
findings."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date as Date
from typing import Any
from collections.abc import Iterable

from ..hours.rules import DayHours, HoursCheck, buffer_for, fit, hours_on, on_date
from ..legs import Leg, haversine_m
from ..preferences import TripPreferences
from ..trips.model import Day, Stop, Trip
from ..trips.schedule import Slot
from .outdoor import is_outdoor

NOT_VISITS = ("stay", "transit")          # a hotel or a transfer is not a visit (pace, swaps)

Json = dict[str, Any]              # a place's or a day's JSON, an op's args
Key = tuple[Any, ...]              # what an issue is about: kind and stops (or day)
Legs = dict[tuple[str, str], Leg]  # (from stop id, to stop id) -> leg
Edits = tuple[tuple[str, Json], ...]   # a fix: registry ops applied together


def has_point(s: Stop) -> bool:
    return s.lat is not None and s.lng is not None


def meters_between(a: Stop, b: Stop) -> float:
    """Straight-line metres between two stops that both have a point."""
    assert a.lat is not None and a.lng is not None and b.lat is not None and b.lng is not None
    return haversine_m(a.lat, a.lng, b.lat, b.lng)


def quote(name: str) -> str:
    return f"“{name}”"


DAY_WIDE = ("pace", "backtracking")   # one finding per day: the problem is the day's, whichever stops show it


SAME_PROBLEM = {"overlap": "late", "unreachable": "late"}   # a set time not met, whichever way it is missed


def issue_key(kind: str, stop_ids: Iterable[str], day_id: str | None) -> Key:
    # The pace and the path are about the day, not about which stops happen
    # to be last or to cross; a set time missed is one problem whether the
    # stop before overruns it or the trip from there does.
    if kind in DAY_WIDE:
        return kind, day_id
    return SAME_PROBLEM.get(kind, kind), tuple(sorted(stop_ids))


def search_keys(issues: Iterable[Issue]) -> set[Key]:
    """What the fix search compares (a day's issues before and after a fix):
    each issue's key, and for a path that crosses itself one key per
    crossing, so that a fix may not make a crossing path cross more often
    (material_risks and added_findings count that as new too)."""
    out: set[Key] = set()
    for issue in issues:
        out.add(issue.key)
        if issue.kind == "backtracking":
            out.update(("crossing", n) for n in range(1, issue.count + 1))
    return out


@dataclass
class Issue:
    """A rule's raw result: what is wrong, about which stops. The fix search
    (fixes.py, remedies.py) works out what could clear it."""

    kind: str
    severity: str             # "problem" | "warning" | "info" (an observation, never material)
    message: str
    stop_ids: tuple[str, ...]
    subject: str | None = None   # the stop a remedy acts on first (a closed stop, a late meal, a set time)
    detail: Json = field(default_factory=dict)   # what remedies need to know (the leg's mode, the crossings...)
    count: int = 1               # how many times the problem occurs (path crossings)

    @property
    def key(self) -> Key:
        return issue_key(self.kind, self.stop_ids, None)


CLOSED_FOR_GOOD = DayHours("confirmed", ())


def permanently_closed(raw: Json | None) -> bool:
    """A place Google lists as closed for good: it may still list its old hours."""
    return isinstance(raw, dict) and raw.get("businessStatus") == "CLOSED_PERMANENTLY"


class PlaceBook:
    """What the rules read from places (hours per date, outdoor or not),
    computed once per review: fix simulations ask about the same places again
    and again."""

    def __init__(self, places: dict[str, Json] | None):
        self.places = places or {}
        self._memo: dict[tuple[str, Date, bool], DayHours | None] = {}
        self._outdoor: dict[str, bool] = {}
        self._dates: dict[tuple[str, int], tuple[Date, int]] = {}

    def raw(self, stop: Stop) -> Json | None:
        return self.places.get(stop.place_id) if stop.place_id else None

    def outdoor(self, stop: Stop) -> bool:
        if not stop.place_id:
            return False
        if stop.place_id not in self._outdoor:
            self._outdoor[stop.place_id] = is_outdoor(self.raw(stop))
        return self._outdoor[stop.place_id]

    def gone(self, stop: Stop) -> bool:
        """Whether the stop's place has closed for good (Google's businessStatus)."""
        return permanently_closed(self.raw(stop))

    def hours(self, stop: Stop, day: Date) -> DayHours | None:
        """The stop's place's hours seen from `day` (meal rule for food stops);
        a place closed for good is closed every day, whatever hours it still lists."""
        meal = stop.kind == "food"
        key = (stop.place_id or "", day, meal)
        if key not in self._memo:
            raw = self.raw(stop)
            self._memo[key] = None if raw is None else CLOSED_FOR_GOOD if permanently_closed(raw) else \
                hours_on(raw, day, meal=meal)
        return self._memo[key]

    def check(self, stop: Stop, date: str, minutes: int) -> HoursCheck | None:
        """The stop's rule at `minutes` after `date`'s midnight; None without place data."""
        if self.raw(stop) is None:
            return None
        day, at = self._on_date(date, minutes)
        return fit(self.hours(stop, day), at, stop.duration_min, buffer_for(stop.kind == "food"))

    def fits(self, stop: Stop, date: str, minutes: int) -> bool | None:
        """The same rule, only whether it fits (None: no place data or no
        hours, never a finding): the cheap question every simulation asks."""
        if self.raw(stop) is None:
            return None
        day, at = self._on_date(date, minutes)
        hours = self.hours(stop, day)
        if hours is None:
            return None
        end = at + stop.duration_min + buffer_for(stop.kind == "food")
        return any(o <= at and end <= c for o, c in hours.spans)

    def _on_date(self, date: str, minutes: int) -> tuple[Date, int]:
        key = (date, minutes // (24 * 60))
        if key not in self._dates:
            self._dates[key] = on_date(date, key[1] * 24 * 60)[0], 0
        return self._dates[key][0], minutes % (24 * 60)


@dataclass
class DayFacts:
    """One day of a (possibly simulated) trip, timed, with what the rules read."""

    trip: Trip
    day: Day
    slots: list[Slot]
    legs: Legs
    prefs: TripPreferences
    book: PlaceBook
    weather: dict[str, Json] | None         # date -> app.providers.weather day (forecast or typical)
    # A fix simulation only compares which findings there are: rules may skip
    # what only a shown finding needs (its words, its details).
    keys_only: bool = False

    @property
    def date(self) -> str:
        return self.trip.dated(self.day)
