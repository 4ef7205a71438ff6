"""The shortest order of a day's free stops (app/planner/shortest_order.py), checked
against a brute force written here from the rules alone, and on hand-made days."""

from __future__ import annotations

import math
import random

import pytest

from app.planner.shortest_order import EXACT_LIMIT, Blocker, DayStop, shortest_order

# -- the brute force: every order, the day's rules applied one stop at a time --


def advance(stops, matrix, clock, previous, i, *, skip_windows=(), skip_set_times=()):
    """Stop i next, after stop `previous` left at `clock`: (leg seconds, start),
    or None when it breaks a rule: a missing leg, a set time reached late, a
    start outside the allowed starts. The stops named in skip_* are not
    checked for that rule."""
    stop, travel, leg = stops[i], 0, 0
    if previous is not None:
        if matrix[previous][i] is None:
            return None
        travel = matrix[previous][i]
        leg = math.ceil(travel / 60)
    if stop.set_start is not None:
        if clock + leg > stop.set_start and stop.id not in skip_set_times:
            return None
        return travel, stop.set_start
    start = clock + leg
    if stop.allowed_starts is not None and stop.id not in skip_windows and \
            not any(a <= start <= b for a, b in stop.allowed_starts):
        return None
    return travel, start


def simulate(stops, matrix, day_start, order, **skip):
    """(travel seconds, starts) of `order` (positions in `stops`), or None when
    it breaks a rule (`advance`)."""
    clock, previous, travel, starts = day_start, None, 0, []
    for i in order:
        step = advance(stops, matrix, clock, previous, i, **skip)
        if step is None:
            return None
        travel += step[0]
        starts.append(step[1])
        clock, previous = step[1] + stops[i].duration_min, i
    return travel, starts


def brute_force(stops, matrix, day_start, **skip):
    """The cheapest order keeping the anchors and the set-time order; ties: the
    current order, then the smallest sequence of ids. None when nothing fits.

    Every such order is tried, built one stop at a time as `simulate` walks
    it: an order that breaks a rule at its k-th stop is dropped there,
    together with every other order that begins with the same k stops (they
    break it too), and so is one whose first k stops already travel more than
    the best whole order found (legs are never negative: the rest only adds)."""
    assert all(leg is None or leg >= 0 for row in matrix for leg in row)
    n = len(stops)
    first = [0] if n and stops[0].kind == "stay" else []
    last = [n - 1] if n > 1 and stops[-1].kind == "stay" else []
    middle = [i for i in range(n) if i not in first + last]
    pinned = sorted((i for i in middle if stops[i].set_start is not None), key=lambda i: (stops[i].set_start, i))
    free = [i for i in middle if stops[i].set_start is None]
    current = list(range(n))
    best = None

    def orders_from(order, clock, previous, travel):
        nonlocal best
        if best is not None and travel > best[0]:
            return
        if len(order) == n:
            key = (travel, order != current, [stops[i].id for i in order])
            best = key if best is None or key < best else best
            return
        if len(order) < len(first):
            following = first
        elif len(order) < n - len(last):
            # Any free stop not placed yet, or the next set time in its order.
            following = [i for i in free if i not in order] + [i for i in pinned if i not in order][:1]
        else:
            following = last
        for i in following:
            step = advance(stops, matrix, clock, previous, i, **skip)
            if step is not None:
                orders_from(order + [i], step[1] + stops[i].duration_min, i, travel + step[0])

    orders_from([], day_start, None, 0)
    return best and (best[0], tuple(best[2]))


def random_day(rng: random.Random, free: int, pinned: int):
    """A day with asymmetric legs, missing legs, anchors, windows (some past
    midnight, some empty) and set times; positions shuffled."""
    day_start = rng.choice([480, 540, 600, 1260])   # 21:00 starts run past midnight
    hotel_first, hotel_last = rng.random() < 0.3, rng.random() < 0.3
    stops = []
    for x in range(free + pinned):
        set_start = rng.randrange(day_start - 20, day_start + 900) if x < pinned else None
        windows = None
        if rng.random() < 0.3:
            windows = []
            for _ in range(rng.choice([1, 1, 2])):
                a = rng.randrange(day_start - 60, day_start + 700)
                windows.append((a, a + rng.randrange(0, 600)))
            windows = tuple(windows)
        elif rng.random() < 0.03:
            windows = ()
        stops.append(DayStop(f"s{rng.randrange(10**6):06d}", rng.choice([0, 15, 30, 45, 60, 90]), set_start,
                             windows, rng.choice(["sight", "food", "stay"])))
    rng.shuffle(stops)
    if hotel_first:
        stops.insert(0, DayStop("hotel-a", rng.choice([0, 30]), kind="stay", allowed_starts=rng.choice(
            [None, None, ((day_start, day_start + 30),), ((day_start + 10, day_start + 30),)])))
    if hotel_last:
        stops.append(DayStop("hotel-b", 0, rng.choice([None, day_start + 660]), kind="stay",
                             allowed_starts=rng.choice([None, None, ((day_start + 200, day_start + 900),)])))
    size = len(stops)
    coarse = rng.random() < 0.4   # legs from a few values: many orders tie, which exercises the tie-break

    def leg():
        return rng.choice([0, 60, 300, 600]) if coarse else rng.randrange(0, 1500)
    matrix = [[0 if i == j else None if rng.random() < 0.08 else leg() for j in range(size)] for i in range(size)]
    return stops, matrix, day_start


