"""GPX of a day and of the trip (issue 24, item 2), parsed with `gpxpy`: the
located stops as waypoints in order, a route per day that follows the path
OSRM drew (the OSM stand-in bends every path through a corner) and a straight,
marked segment where no route is known."""

from __future__ import annotations

from datetime import UTC, datetime

import gpxpy

from helpers import join, make_client, new_trip, op, signup, use
from standins.osm_standin import osm_settings

TORVEHALLERNE = (55.6838, 12.5697)
ROSENBORG = (55.6858, 12.5772)
FAR_AWAY = (56.1629, 10.2039)   # Aarhus: outside the stand-in's map, so OSRM finds no road to it


def test_a_day_and_the_trip_as_gpx(settings, osm_standin):
    with make_client(osm_settings(settings, osm_standin)) as client:
        alice, bob = signup(client, "alice"), signup(client, "bob")
        use(client, alice)
        trip = new_trip(client, startDate="2027-05-03", timezone="Europe/Copenhagen", title="Copenhagen")
        t, (d1, d2) = trip["id"], [d["id"] for d in trip["days"]]
        for name, (lat, lng), kind in (("Torvehallerne", TORVEHALLERNE, "food"), ("Rosenborg", ROSENBORG, "sight"),
                                       ("Aarhus", FAR_AWAY, "stay")):
            assert op(client, t, "insert_stop", dayId=d1, name=name, lat=lat, lng=lng, kind=kind).status_code == 200
        assert op(client, t, "insert_stop", dayId=d1, name="Somewhere unplaced").status_code == 200
        assert op(client, t, "insert_stop", dayId=d2, name="Nyhavn", lat=55.6797, lng=12.5907).status_code == 200
        day = client.get(f"/api/trips/{t}").json()["data"]["days"][0]
        legs = {(leg["fromStopId"], leg["toStopId"]): leg for leg in day["legs"]}
        food, castle, far, unplaced = day["stops"]
        assert legs[(food["id"], castle["id"])]["source"] == "osm"
        assert legs[(castle["id"], far["id"])]["source"] == "estimate"

        join(client, alice, t, bob, role="viewer")   # members only, viewers included
        r = client.get(f"/api/trips/{t}/days/{d1}/route.gpx")
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/gpx+xml")
        assert r.headers["content-disposition"].startswith('attachment; filename="copenhagen-day-1.gpx"')
        doc = gpxpy.parse(r.text)

        # Waypoints: the located stops in order, with time (UTC) and kind; the unplaced stop is left out.
        assert [w.name for w in doc.waypoints] == ["Torvehallerne", "Rosenborg", "Aarhus"]
        assert [w.type for w in doc.waypoints] == ["Food", "Sight", "Stay"]
        assert (doc.waypoints[0].latitude, doc.waypoints[0].longitude) == TORVEHALLERNE
        assert doc.waypoints[0].time == datetime(2027, 5, 3, 7, 0, tzinfo=UTC)   # 09:00 in Copenhagen (CEST)
        start_min = castle["startMinutes"]
        assert doc.waypoints[1].time == datetime(2027, 5, 3, start_min // 60 - 2, start_min % 60, tzinfo=UTC)

        # One route for the day: through the stand-in's corner between the first two stops,
        # straight (and marked) to the stop OSRM could not reach.
        (route,) = doc.routes
        assert route.name.startswith("Day 1")
        points = [(p.latitude, p.longitude, p.name) for p in route.points]
        assert points == [(*TORVEHALLERNE, "Torvehallerne"), (TORVEHALLERNE[0], ROSENBORG[1], None),
                          (*ROSENBORG, "Rosenborg"), (*FAR_AWAY, "Aarhus")]
        assert route.points[1].comment is None
        assert route.points[3].comment == "straight line from Rosenborg: no route from the map provider"

        # The whole trip: every day's stops and a route per day.
        whole = gpxpy.parse(client.get(f"/api/trips/{t}/trip.gpx").text)
        assert [w.name for w in whole.waypoints] == ["Torvehallerne", "Rosenborg", "Aarhus", "Nyhavn"]
        assert [len(r.points) for r in whole.routes] == [4, 1]
        assert whole.routes[1].name.startswith("Day 2")

        assert client.get(f"/api/trips/{t}/days/not-a-day/route.gpx").status_code == 404


def test_control_characters_in_members_text_leave_both_files_readable(client):
    """XML 1.0 cannot carry a NUL or an escape character at all: one stop whose
    name was pasted with one made the trip's GPX unreadable for every member
    (and the calendar feed carried them raw, which RFC 5545 forbids). They are
    left out of both files; every other character stays."""
    from icalendar import Calendar

    signup(client, "alice")
    trip = new_trip(client, days=1, startDate="2027-05-03", timezone="Europe/Copenhagen", title="Copenhagen\x00\x1b")
    t, day = trip["id"], trip["days"][0]["id"]
    name = "Torvehallerne\x00\x01\x1b[31m <b>&amp;</b>\x7f\u2028"
    assert op(client, t, "insert_stop", dayId=day, name=name, lat=TORVEHALLERNE[0], lng=TORVEHALLERNE[1],
              note="bring \x0ba bag\x0c", address="Frederiksborggade 21\x08").status_code == 200
    for path in (f"/api/trips/{t}/trip.gpx", f"/api/trips/{t}/days/{day}/route.gpx"):
        r = client.get(path)
        assert r.status_code == 200
        doc = gpxpy.parse(r.text)   # a NUL made this "not well-formed (invalid token)"
        [point] = doc.waypoints
        assert point.name == "Torvehallerne[31m <b>&amp;</b>\x7f\u2028"
        assert (point.comment, point.description) == ("bring a bag", "Frederiksborggade 21")
    link = client.post(f"/api/trips/{t}/calendar", json={}).json()["data"]["url"]
    feed = client.get(link.removeprefix("http://testserver")).content
    assert not any(b < 0x20 and b not in b"\t\r\n" or b == 0x7f for b in feed)
    [event] = [e for e in Calendar.from_ical(feed).walk("VEVENT") if e.get("GEO")]
    assert str(event["SUMMARY"]) == "Torvehallerne[31m <b>&amp;</b>\u2028"
