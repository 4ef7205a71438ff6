"""Why a finding has no fix, in plain words (`noFixReason`): what the fix
search (remedies.py) could not get around, said so that a person knows what
to change ("No day of this trip has it open.")."""

from __future__ import annotations

from collections.abc import Callable

from ..meals import MEALS
from ..preferences import PACE_STOPS
from ..trips.model import Stop
from ..trips.schedule import date_label
from .fixes import FixSearch
from .issues import NOT_VISITS, Issue
from .weather_rule import driest_days

GENERIC_REASON = "Every change Wayline tried would cause a new problem elsewhere in the plan."
BUDGET_REASON = "This day is too busy for Wayline to try every change; fix the other findings first."


def no_fix_reason(search: FixSearch, issue: Issue) -> str:
    if search.budget <= 0:
        return BUDGET_REASON
    explain = REASONS.get(issue.kind)
    return (explain(search, issue) if explain else None) or GENERIC_REASON


def _stop(search: FixSearch, stop_id: str | None) -> Stop:
    return next(s for s in search.day.stops if s.id == stop_id)


def _closed_reason(search: FixSearch, issue: Issue) -> str | None:
    stop = _stop(search, issue.subject)
    open_days = [d for d in search.trip.days if search.ranges(stop, search.trip.dated(d)) != ()]
    if not open_days:
        meal = MEALS[stop.meal].word if stop.meal in MEALS else None
        return f"No day of this trip has it open at a usual time for {meal}." if meal else \
            "No day of this trip has it open."
    return ("It is open on " + ", ".join(date_label(search.trip.dated(d)) for d in open_days[:3]) +
            ", but no time then fits without a new problem elsewhere in the plan.")


def _meal_reason(search: FixSearch, issue: Issue) -> str | None:
    stop = _stop(search, issue.subject)
    if stop.meal in MEALS and search.ranges(stop, search.date) == ():
        return f"Its opening hours leave no start inside the usual time for {MEALS[stop.meal].word} that day."
    return None


def _pace_reason(search: FixSearch, issue: Issue) -> str | None:
    if len(search.trip.days) == 1:
        return "This trip has no other day to move stops to."
    limit = PACE_STOPS[search.prefs.pace]
    room = sum(max(0, limit - sum(s.kind not in NOT_VISITS for s in d.stops))
               for d in search.trip.days if d.id != search.day_id)
    if room < issue.detail["excess"]:
        return f"The other days are full at a {search.prefs.pace} pace."
    return None


def _weather_reason(search: FixSearch, issue: Issue) -> str | None:
    if not driest_days(search.trip, search.day, search.weather):
        return "No other day of this trip has a dry forecast."
    return "No dry day has room for it without a new problem."


Reason = Callable[[FixSearch, Issue], "str | None"]
REASONS: dict[str, Reason] = {
    "closed": _closed_reason, "meal_time": _meal_reason, "pace": _pace_reason, "weather": _weather_reason,
    "overlap": lambda s, i: "No change to this day's times reaches it without a new problem.",
    "unreachable": lambda s, i: "No change to this day's times reaches it without a new problem.",
    "avoided_mode": lambda s, i: "Allowing any of the avoided travel modes would still leave a problem.",
    "long_walk": lambda s, i: "Allowing another travel mode or moving the stop would still leave a problem.",
    "backtracking": lambda s, i: "No order Wayline tried uncrosses the route without a new problem.",
}