def sizes(rng: random.Random) -> tuple[int, int]:
    """Free and pinned counts whose brute force stays small (at most 8! orders)."""
    while True:
        free, pinned = rng.randrange(0, 9), rng.randrange(0, 4)
        if math.factorial(free + pinned) // math.factorial(pinned) <= 40320:
            return free, pinned


def assert_matches_brute_force(stops, matrix, day_start):
    ids = [s.id for s in stops]
    want = brute_force(stops, matrix, day_start)
    got = shortest_order(stops, matrix, day_start)
    current = simulate(stops, [[0 if s is None else s for s in row] for row in matrix], day_start, range(len(stops)),
                       skip_windows=ids, skip_set_times=ids)
    missing_leg = any(matrix[i][i + 1] is None for i in range(len(stops) - 1))
    assert got.travel_before_s == (None if missing_leg else current[0])
    assert got.exact
    assert got.feasible == (want is not None)
    if want is None:
        assert got.order == tuple(ids) and got.travel_after_s is None
        assert got.blocker is not None and got.blocker.stop_id in ids
        return got
    assert (got.travel_after_s, got.order) == want
    travel, starts = simulate(stops, matrix, day_start, [ids.index(i) for i in got.order])
    assert travel == got.travel_after_s
    assert got.starts == dict(zip(got.order, starts))
    assert got.blocker is None
    return got


@pytest.mark.parametrize("seed", range(16))
def test_same_optimum_and_verdict_as_brute_force(seed):
    rng = random.Random(seed)
    verdicts = []
    for _ in range(30):
        verdicts.append(assert_matches_brute_force(*random_day(rng, *sizes(rng))).feasible)
    assert any(verdicts)


def test_brute_force_cases_cover_both_verdicts_and_eight_free_stops():
    """The random days above are neither nearly all feasible nor nearly all
    infeasible (the verdicts are the brute force's, checked equal above), and
    the largest ones (8 free stops) are among them."""
    verdicts, largest = [], 0
    for seed in range(16):
        rng = random.Random(seed)
        for _ in range(30):
            free, pinned = sizes(rng)
            largest = max(largest, free)
            verdicts.append(shortest_order(*random_day(rng, free, pinned)).feasible)
    assert 0.3 < sum(verdicts) / len(verdicts) < 0.9
    assert largest == 8


@pytest.mark.parametrize("seed", range(4))
def test_blocker_is_the_constraint_with_which_the_day_stops_fitting(seed):
    """Windows put back in the day's order: up to the blocker's the day fits,
    with it it does not; set times likewise, once every window is relaxed; and
    'unreachable' only when nothing fits even then."""
    rng = random.Random(1000 + seed)
    seen = set()
    for _ in range(60):
        stops, matrix, day_start = random_day(rng, *sizes(rng))
        got = assert_matches_brute_force(stops, matrix, day_start)
        if got.feasible:
            continue
        ids = [s.id for s in stops]
        blocker = got.blocker
        seen.add(blocker.reason)
        windowed = [s.id for s in stops if s.set_start is None and s.allowed_starts is not None]
        if blocker.reason == "window":
            after = windowed[windowed.index(blocker.stop_id) + 1:]
            assert brute_force(stops, matrix, day_start, skip_windows={blocker.stop_id, *after}) is not None
            assert brute_force(stops, matrix, day_start, skip_windows=set(after)) is None
            continue
        assert brute_force(stops, matrix, day_start, skip_windows=set(ids)) is None
        first = stops[:1] if stops[0].kind == "stay" else []
        last = stops[-1:] if len(stops) > 1 and stops[-1].kind == "stay" else []
        middle = sorted((s for s in stops if s not in first + last and s.set_start is not None),
                        key=lambda s: (s.set_start, ids.index(s.id)))
        in_time_order = [s.id for s in first + middle + last if s.set_start is not None]
        if blocker.reason == "set_time":
            after = in_time_order[in_time_order.index(blocker.stop_id) + 1:]
            assert brute_force(stops, matrix, day_start, skip_windows=set(ids),
                               skip_set_times={blocker.stop_id, *after}) is not None
            assert brute_force(stops, matrix, day_start, skip_windows=set(ids), skip_set_times=set(after)) is None
        else:
            assert blocker.reason == "unreachable"
            assert brute_force(stops, matrix, day_start, skip_windows=set(ids), skip_set_times=set(ids)) is None
    assert {"window", "set_time"} <= seen


