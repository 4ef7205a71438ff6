"""A day of the TripDto as encoded bytes (`DayPart`): how a day is encoded,
and made from its stored bytes (trips/stored_days.py). trips/dto.py joins
the days into a trip's view and patches them after a change."""

from __future__ import annotations

import itertools
import json
from array import array
from json.encoder import encode_basestring
from typing import Any
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..legs import Leg, by_pair
from .model import DAY_START, Day, Stop, Trip
from .schedule import schedule_with_travel, to_hhmm, travel_minutes

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
Key = tuple[Any, ...]   # what a part was encoded from, compared to tell whether it changed
_text = _ENCODER.encode   # compact JSON text (one encoder: json.dumps with options builds one per call)
_serials = itertools.count(1)


def dumps(value: Any) -> bytes:
    return _text(value).encode()


def legs_key_of(day: Day) -> Key:
    # Flat (id, lat, lng, id, ...): one tuple a day, not one a stop, in memory.
    return tuple(v for s in day.stops for v in (s.id, s.lat, s.lng))


def same_places(old: Sequence[Stop], new: Sequence[Stop]) -> bool:
    """The same stops at the same places, in order: `legs_key_of` would give
    an equal key (an op that changed a stop's duration or name keeps the
    day's legs, and its key is not built again)."""
    if len(old) != len(new):
        return False
    for a, b in zip(old, new):
        if a is not b and (a.id != b.id or a.lat != b.lat or a.lng != b.lng):
            return False
    return True


@dataclass(eq=False, slots=True)   # every op reads a few fields of each of its trip's days: no __dict__ between
class DayPart:
    source: Day                   # the day object encoded (a shared day never changes)
    day: Key                      # the day's own fields when encoded
    stops: list[Stop]             # the stop objects encoded (compared by identity)
    start_date: str               # the trip's (with the day's position: its date)
    legs_key: Key
    prefs: object
    travel: array[int] | None     # per stop, the minutes of the leg before it (None: read from the legs)
    legs_at: int                  # where the legs' JSON starts in body (it ends one byte before body does)
    social: list[Key]           # (votes, comment count) per stop when encoded
    body: bytes                   # the day's JSON with every "mine" as 0
    mine_at: array[int]           # per stop, the offset of its "mine" digit in body
    # per stop, where its JSON starts, where its computed times start and
    # where its own fields resume (`_fixed`'s two halves): reused by the next
    # encoding of the day for the stops it still holds
    stop_at: array[int] | None = None
    legs_time: float = 0.0        # the clock when the legs were computed
    estimated: bool = False       # some of its legs are estimates
    stored_until: float | None = None   # a stored day's: when its legs are due to be asked again
    serial: int = field(default_factory=lambda: next(_serials))   # which encoding (stored_days compares it)

    @property
    def legs(self) -> list[Leg]:
        """The day's legs, read from its bytes: they are kept only encoded
        (about 60 kB of Leg objects for a 30 x 15 trip); what asks for them
        (the review, the agent, exports) is not on the read or write path."""
        return [Leg(d["fromStopId"], d["toStopId"], d["mode"], d["durationS"], d["distanceM"], d["source"])
                for d in json.loads(self.body[self.legs_at:-1])]

    def travel_minutes(self) -> array[int]:
        return self.travel if self.travel is not None else array("i", travel_minutes(self.source, by_pair(self.legs)))

    def quiet(self) -> bool:
        """No votes or comments on its stops: the bytes every member reads."""
        return all(key is QUIET or key == QUIET for key in self.social)


QUIET: Key = (None, 0)   # a stop without votes or comments (most of them), one tuple for all



def day_fields(trip: Trip, day: Day) -> Key:
    return day.id, day.position, day.title, day.note, day.start_time


MINE = b'"mine":0}'
_MINE_TAIL = len(b'0},"commentCount":')   # from a stop's "mine" digit to its comment count


def _string(value: str | None) -> str:
    return "null" if value is None else encode_basestring(value)   # json's own escaping


def _number(value: float | None) -> str:
    return "null" if value is None else repr(value)   # as json writes a finite number (lat/lng are bounded)


def _fixed(s: Stop) -> tuple[str, str]:
    """A stop's own fields as JSON: what comes before its computed times and
    votes, and what comes after. Written directly, it costs a fifth of
    json.dumps of a dict; not kept apart (it would hold the stops' JSON a
    second time): the next encoding of the day cuts it out of the day's
    bytes (`DayPart.stop_at`)."""
    return (f'{{"id":{_string(s.id)},"position":{s.position},"kind":{_string(s.kind)},"name":{_string(s.name)},'
            f'"placeId":{_string(s.place_id)},"lat":{_number(s.lat)},"lng":{_number(s.lng)},'
            f'"address":{_string(s.address)},"setTime":{_string(s.set_time)},"durationMin":{s.duration_min},'
            f'"meal":{_string(s.meal)},"note":{_string(s.note)}',
            f',"createdBy":{_string(s.created_by)}}}')


_STOPS_END = b'],"legs":'


