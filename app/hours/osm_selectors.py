"""Day selectors of OSM `opening_hours` (years, months, dates, weeks, weekdays, holidays).

Part of the parser in `app/hours/osm_syntax.py`, split out for size. Like the
reference (npm `opening_hours`), a rule's selectors are kept by kind: the tests
of one kind are alternatives ("Mo,We-Fr"), and every kind present must pass.
"""

from __future__ import annotations

import calendar
import functools
from datetime import date, timedelta
from collections.abc import Callable, Collection

# A day test answers "does this selector pick `day`?"; it may ask `holiday`
# whether a day is a public ("PH") or school ("SH") holiday.
HolidayLookup = Callable[[str, date], bool]
DayTest = Callable[[date, HolidayLookup], bool]

KINDS = ("year", "holiday", "month", "monthday", "week", "weekday")


class Unsupported(ValueError):
    """The value is malformed, or uses syntax this parser leaves out."""


def easter(year: int) -> date:
    """Western Easter Sunday (the anonymous Gregorian algorithm)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    weekday_fix = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * weekday_fix) // 451
    month, day = divmod(h + weekday_fix - 7 * m + 114, 31)
    return date(year, month, day + 1)


def js_date(year: int, month: int, day: int) -> date:
    """date(year, month, day) where a day past the month's end rolls over, as in JavaScript."""
    return date(year, month, 1) + timedelta(days=day - 1)


def _cyclic(first: int, last: int, size: int, base: int) -> frozenset[int]:
    """first..last on a cycle ("Fr-Mo", "Nov-Feb"); values run base..base+size-1."""
    span = (last - first) % size
    return frozenset(base + (first - base + k) % size for k in range(span + 1))


def _check_day(month: int, day: int) -> None:
    if not 1 <= day <= 31 or (month in (4, 6, 9, 11) and day == 31) or (month == 2 and day == 30):
        raise Unsupported(f"no day {day} in month {month}")


def _nth_weekday(year: int, month: int, weekday: int, n: int) -> date:
    """The nth (or from the end, -nth) weekday of a month, as the reference computes it."""
    anchor = date(year, month, 1) if n > 0 else js_date(year, month, calendar.monthrange(year, month)[1] + 1)
    first = anchor + timedelta(days=(weekday - anchor.weekday()) % 7)
    return first + timedelta(days=7 * (n - 1 if n > 0 else n))


# Day tests bound to their values (partial: one per selector, not per loop variable).
def _weekday_in(days: Collection[int], d: date, h: HolidayLookup) -> bool:
    return d.weekday() in days


def _holiday_before(shift: int, d: date, h: HolidayLookup) -> bool:
    return h("PH", d - timedelta(days=shift))


def _month_in(months: Collection[int], d: date, h: HolidayLookup) -> bool:
    return d.month in months


def _is_event(event: _Endpoint, d: date, h: HolidayLookup) -> bool:
    return d == event.first(event.year or d.year)


