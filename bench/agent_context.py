"""Size: the trip as the agent's model reads it, for three trip shapes. For
each, the snapshot's characters of JSON (what every agent call sends) and its
tokens as chars/4 (no tokenizer is installed; English JSON runs about 4
characters a token), with a day in focus when the snapshot is bounded.

    .venv/bin/python bench/agent_context.py

No server, no model: the trips are built in memory (app.trips.model) and the
snapshot is made as the agent makes it. Shapes: a small 3-day trip (4 stops
a day, short notes), two weeks of 8 stops a day with 300-character notes, and
30 days of 40 stops a day with 300-character notes (the bounds: days per trip,
stops shown a day, note length)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.agent import snapshot as snapshot_module
from app.trips.model import Day, Stop, Trip

SHAPES = (("3 days x 4 stops, short notes", 3, 4, 40), ("14 days x 8 stops, 300-char notes", 14, 8, 300),
          ("30 days x 40 stops, 300-char notes", 30, 40, 300))


def make_trip(days: int, per_day: int, note_chars: int) -> Trip:
    trip = Trip(id="t" * 16, title="Portugal", dest_name="Lisbon", dest_lat=38.7223, dest_lng=-9.1393,
                start_date="2027-05-03", timezone="Europe/Lisbon", currency="EUR", version=days + 1,
                created_by="u" * 16)
    for d in range(days):
        day = Day(id=f"day{d:013d}", position=d, title=f"Day out {d + 1}", note="Trains from Rossio")
        day.stops = [Stop(id=f"s{d:07d}{i:08d}", day_id=day.id, position=i, kind="sight", name=f"Sight {d}.{i}",
                          place_id=f"ChIJ-place-{d}-{i}", lat=38.70 + 0.004 * i, lng=-9.15 + 0.003 * d,
                          duration_min=45, note=("Tickets and opening notes " * 20)[:note_chars])
                     for i in range(per_day)]
        trip.days.append(day)
    return trip


def chars(value: object) -> int:
    return len(json.dumps(value, ensure_ascii=False))


def main() -> None:
    bounded = getattr(snapshot_module, "agent_snapshot", None)
    print(f"agent context size ({'bounded' if bounded else 'whole snapshot'})")
    for label, days, per_day, note in SHAPES:
        trip = make_trip(days, per_day, note)
        t0 = time.perf_counter()
        if bounded is None:
            snap = snapshot_module.trip_snapshot(trip)
        else:
            snap = bounded(trip, focus=[trip.days[len(trip.days) // 2].id])
        ms = (time.perf_counter() - t0) * 1000
        n = chars(snap)
        print(f"  {label:<36} {n:>8,} chars  ~{n // 4:>7,} tokens (chars/4)  built in {ms:.1f} ms")


if __name__ == "__main__":
    main()
