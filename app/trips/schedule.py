"""Computed times: a stop without a set time starts when the previous stop
ends plus the travel leg between them; the day starts at its start time
(default 09:00). A set time is a fixed appointment and is never moved; it
is on the day plan's clock, past 24:00 after midnight ("24:45" is 00:45 the
next morning, as transit timetables write it)."""

from __future__ import annotations

import math
from datetime import date
from typing import NamedTuple

from collections.abc import Mapping, Sequence

from ..legs import Leg
from .model import DAY_START, Day


def to_minutes(hhmm: str) -> int:
    h, m = hhmm.split(":")
    return int(h) * 60 + int(m)


_HHMM = tuple(f"{m // 60:02d}:{m % 60:02d}" for m in range(24 * 60))   # every TripDto shows two per stop


def to_hhmm(minutes: int) -> str:
    return _HHMM[minutes % (24 * 60)]


def to_service_time(minutes: int) -> str:
    """A set time for a schedule minute, on the day plan's own clock as
    transit timetables write it: "24:45" is 00:45 the next morning."""
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def clock_label(minutes: int) -> str:
    """A schedule time as people read it: "00:30 (+1)" after midnight."""
    days = minutes // (24 * 60)
    return to_hhmm(minutes) + (f" (+{days})" if days > 0 else "")


def date_label(iso_date: str) -> str:
    """A date as people read it in a sentence: "Tue 1 Dec"."""
    day = date.fromisoformat(iso_date)
    return f"{day:%a} {day.day} {day:%b}"


class Slot(NamedTuple):   # a tuple: built for every stop of every schedule, cheaper than a dataclass
    stop_id: str
    start: int       # minutes from the day's midnight (may pass 24:00)
    end: int
    travel_min: int  # the leg before this stop
    earliest: int    # when it could start at the soonest (previous end + travel)


def day_schedule(day: Day, legs_by_pair: Mapping[tuple[str, str], Leg]) -> list[Slot]:
    return schedule_with_travel(day, travel_minutes(day, legs_by_pair))


def travel_minutes(day: Day, legs_by_pair: Mapping[tuple[str, str], Leg]) -> list[int]:
    """Per stop, the whole minutes of the leg before it (0 for the first, or without a leg)."""
    out, previous = [], None
    for stop in day.stops:
        leg: Leg | None = legs_by_pair.get((previous.id, stop.id)) if previous is not None else None
        out.append(math.ceil(leg.duration_s / 60) if leg is not None else 0)
        previous = stop
    return out


_tuple_new = tuple.__new__


def schedule_with_travel(day: Day, travel: Sequence[int]) -> list[Slot]:
    """`day_schedule` from `travel_minutes` (the TripDto keeps those, not its legs)."""
    slots: list[Slot] = []
    cursor = to_minutes(day.start_time or DAY_START)
    for stop, minutes in zip(day.stops, travel):
        earliest = cursor + minutes
        start = to_minutes(stop.set_time) if stop.set_time else earliest
        end = start + stop.duration_min
        # tuple.__new__ directly: Slot(...) runs NamedTuple's generated __new__, a Python call per stop
        # (every op's echo schedules its changed day).
        slots.append(_tuple_new(Slot, (stop.id, start, end, minutes, earliest)))
        cursor = end
    return slots
