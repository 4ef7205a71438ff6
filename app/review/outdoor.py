"""Whether a place is outdoors, from its Google Places types (OUTDOOR_TYPES)
or its OpenStreetMap tags (OUTDOOR_TAGS): what the weather rule and the
review's place facts (issues.PlaceBook) read."""

from __future__ import annotations

from typing import Any

# Google Places (New) types of places people visit outdoors.
OUTDOOR_TYPES = frozenset({
    "park", "city_park", "national_park", "state_park", "dog_park", "garden", "botanical_garden",
    "hiking_area", "picnic_ground", "beach", "zoo", "wildlife_park", "wildlife_refuge", "observation_deck",
    "scenic_spot", "amusement_park", "water_park", "farmers_market", "market", "flea_market", "plaza",
    "playground", "campground", "marina", "ski_resort", "golf_course", "vineyard", "skateboard_park",
    "cycling_park", "off_roading_area", "barbecue_area",
})
# The same places as OpenStreetMap tags them (key, value).
OUTDOOR_TAGS = frozenset({
    ("leisure", "park"), ("leisure", "garden"), ("leisure", "nature_reserve"), ("leisure", "playground"),
    ("leisure", "beach_resort"), ("leisure", "dog_park"), ("leisure", "golf_course"), ("leisure", "marina"),
    ("leisure", "picnic_table"), ("tourism", "viewpoint"), ("tourism", "zoo"), ("tourism", "theme_park"),
    ("tourism", "picnic_site"), ("tourism", "camp_site"), ("natural", "beach"), ("natural", "peak"),
    ("amenity", "marketplace"), ("boundary", "national_park"), ("place", "square"),
})


def is_outdoor(raw: dict[str, Any] | None) -> bool:
    if not isinstance(raw, dict):
        return False
    types = raw.get("types")
    if isinstance(types, list) and OUTDOOR_TYPES.intersection(t for t in types if isinstance(t, str)):
        return True
    tags = raw.get("tags")
    return isinstance(tags, dict) and any((k, v) in OUTDOOR_TAGS for k, v in tags.items() if isinstance(v, str))
