"""Google Places (New) place JSON for tests and benchmarks: weekly opening
hours and a place as Places answers it. No test framework here, so a
benchmark can build the same places (bench/review_day.py)."""

from __future__ import annotations

import zlib
from typing import Any

EVERY_DAY = range(7)            # Google: 0 = Sunday
TUE_SUN = (0, 2, 3, 4, 5, 6)
MON_SAT = range(1, 7)


def weekly(days, *spans: tuple[str, str]) -> dict:
    """Weekly hours: each span opens on each day; a close at or before the open
    is the next day (late night)."""
    periods = []
    for day in days:
        for opens, closes in spans:
            oh, om = map(int, opens.split(":"))
            ch, cm = map(int, closes.split(":"))
            next_day = (ch, cm) <= (oh, om)
            periods.append({"open": {"day": day, "hour": oh, "minute": om},
                            "close": {"day": (day + next_day) % 7, "hour": ch, "minute": cm}})
    periods.sort(key=lambda p: (p["open"]["day"], p["open"]["hour"], p["open"]["minute"]))
    return {"openNow": True, "periods": periods}


def always_open() -> dict:
    return {"openNow": True, "periods": [{"open": {"day": 0, "hour": 0, "minute": 0}}]}  # Google's 24h marker


def place_json(pid: str, name: str, lat: float, lng: float, types: list[str], *, rating=4.4, count=1200,
               price: str | None = None, hours: dict | None = None, kitchen: dict | None = None,
               status: str = "OPERATIONAL", address: str | None = None, special: dict | None = None) -> dict:
    place: dict[str, Any] = {
        "name": f"places/{pid}", "id": pid, "displayName": {"text": name, "languageCode": "pt"},
        "types": types + ["point_of_interest", "establishment"], "primaryType": types[0],
        "formattedAddress": address or f"{name}, Lisboa, Portugal",
        "location": {"latitude": lat, "longitude": lng}, "rating": rating, "userRatingCount": count,
        "businessStatus": status, "utcOffsetMinutes": 0, "timeZone": {"id": "Europe/Lisbon"},
        "googleMapsUri": f"https://maps.google.com/?cid={zlib.crc32(pid.encode())}",
    }
    if price:
        place["priceLevel"] = price
    if hours is not None:
        place["regularOpeningHours"] = hours
    if kitchen is not None:
        place["regularSecondaryOpeningHours"] = [dict(kitchen, secondaryHoursType="KITCHEN")]
    if special:
        place["_special"] = special  # {days from today: [(open, close), ...] or [] for closed}
    return place
