"""The calendar feed (issue 24, item 1), read the way a calendar app reads it:
a plain GET of the link without a session, parsed with `icalendar`."""

from __future__ import annotations

from datetime import UTC, date, datetime
from urllib.parse import urlsplit

from icalendar import Calendar
from starlette.testclient import TestClient

from app.web.application import create_app
from helpers import join, new_trip, op, signup, use

ZONE = "Europe/Copenhagen"


def plan(client) -> dict:
    """A two-day trip: day 1 starts late, so its last stops run past midnight."""
    trip = new_trip(client, startDate="2027-05-03", timezone=ZONE, title="Copenhagen nights",
                    destination={"name": "Copenhagen", "lat": 55.676, "lng": 12.568})
    t, (d1, d2) = trip["id"], [d["id"] for d in trip["days"]]
    assert op(client, t, "update_day", dayId=d1, title="Old town", startTime="22:30").status_code == 200
    for name, extra in (("Dinner at Kødbyen", {"lat": 55.6678, "lng": 12.5597, "address": "Flæsketorvet 1",
                                                "kind": "food", "durationMin": 60}),
                        ("Jazz bar", {"durationMin": 90}),
                        ("Night walk", {"durationMin": 30})):
        assert op(client, t, "insert_stop", dayId=d1, name=name, **extra).status_code == 200
    assert op(client, t, "insert_stop", dayId=d2, name="Rosenborg", setTime="10:00", lat=55.6858,
              lng=12.5772).status_code == 200
    return client.get(f"/api/trips/{t}").json()["data"]


def anonymous_get(client, url: str, **headers):
    """GET the feed as a calendar app does: no session cookie."""
    saved = dict(client.cookies)
    client.cookies.clear()
    try:
        return client.get(urlsplit(url).path, headers=headers)
    finally:
        for name, value in saved.items():
            client.cookies.set(name, value)


def events(body: bytes) -> dict[str, object]:
    cal = Calendar.from_ical(body)
    return {str(e["UID"]): e for e in cal.walk("VEVENT")}


def test_the_feed_has_each_stop_at_its_time_in_the_trip_zone_past_midnight_on_the_next_date(client):
    alice = signup(client, "alice")
    trip = plan(client)
    t = trip["id"]
    made = client.post(f"/api/trips/{t}/calendar", json={})
    assert made.status_code == 201, made.text
    link = made.json()["data"]
    assert link["enabled"] and link["url"].startswith("http://testserver/api/calendar/")
    assert link["webcalUrl"] is None   # plain http: no webcal:// offered
    # Shown once: the status never carries the link again.
    status = client.get(f"/api/trips/{t}/calendar").json()["data"]
    assert status["enabled"] and "url" not in status and status["lastUsedAt"] is None

    r = anonymous_get(client, link["url"])
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/calendar")
    cal = Calendar.from_ical(r.content)
    assert str(cal["X-WR-CALNAME"]) == "Copenhagen nights"
    assert [str(z["TZID"]) for z in cal.walk("VTIMEZONE")] == [ZONE]
    found = events(r.content)
    day1, day2 = trip["days"]
    dinner, bar, walk = day1["stops"]
    (castle,) = day2["stops"]
    # One event per stop, its UID the stop's id; one all-day event per day.
    assert set(found) == {dinner["id"], bar["id"], walk["id"], castle["id"], day1["id"], day2["id"]}

    def start(uid):
        return found[uid].decoded("DTSTART")

    assert start(dinner["id"]) == datetime(2027, 5, 3, 22, 30, tzinfo=start(dinner["id"]).tzinfo)
    assert str(start(dinner["id"]).tzinfo) == ZONE
    assert found[dinner["id"]]["DTSTART"].params["TZID"] == ZONE
    # 23:30 + 90 min ends at 01:00 on the next date; the walk starts then.
    assert found[bar["id"]].decoded("DTEND").replace(tzinfo=None) == datetime(2027, 5, 4, 1, 0)
    assert walk["startMinutes"] == 25 * 60   # what the page shows: 01:00 (+1)
    assert start(walk["id"]).replace(tzinfo=None) == datetime(2027, 5, 4, 1, 0)
    assert start(castle["id"]).replace(tzinfo=None) == datetime(2027, 5, 4, 10, 0)
    # The stop's facts.
    ev = found[dinner["id"]]
    assert str(ev["SUMMARY"]) == "Dinner at Kødbyen" and str(ev["LOCATION"]) == "Flæsketorvet 1"
    assert (ev["GEO"].latitude, ev["GEO"].longitude) == (55.6678, 12.5597)
    assert str(ev["URL"]) == f"http://testserver/#/trips/{t}?day={day1['id']}&stop={dinner['id']}"
    assert int(ev["SEQUENCE"]) == trip["version"] and "LAST-MODIFIED" in ev
    assert "GEO" not in found[bar["id"]] and "LOCATION" not in found[bar["id"]]
    # Coordinates without an address: calendar apps map LOCATION, most ignore GEO.
    assert str(found[castle["id"]]["LOCATION"]) == f"{castle['lat']:.6f}, {castle['lng']:.6f}"
    # The day's title as an all-day event on its date.
    assert found[day1["id"]].decoded("DTSTART") == date(2027, 5, 3)
    assert str(found[day1["id"]]["SUMMARY"]).startswith("Old town")
    assert client.get(f"/api/trips/{t}/calendar").json()["data"]["lastUsedAt"] is not None

    # Edits keep every UID; the moved stop's time follows, SEQUENCE grows.
    use(client, alice)
    assert op(client, t, "move_stop", stopId=walk["id"], toDayId=day2["id"], position=1).status_code == 200
    assert op(client, t, "update_stop", stopId=dinner["id"], name="Late dinner").status_code == 200
    again = events(anonymous_get(client, link["url"]).content)
    assert set(again) == set(found)
    assert str(again[dinner["id"]]["SUMMARY"]) == "Late dinner"
    assert int(again[dinner["id"]]["SEQUENCE"]) > int(ev["SEQUENCE"])
    assert again[walk["id"]].decoded("DTSTART").replace(tzinfo=None) == datetime(2027, 5, 4, 11, 0)

    # The page's download is the same calendar.
    download = client.get(f"/api/trips/{t}/calendar.ics")
    assert download.status_code == 200 and "attachment" in download.headers["content-disposition"]
    assert download.content == anonymous_get(client, link["url"]).content


