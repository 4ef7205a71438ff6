"""The review's clock and weather rules on real place shapes (Google JSON with
midday breaks, closed weekdays, past-midnight periods, no hours; OSM
`opening_hours` strings), run on the pure `review_day` / `material_risks`;
every fix is applied with the registry's own op and must clear its finding.
The HTTP path (places and weather loaded by the route) is in test_review_http."""

from __future__ import annotations

import copy

import pytest

from app.preferences import TripPreferences
from app.review.findings import material_risks, review_day
from app.review.outdoor import OUTDOOR_TYPES, is_outdoor
from app.review.weather_rule import wet_reason
from app.trips.model import Day, Stop, Trip
from app.trips.ops import TRIP_OPS, OpContext
from app.trips.ops import validate_args
from standins.google_standin import EVERY_DAY, MON_SAT, TUE_SUN, place_json, weekly

TRIP_DATE = "2026-12-14"   # a Monday; the trip runs Monday to Wednesday
MUSEUM = place_json("p_museum", "Museu do Azulejo", 38.7247, -9.1135, ["museum"],
                    hours=weekly(TUE_SUN, ("10:00", "18:00")))
TASCA = place_json("p_tasca", "Tasca da Esquina", 38.7131, -9.1601, ["restaurant", "food"],
                   hours=weekly(MON_SAT, ("12:00", "15:00"), ("19:00", "23:00")))
BAR = place_json("p_bar", "Pensão Amor", 38.7070, -9.1445, ["bar"], hours=weekly(EVERY_DAY, ("18:00", "03:00")))
VIEWPOINT = place_json("p_view", "Miradouro", 38.7117, -9.1301, ["tourist_attraction", "scenic_spot"])   # no hours
PARK = place_json("p_park", "Jardim da Estrela", 38.7135, -9.1596, ["park"])
CAFE = place_json("p_cafe", "A Brasileira", 38.7107, -9.1424, ["cafe"], hours=weekly(EVERY_DAY, ("08:00", "02:00")))
MALL = place_json("p_mall", "LX Factory", 38.7036, -9.1784, ["shopping_mall"],
                  hours=weekly(EVERY_DAY, ("09:00", "00:00")))
OSM_MUSEUM = {"source": "osm", "opening_hours": "Tu-Su 10:00-18:00; Mo off", "country_code": "PT",
              "tags": {"tourism": "museum"}}
PLACES = {p["id"]: p for p in (MUSEUM, TASCA, BAR, VIEWPOINT, PARK, MALL, CAFE)} | {"osm_museum": OSM_MUSEUM}
POINTS = {"p_museum": (38.7247, -9.1135), "p_tasca": (38.7131, -9.1601), "p_bar": (38.7070, -9.1445),
          "p_view": (38.7117, -9.1301), "p_park": (38.7135, -9.1596), "osm_museum": (38.7240, -9.1130),
          "p_mall": (38.7036, -9.1784), "p_cafe": (38.7107, -9.1424)}


def stop(sid: str, name: str, place: str | None = None, **kw) -> Stop:
    lat, lng = POINTS.get(place, (38.7100 + len(sid) * 0.001, -9.1400))
    return Stop(id=sid, day_id="", position=0, kind=kw.pop("kind", "sight"), name=name, place_id=place,
                lat=lat, lng=lng, **kw)


def trip(*days: list[Stop], start: str | None = None) -> Trip:
    built = [Day(id=f"d{i + 1}", position=i, stops=list(stops), start_time=start if i == 0 else None)
             for i, stops in enumerate(days)]
    t = Trip(id="t1", title="Lisbon", dest_name="Lisbon", dest_lat=38.72, dest_lng=-9.14, start_date=TRIP_DATE,
             timezone="Europe/Lisbon", currency="EUR", version=1, created_by="u1", days=built, member_ids=["u1"],
             prefs=TripPreferences())
    t.renumber()
    return t


def review(t: Trip, day: int = 0, weather=None, places=PLACES):
    return review_day(t, t.days[day], [], t.prefs, places, weather=weather)


def only(result, kind: str):
    found = [f for f in result.findings if f.kind == kind]
    assert len(found) == 1, result
    return found[0]


def apply(t: Trip, op: str, args: dict) -> Trip:
    return apply_all(t, ((op, args),))


def apply_all(t: Trip, edits) -> Trip:
    out = copy.deepcopy(t)
    for op, args in edits:
        TRIP_OPS[op].apply(out, validate_args(op, args), OpContext(actor_id="u1", now=""))
    return out


