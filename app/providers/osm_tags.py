"""OpenStreetMap elements as the planner's places, and the written mapping
between the planner's Google-style place types and OSM tags, read both ways
from ONE table (`TYPE_TAGS`):

- forward: the Overpass filters that find places of a type near a point
  (`overpass_query`);
- backward: the Google-style types of an OSM element (`google_types`), by
  checking the same filters against its tags, so the planner's food and
  interest logic (FOOD_TYPES, MEAL_TYPES, CUISINE_TYPES, INTEREST_TYPES) works
  unchanged, and a place found by type always carries that type.

Each type maps to one or more selectors (any may match); a selector is a
tuple of tag filters (all must match). Order matters: an element's primary
type is its first matching type, so specific types come before broad ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..errors import Invalid

OSM_TYPES = ("node", "way", "relation")


@dataclass(frozen=True)
class Tag:
    """One tag filter. No values: the key is present (any value)."""

    key: str
    values: tuple[str, ...] = ()
    listed: bool = False   # a ;-separated list such as cuisine=italian;pizza: any item matches
    negate: bool = False

    def matches(self, tags: dict) -> bool:
        value = tags.get(self.key)
        if not self.values:
            found = value is not None
        elif value is None:
            found = False
        elif self.listed:
            found = bool({v.strip().lower() for v in str(value).split(";")} & set(self.values))
        else:
            found = value in self.values
        return found != self.negate

    def query(self) -> str:
        """The Overpass QL filter, e.g. ["amenity"="cafe"] or ["cuisine"~"(^|;) *(thai) *(;|$)",i]."""
        key = f'"{self.key}"'
        if not self.values:
            return f"[!{key}]" if self.negate else f"[{key}]"
        op = ("!" if self.negate else "") + ("=" if len(self.values) == 1 and not self.listed else "~")
        if self.listed:
            return f'[{key}{op}"(^|;) *({"|".join(self.values)}) *(;|$)",i]'
        if len(self.values) == 1:
            return f'[{key}{op}"{self.values[0]}"]'
        return f'[{key}{op}"^({"|".join(self.values)})$"]'


Selector = tuple[Tag, ...]


def tag(key: str, *values: str) -> Tag:
    return Tag(key, tuple(values))


def listed(key: str, *values: str) -> Tag:
    return Tag(key, tuple(values), listed=True)


def not_(key: str, *values: str) -> Tag:
    return Tag(key, tuple(values), negate=True)


EATERIES = tag("amenity", "restaurant", "fast_food")
CAFE_OR_RESTAURANT = tag("amenity", "restaurant", "cafe")
PUBLIC = not_("access", "private", "no")
SIGHT_TOURISM = ("attraction", "viewpoint", "museum", "gallery", "zoo", "aquarium", "theme_park")
LANDMARK_HISTORIC = ("castle", "palace", "monument", "ruins", "fort", "manor", "city_gate", "archaeological_site",
                     "tower", "church", "monastery", "ship")
LODGING_TOURISM = ("hotel", "hostel", "guest_house", "motel", "apartment", "chalet")

# Google cuisine type -> OSM cuisine values (the planner's CUISINE_TYPES; OSM
# spells some differently: burger, afghan, bbq, steak_house).
CUISINES: dict[str, tuple[str, ...]] = {
    "afghani_restaurant": ("afghan",), "african_restaurant": ("african", "ethiopian", "eritrean"),
    "american_restaurant": ("american",), "asian_restaurant": ("asian",),
    "barbecue_restaurant": ("barbecue", "bbq"), "brazilian_restaurant": ("brazilian",),
    "chinese_restaurant": ("chinese",), "french_restaurant": ("french",), "greek_restaurant": ("greek",),
    "hamburger_restaurant": ("burger",), "indian_restaurant": ("indian",),
    "indonesian_restaurant": ("indonesian",), "italian_restaurant": ("italian",),
    "japanese_restaurant": ("japanese",), "korean_restaurant": ("korean",),
    "lebanese_restaurant": ("lebanese",), "mediterranean_restaurant": ("mediterranean",),
    "mexican_restaurant": ("mexican", "tex-mex"), "middle_eastern_restaurant": ("middle_eastern",),
    "pizza_restaurant": ("pizza",), "ramen_restaurant": ("ramen",), "seafood_restaurant": ("seafood", "fish"),
    "spanish_restaurant": ("spanish", "tapas"), "sushi_restaurant": ("sushi",), "thai_restaurant": ("thai",),
    "turkish_restaurant": ("turkish",), "vietnamese_restaurant": ("vietnamese",), "steak_house": ("steak_house",),
}

TYPE_TAGS: dict[str, tuple[Selector, ...]] = {
    **{google: ((EATERIES, listed("cuisine", *osm)),) for google, osm in CUISINES.items()},
    # food and drink
    "breakfast_restaurant": ((CAFE_OR_RESTAURANT, listed("cuisine", "breakfast")),
                             (CAFE_OR_RESTAURANT, tag("breakfast", "yes"))),
    "brunch_restaurant": ((CAFE_OR_RESTAURANT, listed("cuisine", "brunch")),
                          (CAFE_OR_RESTAURANT, tag("brunch", "yes"))),
    "coffee_shop": ((tag("amenity", "cafe"), listed("cuisine", "coffee_shop", "coffee")),),
    "tea_house": ((tag("amenity", "cafe"), listed("cuisine", "tea", "bubble_tea")),),
    "restaurant": ((tag("amenity", "restaurant"),),),
    "fast_food_restaurant": ((tag("amenity", "fast_food"),),),
    "meal_takeaway": ((tag("amenity", "fast_food"),),),
    "cafe": ((tag("amenity", "cafe"),),),
    "bakery": ((tag("shop", "bakery", "pastry"),),),
    "ice_cream_shop": ((tag("amenity", "ice_cream"),), (tag("shop", "ice_cream"),)),
    "food_court": ((tag("amenity", "food_court"),),),
    "pub": ((tag("amenity", "pub"),),),
    "bar": ((tag("amenity", "bar", "pub", "biergarten"),),),
    "night_club": ((tag("amenity", "nightclub"),),),
    "market": ((tag("amenity", "marketplace"),),),
    "food": ((tag("amenity", "restaurant", "fast_food", "cafe", "food_court", "ice_cream"),),
             (tag("shop", "bakery", "pastry"),)),
    # sights and things to do
    "museum": ((tag("tourism", "museum"),),),
    "art_gallery": ((tag("tourism", "gallery"),),),
    "zoo": ((tag("tourism", "zoo"),),),
    "aquarium": ((tag("tourism", "aquarium"),),),
    "amusement_park": ((tag("tourism", "theme_park"),),),
    "church": ((tag("amenity", "place_of_worship"), tag("religion", "christian")),),
    "mosque": ((tag("amenity", "place_of_worship"), tag("religion", "muslim")),),
    "synagogue": ((tag("amenity", "place_of_worship"), tag("religion", "jewish")),),
    "hindu_temple": ((tag("amenity", "place_of_worship"), tag("religion", "hindu")),),
    "performing_arts_theater": ((tag("amenity", "theatre"),),),
    "movie_theater": ((tag("amenity", "cinema"),),),
    "botanical_garden": ((tag("leisure", "garden"), tag("garden:type", "botanical"), PUBLIC),),
    "park": ((tag("leisure", "park", "garden"), PUBLIC),),
    "national_park": ((tag("boundary", "national_park"),), (tag("leisure", "nature_reserve"),)),
    "beach": ((tag("natural", "beach"),), (tag("leisure", "beach_resort"),)),
    "historical_landmark": ((tag("historic", *LANDMARK_HISTORIC),),),
    "department_store": ((tag("shop", "department_store"),),),
    "shopping_mall": ((tag("shop", "mall", "department_store"),),),
    "tourist_attraction": ((tag("tourism", *SIGHT_TOURISM),), (tag("historic", *LANDMARK_HISTORIC),)),
    # lodging
    "hotel": ((tag("tourism", "hotel"),),),
    "hostel": ((tag("tourism", "hostel"),),),
    "guest_house": ((tag("tourism", "guest_house"),),),
    "motel": ((tag("tourism", "motel"),),),
    "lodging": ((tag("tourism", *LODGING_TOURISM),),),
    # everyday places a text search may return
    "pharmacy": ((tag("amenity", "pharmacy"),),),
    "library": ((tag("amenity", "library"),),),
    "train_station": ((tag("railway", "station"),),),
}

# A nearby search without types: the kinds of places a trip is made of.
ANY_PLACE_TYPES = ("food", "bar", "night_club", "market", "tourist_attraction", "park", "shopping_mall",
                   "performing_arts_theater", "lodging")


def google_types(tags: dict) -> list[str]:
    """The Google-style types an element with these tags has, primary first
    (cuisines in the order the tag lists them: sushi;japanese is sushi first)."""
    types = [t for t, selectors in TYPE_TAGS.items()
             if any(all(f.matches(tags) for f in selector) for selector in selectors)]
    listed_cuisines = [c.strip().lower() for c in str(tags.get("cuisine", "")).split(";")]

    def position(t: str) -> int:
        return min(listed_cuisines.index(v) for v in CUISINES[t] if v in listed_cuisines)

    return sorted((t for t in types if t in CUISINES), key=position) + [t for t in types if t not in CUISINES]


def selectors_for(types: list[str] | tuple[str, ...]) -> list[Selector]:
    """Every selector that finds places of these types, each once, in order.
    A type without a mapping is refused (Google would refuse it too)."""
    out: list[Selector] = []
    for t in types:
        if t not in TYPE_TAGS:
            raise Invalid(f"OpenStreetMap search does not know the place type {t!r}", field="type")
        out += [s for s in TYPE_TAGS[t] if s not in out]
    return out


def overpass_query(selectors: list[Selector], lat: float, lng: float, radius_m: int, limit: int,
                   timeout_s: int) -> str:
    """One Overpass QL query: named nodes, ways and relations matching any
    selector within radius_m of the point; ways and relations with their
    centre; tags only; at most `limit` elements."""
    around = f"(around:{radius_m},{lat},{lng})"
    clauses = "".join(f'nwr{"".join(f.query() for f in s)}["name"]{around};' for s in selectors)
    return f"[out:json][timeout:{timeout_s}];({clauses});out center tags {limit};"


# -- elements as the planner's places --------------------------------------------


def normalize_place(raw: dict) -> dict:
    """An OSM place in google.normalize_place's shape; types are Google-style,
    worked out from the tags each time (a mapping change applies to cached places)."""
    types = google_types(raw.get("tags") or {})
    return {
        "placeId": raw.get("id"), "name": raw.get("name"), "lat": raw.get("lat"), "lng": raw.get("lng"),
        "address": raw.get("address"), "rating": None, "userRatingCount": None, "priceLevel": None,
        "types": types, "primaryType": types[0] if types else None, "businessStatus": "OPERATIONAL",
        "raw": raw,
    }


def _raw(osm_type: Any, osm_id: Any, lat: Any, lng: Any, tags: dict, address: str | None,
         language: str | None, fallback_name: str | None = None) -> dict | None:
    if osm_type not in OSM_TYPES or type(osm_id) is not int or osm_id <= 0:
        return None
    if isinstance(lat, bool) or isinstance(lng, bool):
        return None
    try:
        lat, lng = float(lat), float(lng)
    except (TypeError, ValueError):
        return None
    name = (language and tags.get(f"name:{language}")) or tags.get("name") or _text(fallback_name)
    # A point off the globe would reach a route's URL (and be refused there, as a crash).
    if not name or not (math.isfinite(lat) and math.isfinite(lng) and -90 <= lat <= 90 and -180 <= lng <= 180):
        return None
    return {"source": "osm", "id": f"osm:{osm_type}/{osm_id}", "name": str(name), "lat": lat, "lng": lng,
            "address": address, "tags": tags}


def _join(*parts: Any) -> str:
    return " ".join(str(p) for p in parts if isinstance(p, (str, int)) and not isinstance(p, bool) and p)


def _mapping(value: Any) -> dict:
    """A JSON object of the answer, or {} when it is of another type (answers are read tolerantly)."""
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _address(street: str, place: str) -> str | None:
    return ", ".join(p for p in (street, place) if p) or None


def from_nominatim(item: Any, language: str | None) -> dict | None:
    """A Nominatim jsonv2 result (search or lookup, with extratags, namedetails
    and addressdetails) as our raw place."""
    if not isinstance(item, dict):
        return None
    tags = {str(k): str(v) for k, v in _mapping(item.get("extratags")).items()}
    tags.update({str(k): str(v) for k, v in _mapping(item.get("namedetails")).items()})
    category, kind = item.get("category") or item.get("class"), item.get("type")
    if category and kind:
        tags.setdefault(str(category), str(kind))
    a = _mapping(item.get("address"))
    if isinstance(a.get("country_code"), str) and a["country_code"]:   # its public holidays are that country's
        tags.setdefault("addr:country", a["country_code"].upper())
    street = _join(a.get("road") or a.get("pedestrian") or a.get("footway") or a.get("square"), a.get("house_number"))
    place = _join(a.get("postcode"), a.get("city") or a.get("town") or a.get("village") or a.get("municipality"))
    display = _text(item.get("display_name")) or ""
    return _raw(item.get("osm_type"), item.get("osm_id"), item.get("lat"), item.get("lon"), tags,
                _address(street, place) or display or None, language,
                _text(item.get("name")) or display.split(",")[0].strip() or None)


def from_overpass(element: Any, language: str | None) -> dict | None:
    """An Overpass element (`out center tags`) as our raw place."""
    if not isinstance(element, dict):
        return None
    tags = {str(k): str(v) for k, v in _mapping(element.get("tags")).items()}
    point = element if element.get("type") == "node" else _mapping(element.get("center"))
    street = _join(tags.get("addr:street"), tags.get("addr:housenumber"))
    place = _join(tags.get("addr:postcode"), tags.get("addr:city"))
    return _raw(element.get("type"), element.get("id"), point.get("lat"), point.get("lon"), tags,
                _address(street, place), language)


def notability(tags: dict) -> int:
    """OSM has no popularity: an encyclopedia entry, a website and opening
    hours mark the places people look for (and hours are what the planner needs)."""
    return (("wikidata" in tags) + ("wikipedia" in tags) + ("website" in tags or "contact:website" in tags)
            + ("opening_hours" in tags))
