"""The order of a day's free stops with the least total travel time, exactly.

Pure: no I/O; numpy is imported inside the solver. The caller passes the day's
stops in their current order, a travel-time matrix between them and the day's
start; `shortest_order` returns the new order, both travel totals and each
stop's computed start.

The day, as `app/trips/schedule.py` computes it (minutes from the day's
midnight, past 1440 after midnight):
- the first stop starts at the day's start (no leg before it); every other stop
  without a set time starts when the previous stop ends plus the leg between
  them, rounded up to whole minutes per leg as the schedule does: no waiting;
- a stop with a set time ("pinned") starts at its set time whatever comes
  before it; arriving after it makes the plan impossible. Pinned stops are
  visited in the order of their set times (equal times: their current order);
- anchors: a `stay` stop (the hotel) that is first in the current order stays
  first, and one that is last stays last;
- a stop that is not pinned may carry `allowed_starts`, inclusive (earliest,
  latest) start-minute ranges (the caller derives them from opening hours and
  meal windows); its computed start must fall in one of them. A pinned stop's
  own time is not checked against its ranges, only reported
  (`pinned_outside_window`);
- a leg the matrix gives as None (or leaves out) cannot be travelled.

The objective is the total travel seconds over all legs of the day. Ties: the
current order when it is optimal, otherwise the optimal order whose sequence of
stop ids is lexicographically smallest. Up to EXACT_LIMIT free stops the answer
is exact (`exact=True`); past it, the best order a bounded beam search finds,
never worse than the current order when that is possible (`exact=False`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any
from collections.abc import Mapping, Sequence

EXACT_LIMIT = 12
MAX_STOPS = 48           # bit masks of the free stops live in int64 arrays with room for the rest of the key
MAX_LEG_S = 7 * 86400    # a leg longer than a week is a caller's mistake
PROBE_WIDTH = 64         # beam width for a quick first answer (an upper bound, or a feasibility witness)
BEAM_WORK = 900_000      # past EXACT_LIMIT, beam width * n * n: bounded work, the same answer on every machine
BIG = 1 << 50            # "no way" in int64 sums of seconds and minutes


@dataclass(frozen=True)
class DayStop:
    id: str
    duration_min: int
    set_start: int | None = None                               # pinned: minutes from the day's midnight
    allowed_starts: tuple[tuple[int, int], ...] | None = None  # None: any start
    kind: str = ""                                             # "stay" anchors a stop at either end


@dataclass(frozen=True)
class Blocker:
    """Why no order fits: `reason` is "window" (no order starts `stop_id` inside
    its allowed starts), "set_time" (no order reaches the pinned `stop_id` by its
    time) or "unreachable" (the legs the matrix lacks leave no path; `stop_id`
    is the stop with the fewest usable legs)."""
    reason: str
    stop_id: str


@dataclass(frozen=True)
class ShortestOrder:
    order: tuple[str, ...]          # every stop id; the current order when infeasible
    starts: dict[str, int]          # computed start minute of each stop in `order`
    travel_before_s: int | None     # the current order's total; None when it uses a missing leg
    travel_after_s: int | None      # None when infeasible
    exact: bool
    feasible: bool
    blocker: Blocker | None = None  # set when not feasible
    pinned_outside_window: tuple[str, ...] = ()


def shortest_order(stops: Sequence[DayStop],
                   travel_s: Sequence[Sequence[int | None]] | Mapping[tuple[str, str], int | None],
                   day_start: int = 540, *, explain: bool = True) -> ShortestOrder:
    """`travel_s[i][j]` (by position in `stops`) or `travel_s[(from_id, to_id)]`:
    seconds from stop i to stop j, None (or absent from a mapping) when there is
    no way. Raises ValueError on malformed input. `explain=False` leaves out
    the blocker of an infeasible day (its search for the constraint that
    blocks costs several more searches; the review's fix search does not
    need it)."""
    day = _prepare(stops, travel_s, day_start)
    current = list(range(len(day.ids)))
    before_cost, before_starts, before_fault = _timing(day, current)
    exact = len(day.free) <= EXACT_LIMIT
    outside = tuple(day.ids[i] for i, pin in enumerate(day.pinned)
                    if pin is not None and not _fits(day.windows[i], pin))

    bound = before_cost if before_fault is None else None
    graph = _Graph(day)
    best = _solve(day, graph, exact, bound)
    if best is None or (bound is not None and _timing(day, best)[0] >= bound):
        best = current if before_fault is None else None   # the current order is optimal (or no worse)
    if best is None:
        return ShortestOrder(tuple(day.ids), dict(zip(day.ids, before_starts)), before_cost, None,
                             exact, False, _diagnose(day, graph, exact) if explain else None, outside)
    cost, starts, _ = _timing(day, best)
    return ShortestOrder(tuple(day.ids[i] for i in best), {day.ids[i]: s for i, s in zip(best, starts)},
                         before_cost, cost, exact, True, None, outside)


# -- the day, checked and indexed ----------------------------------------------

@dataclass(frozen=True)
class _Day:
    ids: tuple[str, ...]
    dur: tuple[int, ...]
    pinned: tuple[int | None, ...]
    windows: tuple[tuple[tuple[int, int], ...] | None, ...]   # what is checked (relaxed by _diagnose)
    secs: tuple[tuple[int | None, ...], ...]
    start: int
    first: int | None              # anchored first / last stop (an index)
    last: int | None
    pins: tuple[int, ...]          # pinned stops between the anchors, by set time
    free: tuple[int, ...]          # the stops to order, by id
    enforced: frozenset[int]       # pinned stops whose arrival is checked (all, unless relaxed)


def free_count(stops: Sequence[DayStop]) -> int:
    """How many stops the search orders (not pinned by a set time, not a stay
    anchoring either end): up to EXACT_LIMIT the answer is exact."""
    n = len(stops)
    first = 0 if n and stops[0].kind == "stay" else None       # as _prepare anchors them
    last = n - 1 if n > 1 and stops[-1].kind == "stay" else None
    return sum(1 for i, s in enumerate(stops) if i not in (first, last) and s.set_start is None)


def _prepare(stops, travel_s, day_start) -> _Day:
    stops = list(stops)
    n = len(stops)
    if n > MAX_STOPS:
        raise ValueError(f"at most {MAX_STOPS} stops")
    ids = tuple(s.id for s in stops)
    if len(set(ids)) != n:
        raise ValueError("stop ids must be unique")
    if not _is_int(day_start) or day_start < 0:
        raise ValueError("day_start must be a non-negative number of minutes")
    for s in stops:
        if not _is_int(s.duration_min) or s.duration_min < 0:
            raise ValueError(f"{s.id}: duration must be a non-negative number of minutes")
        if s.set_start is not None and (not _is_int(s.set_start) or s.set_start < 0):
            raise ValueError(f"{s.id}: set_start must be a non-negative number of minutes")
        if s.allowed_starts is not None and not all(
                len(r) == 2 and _is_int(r[0]) and _is_int(r[1]) and r[0] <= r[1] for r in s.allowed_starts):
            raise ValueError(f"{s.id}: allowed_starts must be (earliest, latest) minute pairs")
    secs = tuple(tuple(_leg(travel_s, ids, i, j) for j in range(n)) for i in range(n))

    first = 0 if n and stops[0].kind == "stay" else None
    last = n - 1 if n > 1 and stops[-1].kind == "stay" else None
    inner = [i for i in range(n) if i not in (first, last)]
    pins = sorted((i for i in inner if stops[i].set_start is not None), key=lambda i: (stops[i].set_start, i))
    free = sorted((i for i in inner if stops[i].set_start is None), key=lambda i: ids[i])
    pinned = tuple(s.set_start for s in stops)
    return _Day(ids, tuple(s.duration_min for s in stops), pinned,
                tuple(None if s.allowed_starts is None else tuple(map(tuple, s.allowed_starts)) for s in stops),
                secs, day_start, first, last, tuple(pins), tuple(free),
                frozenset(i for i in range(n) if pinned[i] is not None))


def _leg(travel_s, ids, i, j):
    if i == j:
        return 0
    if isinstance(travel_s, Mapping):
        s = travel_s.get((ids[i], ids[j]))
    else:
        if len(travel_s) != len(ids) or len(travel_s[i]) != len(ids):
            raise ValueError("the travel matrix must be square, one row and column per stop")
        s = travel_s[i][j]
    if s is not None and (not _is_int(s) or not 0 <= s <= MAX_LEG_S):
        raise ValueError(f"travel {ids[i]} -> {ids[j]} must be whole seconds between 0 and {MAX_LEG_S}, or None")
    return s


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _fits(windows, start: int) -> bool:
    return windows is None or any(a <= start <= b for a, b in windows)


def _timing(day: _Day, order: Sequence[int]):
    """(travel seconds or None if a leg is missing, starts, first fault or None) of one order.
    Anchors are not checked here: every order passed in keeps them by construction."""
    t, prev, starts, fault = day.start, None, [], None
    cost: int | None = 0
    for i in order:
        leg_min = 0
        if prev is not None:
            s = day.secs[prev][i]
            if s is None:
                cost, fault = None, fault or ("unreachable", i)
            else:
                cost = None if cost is None else cost + s
                leg_min = -(-s // 60)
        arrival = t + leg_min
        pin = day.pinned[i]
        if pin is not None:
            start = pin
            if arrival > start and i in day.enforced:
                fault = fault or ("set_time", i)
        else:
            start = arrival
            if not _fits(day.windows[i], start):
                fault = fault or ("window", i)
        starts.append(start)
        t, prev = start + day.dur[i], i
    return cost, starts, fault


# -- solving and explaining ----------------------------------------------------

def _solve(day: _Day, graph: _Graph, exact: bool, bound: int | None) -> list[int] | None:
    """The best order found: a cheap beam first (its cost bounds the next
    search), then the exact search or, past EXACT_LIMIT, a wide beam."""
    best = None
    for width in _widths(day, exact):
        order = _search(day, graph, width, bound)
        if order is not None:
            best, bound = order, _timing(day, order)[0]
    return best


def _feasible(day: _Day, graph: _Graph, exact: bool) -> bool:
    """The verdict _solve would give, stopping at the first order found."""
    return any(_search(day, graph, width, None) is not None for width in _widths(day, exact))


def _widths(day: _Day, exact: bool) -> tuple[int | None, ...]:
    if exact:
        return PROBE_WIDTH, None
    return PROBE_WIDTH, max(PROBE_WIDTH, BEAM_WORK // len(day.free) ** 2)   # work ~ width * n * n


def _diagnose(day: _Day, graph: _Graph, exact: bool) -> Blocker:
    """Name the constraint that blocks. Relax every window; if the day then
    fits, put the windows back in the day's order and name the one with which
    it stops fitting. Otherwise relax every set time too and do the same with
    them; if even that does not fit, the missing legs block."""
    n = len(day.ids)
    checked = [i for i in range(n) if day.pinned[i] is None and day.windows[i] is not None]
    loose = replace(day, windows=tuple(None if i in checked else day.windows[i] for i in range(n)))
    if _feasible(loose, graph, exact):
        def with_windows(m):
            return replace(day, windows=tuple(day.windows[i] if i in checked[:m] else loose.windows[i]
                                              for i in range(n)))
        return Blocker("window", day.ids[checked[_first_failing(len(checked), with_windows, graph, exact)]])
    timeless = replace(loose, enforced=frozenset())
    if _feasible(timeless, graph, exact):
        pinned = [i for i in (day.first, *day.pins, day.last) if i is not None and day.pinned[i] is not None]

        def with_set_times(m):
            return replace(timeless, enforced=frozenset(pinned[:m]))
        return Blocker("set_time", day.ids[pinned[_first_failing(len(pinned), with_set_times, graph, exact)]])
    legs = [sum(day.secs[i][j] is not None for j in range(n) if j != i) +
            sum(day.secs[j][i] is not None for j in range(n) if j != i) for i in range(n)]
    return Blocker("unreachable", day.ids[min(range(n), key=lambda i: (legs[i], i))])


def _first_failing(count: int, variant, graph: _Graph, exact: bool) -> int:
    """The index m such that variant(m) fits and variant(m + 1) does not, by
    bisection: variant(0) fits, variant(count) does not, and adding a
    constraint never makes a day fit."""
    fits, fails = 0, count
    while fails - fits > 1:
        mid = (fits + fails) // 2
        if _feasible(variant(mid), graph, exact):
            fits = mid
        else:
            fails = mid
    return fits


class _Graph:
    """The day as numpy arrays: everything _diagnose's relaxations leave alone
    (legs, durations, set times, who is free), plus a lower bound of the travel
    still to come from any state, for pruning and for ranking a beam.

    Nodes are the stops' indices plus `origin`, a virtual stop before the first
    one at zero distance from all (a day without a first anchor starts there)."""

    def __init__(self, day: _Day):
        import numpy as np
        self.np = np
        n_stops = len(day.ids)
        self.origin, self.size = n_stops, n_stops + 1
        size = self.size
        self.reach = np.zeros((size, size), bool)
        self.secs = np.zeros((size, size), np.int64)
        for i, row in enumerate(day.secs):
            for j, s in enumerate(row):
                if s is not None and i != j:
                    self.reach[i, j], self.secs[i, j] = True, s
        self.reach[self.origin, :n_stops] = True
        self.mins = -(-self.secs // 60)   # legs round up to whole minutes one by one, as the schedule does
        self.dur = np.array(day.dur + (0,), np.int64)
        self.setm = np.array([p if p is not None else 0 for p in day.pinned] + [0], np.int64)
        self.idrank = np.zeros(size, np.int64)
        self.idrank[sorted(range(n_stops), key=lambda i: day.ids[i])] = np.arange(n_stops)
        self.free = np.array(day.free, np.int64)
        self.bits = np.left_shift(np.int64(1), np.arange(len(day.free), dtype=np.int64))
        self.pins = np.array(day.pins + (0,), np.int64)   # padded: indexed by "pins passed" up to k
        self.k = len(day.pins)

        # Cheapest leg into each stop from a stop that can precede it (not the origin, which only
        # ever precedes the first stop placed, nor the last anchor).
        preds = self.reach.copy()
        preds[self.origin] = False
        if day.last is not None:
            preds[day.last] = False
        self.min_in_s = np.where(preds.any(axis=0), self.secs.min(axis=0, initial=BIG, where=preds), 0)
        self.min_in_m = np.where(preds.any(axis=0), self.mins.min(axis=0, initial=BIG, where=preds), 0)
        self.column = np.full(size, len(day.free), np.int64)   # a node's column in the cost-to-go table
        self.column[self.free] = np.arange(len(day.free))
        self.cost_to_go = self._cost_to_go(day) if len(day.free) <= EXACT_LIMIT else None

    def _cost_to_go(self, day: _Day):
        """Least travel from each state to the end of the day, ignoring time (a
        relaxation, so a lower bound; BIG when no path is left). A backward
        subset DP over (j, mask, column): column b < n is free stop b, column n
        the stop the stretch began at (the first anchor or the origin for j = 0,
        else the j-th pinned stop). Flat, indexed by (j * 2**n + mask) * (n + 1) + column.
        Only the states a search can be in are computed: the last free stop
        visited is in the mask and the next one is not (a quarter of a full
        table's pairs at 12 free stops; the rest stay BIG and are never read),
        through index arrays that are the same for every day of n free stops."""
        np, k, free = self.np, self.k, self.free
        n = len(free)
        into = np.where(self.reach, self.secs, BIG)   # into[v, w]: the leg v -> w
        between = into[np.ix_(free, free)].ravel()     # between[a * n + b]: free stop a -> free stop b
        begin = day.first if day.first is not None else self.origin
        table = np.full((k + 1, (1 << n) * (n + 1)), BIG, np.int64)
        for p, level in reversed(list(enumerate(_subsets(n)))):
            for j in range(k, -1, -1):
                here, start = table[j], begin if j == 0 else self.pins[j - 1]
                if p == n and j == k:   # every free stop visited, every pinned stop passed
                    row = level.at_start[0] - n
                    here[row:row + n + 1] = into[np.r_[free, start], day.last] if day.last is not None else 0
                    continue
                from_inside = np.full(level.legs_to.shape[:2], BIG, np.int64)   # (masks, p)
                from_start = np.full(len(level.at_start), BIG, np.int64)
                if p < n:   # a free stop w not yet visited next, from where the stretch stands
                    after = here.take(level.after)                               # (masks, n - p)
                    if p:
                        from_inside = (between.take(level.legs_to) + after[:, None, :]).min(axis=2)
                    from_start = (into[start, free].take(level.outside) + after).min(axis=1)
                if j < k:   # or on to the next pinned stop
                    onward, pin = table[j + 1].take(level.at_start), self.pins[j]
                    from_inside = np.minimum(from_inside, onward[:, None] + into[free, pin].take(level.inside))
                    from_start = np.minimum(from_start, onward + into[start, pin])
                here[level.at_inside] = np.minimum(from_inside, BIG)
                here[level.at_start] = np.minimum(from_start, BIG)
        return table.reshape(-1)


@dataclass(frozen=True)
class _Subsets:
    """The masks with p of n bits set, as flat indices into one j's slice of
    the cost-to-go table (row mask * (n + 1)) and into the n x n leg matrix."""
    inside: Any       # (masks, p): the bits set, where a stretch can stand
    outside: Any      # (masks, n - p): the bits not set, where it can go next
    at_inside: Any    # (masks, p): the states (mask, b) for b inside
    at_start: Any     # (masks,): the states (mask, n), the stretch's start
    after: Any        # (masks, n - p): the states (mask | w, w) for w outside
    legs_to: Any      # (masks, p, n - p): the legs b -> w


@functools.lru_cache(maxsize=EXACT_LIMIT + 1)
def _subsets(n: int) -> tuple[_Subsets, ...]:
    """Per count p of visited free stops (index p); the same for every day with n free stops."""
    import numpy as np
    masks = np.arange(1 << n, dtype=np.int64)
    has = ((masks[:, None] >> np.arange(n)) & 1).astype(bool)
    popcount = has.sum(axis=1)
    levels = []
    for p in range(n + 1):
        rows = masks[popcount == p]
        order = np.argsort(~has[popcount == p], axis=1, kind="stable")   # the set bits first, each part ascending
        inside, outside = order[:, :p], order[:, p:]
        levels.append(_Subsets(
            inside=inside, outside=outside,
            at_inside=rows[:, None] * (n + 1) + inside,
            at_start=rows * (n + 1) + n,
            after=(rows[:, None] | (1 << outside)) * (n + 1) + outside,
            legs_to=inside[:, :, None] * n + outside[:, None, :]))
    return tuple(levels)


def _search(day: _Day, g: _Graph, width: int | None, bound: int | None) -> list[int] | None:
    """Forward DP over (visited free stops, pinned stops passed, last stop), one
    layer per stop placed; `width` None: exact, else a beam keeping the `width`
    most promising labels per layer. Returns the best full order or None.

    Why this is exact. A label is (mask, j, last, t, c): the free stops visited,
    how many pinned stops are passed, the last stop, the minute it ends, the
    travel seconds so far. What can follow a label depends only on (mask, j,
    last, t); c only adds. Inside a stretch between pinned stops t is not a
    function of c (the stretch's stops differ by how the free stops were split
    between stretches, and legs round up to minutes one by one), and with no
    waiting a later t can be the only one that opens a window, so labels are
    kept per exact t, the least c for each. Two reductions keep them few, both
    exact:
    1. When nothing ahead depends on time (no pinned stop left to reach, no
       window among the unvisited stops, the last anchor neither pinned nor
       windowed), t is dropped from the key: one label per (mask, j, last).
    2. Let rel(mask) be the latest earliest-start of any range of an unvisited
       stop (and of the last anchor). If rel <= tA <= tB and cA <= cB, label A
       dominates label B: take any completion feasible from B. From A, every
       start up to the next pinned stop is the same chain shifted earlier by
       tB - tA, so it is still <= the end of the range it was in, and still >=
       tA >= rel >= that range's earliest start: inside it. The next pinned stop
       is reached earlier, still in time, and from there both timelines are the
       same (a pinned stop resets the clock). Same legs, same seconds, so A's
       total <= B's. So among such labels only the Pareto front of (t, c) stays.
    Ties: each label also keeps its rank in the lexicographic order of the id
    sequences of its layer; (c, rank) replaces c in every comparison above, so
    the lexicographically smallest optimal order's prefix is never dropped (a
    label dominating it would give an order cheaper, or as cheap and smaller).
    Pruning drops only labels that cannot be completed or cannot beat `bound`
    (the cost of a known feasible order): c + a lower bound of the travel
    still to come > bound. A label that merely ties is kept.
    """
    np, size, k, free, bits = g.np, g.size, g.k, g.free, g.bits
    n, pins, anchor = len(free), g.pins, day.last
    enforced = np.zeros(size, bool)
    enforced[list(day.enforced)] = True
    # The latest end of a free stop in stretch j that still lets it reach pinned stop j (or the last anchor).
    deadline = np.full(k + 1, BIG, np.int64)
    for j, p in enumerate(day.pins + ((anchor,) if anchor is not None else ())):
        if p in day.enforced:
            deadline[j] = g.setm[p] - g.min_in_m[p]

    windowed = [b for b in range(n) if day.windows[day.free[b]] is not None]
    anchor_windows = day.windows[anchor] if anchor is not None and day.pinned[anchor] is None else None
    ends = [e for i in range(size - 1) if day.pinned[i] is None for _, e in day.windows[i] or ()]
    span = max(ends, default=0) + 2
    allowed = np.ones((size, span), bool)   # allowed[node, minute]; the last column is past every range
    for i in range(size - 1):
        ranges = day.windows[i]
        if day.pinned[i] is None and ranges is not None:
            allowed[i] = False
            for a, e in ranges:
                allowed[i, max(a, 0):e + 1] = True
    window_of = {b: day.windows[day.free[b]] or () for b in windowed}
    release = {b: max((a for a, _ in window_of[b]), default=-1) for b in windowed}
    closing = {b: max((e for _, e in window_of[b]), default=-1) for b in windowed}  # -1: never open
    anchor_sensitive = anchor is not None and (anchor in day.enforced or anchor_windows is not None)
    # With every set time enforced the clock never goes back, so a window that is over stays over.
    forward_only = all(day.pinned[i] is None or i in day.enforced for i in range(size - 1))

    def lower_bound(mask, j, node, rest_before):
        if g.cost_to_go is not None:
            return g.cost_to_go[((j << n) + mask) * (n + 1) + g.column[node]]
        return rest_before - g.min_in_s[node]   # the cheapest leg into each stop still to come

    # The first label.
    if day.first is not None:
        f = day.first
        pin = day.pinned[f]
        begin = pin if pin is not None else day.start
        if (f in day.enforced and day.start > begin) or (pin is None and not _fits(day.windows[f], begin)):
            return None
        node, t0 = f, begin + day.dur[f]
    else:
        node, t0 = g.origin, day.start
    mask, j = np.zeros(1, np.int64), np.zeros(1, np.int64)
    last, t, c = np.array([node], np.int64), np.array([t0], np.int64), np.zeros(1, np.int64)
    rest = np.array([g.cost_to_go[n] if g.cost_to_go is not None else
                     g.min_in_s[np.r_[free, pins[:k]]].sum() + (g.min_in_s[anchor] if anchor is not None else 0)],
                    np.int64)
    history = []

    for _ in range(n + k):
        parts = []
        if n:   # a free stop next
            lcol = last[:, None]
            ok = ((mask[:, None] & bits) == 0) & g.reach[lcol, free]
            start = t[:, None] + g.mins[lcol, free]
            ok &= allowed[free, np.minimum(start, span - 1)]
            end = start + g.dur[free]
            ok &= end <= deadline[j][:, None]
            cost = c[:, None] + g.secs[lcol, free]
            after = lower_bound(mask[:, None] | bits, j[:, None], free, rest[:, None])
            ok &= cost + after <= (BIG - 1 if bound is None else bound)
            r, q = np.nonzero(ok)
            parts.append((mask[r] | bits[q], j[r], free[q], end[r, q], cost[r, q], r, after[r, q]))
        if k:   # the next pinned stop
            r = np.nonzero(j < k)[0]
            p = pins[j[r]]
            cost = c[r] + g.secs[last[r], p]
            after = lower_bound(mask[r], j[r] + 1, p, rest[r])
            ok = g.reach[last[r], p] & ((t[r] + g.mins[last[r], p] <= g.setm[p]) | ~enforced[p])
            ok &= cost + after <= (BIG - 1 if bound is None else bound)
            r = r[ok]
            parts.append((mask[r], j[r] + 1, p[ok], g.setm[p[ok]] + g.dur[p[ok]], cost[ok], r, after[ok]))
        mask, j, last, t, c, parent, rest = (np.concatenate(col) for col in zip(*parts))
        lex = parent * size + g.idrank[last]   # unique; orders labels as their id sequences

        # Per label: does time still matter, rel(mask), and is an unvisited window already over?
        relevant = (j < k) | anchor_sensitive
        rel = np.full(len(mask), -BIG, np.int64)
        alive = np.ones(len(mask), bool)
        for b in windowed:
            unvisited = (mask & bits[b]) == 0
            relevant |= unvisited
            rel = np.where(unvisited, np.maximum(rel, release[b]), rel)
            if forward_only:
                alive &= ~(unvisited & (t > closing[b]))
        if anchor_windows is not None:
            rel = np.maximum(rel, max((a for a, _ in anchor_windows), default=-1))
            if forward_only:
                alive &= t <= max((e for _, e in anchor_windows), default=-1)
        keep = _reduce(np, (mask * (k + 1) + j) * size + last, np.where(relevant, t, -1), c, lex,
                       relevant & (t >= rel), alive)
        if width is not None and len(keep) > width:
            keep = keep[np.lexsort((lex[keep], c[keep] + rest[keep]))[:width]]
        keep = keep[np.argsort(lex[keep], kind="stable")]   # layer order = lexicographic rank
        if not len(keep):
            return None
        mask, j, last, t, c, parent, rest = (a[keep] for a in (mask, j, last, t, c, parent, rest))
        history.append((last, parent))

    total = c
    if anchor is not None:
        ok = g.reach[last, anchor]
        arrival = t + g.mins[last, anchor]
        if day.pinned[anchor] is not None:
            ok &= (arrival <= g.setm[anchor]) | (anchor not in day.enforced)
        else:
            ok &= allowed[anchor, np.minimum(arrival, span - 1)]
        total = np.where(ok, c + g.secs[last, anchor], BIG)
    if not len(total) or total.min() >= BIG:
        return None
    row = int(np.argmin(total))   # the first of the cheapest is the lexicographically smallest
    order = []
    for lasts, parents in reversed(history):
        order.append(int(lasts[row]))
        row = int(parents[row])
    order.reverse()
    return ([day.first] if day.first is not None else []) + order + ([anchor] if anchor is not None else [])


def _reduce(np, key, tkey, c, lex, pareto, alive):
    """Indices of the labels to keep: the cheapest (then lexicographically
    smallest) per (key, tkey), then, among labels with `pareto` set, only those
    no earlier-ending label of the same key beats on (c, lex). See _search."""
    idx = np.nonzero(alive)[0]
    idx = idx[np.lexsort((lex[idx], c[idx], tkey[idx], key[idx]))]
    k, tk = key[idx], tkey[idx]
    first = np.ones(len(idx), bool)
    first[1:] = (k[1:] != k[:-1]) | (tk[1:] != tk[:-1])
    idx = idx[first]
    p = np.nonzero(pareto[idx])[0]
    if len(p) > 1:
        sub = idx[p]
        rank = np.empty(len(sub), np.int64)
        rank[np.lexsort((lex[sub], c[sub]))] = np.arange(len(sub))
        group = np.cumsum(np.r_[True, key[sub][1:] != key[sub][:-1]])
        # A running minimum per group: shift each group below all earlier ones.
        shifted = rank - group * len(sub)
        best_before = np.minimum.accumulate(shifted)
        beaten = np.zeros(len(sub), bool)
        beaten[1:] = (group[1:] == group[:-1]) & (best_before[:-1] < shifted[1:])
        idx = np.delete(idx, p[beaten])
    return idx
