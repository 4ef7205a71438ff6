"""Every date and number has a range (issue 12, failure 1): a far-future
date once answered 500, committed anyway, and broke the trip for everyone.
The sweep walks TRIP_OPS' argument schemas, so a new unbounded number fails
here the day it is added."""

from __future__ import annotations

import copy
import math
import sqlite3
from datetime import timedelta

import pytest

from app.changes import TripChanged
from app.fields import FIRST_DATE, LAST_DATE
from app.trips.ops import TRIP_OPS
from helpers import join, new_trip, op, signup, use


def numeric_paths(schema: dict, defs: dict, path: tuple = ()) -> list[tuple[tuple, dict]]:
    """(path, schema) of every number or integer in an op's JSON schema;
    `*` in a path stands for any key of a map."""
    if "$ref" in schema:
        return numeric_paths(defs[schema["$ref"].rsplit("/", 1)[-1]], defs, path)
    found = []
    for key in ("anyOf", "oneOf"):
        for sub in schema.get(key, []):
            found += numeric_paths(sub, defs, path)
    if schema.get("type") in ("number", "integer"):
        found.append((path, schema))
    for name, sub in schema.get("properties", {}).items():
        found += numeric_paths(sub, defs, (*path, name))
    if isinstance(schema.get("additionalProperties"), dict):
        found += numeric_paths(schema["additionalProperties"], defs, (*path, "*"))
    if isinstance(schema.get("items"), dict):
        found += numeric_paths(schema["items"], defs, (*path, 0))
    return found


def op_numbers() -> list[tuple[str, tuple, dict]]:
    cases = []
    for name, spec in TRIP_OPS.items():
        schema = spec.args.model_json_schema()
        for path, sub in numeric_paths(schema, schema.get("$defs", {})):
            cases.append((name, path, sub))
    return cases


def test_every_number_of_every_op_has_both_bounds():
    unbounded = [(name, path) for name, path, sub in op_numbers()
                 if not ({"minimum", "exclusiveMinimum"} & set(sub) and {"maximum", "exclusiveMaximum"} & set(sub))]
    assert unbounded == []


def edges(sub: dict) -> tuple[list, list]:
    """(just inside, just outside) values for a bounded number."""
    integer = sub["type"] == "integer"
    step = 1 if integer else None

    def below(x):
        return x - step if integer else math.nextafter(x, -math.inf) - 1e-6

    def above(x):
        return x + step if integer else math.nextafter(x, math.inf) + 1e-6

    if "minimum" in sub:
        low_in, low_out = sub["minimum"], below(sub["minimum"])
    else:
        low = sub["exclusiveMinimum"]
        low_in, low_out = above(low) if integer else math.nextafter(low, math.inf), low
    if "maximum" in sub:
        high_in, high_out = sub["maximum"], above(sub["maximum"])
    else:
        high = sub["exclusiveMaximum"]
        high_in, high_out = below(high) if integer else math.nextafter(high, -math.inf), high
    return [low_in, high_in], [low_out, high_out]


@pytest.fixture
def world(client):
    me = signup(client, "alice")
    trip = new_trip(client, days=2)
    bob = signup(client, "bob")
    join(client, me, trip["id"], bob)
    use(client, me)
    day = trip["days"][0]["id"]
    r = op(client, trip["id"], "insert_stop", dayId=day, name="Museum")
    stop = r.json()["data"]["trip"]["days"][0]["stops"][0]["id"]
    expense = op(client, trip["id"], "add_expense", title="Lunch", amountMinor=1200, currency="EUR",
                 paidBy=me["id"]).json()["data"]["trip"]["expenses"][0]["id"]
    base = {
        "update_trip": {"destination": {"name": "Porto", "lat": 41.1, "lng": -8.6}},
        "add_day": {},
        "update_day": {"dayId": day},
        "insert_stop": {"dayId": day, "name": "Cafe", "lat": 38.7, "lng": -9.1},
        "update_stop": {"stopId": stop},
        "move_stop": {"stopId": stop, "toDayId": day, "position": 0},
        "add_expense": {"title": "Taxi", "amountMinor": 500, "currency": "EUR", "paidBy": me["id"],
                        "split": {"kind": "shares", "shares": {me["id"]: 1, bob["id"]: 1}}},
        "update_expense": {"expenseId": expense, "split": {"kind": "shares", "shares": {me["id"]: 1, bob["id"]: 1}}},
        "set_trip_preferences": {},
    }
    return client, trip, base, me


def place(args: dict, path: tuple, value, member_id: str) -> dict:
    args = copy.deepcopy(args)
    target = args
    for key in path[:-1]:
        target = target[member_id if key == "*" else key]
    target[member_id if path[-1] == "*" else path[-1]] = value
    return args


@pytest.mark.parametrize("op_name,path,sub", op_numbers(),
                         ids=lambda v: (".".join(map(str, v)) if isinstance(v, tuple)
                                        else (v if isinstance(v, str) else "")))
