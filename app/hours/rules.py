"""The opening-hours rules (browser twin: public/hours.js).

Two rules run on a place's opening periods for one date, whatever the source:
- the meal rule (food stops, meal suggestions): the whole meal plus
  CLOSING_BUFFER_MIN lies inside ONE opening period;
- the visit rule (every other stop with a place): the whole visit lies inside
  ONE opening period, with no buffer.
Both implementations are run against spec/fixtures/hours_vectors.json, so
change them together.

`hours_on(place, date)` gives the date's `DayHours(status, spans)`, or None for
"no hours" (never treated as open). Every period becomes a span [open, close)
in minutes from 00:00 on the date (place-local wall clock): a period past
midnight ends after 1440, one from the day before starts below 0 (Google) or
at 0 (OpenStreetMap), so "00:30" on the date belongs to the previous evening's
period. A stop that starts past midnight of its day (minute >= 1440) is checked
on the next date (`check_at`), where that evening's period carries over.

Sources:
- A Google Places (New) `place` object, passed straight in (Points are
  place-local, so `utcOffsetMinutes` / `timeZone` are not needed):
  1. `currentOpeningHours` (dated: Points carry `date`) when it covers the
     date: the date lies between the earliest and latest *open* date or
     `specialDays` date it lists (a close date is not used: a period ending at
     02:00 on the day after the window says nothing about the rest of that
     day). Only that range is certain, since the 7-day window's first and last
     days may be closed days with no period. A 24-hour marker with a date
     covers that date and the 6 after. Status "confirmed"; a covered date with
     no period is closed (special days closed all day land here).
  2. Otherwise `regularOpeningHours` when it has a `periods` list (an empty list
     means never open): weekly pattern, status "unconfirmed".
  3. Otherwise None: no hours.
  Kitchen hours (secondary hours with `secondaryHoursType` "KITCHEN") are
  chosen the same way; for the meal rule they bound the meal (intersected with
  the main hours, so a special-day closure still wins), and status is
  "confirmed" only if both are dated. They are never invented from the main
  hours.
- An OpenStreetMap place (`{"source": "osm", ...}`): its `opening_hours`
  value (`osm_value`) evaluated by app.hours.osm for the date, with public
  holidays of the place's country when the raw names one (`osm_country`).
  Status is always "unconfirmed": OSM is volunteered data, never dated.

A period with no `close` that opens at 00:00 is Google's 24-hour marker: always
open. Periods that touch (or leave a 1-minute gap, as Google's "until 23:59"
followed by "from 00:00" does) are one period; any longer break ends a period.
`closes_at` is None when the start is in no period, or when its period runs at
least another 24 hours (always open). `latest_start` is the latest HH:MM on the
date, in any period, from which the stay (+ buffer) still fits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date as Date, timedelta

from ..meals import MEAL_MINUTES
from .osm import intervals as osm_intervals

CLOSING_BUFFER_MIN = 30

DAY = 24 * 60
WEEK = 7 * DAY
MERGE_GAP = 1  # minutes of "break" that are really one period (23:59 -> 00:00)
ALWAYS = (-10 * WEEK, 10 * WEEK)  # the 24-hour span; far beyond any meal

_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_CLOCK_RE = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")


@dataclass(frozen=True)
class HoursCheck:
    status: str  # "confirmed" | "unconfirmed" | "none"
    fits: bool
    closes_at: str | None
    latest_start: str | None

    def to_json(self) -> dict:
        return {"status": self.status, "fits": self.fits,
                "closesAt": self.closes_at, "latestStart": self.latest_start}


@dataclass(frozen=True)
class DayHours:
    """A place's opening periods as seen from one date (see the module doc)."""

    status: str                           # "confirmed" | "unconfirmed"
    spans: tuple[tuple[int, int], ...]    # sorted, merged [open, close) minutes from the date's midnight


NO_HOURS = HoursCheck("none", False, None, None)


def meal_minutes(meal: str | None, override: int | None = None) -> int:
    """An explicit positive duration wins; otherwise the meal's default length."""
    if override is not None:
        if not _is_int(override) or override <= 0:
            raise ValueError("duration must be a positive number of minutes")
        return override
    if meal not in MEAL_MINUTES:
        raise ValueError(f"unknown meal {meal!r}: give a duration")
    return MEAL_MINUTES[meal]


def is_osm(place) -> bool:
    return isinstance(place, dict) and place.get("source") == "osm"


def osm_value(place: dict) -> str | None:
    """The OSM `opening_hours` value of a place, wherever the provider put it."""
    value = place.get("opening_hours")
    if value is None:
        value = _dict(place.get("tags")).get("opening_hours")
    return value if isinstance(value, str) else None


