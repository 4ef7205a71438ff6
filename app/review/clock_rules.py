"""Review rules about the clock: a stop its place's opening hours rule out
(`closed`) and a meal at an odd time (`meal_time`).

`closed`: every stop with a place and known hours (app.hours.rules): food stops by
the meal rule (the meal plus 30 minutes inside one period, kitchen hours
bound it), every other stop by the visit rule (inside one period). A stop
past midnight is checked on the next date. No hours: no finding (never
treated as open, never flagged). A place closed for good is closed every
day, whatever hours it still lists.

`meal_time`: a meal whose start is outside its usual window (app/meals.py).

What could clear them (a set time that fits the hours and the meal's window,
a move within the day or to another day with such a time, a shorter visit, a
swap, the day in another order, another place for the meal) is the fix
search's (remedies.py).
"""

from __future__ import annotations

from datetime import date as Date

from ..hours.rules import hours_on
from ..meals import MEALS
from ..trips.model import Stop
from .issues import DayFacts, Issue, quote
from ..trips.schedule import clock_label, date_label, to_hhmm


def closed(facts: DayFacts) -> list[Issue]:
    issues = []
    date = facts.date
    for stop, slot in zip(facts.day.stops, facts.slots):
        if facts.book.fits(stop, date, slot.start) is not False:
            continue   # fits, or no hours (never a finding)
        check = facts.book.check(stop, date, slot.start)
        assert check is not None   # the place has data: fits() was not None
        severity = "problem" if check.status == "confirmed" else "warning"
        if facts.keys_only:
            issues.append(Issue("closed", severity, "", (stop.id,), subject=stop.id))
            continue
        usual = "" if check.status == "confirmed" else "usual "
        when_date = date_label(_date_of(date, slot.start).isoformat())
        if facts.book.gone(stop):
            message = f"{quote(stop.name)} has closed for good: Google lists it as permanently closed."
        elif check.closes_at is None and check.latest_start is None and not _open_at_all(facts, stop, slot.start):
            message = f"{quote(stop.name)} is closed all day on {when_date} (its {usual}opening hours)."
        else:
            when = f"{clock_label(slot.start)}–{clock_label(slot.end)}"
            buffer = " with 30 minutes before closing" if stop.kind == "food" else ""
            close = _closes(facts, stop, slot.start) if check.closes_at else None
            # The meal rule ends at last orders when Google lists kitchen hours: say so, or "it closes
            # at 22:00" contradicts the 23:30 everyone sees on the door.
            who = "its kitchen" if close is not None and _kitchen_first(facts, stop, slot.start, close) else "it"
            closes = f" ({who} closes at {clock_label(close)})" if close is not None else ""
            message = (f"{quote(stop.name)} at {when} on {date_label(date)} does not fit its {usual}opening "
                       f"hours{buffer}{closes}.")
        issues.append(Issue("closed", severity, message, (stop.id,), subject=stop.id))
    return issues


def _date_of(date: str, minutes: int) -> Date:
    """The date a schedule minute falls on (the next one past midnight)."""
    return Date.fromordinal(Date.fromisoformat(date).toordinal() + minutes // (24 * 60))


def _closes(facts: DayFacts, stop: Stop, minutes: int) -> int | None:
    """When the opening period the stop starts in ends, on the day plan's
    clock like its start ("02:00 (+1)" for a bar open past midnight, not
    "02:00" next to "01:30 (+1)"); None when it starts in none."""
    hours = facts.book.hours(stop, _date_of(facts.date, minutes))
    at = minutes % (24 * 60)
    span = next((s for s in hours.spans if s[0] <= at < s[1]), None) if hours is not None else None
    return None if span is None else minutes - at + span[1]


def _kitchen_first(facts: DayFacts, stop: Stop, minutes: int, close: int) -> bool:
    """Whether a food stop's period ends at `close` because its kitchen does, the doors later."""
    raw = facts.book.raw(stop)
    if stop.kind != "food" or raw is None:
        return False
    doors = hours_on(raw, _date_of(facts.date, minutes), meal=False)
    at = minutes % (24 * 60)
    span = next((s for s in doors.spans if s[0] <= at < s[1]), None) if doors is not None else None
    return span is not None and minutes - at + span[1] > close


def _open_at_all(facts: DayFacts, stop: Stop, minutes: int) -> bool:
    """Whether the place opens at any time on the date the stop falls on."""
    hours = facts.book.hours(stop, _date_of(facts.date, minutes))
    return hours is not None and any(c > max(o, 0) and o < 24 * 60 for o, c in hours.spans)


def meal_time(facts: DayFacts) -> list[Issue]:
    issues = []
    for stop, slot in zip(facts.day.stops, facts.slots):
        meal = MEALS.get(stop.meal or "")
        if meal is None or meal.window[0] <= slot.start <= meal.window[1]:
            continue
        lo, hi = meal.window
        name = meal.label
        message = "" if facts.keys_only else (
            f"{name} at {quote(stop.name)} starts at {clock_label(slot.start)}; {name.lower()} usually "
            f"starts between {to_hhmm(lo)} and {to_hhmm(hi)}.")
        issues.append(Issue("meal_time", "warning", message, (stop.id,), subject=stop.id))
    return issues
