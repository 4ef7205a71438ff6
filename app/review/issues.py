"""What the review rules share: the facts of the day under review and the raw
result of a rule (an `Issue`: what is wrong and which fixes might help). The
rules are listed in rules.py; fixes.py verifies the fixes and findings.py
turns issues into findings."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date as Date
from typing import Any
from collections.abc import Callable, Iterable, Sequence

from ..hours.rules import DayHours, HoursCheck, buffer_for, first_start, fit, hours_on, on_date
from ..legs import Leg, haversine_m
from ..preferences import TripPreferences
from ..trips.model import Day, Stop, Trip
from ..trips.schedule import Slot
from .outdoor import is_outdoor

NOT_VISITS = ("stay", "transit")          # a hotel or a transfer is not a visit (pace, swaps)
_UNSET = object()


Json = dict[str, Any]              # a place's or a day's JSON, a fix's op args
Key = tuple[Any, ...]              # what an issue is about: kind and stops (or day)
Candidate = tuple[str, str, Json]  # a fix to try: (label, op, args)
Legs = dict[tuple[str, str], Leg]  # (from stop id, to stop id) -> leg


def has_point(s: Stop) -> bool:
    return s.lat is not None and s.lng is not None


def meters_between(a: Stop, b: Stop) -> float:
    """Straight-line metres between two stops that both have a point."""
    assert a.lat is not None and a.lng is not None and b.lat is not None and b.lng is not None
    return haversine_m(a.lat, a.lng, b.lat, b.lng)


def quote(name: str) -> str:
    return f"“{name}”"


def issue_key(kind: str, stop_ids: Iterable[str], day_id: str | None) -> Key:
    # The pace finding is about the day, not about which stops happen to be last.
    return (kind, day_id) if kind == "pace" else (kind, tuple(sorted(stop_ids)))


@dataclass(frozen=True)
class Elsewhere:
    """Fixes on other days for one stop: move it to the first of `day_ids`
    (in the order given) where it verifiably fits, and, with `swap`, swap it
    with an indoor visit of the first such day where that verifiably helps."""

    stop_id: str
    day_ids: tuple[str, ...]
    swap: bool = False


@dataclass
class Issue:
    """A rule's raw result: what is wrong and which fixes might help."""

    kind: str
    severity: str             # "problem" | "warning" | "info" (an observation, never material)
    message: str
    stop_ids: tuple[str, ...]
    candidates: list[Candidate] = field(default_factory=list)  # (label, op, args)
    # Stops worth trying at other positions of the day: (stop id, the positions to try).
    movers: list[tuple[str, Sequence[int]]] = field(default_factory=list)
    elsewhere: list[Elsewhere] = field(default_factory=list)

    @property
    def key(self) -> Key:
        return issue_key(self.kind, self.stop_ids, None)


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

    def hours(self, stop: Stop, day: Date) -> DayHours | None:
        """The stop's place's hours seen from `day` (meal rule for food stops)."""
        meal = stop.kind == "food"
        key = (stop.place_id or "", day, meal)
        if key not in self._memo:
            raw = self.raw(stop)
            self._memo[key] = None if raw is None else hours_on(raw, day, meal=meal)
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

    def fits_around(self, stop: Stop, date: str, minutes: int, slack: int) -> bool:
        """Whether the stop's rule allows a start within `slack` minutes of
        `minutes` (a cheap filter before a full simulation); True without hours."""
        if self.raw(stop) is None:
            return True
        day, at = self._on_date(date, minutes)
        hours = self.hours(stop, day)
        return hours is None or first_start(hours, at - slack, stop.duration_min, buffer_for(stop.kind == "food"),
                                             step=1, last=min(at + slack, 24 * 60 - 1)) is not None


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
    # preparing fixes (their candidates, movers and other days).
    keys_only: bool = False

    @property
    def date(self) -> str:
        return self.trip.dated(self.day)

    def positions_where(self, stop: Stop, start_ok: Callable[[int], bool], most: int = 4) -> list[int]:
        """Positions in the day worth simulating for moving `stop` (at most
        `most`, the nearest first: the smallest change to the day): those
        where its start, roughly (the end of the stop it would follow, less its
        own length when that stop comes later today), passes `start_ok`."""
        stops, here = self.day.stops, self.day.stops.index(stop)
        out = []
        for position in range(len(stops)):
            if position == here:
                continue
            before = position - 1 if position <= here else position     # the stop it would follow
            if before < 0:
                start = self.slots[0].start
            else:
                start = self.slots[before].end - (stop.duration_min if before > here else 0)
            if start_ok(start):
                out.append(position)
        return sorted(out, key=lambda p: (abs(p - here), p))[:most]
