"""OpenStreetMap places in the review, keyless (issue 16): their
`opening_hours` strings drive the same hours rule as Google's periods, as
"usual" hours, and public holidays (`PH off`) follow the trip's country
(from its time zone)."""

from __future__ import annotations

from app.hours.countries import country_of_timezone
from app.hours.rules import osm_country
from helpers import make_client, new_trip, op, signup
from standins.osm_standin import osm_settings

LA_GLACE = "osm:node/1386219865"      # Mo-Fr 08:30-18:00; Sa 09:00-18:00; Su 10:00-18:00; PH off


def copenhagen_trip(client, start: str) -> dict:
    return new_trip(client, days=1, startDate=start, timezone="Europe/Copenhagen",
                    destination={"name": "Copenhagen", "lat": 55.6761, "lng": 12.5683})


def review(client, trip: dict) -> dict:
    day = trip["days"][0]["id"]
    return client.get(f"/api/trips/{trip['id']}/days/{day}/review").json()["data"]


def cafe_stop(client, trip: dict, set_time: str) -> None:
    r = op(client, trip["id"], "insert_stop", dayId=trip["days"][0]["id"], name="La Glace", kind="food",
           meal="afternoon_tea", placeId=LA_GLACE, lat=55.6786, lng=12.5739, setTime=set_time)
    assert r.status_code == 200, r.text


def closed_findings(data: dict) -> list[dict]:
    return [f for f in data["findings"] if f["kind"] == "closed"]


def test_osm_hours_are_checked_as_usual_hours(settings, osm_standin):
    with make_client(osm_settings(settings, osm_standin)) as client:
        signup(client, "ana")
        trip = copenhagen_trip(client, "2026-12-10")          # a Thursday, no holiday
        cafe_stop(client, trip, "18:00")                         # closes at 18:00: no time to eat
        [finding] = closed_findings(review(client, trip))
        assert finding["severity"] == "warning", "OSM hours are usual hours, never confirmed"
        assert any(fix["op"] == "update_stop" for fix in finding["fixes"])


def test_a_danish_public_holiday_closes_a_ph_off_place(settings, osm_standin):
    with make_client(osm_settings(settings, osm_standin)) as client:
        signup(client, "ana")
        ordinary = copenhagen_trip(client, "2026-12-11")         # a Friday
        cafe_stop(client, ordinary, "15:30")
        assert closed_findings(review(client, ordinary)) == []
        christmas = copenhagen_trip(client, "2026-12-25")         # a Friday and Juledag
        cafe_stop(client, christmas, "15:30")
        [finding] = closed_findings(review(client, christmas))
        assert "La Glace" in finding["message"]


def test_the_trips_country_comes_from_its_time_zone():
    assert country_of_timezone("Europe/Copenhagen") == "DK"
    assert country_of_timezone("America/New_York") == "US"
    assert country_of_timezone("UTC") is None and country_of_timezone(None) is None
    # Old names, which browsers still report (Chrome: Asia/Calcutta).
    assert country_of_timezone("Asia/Calcutta") == "IN" and country_of_timezone("US/Eastern") == "US"


def test_a_place_that_names_its_country_keeps_its_own_holidays():
    from app.providers.osm_tags import from_nominatim
    from app.providers.maps import in_country

    malmo = from_nominatim({"osm_type": "node", "osm_id": 1, "lat": "55.6", "lon": "13.0", "category": "amenity",
                            "type": "cafe", "name": "Café", "address": {"country_code": "se"},
                            "extratags": {"opening_hours": "Mo-Su 08:00-18:00; PH off"}}, None)
    copenhagen = from_nominatim({"osm_type": "node", "osm_id": 2, "lat": "55.68", "lon": "12.57",
                                 "category": "amenity", "type": "cafe", "name": "Kaffe"}, None)
    assert osm_country(in_country(malmo, "DK")) == "SE"
    assert osm_country(in_country(copenhagen, "DK")) == "DK"


def test_hours_not_checked_are_judged_on_the_date_a_stop_falls_on(settings, osm_standin):
    """A stop past midnight is checked on the next date's hours (the `closed`
    rule), so what could not be checked is judged there too: Sunday's hours
    here are only a comment (unknown), Saturday's and Monday's are known."""
    value = 'Tu-Fr 11:00-22:00; Sa 10:00-22:00; Su 10:00-16:00 "Kitchen closed 16:00-17:00"'   # a real one
    osm_standin.add_place("node", 770001, 55.6786, 12.5739, name="Kaffebar", amenity="cafe", opening_hours=value)
    with make_client(osm_settings(settings, osm_standin)) as client:
        signup(client, "ana")

        def night(start: str) -> dict:
            trip = copenhagen_trip(client, start)
            r = op(client, trip["id"], "insert_stop", dayId=trip["days"][0]["id"], name="Kaffebar", kind="sight",
                   placeId="osm:node/770001", lat=55.6786, lng=12.5739, setTime="24:30", durationMin=60)
            assert r.status_code == 200, r.text
            return review(client, trip)

        def hours_not_checked(data: dict) -> list[str]:
            return [c["message"] for c in data["notChecked"] if c["check"] == "hours"]

        saturday = night("2026-03-07")           # 00:30 on Sunday: unknown, never "workable" by default
        assert closed_findings(saturday) == []
        assert hours_not_checked(saturday) == ["Opening hours not checked for “Kaffebar”: no opening hours are known."]
        sunday = night("2026-03-08")             # 00:30 on Monday: known (closed), so checked
        assert len(closed_findings(sunday)) == 1
        assert hours_not_checked(sunday) == [], "a stop that was checked is not listed as not checked"