def test_a_stop_set_at_24_45_is_at_00_45_on_the_next_date_in_the_trip_zone(client):
    """A set time past midnight on the day plan's clock ("24:45", as GTFS writes it:
    the day's evening runs on) is a quarter to one the next morning where the trip is."""
    signup(client, "alice")
    trip = new_trip(client, days=1, startDate="2027-05-03", timezone=ZONE, title="Last ferry home")
    t, day = trip["id"], trip["days"][0]["id"]
    assert op(client, t, "insert_stop", dayId=day, name="Night ferry", setTime="24:45",
              durationMin=45).status_code == 200
    (ferry,) = client.get(f"/api/trips/{t}").json()["data"]["days"][0]["stops"]
    assert (ferry["setTime"], ferry["startMinutes"]) == ("24:45", 24 * 60 + 45)   # the page: 00:45 (+1)
    link = client.post(f"/api/trips/{t}/calendar", json={}).json()["data"]
    event = events(anonymous_get(client, link["url"]).content)[ferry["id"]]
    start, end = event.decoded("DTSTART"), event.decoded("DTEND")
    assert event["DTSTART"].params["TZID"] == ZONE and str(start.tzinfo) == ZONE
    assert start.replace(tzinfo=None) == datetime(2027, 5, 4, 0, 45)   # the next date, not 3 May
    assert end.replace(tzinfo=None) == datetime(2027, 5, 4, 1, 30)
    # In Copenhagen's summer time (UTC+2): the instant a phone elsewhere shows.
    assert start.astimezone(UTC) == datetime(2027, 5, 3, 22, 45, tzinfo=UTC)


