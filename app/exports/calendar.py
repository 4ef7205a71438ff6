"""A trip as an iCalendar feed (RFC 5545, written with the `icalendar` package).

One VEVENT per stop, at its time as the TripDto shows it (a set time, or the
one computed from the day's start, durations and legs): `DTSTART`/`DTEND` in
the trip's time zone with its VTIMEZONE, on the next date for a time past
midnight (schedule minutes above 1440). The stop's id is its UID, so a
calendar app updates the event in place when the stop is edited or moved;
`SEQUENCE` is the trip's version and `LAST-MODIFIED` (also `DTSTAMP`) the
trip's last change. Each day is an all-day event with its title.

The bytes depend only on the trip, its legs and the page's address, never on
the clock, so their hash is a stable ETag.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from urllib.parse import quote
from zoneinfo import ZoneInfo

from icalendar import TRANSP, Calendar, Event

from ..legs import Leg, by_pair
from ..trips.model import Day, Stop, Trip
from ..trips.schedule import day_schedule

PRODID = "-//Wayline//Trip calendar//EN"
KIND_WORDS = {"stay": "Stay", "sight": "Sight", "food": "Food", "activity": "Activity", "transit": "Transit",
              "other": "Other"}


def stop_url(page_url: str, trip_id: str, day_id: str, stop_id: str | None = None) -> str:
    """The page's address of a day (and a stop on it)."""
    query = f"day={quote(day_id)}" + (f"&stop={quote(stop_id)}" if stop_id else "")
    return f"{page_url.rstrip('/')}/#/trips/{quote(trip_id)}?{query}"


def trip_calendar(trip: Trip, legs: dict[str, list[Leg]], *, page_url: str, updated_at: datetime) -> bytes:
    """The feed's bytes. `legs`: day id -> the day's legs (the TripDto's);
    `updated_at`: the trip's last change (UTC)."""
    zone = ZoneInfo(trip.timezone)
    stamp = updated_at.astimezone(UTC)
    # The calendar's own name is one line: icalendar writes NAME and
    # X-WR-CALNAME without escaping a line break (it raises), while an
    # event's SUMMARY escapes it.
    title = " ".join(trip.title.split())
    cal = Calendar.new(name=title, prodid=PRODID, uid=f"trip-{trip.id}",
                       description=f"The plan of {title} in Wayline", url=f"{page_url.rstrip('/')}/#/trips/"
                       f"{quote(trip.id)}")
    first: date | None = None
    last: date | None = None
    for day in trip.days:
        iso = trip.day_date(day)
        if iso is None:
            continue
        on = date.fromisoformat(iso)
        first, last = first or on, on
        cal.add_component(_day_event(trip, day, on, stamp, page_url))
        slots = day_schedule(day, by_pair(legs.get(day.id, ())))
        midnight = datetime(on.year, on.month, on.day, tzinfo=zone)
        for stop, slot in zip(day.stops, slots):
            # Wall-clock arithmetic on an aware datetime: minutes past 1440
            # land on the next date at the same local time.
            start, end = midnight + timedelta(minutes=slot.start), midnight + timedelta(minutes=slot.end)
            cal.add_component(_stop_event(trip, day, stop, start, end, stamp, page_url))
    if first is not None and last is not None and trip.timezone != "UTC":
        # Only the years the trip spans (plus the nights past its last day):
        # a VTIMEZONE of the whole zone history would be most of the feed.
        cal.add_missing_timezones(first_date=first - timedelta(days=1), last_date=last + timedelta(days=3))
    return cal.to_ical()


def _day_event(trip: Trip, day: Day, on: date, stamp: datetime, page_url: str) -> Event:
    title = day.title.strip() or f"Day {day.position + 1}"
    event = Event.new(uid=day.id, summary=f"{title} · {trip.title}", start=on, end=on + timedelta(days=1),
                      stamp=stamp, last_modified=stamp, sequence=trip.version,
                      url=stop_url(page_url, trip.id, day.id), description=day.note or None,
                      transparency=TRANSP.TRANSPARENT)
    return event


def _stop_event(trip: Trip, day: Day, stop: Stop, start: datetime, end: datetime, stamp: datetime,
                page_url: str) -> Event:
    event = Event.new(uid=stop.id, summary=stop.name, start=start, end=end, stamp=stamp, last_modified=stamp,
                      sequence=trip.version, url=stop_url(page_url, trip.id, day.id, stop.id),
                      location=_location(stop), description=stop.note or None,
                      categories=[KIND_WORDS.get(stop.kind, "Other")])
    if stop.lat is not None and stop.lng is not None:
        event.add("geo", (stop.lat, stop.lng))
    return event


def _location(stop: Stop) -> str | None:
    """The address, else the coordinates as text: calendar apps map LOCATION
    (most ignore GEO), and "55.685800, 12.577300" finds the place."""
    if stop.address:
        return stop.address
    if stop.lat is not None and stop.lng is not None:
        return f"{stop.lat:.6f}, {stop.lng:.6f}"
    return None
