"""A trip (or one day) as GPX 1.1 for phones' map apps, written with `gpxpy`.

- a waypoint per located stop, in the plan's order: its name, its time (UTC,
  as GPX wants), its kind as the waypoint's type, its address;
- a route per day through those stops that follows each leg's path where the
  map provider drew one (kept with the cached route, app/providers/route_cache.py):
  the path's points lie between the two stops' route points. Where no path is
  known (an estimate, a transit leg on OpenStreetMap, a route from a matrix)
  the leg is a straight segment, and the stop it leads to says so in its
  comment ("straight line from ...").

Stops without coordinates have no place on a map and are left out.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import gpxpy.gpx as gpx

from ..errors import AppError
from ..legs import Leg, by_pair
from ..trips.model import Day, Stop, Trip
from ..trips.schedule import date_label, day_schedule
from .calendar import KIND_WORDS, stop_url

log = logging.getLogger("wayline.exports")
Path = tuple[tuple[float, float], ...]
STRAIGHT = "straight line from {name}: no route from the map provider"


async def leg_paths(places, legs: Sequence[Leg], stops: dict[str, Stop]) -> dict[tuple[str, str], Path]:
    """The drawn path of each leg the provider routed, from its route cache
    (the legs were measured with it, so no request is made unless a route
    expired). A leg whose path cannot be had stays straight."""
    paths: dict[tuple[str, str], Path] = {}
    if places is None:
        return paths
    for leg in legs:
        if leg.source != places.name:
            continue
        a, b = stops[leg.from_stop_id], stops[leg.to_stop_id]
        try:
            route = await places.route((a.lat, a.lng), (b.lat, b.lng), leg.mode)
        except AppError:   # the provider is down: the leg is drawn straight, the file still comes
            log.info("gpx: no path for a %s leg (provider unavailable)", leg.mode)
            continue
        if route is not None and route.geometry:
            paths[(leg.from_stop_id, leg.to_stop_id)] = route.geometry
    return paths


def trip_gpx(trip: Trip, days: Sequence[Day], legs: dict[str, list[Leg]],
             paths: dict[tuple[str, str], Path], *, page_url: str) -> str:
    """GPX text for `days` of `trip` (all of them, or one)."""
    doc = gpx.GPX()
    doc.creator = "Wayline"
    doc.name = trip.title if len(days) != 1 else f"{trip.title}: {_day_name(trip, days[0])}"
    doc.link, doc.link_text = f"{page_url.rstrip('/')}/#/trips/{trip.id}", "Open in Wayline"
    zone = ZoneInfo(trip.timezone)
    for day in days:
        iso = trip.day_date(day)
        if iso is None:
            continue
        midnight = datetime.combine(date.fromisoformat(iso), datetime.min.time(), tzinfo=zone)
        slots = {s.stop_id: s for s in day_schedule(day, by_pair(legs.get(day.id, ())))}
        located = [s for s in day.stops if s.lat is not None and s.lng is not None]
        if not located:
            continue
        route = gpx.GPXRoute(name=_day_name(trip, day), description=day.note or None)
        previous: Stop | None = None
        for stop in located:
            when = (midnight + timedelta(minutes=slots[stop.id].start)).astimezone(UTC)
            doc.waypoints.append(gpx.GPXWaypoint(
                stop.lat, stop.lng, time=when, name=stop.name, type=KIND_WORDS.get(stop.kind, "Other"),
                description=stop.address or None, comment=stop.note[:500] or None))
            comment: str | None = None
            if previous is not None:
                path = paths.get((previous.id, stop.id))
                if path:
                    # The path's ends are the stops' own points, rounded: the stops stand for them.
                    route.points.extend(gpx.GPXRoutePoint(lat, lng) for lat, lng in path[1:-1])
                else:
                    comment = STRAIGHT.format(name=previous.name)
            route.points.append(gpx.GPXRoutePoint(stop.lat, stop.lng, time=when, name=stop.name,
                                                  type=KIND_WORDS.get(stop.kind, "Other"), comment=comment))
            previous = stop
        route.link = stop_url(page_url, trip.id, day.id)
        doc.routes.append(route)
    return doc.to_xml(version="1.1")


def _day_name(trip: Trip, day: Day) -> str:
    iso = trip.day_date(day)
    label = f"Day {day.position + 1}" + (f" ({date_label(iso)})" if iso else "")
    return f"{label}: {day.title.strip()}" if day.title.strip() else label
