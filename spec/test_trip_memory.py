"""Trips in memory (app/trips/state.py) stay exactly what is committed: after
every op, after a failed transaction, when an op races a member's removal,
with concurrent readers, and within the byte budget. The TripDto patched
after each change equals one built from scratch."""

from __future__ import annotations

import asyncio
import copy
import json
import random
import sqlite3
import threading

import httpx
import pytest

from app import legs, members
from app.changes import TripChanged
from app.errors import NotFound
from app.web.application import create_app
from app.trips import store
from app.trips.dto import build_view, member_bytes
from app.trips.apply import apply_op, apply_ops
from app.trips.state import read_state
from app.tls import tls_context
from helpers import LiveServer, held_at_its_write, join, make_client, new_trip, op, signup, use


def services(client):
    return client.app.state.services


def stored(settings, trip_id):
    with sqlite3.connect(settings.db_path) as conn:
        conn.row_factory = sqlite3.Row
        return store.load_trip(conn, trip_id)


def from_scratch(client, trip_id, user_id) -> bytes:
    """The member's TripDto built from the database with nothing reused."""
    svc = services(client)
    with sqlite3.connect(svc.settings.db_path) as conn:
        conn.row_factory = sqlite3.Row
        fresh = read_state(conn, trip_id)
    fresh.stored = None   # not the days stored for this version (spec/test_stored_days.py compares those)

    async def every_days_legs() -> dict:   # from the provider (on the app's loop), none reused
        return {d.id: await legs.day_legs(svc.places, d.stops, fresh.trip.prefs) for d in fresh.trip.days}

    view = build_view(svc.places, fresh, fresh.trip, None, client.portal.call(every_days_legs))
    return member_bytes(view, user_id, fresh.role_of(user_id))


def random_op(rng: random.Random, trip: dict, me: str) -> tuple[str, dict]:
    days = [d["id"] for d in trip["days"]]
    stops = [s["id"] for d in trip["days"] for s in d["stops"]]
    expenses = [e["id"] for e in trip["expenses"]]
    choices = [("insert_stop", {"dayId": rng.choice(days), "name": f"S{rng.randint(0, 999)}",
                                "lat": 38.70 + rng.random() / 50, "lng": -9.15 + rng.random() / 50}),
               ("add_expense", {"title": "Lunch", "amountMinor": rng.randint(1, 9000), "currency": "EUR",
                                "paidBy": me, **({"stopId": rng.choice(stops)} if stops else {})}),
               ("update_day", {"dayId": rng.choice(days), "title": f"T{rng.randint(0, 9)}", "startTime": "08:15"}),
               ("reorder_days", {"dayIds": rng.sample(days, len(days))}),
               # The calendar's edge: a last day after 2199-12-31 is refused after the title was set.
               ("update_trip", {"title": f"Trip {rng.randint(0, 9)}",
                                "startDate": rng.choice(["2026-12-01", "2199-12-29", "2199-12-30"])})]
    if len(days) < 4:
        choices.append(("add_day", {"title": "More"}))
    if len(days) > 2:
        choices.append(("delete_day", {"dayId": rng.choice(days)}))
    if stops:
        stop = rng.choice(stops)
        others = [s for s in stops if s != stop]
        other = rng.choice(others) if others and rng.random() < 0.8 else stop   # itself: refused
        choices += [("update_stop", {"stopId": stop, "durationMin": rng.randint(5, 200), "note": "n",
                                     "setTime": rng.choice([None, "10:00", "23:30"])}),
                    ("swap_stops", {"stopId": stop, "otherStopId": other}),
                    ("move_stop", {"stopId": stop, "toDayId": rng.choice(days), "position": rng.randint(0, 5)}),
                    ("delete_stop", {"stopId": stop})]
    if expenses:
        choices += [("update_expense", {"expenseId": rng.choice(expenses), "amountMinor": 77}),
                    ("delete_expense", {"expenseId": rng.choice(expenses)})]
    choices.append(("set_trip_preferences", {"longestWalkM": rng.choice([300, 1500, 5000])}))
    return rng.choice(choices)


