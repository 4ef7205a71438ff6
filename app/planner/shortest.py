"""Shortest order: the day's free stops in the order with the least total
travel, computed exactly by the server (no model call, so it costs nothing
against the AI limits and works without an AI key).

1. A travel-time matrix between the day's located stops: one route-matrix
   call per travel mode the legs would use (cached by the provider; a pair the
   provider cannot answer, or transit on OpenStreetMap, is a labelled
   estimate), each pair in the mode `app.legs.choose_mode` picks for it.
2. Constraints from the day as review sees it: set-time stops keep their
   times; a stop with hours must start where the whole visit (a meal: plus 30
   minutes before closing) fits one opening period; a meal starts inside its
   usual window. No hours are no constraint (nothing is known).
3. `app.planner.shortest_order` finds the order (exact up to 12 free stops,
   the best one found past that, labelled), and the draft is the move_stop
   ops that reach it, previewed and applied exactly like Optimize my day.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from ..errors import Conflict, Invalid, Unavailable
from ..legs import choose_mode, estimate, haversine_m
from .deps import PlannerDeps
from ..trips.model import Day
from ..trips.schedule import to_minutes
from ..review.facts import DayContext, FactSources
from ..review.ordering import day_stops, order_edits
from .drafts import preview_draft, store_draft
from .shortest_order import EXACT_LIMIT, ShortestOrder, shortest_order

MAX_STOPS = 25          # as Optimize my day
SAVING_WORTH_MIN = 5    # Optimize offers the shortest order when it saves at least this much
BLOCKED = {
    "window": "No order of this day fits “{name}”'s opening hours or meal time. Set its time by hand, or move it "
              "to another day.",
    "set_time": "No order of this day reaches “{name}” by its set time. Clear or change that time first.",
    "unreachable": "There is no route to or from “{name}” in the trip's travel modes.",
}


@dataclass(frozen=True)
class Matrix:
    travel_s: dict[tuple[str, str], int | None]
    estimated: bool      # some pair is an estimate, not the provider's route


def _located(stop) -> bool:
    return stop.lat is not None and stop.lng is not None


async def travel_matrix(svc: FactSources, stops: list, prefs) -> Matrix:
    """Seconds between every ordered pair of the day's stops, each pair as
    `app.legs.day_legs` would time it if the two were next to each other (the
    same mode rule, a walk over the longest walk chosen again on its real
    length); 0 where a stop has no location, as the schedule counts it."""
    located = [s for s in stops if _located(s)]
    points = [(s.lat, s.lng) for s in located]
    index = {s.id: i for i, s in enumerate(located)}
    matrices: dict[str, dict] = {}

    async def legs_in(mode: str) -> dict:
        if mode not in matrices:
            try:
                matrices[mode] = await svc.places.route_matrix(points, points, mode)
            except (Unavailable, ValueError):
                matrices[mode] = {}   # routing down, or too many points for one call: estimates, labelled
        return matrices[mode]

    estimated = False

    async def leg(a, b, mode: str):
        nonlocal estimated
        route = (await legs_in(mode)).get((index[a.id], index[b.id]))
        if route is None:
            estimated = True
            route = estimate(a.id, b.id, (a.lat, a.lng), (b.lat, b.lng), mode)
        return route

    travel: dict[tuple[str, str], int | None] = {}
    for a in stops:
        for b in stops:
            if a is b:
                continue
            if not (_located(a) and _located(b)):
                travel[(a.id, b.id)] = 0
                continue
            mode = choose_mode(haversine_m(a.lat, a.lng, b.lat, b.lng), prefs)
            route = await leg(a, b, mode)
            if mode == "walk" and route.distance_m > prefs.longestWalkM:
                again = choose_mode(route.distance_m, prefs)
                if again != "walk":
                    route = await leg(a, b, again)
            travel[(a.id, b.id)] = route.duration_s
    return Matrix(travel, estimated)


async def solve(svc: FactSources, ctx: DayContext, day: Day, places: dict | None) -> tuple[ShortestOrder, Matrix]:
    matrix = await travel_matrix(svc, day.stops, ctx.trip.prefs)
    start = to_minutes(day.start_time or "09:00")
    # CPU for tens of milliseconds at 12 free stops: off the event loop.
    result = await asyncio.to_thread(shortest_order, day_stops(day, ctx.date, places), matrix.travel_s, start)
    return result, matrix


def summary_of(result: ShortestOrder, matrix: Matrix) -> str:
    saved = round(((result.travel_before_s or 0) - (result.travel_after_s or 0)) / 60)
    how = "the shortest order" if result.exact else "the shortest order found (a day this long has too many " \
                                                     "orders to try them all)"
    text = (f"Visits the free stops in {how}: {saved} min less travel." if saved > 0
            else "This day is already in its shortest order.")
    if matrix.estimated:
        text += " Some travel times are estimates."
    return text


def require_order(result: ShortestOrder, day: Day) -> None:
    if not result.feasible:
        blocker = result.blocker
        name = next((s.name for s in day.stops if blocker and s.id == blocker.stop_id), "a stop")
        reason = blocker.reason if blocker else "window"
        raise Conflict(BLOCKED[reason].format(name=name), code="no_order",
                       **({"stopId": blocker.stop_id} if blocker else {}))


async def shortest_draft(svc: PlannerDeps, ctx: DayContext, user_id: str) -> dict:
    """POST .../shortest: a stored draft {id, edits, preview, travel} of the
    day in its shortest order; 409 `no_order` when no order fits."""
    draft = await shortest_preview(svc, ctx)
    draft_id = await store_draft(svc, ctx, user_id, "plan", draft["edits"],
                                 {"preview": draft["preview"], "travel": draft["travel"]})
    return {"id": draft_id, **draft}


async def shortest_preview(svc: FactSources, ctx: DayContext) -> dict:
    """The day in its shortest order, {edits, preview, travel}, stored nowhere
    (an assistant's read tool shows it; a member applies it as a draft)."""
    if len(ctx.day.stops) > MAX_STOPS:
        raise Invalid(f"Shortest order works on days of at most {MAX_STOPS} stops; this one has "
                      f"{len(ctx.day.stops)}.", field="dayId")
    if sum(1 for s in ctx.day.stops if not s.set_time) < 2:
        raise Invalid("There is nothing to reorder: this day has fewer than two stops without a set time.",
                      field="dayId")
    result, matrix = await solve(svc, ctx, ctx.day, ctx.places)
    require_order(result, ctx.day)
    edits = order_edits(ctx.day, list(result.order))
    draft = await preview_draft(svc, ctx, edits, summary_of(result, matrix))
    if draft["preview"]["added"]:   # never offered with a new finding (an order can still cross itself)
        raise Conflict(f"The shortest order would bring a new problem: {draft['preview']['added'][0]['message']} "
                       "Nothing was changed.", code="no_order")
    draft["travel"].update(optimalMin=draft["travel"]["afterMin"], exact=result.exact,
                           estimated=matrix.estimated, freeStops=sum(1 for s in ctx.day.stops if not s.set_time),
                           exactLimit=EXACT_LIMIT)
    return draft