def osm_country(place: dict) -> str | None:
    """ISO alpha-2 country for public holidays (PH), when the raw names one."""
    value = place.get("country_code") or _dict(place.get("tags")).get("addr:country")
    return value if isinstance(value, str) and len(value) == 2 else None


def hours_on(place, day: Date | str, *, meal: bool = True) -> DayHours | None:
    """The place's opening periods seen from `day`, or None (no hours).

    `meal`: kitchen hours bound the periods (the meal rule); a visit uses the
    doors' hours only."""
    day = _parse_date(day) if isinstance(day, str) else day
    place = place if isinstance(place, dict) else {}
    if is_osm(place):
        found = osm_intervals(osm_value(place), day, country=osm_country(place))
        return None if found is None else DayHours("unconfirmed", tuple(found))
    main = _choose(place.get("currentOpeningHours"), place.get("regularOpeningHours"), day)
    if main is None:
        return None
    status, spans = main
    if meal:
        kitchen = _choose(_kitchen(place.get("currentSecondaryOpeningHours")),
                          _kitchen(place.get("regularSecondaryOpeningHours")), day)
        if kitchen is not None:
            spans = _intersect(spans, kitchen[1])
            if kitchen[0] != "confirmed":
                status = "unconfirmed"  # the bound that matters is only the usual one
    # Only periods that touch the date can matter (a stay starts on it): the
    # other weeks of the weekly pattern go, which keeps every check short.
    return DayHours(status, tuple(sp for sp in spans if sp[1] > 0 and sp[0] < DAY))


def fit(hours: DayHours | None, at: int, duration_min: int, buffer_min: int) -> HoursCheck:
    """Whether [at, at + duration + buffer) lies inside one period (`at` in 0..1439)."""
    if hours is None:
        return NO_HOURS
    need = duration_min + buffer_min
    current = next((s for s in hours.spans if s[0] <= at < s[1]), None)
    fits = current is not None and at + need <= current[1]
    closes_at = _fmt(current[1]) if current and current[1] - at <= DAY else None
    # Latest start on this date (00:00..23:59) anywhere in a period.
    starts = [min(c - need, DAY - 1) for o, c in hours.spans if min(c - need, DAY - 1) >= max(o, 0)]
    return HoursCheck(hours.status, fits, closes_at, _fmt(max(starts)) if starts else None)


