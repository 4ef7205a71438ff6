"""Meals: the one table every rule about a meal reads.

A food stop may be a meal (breakfast, brunch, lunch, afternoon tea, dinner).
What each one means is written here once: its name on screen and in a
sentence, how long it usually takes (the hours rule's default duration;
public/hours.js is that rule's twin and the hours vectors pin its copy),
when it usually starts (the review's `meal_time` rule), the time a
suggestion aims for, which place types serve it, and which meal a start
time suggests. The ops validate a stop's `meal` against `Meal`, the
review, the planner and the agent read `MEALS`, and the page gets the
labels and lengths from `GET /api/meals` (`public_meals`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

Meal = Literal["breakfast", "brunch", "lunch", "afternoon_tea", "dinner"]


def _hm(hours: int, minutes: int = 0) -> int:
    return hours * 60 + minutes


@dataclass(frozen=True)
class MealRule:
    key: str
    label: str                     # on its own: "Afternoon tea"
    word: str                      # inside a sentence: "afternoon tea"
    minutes: int                   # how long it usually takes
    window: tuple[int, int]        # when it usually starts (minutes from midnight, inclusive)
    target: int                    # where a suggestion puts it (minutes from midnight)
    place_types: tuple[str, ...]   # Google place types that serve it (OpenStreetMap: app/providers/osm_tags.py)
    until: int                     # a stop starting before this (and after the meal before) suggests this meal


# In the order of the day. Brunch and lunch, lunch and afternoon tea, tea and
# dinner overlap on purpose in their windows.
MEALS: dict[str, MealRule] = {m.key: m for m in (
    MealRule("breakfast", "Breakfast", "breakfast", 45, (_hm(6, 30), _hm(10, 30)), _hm(8, 30),
             ("breakfast_restaurant", "cafe", "bakery"), _hm(10, 30)),
    MealRule("brunch", "Brunch", "brunch", 60, (_hm(10), _hm(14)), _hm(10, 30),
             ("brunch_restaurant", "cafe"), _hm(11, 30)),
    MealRule("lunch", "Lunch", "lunch", 60, (_hm(11), _hm(15)), _hm(12, 30), ("restaurant",), _hm(15)),
    MealRule("afternoon_tea", "Afternoon tea", "afternoon tea", 45, (_hm(14, 30), _hm(17, 30)), _hm(15, 30),
             ("cafe", "tea_house", "bakery"), _hm(17, 30)),
    MealRule("dinner", "Dinner", "dinner", 75, (_hm(17, 30), _hm(23)), _hm(19, 30), ("restaurant",), _hm(48)),
)}
assert tuple(MEALS) == get_args(Meal), "Meal and MEALS list the same meals in the same order"

# Every food place Wayline suggests (Find places to eat, Optimize, a review fix
# that replaces a meal) carries this note: nothing can confirm a diet.
FOOD_NOTE = ("Check allergies and dietary needs with the restaurant before you go: the map data can't "
             "confirm them, and Wayline never claims a place meets one.")

MEAL_MINUTES = {key: m.minutes for key, m in MEALS.items()}


def meal_for(start_min: int) -> str:
    """The meal a stop starting at `start_min` (minutes from midnight) suggests."""
    return next(m.key for m in MEALS.values() if start_min < m.until)


def public_meals() -> list[dict]:
    """What the page shows: each meal's key, label and usual length, in order."""
    return [{"key": m.key, "label": m.label, "minutes": m.minutes} for m in MEALS.values()]
