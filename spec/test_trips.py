"""Trips through the one write path: versions, stale edits, schedule, expenses, races."""

from __future__ import annotations

import sqlite3
import threading

import httpx

from helpers import LiveServer, join, new_trip, op, signup, use
from app.tls import tls_context
from app.web.application import create_app


def day_of(trip: dict, index: int = 0) -> dict:
    return trip["days"][index]


def test_every_op_bumps_the_version_once_and_logs_an_event(client, settings):
    signup(client, "alice")
    trip = new_trip(client)
    t, version = trip["id"], trip["version"]
    day = day_of(trip)["id"]
    steps = [
        ("insert_stop", {"dayId": day, "name": "Castle", "lat": 38.7139, "lng": -9.1335}),
        ("add_day", {"title": "Sintra"}),
        ("update_day", {"dayId": day, "title": "Old town", "startTime": "10:00"}),
        ("update_trip", {"title": "Lisbon in winter"}),
    ]
    for name, args in steps:
        r = op(client, t, name, **args)
        assert r.status_code == 200, r.text
        body = r.json()["data"]
        assert body["ok"] is True and body["summary"]
        assert body["trip"]["version"] == version + 1
        version += 1
    assert client.get(f"/api/trips/{t}").json()["data"]["version"] == version
    with sqlite3.connect(settings.db_path) as conn:
        events = conn.execute("SELECT op, source, role FROM agent_messages WHERE trip_id = ? ORDER BY seq",
                              (t,)).fetchall()
    assert [e[0] for e in events] == [s[0] for s in steps]
    assert {e[1] for e in events} == {"operation"}


def test_stale_base_version_is_409_and_changes_nothing(client):
    signup(client)
    trip = new_trip(client)
    day = day_of(trip)["id"]
    assert op(client, trip["id"], "add_day", baseVersion=trip["version"]).status_code == 200
    r = op(client, trip["id"], "insert_stop", dayId=day, name="Late", baseVersion=trip["version"])
    assert r.status_code == 409
    assert r.json()["error"]["code"] == "stale"
    after = client.get(f"/api/trips/{trip['id']}").json()["data"]
    assert after["version"] == trip["version"] + 1
    assert all(not d["stops"] for d in after["days"])


