"""Candidate places: food or sight, which types to ask for, how they rank,
and whether the day has one already. Pure functions, no I/O."""

from __future__ import annotations

from collections.abc import Iterable

from ..legs import haversine_m
from ..meals import MEALS
from ..preferences import EffectivePreferences
from ..trips.model import Day, Trip

MEAL_TYPES = {key: list(meal.place_types) for key, meal in MEALS.items()}
FOOD_TYPES = {"restaurant", "cafe", "bakery", "bar", "food_court", "coffee_shop", "tea_house", "meal_takeaway",
              "food"} | {t for types in MEAL_TYPES.values() for t in types}
# Google Table A cuisine types we may ask for (an unknown type is a 400 from Google).
CUISINE_TYPES = {c: f"{c}_restaurant" for c in (
    "afghani", "african", "american", "asian", "barbecue", "brazilian", "chinese", "french", "greek",
    "hamburger", "indian", "indonesian", "italian", "japanese", "korean", "lebanese", "mediterranean",
    "mexican", "middle_eastern", "pizza", "ramen", "seafood", "spanish", "sushi", "thai", "turkish",
    "vietnamese")} | {"steak": "steak_house"}
INTEREST_TYPES = {
    "museum": ["museum"], "art": ["art_gallery", "museum"], "history": ["historical_landmark", "museum"],
    "park": ["park"], "nature": ["park", "national_park"], "garden": ["park"], "shopping": ["shopping_mall"],
    "market": ["market"], "nightlife": ["night_club", "bar"], "bar": ["bar"], "beach": ["beach"],
    "viewpoint": ["tourist_attraction"], "sight": ["tourist_attraction"], "landmark": ["tourist_attraction"],
    "architecture": ["tourist_attraction"], "church": ["church"], "zoo": ["zoo"], "aquarium": ["aquarium"],
    "family": ["amusement_park", "zoo"], "music": ["performing_arts_theater"], "theater": ["performing_arts_theater"],
}
DEFAULT_EXPLORE_TYPES = ["tourist_attraction", "museum", "park"]


def _words(values: Iterable[str]) -> list[str]:
    return [v.strip().lower().replace(" ", "_").rstrip("s") for v in values if v and v.strip()]


def cuisine_types(cuisines: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(CUISINE_TYPES[w] for w in _words(cuisines) if w in CUISINE_TYPES))


def interest_types(interests: Iterable[str]) -> list[str]:
    out: list[str] = []
    for word in _words(interests):
        out += INTEREST_TYPES.get(word, [])
    return list(dict.fromkeys(out))


def is_food(place: dict) -> bool:
    return bool(FOOD_TYPES & set(place.get("types") or []))


def score(place: dict, anchor: tuple[float, float] | None, prefs: EffectivePreferences, cuisine: bool) -> float:
    """Higher is better: a rating shrunk toward 4.0 by how few people rated,
    minus distance, minus price above the person's limit, plus cuisine match."""
    count = place.get("userRatingCount") or 0
    rating = place.get("rating") or 3.5
    value = (rating * count + 4.0 * 50) / (count + 50)
    if anchor is not None and place.get("lat") is not None:
        value -= 0.4 * haversine_m(anchor[0], anchor[1], place["lat"], place["lng"]) / 1000
    price, limit = place.get("priceLevel"), prefs.user.maxPriceLevel
    if limit is None and prefs.trip.budget is not None:
        limit = {"low": 2, "moderate": 3, "high": None}[prefs.trip.budget]
    if price is not None and limit is not None and price > limit:
        value -= 0.6 * (price - limit)
    if cuisine:
        text = " ".join(place.get("types") or []) + " " + (place.get("name") or "").lower()
        if any(w in text for w in _words(prefs.user.cuisines)):
            value += 0.4
    return value


SAME_PLACE_M = 200


def already_planned(place: dict, day: Day) -> bool:
    """The day has this place already: the same Google id, or a stop typed in
    by hand with the same name close by (or without coordinates)."""
    name = (place.get("name") or "").casefold().strip()
    for stop in day.stops:
        if stop.place_id and stop.place_id == place.get("placeId"):
            return True
        if name and stop.name.casefold().strip() == name:
            if stop.lat is None or stop.lng is None or place.get("lat") is None:
                return True
            if haversine_m(stop.lat, stop.lng, place["lat"], place["lng"]) <= SAME_PLACE_M:
                return True
    return False


def usable(place: dict, day: Day) -> bool:
    return (not already_planned(place, day) and place.get("lat") is not None
            and place.get("businessStatus") in (None, "OPERATIONAL"))


def centre(stops: list, trip: Trip) -> tuple[float, float] | None:
    points = [(s.lat, s.lng) for s in stops if s.lat is not None and s.lng is not None]
    if points:
        return sum(p[0] for p in points) / len(points), sum(p[1] for p in points) / len(points)
    if trip.dest_lat is not None and trip.dest_lng is not None:
        return trip.dest_lat, trip.dest_lng
    return None
