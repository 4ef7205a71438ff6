"""Issue 20: every problem the review finds comes with a fix that clears it.
The issue's cases, through HTTP on the real app with the Google and weather
stand-ins: each fix is applied as the page applies it (`POST .../ops`, its
edits as one change) and must clear its finding and add none."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest

from helpers import join, make_client, new_trip, op, signup, use
from standins.google_standin import EVERY_DAY, TUE_SUN, google_settings, weekly

MONDAY = "2026-12-14"
COPENHAGEN = {"name": "Copenhagen", "lat": 55.6761, "lng": 12.5683}


@pytest.fixture
def app(settings, google_standin):
    with make_client(google_settings(settings, google_standin)) as client:
        signup(client, "ana")
        yield client


def copenhagen(client, days: int = 3, start: str = MONDAY) -> dict:
    return new_trip(client, days=days, startDate=start, timezone="Europe/Copenhagen", destination=COPENHAGEN,
                    currency="DKK")


def add(client, trip: dict, day: int, name: str, point, **fields) -> str:
    r = op(client, trip["id"], "insert_stop", dayId=trip["days"][day]["id"], name=name, lat=point[0], lng=point[1],
           kind=fields.pop("kind", "sight"), **fields)
    assert r.status_code == 200, r.text
    return next(d for d in r.json()["data"]["trip"]["days"] if d["id"] == trip["days"][day]["id"])["stops"][-1]["id"]


def review(client, trip: dict, day: int = 0) -> dict:
    r = client.get(f"/api/trips/{trip['id']}/days/{trip['days'][day]['id']}/review")
    assert r.status_code == 200, r.text
    return r.json()["data"]


def only(result: dict, kind: str) -> dict:
    found = [f for f in result["findings"] if f["kind"] == kind]
    assert len(found) == 1, result
    return found[0]


def trip_dto(client, trip: dict) -> dict:
    return client.get(f"/api/trips/{trip['id']}").json()["data"]


def problems(client, trip: dict) -> set[tuple]:
    """Every finding of the trip, by what it is about (kind and stop names), not its ids."""
    names = {s["id"]: s["name"] for d in trip_dto(client, trip)["days"] for s in d["stops"]}
    return {(f["kind"], tuple(sorted(names.get(i, i) for i in f["stopIds"])))
            for k in range(len(trip["days"])) for f in review(client, trip, k)["findings"]
            if f["severity"] != "info"}


def apply_fix(client, trip: dict, fix: dict):
    r = client.post(f"/api/trips/{trip['id']}/ops", json={"edits": fix["edits"]})
    assert r.status_code == 200, r.text
    return r.json()["data"]


def clears(client, trip: dict, finding: dict, fix: dict) -> None:
    """The fix, applied as one change, clears its finding and adds none on any day."""
    before = problems(client, trip)
    apply_fix(client, trip, fix)
    after = problems(client, trip)
    assert after < before, (fix["label"], after - before)


# -- the cases of the issue ------------------------------------------------------------------------


def test_a_museum_on_its_closed_weekday_moves_to_the_next_day_at_opening(app, google_standin):
    google_standin.add_place("ChIJ_davids", "Davids Samling", 55.6862, 12.5803, ["museum"],
                             hours=weekly(TUE_SUN, ("10:00", "17:00")))
    trip = copenhagen(app)
    add(app, trip, 0, "Davids Samling", (55.6862, 12.5803), placeId="ChIJ_davids")
    finding = only(review(app, trip), "closed")
    assert finding["message"] == "“Davids Samling” is closed all day on Mon 14 Dec (its usual opening hours)."
    [fix] = finding["fixes"]
    # Tuesday alone would start it at 09:00, before it opens: the fix is the move and the time, together.
    assert fix["label"] == "Move “Davids Samling” to Day 2 (Tue 15 Dec) at 10:00"
    assert [e["op"] for e in fix["edits"]] == ["move_stop", "update_stop"] and "op" not in fix
    assert fix["edits"][1]["args"]["setTime"] == "10:00"
    version = trip_dto(app, trip)["version"]
    clears(app, trip, finding, fix)
    moved = trip_dto(app, trip)
    assert moved["version"] == version + 1, "one change"
    assert [(s["name"], s["startTime"]) for s in moved["days"][1]["stops"]] == [("Davids Samling", "10:00")]


def test_no_open_day_is_said_in_plain_words(app, google_standin):
    google_standin.add_place("ChIJ_davids", "Davids Samling", 55.6862, 12.5803, ["museum"],
                             hours=weekly(TUE_SUN, ("10:00", "17:00")))
    trip = copenhagen(app, days=1)
    add(app, trip, 0, "Davids Samling", (55.6862, 12.5803), placeId="ChIJ_davids")
    finding = only(review(app, trip), "closed")
    assert finding["fixes"] == [] and finding["noFixReason"] == "No day of this trip has it open."


def test_a_dinner_set_just_before_closing_gets_a_time_in_the_dinner_hours(app, google_standin):
    google_standin.add_place("ChIJ_bistro", "Bistro", 55.6790, 12.5900, ["restaurant", "food"],
                             hours=weekly(EVERY_DAY, ("12:00", "15:00"), ("17:00", "22:00")))
    trip = copenhagen(app, days=1)
    add(app, trip, 0, "Nyhavn", (55.6798, 12.5910), durationMin=60)
    add(app, trip, 0, "Bistro", (55.6790, 12.5900), kind="food", meal="dinner", placeId="ChIJ_bistro",
        setTime="21:55", durationMin=75)
    finding = only(review(app, trip), "closed")
    labels = [f["label"] for f in finding["fixes"]]
    # The latest start that leaves dinner and its 30 minutes, never the lunch hours.
    assert labels[0] == "Set “Bistro” to 20:15", labels
    assert not any(t in label for label in labels for t in ("12:", "13:", "14:")), labels
    clears(app, trip, finding, finding["fixes"][0])


def test_eight_visits_on_a_normal_day_go_to_the_emptiest_days_in_one_change(app, settings):
    trip = copenhagen(app)
    for i in range(8):
        add(app, trip, 0, f"Sight {i}", (55.676 + i * 0.0015, 12.560 + i * 0.002), durationMin=45)
    add(app, trip, 1, "Tivoli", (55.6736, 12.5681))
    finding = only(review(app, trip), "pace")
    fix = finding["fixes"][0]
    # Two visits over a normal pace's six, both in one fix: Wednesday is empty, so it takes one first.
    assert [e["op"] for e in fix["edits"]] == ["move_stop", "move_stop"]
    assert [e["args"]["toDayId"] for e in fix["edits"]] == [trip["days"][2]["id"], trip["days"][1]["id"]]
    assert fix["label"].startswith("Move “Sight 6” to Day 3 (Wed 16 Dec) and “Sight 7” to Day 2 (Tue 15 Dec)")
    version = trip_dto(app, trip)["version"]
    clears(app, trip, finding, fix)
    assert trip_dto(app, trip)["version"] == version + 1
    with sqlite3.connect(settings.db_path) as conn:
        rows = conn.execute("SELECT op, parts_json FROM agent_messages WHERE trip_id = ? AND source = 'operation' "
                            "ORDER BY seq DESC LIMIT 1", (trip["id"],)).fetchall()
    [(name, parts)] = rows
    parts = json.loads(parts)
    # One line in the timeline says what the fix did; each edit's data rides along.
    assert name == "move_stop+move_stop" and parts[0]["type"] == "text"
    text = parts[0]["text"]
    assert text.startswith("Moved “Sight 6” to Day 3") and " and moved “Sight 7” to Day 2" in text
    assert [p["data"]["op"] for p in parts[1:]] == ["move_stop", "move_stop"]


def test_every_mode_avoided_allows_the_mode_that_makes_the_leg_shortest(app):
    trip = copenhagen(app, days=1)
    r = app.put(f"/api/trips/{trip['id']}/preferences", json={"avoidModes": ["walk", "transit", "drive", "bicycle"]})
    assert r.status_code == 200, r.text
    add(app, trip, 0, "Amager Strandpark", (55.6540, 12.6490))
    add(app, trip, 0, "Kongens Have", (55.6849, 12.5797))
    finding = only(review(app, trip), "avoided_mode")
    # In the preferences form's words, not the field's values ("The trip avoids walk ... is by walk").
    assert finding["message"] == "The trip avoids walking, but the leg from “Amager Strandpark” to “Kongens Have” " \
                                 "is on foot."
    assert finding["fixes"], finding
    assert finding["fixes"][0]["label"] == "Allow driving on this trip"   # the fastest, 5 km across town
    clears(app, trip, finding, finding["fixes"][0])


def test_a_set_time_after_midnight_is_the_same_night(app, google_standin):
    google_standin.add_place("ChIJ_club", "Culture Box", 55.6880, 12.5880, ["night_club"],
                             hours=weekly(range(7), ("23:00", "06:00")))
    google_standin.add_place("ChIJ_ruby", "Ruby", 55.6780, 12.5790, ["bar"], hours=weekly(range(7), ("16:00", "02:00")))
    trip = copenhagen(app, days=1, start="2026-12-18")   # a Friday night
    add(app, trip, 0, "Culture Box", (55.6880, 12.5880), placeId="ChIJ_club", setTime="23:00", durationMin=90)
    bar = add(app, trip, 0, "Ruby", (55.6780, 12.5790), placeId="ChIJ_ruby", durationMin=60)
    r = op(app, trip["id"], "update_stop", stopId=bar, setTime="24:45")
    assert r.status_code == 200, r.text
    assert r.json()["data"]["summary"] == "Set “Ruby” to 00:45 (+1)"
    day = r.json()["data"]["trip"]["days"][0]
    stop = day["stops"][1]
    assert (stop["setTime"], stop["startTime"], stop["startMinutes"], stop["endMinutes"]) == ("24:45", "00:45", 1485,
                                                                                           1545)
    assert day["stops"][0]["endMinutes"] == 1470 < stop["startMinutes"], "after the club, not 23 h 54 min before it"
    assert review(app, trip)["findings"] == []
    assert op(app, trip["id"], "update_stop", stopId=bar, setTime="30:00").status_code == 422


def test_lunch_suggestions_start_inside_the_lunch_window(settings, google_standin):
    """A morning that runs to 15:40: lunch after it would be at 16:00, which the
    review flags; every suggestion starts between 11:00 and 15:00 instead (or
    is not offered), and applying one leaves nothing to check about it."""
    google_standin.today = None
    with make_client(google_settings(settings, google_standin)) as client:
        signup(client)
        trip = new_trip(client, days=1)
        day = trip["days"][0]["id"]
        for name, point, minutes in (("Castelo", (38.7139, -9.1335), 180), ("Sé", (38.7098, -9.1335), 150),
                                     ("Alfama", (38.7110, -9.1300), 120)):
            assert op(client, trip["id"], "insert_stop", dayId=day, name=name, lat=point[0], lng=point[1],
                      durationMin=minutes).status_code == 200
        r = client.post(f"/api/trips/{trip['id']}/days/{day}/eat", json={"meal": "lunch"})
        assert r.status_code == 200, r.text
        suggestions = r.json()["data"]["suggestions"]
        assert suggestions, "lunch fits earlier in the day"
        assert all(11 * 60 <= s["startMinutes"] <= 15 * 60 for s in suggestions), \
            [(s["place"]["name"], s["startTime"]) for s in suggestions]
        r = client.post(f"/api/trips/{trip['id']}/drafts/{suggestions[0]['draftId']}/apply", json={})
        assert r.status_code == 200, r.text
        result = client.get(f"/api/trips/{trip['id']}/days/{day}/review").json()["data"]
        assert [f["kind"] for f in result["findings"]] == [], result


def test_the_route_crossing_itself_three_times_is_one_finding_with_one_fix(app):
    trip = copenhagen(app, days=1)
    # A zigzag between two streets 450 m apart, each leg back across the one before.
    for i, (x, y) in enumerate([(0, 0), (6, 4), (1, 4), (5, 0), (2, 0), (4, 4)]):
        add(app, trip, 0, f"Stop {i}", (55.680 + y * 0.001, 12.560 + x * 0.0018), durationMin=20)
    result = review(app, trip)
    finding = only(result, "backtracking")
    assert finding["message"].startswith("The route crosses back on itself 3 times: “Stop 0” → “Stop 1” crosses")
    assert len(finding["stopIds"]) == 6
    assert finding["fixes"], finding
    clears(app, trip, finding, finding["fixes"][0])
    assert "backtracking" not in [f["kind"] for f in review(app, trip)["findings"]]


def test_removing_a_duplicate_sets_the_time_of_the_tea_it_would_bring_forward(app):
    """The only way to clear a duplicate is to remove it, and that starts what follows earlier: an
    afternoon tea at 14:08, before its window. The fix says so and sets the tea's time; there was
    no fix at all ("Every change Wayline tried would cause a new problem")."""
    trip = copenhagen(app, days=1)
    add(app, trip, 0, "Rundetaarn", (55.6813, 12.5759), durationMin=60)
    add(app, trip, 0, "Long walk", (55.6820, 12.5770), durationMin=240)
    add(app, trip, 0, "Rundetaarn", (55.6813, 12.5759), durationMin=60)
    add(app, trip, 0, "Tea", (55.6800, 12.5790), kind="food", meal="afternoon_tea", durationMin=45)
    finding = only(review(app, trip), "duplicate")
    assert [f["label"] for f in finding["fixes"]] == ["Remove the second “Rundetaarn”, and set “Tea” to 14:30"]
    clears(app, trip, finding, finding["fixes"][0])
    assert [(s["name"], s["startTime"]) for s in trip_dto(app, trip)["days"][0]["stops"]][-1] == ("Tea", "14:30")


def test_uncrossing_the_route_before_lunch_keeps_lunch_in_its_window(app):
    """Untangling the morning saves the minutes that kept lunch at 11:02: the fix sets lunch to a
    time that holds however the routing provider times the new legs (it was offered none)."""
    trip = copenhagen(app, days=1)
    assert op(app, trip["id"], "update_day", dayId=trip["days"][0]["id"], startTime="08:25").status_code == 200
    for i, (x, y) in enumerate([(0, 0), (6, 4), (1, 4), (5, 0)]):
        add(app, trip, 0, f"Stop {i}", (55.680 + y * 0.001, 12.560 + x * 0.0018), durationMin=30)
    add(app, trip, 0, "Lunch", (55.682, 12.5654), kind="food", meal="lunch", durationMin=60)
    assert trip_dto(app, trip)["days"][0]["stops"][-1]["startTime"] == "11:02"
    finding = only(review(app, trip), "backtracking")
    assert finding["fixes"] and all(f["label"].endswith(", and set “Lunch” to 11:15") for f in finding["fixes"]), \
        finding
    clears(app, trip, finding, finding["fixes"][0])


LISBON_ZIGZAG = [("x00", 38.71262, -9.14964, 90, None), ("x01", 38.7091, -9.14094, 45, None),
                 ("x02", 38.71357, -9.1611, 90, None), ("x03", 38.7093, -9.13081, 60, None),
                 ("x04", 38.70286, -9.17784, 30, None), ("x05", 38.72596, -9.14958, 30, "15:00"),
                 ("x06", 38.72484, -9.14667, 60, None)]


def test_a_fix_never_makes_a_crossing_route_cross_more_often(app):
    """The day crosses itself once and "x05" is set before "x04" ends: "Move “x05” before “x03”"
    cleared the overlap but made the route cross twice (the finding "crosses back on itself 2
    times", which the agent counts as a new risk). Every fix offered leaves it crossing at most once."""
    def build() -> dict:
        trip = new_trip(app, days=3, startDate=MONDAY)
        for name, lat, lng, minutes, at in LISBON_ZIGZAG:
            add(app, trip, 0, name, (lat, lng), durationMin=minutes, **({"setTime": at} if at else {}))
        add(app, trip, 2, "x20", (38.70665, -9.12787), durationMin=45)
        return trip

    def crossings(trip: dict) -> int:
        path = [f["message"] for f in review(app, trip)["findings"] if f["kind"] == "backtracking"]
        times = re.search(r"itself (\d+) times", path[0]) if path else None
        return int(times.group(1)) if times else len(path)

    trip = build()
    assert crossings(trip) == 1
    finding = only(review(app, trip), "overlap")
    labels = [f["label"] for f in finding["fixes"]]
    assert labels and "Move “x05” before “x03”" not in labels, labels
    for label in labels:
        copy = build()
        fix = next(f for f in only(review(app, copy), "overlap")["fixes"] if f["label"] == label)
        apply_fix(app, copy, fix)
        assert crossings(copy) <= 1, label


def test_a_place_closed_for_good_is_a_problem_with_a_fix(app):
    """Café Antigo do Chiado is permanently closed but Google still lists its old hours (08-19):
    a breakfast there at 09:00 passed for fine. It is a problem now, removed or replaced by a
    place nearby that serves breakfast, either fix clearing it."""
    def build() -> dict:
        trip = new_trip(app, days=2, startDate=MONDAY)
        add(app, trip, 0, "Café Antigo do Chiado", (38.7112, -9.1410), placeId="ChIJ_cafe_antigo", kind="food",
            meal="breakfast", setTime="09:00", durationMin=45)
        add(app, trip, 0, "Castelo de São Jorge", (38.7139, -9.1335), placeId="ChIJ_castelo_jorge")
        return trip

    trip = build()
    result = review(app, trip)
    finding = only(result, "closed")
    assert result["status"] == "problem" and finding["severity"] == "problem"
    assert finding["message"] == "“Café Antigo do Chiado” has closed for good: Google lists it as permanently closed."
    labels = [f["label"] for f in finding["fixes"]]
    assert labels[0] == "Remove “Café Antigo do Chiado”", labels
    assert any(label.startswith("Replace “Café Antigo do Chiado” with “") for label in labels), labels
    for label in labels:
        copy = build()
        clears(app, copy, finding, next(f for f in only(review(app, copy), "closed")["fixes"] if f["label"] == label))


def test_removing_a_duplicate_keeps_its_expense_with_the_first_visit(app):
    """The tickets were booked on the second "Rundetaarn": removing it left them for a stop that is
    gone (and the agent then flagged the expense as unlinked, a new problem from the fix)."""
    me = app.get("/api/auth/me").json()["data"]["user"]
    trip = copenhagen(app, days=1)
    first = add(app, trip, 0, "Rundetaarn", (55.6813, 12.5759), durationMin=60)
    second = add(app, trip, 0, "Rundetaarn", (55.6813, 12.5759), durationMin=60)
    r = op(app, trip["id"], "add_expense", title="Tickets", amountMinor=6000, currency="DKK", paidBy=me["id"],
           dayId=trip["days"][0]["id"], stopId=second)
    assert r.status_code == 200, r.text
    finding = only(review(app, trip), "duplicate")
    [fix] = finding["fixes"]
    assert fix["label"] == "Remove the second “Rundetaarn” (its expense now for the first)"
    clears(app, trip, finding, fix)
    [expense] = trip_dto(app, trip)["expenses"]
    assert (expense["title"], expense["stopId"], expense["dayId"]) == ("Tickets", first, trip["days"][0]["id"])


def test_a_place_closed_for_good_takes_its_expense_along_or_hands_it_on(app):
    """A deposit was paid for breakfast at a café that has closed for good:
    removing it or replacing it left the deposit for a stop that is gone (the
    agent then flagged it, a new problem from the fix). The removal now takes
    the expense with it and says so, naming it and its amount; a replacement
    hands it to the new place. Either clears the finding and leaves no
    expense for a stop that is gone."""
    me = app.get("/api/auth/me").json()["data"]["user"]

    def build() -> tuple[dict, str]:
        trip = new_trip(app, days=2, startDate=MONDAY)
        cafe = add(app, trip, 0, "Café Antigo do Chiado", (38.7112, -9.1410), placeId="ChIJ_cafe_antigo",
                   kind="food", meal="breakfast", setTime="09:00", durationMin=45)
        add(app, trip, 0, "Castelo de São Jorge", (38.7139, -9.1335), placeId="ChIJ_castelo_jorge")
        r = op(app, trip["id"], "add_expense", title="Deposit", amountMinor=2000, currency="EUR", paidBy=me["id"],
               dayId=trip["days"][0]["id"], stopId=cafe)
        assert r.status_code == 200, r.text
        return trip, cafe

    trip, _ = build()
    labels = [f["label"] for f in only(review(app, trip), "closed")["fixes"]]
    assert labels[0] == "Remove “Café Antigo do Chiado” and its expense “Deposit” (20.00 EUR)", labels
    replacements = [label for label in labels if label.startswith("Replace “Café Antigo do Chiado” with “")]
    assert replacements and all(label.endswith(" (its expense moves to the new place)") for label in replacements)
    for label in labels:
        copy, cafe = build()
        finding = only(review(app, copy), "closed")
        clears(app, copy, finding, next(f for f in finding["fixes"] if f["label"] == label))
        after = trip_dto(app, copy)
        stops = {s["id"]: {**s, "dayId": d["id"]} for d in after["days"] for s in d["stops"]}
        if label.startswith("Remove"):
            assert after["expenses"] == [], label
            continue
        [expense] = after["expenses"]
        new = stops[expense["stopId"]]
        assert new["meal"] == "breakfast" and new["name"] != "Café Antigo do Chiado", label
        assert expense["dayId"] == new["dayId"] == copy["days"][0]["id"] and cafe not in stops


def test_an_insert_takes_over_only_an_existing_stops_expenses(app):
    """`takeExpensesOf` names a stop of the trip; anything else is refused and
    nothing changes."""
    trip = copenhagen(app, days=1)
    r = op(app, trip["id"], "insert_stop", dayId=trip["days"][0]["id"], name="Torvehallerne",
           takeExpensesOf="s_missing")
    assert r.status_code == 404 and r.json()["error"]["code"] == "stop_not_found", r.text
    assert trip_dto(app, trip)["days"][0]["stops"] == []


# -- the ops endpoint --------------------------------------------------------------------------------


def test_edits_apply_all_or_nothing_in_one_version(app, settings):
    trip = copenhagen(app, days=2)
    a = add(app, trip, 0, "A", (55.68, 12.57))
    version = trip_dto(app, trip)["version"]
    url = f"/api/trips/{trip['id']}/ops?full=1"
    bad = [{"op": "update_stop", "args": {"stopId": a, "setTime": "10:00"}},
           {"op": "move_stop", "args": {"stopId": a, "toDayId": "no-such-day", "position": 0}}]
    r = app.post(url, json={"edits": bad})
    assert r.status_code == 404 and r.json()["error"]["code"] == "day_not_found"
    assert trip_dto(app, trip)["version"] == version and trip_dto(app, trip)["days"][0]["stops"][0]["setTime"] is None
    r = app.post(url, json={"edits": [{"op": "update_stop", "args": {"stopId": a, "setTime": "99:00"}}]})
    assert r.status_code == 422
    assert app.post(url, json={"edits": []}).status_code == 422
    assert app.post(url, json={"edits": [{"op": "drop_tables", "args": {}}]}).status_code == 404
    good = [{"op": "move_stop", "args": {"stopId": a, "toDayId": trip["days"][1]["id"], "position": 0}},
            {"op": "update_stop", "args": {"stopId": a, "setTime": "10:00"}}]
    r = app.post(url, json={"edits": good, "baseVersion": version - 1})
    assert r.status_code == 409 and r.json()["error"]["code"] == "stale"
    r = app.post(url, json={"edits": good, "baseVersion": version})
    assert r.status_code == 200, r.text
    assert r.json()["data"]["summary"] == "Moved “A” to Day 2 and set “A” to 10:00"
    assert r.json()["data"]["trip"]["version"] == version + 1
    with sqlite3.connect(settings.db_path) as conn:
        lines = conn.execute("SELECT COUNT(*) FROM agent_messages WHERE trip_id = ? AND source = 'operation'",
                             (trip["id"],)).fetchone()[0]
    assert lines == 2, "the insert, then one line for the two edits"


def test_a_fix_made_stale_by_another_members_edit_is_refused_not_applied(app, google_standin):
    """The review says which version its fixes were worked out on; sent back with it (as the page
    does), a fix that another member's edit overtook is refused, and the plan stays as that member
    left it: "Set “Bistro” to 20:15" after a 120-minute dinner would not clear the closing time."""
    google_standin.add_place("ChIJ_bistro", "Bistro", 55.6790, 12.5900, ["restaurant", "food"],
                             hours=weekly(EVERY_DAY, ("12:00", "15:00"), ("17:00", "22:00")))
    ana = signup(app, "ana2")
    trip = copenhagen(app, days=1)
    bistro = add(app, trip, 0, "Bistro", (55.6790, 12.5900), kind="food", meal="dinner", placeId="ChIJ_bistro",
                 setTime="21:55", durationMin=75)
    result = review(app, trip)
    assert result["version"] == trip_dto(app, trip)["version"]
    fix = only(result, "closed")["fixes"][0]
    assert fix["label"] == "Set “Bistro” to 20:15"
    bob = signup(app, "bob")
    join(app, ana, trip["id"], bob)
    assert op(app, trip["id"], "update_stop", stopId=bistro, durationMin=120).status_code == 200
    use(app, ana)
    r = app.post(f"/api/trips/{trip['id']}/ops", json={"edits": fix["edits"], "baseVersion": result["version"]})
    assert r.status_code == 409 and r.json()["error"]["code"] == "stale", r.text
    [stop] = trip_dto(app, trip)["days"][0]["stops"]
    assert (stop["setTime"], stop["durationMin"]) == ("21:55", 120)
    # The review of the plan as it is now offers a fix for it, with its version.
    fresh = review(app, trip)
    assert fresh["version"] == trip_dto(app, trip)["version"] == result["version"] + 1
    fix = only(fresh, "closed")["fixes"][0]
    r = app.post(f"/api/trips/{trip['id']}/ops", json={"edits": fix["edits"], "baseVersion": fresh["version"]})
    assert r.status_code == 200, r.text
    assert "closed" not in [f["kind"] for f in review(app, trip)["findings"]]


def test_viewers_cannot_apply_edits(app):
    owner = signup(app, "owner")
    trip = copenhagen(app, days=1)
    a = add(app, trip, 0, "A", (55.68, 12.57))
    viewer = signup(app, "viewer")
    join(app, owner, trip["id"], viewer, role="viewer")
    r = app.post(f"/api/trips/{trip['id']}/ops", json={"edits": [
        {"op": "update_stop", "args": {"stopId": a, "setTime": "10:00"}}]})
    assert r.status_code == 403
    use(app, signup(app, "stranger"))
    assert app.post(f"/api/trips/{trip['id']}/ops", json={"edits": [
        {"op": "update_stop", "args": {"stopId": a, "setTime": "10:00"}}]}).status_code == 404


# -- honest about what could not be checked ---------------------------------------------------------------


def test_a_day_says_which_checks_could_not_run(app, google_standin):
    google_standin.add_place("ChIJ_nohours", "Amalienborg", 55.6840, 12.5930, ["tourist_attraction"])
    trip = copenhagen(app, days=1)
    add(app, trip, 0, "Amalienborg", (55.6840, 12.5930), placeId="ChIJ_nohours")
    result = review(app, trip)
    assert result["status"] == "ok" and result["findings"] == []
    assert [c["message"] for c in result["notChecked"]] == [
        "Opening hours not checked for “Amalienborg”: no opening hours are known.",
        "Weather not checked for Mon 14 Dec: the forecast could not be read."]
    # No destination, no place to ask the forecast for: it says what would help, not that a read failed.
    r = app.post("/api/trips", json={"title": "Somewhere", "startDate": MONDAY, "days": 1})
    assert r.status_code == 201, r.text
    nowhere = r.json()["data"]
    add(app, nowhere, 0, "Amalienborg", (55.6840, 12.5930), placeId="ChIJ_nohours")
    assert [c["message"] for c in review(app, nowhere)["notChecked"]][1] == \
        "Weather not checked for Mon 14 Dec: the trip has no destination set."


def test_a_place_that_could_not_be_read_is_not_said_to_have_no_hours(app, google_standin):
    """Places down: the restaurant's hours were not checked because it could not be read, not
    because it lists none (it opens 11-22 every day): the page showed "no opening hours are known"."""
    google_standin.add_place("ChIJ_rest", "Rest", 55.6780, 12.5790, ["restaurant", "food"],
                             hours=weekly(EVERY_DAY, ("11:00", "22:00")))
    google_standin.add_place("ChIJ_nohours", "Amalienborg", 55.6840, 12.5930, ["tourist_attraction"])
    trip = copenhagen(app, days=1)
    add(app, trip, 0, "Amalienborg", (55.6840, 12.5930), placeId="ChIJ_nohours")
    assert [c["message"] for c in review(app, trip)["notChecked"]][0] == \
        "Opening hours not checked for “Amalienborg”: no opening hours are known."
    google_standin.fail("/v1/places/ChIJ_rest", 503)
    add(app, trip, 0, "Rest", (55.6780, 12.5790), placeId="ChIJ_rest", kind="food", meal="lunch", setTime="12:00")
    assert [c["message"] for c in review(app, trip)["notChecked"]] == [
        "Opening hours not checked for “Rest”: its place could not be read just now.",
        "Opening hours not checked for “Amalienborg”: no opening hours are known.",
        "Weather not checked for Mon 14 Dec: the forecast could not be read."]


# -- Optimize never applies a draft with new findings -----------------------------------------------------


def test_an_optimize_draft_that_breaks_a_set_time_is_repaired(settings, google_standin, openai_standin):
    from standins.openai_standin import ai_settings
    from test_planner import NO_DEBOUNCE, TRIP_DATE, ScriptedModel, good_plan, plan_trip, save_prefs

    model = ScriptedModel(openai_standin)
    google_standin.today = TRIP_DATE
    with make_client(ai_settings(google_settings(settings, google_standin), openai_standin), **NO_DEBOUNCE) as env:
        signup(env)
        save_prefs(env)
        t = plan_trip(env)
        day = {"id": t["id"], "days": [{"id": t["day"]}]}
        before = problems(env, day)
        # Two long visits between the Sé and the 13:00 tour: as asked, the tour can no longer be reached.
        sights = [{"placeId": "ChIJ_castelo_jorge", "afterStopId": t["free"][1]},
                  {"placeId": "ChIJ_miradouro_luzia", "afterStopId": t["free"][1]}]
        model.json("plan_day", good_plan(t, sights))
        r = env.post(f"/api/trips/{t['id']}/days/{t['day']}/optimize", json={})
        assert r.status_code == 200, r.text
        draft = r.json()["data"]["draft"]
        assert draft["preview"]["added"] == [], draft["preview"]["added"]
        summary = draft["preview"]["summary"]
        # Repaired: the model's picks kept, in the exact order that reaches the tour; the summary says why.
        assert "another order" in summary and "“Tour” is set for 13:00" in summary, summary
        assert {s["name"] for s in draft["preview"]["stops"] if s["added"]} == {"Castelo de São Jorge",
                                                                                 "Miradouro de Santa Luzia"}
        pinned = next(s for s in draft["preview"]["stops"] if s["stopId"] == t["pinned"])
        assert pinned["after"]["startTime"] == "13:00"
        r = env.post(f"/api/trips/{t['id']}/drafts/{draft['id']}/apply", json={})
        assert r.status_code == 200, r.text
        assert problems(env, day) <= before, "applied, the day has nothing new to check"


def test_a_meal_nothing_else_can_fix_is_offered_at_an_open_place_nearby(settings, google_standin):
    """A one-day trip on a Sunday with lunch at a tasca closed on Sundays: no
    time, no other day, no order helps. The review looks for places nearby
    that serve lunch (one search) and offers one that is open, as one change
    (the new place in the old one's slot)."""
    with make_client(google_settings(settings, google_standin)) as client:
        signup(client)
        trip = new_trip(client, days=1, startDate="2026-12-13")   # a Sunday
        day = trip["days"][0]["id"]
        assert op(client, trip["id"], "insert_stop", dayId=day, name="Castelo", lat=38.7139, lng=-9.1335,
                  durationMin=150).status_code == 200
        assert op(client, trip["id"], "insert_stop", dayId=day, name="Tasca da Esquina", kind="food", meal="lunch",
                  placeId="ChIJ_tasca_esquina", lat=38.7131, lng=-9.1601, durationMin=60).status_code == 200
        searches = google_standin.calls["/v1/places:searchNearby"]
        result = client.get(f"/api/trips/{trip['id']}/days/{day}/review").json()["data"]
        finding = next(f for f in result["findings"] if f["kind"] == "closed")
        assert google_standin.calls["/v1/places:searchNearby"] == searches + 1, "looked up only because stuck"
        fix = finding["fixes"][0]
        assert fix["label"].startswith("Replace “Tasca da Esquina” with “"), fix["label"]
        assert [e["op"] for e in fix["edits"]] == ["insert_stop", "delete_stop"]
        assert fix["edits"][0]["args"]["meal"] == "lunch" and "allergies" in fix["edits"][0]["args"]["note"]
        r = client.post(f"/api/trips/{trip['id']}/ops", json={"edits": fix["edits"]})
        assert r.status_code == 200, r.text
        [changed] = r.json()["data"]["change"]["days"]   # the answer holds the one day the fix changed
        stops = changed["stops"]
        assert [s["name"] for s in stops][0] == "Castelo" and "Tasca da Esquina" not in [s["name"] for s in stops]
        after = client.get(f"/api/trips/{trip['id']}/days/{day}/review").json()["data"]
        assert [f["kind"] for f in after["findings"]] == [], after


def test_a_patch_reads_in_both_forms_and_nothing_else():
    from app.errors import Invalid
    from app.trips.edits import as_patch, patch_edits

    two = [("move_stop", {"stopId": "s", "toDayId": "d2", "position": 0}), ("update_stop", {"stopId": "s",
                                                                                         "setTime": "10:00"})]
    assert patch_edits(as_patch(two, label="Move it")) == two
    assert as_patch(two[:1]) == {"edits": [{"op": "move_stop", "args": two[0][1]}], "op": "move_stop",
                                 "args": two[0][1]}
    assert patch_edits({"op": "update_stop", "args": {"stopId": "s"}}) == [("update_stop", {"stopId": "s"})]
    for bad in ({}, {"edits": []}, {"edits": "x"}, [], {"edits": [{"op": "x", "args": {}, "more": 1}]}):
        with pytest.raises(Invalid):
            patch_edits(bad)
