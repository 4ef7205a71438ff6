"""Annotated field types shared by request bodies and op arguments, so a
rule like "a time is HH:MM" is written once."""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Annotated
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, Field

from .money import is_currency

HHMM_PATTERN = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")
# A service-day time, as transit timetables (GTFS) write it: past midnight the
# hours go on counting, so "24:45" is 00:45 on the next morning of the same
# day plan. Up to 29:59: a night out ends before the next day's plan starts.
SERVICE_TIME_PATTERN = re.compile(r"^([01]\d|2[0-9]):[0-5]\d$")
LAST_SERVICE_MINUTE = 30 * 60 - 1


def _clock(value: str) -> str:
    if not HHMM_PATTERN.match(value):
        raise ValueError("must be a time as HH:MM (00:00-23:59)")
    return value


def _service_time(value: str) -> str:
    if not SERVICE_TIME_PATTERN.match(value):
        raise ValueError("must be a time as HH:MM, 00:00-29:59 (24:45 is 00:45 the next morning)")
    return value


def _zone(value: str) -> str:
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError("must be an IANA time zone such as Europe/Lisbon") from None
    return value


# A local wall-clock time of day.
HHMM = Annotated[str, AfterValidator(_clock)]
# A time on a day plan's clock (a set time): 00:00-29:59, past 24:00 after midnight.
ServiceTime = Annotated[str, AfterValidator(_service_time)]
# An IANA time zone name.
TimeZone = Annotated[str, Field(max_length=64), AfterValidator(_zone)]



def _currency(value: str) -> str:
    if not is_currency(value):
        raise ValueError("must be an ISO 4217 currency code such as EUR")
    return value


# A currency amounts can be kept in: its ISO 4217 exponent says how many minor units (app/money.py).
# The pattern is for the schema only (clients and the agent read it): the table
# lookup refuses "eur" as well, in words, where a pattern's refusal would not say
# what a currency code is.
CurrencyCode = Annotated[str, Field(max_length=3, description="ISO 4217 code, e.g. EUR",
                                    json_schema_extra={"pattern": "^[A-Z]{3}$"}),
                         AfterValidator(_currency)]

# The calendar a trip lives in: every day of every trip has a date well inside
# what Python and the browser can represent (a start in 9999 once broke a trip).
FIRST_DATE = date(1900, 1, 1)
LAST_DATE = date(2199, 12, 31)


def _in_calendar(value: date) -> date:
    if not FIRST_DATE <= value <= LAST_DATE:
        raise ValueError(f"must be a date from {FIRST_DATE.isoformat()} to {LAST_DATE.isoformat()}")
    return value


# A trip's start date (years 1900-2199).
TripDate = Annotated[date, AfterValidator(_in_calendar)]


def last_day_fits(start: date, day_count: int) -> bool:
    """True when a trip of `day_count` days starting on `start` ends by LAST_DATE."""
    try:
        return start + timedelta(days=max(day_count, 1) - 1) <= LAST_DATE
    except OverflowError:   # a start stored before this rule, at the end of Python's calendar
        return False
