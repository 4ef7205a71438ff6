"""OpenStreetMap `opening_hours` values, evaluated exactly for one local date.

`intervals(value, day, country=..., subdivision=...)` gives the open periods of
`day` in minutes from its midnight, sorted, merged, each one whole:
- a period that runs past midnight ends after 1440 ("18:00-02:00" gives
  (1080, 1560)), and it ends where the place really closes: a period still
  open at the end of the next day is cut there, so ends never pass 2880
  ("24/7" gives [(0, 2880)], and a 60-minute visit from 23:30 fits in it);
- a period carried over from the day before starts at 0 ("Fr 18:00-02:00" on
  Saturday gives (0, 120));
- None when the value can't be understood (malformed, or syntax left out: see
  `app/hours/osm_syntax.py`) or when the place's state on the day is unknown
  anywhere in its 24 hours: an "unknown" rule, a rule that is only a comment,
  an open end ("17:00+"), school holidays (SH, no table here), or public
  holidays (PH) for a country with no holiday table, but only where the answer
  depends on them. The caller never treats None as open.

The semantics are those of the reference evaluator, the npm package
`opening_hours` (used by OSM's own tools); spec/test_osm_hours_reference.py
checks every real Copenhagen value against it. In short: rules are read in
order; a later ";" rule that selects a day replaces what the earlier rules said
about that whole day (its past-midnight tail of the day before included),
unless it only closes ("Mo off" closes Monday; "Mo 12:00-13:00 off" closes an
hour); a "," rule adds to the earlier ones; a "||" rule applies only where
nothing else says open or unknown. Public holidays come from the `holidays`
package (its "public" category) for `country` (ISO 3166-1 alpha-2, any case)
and optional `subdivision` (ignored when the package doesn't know it).
"""

from __future__ import annotations

from datetime import date, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING

from app.hours.osm_selectors import Unsupported
from app.hours.osm_syntax import DAY, Rule, parse

if TYPE_CHECKING:
    import holidays

CLOSED, OPEN, UNKNOWN = 0, 1, 2
ONE_DAY = timedelta(days=1)
WHOLE_DAY = ((0, DAY, False),)


def intervals(value: str | None, day: date, *, country: str | None = None,
              subdivision: str | None = None) -> list[tuple[int, int]] | None:
    """The open intervals of `day` (see the module doc), or None for "no hours"."""
    rules = _rules(value) if isinstance(value, str) else None
    if rules is None:
        return None
    table = _holiday_table(country.upper(), subdivision) if country else None
    outcomes = _outcomes(rules, day, table)
    first = outcomes[0]
    return first if all(outcome == first for outcome in outcomes) else None


@lru_cache(maxsize=4096)
def _rules(value: str) -> tuple[Rule, ...] | None:
    try:
        return tuple(parse(value))
    except Unsupported:
        return None


@lru_cache(maxsize=64)
def _holiday_table(country: str, subdivision: str | None) -> holidays.HolidayBase | None:
    import holidays   # its tables cost 30 ms and a few MiB at start; only PH rules need them

    for subdiv in dict.fromkeys([subdivision, None]):
        try:
            return holidays.country_holidays(country, subdiv=subdiv)
        except NotImplementedError:  # an unknown country or subdivision
            continue
    return None


class _Unsettled(Exception):
    """A holiday question nobody can answer: (kind, date)."""

    def __init__(self, key: tuple[str, date]) -> None:
        super().__init__(key)
        self.key = key


def _outcomes(rules: tuple[Rule, ...], day: date, table) -> list[list[tuple[int, int]] | None]:
    """The day's intervals under every answer to the holiday questions without a table.

    A rule with PH (no table) or SH matters only if it can change the day: the
    evaluation is rerun with each answer to each unanswerable question it
    actually asked, and the caller takes the result only if all agree.
    """
    results: list[list[tuple[int, int]] | None] = []

    def run(assumed: dict[tuple[str, date], bool]) -> None:
        def is_holiday(kind: str, when: date) -> bool:
            if kind == "PH" and table is not None:
                return when in table
            if (kind, when) not in assumed:
                raise _Unsettled((kind, when))
            return assumed[(kind, when)]
        try:
            results.append(_day_intervals(rules, day, is_holiday))
        except _Unsettled as question:
            run({**assumed, question.key: True})
            run({**assumed, question.key: False})

    run({})
    return results


def _day_intervals(rules, day: date, is_holiday) -> list[tuple[int, int]] | None:
    today = _day_states(rules, day, is_holiday)
    if UNKNOWN in today:
        return None
    timeline = today + _day_states(rules, day + ONE_DAY, is_holiday)
    found = []
    start = timeline.find(OPEN)
    while 0 <= start < DAY:
        ends = [i for i in (timeline.find(CLOSED, start), timeline.find(UNKNOWN, start)) if i >= 0]
        end = min(ends, default=len(timeline))
        found.append((start, end))
        start = timeline.find(OPEN, end)
    return found


def _day_states(rules, day: date, is_holiday) -> bytearray:
    """The state of each minute of `day`, as the reference's getStatePair sees it."""
    applying: list[Rule] = []
    for index, rule in enumerate(rules):
        selected = day - ONE_DAY if rule.wrapped else day
        if not all(any(test(selected, is_holiday) for test in group) for group in rule.groups):
            continue
        # The reference's override: a rule that selects the day (or a bare time
        # rule right after another bare one) and opens or is unknown replaces
        # everything before it for that day. Closing rules, "," and "||" rules
        # and past-midnight tails never do.
        replaces = (rule.groups or (index > 0 and rule.meaning and not rules[index - 1].groups))
        if replaces and (rule.meaning or rule.unknown) and not (
                rule.wrapped or rule.additional or rule.fallback):
            applying = []
        applying.append(rule)

    states = bytearray(DAY)
    for rule in applying:
        state = OPEN if rule.meaning and not rule.unknown else UNKNOWN if (
            rule.meaning or rule.unknown) else CLOSED
        for start, end, open_end in rule.spans or WHOLE_DAY:
            if start >= end:
                continue
            paint = UNKNOWN if open_end and state != CLOSED else state
            if rule.fallback:  # only where nothing is open or unknown yet
                states[start:end] = states[start:end].replace(bytes([CLOSED]), bytes([paint]))
            else:
                states[start:end] = bytes([paint]) * (end - start)
    return states