def every_fix_clears(t: Trip, finding, day: int = 0, weather=None) -> None:
    """Every fix, its edits applied in order, clears its finding and adds none on any day."""
    assert finding.fixes, finding
    before = {f.key for d in range(len(t.days)) for f in review(t, d, weather).findings}
    for fix in finding.fixes:
        after = apply_all(t, fix.edits)
        keys = {f.key for d in range(len(after.days)) for f in review(after, d, weather).findings}
        assert finding.key not in keys and keys <= before, (fix, keys - before)


def edits(finding) -> list:
    return [[(op, args) for op, args in fix.edits] for fix in finding.fixes]


# -- closed: every stop with a place ---------------------------------------------------------------


def test_a_museum_on_the_weekday_it_is_closed_moves_to_a_day_it_is_open():
    t = trip([stop("a", "Museu do Azulejo", "p_museum")], [stop("b", "Miradouro", "p_view")], [])
    finding = only(review(t), "closed")
    assert finding.severity == "warning"    # usual weekly hours, not confirmed for the date
    assert finding.message == "“Museu do Azulejo” is closed all day on Mon 14 Dec (its usual opening hours)."
    assert [(f.op, f.args.get("toDayId")) for f in finding.fixes] == [("move_stop", "d2")]
    assert finding.fixes[0].label == "Move “Museu do Azulejo” to Day 2 (Tue 15 Dec)"   # after the viewpoint: 10:00
    every_fix_clears(t, finding)
    assert review(t).status == "warning"


def test_a_visit_after_closing_gets_a_set_time_or_another_day_that_fits():
    # 09:00 start, 12 h elsewhere first: the museum at about 21:00 is after its 18:00 closing.
    t = trip([], [stop("x", "Long walk", duration_min=720), stop("m", "Museu do Azulejo", "p_museum")],
             [stop("c", "Coffee", duration_min=90)])
    finding = only(review(t, 1), "closed")
    assert "does not fit its usual opening hours" in finding.message and "30 minutes" not in finding.message
    # No set time that day can follow a 12-hour walk; Monday is closed; Wednesday after the coffee fits,
    # and so does the museum before the walk, at opening time (two edits, one fix).
    assert edits(finding) == [
        [("move_stop", {"stopId": "m", "toDayId": "d3", "position": 1})],
        [("swap_stops", {"stopId": "m", "otherStopId": "x"}), ("update_stop", {"stopId": "m", "setTime": "10:00"})]]
    assert finding.fixes[1].label == "Move “Museu do Azulejo” before “Long walk” at 10:00"
    assert finding.fixes[1].op is None and finding.fixes[1].to_json()["edits"][1]["op"] == "update_stop"
    every_fix_clears(t, finding, 1)
    # At 17:30 for an hour: the nearest start that fits (17:00), or a visit cut to what is left of the hours.
    t = trip([], [stop("x", "Coffee", duration_min=30), stop("m", "Museu do Azulejo", "p_museum", set_time="17:30")])
    finding = only(review(t, 1), "closed")
    assert finding.message.endswith("(it closes at 18:00).")
    assert [f.label for f in finding.fixes] == ["Set “Museu do Azulejo” to 17:00",
                                                "Shorten “Museu do Azulejo” to 30 min",
                                                "Move “Museu do Azulejo” before “Coffee” at 17:00"]
    every_fix_clears(t, finding, 1)


def test_a_visit_fits_to_the_minute_without_a_buffer_and_a_meal_keeps_its_buffer():
    visit = trip([], [stop("m", "Museu do Azulejo", "p_museum", set_time="16:00", duration_min=120)])
    assert review(visit, 1).findings == ()
    assert only(review(trip([], [stop("m", "Museu do Azulejo", "p_museum", set_time="16:01", duration_min=120)]), 1),
                "closed")
    fits = trip([stop("l", "Tasca da Esquina", "p_tasca", kind="food", meal="lunch", set_time="13:30",
                      duration_min=60)])
    assert review(fits).findings == ()                 # 13:30 + 60 + 30 = 15:00, the midday break
    lunch = trip([stop("l", "Tasca da Esquina", "p_tasca", kind="food", meal="lunch", set_time="13:45",
                       duration_min=60)])
    finding = only(review(lunch), "closed")
    assert "with 30 minutes before closing (it closes at 15:00)" in finding.message
    # The nearest start that leaves the meal and its 30 minutes (13:30), or a 45-minute lunch (not below half).
    assert [f.args for f in finding.fixes] == [{"stopId": "l", "setTime": "13:30"}, {"stopId": "l", "durationMin": 45}]
    every_fix_clears(lunch, finding)


def test_no_hours_are_never_flagged_nor_treated_as_open():
    t = trip([stop("v", "Miradouro", "p_view", set_time="03:00")])
    assert [f.kind for f in review(t).findings] == []
    assert [f.kind for f in review(t, places=None).findings] == []   # no places at all: silent


