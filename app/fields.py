"""Annotated field types shared by request bodies and op arguments, so a
rule like "a time is HH:MM" is written once."""

from __future__ import annotations

import re
from typing import Annotated
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, Field

HHMM_PATTERN = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


def _clock(value: str) -> str:
    if not HHMM_PATTERN.match(value):
        raise ValueError("must be a time as HH:MM (00:00-23:59)")
    return value


def _zone(value: str) -> str:
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError("must be an IANA time zone such as Europe/Lisbon") from None
    return value


# A local wall-clock time of day.
HHMM = Annotated[str, AfterValidator(_clock)]
# An IANA time zone name.
TimeZone = Annotated[str, Field(max_length=64), AfterValidator(_zone)]