class Selectors:
    """Collects one rule's day tests while `_RuleParser` walks its tokens."""

    def __init__(self) -> None:
        self.tests: dict[str, list[DayTest]] = {kind: [] for kind in KINDS}

    def groups(self) -> tuple[tuple[DayTest, ...], ...]:
        return tuple(tuple(self.tests[kind]) for kind in KINDS if self.tests[kind])

    @staticmethod
    def move_days(p, at: int, most: int) -> tuple[int, int]:
        """An offset like "+1 day" / "-3 days" at `at`: (days, position after it)."""
        if p.kind(at) in ("+", "-") and p.match(at + 1, "number", "calcday"):
            days = p.value(at + 1)
            if days > most:
                raise Unsupported(f"an offset of more than {most} days")
            return (days if p.kind(at) == "+" else -days), at + 3
        return 0, at

    def weekdays(self, p, at: int) -> int:
        while True:
            if p.match(at, "weekday", "["):  # "Mo[1]", "Su[-1]", "Mo[1,3] +1 day"
                weekday = p.value(at)
                numbers, at = self.nth_numbers(p, at + 2)
                if not p.match(at, "]"):
                    raise Unsupported("] expected")
                shift, at = self.move_days(p, at + 1, 6)
                for n in numbers:
                    self.tests["weekday"].append(_nth_weekday_test(weekday, n, shift))
            elif p.kind(at) == "weekday":
                last = p.value(at + 2) if p.match(at + 1, "-", "weekday") else p.value(at)
                days = _cyclic(p.value(at), last, 7, 0)
                self.tests["weekday"].append(functools.partial(_weekday_in, days))
                at += 3 if p.match(at + 1, "-", "weekday") else 1
            elif p.kind(at) == "holiday":
                return self.holidays(p, at, into_weekdays=True)
            else:
                raise Unsupported("weekday expected")
            if not p.match(at, ","):
                return at
            at += 1

    @staticmethod
    def nth_numbers(p, at: int) -> tuple[list[int], int]:
        numbers: list[int] = []
        while True:
            if p.match(at, "number", "-", "number"):
                first, last, at = p.value(at), p.value(at + 2), at + 3
            elif p.match(at, "-", "number"):
                first = last = -p.value(at + 1)
                at += 2
            elif p.kind(at) == "number":
                first = last = p.value(at)
                at += 1
            else:
                raise Unsupported("number expected in [ ]")
            if first > last:
                raise Unsupported("reversed range in [ ]")
            for n in range(first, last + 1):
                if n == 0 or not -5 <= n <= 5:
                    raise Unsupported("[ ] takes -5..5 without 0")
                numbers.append(n)
            if not p.match(at, ","):
                return numbers, at
            at += 1

    def holidays(self, p, at: int, *, into_weekdays: bool) -> int:
        kind = "weekday" if into_weekdays else "holiday"
        while True:
            if p.kind(at) == "holiday" and p.value(at) == "PH":  # "PH", "PH +1 day"
                shift, at = self.move_days(p, at + 1, 1)
                self.tests[kind].append(functools.partial(_holiday_before, shift))
            elif p.kind(at) == "holiday":
                self.tests[kind].append(lambda d, h: h("SH", d))
                at += 1
            elif p.kind(at) == "weekday":
                return self.weekdays(p, at)
            else:
                raise Unsupported("holiday expected")
            if not p.match(at, ","):
                return at
            at += 1

    def years(self, p, at: int) -> int:
        """ "2025", "2025-2027", "2020-2030/2", "2020/2", "2025+"."""
        while True:
            if p.kind(at) != "year":
                raise Unsupported("year expected")
            first, last, period = p.value(at), None, None
            if p.match(at + 1, "-", "year", "/", "number"):
                last, period, at = p.value(at + 2), p.value(at + 4), at + 5
            elif p.match(at + 1, "-", "year"):
                last, at = p.value(at + 2), at + 3
            elif p.match(at + 1, "/", "number"):
                period, at = p.value(at + 2), at + 3
            elif p.match(at + 1, "+"):
                period, at = 1, at + 2
            else:
                at += 1
            if (last is not None and last <= first) or period == 0:
                raise Unsupported("empty year range")
            self.tests["year"].append(_year_test(first, last, period))
            if not p.match(at, ","):
                return at
            at += 1

    def weeks(self, p, at: int) -> int:
        """ISO weeks: "week 01-53/2", "week 30-31", "week 42"."""
        while True:
            if p.kind(at) == "week":
                at += 1
            if p.kind(at) != "number":
                raise Unsupported("week number expected")
            ranged = p.match(at + 1, "-", "number")
            first = p.value(at)
            last = p.value(at + 2) if ranged else first
            period = p.value(at + 4) if ranged and p.match(at + 3, "/", "number") else None
            if not 1 <= first <= last <= 53 or (period is not None and not 2 <= period <= 26):
                raise Unsupported("bad week range")
            self.tests["week"].append(_week_test(first, last, period))
            at += 1 + (2 if ranged else 0) + (2 if period else 0)
            if not p.match(at, ","):
                return at
            at += 1

    def months(self, p, at: int, *, into_monthdays: bool) -> int:
        kind = "monthday" if into_monthdays else "month"
        while True:
            if p.match(at, "month", "number") and not p.match(at + 2, "timesep", "number"):
                return self.monthdays(p, at, into_months=True)
            if p.kind(at) != "month":
                raise Unsupported("month expected")
            ranged = p.match(at + 1, "-", "month")
            months = _cyclic(p.value(at), p.value(at + 2) if ranged else p.value(at), 12, 1)
            self.tests[kind].append(functools.partial(_month_in, months))
            at += 3 if ranged else 1
            if not p.match(at, ","):
                return at
            at += 1

    def monthdays(self, p, at: int, *, into_months: bool) -> int:
        """Dates and date ranges: "Dec 24", "Dec 24-26,31", "Dec 24-Jan 02", "easter -2 days"."""
        kind = "month" if into_months else "monthday"
        while True:
            start = _Endpoint.read(p, at, self)
            end = None
            if start.kind is not None and p.match(start.after, "-"):
                end = _Endpoint.read(p, start.after + 1, self, second=True)
            if end is not None and end.kind is not None and start.has_year == end.has_year:
                self.tests[kind].append(_date_range_test(start, end))
                at = end.after
            elif start.kind == "date" and self.time_follows_month(p, at + start.has_year):
                return self.months(p, at, into_monthdays=True)  # "Dec 17:30-22:00"
            elif start.kind == "date":
                at = self.day_list(p, at, start, kind)
            elif start.kind == "event":
                # Bound now: a list of events ("easter,easter +1 day") makes one test each.
                self.tests[kind].append(functools.partial(_is_event, start))
                at = start.after
            elif start.kind == "nth":  # "Aug Su[-1]": the month here, the weekday later
                at = self.months(p, at, into_monthdays=False)
            elif p.kind(at) == "month":
                return self.months(p, at, into_monthdays=True)
            elif p.kind(at - 1) == ",":
                raise Unsupported("an additional rule makes no sense here")
            else:
                return at
            if not p.match(at, ","):
                return at
            at += 1

    @staticmethod
    def time_follows_month(p, at: int) -> bool:
        """ "Dec 17:30-22:00" is December at a time, not the 17th (the reference's test)."""
        ranged = p.match(at + 2, "-", "number")
        period = ranged and p.match(at + 4, "/", "number")
        after = at + 1 + (2 if ranged else 0) + (2 if period else 0) + (0 if ranged else 1)
        return p.match(after, "timesep", "number") and p.kind(after + 2) in ("+", "-")

    def day_list(self, p, at: int, start: _Endpoint, kind: str) -> int:
        """Days of one month: "Dec 24", "Dec 24-26,31", "Jan 01-31/2"."""
        y = int(start.has_year)
        while True:
            day_from = p.value(at + 1 + y)
            ranged = p.match(at + 2 + y, "-", "number")
            day_to = p.value(at + y + (3 if ranged else 1))
            period = p.value(at + y + 5) if ranged and p.match(at + y + 4, "/", "number") else None
            if day_to < day_from or period == 0:
                raise Unsupported("reversed day range")
            _check_day(start.month, day_from)
            _check_day(start.month, day_to)
            self.tests[kind].append(_day_range_test(start.year, start.month, day_from, day_to, period))
            at += 2 + y + (2 if ranged else 0) + (2 if period is not None else 0)
            if not p.match(at, ",", "number"):
                return at


