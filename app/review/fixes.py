"""The fix search: remedies (remedies.py) are applied to copies of the trip
and kept only when verified, ranked by how little they change.

A fix is a list of registry edits applied together (`POST .../ops`): a set
time, a move with a set time, several visits to other days. Every fix is
*verified* before it is offered: its edits are validated against TRIP_OPS
and applied, in order, to a copy-on-write copy of the trip; every day they
change is re-timed (known legs reused, new pairs estimated exactly as
app.legs would) and re-checked. A fix is kept only when its finding is gone
and no finding appears that was not there before, on any day it changes
(all of them when it changes the trip's travel choices), nor does a path
that crossed itself cross more often (`search_keys`). So every fix
applies through `apply_ops` and helps.

Ranking and bounds: the remedies of a finding come as strategies, each with
the least a candidate of it can cost (edits weigh 1 for a set time or a
removal, 2 for a shorter visit, a move within the day or a swap, 3 for a
move to another day or another travel choice, 5 for another place). The
strategies are tried cheapest first; each verifies at most a few of its
candidates and gives at most one fix; the search stops once three fixes are
found and no untried strategy could be cheaper. A candidate that fails is
tried once more with set times for the stops it shifts out of their hours
or meal window (removing a duplicate starts the afternoon tea after it
before 14:30). A budget of simulations bounds a pathological day.

A leg between two stops that were never next to each other is estimated
(app.legs); once applied, the routing provider times it. So when the day's
legs come from a provider, a simulated day with such legs is checked with
them 30% faster and 40% slower too, and a fix must hold in every case.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from ..errors import AppError
from ..legs import Leg, by_pair, estimate_leg, legs_for
from ..preferences import TripPreferences
from ..trips.model import Day, Stop, Trip
from ..trips.ops import simulate
from ..trips.schedule import Slot, day_schedule
from .issues import Edits, Issue, Json, Key, Legs, PlaceBook, search_keys
from .rules import CLOCK_RULES, detect
from .starts import Ranges, start_ranges

MAX_SIMULATIONS = 200       # bounds the fix search on a pathological day
MAX_FIXES = 3               # per finding
ESTIMATE_RANGE = (0.7, 1.4)  # how much faster or slower the provider may time a leg than our estimate


@dataclass(frozen=True)
class Candidate:
    """A possible fix: what it says, its edits, and how much it changes."""

    label: str
    edits: Edits
    cost: int                 # the sum of its edits' weights (module doc)
    shift: int = 0            # minutes the plan moves: the smaller, the less it changes

    @property
    def rank(self) -> tuple[int, int, int]:
        return self.cost, self.shift, len(self.edits)


@dataclass
class Strategy:
    """One way of clearing a finding: its candidates, the cheapest first."""

    cost: int                                   # the least any of its candidates costs
    candidates: Callable[[], Iterable[Candidate]]
    tries: int = 3                              # at most this many are verified
    last_resort: bool = False                   # only when nothing cheaper has verified
    most: int = 1                               # fixes it may give (alternatives of the same kind)
    # A candidate that fails, with set times for the stops it shifts out of their hours or meal
    # (remedies._with_settled; None: its candidates already have them).
    settle: Callable[[Candidate], Candidate] | None = None


@dataclass
class SearchResult:
    fixes: list[Candidate]
    no_fix_reason: str | None = None


@dataclass
class _Memo:
    keys: dict[Key, set[Key]] = field(default_factory=dict)    # a day's content -> its finding keys
    ranges: dict[Key, Ranges | None] = field(default_factory=dict)   # (stop content, date) -> start ranges
    estimates: dict[Key, Leg] = field(default_factory=dict)   # (pair, coordinates, travel choices) -> a leg


class FixSearch:
    """Applies candidate fixes to copies of the trip and re-runs the rules on
    every day they change."""

    def __init__(self, trip: Trip, day: Day, known: Legs, prefs: TripPreferences, book: PlaceBook,
                 weather: dict[str, Json] | None, trip_legs: dict[str, list[Leg]], original: set[Key],
                 alternatives: dict[str, list[Json]] | None = None):
        self.trip, self.day, self.day_id, self.known, self.prefs = trip, day, day.id, known, prefs
        self.book, self.weather = book, weather
        self.other_legs = {day_id: by_pair(legs) for day_id, legs in trip_legs.items() if day_id != day.id}
        self.original = original
        self.alternatives = alternatives or {}
        self.budget = MAX_SIMULATIONS
        self.memo = _Memo()
        self.slots = day_schedule(day, legs_for(day, known, prefs))
        # The shown legs come from a routing provider: a new pair will be timed by it too, not as estimated.
        self.routed = any(leg.source != "estimate" for legs in trip_legs.values() for leg in legs) or any(
            leg.source != "estimate" for leg in known.values())
        self._order: list[str] | None = None    # the day's best order, once several findings' remedies ask
        self._ordered = False

    # -- facts ---------------------------------------------------------------------

    @property
    def date(self) -> str:
        return self.trip.dated(self.day)

    def slot(self, stop_id: str) -> Slot:
        return next(s for s in self.slots if s.stop_id == stop_id)

    def best_order(self, compute: Callable[[], list[str] | None]) -> list[str] | None:
        """The day's best order (ordering.best_order), computed once per review."""
        if not self._ordered:
            self._order, self._ordered = compute(), True
        return self._order

    def ranges(self, stop: Stop, date: str) -> Ranges | None:
        key = (stop.place_id, stop.kind, stop.duration_min, stop.meal, date)
        if key not in self.memo.ranges:
            self.memo.ranges[key] = start_ranges(stop, date, self.book)
        return self.memo.ranges[key]

    def legs(self, day: Day, prefs: TripPreferences | None = None, estimate_all: bool = False) -> Legs:
        """The day's consecutive legs as legs_for gives them (known ones reused,
        new pairs estimated); an estimate is made once per pair and travel choices."""
        prefs = prefs or self.prefs
        known = {} if estimate_all else self.known if day.id == self.day_id else self.other_legs.get(day.id, {})
        out: Legs = {}
        for a, b in zip(day.stops, day.stops[1:]):
            if a.lat is None or a.lng is None or b.lat is None or b.lng is None:
                continue
            leg = known.get((a.id, b.id))
            if leg is None:
                key = (a.id, b.id, a.lat, a.lng, b.lat, b.lng, id(prefs))
                leg = self.memo.estimates.get(key)
                if leg is None:
                    leg = self.memo.estimates[key] = estimate_leg(a, b, prefs)
            out[(a.id, b.id)] = leg
        return out

    def timed(self, trip: Trip, day_id: str, *, slow: bool = False) -> tuple[Day, list[Slot]]:
        """A (simulated) day and its schedule; `slow`: with the legs the
        provider has not timed yet as slow as the fix must allow (module doc)."""
        day = day_of(trip, day_id)
        legs = self.legs(day)
        if slow and self.routed:
            known = self.known if day.id == self.day_id else self.other_legs.get(day.id, {})
            legs = {pair: leg if pair in known else replace(leg, duration_s=round(leg.duration_s * ESTIMATE_RANGE[1]))
                    for pair, leg in legs.items()}
        return day, day_schedule(day, legs)

    # -- simulating ----------------------------------------------------------------

    def simulate(self, edits: Iterable[tuple[str, Json]]) -> Trip | None:
        """The trip after the edits, on a copy-on-write copy (the reviewed trip
        may be the one readers share); None if they do not apply, or the
        budget is spent."""
        if self.budget <= 0:
            return None
        self.budget -= 1
        try:
            return simulate(self.trip, list(edits), actor_id="review")
        except AppError:
            return None

    def day_keys(self, trip: Trip, day: Day, prefs: TripPreferences, estimate_all: bool = False, *,
                 robust: bool = False) -> set[Key]:
        """The finding keys of a (simulated) day; the same content gives the
        same keys, so a day reached by several candidates is checked once.
        `robust`: also with its new legs faster and slower (module doc)."""
        content = (day.id, day.position, day.start_time, id(prefs), estimate_all, robust,
                   tuple((s.id, s.kind, s.name, s.place_id, s.lat, s.lng, s.set_time, s.duration_min, s.meal)
                         for s in day.stops))
        found = self.memo.keys.get(content)
        if found is not None:
            return found
        legs = self.legs(day, prefs, estimate_all)
        if not robust:
            found = search_keys(detect(trip, day, legs, prefs, self.book, self.weather, keys_only=True))
        else:
            found = set(self.day_keys(trip, day, prefs, estimate_all))
            known = {} if estimate_all else self.known if day.id == self.day_id else self.other_legs.get(day.id, {})
            guessed = {pair for pair, leg in legs.items() if pair not in known} if self.routed else ()
            for factor in ESTIMATE_RANGE if guessed else ():
                # A leg the provider has not timed yet is an estimate: the fix must hold however it turns out.
                scaled = {pair: replace(leg, duration_s=round(leg.duration_s * factor)) if pair in guessed else leg
                          for pair, leg in legs.items()}
                found |= {i.key for i in detect(trip, day, scaled, prefs, self.book, self.weather, keys_only=True,
                                                rules=CLOCK_RULES)}
        self.memo.keys[content] = found
        return found

    def keys_before(self, day_id: str) -> set[Key]:
        return self.day_keys(self.trip, day_of(self.trip, day_id), self.prefs)

    def verify(self, issue: Issue, edits: Edits) -> bool:
        """Whether the edits clear the issue and add no finding on any day they
        change: on the legs as estimated first (most candidates fail there),
        then with the new legs faster and slower."""
        trip = self.simulate(edits)
        if trip is None:
            return False
        prefs_changed = trip.prefs is not self.trip.prefs
        before = {d.id: d for d in self.trip.days}
        touched = [d for d in trip.days
                   if d.id == self.day_id or prefs_changed or d is not before.get(d.id)]   # the days the edits reached
        if any(d.id != self.day_id and d.id not in before for d in touched):
            return False
        allowed = self.original - {issue.key}
        for robust in (False, True):
            for day in touched:
                keys = self.day_keys(trip, day, trip.prefs, prefs_changed, robust=robust)
                if not keys <= (allowed if day.id == self.day_id else self.keys_before(day.id)):
                    return False
        return True

    # -- the search ----------------------------------------------------------------

    def fixes_for(self, issue: Issue, strategies: list[Strategy], no_fix_reason: Callable[[], str]) -> SearchResult:
        """The issue's verified fixes, cheapest first (at most MAX_FIXES), or
        why there is none."""
        winners: list[Candidate] = []
        for strategy in sorted(strategies, key=lambda s: s.cost):
            if strategy.last_resort and winners:
                continue
            if len(winners) >= MAX_FIXES and strategy.cost >= max(w.cost for w in winners):
                break
            tried = found = 0
            for candidate in strategy.candidates():
                if tried >= strategy.tries or found >= strategy.most or self.budget <= 0:
                    break
                if any(candidate.edits == w.edits for w in winners):
                    continue
                tried += 1
                if not self.verify(issue, candidate.edits):
                    # It may clear the finding but shift a later meal out of its window: with that
                    # meal's time set, it may hold.
                    settled = strategy.settle(candidate) if strategy.settle is not None else candidate
                    if settled.edits == candidate.edits or any(settled.edits == w.edits for w in winners) \
                            or not self.verify(issue, settled.edits):
                        continue
                    candidate = settled
                winners.append(candidate)
                found += 1
        winners.sort(key=lambda c: c.rank)
        return SearchResult(winners[:MAX_FIXES], None if winners else no_fix_reason())


def day_of(trip: Trip, day_id: str) -> Day:
    """A day of the trip, read only (never the copy `Trip.day` makes on an edit)."""
    return next(d for d in trip.days if d.id == day_id)