# -- hand-made days ---------------------------------------------------------------

def line_matrix(positions: list[float], minutes_per_unit: float = 5) -> list[list[int]]:
    """Legs between points on a line: |a - b| units, in seconds."""
    return [[round(abs(a - b) * minutes_per_unit * 60) for b in positions] for a in positions]


def test_museum_closed_before_noon_comes_after_lunch():
    stops = [
        DayStop("museum", 60, allowed_starts=((720, 930),)),   # opens 12:00, closes 17:00: start by 15:30
        DayStop("lunch", 60, allowed_starts=((660, 900),)),    # lunch starts 11:00-15:00
        DayStop("park", 60),
    ]
    # Museum first is as short a walk, but it is closed at 10:00.
    matrix = line_matrix([0, 1, 3])
    got = shortest_order(stops, matrix, day_start=600)
    assert got.feasible and got.exact
    assert got.order == ("park", "lunch", "museum")
    assert got.starts == {"park": 600, "lunch": 670, "museum": 735}
    assert got.travel_after_s == 15 * 60
    assert got.travel_before_s == 15 * 60   # the current order is as short, but the museum is shut at 10:00


def test_pinned_lunch_keeps_its_time_with_free_stops_before_and_after_it():
    # Four one-hour visits, ten minutes apart; lunch is booked at 13:00. Only three fit before it.
    stops = [DayStop("lunch", 60, set_start=780, kind="food")] + [DayStop(f"visit-{x}", 60) for x in "abcd"]
    matrix = [[0 if i == j else 600 for j in range(5)] for i in range(5)]
    matrix[0][4] = 60     # visit-d is next door to the restaurant (lunch -> d)
    matrix[3][0] = 60     # and visit-c just before it (c -> lunch)
    got = shortest_order(stops, matrix)
    assert got.feasible and got.exact
    position = got.order.index("lunch")
    assert 0 < position < 4
    assert got.starts["lunch"] == 780
    assert got.order[position - 1] == "visit-c" and got.order[position + 1] == "visit-d"
    assert max(got.starts[s] + 60 for s in got.order[:position]) <= 780
    assert (got.travel_after_s, got.order) == brute_force(stops, matrix, 540)


def test_hotel_first_stays_first_and_hotel_last_stays_last():
    stops = [DayStop("hotel-am", 0, kind="stay"), DayStop("a", 30), DayStop("b", 30), DayStop("c", 30),
             DayStop("hotel-pm", 0, kind="stay")]
    # The hotel sits in the middle of the line, so the shortest day would not start there.
    matrix = line_matrix([2, 0, 1, 3, 2])
    got = shortest_order(stops, matrix)
    assert got.order[0] == "hotel-am" and got.order[-1] == "hotel-pm"
    assert (got.travel_after_s, got.order) == brute_force(stops, matrix, 540)
    loose = [DayStop(s.id, s.duration_min, kind="sight") for s in stops]
    assert shortest_order(loose, matrix).order[0] not in ("hotel-am", "hotel-pm")


def test_no_order_fits_a_window():
    stops = [DayStop("tour", 60, allowed_starts=((600, 610),)), DayStop("cafe", 60)]
    matrix = [[0, 900], [900, 0]]   # 15 min apart: after the cafe the tour starts 10:15
    got = shortest_order(stops, matrix)
    assert not got.feasible and got.exact
    assert got.blocker == Blocker("window", "tour")
    assert got.order == ("tour", "cafe") and got.travel_after_s is None
    assert got.starts == {"tour": 540, "cafe": 615}


def test_a_set_time_no_order_reaches_blocks():
    stops = [DayStop("hotel", 0, kind="stay"), DayStop("walk", 30), DayStop("brunch", 60, set_start=545)]
    matrix = line_matrix([0, 1, 4])   # the hotel is 20 min from brunch at 09:05
    got = shortest_order(stops, matrix)
    assert not got.feasible
    assert got.blocker == Blocker("set_time", "brunch")


def test_a_stop_nothing_can_reach_blocks():
    stops = [DayStop("a", 30), DayStop("island", 30), DayStop("b", 30)]
    matrix = [[0, None, 60], [None, 0, None], [60, None, 0]]
    got = shortest_order(stops, matrix)
    assert not got.feasible and got.travel_before_s is None
    assert got.blocker == Blocker("unreachable", "island")


def test_a_one_minute_window_reached_with_no_travel_fits():
    stops = [DayStop("talk", 1, allowed_starts=((600, 600),)), DayStop("tour", 60)]
    got = shortest_order(stops, [[0, 0], [0, 0]])   # the tour ends at 10:00, next door
    assert got.feasible and got.order == ("tour", "talk") and got.starts == {"tour": 540, "talk": 600}


