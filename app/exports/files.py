"""The export files of a trip as the routes serve them: the calendar (for a
feed link or a member's download) and GPX (a day or the whole trip), built
from the trip in memory and its TripDto legs, so they show the times the page
shows."""

from __future__ import annotations

import asyncio
import hashlib
import re
import unicodedata
from typing import Any
from datetime import datetime

from ..providers.maps import PlacesProvider
from ..trips.dto import TripCache
from ..errors import NotFound

# icalendar and gpxpy are imported by the first export, not at start-up
# (bench/startup.py: most servers' members rarely export).

# Control characters members' text may hold (a name pasted with a NUL or an
# escape) that neither format can carry: XML 1.0 has no way to write them,
# so one stop named with one made every member's GPX unreadable, and
# RFC 5545 allows no control character but tab in a value. Both libraries
# escape everything else; these are left out of the file.
UNWRITABLE_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
# (On the bytes: line ends are CRLF, and UTF-8 uses these bytes for nothing else.)
UNWRITABLE_ICS = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


async def calendar_file(trip_cache: TripCache, trip_id: str, *, page_url: str,
                        updated_at: datetime) -> tuple[bytes, str]:
    """The trip's iCalendar bytes and their ETag. Writing them costs about a
    millisecond per stop (icalendar), so they are built off the event loop,
    once per view of the trip (a change or new legs make a new view) and
    address, and kept with the view."""
    from .calendar import trip_calendar

    view = await trip_cache.entry(trip_id)
    key = (page_url, updated_at)
    built: tuple[Any, bytes, str] | None = view.derived.get("calendar")  # type: ignore[assignment]
    if built is None or built[0] != key:
        made = await asyncio.to_thread(trip_calendar, view.trip, view.legs, page_url=page_url, updated_at=updated_at)
        body = UNWRITABLE_ICS.sub(b"", made)
        built = (key, body, f'"{hashlib.sha256(body).hexdigest()[:32]}"')
        view.derived["calendar"] = built
    return built[1], built[2]


async def gpx_file(trip_cache: TripCache, places: PlacesProvider, trip_id: str, *, page_url: str,
                   day_id: str | None = None) -> tuple[str, str]:
    """(GPX text, a file name) for one day (404 for a day not in the trip) or the whole trip."""
    from .gpx import leg_paths, trip_gpx

    view = await trip_cache.entry(trip_id)
    trip, legs = view.trip, view.legs
    days = trip.days if day_id is None else [d for d in trip.days if d.id == day_id]
    if not days:
        raise NotFound("Day not found")
    stops = {s.id: s for d in days for s in d.stops}
    paths = {}
    for day in days:
        paths.update(await leg_paths(places, legs.get(day.id, []), stops))
    name = file_name(trip.title) + ("" if day_id is None else f"-day-{days[0].position + 1}")
    return UNWRITABLE_XML.sub("", trip_gpx(trip, days, legs, paths, page_url=page_url)), f"{name}.gpx"


def file_name(title: str) -> str:
    """A file name people recognise: the trip's title in plain letters."""
    plain = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    return re.sub(r"[^A-Za-z0-9]+", "-", plain).strip("-").lower()[:60] or "trip"


def matches(if_none_match: str | None, etag: str) -> bool:
    """If-None-Match names this ETag (a list, weak or not, or *)."""
    if not if_none_match:
        return False
    tags = [t.strip().removeprefix("W/") for t in if_none_match.split(",")]
    return "*" in tags or etag in tags
