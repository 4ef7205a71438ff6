"""Tokenizer and parser for OpenStreetMap `opening_hours` values.

The grammar and its quirks follow the reference evaluator, the npm package
`opening_hours` (3.15), which OSM's own tools use: `parse` turns a value into
the same list of internal rules that it builds, so `app/hours/osm.py` can
evaluate them the same way. Anything this parser does not understand raises
`Unsupported`: the reference's many spelling corrections (other languages,
"10am", "daily") and variable times (sunrise, dusk) are deliberately left out,
and a value that uses them has no hours here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.hours.osm_selectors import DayTest, Selectors, Unsupported

DAY = 24 * 60

# A time span: (start, end, open_end) in minutes from the rule's own midnight.
Span = tuple[int, int, bool]


@dataclass(frozen=True)
class Rule:
    """One of the reference's internal rules, in evaluation order."""

    groups: tuple[tuple[DayTest, ...], ...]  # every group needs one passing test
    spans: tuple[Span, ...]  # () means the whole day
    meaning: bool  # open
    unknown: bool
    additional: bool = False  # after "," : adds to the rules before it
    fallback: bool = False  # after "||": only where nothing else is open
    # The after-midnight part of the rule before it: its tests look at the
    # day before, and its spans start at 00:00.
    wrapped: bool = False