class _Endpoint:
    """One end of a date range: a month day, an event (easter) or an nth weekday of a month."""

    def __init__(self) -> None:
        self.kind: str | None = None  # "date" | "event" | "nth"
        self.has_year = False
        self.year: int | None = None
        self.month = self.day = self.weekday = self.n = 0
        self.shift = 0
        self.after = 0

    @classmethod
    def read(cls, p, at: int, sel: Selectors, second: bool = False) -> _Endpoint:
        e = cls()
        e.has_year = p.kind(at) == "year"
        e.year = p.value(at) if e.has_year else None
        at += e.has_year
        if p.match(at, "month", "number"):
            e.kind, e.month, e.day, e.after = "date", p.value(at), p.value(at + 1), at + 2
        elif p.kind(at) == "event":
            e.kind = "event"
            e.shift, e.after = sel.move_days(p, at + 1, 366 if second else 200)
        elif p.match(at, "month", "weekday", "["):
            numbers, close = sel.nth_numbers(p, at + 3)
            if len(numbers) != 1 or not p.match(close, "]"):
                raise Unsupported("one [n] expected")
            e.kind, e.month, e.weekday, e.n = "nth", p.value(at), p.value(at + 1), numbers[0]
            e.shift, e.after = sel.move_days(p, close + 1, 6)
        return e

    def first(self, year: int) -> date:
        """The first day this endpoint names in `year`."""
        if self.kind == "date":
            return js_date(year, self.month, self.day)
        if self.kind == "event":
            return easter(year) + timedelta(days=self.shift)
        return _nth_weekday(year, self.month, self.weekday, self.n) + timedelta(days=self.shift)

    def end(self, year: int) -> date:
        """The day after the range this endpoint closes. (The reference ends a range at an
        event itself: "easter -3 days-easter" leaves out Easter Sunday.)"""
        return self.first(year) + timedelta(days=0 if self.kind == "event" else 1)


def _date_range_test(start: _Endpoint, end: _Endpoint) -> DayTest:
    if start.kind == "date":
        _check_day(start.month, start.day)
    if end.kind == "date":
        _check_day(end.month, end.day)

    def test(d: date, h) -> bool:
        first, after = start.first(start.year or d.year), end.end(end.year or d.year)
        if after < first:  # "Dec 24-Jan 02": every day outside Jan 03..Dec 23
            return not first > d >= after
        return first <= d < after
    return test


def _day_range_test(year: int | None, month: int, day_from: int, day_to: int,
                    period: int | None) -> DayTest:
    def test(d: date, h) -> bool:
        y = year or d.year
        if day_from > calendar.monthrange(y, month)[1]:  # Feb 29 in a common year
            return False
        first = date(y, month, day_from)
        last = date(y, month, min(day_to, calendar.monthrange(y, month)[1]))
        if not first <= d <= last:
            return False
        return period is None or (d - first).days % period == 0
    return test


def _nth_weekday_test(weekday: int, n: int, shift: int) -> DayTest:
    def test(d: date, h) -> bool:
        base = d - timedelta(days=shift)
        if base.weekday() != weekday:
            return False
        if n > 0:
            return (base.day - 1) // 7 + 1 == n
        return (calendar.monthrange(base.year, base.month)[1] - base.day) // 7 + 1 == -n
    return test


def _week_test(first: int, last: int, period: int | None) -> DayTest:
    def test(d: date, h) -> bool:
        week = d.isocalendar()[1]
        return first <= week <= last and (period is None or (week - first) % period == 0)
    return test


def _year_test(first: int, last: int | None, period: int | None) -> DayTest:
    def test(d: date, h) -> bool:
        if d.year < first or (last is not None and d.year > last):
            return False
        if period:
            return (d.year - first) % period == 0
        return last is not None or d.year == first
    return test
