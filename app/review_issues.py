"""What the review rules share: the facts of the day under review and the raw
result of a rule (an `Issue`: what is wrong and which fixes might help). The
rules live in app/review.py (timing, legs, pace, duplicates, path),
app/review_hours.py (opening hours, meal times) and app/review_weather.py;
app/review.py verifies the fixes and turns issues into findings."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date as Date
from typing import Iterable

from .hours import DayHours, HoursCheck, buffer_for, fit, hours_on, on_date
from .preferences import TripPreferences
from .trips.model import Day, Stop, Trip
from .trips.schedule import Slot

NOT_VISITS = ("stay", "transit")          # a hotel or a transfer is not a visit (pace, swaps)
_UNSET = object()


def quote(name: str) -> str:
    return f"“{name}”"


def issue_key(kind: str, stop_ids: Iterable[str], day_id: str | None) -> tuple:
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
    candidates: list[tuple[str, str, dict]] = field(default_factory=list)  # (label, op, args)
    # Stops worth trying at other positions of the day: (stop id, the positions to try).
    movers: list[tuple[str, range]] = field(default_factory=list)
    elsewhere: list[Elsewhere] = field(default_factory=list)

    @property
    def key(self) -> tuple:
        return issue_key(self.kind, self.stop_ids, None)


class HoursBook:
    """Each place's hours per date, computed once per review: fix simulations
    check the same places again and again."""

    def __init__(self, places: dict[str, dict] | None):
        self.places = places or {}
        self._memo: dict[tuple[str, Date, bool], DayHours | None] = {}

    def raw(self, stop: Stop) -> dict | None:
        return self.places.get(stop.place_id) if stop.place_id else None

    def hours(self, stop: Stop, day: Date) -> DayHours | None:
        """The stop's place's hours seen from `day` (meal rule for food stops)."""
        meal = stop.kind == "food"
        key = (stop.place_id, day, meal)
        found = self._memo.get(key, _UNSET)
        if found is _UNSET:
            raw = self.raw(stop)
            found = self._memo[key] = None if raw is None else hours_on(raw, day, meal=meal)
        return found  # type: ignore[return-value]

    def check(self, stop: Stop, date: str, minutes: int) -> HoursCheck | None:
        """The stop's rule at `minutes` after `date`'s midnight; None without place data."""
        if self.raw(stop) is None:
            return None
        day, at = on_date(date, minutes)
        return fit(self.hours(stop, day), at, stop.duration_min, buffer_for(stop.kind == "food"))


@dataclass
class DayFacts:
    """One day of a (possibly simulated) trip, timed, with what the rules read."""

    trip: Trip
    day: Day
    slots: list[Slot]
    legs: dict                              # (from id, to id) -> Leg
    prefs: TripPreferences
    book: HoursBook
    weather: dict[str, dict] | None         # date -> app.weather day (forecast or typical)

    @property
    def date(self) -> str:
        return self.trip.day_date(self.day)