def test_memory_equals_the_database_after_every_op_and_the_old_trip_never_changes(client, settings):
    owner = signup(client, "owner")
    bob = signup(client, "bob")
    use(client, owner)
    trip = new_trip(client, days=3)
    join(client, owner, trip["id"], bob)
    use(client, owner)
    svc, rng, outcomes = services(client), random.Random(17), set()
    for step in range(80):
        current = client.get(f"/api/trips/{trip['id']}").json()["data"]
        old = svc.trips.cached(trip["id"]).trip
        old_copy = copy.deepcopy(old)
        name, args = random_op(rng, current, owner["id"])
        r = op(client, trip["id"], name, **args)
        assert r.status_code in (200, 404, 422), r.text
        outcomes.add((name, r.status_code))
        assert old == old_copy, f"step {step}: {name} changed the trip other readers share"
        assert svc.trips.cached(trip["id"]).trip == stored(settings, trip["id"]), f"step {step}: {name}"
        stops = [s["id"] for d in client.get(f"/api/trips/{trip['id']}").json()["data"]["days"] for s in d["stops"]]
        if step % 3 == 0 and stops:
            for user in (bob, owner):
                use(client, user)
                stop = f"/api/trips/{trip['id']}/stops/{rng.choice(stops)}"
                assert client.put(f"{stop}/vote", json={"value": rng.choice([1, -1, 0])}).status_code == 200
                assert client.post(f"{stop}/comments", json={"body": "ok"}).status_code == 201
        for user in (owner, bob):
            use(client, user)
            served = client.get(f"/api/trips/{trip['id']}").content
            assert served == b'{"data":' + from_scratch(client, trip["id"], user["id"]) + b"}", f"step {step}: {name}"
        # What a patched view carries over instead of walking its days again.
        state = svc.trips.cached(trip["id"])
        view = state.view
        assert view.length == len(view.head) + sum(map(len, view.rest)), f"step {step}: {name}"
        assert json.loads(view.day_ids) == [d.id for d in state.trip.days], f"step {step}: {name}"
        use(client, owner)
    # The sequence reached what the test is about: swaps, and ops refused by a range after they changed the copy.
    assert {("swap_stops", 200), ("swap_stops", 422), ("update_trip", 422), ("add_day", 422)} <= outcomes


def test_a_failed_transaction_leaves_memory_as_committed(settings, monkeypatch):
    with make_client(settings) as client:
        signup(client)
        trip = new_trip(client)
        day = trip["days"][0]["id"]
        op(client, trip["id"], "insert_stop", dayId=day, name="Kept").raise_for_status()
        before = client.get(f"/api/trips/{trip['id']}").json()["data"]

        def broken(*args, **kwargs):  # fails after the op's rows were written in the transaction
            raise sqlite3.OperationalError("disk I/O error")

        monkeypatch.setattr(store, "append_message", broken)
        failed = op(client, trip["id"], "insert_stop", dayId=day, name="Lost")
        assert failed.status_code == 503 and failed.json()["error"]["code"] == "storage_unavailable"
        monkeypatch.undo()
        assert services(client).trips.cached(trip["id"]).trip == stored(settings, trip["id"])
        assert client.get(f"/api/trips/{trip['id']}").json()["data"] == before
        after = op(client, trip["id"], "insert_stop", dayId=day, name="Next").json()["data"]["trip"]
        assert [s["name"] for s in after["days"][0]["stops"]] == ["Kept", "Next"]
        assert after["version"] == before["version"] + 1