def test_an_unchanged_feed_answers_304_and_a_revoked_or_replaced_link_404(client):
    signup(client, "alice")
    trip = new_trip(client)
    t = trip["id"]
    first = client.post(f"/api/trips/{t}/calendar", json={}).json()["data"]["url"]
    r = anonymous_get(client, first)
    etag = r.headers["etag"]
    assert anonymous_get(client, first, **{"If-None-Match": etag}).status_code == 304
    op(client, t, "insert_stop", dayId=trip["days"][0]["id"], name="Castle")
    changed = anonymous_get(client, first, **{"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["etag"] != etag

    second = client.post(f"/api/trips/{t}/calendar", json={}).json()["data"]["url"]
    assert anonymous_get(client, first).status_code == 404   # a new link replaces the old one
    assert anonymous_get(client, second).status_code == 200
    assert client.delete(f"/api/trips/{t}/calendar").json()["data"] == {"enabled": False}
    gone = anonymous_get(client, second)
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "feed_not_found"
    assert client.get(f"/api/trips/{t}/calendar").json()["data"]["enabled"] is False
    assert anonymous_get(client, "/api/calendar/not-a-token.ics").status_code == 404


def test_the_link_ends_with_the_membership_and_the_account(client):
    alice, bob, carol = signup(client, "alice"), signup(client, "bob"), signup(client, "carol")
    use(client, alice)
    t = new_trip(client)["id"]
    join(client, alice, t, bob, role="viewer")
    bobs = client.post(f"/api/trips/{t}/calendar", json={}).json()["data"]["url"]   # viewers may subscribe
    join(client, alice, t, carol)
    carols = client.post(f"/api/trips/{t}/calendar", json={}).json()["data"]["url"]
    assert anonymous_get(client, bobs).status_code == 200
    use(client, bob)
    assert client.delete(f"/api/trips/{t}/members/{bob['id']}").status_code == 200
    assert anonymous_get(client, bobs).status_code == 404
    use(client, carol)
    assert client.request("DELETE", "/api/users/me", json={"password": "correct horse"}).status_code == 200
    assert anonymous_get(client, carols).status_code == 404


def test_webcal_is_offered_where_the_public_url_is_https(settings):
    app = create_app(settings.with_(public_url="https://plan.example"))
    with TestClient(app, base_url="https://testserver") as client:   # secure cookies need https
        signup(client, "alice")
        t = new_trip(client)["id"]
        link = client.post(f"/api/trips/{t}/calendar", json={})
        data = link.json()["data"]
        assert data["url"].startswith("https://plan.example/api/calendar/")
        assert data["webcalUrl"] == "webcal://" + data["url"].removeprefix("https://")


def test_names_with_commas_semicolons_and_line_breaks_are_escaped_and_folded(client):
    """A title typed with a line break (pasted from a message, say) once made
    the whole feed a 500: icalendar writes the calendar's NAME / X-WR-CALNAME
    unescaped and refuses a line break there. Events escape theirs."""
    signup(client, "alice")
    title = "Lisbon, Porto; and\nthe coast " + "é" * 40
    trip = new_trip(client, days=1, startDate="2027-05-03", timezone="Europe/Lisbon", title=title)
    t, day = trip["id"], trip["days"][0]["id"]
    name = "Café A Brasileira, Chiado; then\nthe tram " + "ü" * 50
    assert op(client, t, "update_day", dayId=day, title="Old town;\nnew town").status_code == 200
    assert op(client, t, "insert_stop", dayId=day, name=name, note="Order a bica, a pastel;\nsit outside",
              address="Rua Garrett 120, Lisboa; Portugal").status_code == 200
    assert op(client, t, "insert_stop", dayId=day, name="Somewhere we have not picked").status_code == 200
    link = client.post(f"/api/trips/{t}/calendar", json={}).json()["data"]
    r = anonymous_get(client, link["url"])
    assert r.status_code == 200, r.text
    assert client.get(f"/api/trips/{t}/calendar.ics").status_code == 200   # the download too
    lines = r.content.split(b"\r\n")
    assert all(len(line) <= 75 for line in lines)   # folded at 75 octets (RFC 5545 3.1)
    assert b"\n" not in r.content.replace(b"\r\n", b"")
    cal = Calendar.from_ical(r.content)
    assert str(cal["X-WR-CALNAME"]) == " ".join(title.split())   # one line: a calendar's name
    by_name = {str(e["SUMMARY"]): e for e in cal.walk("VEVENT")}
    cafe = by_name[name]   # the event keeps every character, line break included
    assert str(cafe["DESCRIPTION"]) == "Order a bica, a pastel;\nsit outside"
    assert str(cafe["LOCATION"]) == "Rua Garrett 120, Lisboa; Portugal"
    assert f"Old town;\nnew town · {title}" in by_name
    unplaced = by_name["Somewhere we have not picked"]   # no place: no LOCATION, no GEO, still its time
    assert "LOCATION" not in unplaced and "GEO" not in unplaced and unplaced.decoded("DTSTART")
