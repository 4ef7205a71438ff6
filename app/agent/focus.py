"""Which days an agent call is about: its focus, the days a long trip's
snapshot shows in full (snapshot.agent_snapshot).

Each caller knows something: a chat turn the day the member's page shows and
the words of the member's message (a stop's name, a day's id or date, "day
3"), an approval the ids its writes name, an evaluation the days its edit
changed and its risks' days and fixes, a stop comment its stop. Every id is
looked up in the trip: anything else is ignored. Most important first, no
repeats.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from ..trips.model import Trip

TEXT_CHARS = 4000          # of a message, looked at
MIN_NAME_CHARS = 3         # a stop name shorter than this ("A") is not looked for in words
_DAY_WORD = re.compile(r"\b(?:day|tag|jour|día|dia)\s*(\d{1,3})\b|第\s*(\d{1,3})\s*天", re.IGNORECASE)
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def _unique(ids: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def mentioned(trip: Trip, text: str) -> list[str]:
    """The days a message names: by a day's or a stop's id, a stop's name, a
    date of the trip, or "day N" (the Nth day)."""
    text = text[:TEXT_CHARS]
    if not text.strip():
        return []
    folded = text.casefold()
    by_date = {trip.day_date(d): d.id for d in trip.days}
    found: list[tuple[int, str]] = []   # (where in the text, day id): the first mentioned first
    for match in _DAY_WORD.finditer(text):
        n = int(match.group(1) or match.group(2))
        if 1 <= n <= len(trip.days):
            found.append((match.start(), trip.days[n - 1].id))
    for match in _DATE.finditer(text):
        if match.group() in by_date:
            found.append((match.start(), by_date[match.group()]))
    for day in trip.days:
        at = text.find(day.id)
        if at >= 0:
            found.append((at, day.id))
        for stop in day.stops:
            at = text.find(stop.id)
            if at < 0 and len(stop.name) >= MIN_NAME_CHARS:
                at = _word_at(folded, stop.name.casefold())
            if at >= 0:
                found.append((at, day.id))
    return _unique(day_id for _, day_id in sorted(found, key=lambda f: f[0]))


def _word_at(text: str, name: str) -> int:
    """Where `name` stands in `text` as words of its own ("Bar" not in "Barcelona"), else -1."""
    start = text.find(name)
    while start >= 0:
        end = start + len(name)
        if (start == 0 or not text[start - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            return start
        start = text.find(name, start + 1)
    return -1


def named(trip: Trip, value: Any) -> list[str]:
    """The days that ids in `value` (tool arguments, a fix's edits, a risk:
    any JSON) belong to: a day's id, or the day of a stop or an expense."""
    day_of = {d.id: d.id for d in trip.days}
    day_of.update({s.id: d.id for d in trip.days for s in d.stops})
    return _unique(day_of[s] for s in _strings(value) if s in day_of)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def changed(before: Trip, after: Trip) -> list[str]:
    """The days of `after` whose contents differ from `before` (new days too).
    Unchanged days are the same objects (copy on write, trips/model.py), so
    most are told apart without comparing."""
    old = {d.id: d for d in before.days}
    return [d.id for d in after.days if old.get(d.id) is not d and old.get(d.id) != d]