WEEKDAYS = {"mo": 0, "tu": 1, "we": 2, "th": 3, "fr": 4, "sa": 5, "su": 6}
MONTHS = {m: i + 1 for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"])}
# The English spellings the reference corrects without complaint.
ENGLISH_WEEKDAYS = {
    "mon": 0, "monday": 0, "mondays": 0, "tue": 1, "tues": 1, "tuesday": 1, "tuesdays": 1,
    "wed": 2, "weds": 2, "wednesday": 2, "wednesdays": 2, "thu": 3, "thur": 3, "thurs": 3,
    "thursday": 3, "thursdays": 3, "fri": 4, "friday": 4, "fridays": 4, "sat": 5,
    "saturday": 5, "saturdays": 5, "sun": 6, "sunday": 6, "sundays": 6,
}
ENGLISH_MONTHS = {"june": 6, "july": 7}
KEYWORDS = {
    "day": ("calcday", 1), "days": ("calcday", 1), "easter": ("event", "easter"),
    "week": ("week", None), "open": ("state", "open"), "closed": ("state", "closed"),
    "off": ("state", "closed"), "unknown": ("state", "unknown"),
    "sunrise": ("timevar", None), "sunset": ("timevar", None),
    "dawn": ("timevar", None), "dusk": ("timevar", None),
}
DASHES = "–—‐‑‒−"
_WORD = re.compile(r"[^\W\d_]+")
_NUMBER = re.compile(r"([0-9]+)(?:\.(?=[^0-9]))?")  # "1." before a non-digit drops the dot
_COMMENT = re.compile(r'"([^"]+)"')

Token = tuple[str, object]  # (kind, value); punctuation is its own kind


def tokenize(value: str) -> list[tuple[list[Token], bool]]:
    """Splits a value into rules (tokens, is_fallback), as the reference does."""
    if not value.replace(";", "").strip():
        raise Unsupported("empty value")
    rules: list[tuple[list[Token], bool]] = []
    tokens: list[Token] = []
    fallback = False
    i = 0
    while i < len(value):
        ch = value[i]
        if ch.isspace():
            i += 1
        elif word := _WORD.match(value, i):
            tokens.append(_word_token(word.group().lower()))
            i = word.end()
        elif value.startswith("24/7", i):
            tokens.append(("24/7", None))
            i += 4
        elif ch == ";":
            rules.append((tokens, fallback))
            tokens, fallback = [], False
            i += 1
        elif value.startswith("||", i):
            if not tokens:
                raise Unsupported("nothing before ||")
            rules.append((tokens, fallback))
            tokens, fallback = [], True
            i += 2
        elif ch in ":.":
            tokens.append(("timesep", ":"))
            i += 1
        elif number := _NUMBER.match(value, i):
            n = int(number.group(1))
            tokens.append(("year", n) if n > 1900 else ("number", n))
            i = number.end()
        elif comment := _COMMENT.match(value, i):
            tokens.append(("comment", comment.group(1)))
            i = comment.end()
        elif ch in "-,+/[]()" or ch in DASHES:
            tokens.append(("-", None) if ch in DASHES else (ch, None))
            i += 1
        else:
            raise Unsupported(f"unexpected character {ch!r}")
    rules.append((tokens, fallback))
    return rules


def _word_token(word: str) -> Token:
    if word in WEEKDAYS or word in ENGLISH_WEEKDAYS:
        return ("weekday", WEEKDAYS.get(word, ENGLISH_WEEKDAYS.get(word)))
    if word in MONTHS or word in ENGLISH_MONTHS:
        return ("month", MONTHS.get(word, ENGLISH_MONTHS.get(word)))
    if word in ("ph", "sh"):
        return ("holiday", word.upper())
    if word in KEYWORDS:
        return KEYWORDS[word]
    raise Unsupported(f"unknown word {word!r}")


def parse(value: str) -> list[Rule]:
    """The internal rules of a value; raises Unsupported."""
    rules: list[Rule] = []
    for tokens, fallback in tokenize(value):
        at = 0
        additional = False
        while tokens and at < len(tokens):
            parser = _RuleParser(tokens, Selectors())
            next_at = parser.parse_group(at)
            rules.extend(parser.rules(additional=additional, fallback=fallback))
            if next_at is None:
                break
            at, additional = next_at, True
    return rules


class _RuleParser:
    """Parses one rule (up to ";", "||" or an additional-rule ",")."""

    def __init__(self, tokens: list[Token], selectors) -> None:
        self.tokens = tokens
        self.sel = selectors
        self.spans: list[Span] = []
        self.meaning = True
        self.unknown = False
        self.modifier_set = False

    def kind(self, at: int) -> str | None:
        return self.tokens[at][0] if 0 <= at < len(self.tokens) else None

    def match(self, at: int, *kinds: str) -> bool:
        return all(self.kind(at + k) == kind for k, kind in enumerate(kinds))

    def value(self, at: int):
        return self.tokens[at][1]

    def parse_group(self, at: int) -> int | None:
        """Parses from `at`; returns where an additional rule starts, or None."""
        after_time = -1
        while at < len(self.tokens):
            kind = self.kind(at)
            if kind == "weekday":
                at = self.sel.weekdays(self, at)
            elif kind == "24/7":
                self.spans.append((0, DAY, False))
                at += 1
            elif kind == "holiday":
                at = self.sel.holidays(self, at, into_weekdays=self.match(at + 1, ","))
            elif (self.match(at, "month", "number") or self.match(at, "month", "weekday")
                  or self.match(at, "year", "month", "number") or self.match(at, "year", "event")
                  or kind == "event"):
                at = self.sel.monthdays(self, at, into_months=False)
            elif kind == "year":
                at = self.sel.years(self, at)
            elif kind == "month":
                at = self.sel.months(self, at, into_monthdays=False)
            elif kind == "week":
                at = self.sel.weeks(self, at)
            elif kind == "timesep" and 0 < at < len(self.tokens) - 1 and after_time != at:
                at += 1  # "Mo-Fr: 10:00-18:00": a colon for readability
            elif (self.match(at, "number", "timesep") or self.match(at, "number", "-")
                  or kind == "timevar" or self.match(at, "(", "timevar")):
                at, additional_at = self.times(at)
                if additional_at is not None:
                    return additional_at
                after_time = at
            elif kind == "state":
                state = self.value(at)
                self.meaning = state == "open"
                if state == "unknown":
                    self.unknown = True
                self.modifier_set = True
                at += 1
                if self.match(at, ","):
                    return at + 1
            elif kind == "comment":
                if not self.modifier_set:  # a comment alone means "unknown"
                    self.meaning, self.unknown = False, True
                self.modifier_set = True
                at += 1
                if self.match(at, ","):
                    return at + 1
            else:
                raise Unsupported(f"unexpected token at {at}")
        return None

    def times(self, at: int) -> tuple[int, int | None]:
        """A list of time ranges: (where it ends, where an additional rule starts or None)."""
        while True:
            if self.kind(at) == "timevar" or self.match(at, "(", "timevar"):
                raise Unsupported("variable times (sunrise, sunset, dawn, dusk)")
            if self.match(at, "number", "timesep", "number"):
                at = self.clock_range(at)
            elif self.match(at, "number", "-", "number"):  # "Mo 09-18"
                start, end = self.value(at) * 60, self.value(at + 2) * 60
                if start >= DAY:
                    raise Unsupported("time range starts outside the day")
                end += DAY if end < start else 0
                self.add_span(start, end, False)
                at += 3
            elif self.kind(at) == "number" or self.kind(at) == "(":
                raise Unsupported("incomplete time")
            else:
                return at, at  # "10:00-12:00, Su 10:00-14:00": an additional rule
            if not self.match(at, ","):
                return at, None
            at += 1

    def clock(self, at: int) -> int:
        if self.value(at + 2) > 59:
            raise Unsupported("minutes above 59")
        return self.value(at) * 60 + self.value(at + 2)

    def clock_range(self, at: int) -> int:
        start = self.clock(at)
        if start >= DAY:
            raise Unsupported("time range starts outside the day")
        if self.match(at + 3, "+"):  # "17:00+": open end
            self.open_end(start)
            return at + 4
        if not self.match(at + 3, "-", "number", "timesep", "number"):
            raise Unsupported("a time needs a range or an open end in opening_hours")
        end = self.clock(at + 4)
        at += 7
        if self.match(at, "/"):
            raise Unsupported("points in time")
        if self.match(at, "+"):  # "10:00-21:00+": open end after the range
            self.open_end(end + (DAY if end < start else 0))
            at += 1
        if end <= start:
            end += DAY
        self.add_span(start, end, False)
        return at

    def open_end(self, start: int) -> None:
        # The reference's guess for how long an open end lasts (then unknown).
        if start >= 22 * 60:
            end = start + 8 * 60
        elif start >= 17 * 60:
            end = start + 10 * 60
        else:
            end = DAY
        self.add_span(start, end, True)

    def add_span(self, start: int, end: int, open_end: bool) -> None:
        if end > 2 * DAY:
            raise Unsupported("time range crosses two midnights")
        self.spans.append((start, end, open_end))

    def rules(self, *, additional: bool, fallback: bool) -> list[Rule]:
        groups = self.sel.groups()
        rule = Rule(groups=groups,
                    spans=tuple((s, min(e, DAY), oe) for s, e, oe in self.spans),
                    meaning=self.meaning, unknown=self.unknown,
                    additional=additional, fallback=fallback)
        past_midnight = tuple((0, e - DAY, oe) for s, e, oe in self.spans if e > DAY)
        if not past_midnight:
            return [rule]
        # The reference's wrapped rule is neither additional nor a fallback.
        return [rule, Rule(groups=groups, spans=past_midnight, meaning=self.meaning,
                           unknown=self.unknown, wrapped=True)]