def test_past_midnight_windows_and_starts():
    stops = [DayStop("bar", 90, allowed_starts=((1410, 1500),)),   # starts 23:30-01:00
             DayStop("club", 120, allowed_starts=((1440, 1560),)),  # starts midnight-02:00
             DayStop("dinner", 150)]
    matrix = line_matrix([0, 1, 2])
    got = shortest_order(stops, matrix, day_start=1260)   # 21:00
    assert got.feasible
    assert got.order == ("dinner", "bar", "club")   # dinner -> club is shorter, but the club opens at midnight
    assert got.starts == {"dinner": 1260, "bar": 1420, "club": 1515}


def test_more_than_twelve_free_stops_is_a_labelled_best_effort_no_worse_than_now():
    rng = random.Random(7)
    count = EXACT_LIMIT + 3
    points = [(rng.uniform(0, 5000), rng.uniform(0, 3000)) for _ in range(count)]
    matrix = [[int(math.dist(a, b) / 1.4) for b in points] for a in points]
    windows = {0: ((540, 720),), 1: ((540, 720),), count - 1: ((900, 1600),)}   # the current order fits them
    stops = [DayStop(f"stop-{x:02d}", 30, allowed_starts=windows.get(x)) for x in range(count)]
    assert simulate(stops, matrix, 540, range(count)) is not None
    got = shortest_order(stops, matrix)
    assert not got.exact and got.feasible
    assert sorted(got.order) == sorted(s.id for s in stops)
    assert got.travel_after_s < got.travel_before_s
    travel, starts = simulate(stops, matrix, 540, [int(i[-2:]) for i in got.order])
    assert travel == got.travel_after_s and got.starts == dict(zip(got.order, starts))


def test_more_than_twelve_keeps_the_current_order_when_nothing_better_is_found():
    count = EXACT_LIMIT + 2
    stops = [DayStop(f"stop-{x:02d}", 30) for x in range(count)]
    matrix = line_matrix(list(range(count)))   # in a row: the current order is optimal
    got = shortest_order(stops, matrix)
    assert not got.exact
    assert got.order == tuple(s.id for s in stops) and got.travel_after_s == got.travel_before_s


def test_ties_prefer_the_current_order_then_the_smallest_ids():
    stops = [DayStop("b", 30), DayStop("a", 30), DayStop("c", 30)]
    even = [[0 if i == j else 300 for j in range(3)] for i in range(3)]
    assert shortest_order(stops, even).order == ("b", "a", "c")
    late = [DayStop("b", 30), DayStop("a", 30), DayStop("c", 30, set_start=540)]   # current order infeasible
    assert shortest_order(late, even).order == ("c", "a", "b")


def test_travel_by_id_gives_the_same_answer():
    stops = [DayStop("x", 20), DayStop("y", 20), DayStop("z", 20)]
    matrix = line_matrix([0, 2, 1])
    by_id = {(a.id, b.id): matrix[i][j] for i, a in enumerate(stops) for j, b in enumerate(stops) if i != j}
    del by_id[("x", "z")]   # an absent pair cannot be travelled
    matrix[0][2] = None
    assert shortest_order(stops, by_id) == shortest_order(stops, matrix)


def test_a_pinned_stop_outside_its_window_is_reported_not_moved():
    stops = [DayStop("dinner", 90, set_start=1020, allowed_starts=((1080, 1320),)), DayStop("walk", 30)]
    got = shortest_order(stops, [[0, 300], [300, 0]])
    assert got.feasible and got.pinned_outside_window == ("dinner",)
    assert got.starts["dinner"] == 1020


@pytest.mark.parametrize("stops, matrix, message", [
    ([DayStop("a", 10), DayStop("a", 10)], [[0, 1], [1, 0]], "unique"),
    ([DayStop("a", -5)], [[0]], "duration"),
    ([DayStop("a", 10, allowed_starts=((600, 500),))], [[0]], "allowed_starts"),
    ([DayStop("a", 10), DayStop("b", 10)], [[0, 1]], "square"),
    ([DayStop("a", 10), DayStop("b", 10)], [[0, -1], [1, 0]], "seconds"),
    ([DayStop("a", 10), DayStop("b", 10)], [[0, 1.5], [1, 0]], "seconds"),
])
def test_malformed_input_is_refused(stops, matrix, message):
    with pytest.raises(ValueError, match=message):
        shortest_order(stops, matrix)


def test_empty_and_single_stop_days():
    assert shortest_order([], []).order == ()
    one = shortest_order([DayStop("hotel", 0, kind="stay")], [[0]])
    assert one.feasible and one.order == ("hotel",) and one.travel_after_s == 0
