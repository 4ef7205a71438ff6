"""What could clear each kind of finding: the fix search's strategies, each
a lazy list of candidate fixes (fixes.py verifies them and ranks them by
how little they change), and, when none verifies, why in plain words.

- `closed`, `meal_time`: a set time that fits the opening period and the
  meal's window (the nearest to the current start); a shorter visit (never
  below half its length; `closed` only); a move within the day or a swap
  with a neighbour, with such a set time when the new place needs one; a
  move to another day, nearest first, with such a set time (`closed` only);
  the day in the exact shortest order that fits every set time, hours and
  meal (a last resort); another open place for the same meal nearby (when
  nothing else works and the caller found some: `alternatives`).
- `overlap`, `unreachable`: clear the set time; set it to when it can be
  reached; shorten the stop before (never below half); move either stop;
  move the set-time stop to another day; the shortest order.
- `pace`: as many visits as needed moved to the least-loaded other days
  with room, in one fix (three different choices of visits).
- `avoided_mode`, `long_walk`: allow the avoided mode that makes the leg
  shortest (then the next); for a long walk also a move of the stop.
- `weather` (forecast): a move to the driest day where it fits, or a swap
  with an indoor visit of such a day.
- `duplicate`: remove the second.
- `backtracking` (one finding per day): the day untangled (segments
  reversed until no crossing is left), a single stop moved inside a
  crossing, the shortest order.

Why none verified, when none does, is why_not.py.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator

from ..fields import LAST_SERVICE_MINUTE
from ..hours.rules import buffer_for, on_date
from ..legs import estimate
from ..meals import FOOD_NOTE, MEALS
from ..preferences import MODE_NAMES, PACE_STOPS
from ..trips.model import DAY_START, Day, Stop, Trip
from ..trips.schedule import Slot, clock_label, date_label, to_minutes, to_service_time
from .expenses import removing, replacing
from .fixes import Candidate, FixSearch, Strategy, day_of
from .issues import NOT_VISITS, Edits, Issue, Json, has_point, meters_between, quote as _q
from .ordering import best_order, order_edits
from .path_rules import _crosses, _project
from .starts import Ranges, fits_ranges, start_options
from .weather_rule import driest_days, indoor_visits

# How much an edit changes the plan (fixes.py ranks by the sum).
W_TIME = 1          # a set time set or cleared
W_DELETE = 1        # the second of a duplicate removed
W_SHORTEN = 2       # a shorter visit
W_MOVE = 2          # a move within the day, a swap with a neighbour
W_OTHER_DAY = 3     # a move to another day, a swap with another day's visit
W_PREFS = 3         # another travel mode allowed on the trip
W_REPLACE = 5       # another place for the meal

POSITIONS_PER_DAY = 4       # cheapest insertion points tried on another day
MAX_SETTLED = 3             # set times a fix may add for the stops it shifts
SWAPS_PER_DAY = 4           # indoor visits tried for a swap on another day
def strategies_for(search: FixSearch, issue: Issue) -> list[Strategy]:
    if issue.severity == "info":
        return []   # an observation: nothing to fix
    build = BUILDERS.get(issue.kind)
    strategies = build(search, issue) if build else []
    for strategy in strategies:
        if strategy.settle is None:
            strategy.settle = lambda fix: _with_settled(search, fix)
    return strategies


# -- shared pieces -----------------------------------------------------------------


def _stop(search: FixSearch, stop_id: str | None) -> Stop:
    """A stop of the reviewed day (an issue's subject always is one)."""
    return next(s for s in search.day.stops if s.id == stop_id)


def _day_name(trip: Trip, day: Day) -> str:
    return f"Day {day.position + 1} ({date_label(trip.dated(day))})"


def _set_time(stop_id: str, minutes: int) -> tuple[str, Json]:
    return "update_stop", {"stopId": stop_id, "setTime": to_service_time(minutes)}


def _could_start(ranges: Ranges | None, earliest: int) -> bool:
    """Whether some allowed start is at or after `earliest` (a cheap filter before a simulation)."""
    return ranges is None or any(hi >= earliest for _, hi in ranges)


def _placed(search: FixSearch, stop: Stop, day_id: str, edits: Edits) -> tuple[Edits, int | None, Trip] | None:
    """The edits that bring `stop` to `day_id`, plus a set time when its new
    computed start does not fit its hours or meal (the start that does,
    nearest to the computed one, so the least waiting, and early enough for
    the set times after it): (edits, the set time added or None, the trip
    after them); None when nothing fits there."""
    trip = search.simulate(edits)
    if trip is None:
        return None
    day, slots = search.timed(trip, day_id)
    k = next(i for i, s in enumerate(slots) if s.stop_id == stop.id)
    slot = slots[k]
    ranges = search.ranges(stop, trip.dated(day))
    if fits_ranges(ranges, slot.start) and slot.start >= slot.earliest:
        return edits, None, trip
    options = start_options(_until(ranges, latest_start(day, slots, k)), slot.earliest, slot.start, most=1)
    if not options:
        return None
    return edits + (_set_time(stop.id, options[0]),), options[0], trip


def latest_start(day: Day, slots: list[Slot], k: int) -> int:
    """The latest start of the k-th stop that still reaches the next set
    time after it (everything between moves with it)."""
    for stop, slot in zip(day.stops[k + 1:], slots[k + 1:]):
        if stop.set_time:
            return slots[k].start + max(0, slot.start - slot.earliest)
    return LAST_SERVICE_MINUTE


def _until(ranges: Ranges | None, latest: int) -> Ranges:
    if ranges is None:
        return ((0, latest),)
    return tuple((lo, min(hi, latest)) for lo, hi in ranges if lo <= min(hi, latest))


def _timed_fix(search: FixSearch, stop: Stop, day_id: str, edits: Edits, label: str, cost: int,
               was: int) -> Candidate | None:
    """`_placed` as a candidate: its label says the set time it adds."""
    placed = _placed(search, stop, day_id, edits)
    if placed is None:
        return None
    edits, at, trip = placed
    if at is None:
        start = next(s for s in search.timed(trip, day_id)[1] if s.stop_id == stop.id).start
        return Candidate(label, edits, cost, abs(start - was))
    return Candidate(f"{label} at {clock_label(at)}", edits, cost + W_TIME, abs(at - was))


def _where(day: Day, stop_id: str, position: int) -> str:
    rest = [s for s in day.stops if s.id != stop_id]
    return f"before {_q(rest[position].name)}" if position < len(rest) else f"after {_q(rest[-1].name)}"


def _settled(search: FixSearch, edits: Edits, day_id: str) -> tuple[Edits, list[str]]:
    """`edits`, plus a set time for each stop of `day_id` that fitted its
    hours and meal before them and no longer does after them (stops moving
    away shift the rest: a lunch may now start before the kitchen opens),
    at the nearest start that fits; with the words for what was added."""
    was_misfit = {key[1][0] for key in search.original if key[0] in ("closed", "meal_time")}
    added = []
    for _ in range(MAX_SETTLED):
        trip = search.simulate(edits)
        if trip is None:
            break
        day, slots = search.timed(trip, day_id)
        date = trip.dated(day)
        k = next((k for k, s in enumerate(day.stops) if not s.set_time and s.id not in was_misfit
                  and not fits_ranges(search.ranges(s, date), slots[k].start)), None)
        if k is None:
            break
        stop = day.stops[k]
        # Reachable however the legs the provider has not timed yet turn out (fixes.py checks that too).
        soonest = max(slots[k].earliest, search.timed(trip, day_id, slow=True)[1][k].start)
        options = start_options(_until(search.ranges(stop, date), latest_start(day, slots, k)), soonest,
                                max(slots[k].start, soonest), most=1)
        if not options:
            break
        edits += (_set_time(stop.id, options[0]),)
        added.append(f"{_q(stop.name)} to {clock_label(options[0])}")
    return edits, added


# -- strategies --------------------------------------------------------------------


def set_times(search: FixSearch, stop: Stop, *, prefer: int | None = None) -> Iterator[Candidate]:
    """Set times at which the stop fits its hours and meal, the nearest to
    its start first, no earlier than it can be reached and early enough for
    the set times after it."""
    k = next(i for i, s in enumerate(search.slots) if s.stop_id == stop.id)
    slot = search.slots[k]
    current = to_minutes(stop.set_time) if stop.set_time else None
    ranges = _until(search.ranges(stop, search.date), latest_start(search.day, search.slots, k))
    for at in start_options(ranges, slot.earliest, slot.start if prefer is None else prefer):
        if at != current:
            yield Candidate(f"Set {_q(stop.name)} to {clock_label(at)}", (_set_time(stop.id, at),), W_TIME,
                            abs(at - slot.start))


def shorter_visit(search: FixSearch, stop: Stop) -> Iterator[Candidate]:
    """The visit cut to what its opening period allows from its start, never
    below half its length."""
    slot = search.slot(stop.id)
    day, at = on_date(search.date, slot.start)
    hours = search.book.hours(stop, day)
    if hours is None:
        return
    span = next(((o, c) for o, c in hours.spans if o <= at < c), None)
    if span is None:
        return
    room = span[1] - at - buffer_for(stop.kind == "food")
    length = room - room % 5
    if length < math.ceil(stop.duration_min / 2):
        length = room
    if max(5, math.ceil(stop.duration_min / 2)) <= length < stop.duration_min:
        yield Candidate(f"Shorten {_q(stop.name)} to {length} min",
                        (("update_stop", {"stopId": stop.id, "durationMin": length}),), W_SHORTEN,
                        stop.duration_min - length)


def moves_within(search: FixSearch, stop: Stop, positions: Iterable[int] | None = None) -> Iterator[Candidate]:
    """The stop elsewhere in its day (a set time added where its new start
    needs one), the nearest positions first; next to where it is, see swaps."""
    day = search.day
    here = [s.id for s in day.stops].index(stop.id)
    if search.ranges(stop, search.date) == ():
        return   # nowhere on this day
    wanted = range(len(day.stops)) if positions is None else positions
    for position in sorted((p for p in wanted if abs(p - here) > 1 and p < len(day.stops)),
                           key=lambda p: (abs(p - here), p)):
        edits = (("move_stop", {"stopId": stop.id, "toDayId": day.id, "position": position}),)
        fix = _timed_fix(search, stop, day.id, edits, f"Move {_q(stop.name)} {_where(day, stop.id, position)}",
                         W_MOVE, search.slot(stop.id).start)
        if fix is not None:
            yield fix


def swaps_with_neighbours(search: FixSearch, stop: Stop) -> Iterator[Candidate]:
    day = search.day
    here = [s.id for s in day.stops].index(stop.id)
    for k, word in ((here - 1, "before"), (here + 1, "after")):
        if not 0 <= k < len(day.stops):
            continue
        other = day.stops[k]
        edits = (("swap_stops", {"stopId": stop.id, "otherStopId": other.id}),)
        fix = _timed_fix(search, stop, day.id, edits, f"Move {_q(stop.name)} {word} {_q(other.name)}", W_MOVE,
                         search.slot(stop.id).start)
        if fix is not None:
            yield fix


def other_days(search: FixSearch, stop: Stop, day_ids: tuple[str, ...]) -> Iterator[Candidate]:
    """The stop on another day (the first listed first), at its cheapest
    insertion points where a start could fit, with a set time if needed."""
    for day_id in day_ids:
        target = day_of(search.trip, day_id)
        ranges = search.ranges(stop, search.trip.dated(target))
        if ranges == ():
            continue
        slots = search.timed(search.trip, day_id)[1]
        start = to_minutes(target.start_time or DAY_START)
        tried = 0
        for position in cheapest_positions(target, stop):
            if tried >= POSITIONS_PER_DAY:
                break
            if not _could_start(ranges, slots[position - 1].end if position else start):
                continue
            tried += 1
            edits = (("move_stop", {"stopId": stop.id, "toDayId": day_id, "position": position}),)
            fix = _timed_fix(search, stop, day_id, edits,
                             f"Move {_q(stop.name)} to {_day_name(search.trip, target)}", W_OTHER_DAY,
                             search.slot(stop.id).start)
            if fix is not None:
                yield _with_settled(search, fix)


def _as_is(fix: Candidate) -> Candidate:
    """A strategy's candidates that already carry their set times (`_with_settled`): nothing to add."""
    return fix


def _with_settled(search: FixSearch, fix: Candidate) -> Candidate:
    """The fix, plus set times for the reviewed day's stops it shifts out of their hours."""
    edits, added = _settled(search, fix.edits, search.day_id)
    if not added:
        return fix
    return Candidate(f"{fix.label}, and set {' and '.join(added)}", edits, fix.cost + W_TIME * len(added), fix.shift)


def swaps_elsewhere(search: FixSearch, stop: Stop, day_ids: tuple[str, ...]) -> Iterator[Candidate]:
    for day_id in day_ids:
        target = day_of(search.trip, day_id)
        for other in indoor_visits(target, search.book)[:SWAPS_PER_DAY]:
            yield Candidate(f"Swap {_q(stop.name)} with {_q(other.name)} from {_day_name(search.trip, target)}",
                            (("swap_stops", {"stopId": stop.id, "otherStopId": other.id}),), W_OTHER_DAY)


def reordered(search: FixSearch, label: str) -> Iterator[Candidate]:
    """The day in the exact shortest order that fits every set time, opening
    period and meal (Shortest order's search, on the review's legs)."""
    misfits = frozenset(key[1][0] for key in search.original if key[0] in ("closed", "meal_time"))
    order = search.best_order(lambda: best_order(search.day, search.date, search.known, search.prefs,
                                                 search.book, misfits))
    edits = order_edits(search.day, order) if order else []
    if edits:
        yield Candidate(f"{label} ({len(edits)} {'stop moves' if len(edits) == 1 else 'stops move'})",
                        tuple(edits), W_MOVE * len(edits))


def replacements(search: FixSearch, stop: Stop) -> Iterator[Candidate]:
    """Another open place for the same meal nearby, where the meal is now
    (the caller found them: `alternatives`), with a set time if needed."""
    for alt in search.alternatives.get(stop.id, []):
        args = {"dayId": search.day_id, "afterStopId": stop.id, "kind": "food", "name": alt["name"][:120],
                "placeId": alt["placeId"], "lat": alt["lat"], "lng": alt["lng"], "durationMin": stop.duration_min,
                "meal": stop.meal, "note": FOOD_NOTE}
        if alt.get("address"):
            args["address"] = alt["address"][:300]
        if stop.set_time:
            args["setTime"] = stop.set_time
        args, expenses_said = replacing(search.trip, stop, args)
        edits = (("insert_stop", args), ("delete_stop", {"stopId": stop.id}))
        trip = search.simulate(edits)
        if trip is None:
            continue
        day, slots = search.timed(trip, search.day_id)
        old = {s.id for s in search.day.stops}
        new = next(s for s in day.stops if s.id not in old)
        slot = next(s for s in slots if s.stop_id == new.id)
        ranges = search.ranges(new, search.date)
        label = f"Replace {_q(stop.name)} with {_q(alt['name'])}"
        if fits_ranges(ranges, slot.start):
            yield Candidate(label + expenses_said, edits, W_REPLACE)
            continue
        options = start_options(ranges, slot.earliest, slot.start, most=1)
        if options:
            args = {**args, "setTime": to_service_time(options[0])}
            yield Candidate(f"{label} at {clock_label(options[0])}{expenses_said}",
                            (("insert_stop", args), ("delete_stop", {"stopId": stop.id})), W_REPLACE + W_TIME)


# -- per kind ----------------------------------------------------------------------


def _clock(search: FixSearch, issue: Issue) -> list[Strategy]:
    stop = _stop(search, issue.subject)
    closed = issue.kind == "closed"
    if search.book.gone(stop):
        # Closed for good: no time or day fits it; it goes, or another place serves its meal.
        def remove() -> Iterator[Candidate]:
            gone, said = removing(search.trip, stop)
            yield Candidate(f"Remove {_q(stop.name)}{said}", gone + (("delete_stop", {"stopId": stop.id}),), W_DELETE)
        gone = [Strategy(W_DELETE, remove, tries=1)]
        if stop.kind == "food" and stop.meal in MEALS and search.alternatives.get(stop.id):
            gone.append(Strategy(W_REPLACE, lambda: replacements(search, stop), settle=_as_is))
        return gone
    out = [Strategy(W_TIME, lambda: set_times(search, stop)),
           Strategy(W_MOVE, lambda: swaps_with_neighbours(search, stop), tries=2),
           Strategy(W_MOVE, lambda: moves_within(search, stop)),
           Strategy(W_MOVE, lambda: reordered(search, "Reorder the day around its set times"), tries=1,
                    last_resort=True)]
    out.append(Strategy(W_OTHER_DAY, lambda: other_days(search, stop, other_days_nearest_first(search)), tries=6,
                        settle=_as_is))
    if closed:
        out.append(Strategy(W_SHORTEN, lambda: shorter_visit(search, stop), tries=1))
    if stop.kind == "food" and stop.meal in MEALS and search.alternatives.get(stop.id):
        out.append(Strategy(W_REPLACE, lambda: replacements(search, stop), last_resort=True, settle=_as_is))
    return out


def _timing(search: FixSearch, issue: Issue) -> list[Strategy]:
    stop, prev = _stop(search, issue.subject), _stop(search, issue.detail["previous"])
    late, index = issue.detail["late"], issue.detail["index"]
    slot = search.slot(stop.id)

    def clear() -> Iterator[Candidate]:
        yield Candidate(f"Clear the set time of {_q(stop.name)}", (("update_stop", {"stopId": stop.id,
                                                                                    "setTime": None}),), W_TIME)

    def shorten_previous() -> Iterator[Candidate]:
        length = prev.duration_min - late
        if length >= max(5, math.ceil(prev.duration_min / 2)):
            yield Candidate(f"Shorten {_q(prev.name)} to {length} min",
                            (("update_stop", {"stopId": prev.id, "durationMin": length}),), W_SHORTEN, late)

    out = [Strategy(W_TIME, clear, tries=1),
           Strategy(W_TIME, lambda: set_times(search, stop, prefer=slot.earliest)),
           Strategy(W_SHORTEN, shorten_previous, tries=1),
           Strategy(W_MOVE, lambda: moves_within(search, stop, range(0, index))),
           Strategy(W_MOVE, lambda: swaps_with_neighbours(search, stop), tries=1),
           Strategy(W_OTHER_DAY, lambda: other_days(search, stop, other_days_nearest_first(search)), tries=4,
                    settle=_as_is),
           Strategy(W_MOVE, lambda: reordered(search, "Reorder the day around its set times"), tries=1,
                    last_resort=True)]
    if not prev.set_time:
        out.append(Strategy(W_MOVE, lambda: moves_within(search, prev, range(index, len(search.day.stops)))))
    return out


def _pace(search: FixSearch, issue: Issue) -> list[Strategy]:
    return [Strategy(W_OTHER_DAY * issue.detail["excess"], lambda: pace_moves(search, issue), settle=_as_is)]


def pace_moves(search: FixSearch, issue: Issue) -> Iterator[Candidate]:
    """As many visits as the pace is over, moved in one fix to the
    least-loaded other days that have room; three choices of which visits:
    the last free ones, those off the path the most, the first free ones
    (meals stay where they are when there is a choice)."""
    excess, limit = issue.detail["excess"], PACE_STOPS[search.prefs.pace]
    free = [s for s in search.day.stops if s.kind not in NOT_VISITS and not s.set_time]
    if len(free) < excess:
        return
    plain, meals = [s for s in free if not s.meal], [s for s in free if s.meal]
    detour = _detours(search.day)
    choices = [plain[-excess:] if len(plain) >= excess else plain + meals[-(excess - len(plain)):],
               sorted(free, key=lambda s: (bool(s.meal), -detour.get(s.id, 0.0)))[:excess],
               (plain + meals)[:excess]]
    seen = set()
    for chosen in choices:
        key = frozenset(s.id for s in chosen)
        if key not in seen:
            seen.add(key)
            fix = _spread(search, [s for s in search.day.stops if s.id in key], limit)
            if fix is not None:
                yield fix


def _spread(search: FixSearch, chosen: list[Stop], limit: int) -> Candidate | None:
    """`chosen` moved one by one, each to the least-loaded other day with
    room (then the nearest), at its cheapest point, with a set time if needed."""
    trip = search.trip
    load = {d.id: sum(s.kind not in NOT_VISITS for s in d.stops) for d in trip.days}
    here = search.day.position
    edits: Edits = ()
    said: dict[str, list[str]] = {}   # day name -> the stops moved there, in order
    for stop in chosen:
        room = [d for d in trip.days if d.id != search.day_id and load[d.id] < limit]
        if not room:
            return None
        target = min(room, key=lambda d: (load[d.id], abs(d.position - here), d.position))
        position = cheapest_positions(day_of(trip, target.id), stop)[0]
        placed = _placed(search, stop, target.id,
                         edits + (("move_stop", {"stopId": stop.id, "toDayId": target.id, "position": position}),))
        if placed is None:
            return None
        edits, at, trip = placed
        load[target.id] += 1
        said.setdefault(_day_name(search.trip, target), []).append(
            _q(stop.name) + (f" (at {clock_label(at)})" if at is not None else ""))
    text = _and([f"{_and(names)} to {day}" for day, names in said.items()])
    return _with_settled(search, Candidate(f"Move {text}", edits, W_OTHER_DAY * len(chosen)))


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _detours(day: Day) -> dict[str, float]:
    """How much shorter the straight-line path gets without each stop."""
    stops = day.stops
    return {s.id: _detour(stops[i - 1] if i > 0 else None, s, stops[i + 1] if i + 1 < len(stops) else None)
            for i, s in enumerate(stops) if has_point(s)}


def _detour(before: Stop | None, stop: Stop, after: Stop | None) -> float:
    """The straight-line metres `stop` adds between `before` and `after` (either may be missing)."""
    cost = 0.0
    for a, b in ((before, stop), (stop, after)):
        if a is not None and b is not None and has_point(a) and has_point(b):
            cost += meters_between(a, b)
    if before is not None and after is not None and has_point(before) and has_point(after):
        cost -= meters_between(before, after)
    return cost


def _modes(search: FixSearch, issue: Issue) -> list[Strategy]:
    a, b = (_stop(search, sid) for sid in issue.stop_ids)
    avoided = list(search.prefs.avoidModes)

    assert a.lat is not None and a.lng is not None and b.lat is not None and b.lng is not None   # a leg's ends
    ends = (a.lat, a.lng), (b.lat, b.lng)

    def allow() -> Iterator[Candidate]:
        def seconds(mode: str) -> int:
            return estimate(a.id, b.id, ends[0], ends[1], mode).duration_s
        for mode in sorted((m for m in avoided if issue.kind == "avoided_mode" or m != "walk"), key=seconds):
            yield Candidate(f"Allow {MODE_NAMES[mode]} on this trip", (("set_trip_preferences", {
                "avoidModes": [m for m in avoided if m != mode]}),), W_PREFS, seconds(mode) // 60)

    out = [Strategy(W_PREFS, allow, tries=4, most=2)]
    if issue.kind == "long_walk":
        out.append(Strategy(W_MOVE, lambda: moves_within(search, b)))
    return out


def _duplicate(search: FixSearch, issue: Issue) -> list[Strategy]:
    first, second = (_stop(search, sid) for sid in issue.stop_ids)
    # An expense for the second visit (the tickets) is for the place: it stays with the first, where
    # a removal alone would leave it for a stop that is gone (the agent's `expense_unlinked`).
    kept: Edits = tuple(("update_expense", {"expenseId": e.id, "stopId": first.id})
                        for e in search.trip.expenses if e.stop_id == second.id)

    def remove() -> Iterator[Candidate]:
        said = f" (its expense{'s' if len(kept) > 1 else ''} now for the first)" if kept else ""
        yield Candidate(f"Remove the second {_q(second.name)}{said}",
                        kept + (("delete_stop", {"stopId": second.id}),), W_DELETE)
    return [Strategy(W_DELETE, remove, tries=1)]


def _weather(search: FixSearch, issue: Issue) -> list[Strategy]:
    stop = _stop(search, issue.subject)
    dry = driest_days(search.trip, search.day, search.weather)
    return [Strategy(W_OTHER_DAY, lambda: other_days(search, stop, dry), tries=6, settle=_as_is),
            Strategy(W_OTHER_DAY, lambda: swaps_elsewhere(search, stop, dry), tries=4)]


def _backtracking(search: FixSearch, issue: Issue) -> list[Strategy]:
    def untangled() -> Iterator[Candidate]:
        order = untangle(search.day)
        edits = order_edits(search.day, order) if order else []
        if len(edits) == 1:
            moved = _stop(search, edits[0][1]["stopId"])
            yield Candidate(f"Move {_q(moved.name)} {_where(search.day, moved.id, edits[0][1]['position'])}",
                            tuple(edits), W_MOVE)
        elif edits:
            yield Candidate(f"Reorder the day so the route no longer crosses itself ({len(edits)} stops move)",
                            tuple(edits), W_MOVE * len(edits))

    def single_moves() -> Iterator[Candidate]:
        index = {s.id: k for k, s in enumerate(search.day.stops)}
        for crossing in issue.detail.get("crossings", []):
            ia, ib, ic, id_ = (index[x] for x in crossing)
            for stop in search.day.stops[ib:ic + 1]:
                if not stop.set_time:
                    yield from moves_within(search, stop, range(ia, id_ + 1))
    return [Strategy(W_MOVE, untangled, tries=1),
            Strategy(W_MOVE, single_moves, tries=4),
            Strategy(W_MOVE, lambda: reordered(search, "Put the day in its shortest order"), tries=1,
                     last_resort=True)]


def untangle(day: Day) -> list[str] | None:
    """The day's order with crossing segments reversed (2-opt on the
    straight-line path) until none is left, reversing only stretches of
    stops without a set time; None when that cannot uncross it."""
    stops = list(day.stops)
    for _ in range(len(stops) ** 2):
        located = [s for s in stops if has_point(s)]
        xy = _project(located)
        crossings = [(i, j) for i in range(len(located) - 1) for j in range(i + 2, len(located) - 1)
                     if _crosses(xy[i], xy[i + 1], xy[j], xy[j + 1])]
        if not crossings:
            return [s.id for s in stops]
        # The first crossing whose stretch in between can turn around (no set time, no hotel in it).
        stretch = next(((lo, hi) for i, j in crossings
                        for lo, hi in [(stops.index(located[i + 1]), stops.index(located[j]))]
                        if not any(s.set_time or s.kind == "stay" for s in stops[lo:hi + 1])), None)
        if stretch is None:
            return None
        lo, hi = stretch
        stops[lo:hi + 1] = reversed(stops[lo:hi + 1])
    return None


BUILDERS = {"closed": _clock, "meal_time": _clock, "overlap": _timing, "unreachable": _timing, "pace": _pace,
            "avoided_mode": _modes, "long_walk": _modes, "duplicate": _duplicate, "weather": _weather,
            "backtracking": _backtracking}


# -- helpers -----------------------------------------------------------------------


def other_days_nearest_first(search: FixSearch) -> tuple[str, ...]:
    here = search.day.position
    days = [d for d in search.trip.days if d.id != search.day_id]
    return tuple(d.id for d in sorted(days, key=lambda d: (abs(d.position - here), d.position)))


def cheapest_positions(day: Day, stop: Stop) -> list[int]:
    """Positions in `day` ordered by the straight-line detour of putting
    `stop` there (the end of the day first when nothing has coordinates)."""
    n = len(day.stops)
    if not has_point(stop):
        return list(range(n, -1, -1))

    def detour(position: int) -> float:
        return _detour(day.stops[position - 1] if position > 0 else None, stop,
                       day.stops[position] if position < n else None)

    return sorted(range(n + 1), key=lambda p: (detour(p), -p))
