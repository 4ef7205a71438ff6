"""The review's path rules: the same place twice on a day (`duplicate`), and a
path that crosses back on itself (`backtracking`). Both run on every fix
simulation, so both avoid comparing every pair of stops when they can."""

from __future__ import annotations

import math

from ..trips.model import Stop

from .issues import DayFacts, Issue, has_point, meters_between, quote

DUPLICATE_RADIUS_M = 50
Point = tuple[float, float]


def duplicates(facts: DayFacts) -> list[Issue]:
    """The second of two stops at the same place: the same place id, or the
    same name within 50 m (`stay` excluded: a day may start and end at the hotel)."""
    issues = []
    by_place: dict[str, int] = {}
    by_name: dict[str, list[int]] = {}
    stops = facts.day.stops
    for k, stop in enumerate(stops):
        if stop.kind == "stay":
            continue
        name = stop.name.strip().casefold()
        same = [by_place[stop.place_id]] if stop.place_id in by_place else []
        if has_point(stop):
            same += [j for j in by_name.get(name, ())
                     if meters_between(stops[j], stop) <= DUPLICATE_RADIUS_M]
        if not same:
            if stop.place_id:
                by_place.setdefault(stop.place_id, k)
            if has_point(stop):
                by_name.setdefault(name, []).append(k)
            continue
        first = stops[min(same)]
        issues.append(Issue("duplicate", "warning", f"{quote(stop.name)} is on this day twice.", (first.id, stop.id),
                            subject=stop.id))
    return issues


def _project(points: list[Stop]) -> list[Point]:
    coords = [(p.lat or 0.0, p.lng or 0.0) for p in points]   # every one has a point (has_point)
    lat0 = math.radians(sum(lat for lat, _ in coords) / len(coords))
    return [(lng * math.cos(lat0) * 111_320.0, lat * 110_540.0) for lat, lng in coords]


def _orient(a: Point, b: Point, c: Point) -> float:
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])


def _crosses(p1: Point, p2: Point, p3: Point, p4: Point) -> bool:
    """A proper crossing: the segments cut through each other (touching ends do not count)."""
    d1, d2 = _orient(p3, p4, p1), _orient(p3, p4, p2)
    d3, d4 = _orient(p1, p2, p3), _orient(p1, p2, p4)
    eps = 1e-6
    return ((d1 > eps and d2 < -eps) or (d1 < -eps and d2 > eps)) and \
           ((d3 > eps and d4 < -eps) or (d3 < -eps and d4 > eps))


MAX_NAMED_CROSSINGS = 3     # a message names at most this many; the count says the rest


def backtracking(facts: DayFacts) -> list[Issue]:
    """One finding for a path that crosses itself, however often: it names
    the crossings (the first three) and every stop involved."""
    day = facts.day
    stops = [s for s in day.stops if has_point(s)]
    if len(stops) < 4:
        return []
    xy = _project(stops)
    # Segments whose bounding boxes do not overlap cannot cross: most pairs stop here.
    boxes = [(min(a[0], b[0]), max(a[0], b[0]), min(a[1], b[1]), max(a[1], b[1])) for a, b in zip(xy, xy[1:])]
    crossings = []
    for i in range(len(stops) - 1):
        bi = boxes[i]
        for j in range(i + 2, len(stops) - 1):
            bj = boxes[j]
            if bi[1] < bj[0] or bj[1] < bi[0] or bi[3] < bj[2] or bj[3] < bi[2]:
                continue
            if _crosses(xy[i], xy[i + 1], xy[j], xy[j + 1]):
                crossings.append((stops[i], stops[i + 1], stops[j], stops[j + 1]))
    if not crossings:
        return []
    involved = {s.id for crossing in crossings for s in crossing}
    stop_ids = tuple(s.id for s in day.stops if s.id in involved)
    message = ""
    if not facts.keys_only:
        named = "; ".join(f"{quote(a.name)} → {quote(b.name)} crosses {quote(c.name)} → {quote(d.name)}"
                          for a, b, c, d in crossings[:MAX_NAMED_CROSSINGS])
        times = "" if len(crossings) == 1 else f" {len(crossings)} times"
        more = "" if len(crossings) <= MAX_NAMED_CROSSINGS else f" (and {len(crossings) - MAX_NAMED_CROSSINGS} more)"
        message = f"The route crosses back on itself{times}: {named}{more}."
    return [Issue("backtracking", "warning", message, stop_ids, count=len(crossings),
                  detail={"crossings": [tuple(s.id for s in c) for c in crossings]})]