def encode_day(trip: Trip, day: Day, legs: list[Leg] | None, legs_key: Key, social: list[Key],
                old: DayPart | None, legs_time: float = 0.0) -> DayPart:
    """The day's JSON, every stop's `mine` as 0. Without `legs`, the legs are
    `old`'s (the same stops at the same places): their JSON and the minutes
    they take are reused, and so is the JSON of
    each stop's own fields whose stop object `old` encoded (a stop never
    changes once shared: an op changes a copy), cut from `old`'s body at
    its offsets (`stop_at`); only the computed times, votes and comment
    counts are written again (numbers and HH:MM only, so nothing needs
    escaping), and the day's own fields when they changed.

    This runs for every op (the changed day of the op's echo), on a
    different trip each time when many trips are edited, so no other op
    shares it: the stops `old` holds in the same order are cut as one run
    (a stop's tail, the comma and the next stop's head in one slice), not
    piece by piece."""
    until = None
    if legs is None:
        assert old is not None
        legs_b, travel, estimated = old.body[old.legs_at:-1], old.travel_minutes(), old.estimated
        until = old.stored_until   # legs read from a stored day: due when its were
    else:
        legs_b = dumps([leg.to_json() for leg in legs])
        travel = array("i", travel_minutes(day, by_pair(legs)))
        estimated = any(leg.source == "estimate" for leg in legs)
    slots = schedule_with_travel(day, travel)
    fields = day_fields(trip, day)
    reuse = old is not None and old.stop_at is not None and len(old.stops) > 0
    if reuse and old is not None and old.stop_at is not None:
        body, stop_at, old_stops = old.body, old.stop_at, old.stops
        ends = old.legs_at - len(_STOPS_END)   # where the last stop's JSON ends in `body`
    else:
        body, stop_at, old_stops, ends = b"", array("I"), [], 0
    if reuse and old is not None and old.day == fields and old.start_date == trip.start_date:
        head = body[:stop_at[0]]   # the day's fields and date as they were
    else:
        head = dumps({"id": day.id, "position": day.position, "date": trip.day_date(day), "title": day.title,
                      "note": day.note, "startTime": day.start_time or DAY_START})[:-1] + b',"stops":['
    pieces, at, mine_at, n = [head], array("I"), array("I"), len(head)
    olds: dict[int, int] | None = None
    own1 = b""
    count, last = len(old_stops), 3 * len(old_stops) - 3
    run = -1      # where in `body` the previous stop's tail starts, not written yet (-1: none)
    prev = -2     # the previous stop's index in `old` (-2: not from `old`)
    for i, s in enumerate(day.stops):
        j: int | None = None
        if i < count and (at_i := old_stops[i]) is s:
            j = i   # most edits keep the order
        elif count and (i >= count or at_i.id != s.id):   # moved (a stop changed in place is encoded anew)
            if olds is None:
                olds = {id(x): k for k, x in enumerate(old_stops)}
            j = olds.get(id(s))
            if j is not None and old_stops[j] is not s:
                j = None
        if j is not None and run >= 0 and j == prev + 1:
            k = 3 * j   # the previous stop's tail, the comma and this stop's head: one slice
            start = n + stop_at[k] - run
            pieces.append(body[run:stop_at[k + 1]])
            n += stop_at[k + 1] - run
        else:
            if run >= 0:   # the previous stop's tail on its own
                tail_end = stop_at[3 * prev + 3] - 1 if 3 * prev < last else ends
                pieces.append(body[run:tail_end])
                n += tail_end - run
            if i:
                pieces.append(b",")
                n += 1
            start = n
            if j is not None:
                k = 3 * j
                pieces.append(body[stop_at[k]:stop_at[k + 1]])
                n += stop_at[k + 1] - stop_at[k]
            else:
                own0, own1 = (text.encode() for text in _fixed(s))
                pieces.append(own0)
                n += len(own0)
        votes, comments = social[i]
        up = down = 0
        if votes:
            for v in votes.values():
                up, down = up + (v > 0), down + (v < 0)
        slot = slots[i]
        mid = (f',"startTime":"{to_hhmm(slot.start)}","endTime":"{to_hhmm(slot.end)}",'
               f'"startMinutes":{slot.start},"endMinutes":{slot.end},'
               f'"votes":{{"up":{up},"down":{down},"mine":0}},"commentCount":{comments}').encode()
        pieces.append(mid)
        at.extend((start, n, n + len(mid)))
        n += len(mid)
        mine_at.append(n - len(str(comments)) - _MINE_TAIL)
        if j is not None:
            run, prev = stop_at[3 * j + 2], j   # its tail goes out with the next stop's head, or alone
        else:
            pieces.append(own1)
            n += len(own1)
            run, prev = -1, -2
    if run >= 0:
        tail_end = stop_at[3 * prev + 3] - 1 if 3 * prev < last else ends
        pieces.append(body[run:tail_end])
    pieces += (_STOPS_END, legs_b, b"}")
    out = b"".join(pieces)
    return DayPart(day, fields, day.stops, trip.start_date, legs_key, trip.prefs, travel,
                   len(out) - 1 - len(legs_b), social, out, mine_at, at, legs_time, estimated, until)


def stored_part(trip: Trip, day: Day, body: bytes, legs_until: float) -> DayPart:
    """A day from its stored bytes (trips/stored_days.py): the same bytes its
    encoding gave for this version, with no votes or comments; its legs are
    read from them when asked."""
    mine_at, at = array("I"), 0
    for _ in day.stops:
        at = body.index(MINE, at) + len(MINE) - 2
        mine_at.append(at)
    return DayPart(day, day_fields(trip, day), day.stops, trip.start_date, legs_key_of(day), trip.prefs, None,
                   body.rindex(_STOPS_END) + len(_STOPS_END), [QUIET] * len(day.stops), body, mine_at, None,
                   stored_until=legs_until)