def first_start(hours: DayHours | None, earliest: int, duration_min: int, buffer_min: int, *,
                step: int = 5, last: int = DAY - 1) -> int | None:
    """The first start in [earliest, last] (on the step when it can be) whose
    stay fits one period; None when there is none."""
    if hours is None:
        return None
    need = duration_min + buffer_min
    for o, c in hours.spans:
        lo = max(o, earliest, 0)
        for start in (-(-lo // step) * step, lo):   # a round time if it fits, else the exact one
            if start <= last and start + need <= c:
                return start
    return None


def check_hours(place: dict, date: str, start: str, duration_min: int) -> HoursCheck:
    """The meal rule at HH:MM on `date`."""
    day, at = _parse_date(date), _parse_clock(start)
    _check_duration(duration_min)
    return fit(hours_on(place, day, meal=True), at, duration_min, CLOSING_BUFFER_MIN)


def check_visit(place: dict, date: str, start: str, duration_min: int) -> HoursCheck:
    """The visit rule (doors' hours, no buffer) at HH:MM on `date`."""
    day, at = _parse_date(date), _parse_clock(start)
    _check_duration(duration_min)
    return fit(hours_on(place, day, meal=False), at, duration_min, 0)


def check_at(place: dict, date: str, minutes: int, duration_min: int, *, meal: bool) -> HoursCheck:
    """The meal or visit rule for a stop `minutes` after `date`'s midnight
    (past 1440: the next date's early hours, where a late period carries on)."""
    _check_duration(duration_min)
    day, at = on_date(date, minutes)
    return fit(hours_on(place, day, meal=meal), at, duration_min, buffer_for(meal))


def on_date(date: str, minutes: int) -> tuple[Date, int]:
    """A schedule's minute of a day (past 1440 after midnight) as (the date it
    falls on, the minute of that date)."""
    return _parse_date(date) + timedelta(days=minutes // DAY), minutes % DAY


def buffer_for(meal: bool) -> int:
    return CLOSING_BUFFER_MIN if meal else 0


def _check_duration(duration_min) -> None:
    if not _is_int(duration_min) or duration_min <= 0:
        raise ValueError("duration must be a positive number of minutes")


def _choose(current, regular, day: Date):
    """(status, merged spans) from dated hours covering `day`, else weekly, else None."""
    if isinstance(current, dict) and _covers(current, day):
        return "confirmed", _merge(_spans(current.get("periods"), day, dated=True))
    if isinstance(regular, dict) and isinstance(regular.get("periods"), list):
        return "unconfirmed", _merge(_spans(regular["periods"], day, dated=False))
    return None


def _kitchen(entries):
    if isinstance(entries, list):
        for e in entries:
            if isinstance(e, dict) and e.get("secondaryHoursType") == "KITCHEN":
                return e
    return None


def _covers(hours: dict, day: Date) -> bool:
    dates = []
    for p in map(_dict, _list(hours.get("periods"))):
        d = _ymd(_dict(p.get("open")).get("date"))
        if d is not None:
            dates.append(d)
            if _is_24h(p):
                dates.append(d + timedelta(days=6))
    for sd in _list(hours.get("specialDays")):
        d = _ymd(_dict(sd).get("date"))
        if d is not None:
            dates.append(d)
    return bool(dates) and min(dates) <= day <= max(dates)


def _spans(periods, day: Date, dated: bool) -> list[tuple[int, int]]:
    weekday = (day.weekday() + 1) % 7  # Google counts 0 = Sunday
    out = []
    for p in map(_dict, _list(periods)):
        if _is_24h(p):
            return [ALWAYS]
        op, cl = _point(p.get("open")), _point(p.get("close"))
        if op is None or cl is None:
            continue  # malformed: never guess a missing end
        # Never assume close.day == open.day: the week wraps (Sat 22:00 -> Sun 02:00).
        length = ((cl[0] * DAY + cl[1]) - (op[0] * DAY + op[1])) % WEEK
        if dated:
            od = _ymd(p["open"].get("date"))
            if od is None:
                continue
            o = (od - day).days * DAY + op[1]
            cd = _ymd(p["close"].get("date"))
            c = (cd - day).days * DAY + cl[1] if cd is not None else o + length
            if c > o:
                out.append((o, c))
        elif length > 0:  # a zero-length weekly period is ambiguous: not open
            base = (op[0] - weekday) * DAY + op[1]
            # The weeks around the date (a margin of two days each side lets
            # periods that touch across midnight join before the trim).
            out += [(o, o + length) for o in (base + k * WEEK for k in (-2, -1, 0, 1))
                    if o + length > -2 * DAY and o < 3 * DAY]
    return out


def _merge(spans):
    out: list[tuple[int, int]] = []
    for o, c in sorted(spans):
        if out and o <= out[-1][1] + MERGE_GAP:
            out[-1] = (out[-1][0], max(out[-1][1], c))
        else:
            out.append((o, c))
    return out


def _intersect(a, b):
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        o, c = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if o < c:
            out.append((o, c))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def _is_24h(p: dict) -> bool:
    op = _point(p.get("open"))
    return p.get("close") is None and op is not None and op[1] == 0


def _point(pt):
    """(day, minutes) of a Point; proto3 JSON may omit zero fields, so they default to 0."""
    if not isinstance(pt, dict):
        return None
    d, h, m = pt.get("day", 0), pt.get("hour", 0), pt.get("minute", 0)
    if type(d) is not int or type(h) is not int or type(m) is not int:   # bool is not an int here
        return None
    if not (0 <= d <= 6 and 0 <= m <= 59):
        return None
    if not (0 <= h <= 23 or (h == 24 and m == 0)):  # some feeds write midnight as 24:00
        return None
    return d, h * 60 + m


def _ymd(d):
    d = _dict(d)
    y, m, dd = d.get("year"), d.get("month"), d.get("day")
    if not all(_is_int(v) for v in (y, m, dd)):
        return None
    try:
        return Date(y, m, dd)
    except ValueError:
        return None


def _parse_date(s) -> Date:
    if not isinstance(s, str) or not _DATE_RE.match(s):
        raise ValueError(f"date must be YYYY-MM-DD, got {s!r}")
    return Date.fromisoformat(s)  # raises ValueError for e.g. 2025-02-30


def _parse_clock(s) -> int:
    m = _CLOCK_RE.match(s) if isinstance(s, str) else None
    if not m:
        raise ValueError(f"start must be HH:MM, got {s!r}")
    return int(m[1]) * 60 + int(m[2])


def _fmt(minutes: int) -> str:
    minutes %= DAY
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _dict(v) -> dict:
    return v if isinstance(v, dict) else {}


def _list(v) -> list:
    return v if isinstance(v, list) else []
