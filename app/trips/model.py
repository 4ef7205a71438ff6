"""The Trip aggregate: a trip with its days, stops and expenses, in memory.

Ops (trips/ops.py) change it; store.py loads and saves it. Invariants that
span rows live here: positions are dense and 0-based, a stop belongs to one
day of its trip, expense splits name members of the trip.

A trip in memory (app/trips/state.py) is shared by every reader and never
changes. `edit()` gives the copy an op changes: its own lists of days and
expenses, while the days, their stop lists, stops and expenses stay shared
until an op reaches them through `day()`, `stop()`, `expense()`,
`renumber()` or `unlink_expenses()`, which copy them first (copy on write).
So an op costs what it touches, a failed op leaves the shared trip as it
was, and what differs from the original is what is not the same object
(store.write_changes, the TripDto's day parts). Ops therefore reach days,
stops and expenses only through these methods.
"""

from __future__ import annotations

import functools
import operator
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar, cast
from collections.abc import Callable, Iterator, Set
from datetime import date, timedelta

from ..errors import Invalid, NotFound
from ..preferences import TripPreferences

DAY_START = "09:00"
T = TypeVar("T")


def _shallow(obj: T) -> T:
    """A shallow copy of a dataclass instance (copy.copy, several times faster)."""
    copier = _slots_copier(type(obj))   # type: ignore[arg-type]   # a class is hashable
    if copier is not None:
        return cast(T, copier(obj))
    out = object.__new__(type(obj))
    out.__dict__.update(obj.__dict__)
    return out


@functools.cache
def _slots_copier(cls: type) -> Callable[[Any], Any] | None:
    """For a dataclass with slots (Stop, Day): its constructor called with
    every field read at once (0.7 us a stop; setting 15 slots one by one
    took 3.5). Every field is an __init__ argument, in slot order."""
    slots = getattr(cls, "__slots__", None)
    if slots is None:
        return None
    if [f.name for f in fields(cls) if f.init] != list(slots) or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: a copied dataclass with slots takes every field in __init__")
    read = operator.attrgetter(*slots)
    return lambda obj: cls(*read(obj))


@dataclass(slots=True)   # a large trip keeps hundreds in memory: no __dict__ each
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


@dataclass(slots=True)
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
    split: dict[str, Any]  # {"kind": "equal", "members": [ids]} or {"kind": "shares", "shares": {id: n}}
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
    # Whether the trip's members chose its shared preferences (else they are
    # the defaults, and a member's own usual transport stands in for them:
    # app.preferences.effective).
    prefs_set: bool = False
    # Set on an edit copy: the ids (id()) of the stop lists, stops and
    # expenses it owns; None on a trip that is changed in place.
    _owned: set[int] | None = field(default=None, repr=False, compare=False)

    def edit(self) -> Trip:
        """A copy for ops to change, sharing everything they do not touch."""
        out = _shallow(self)
        out.days = list(self.days)
        out.expenses = list(self.expenses)
        out._owned = set()
        return out

    def seal(self) -> None:
        """The edit is done: from now on it is shared (the next op edits a
        copy of it), so its methods no longer copy anything."""
        self._owned = None

    def _own(self, obj: T) -> T:
        """`obj` if this copy may change it, else its copy (the caller puts it in place)."""
        if self._owned is None or id(obj) in self._owned:
            return obj
        copy = cast(T, list(obj)) if isinstance(obj, list) else _shallow(obj)
        self._owned.add(id(copy))
        return copy

    def _own_day(self, i: int) -> Day:
        """The day at `i`, put in place as this copy's own, with its own stop list."""
        day = self.days[i] = self._own(self.days[i])
        day.stops = self._own(day.stops)
        return day

    # -- lookups ------------------------------------------------------------

    def day(self, day_id: str) -> Day:
        for i, d in enumerate(self.days):
            if d.id == day_id:
                return self._own_day(i)
        raise NotFound(f"No day {day_id} in this trip", code="day_not_found")

    def stop(self, stop_id: str) -> tuple[Day, Stop]:
        for i, d in enumerate(self.days):
            for j, s in enumerate(d.stops):
                if s.id == stop_id:
                    d = self._own_day(i)
                    d.stops[j] = s = self._own(s)
                    return d, s
        raise NotFound(f"No stop {stop_id} in this trip", code="stop_not_found")

    def expense(self, expense_id: str) -> Expense:
        for i, e in enumerate(self.expenses):
            if e.id == expense_id:
                self.expenses[i] = e = self._own(e)
                return e
        raise NotFound(f"No expense {expense_id} in this trip", code="expense_not_found")

    def day_date(self, day: Day) -> str | None:
        """The day's ISO date; None when it cannot be represented (a start date
        stored before dates were bounded), so such a trip still loads."""
        try:
            return (date.fromisoformat(self.start_date) + timedelta(days=day.position)).isoformat()
        except (OverflowError, ValueError):
            return None

    def dated(self, day: Day) -> str:
        """The day's ISO date for rules that need one (the review, drafts); a
        trip whose dates cannot be represented gets a 422 naming its start date."""
        found = self.day_date(day)
        if found is None:
            raise Invalid("startDate: this trip's dates are out of range; change its start date",
                          field="startDate")
        return found

    def all_stops(self) -> Iterator[Stop]:
        for d in self.days:
            yield from d.stops

    # -- invariants ---------------------------------------------------------

    def renumber(self) -> None:
        """Dense positions again. Only days whose stop list an op reached can
        have stops out of place; the others keep theirs (and stay shared)."""
        for i, d in enumerate(self.days):
            if d.position != i:
                d = self.days[i] = self._own(d)
                d.position = i
            if self._owned is not None and id(d.stops) not in self._owned:
                continue
            for j, s in enumerate(d.stops):
                if s.position != j or s.day_id != d.id:
                    d.stops[j] = s = self._own(s)
                    s.position, s.day_id = j, d.id

    def unlink_expenses(self, day_id: str | None = None, stop_ids: Set[str] = frozenset()) -> None:
        """Expenses keep their amounts when their day or stop goes; the link is cleared."""
        for i, e in enumerate(self.expenses):
            if (day_id is not None and e.day_id == day_id) or e.stop_id in stop_ids:
                self.expenses[i] = e = self._own(e)
                if day_id is not None and e.day_id == day_id:
                    e.day_id = None
                if e.stop_id in stop_ids:
                    e.stop_id = None

    def follow_stop(self, stop: Stop) -> None:
        """Expenses tied to `stop` and a day move to the stop's day with it: an
        expense "on Day 1, at the museum" would otherwise name a day the museum
        is no longer on."""
        for i, e in enumerate(self.expenses):
            if e.stop_id == stop.id and e.day_id is not None and e.day_id != stop.day_id:
                self.expenses[i] = e = self._own(e)
                e.day_id = stop.day_id

    def hand_expenses(self, from_stop_id: str, to: Stop) -> None:
        """The expenses for one stop are for `to` from now on: a place replaced
        by another for the same purpose (a closed restaurant's dinner) takes
        its expenses, where a removal alone would leave them for no stop."""
        for i, e in enumerate(self.expenses):
            if e.stop_id == from_stop_id:
                self.expenses[i] = e = self._own(e)
                e.stop_id = to.id
                if e.day_id is not None:
                    e.day_id = to.day_id

    def require_member(self, user_id: str, field_name: str) -> None:
        if user_id not in self.member_ids:
            raise Invalid(f"{field_name}: {user_id} is not a member of this trip", code="not_a_member",
                          field=field_name)
