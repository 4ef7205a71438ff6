"""When a stop may start: the minutes of its day plan at which the whole
visit fits one opening period (a meal: plus 30 minutes before closing, the
hours rule) and a meal starts inside its usual window (the `meal_time`
rule). One answer for every caller: Shortest order's constraints, the set
times the fix search offers, the starts a planner suggestion may take.

Minutes count from the day's midnight, past 1440 after midnight, up to the
last set time a day plan can hold (29:59): a start after midnight is judged
on the next date's hours, where an evening period carries on, exactly as
the review's `closed` rule judges it (PlaceBook.fits)."""

from __future__ import annotations

from datetime import date as Date, timedelta

from ..fields import LAST_SERVICE_MINUTE
from ..hours.rules import buffer_for
from ..meals import MEALS
from ..trips.model import Stop
from .issues import PlaceBook

DAY = 24 * 60
ROUND_TO = 15        # offered set times are round quarter hours when they can be

Ranges = tuple[tuple[int, int], ...]


def start_ranges(stop: Stop, date: str, book: PlaceBook, *, meal_window: bool = True) -> Ranges | None:
    """Inclusive (earliest, latest) start minutes at which `stop` fits its
    hours and (with `meal_window`) its meal's window; None: any start (no
    hours known and not a meal). An empty tuple: no start fits."""
    ranges = _hours_ranges(stop, date, book)
    window = MEALS[stop.meal].window if meal_window and stop.meal in MEALS else None
    if window is not None:
        lo, hi = window
        ranges = ((lo, hi),) if ranges is None else tuple(
            (max(a, lo), min(b, hi)) for a, b in ranges if max(a, lo) <= min(b, hi))
    return ranges


def _hours_ranges(stop: Stop, date: str, book: PlaceBook) -> Ranges | None:
    if book.raw(stop) is None:
        return None
    today = Date.fromisoformat(date)
    need = stop.duration_min + buffer_for(stop.kind == "food")
    found: list[tuple[int, int]] = []
    unknown = 0
    # The date itself (starts 00:00-23:59), then the next morning (24:00-29:59).
    for offset, last in ((0, DAY - 1), (DAY, LAST_SERVICE_MINUTE - DAY)):
        hours = book.hours(stop, today + timedelta(days=offset // DAY))
        if hours is None:       # no hours that date: nothing to hold a start to (never a finding either)
            found.append((offset, offset + last))
            unknown += 1
            continue
        for o, c in hours.spans:
            lo, hi = max(o, 0), min(c - need, last)
            if lo <= hi:
                found.append((offset + lo, offset + hi))
    return None if unknown == 2 else _merged(found)


def _merged(ranges: list[tuple[int, int]]) -> Ranges:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return tuple(out)


def start_options(ranges: Ranges | None, earliest: int, prefer: int, most: int = 3) -> list[int]:
    """Starts no earlier than `earliest` inside `ranges`, the nearest to
    `prefer` first (the least change), one per range, each on a round
    quarter hour when the range holds one."""
    if ranges is None:
        ranges = ((0, LAST_SERVICE_MINUTE),)
    out = []
    for lo, hi in ranges:
        lo = max(lo, earliest)
        if lo > hi:
            continue
        at = min(max(prefer, lo), hi)
        rounded = [t for t in (at - at % ROUND_TO, at - at % ROUND_TO + ROUND_TO) if lo <= t <= hi]
        out.append(min(rounded, key=lambda t: (abs(t - prefer), t)) if rounded else at)
    return sorted(out, key=lambda t: (abs(t - prefer), t))[:most]


def fits_ranges(ranges: Ranges | None, start: int) -> bool:
    return ranges is None or any(lo <= start <= hi for lo, hi in ranges)