def test_an_op_queued_behind_one_that_fails_validates_again(client, settings, monkeypatch):
    owner = signup(client, "owner")
    trip = new_trip(client)
    day = trip["days"][0]["id"]
    svc = services(client)
    real_append = store.append_message

    def append(tx, trip_id, **fields):
        if "Boom" in fields["parts"][0]["text"]:
            raise sqlite3.OperationalError("disk I/O error")
        return real_append(tx, trip_id, **fields)

    monkeypatch.setattr(store, "append_message", append)

    async def chain():
        release = threading.Event()
        blocker = svc.db.write(lambda tx: release.wait(10))   # the writer is busy: ops queue up
        first = asyncio.ensure_future(apply_op(svc.trips, trip["id"], owner["id"], "insert_stop",
                                               {"dayId": day, "name": "Boom"}))
        second = asyncio.ensure_future(apply_op(svc.trips, trip["id"], owner["id"], "insert_stop",
                                                {"dayId": day, "name": "After"}))
        state = svc.trips.cached(trip["id"])
        while not (state.head and [s.name for s in state.head.days[0].stops] == ["Boom", "After"]):
            await asyncio.sleep(0.001)              # the second op validated against the first one's result
        release.set()
        await blocker
        done = await asyncio.gather(first, second, return_exceptions=True)
        assert isinstance(done[0], sqlite3.OperationalError) and done[1].summaries

    client.portal.call(chain)
    assert svc.trips.cached(trip["id"]).trip == stored(settings, trip["id"])
    after = client.get(f"/api/trips/{trip['id']}").json()["data"]
    assert [s["name"] for s in after["days"][0]["stops"]] == ["After"]
    assert after["version"] == trip["version"] + 1


def test_a_claimed_batch_that_fails_midway_leaves_nothing_for_the_next_op(client, settings):
    """A batch with a claim (an agent suggestion) whose second op fails is
    reported after the claim; the next op queued behind it must build on the
    committed trip, never on the first op's half-made edit."""
    owner = signup(client, "owner")
    trip = new_trip(client)
    day = trip["days"][0]["id"]
    svc = services(client)

    async def chain():
        release = threading.Event()
        blocker = svc.db.write(lambda tx: release.wait(10))   # the writer is busy: the ops queue up
        failing = asyncio.ensure_future(apply_ops(
            svc.trips, trip["id"], owner["id"],
            [("update_trip", {"title": "Half made"}), ("update_day", {"dayId": "no-such-day", "title": "x"})],
            claim=lambda tx: None))
        await asyncio.sleep(0.01)
        after = asyncio.ensure_future(apply_op(svc.trips, trip["id"], owner["id"], "update_day",
                                               {"dayId": day, "title": "Old town"}))
        await asyncio.sleep(0.01)
        release.set()
        await blocker
        return await asyncio.gather(failing, after, return_exceptions=True)

    failed, applied = client.portal.call(chain)
    assert isinstance(failed, NotFound) and applied.summaries
    data = client.get(f"/api/trips/{trip['id']}").json()["data"]
    assert data["title"] == trip["title"] and data["days"][0]["title"] == "Old town"
    assert stored(settings, trip["id"]).title == trip["title"]
    assert svc.trips.cached(trip["id"]).trip == stored(settings, trip["id"])


def test_an_op_that_races_its_actors_removal_is_refused(client, settings):
    owner = signup(client, "owner")
    bob = signup(client, "bob")
    use(client, owner)
    trip = new_trip(client)
    join(client, owner, trip["id"], bob)
    svc = services(client)

    async def race():
        task, release = await held_at_its_write(   # bob's op passed validation as a member
            svc.db, lambda: apply_op(svc.trips, trip["id"], bob["id"], "update_trip", {"title": "Bob's"}))
        await members.remove_member(svc.db, trip["id"], owner["id"], bob["id"])
        release()
        with pytest.raises(NotFound):
            await task

    client.portal.call(race)
    use(client, owner)
    assert client.get(f"/api/trips/{trip['id']}").json()["data"]["title"] == "Lisbon"
    assert stored(settings, trip["id"]).title == "Lisbon"