def test_computed_times_follow_day_start_durations_and_legs(client):
    signup(client)
    trip = new_trip(client)
    t, day = trip["id"], day_of(trip)["id"]
    op(client, t, "update_day", dayId=day, startTime="08:30")
    op(client, t, "insert_stop", dayId=day, name="Cafe", durationMin=30)
    op(client, t, "insert_stop", dayId=day, name="Museum", durationMin=90)
    op(client, t, "insert_stop", dayId=day, name="Castle", lat=38.7139, lng=-9.1335, durationMin=60)
    r = op(client, t, "insert_stop", dayId=day, name="Viewpoint", lat=38.7163, lng=-9.1295, durationMin=45)
    d = day_of(r.json()["data"]["trip"])
    times = [(s["name"], s["startTime"], s["endTime"]) for s in d["stops"]]
    assert times[:3] == [("Cafe", "08:30", "09:00"), ("Museum", "09:00", "10:30"), ("Castle", "10:30", "11:30")]
    leg = d["legs"][0]
    assert (leg["fromStopId"], leg["mode"], leg["source"]) == (d["stops"][2]["id"], "walk", "estimate")
    travel = -(-leg["durationS"] // 60)
    assert d["stops"][3]["startTime"] == f"11:{30 + travel:02d}"


def test_times_past_midnight_carry_minutes_above_1440(client):
    signup(client)
    trip = new_trip(client)
    t, day = trip["id"], day_of(trip)["id"]
    op(client, t, "update_day", dayId=day, startTime="22:30")
    op(client, t, "insert_stop", dayId=day, name="Bar", durationMin=90)
    r = op(client, t, "insert_stop", dayId=day, name="Club", durationMin=120)
    stops = day_of(r.json()["data"]["trip"])["stops"]
    assert [(s["startTime"], s["endTime"], s["startMinutes"], s["endMinutes"]) for s in stops] == [
        ("22:30", "00:00", 1350, 1440), ("00:00", "02:00", 1440, 1560)]
    # Ordered and measured by minutes: no "23 h 59 min short" gap before a stop after midnight.
    assert stops[1]["startMinutes"] - stops[0]["endMinutes"] == 0


def test_swap_stops_exchanges_day_and_position(client):
    signup(client)
    trip = new_trip(client)
    t, (d0, d1) = trip["id"], (d["id"] for d in trip["days"])
    op(client, t, "insert_stop", dayId=d0, name="Park")
    op(client, t, "insert_stop", dayId=d0, name="Cafe")
    r = op(client, t, "insert_stop", dayId=d1, name="Museum")
    ids = {s["name"]: s["id"] for d in r.json()["data"]["trip"]["days"] for s in d["stops"]}
    r = op(client, t, "swap_stops", stopId=ids["Park"], otherStopId=ids["Museum"])
    assert r.status_code == 200 and r.json()["data"]["summary"] == "Swapped “Park” (Day 2) and “Museum” (Day 1)"
    days = r.json()["data"]["trip"]["days"]
    assert [[s["name"] for s in d["stops"]] for d in days] == [["Museum", "Cafe"], ["Park"]]
    same = op(client, t, "swap_stops", stopId=ids["Park"], otherStopId=ids["Park"])
    assert same.status_code == 422 and same.json()["error"]["field"] == "otherStopId"
    assert op(client, t, "swap_stops", stopId=ids["Park"], otherStopId="nope").status_code == 404


def test_set_time_is_pinned_and_clearing_it_recomputes(client):
    signup(client)
    trip = new_trip(client)
    t, day = trip["id"], day_of(trip)["id"]
    op(client, t, "insert_stop", dayId=day, name="Breakfast", durationMin=60)
    stop = op(client, t, "insert_stop", dayId=day, name="Tour", setTime="14:00").json()["data"]["trip"]
    tour = day_of(stop)["stops"][1]
    assert (tour["setTime"], tour["startTime"]) == ("14:00", "14:00")
    cleared = op(client, t, "update_stop", stopId=tour["id"], setTime=None).json()["data"]["trip"]
    tour = day_of(cleared)["stops"][1]
    assert (tour["setTime"], tour["startTime"]) == (None, "10:00")


def test_move_reorder_and_delete(client):
    signup(client)
    trip = new_trip(client, days=3)
    t = trip["id"]
    d0, d1, d2 = (d["id"] for d in trip["days"])
    op(client, t, "insert_stop", dayId=d0, name="A")
    b = op(client, t, "insert_stop", dayId=d0, name="B").json()["data"]["trip"]
    stop_b = day_of(b)["stops"][1]["id"]
    moved = op(client, t, "move_stop", stopId=stop_b, toDayId=d1, position=0).json()["data"]["trip"]
    assert [s["name"] for s in day_of(moved, 1)["stops"]] == ["B"]
    reordered = op(client, t, "reorder_days", dayIds=[d2, d1, d0]).json()["data"]["trip"]
    assert [d["id"] for d in reordered["days"]] == [d2, d1, d0]
    assert [d["date"] for d in reordered["days"]] == ["2026-12-10", "2026-12-11", "2026-12-12"]
    assert day_of(reordered, 2)["stops"][0]["name"] == "A"
    bad = op(client, t, "reorder_days", dayIds=[d0, d1])
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "dayIds"
    gone = op(client, t, "delete_stop", stopId=stop_b).json()["data"]["trip"]
    assert not day_of(gone, 1)["stops"]
    assert op(client, t, "delete_stop", stopId=stop_b).status_code == 404


def test_expenses_equal_and_share_splits_settle_exactly(client):
    alice = signup(client, "alice")
    bob, carol = signup(client, "bob"), signup(client, "carol")
    use(client, alice)
    trip = new_trip(client)
    t = trip["id"]
    join(client, alice, t, bob)
    join(client, alice, t, carol)
    use(client, alice)
    op(client, t, "add_expense", title="Dinner", amountMinor=9000, currency="EUR", paidBy=alice["id"])
    r = op(client, t, "add_expense", title="Taxi", amountMinor=3000, currency="EUR", paidBy=bob["id"],
           split={"kind": "shares", "shares": {alice["id"]: 1, bob["id"]: 2}})
    summary = r.json()["data"]["trip"]["expenseSummary"]["byCurrency"]["EUR"]
    assert summary["totalMinor"] == 12000
    net = {m["userId"]: m["netMinor"] for m in summary["members"]}
    # Alice paid 90.00 and owes 30.00 + 10.00; Bob paid 30.00 and owes 30.00 + 20.00; Carol owes 30.00.
    assert net == {alice["id"]: 5000, bob["id"]: -2000, carol["id"]: -3000}
    paid_back = {}
    for s in summary["settlements"]:
        assert s["to"] == alice["id"]
        paid_back[s["from"]] = s["amountMinor"]
    assert paid_back == {bob["id"]: 2000, carol["id"]: 3000}
    outsider = op(client, t, "add_expense", title="X", amountMinor=1, currency="EUR", paidBy="nobody")
    assert outsider.status_code == 422 and outsider.json()["error"]["field"] == "paidBy"


def test_twenty_concurrent_ops_from_different_sessions_all_land(settings):
    app = create_app(settings)
    with LiveServer(app) as server:
        with httpx.Client(base_url=server.url) as owner:
            r = owner.post("/api/auth/signup", json={"username": "owner", "password": "correct horse"})
            assert r.status_code == 201
            trip = owner.post("/api/trips", json={"title": "Race", "startDate": "2026-12-01", "days": 1}).json()["data"]
            sessions = []
            for i in range(20):
                c = httpx.Client(base_url=server.url, verify=tls_context())   # not the CA bundle read again each
                c.post("/api/auth/signup", json={"username": f"racer{i}", "password": "correct horse"})
                invite = owner.post(f"/api/trips/{trip['id']}/invites", json={"role": "editor"}).json()["data"]
                assert c.post(f"/api/invites/{invite['token']}/accept", json={}).status_code == 200
                sessions.append(c)
            start = threading.Barrier(20)
            results = [None] * 20

            def send(i: int) -> None:
                start.wait()
                results[i] = sessions[i].post(
                    f"/api/trips/{trip['id']}/ops/insert_stop",
                    json={"dayId": trip["days"][0]["id"], "name": f"Stop {i}"}).status_code

            threads = [threading.Thread(target=send, args=(i,)) for i in range(20)]
            for th in threads:
                th.start()
            for th in threads:
                th.join(30)
            for c in sessions:
                c.close()
            assert results == [200] * 20
            final = owner.get(f"/api/trips/{trip['id']}").json()["data"]
            assert final["version"] == trip["version"] + 20
            assert sorted(s["name"] for s in final["days"][0]["stops"]) == sorted(f"Stop {i}" for i in range(20))
            assert [s["position"] for s in final["days"][0]["stops"]] == list(range(20))


def test_trip_list_and_create_validation(client):
    signup(client)
    new_trip(client, title="B trip")
    listed = client.get("/api/trips").json()["data"]["trips"]
    assert [t["title"] for t in listed] == ["B trip"] and listed[0]["role"] == "owner"
    for payload, field in [
        ({"title": "x", "startDate": "2026-13-01", "days": 2}, "startDate"),
        ({"title": "x", "startDate": "2026-12-01", "days": 0}, "days"),
        ({"title": "x", "startDate": "2026-12-01", "days": "3"}, "days"),
        ({"title": "", "startDate": "2026-12-01", "days": 2}, "title"),
        ({"title": "x", "startDate": "2026-12-01", "days": 2, "timezone": "Mars/Base"}, "timezone"),
    ]:
        r = client.post("/api/trips", json=payload)
        assert r.status_code == 422, payload
        assert r.json()["error"]["field"] == field


def test_odd_cents_are_shared_out_exactly():
    from app.trips.expenses import shares_of, summarize
    from app.trips.model import Expense

    e = Expense(id="e", title="x", amount_minor=1000, currency="EUR", paid_by="a",
                split={"kind": "equal", "members": ["a", "b", "c"]})
    shares = shares_of(e)
    assert sum(shares.values()) == 1000 and sorted(shares.values()) == [333, 333, 334]
    weighted = Expense(id="f", title="y", amount_minor=1001, currency="EUR", paid_by="b",
                       split={"kind": "shares", "shares": {"a": 1, "b": 1, "c": 5}})
    assert sum(shares_of(weighted).values()) == 1001
    summary = summarize([e, weighted])["byCurrency"]["EUR"]
    assert sum(m["netMinor"] for m in summary["members"]) == 0
    settled = {m["userId"]: m["netMinor"] for m in summary["members"]}
    for s in summary["settlements"]:
        settled[s["from"]] += s["amountMinor"]
        settled[s["to"]] -= s["amountMinor"]
    assert set(settled.values()) == {0}


def test_trip_etag_changes_with_votes_and_answers_304_when_unchanged(client):
    signup(client)
    trip = new_trip(client)
    t = trip["id"]
    r = op(client, t, "insert_stop", dayId=trip["days"][0]["id"], name="A")
    stop = r.json()["data"]["trip"]["days"][0]["stops"][0]
    first = client.get(f"/api/trips/{t}")
    etag = first.headers["etag"]
    again = client.get(f"/api/trips/{t}", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    client.put(f"/api/trips/{t}/stops/{stop['id']}/vote", json={"value": 1})
    changed = client.get(f"/api/trips/{t}", headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["etag"] != etag
    assert changed.json()["data"]["version"] == first.json()["data"]["version"]
