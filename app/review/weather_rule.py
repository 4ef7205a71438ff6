"""The review's weather rule: an outdoor stop on a day whose forecast says
rain is likely.

A stop is outdoor when its place's types or tags say so (outdoor.py). Rain is likely when the day's
precipitation probability is at least 70 %, or at least 5 mm are expected, or
its weather code is a thunderstorm or snow (WMO codes, as Open-Meteo gives
them). On a *forecast* day that is a `weather` warning with fixes: move the
stop to the trip's driest day on which it verifiably fits, or swap it with an
indoor visit of such a day (the fix search, remedies.py). A day beyond the forecast horizon only has
typical values ("typical, not forecast"): there it is at most an observation
(severity `info`, no fixes), which the trip agent never treats as material.
"""

from __future__ import annotations

from ..trips.model import Day, Stop, Trip
from ..trips.schedule import date_label
from .issues import NOT_VISITS, DayFacts, Issue, Json, PlaceBook, quote

RAIN_PROBABILITY = 70        # % or more
RAIN_MM = 5.0                # or this much rain in the day
STORM_CODES = frozenset({95, 96, 99})
SNOW_CODES = frozenset({71, 73, 75, 77, 85, 86})

def wet_reason(day: Json | None) -> str | None:
    """Why rain is likely that day ("an 80% chance of rain"), or None."""
    if not isinstance(day, dict):
        return None
    code, prob, mm = day.get("weatherCode"), day.get("precipitationProbability"), day.get("precipitationMm")
    if code in STORM_CODES:
        return "thunderstorms"
    if code in SNOW_CODES:
        return "snow"
    typical = day.get("source") != "forecast"
    if isinstance(prob, (int, float)) and prob >= RAIN_PROBABILITY:
        percent = round(prob)
        article = "an" if str(percent).startswith("8") or percent in (11, 18) else "a"
        return f"rain on {percent}% of these days" if typical else f"{article} {percent}% chance of rain"
    if isinstance(mm, (int, float)) and mm >= RAIN_MM:
        return f"{mm:g} mm of rain on average" if typical else f"{mm:g} mm of rain"
    return None


def driest_days(trip: Trip, day: Day, weather: dict[str, Json] | None) -> tuple[str, ...]:
    """The trip's other days with known weather where rain is not likely,
    driest first (lowest chance, then least rain; forecasts before typical
    values, then the nearest day)."""
    weather, here = weather or {}, day.position
    ranked = []
    for other in trip.days:
        w = weather.get(trip.day_date(other) or "")
        if other.id == day.id or not w or wet_reason(w) is not None:
            continue
        ranked.append(((w.get("precipitationProbability") or 0, w.get("precipitationMm") or 0.0,
                        w.get("source") != "forecast", abs(other.position - here)), other.id))
    return tuple(day_id for _, day_id in sorted(ranked))


def weather(facts: DayFacts) -> list[Issue]:
    day_weather = (facts.weather or {}).get(facts.date)
    reason = wet_reason(day_weather)
    if day_weather is None or reason is None:
        return []
    forecast = day_weather.get("source") == "forecast"
    when = date_label(facts.date)
    issues = []
    for stop in facts.day.stops:
        if stop.kind in NOT_VISITS or not facts.book.outdoor(stop):
            continue
        if forecast:
            issues.append(Issue("weather", "warning", f"{quote(stop.name)} is outdoors, and the forecast for "
                                f"{when} says {reason}.", (stop.id,), subject=stop.id))
        else:
            issues.append(Issue("weather", "info", f"{quote(stop.name)} is outdoors; {when} is beyond the "
                                f"forecast, and past years had {reason} (typical, not forecast).", (stop.id,),
                                subject=stop.id, detail={"typical": True}))
    return issues


def indoor_visits(day: Day, book: PlaceBook) -> list[Stop]:
    """Stops of a day that could take an outdoor visit's place: visits whose
    place is known and not outdoor, without a set time, not a meal."""
    return [s for s in day.stops if s.kind not in NOT_VISITS and s.kind != "food" and not s.set_time
            and book.raw(s) is not None and not book.outdoor(s)]
