"""Review rules about the clock: a stop its place's opening hours rule out
(`closed`) and a meal at an odd time (`meal_time`).

`closed`: every stop with a place and known hours (app.hours.rules): food stops by
the meal rule (the meal plus 30 minutes inside one period, kitchen hours
bound it), every other stop by the visit rule (inside one period). A stop
past midnight is checked on the next date. No hours: no finding (never
treated as open, never flagged). Fixes: the first set time that fits on that
day, a move within the day, a move to the nearest other day where it fits.

`meal_time`: a meal whose start is outside its usual window (app/meals.py).
Fix: a set time inside the window (that fits the place's hours, if known).
"""

from __future__ import annotations

import functools
from datetime import date as Date

from ..hours.rules import buffer_for, first_start
from ..meals import MEALS
from ..trips.model import Stop
from ..trips.schedule import clock_label, date_label, to_hhmm
from .issues import DayFacts, Elsewhere, Issue, PlaceBook, quote

SET_TIME_STEP = 15     # offered set times are round quarter hours when they can be
MOVE_SLACK_MIN = 45    # how far a move's rough start may be from one that fits, to be worth simulating
LAST_SET_TIME = 24 * 60 - 1


def other_days_nearest_first(facts: DayFacts) -> tuple[str, ...]:
    here = facts.day.position
    days = [d for d in facts.trip.days if d.id != facts.day.id]
    return tuple(d.id for d in sorted(days, key=lambda d: (abs(d.position - here), d.position)))


def closed(facts: DayFacts) -> list[Issue]:
    issues = []
    date = facts.date
    for stop, slot in zip(facts.day.stops, facts.slots):
        if facts.book.fits(stop, date, slot.start) is not False:
            continue   # fits, or no hours (never a finding)
        check = facts.book.check(stop, date, slot.start)
        assert check is not None   # the place has data: fits() was not None
        meal = stop.kind == "food"
        usual = "" if check.status == "confirmed" else "usual "
        if check.closes_at is None and check.latest_start is None and not _open_at_all(facts, stop, slot.start):
            message = f"{quote(stop.name)} is closed all day on {date_label(date)} (its {usual}opening hours)."
        else:
            when = f"{clock_label(slot.start)}–{clock_label(slot.end)}"
            buffer = " with 30 minutes before closing" if meal else ""
            closes = f" (it closes at {check.closes_at})" if check.closes_at else ""
            message = (f"{quote(stop.name)} at {when} on {date_label(date)} does not fit its {usual}opening "
                       f"hours{buffer}{closes}.")
        issue = Issue("closed", "problem" if check.status == "confirmed" else "warning", message, (stop.id,))
        issues.append(issue)
        if facts.keys_only:
            continue
        today = facts.book.hours(stop, Date.fromisoformat(date))
        best = first_start(today, slot.earliest, stop.duration_min, buffer_for(meal), step=SET_TIME_STEP,
                           last=LAST_SET_TIME)
        if best is not None:
            issue.candidates.append((f"Set {quote(stop.name)} to {to_hhmm(best)}", "update_stop",
                                     {"stopId": stop.id, "setTime": to_hhmm(best)}))
        # Within the day: only where its hours could allow it (each try is a full simulation).
        issue.movers = [(stop.id, facts.positions_where(
            stop, functools.partial(_fits_around, facts.book, stop, date)))]
        issue.elsewhere = [Elsewhere(stop.id, other_days_nearest_first(facts))]
    return issues


def _fits_around(book: PlaceBook, stop: Stop, date: str, start: int) -> bool:
    return book.fits_around(stop, date, start, MOVE_SLACK_MIN)


def _near_window(lo: int, hi: int, start: int) -> bool:
    return lo - MOVE_SLACK_MIN <= start <= hi + MOVE_SLACK_MIN


def _open_at_all(facts: DayFacts, stop: Stop, minutes: int) -> bool:
    """Whether the place opens at any time on the date the stop falls on."""
    day = Date.fromisoformat(facts.date).toordinal() + minutes // (24 * 60)
    hours = facts.book.hours(stop, Date.fromordinal(day))
    return hours is not None and any(c > max(o, 0) and o < 24 * 60 for o, c in hours.spans)


def meal_time(facts: DayFacts) -> list[Issue]:
    issues = []
    for stop, slot in zip(facts.day.stops, facts.slots):
        meal = MEALS.get(stop.meal or "")
        if meal is None or meal.window[0] <= slot.start <= meal.window[1]:
            continue
        lo, hi = meal.window
        name = meal.label
        issue = Issue("meal_time", "warning",
                      f"{name} at {quote(stop.name)} starts at {clock_label(slot.start)}; {name.lower()} usually "
                      f"starts between {to_hhmm(lo)} and {to_hhmm(hi)}.", (stop.id,))
        issues.append(issue)
        if facts.keys_only:
            continue
        earliest = max(lo, slot.earliest) if slot.earliest <= hi else lo
        hours = facts.book.hours(stop, Date.fromisoformat(facts.date))
        start: int | None = earliest
        if hours is not None:   # a time the place's hours allow; no hours: the window alone
            start = first_start(hours, earliest, stop.duration_min, buffer_for(stop.kind == "food"),
                                step=SET_TIME_STEP, last=hi)
        elif earliest % SET_TIME_STEP:
            start = min(earliest + SET_TIME_STEP - earliest % SET_TIME_STEP, hi)
        if start is not None:
            issue.candidates.append((f"Set {quote(stop.name)} to {to_hhmm(start)}", "update_stop",
                                     {"stopId": stop.id, "setTime": to_hhmm(start)}))
        if not stop.set_time:
            issue.movers = [(stop.id, facts.positions_where(
                stop, functools.partial(_near_window, lo, hi)))]
    return issues