def test_concurrent_first_reads_share_one_load(settings):
    app = create_app(settings)
    with LiveServer(app) as server, httpx.Client(base_url=server.url) as c:
        c.post("/api/auth/signup", json={"username": "owner", "password": "correct horse"}).raise_for_status()
        trip = c.post("/api/trips", json={"title": "Herd", "startDate": "2026-12-01", "days": 2}).json()["data"]
        svc = app.state.services
        loads = []
        real = svc.db.read

        async def counted(fn, *args):
            loads.append(fn.__name__)
            await asyncio.sleep(0.05)  # a slow disk: every reader arrives while the load runs
            return await real(fn, *args)

        svc.db.read = counted
        for case in ("cold", "after a vote"):
            if case == "cold":
                svc.trips.changed(TripChanged(trip["id"], frozenset({"members"})))  # as if a member joined: dropped
            else:
                day = trip["days"][0]["id"]
                stop = c.post(f"/api/trips/{trip['id']}/ops/insert_stop?full=1",
                              json={"dayId": day, "name": "A"}).json()["data"]["trip"]["days"][0]["stops"][0]
                c.put(f"/api/trips/{trip['id']}/stops/{stop['id']}/vote", json={"value": 1}).raise_for_status()
            loads.clear()
            start, codes = threading.Barrier(20), []

            def read(start: threading.Barrier = start, codes: list = codes) -> None:
                # The process's TLS context: a default one reads the CA bundle again (~30 ms of CPU each).
                with httpx.Client(base_url=server.url, cookies=c.cookies, verify=tls_context()) as mine:
                    start.wait()
                    codes.append(mine.get(f"/api/trips/{trip['id']}").status_code)

            threads = [threading.Thread(target=read) for _ in range(20)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(20)
            assert codes == [200] * 20
            assert len(loads) == 1, (case, loads)
        assert c.get(f"/api/trips/{trip['id']}").json()["data"]["days"][0]["stops"][0]["votes"]["up"] == 1


def test_a_trip_let_go_while_its_op_ran_is_read_again(tmp_path):
    """An op holds its trip while its transaction waits; the trip is evicted
    meanwhile and a member is removed. After the op commits, the removed
    member must not be a member in memory."""
    from app.settings import Settings

    settings = Settings(db_path=str(tmp_path / "w.db"), uploads_dir=str(tmp_path / "u"), trip_cache_mb=0)
    with make_client(settings) as client:
        owner, bob = signup(client, "owner"), signup(client, "bob")
        use(client, owner)
        trip, other = new_trip(client), new_trip(client, title="Other")
        join(client, owner, trip["id"], bob)
        use(client, owner)
        svc = services(client)

        async def chain():
            release = threading.Event()
            blocker = svc.db.write(lambda tx: release.wait(10))   # the writer is busy: the writes queue up
            removal = asyncio.ensure_future(members.remove_member(svc.db, trip["id"], owner["id"], bob["id"]))
            await asyncio.sleep(0.01)
            edit = asyncio.ensure_future(apply_op(svc.trips, trip["id"], owner["id"], "update_trip", {"title": "New"}))
            await asyncio.sleep(0.01)
            await svc.trips.get(other["id"])      # a budget of 0: the op's trip is let go
            release.set()
            await blocker
            await removal
            await edit

        client.portal.call(chain)
        assert client.portal.call(svc.trips.membership, trip["id"], bob["id"]) == (None, None)
        use(client, bob)
        assert client.get(f"/api/trips/{trip['id']}").status_code == 404


def test_trips_in_memory_are_bounded_by_bytes(tmp_path):
    from app.settings import Settings

    settings = Settings(db_path=str(tmp_path / "w.db"), uploads_dir=str(tmp_path / "u"), trip_cache_mb=0)
    with make_client(settings) as client:
        signup(client)
        trips = [new_trip(client, title=f"Trip {i}") for i in range(3)]
        for _ in range(2):
            for t in trips:
                assert client.get(f"/api/trips/{t['id']}").json()["data"]["title"] == t["title"]
                assert len(services(client).trips) == 1   # a budget of 0 keeps only the trip in use
        op(client, trips[0]["id"], "update_trip", title="Renamed").raise_for_status()
        assert client.get(f"/api/trips/{trips[0]['id']}").json()["data"]["title"] == "Renamed"