def test_an_osm_place_is_checked_and_never_confirmed():
    t = trip([stop("o", "Museu (OSM)", "osm_museum")], [stop("b", "Miradouro", "p_view")])
    finding = only(review(t), "closed")
    assert finding.severity == "warning" and "closed all day on Mon " in finding.message
    assert [(f.op, f.args["toDayId"]) for f in finding.fixes] == [("move_stop", "d2")]
    every_fix_clears(t, finding)
    tuesday = trip([], [stop("c", "Coffee", duration_min=60), stop("o", "Museu (OSM)", "osm_museum")])
    assert review(tuesday, 1).findings == ()
    early = trip([], [stop("o", "Museu (OSM)", "osm_museum")])        # 09:00: an hour before it opens
    assert [f.args for f in only(review(early, 1), "closed").fixes if f.op == "update_stop"] == [
        {"stopId": "o", "setTime": "10:00"}]


# -- past midnight -------------------------------------------------------------------------------


def test_after_midnight_stops_are_checked_on_the_next_date():
    # From 22:00: a bar until 00:30, a cafe open until 02:00 at about 00:35 (+1), then a
    # restaurant at about 01:40 (+1), long closed. Before the fix, nothing after 24:00 was checked.
    t = trip([stop("b1", "Pensão Amor", "p_bar", kind="activity", duration_min=150),
              stop("b2", "A Brasileira", "p_cafe", kind="activity", duration_min=60),
              stop("r", "Tasca da Esquina", "p_tasca", kind="food", meal="dinner", duration_min=60)],
             start="22:00")
    result = review(t)
    closed = [f for f in result.findings if f.kind == "closed"]
    assert [f.stop_ids for f in closed] == [("r",)], result
    assert "(+1)–01:" not in closed[0].message and "(+1)–02:" in closed[0].message, closed[0].message
    assert closed[0].message.startswith("“Tasca da Esquina” at 01:") and "on Mon 14 Dec" in closed[0].message
    # A dinner starting after midnight is also outside dinner's usual window.
    assert only(result, "meal_time").stop_ids == ("r",)


def test_a_late_period_carries_on_past_midnight():
    t = trip([stop("b1", "Pensão Amor", "p_bar", kind="activity", duration_min=240)], start="23:00")
    assert review(t).findings == ()                    # 23:00 - 03:00 inside 18:00 - 03:00
    t = trip([stop("b1", "Pensão Amor", "p_bar", kind="activity", duration_min=241)], start="23:00")
    assert only(review(t), "closed")


# -- meal times ----------------------------------------------------------------------------------


def test_lunch_at_nine_is_a_meal_time_warning_with_a_set_time_that_fits_the_hours():
    t = trip([stop("l", "Tasca da Esquina", "p_tasca", kind="food", meal="lunch", duration_min=60)])
    result = review(t)
    finding = only(result, "meal_time")
    assert finding.severity == "warning"
    assert finding.message == ("Lunch at “Tasca da Esquina” starts at 09:00; lunch usually starts between 11:00 "
                               "and 15:00.")
    # 11:00 is lunch time, but the Tasca opens at 12:00: the fix is the first time that fits both.
    assert [f.args for f in finding.fixes if f.op == "update_stop"] == [{"stopId": "l", "setTime": "12:00"}]
    every_fix_clears(t, finding)


def test_dinner_at_12_23_and_a_meal_without_a_place():
    t = trip([stop("x", "Castelo", duration_min=203), stop("d", "Dinner", kind="food", meal="dinner")])
    finding = only(review(t), "meal_time")
    assert "starts at 12:2" in finding.message and "between 17:30 and 23:00" in finding.message
    assert [f.args for f in finding.fixes if f.op == "update_stop"] == [{"stopId": "d", "setTime": "17:30"}]
    every_fix_clears(t, finding)
    assert review(trip([stop("d", "Dinner", kind="food", meal="dinner", set_time="19:30")])).findings == ()


# -- weather -------------------------------------------------------------------------------------


def forecast(prob, mm=0.0, code=3, source="forecast"):
    return {"source": source, "precipitationProbability": prob, "precipitationMm": mm, "weatherCode": code}


WEATHER = {"2026-12-14": forecast(80, 6.5, 63), "2026-12-15": forecast(20), "2026-12-16": forecast(10)}


