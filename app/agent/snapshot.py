"""What the model is told about a trip: a compact, bounded snapshot.

Ids are included so the model can name them in tool calls (the server checks
every id it gets back). Times are the server's computed schedule (estimated
legs, no I/O): "00:30 (+1)" after midnight, with the minutes from the day's
midnight beside them. Notes are truncated; they may link trip uploads, which the
model can read with `readTripMedia`.
"""

from __future__ import annotations

from typing import Any

from ..legs import Leg, by_pair, legs_for
from ..money import format_money
from ..trips.model import Trip
from ..trips.schedule import clock_label, day_schedule

NOTE_CHARS = 300
MAX_STOPS_SHOWN = 40


def _note(text: str | None) -> str | None:
    if not text:
        return None
    text = text.strip()
    return text if len(text) <= NOTE_CHARS else text[:NOTE_CHARS] + "…"


def trip_snapshot(trip: Trip, shown_legs: dict[str, list[Leg]] | None = None) -> dict[str, Any]:
    """`shown_legs` (day id -> the TripDto's legs) give the times the page
    shows; without them legs are estimated (no I/O)."""
    days = []
    for day in trip.days:
        legs = legs_for(day, by_pair((shown_legs or {}).get(day.id, ())), trip.prefs)
        slots = {s.stop_id: s for s in day_schedule(day, legs)}
        stops = []
        for stop in day.stops[:MAX_STOPS_SHOWN]:
            slot = slots[stop.id]
            stops.append({k: v for k, v in {
                "id": stop.id, "kind": stop.kind, "name": stop.name, "placeId": stop.place_id,
                "lat": stop.lat, "lng": stop.lng, "setTime": stop.set_time, "durationMin": stop.duration_min,
                "meal": stop.meal, "start": clock_label(slot.start), "end": clock_label(slot.end),
                "startMinutes": slot.start, "endMinutes": slot.end,
                "travelMinBefore": slot.travel_min or None, "note": _note(stop.note),
            }.items() if v is not None})
        days.append({"id": day.id, "position": day.position, "date": trip.day_date(day), "title": day.title or None,
                     "note": _note(day.note), "startTime": day.start_time or "09:00", "stops": stops})
    return {
        "id": trip.id, "title": trip.title, "version": trip.version,
        "destination": None if trip.dest_name is None else {"name": trip.dest_name, "lat": trip.dest_lat,
                                                             "lng": trip.dest_lng},
        "startDate": trip.start_date, "timezone": trip.timezone, "currency": trip.currency,
        "days": days,
        # `amount` as people read it, so the model never guesses a currency's decimals (1500 KWD is 1.500 KWD).
        "expenses": [{"id": e.id, "title": e.title, "amount": format_money(e.amount_minor, e.currency),
                      "amountMinor": e.amount_minor, "currency": e.currency,
                      "paidBy": e.paid_by, "dayId": e.day_id, "stopId": e.stop_id} for e in trip.expenses[:50]],
        "sharedPreferences": trip.prefs.model_dump(),
    }