def test_each_op_number_accepts_its_bounds_and_refuses_just_outside(world, op_name, path, sub):
    client, trip, base, me = world
    if op_name == "delete_day":
        pytest.fail("delete_day has no numbers; the sweep would not list it")
    inside, outside = edges(sub)
    for value in outside:
        before = client.get(f"/api/trips/{trip['id']}").json()["data"]["version"]
        r = op(client, trip["id"], op_name, **place(base[op_name], path, value, me["id"]))
        assert r.status_code == 422, (op_name, path, value, r.text)
        field = r.json()["error"]["field"].split(".")
        assert field[0] == path[0] and field[-1] == (me["id"] if path[-1] == "*" else path[-1]), field
        after = client.get(f"/api/trips/{trip['id']}")
        assert after.status_code == 200 and after.json()["data"]["version"] == before
    for value in inside:
        r = op(client, trip["id"], op_name, **place(base[op_name], path, value, me["id"]))
        assert r.status_code == 200, (op_name, path, value, r.text)
        assert client.get(f"/api/trips/{trip['id']}").status_code == 200


def test_trip_dates_stay_within_1900_to_2199(client):
    signup(client, "alice")
    for start, days in (("9999-12-31", 1), ("1899-12-31", 1), ("2200-01-01", 1), ("2199-12-31", 2)):
        r = client.post("/api/trips", json={"title": "Far", "startDate": start, "days": days})
        assert r.status_code == 422, (start, r.text)
        assert r.json()["error"]["field"] == ("days" if start == "2199-12-31" else "startDate")
    assert client.get("/api/trips").json()["data"]["trips"] == []   # nothing was created
    for start, days in ((FIRST_DATE.isoformat(), 1), ("2199-12-31", 1),
                        ((LAST_DATE - timedelta(days=29)).isoformat(), 30)):
        r = client.post("/api/trips", json={"title": "Edge", "startDate": start, "days": days})
        assert r.status_code == 201, r.text
        assert r.json()["data"]["days"][-1]["date"] <= LAST_DATE.isoformat()


def test_update_trip_start_date_is_bounded_and_nothing_commits_on_refusal(client):
    signup(client, "alice")
    trip = new_trip(client, days=3)
    for start, ok in (("9999-12-30", False), ("1899-12-31", False), ("2199-12-30", False),
                      ("2199-12-29", True), ("1900-01-01", True)):
        before = client.get(f"/api/trips/{trip['id']}").json()["data"]
        r = op(client, trip["id"], "update_trip", startDate=start)
        if ok:
            assert r.status_code == 200, r.text
            continue
        assert r.status_code == 422 and r.json()["error"]["field"] == "startDate", (start, r.text)
        after = client.get(f"/api/trips/{trip['id']}")
        assert after.status_code == 200
        assert after.json()["data"]["version"] == before["version"]
        assert after.json()["data"]["startDate"] == before["startDate"]


def test_add_day_at_the_end_of_the_calendar_is_422_and_commits_nothing(client):
    signup(client, "alice")
    trip = new_trip(client, days=1, startDate="2199-12-30")
    assert op(client, trip["id"], "add_day").status_code == 200     # 2199-12-31
    r = op(client, trip["id"], "add_day")
    assert r.status_code == 422 and r.json()["error"]["field"] == "days"
    after = client.get(f"/api/trips/{trip['id']}").json()["data"]
    assert len(after["days"]) == 2 and after["days"][-1]["date"] == "2199-12-31"


def test_a_trip_stored_at_the_calendars_edge_still_reads(client, settings):
    """Defence in depth: a start date stored before the bound still loads."""
    signup(client, "alice")
    trip = new_trip(client, days=3)
    with sqlite3.connect(settings.db_path) as conn:
        conn.execute("UPDATE trips SET start_date = '9999-12-30', version = version + 1 WHERE id = ?", (trip["id"],))
    client.app.state.services.trips.changed(TripChanged(trip["id"], frozenset({"content"})))
    r = client.get(f"/api/trips/{trip['id']}")
    assert r.status_code == 200, r.text
    assert [d["date"] for d in r.json()["data"]["days"]] == ["9999-12-30", "9999-12-31", None]
    assert op(client, trip["id"], "add_day").status_code == 422
    assert op(client, trip["id"], "update_trip", startDate="2027-01-01").status_code == 200


@pytest.mark.parametrize("blank", [" ", "  \t\n "])
def test_a_blank_name_or_title_is_422_in_plain_words_and_commits_nothing(client, blank):
    """A stop, trip, destination or expense named only with spaces reads as
    nothing in the plan: refused like an empty one, saying so in words."""
    me = signup(client, "alice")
    trip = new_trip(client)
    t, day = trip["id"], trip["days"][0]["id"]
    refused = [
        ("insert_stop", {"dayId": day, "name": blank}, "name"),
        ("update_trip", {"title": blank}, "title"),
        ("update_trip", {"destination": {"name": blank, "lat": 1.0, "lng": 2.0}}, "destination.name"),
        ("add_expense", {"title": blank, "amountMinor": 100, "currency": "EUR", "paidBy": me["id"]}, "title"),
    ]
    for op_name, args, field in refused:
        r = op(client, t, op_name, **args)
        assert r.status_code == 422, (op_name, r.text)
        assert r.json()["error"] == {"code": "invalid", "message": f"{field}: must not be blank", "field": field}
    r = client.post("/api/trips", json={"title": blank, "startDate": "2026-12-10", "days": 1})
    assert r.status_code == 422 and r.json()["error"]["message"] == "title: must not be blank", r.text
    assert client.get(f"/api/trips/{t}").json()["data"]["version"] == trip["version"]
    assert op(client, t, "insert_stop", dayId=day, name=" Tram 28 ").status_code == 200   # spaces around words are fine
