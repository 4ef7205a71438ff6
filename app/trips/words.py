"""The words of op summaries: sentences for people (toasts, the group's
timeline), with names and times, never field names. Kept apart from the
registry (ops.py) so the rules and the wording each stay readable."""

from __future__ import annotations

from datetime import date

from ..meals import MEALS
from .model import Day, Stop, Trip


def day_label(trip: Trip, day: Day) -> str:
    return f"Day {day.position + 1}" + (f" ({day.title})" if day.title else "")


def quote(name: str) -> str:
    return f"“{name}”"


KIND_WORDS = {"stay": "a place to stay", "sight": "a sight", "food": "food", "activity": "an activity",
              "transit": "transit", "other": "another kind of stop"}
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def stop_label(stop: Stop) -> str:
    """“Name”, or “lunch at “Name”” for a meal."""
    meal = MEALS[stop.meal].word if stop.meal in MEALS else None
    return f"{meal} at {quote(stop.name)}" if meal else quote(stop.name)


def duration_words(n: int) -> str:
    hours, rest = divmod(n, 60)
    if not hours:
        return f"{rest} min"
    return f"{hours} h {rest} min" if rest else f"{hours} h"


def date_words(value: date) -> str:
    return f"{WEEKDAYS[value.weekday()]} {value.day} {MONTHS[value.month - 1]}"


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def sentence(phrases: list[tuple[str, str]], nothing: str) -> str:
    """Phrases as (naming the thing, with "it"): the first names it, the rest say "it"."""
    if not phrases:
        return nothing
    words = [phrases[0][0], *(short for _, short in phrases[1:])]
    text = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
    return text[0].upper() + text[1:]