def test_an_outdoor_stop_on_a_wet_forecast_day_moves_to_the_driest_day_or_swaps_with_an_indoor_visit():
    t = trip([stop("p", "Jardim da Estrela", "p_park"), stop("v", "Miradouro", "p_view")],
             [stop("m1", "Museu do Azulejo", "p_museum")],
             [stop("m2", "LX Factory", "p_mall")])
    result = review(t, weather=WEATHER)
    assert sorted(f.stop_ids for f in result.findings if f.kind == "weather") == [("p",), ("v",)]
    finding = next(f for f in result.findings if f.stop_ids == ("p",))
    assert finding.severity == "warning" and result.status == "warning"
    assert finding.message == ("“Jardim da Estrela” is outdoors, and the forecast for Mon 14 Dec says an 80% "
                               "chance of rain.")
    moves = [f for f in finding.fixes if f.op == "move_stop"]
    swaps = [f for f in finding.fixes if f.op == "swap_stops"]
    assert [m.args["toDayId"] for m in moves] == ["d3"], "the driest day: 10 %"
    assert [s.args for s in swaps] == [{"stopId": "p", "otherStopId": "m2"}]
    assert swaps[0].label == "Swap “Jardim da Estrela” with “LX Factory” from Day 3 (Wed 16 Dec)"
    every_fix_clears(t, finding, weather=WEATHER)
    # A swap that would close the indoor stop (the museum on a Monday) is never offered.
    closed_monday = trip([stop("p", "Jardim da Estrela", "p_park")], [], [stop("m", "Museu do Azulejo", "p_museum")])
    assert [f.op for f in only(review(closed_monday, weather=WEATHER), "weather").fixes] == ["move_stop"]


@pytest.mark.parametrize("day_weather, reason", [
    (forecast(70), "a 70% chance of rain"), (forecast(40, 5.0), "5 mm of rain"),
    (forecast(10, 0.5, 95), "thunderstorms"), (forecast(10, 0.5, 73), "snow"), (forecast(69, 4.9, 61), None),
])
def test_what_counts_as_wet(day_weather, reason):
    assert wet_reason(day_weather) == reason


def test_a_typical_wet_day_is_only_a_quiet_observation():
    typical = {"2026-12-14": forecast(75, 3.0, 61, source="typical")}
    t = trip([stop("p", "Jardim da Estrela", "p_park")], [])
    result = review(t, weather=typical)
    finding = only(result, "weather")
    assert finding.severity == "info" and finding.fixes == () and result.status == "ok"
    assert "typical, not forecast" in finding.message and not finding.material
    # Nothing was searched for it, so no reason why nothing was found: the page shows that reason under it,
    # and "No dry day has room for it" was untrue with an empty dry day right after.
    assert finding.no_fix_reason is None and "noFixReason" not in finding.to_json()
    typical["2026-12-15"] = forecast(10, 0.0, 1, source="typical")
    finding = only(review(t, weather=typical), "weather")
    assert finding.no_fix_reason is None and "noFixReason" not in finding.to_json()
    before = trip([], [stop("p", "Jardim da Estrela", "p_park")])
    assert material_risks(before, apply(before, "move_stop", {"stopId": "p", "toDayId": "d1", "position": 0}),
                          places=PLACES, weather=typical) == []


def test_outdoor_comes_from_the_place_types():
    assert is_outdoor(PARK) and is_outdoor(VIEWPOINT) and not is_outdoor(MUSEUM) and not is_outdoor(None)
    assert is_outdoor({"source": "osm", "tags": {"leisure": "park"}})
    assert not is_outdoor({"source": "osm", "tags": {"tourism": "museum"}})
    assert {"park", "garden", "beach", "zoo", "scenic_spot", "hiking_area", "amusement_park", "market"} <= OUTDOOR_TYPES


# -- what the agent treats as material --------------------------------------------------------------


def test_material_risks_include_closed_stops_and_wet_forecasts_but_not_meal_times():
    before = trip([stop("c", "Coffee")], [stop("c2", "Coffee", duration_min=90), stop("v", "Miradouro", "p_view"),
                                          stop("m", "Museu do Azulejo", "p_museum")])
    assert [f.kind for d in (0, 1) for f in review(before, d, WEATHER).findings] == []
    museum_to_monday = apply(before, "move_stop", {"stopId": "m", "toDayId": "d1", "position": 1})
    viewpoint_to_monday = apply(museum_to_monday, "move_stop", {"stopId": "v", "toDayId": "d1", "position": 0})
    risks = material_risks(before, viewpoint_to_monday, places=PLACES, weather=WEATHER)
    assert sorted(f.kind for f in risks) == ["closed", "weather"]   # Monday, and the viewpoint in the rain
    assert all(f.fixes for f in risks)
    late_lunch = apply(before, "insert_stop", {"dayId": "d2", "kind": "food", "name": "Lunch", "meal": "lunch"})
    assert material_risks(before, late_lunch, places=PLACES) == []   # a 10:00 lunch is a meal_time warning only
