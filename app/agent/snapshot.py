"""What the model is told about a trip: a compact, bounded snapshot.

Ids are included so the model can name them in tool calls (the server checks
every id it gets back). Times are the server's computed schedule (estimated
legs, no I/O): "00:30 (+1)" after midnight, with the minutes from the day's
midnight beside them. Notes are truncated; they may link trip uploads, which the
model can read with `readTripMedia`.

A long trip does not fit: every agent call would send it whole (a 30-day trip
of 40 stops a day with notes is ~690,000 characters). `agent_snapshot` keeps
a trip within SNAPSHOT_CHARS: a trip that fits is sent exactly as before;
otherwise the days this call is about (its focus: the day in view, the days
an edit or a risk touches, the stop a comment is on, today's and tomorrow's
while the trip is under way) are in full, the others outlined (each stop's
times, name and id, no notes), and the farthest from the focus one line each.
The words in `outline` say so and how to read a day in full (`readDay`).
`fit_days` is the same bound for MCP assistants' `get_trip` (app/read_tools.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from ..legs import Leg, by_pair, legs_for
from ..money import format_money
from ..trips.model import Day, Trip
from ..trips.schedule import clock_label, day_schedule

NOTE_CHARS = 300
MAX_STOPS_SHOWN = 40
# The agent's trip, in characters of JSON (about 6,000 tokens at ~4 characters a token). Every agent call
# sends it, and a chat turn sends it again with each tool round (up to AI_MAX_TOOL_STEPS), while the AI
# budget reserves only a call's output tokens: a member's share of the daily tokens (0.25 of 400,000) is
# ~16 rounds at this size, ~6 at a two-week trip's whole 64,000 characters, and under one at a month of
# full days. It holds a small trip whole (3 days of 4 stops: ~4,300), a week of 8 stops with long notes
# nearly whole, and on any trip one day at its longest (DAY_CHARS) with the rest of a 30-day trip as
# lines and the nearest days outlined.
SNAPSHOT_CHARS = 24_000
# One day in full, at most: 40 stops with 300-character notes would be ~23,000, most of the budget for
# one day; its notes are cut shorter to fit (`notesCutTo`). Also what `readDay` answers.
DAY_CHARS = 16_000
OUTLINE_NAME_CHARS = 60


def _note(text: str | None) -> str | None:
    if not text:
        return None
    text = text.strip()
    return text if len(text) <= NOTE_CHARS else text[:NOTE_CHARS] + "…"


def day_json(trip: Trip, day: Day, shown: list[Leg] | tuple[Leg, ...] = ()) -> dict[str, Any]:
    """One day in full as the model reads it (`shown`: the TripDto's legs of the day)."""
    legs = legs_for(day, by_pair(shown), trip.prefs)
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
    return {"id": day.id, "position": day.position, "date": trip.day_date(day), "title": day.title or None,
            "note": _note(day.note), "startTime": day.start_time or "09:00", "stops": stops}


def trip_snapshot(trip: Trip, shown_legs: dict[str, list[Leg]] | None = None) -> dict[str, Any]:
    """The whole trip. `shown_legs` (day id -> the TripDto's legs) give the
    times the page shows; without them legs are estimated (no I/O)."""
    days = [day_json(trip, day, (shown_legs or {}).get(day.id, ())) for day in trip.days]
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


# -- a long trip, bounded -------------------------------------------------------------


def chars(value: Any) -> int:
    """Characters of `value` as JSON, as the callers send it."""
    return len(json.dumps(value, ensure_ascii=False))


def outline_day(day: dict[str, Any]) -> dict[str, Any]:
    """A day in outline: each stop's times, name and id (to name it in a
    write), no notes or details."""
    lines = []
    for s in day["stops"]:
        name = s["name"] if len(s["name"]) <= OUTLINE_NAME_CHARS else s["name"][:OUTLINE_NAME_CHARS] + "…"
        lines.append(f"{s['start']}–{s['end']} {name} (stop {s['id']}{', set time' if s.get('setTime') else ''})")
    return {"id": day["id"], "position": day["position"], "date": day["date"], "title": day["title"],
            "stops": lines}


def day_line(day: dict[str, Any]) -> dict[str, Any]:
    """A day as one line: its id, date, title and how many stops."""
    return {"id": day["id"], "position": day["position"], "date": day["date"], "title": day["title"],
            "stopCount": len(day["stops"])}


def capped_day(day: dict[str, Any], limit: int = DAY_CHARS) -> dict[str, Any]:
    """A day in full within `limit` characters: when its notes make it
    longer (40 stops with long notes), each is cut to the same shorter
    length, which the day states (`notesCutTo`)."""
    if chars(day) <= limit:
        return day
    bare = {**day, "note": None, "stops": [{k: v for k, v in s.items() if k != "note"} for s in day["stops"]]}
    noted = sum(1 for s in day["stops"] if s.get("note")) + (1 if day.get("note") else 0)
    room = limit - chars(bare) - len('"notesCutTo": 000, ') - noted * len(', "note": "…"')
    keep = max(0, room // max(noted, 1))
    while True:   # escapes (quotes, new lines) can make a cut note longer than its characters
        cut = _cut_notes(day, keep)
        if keep == 0 or chars(cut) <= limit:
            return cut
        keep = keep * 3 // 4


def _cut_notes(day: dict[str, Any], keep: int) -> dict[str, Any]:
    def cut(text: str | None) -> str | None:
        return text if not text or len(text) <= keep else (text[:keep] + "…" if keep else None)

    stops = [{k: v for k, v in {**s, "note": cut(s.get("note"))}.items() if v is not None} for s in day["stops"]]
    return {**day, "note": cut(day.get("note")), "notesCutTo": keep, "stops": stops}


FULL, OUTLINE, LINE = 2, 1, 0


def fit_days(snapshot: dict[str, Any], *, budget: int, words: Callable[[int, int, int, int], str],
             focus: Sequence[str] = (), outline: bool = True, day_chars: int | None = None) -> dict[str, Any]:
    """`snapshot` within `budget` characters, as valid JSON: unchanged when it
    fits. Otherwise every day starts as one line; then, while they fit, the
    focus days (most important first) in full, the others in outline, then in
    full, nearest the focus first (with no focus, the first days first). The
    first focus day is in full even over the budget (at most `day_chars`).
    `words(full, outlined, lines, days)` says what was shortened; it goes in
    `outline`, just before the days. `outline=False`: a day is whole or a line."""
    days = snapshot["days"]
    n = len(days)
    whole = chars({**snapshot, "days": []}) + 2 * max(n - 1, 0)
    for d in days:   # stops counting once over: a long trip's whole JSON is never made
        whole += chars(d)
        if whole > budget:
            break
    else:
        return snapshot
    position = {d["id"]: i for i, d in enumerate(days)}
    wanted = [d for d in dict.fromkeys(focus) if d in position]
    near = [position[d] for d in wanted]
    rank = wanted + sorted((d["id"] for d in days if d["id"] not in wanted),
                           key=lambda i: (min((abs(position[i] - p) for p in near), default=0), position[i]))
    makers: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
        LINE: day_line, OUTLINE: outline_day, FULL: (lambda d: capped_day(d, day_chars)) if day_chars else dict}
    forms: dict[tuple[str, int], tuple[dict[str, Any], int]] = {}

    def form(i: str, level: int) -> tuple[dict[str, Any], int]:
        if (i, level) not in forms:   # made when first weighed: most days of a long trip stay lines
            made = makers[level](days[position[i]])
            forms[i, level] = made, chars(made)
        return forms[i, level]

    level = dict.fromkeys(position, LINE)
    total = chars({**snapshot, "days": [], "outline": words(n, n, n, n)}) + 2 * max(n - 1, 0) + sum(
        form(i, LINE)[1] for i in position)
    stages = [(wanted, FULL)] + ([(rank, OUTLINE)] if outline else []) + [(rank, FULL)]
    for members, target in stages:
        for i in members:
            if level[i] >= target:
                continue
            grown = total - form(i, level[i])[1] + form(i, target)[1]
            if grown > budget and not (target == FULL and wanted and i == wanted[0]):
                break
            level[i], total = target, grown
    full, outlined, lines = (sum(1 for v in level.values() if v == kind) for kind in (FULL, OUTLINE, LINE))
    out: dict[str, Any] = {}
    for key, value in snapshot.items():
        if key == "days":
            out["outline"] = words(full, outlined, lines, n)
            value = [form(d["id"], level[d["id"]])[0] for d in days]
        out[key] = value
    return out


def _agent_words(can_read: bool) -> Callable[[int, int, int, int], str]:
    def words(full: int, outlined: int, lines: int, days: int) -> str:
        how = ("Read one of the others in full with readDay and its dayId before answering about its details or "
               "changing it; " if can_read else "")
        return (f"This trip is too long to show whole: {full} of its {days} days are in full (the days this is "
                f"about first), {outlined} an outline (each stop's times, name and id; no notes or places) and "
                f"{lines} one line each (date, title, how many stops). {how}the ids shown can be used as they "
                "are.")
    return words


def today_and_next(trip: Trip, now: datetime | None) -> list[str]:
    """The ids of today's and tomorrow's days (in the trip's time zone), when
    the trip is under way."""
    if now is None or not trip.days:
        return []
    try:
        today = now.astimezone(ZoneInfo(trip.timezone)).date()
    except (ValueError, KeyError):
        today = now.date()
    wanted = {today.isoformat(), (today + timedelta(days=1)).isoformat()}
    return [d.id for d in trip.days if trip.day_date(d) in wanted]


def agent_snapshot(trip: Trip, focus: Sequence[str] = (), *, now: datetime | None = None, can_read: bool = True,
                   budget: int = SNAPSHOT_CHARS) -> dict[str, Any]:
    """The trip for one agent call: whole when it fits within `budget` (a
    small trip's snapshot is what it always was), else `fit_days` around
    `focus` (day ids, most important first) and today's and tomorrow's days.
    `can_read`: the call has the readDay tool (the evaluation has no tools)."""
    return fit_days(trip_snapshot(trip), budget=budget, words=_agent_words(can_read),
                    focus=[*focus, *today_and_next(trip, now)], day_chars=DAY_CHARS)
