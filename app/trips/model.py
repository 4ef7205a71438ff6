"""The Trip aggregate: a trip with its days, stops and expenses, in memory.

Ops (trips/ops.py) change it; store.py loads and saves it. Invariants that
span rows live here: positions are dense and 0-based, a stop belongs to one
day of its trip, expense splits name members of the trip.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from datetime import date, timedelta

from ..errors import Invalid, NotFound
from ..preferences import TripPreferences

DAY_START = "09:00"


@dataclass
class Stop:
    id: str
    day_id: str
    position: int
    kind: str
    name: str
    place_id: str | None = None
    lat: float | None = None
    lng: float | None = None
    address: str | None = None
    set_time: str | None = None
    duration_min: int = 60
    meal: str | None = None
    note: str = ""
    created_by: str | None = None
    created_at: str = ""


@dataclass
class Day:
    id: str
    position: int
    title: str = ""
    note: str = ""
    start_time: str | None = None
    stops: list[Stop] = field(default_factory=list)


@dataclass
class Expense:
    id: str
    title: str
    amount_minor: int
    currency: str
    paid_by: str
    split: dict  # {"kind": "equal", "members": [ids]} or {"kind": "shares", "shares": {id: n}}
    day_id: str | None = None
    stop_id: str | None = None
    created_by: str | None = None
    created_at: str = ""


@dataclass
class Trip:
    id: str
    title: str
    dest_name: str | None
    dest_lat: float | None
    dest_lng: float | None
    start_date: str
    timezone: str
    currency: str
    version: int
    created_by: str
    days: list[Day] = field(default_factory=list)
    expenses: list[Expense] = field(default_factory=list)
    member_ids: list[str] = field(default_factory=list)
    prefs: TripPreferences = field(default_factory=TripPreferences)

    def snapshot(self) -> Trip:
        return copy.deepcopy(self)

    # -- lookups ------------------------------------------------------------

    def day(self, day_id: str) -> Day:
        for d in self.days:
            if d.id == day_id:
                return d
        raise NotFound(f"No day {day_id} in this trip", code="day_not_found")

    def stop(self, stop_id: str) -> tuple[Day, Stop]:
        for d in self.days:
            for s in d.stops:
                if s.id == stop_id:
                    return d, s
        raise NotFound(f"No stop {stop_id} in this trip", code="stop_not_found")

    def expense(self, expense_id: str) -> Expense:
        for e in self.expenses:
            if e.id == expense_id:
                return e
        raise NotFound(f"No expense {expense_id} in this trip", code="expense_not_found")

    def day_date(self, day: Day) -> str | None:
        """The day's ISO date; None when it cannot be represented (a start date
        stored before dates were bounded), so such a trip still loads."""
        try:
            return (date.fromisoformat(self.start_date) + timedelta(days=day.position)).isoformat()
        except (OverflowError, ValueError):
            return None

    def all_stops(self):
        for d in self.days:
            yield from d.stops

    # -- invariants ---------------------------------------------------------

    def renumber(self) -> None:
        for i, d in enumerate(self.days):
            d.position = i
            for j, s in enumerate(d.stops):
                s.position = j
                s.day_id = d.id

    def require_member(self, user_id: str, field_name: str) -> None:
        if user_id not in self.member_ids:
            raise Invalid(f"{field_name}: {user_id} is not a member of this trip", field=field_name)
