"""The change signal: every write that changes what a page shows is
announced once, after its commit, by the database layer; the next read never
serves a stale TripDto or ETag."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from datetime import date

import anyio
import pytest

from app.db import Database
from app.changes import Phase, TripEvent
from app.trips.ops import TRIP_OPS
from helpers import join, make_client, new_trip, op, signup, use
from standins.google_standin import google_settings

TRIP_DATE = date(2026, 12, 10)


def read(client, trip_id, etag=None):
    headers = {"If-None-Match": etag} if etag else {}
    r = client.get(f"/api/trips/{trip_id}", headers=headers)
    return r.status_code, r.headers.get("etag"), (r.json()["data"] if r.status_code == 200 else None)


def fresh_after(client, trip_id, write, check):
    """Read (warming the cache), write, then read with the old ETag: the
    answer must be a new 200 that shows the write."""
    status, etag, _ = read(client, trip_id)
    assert status == 200
    write()
    status, new_etag, trip = read(client, trip_id, etag)
    assert status == 200 and new_etag != etag, "a stale ETag was honoured after a write"
    assert check(trip), "the next read does not show the write"


@pytest.fixture
def trip(client):
    owner = signup(client, "owner")
    t = new_trip(client, days=3)
    day = t["days"][0]["id"]
    stop = op(client, t["id"], "insert_stop", dayId=day, name="Museu", lat=38.71, lng=-9.13).json()["data"]["trip"]
    return {"owner": owner, "id": t["id"], "trip": stop}


def _stop(trip):
    return trip["days"][0]["stops"][0]


def _op_case(name, t):
    """(args, what the next read must show) for one registry op on trip `t`."""
    days = [d["id"] for d in t["days"]]
    stops = [st for d in t["days"] for st in d["stops"]]
    s = stops[0]["id"] if stops else None
    me = t["members"][0]["userId"]
    cases = {
        "update_trip": ({"title": "Lisbon again"}, lambda x: x["title"] == "Lisbon again"),
        "add_day": ({"title": "Extra"}, lambda x: x["days"][-1]["title"] == "Extra"),
        "update_day": ({"dayId": days[1], "title": "Sintra"}, lambda x: x["days"][1]["title"] == "Sintra"),
        "reorder_days": ({"dayIds": days[::-1]}, lambda x: [d["id"] for d in x["days"]] == days[::-1]),
        "delete_day": ({"dayId": days[-1]}, lambda x: days[-1] not in [d["id"] for d in x["days"]]),
        "insert_stop": ({"dayId": days[0], "name": "Café"},
                        lambda x: any(st["name"] == "Café" for d in x["days"] for st in d["stops"])),
        "update_stop": ({"stopId": s, "setTime": "10:30"},
                        lambda x: any(st["setTime"] == "10:30" for d in x["days"] for st in d["stops"])),
        "move_stop": ({"stopId": s, "toDayId": days[1], "position": 0},
                      lambda x: x["days"][1]["stops"][0]["id"] == s),
        "swap_stops": ({"stopId": s, "otherStopId": stops[-1]["id"]},
                       lambda x: [st["id"] for d in x["days"] for st in d["stops"]][-1] == s),
        "delete_stop": ({"stopId": s}, lambda x: all(st["id"] != s for d in x["days"] for st in d["stops"])),
        "add_expense": ({"title": "Tram", "amountMinor": 300, "currency": "EUR", "paidBy": me},
                        lambda x: x["expenses"][-1]["title"] == "Tram"),
        "update_expense": ({"expenseId": t["expenses"][-1]["id"] if t["expenses"] else None, "amountMinor": 2500},
                           lambda x: x["expenses"][-1]["amountMinor"] == 2500),
        "delete_expense": ({"expenseId": t["expenses"][-1]["id"] if t["expenses"] else None},
                           lambda x: x["expenses"] == []),
        "set_trip_preferences": ({"pace": "packed"}, lambda x: x["preferences"]["pace"] == "packed"),
    }
    return cases[name]


OP_ORDER = ["update_trip", "add_day", "update_day", "reorder_days", "insert_stop", "update_stop", "move_stop",
            "swap_stops", "add_expense", "update_expense", "delete_expense", "set_trip_preferences", "delete_stop",
            "delete_day"]


def test_every_op_is_seen_by_the_next_read(client, trip):
    assert sorted(OP_ORDER) == sorted(TRIP_OPS), "each registry op needs a case here"
    trip_id = trip["id"]
    for name in OP_ORDER:
        args, check = _op_case(name, read(client, trip_id)[2])
        fresh_after(client, trip_id, lambda name=name, args=args: op(client, trip_id, name, **args).raise_for_status(),
                    check)


def test_social_member_and_preference_routes_are_seen_by_the_next_read(client, trip):
    trip_id, owner = trip["id"], trip["owner"]
    stop = _stop(trip["trip"])["id"]
    base = f"/api/trips/{trip_id}"
    fresh_after(client, trip_id, lambda: client.put(f"{base}/stops/{stop}/vote", json={"value": 1}).raise_for_status(),
                lambda x: _stop(x)["votes"] == {"up": 1, "down": 0, "mine": 1})
    fresh_after(client, trip_id,
                lambda: client.post(f"{base}/stops/{stop}/comments", json={"body": "Book ahead"}).raise_for_status(),
                lambda x: _stop(x)["commentCount"] == 1)
    fresh_after(client, trip_id, lambda: client.patch(base, json={"title": "Porto"}).raise_for_status(),
                lambda x: x["title"] == "Porto")
    fresh_after(client, trip_id, lambda: client.put(f"{base}/preferences", json={"pace": "relaxed"}).raise_for_status(),
                lambda x: x["preferences"]["pace"] == "relaxed")

    bob = signup(client, "bob")
    use(client, owner)
    fresh_after(client, trip_id, lambda: join(client, owner, trip_id, bob, role="editor"),
                lambda x: any(m["userId"] == bob["id"] for m in x["members"]))
    # bob votes; the owner's cached bytes must show it
    use(client, owner)
    status, etag, _ = read(client, trip_id)
    use(client, bob)
    client.put(f"{base}/stops/{stop}/vote", json={"value": -1}).raise_for_status()
    use(client, owner)
    status, _, seen = read(client, trip_id, etag)
    assert status == 200 and _stop(seen)["votes"] == {"up": 1, "down": 1, "mine": 1}

    fresh_after(client, trip_id, lambda: client.patch(f"{base}/members/{bob['id']}", json={"role": "viewer"})
                .raise_for_status(),
                lambda x: next(m for m in x["members"] if m["userId"] == bob["id"])["role"] == "viewer")
    fresh_after(client, trip_id, lambda: client.delete(f"{base}/members/{bob['id']}").raise_for_status(),
                lambda x: _stop(x)["votes"]["down"] == 0 and all(m["userId"] != bob["id"] for m in x["members"]))
    use(client, bob)
    assert client.get(base).status_code == 404, "a removed member's cached access is gone at once"


def test_applying_a_draft_is_seen_by_the_next_read(settings, google_standin):
    google_standin.today = TRIP_DATE
    with make_client(google_settings(settings, google_standin)) as client:
        signup(client, "owner")
        t = new_trip(client, days=1)
        day = t["days"][0]["id"]
        op(client, t["id"], "insert_stop", dayId=day, name="Sé", lat=38.7098, lng=-9.1336).raise_for_status()
        found = client.post(f"/api/trips/{t['id']}/days/{day}/eat", json={"meal": "lunch"}).json()["data"]
        draft = found["suggestions"][0]
        fresh_after(client, t["id"],
                    lambda: client.post(f"/api/trips/{t['id']}/drafts/{draft['draftId']}/apply", json={})
                    .raise_for_status(),
                    lambda x: any(s["placeId"] == draft["place"]["placeId"] for s in x["days"][0]["stops"]))


def test_deleting_a_trip_drops_it_for_everyone(client, trip):
    trip_id = trip["id"]
    assert read(client, trip_id)[0] == 200
    assert client.delete(f"/api/trips/{trip_id}").status_code == 200
    assert client.get(f"/api/trips/{trip_id}").status_code == 404


# -- the database layer ---------------------------------------------------------


def test_listeners_hear_once_per_trip_after_the_commit(tmp_path):
    async def main():
        db = await Database.open(str(tmp_path / "w.db"))
        heard = []

        def listener(trip_id, kinds):
            # Called after COMMIT: another connection already sees the row.
            with sqlite3.connect(db.path) as other:
                count = other.execute("SELECT COUNT(*) FROM app_settings").fetchone()[0]
            heard.append((trip_id, kinds, count))

        db.changes.subscribe(Phase.CACHES, TripEvent, lambda event: listener(event.trip_id, event.kinds()))
        try:
            def work(tx):
                tx.execute("INSERT INTO app_settings (key, value) VALUES ('k', 'v')")
                tx.touch("t1", "content")
                tx.touch("t1", "timeline")
                tx.touch("t2", "social")
                assert heard == [], "nothing is announced before the commit"

            await db.write(work)

            def rolled_back(tx):
                tx.touch("t3", "content")
                raise KeyError("rolled back")

            with pytest.raises(KeyError):
                await db.write(rolled_back)
        finally:
            await db.close()
        assert heard == [("t1", frozenset({"content", "timeline"}), 1), ("t2", frozenset({"social"}), 1)]

    anyio.run(main)


def test_a_write_to_trip_data_without_a_touch_is_refused(tmp_path):
    async def main():
        db = await Database.open(str(tmp_path / "w.db"))
        try:
            def untouched(tx):
                tx.execute("INSERT INTO users (id, username, display_name, password_hash, created_at) "
                           "VALUES ('u', 'u', 'u', 'x', 'now')")
                tx.execute("INSERT INTO trips (id, title, start_date, timezone, currency, created_by, "
                           "created_at, updated_at) VALUES ('t', 'T', '2026-01-01', 'UTC', 'EUR', 'u', "
                           "'now', 'now')")

            with pytest.raises(RuntimeError, match="tx.touch"):
                await db.write(untouched)
            assert await db.fetchval("SELECT COUNT(*) FROM users") == 0, "the whole transaction rolled back"
            with pytest.raises(ValueError):
                await db.write(lambda tx: tx.touch("t", "everything"))
        finally:
            await db.close()

    anyio.run(main)


def test_a_transaction_in_one_hop_keeps_the_guard_and_announces_after_its_callbacks(tmp_path):
    async def main():
        db = await Database.open(str(tmp_path / "w.db"))
        heard = []
        db.changes.subscribe(Phase.CACHES, TripEvent,
                             lambda event: heard.append(("announced", event.trip_id, event.kinds())))
        try:
            def untouched(tx):
                tx.execute("INSERT INTO users (id, username, display_name, password_hash, created_at) "
                           "VALUES ('u', 'u', 'u', 'x', 'now')")
                tx.execute("INSERT INTO trips (id, title, start_date, timezone, currency, created_by, created_at, "
                           "updated_at) VALUES ('t', 'T', '2026-01-01', 'UTC', 'EUR', 'u', 'now', 'now')")
                tx.after_commit(lambda: heard.append("callback"))

            with pytest.raises(RuntimeError, match="tx.touch"):
                await db.write(untouched)
            assert await db.fetchval("SELECT COUNT(*) FROM users") == 0 and heard == []

            def touched(tx):
                untouched(tx)
                tx.touch("t", "content")
                return "done"

            assert await db.write(touched) == "done"
            assert heard == ["callback", ("announced", "t", frozenset({"content"}))]
        finally:
            await db.close()

    anyio.run(main)


def test_a_cancelled_caller_still_gets_its_commit_announced(tmp_path):
    async def main():
        db = await Database.open(str(tmp_path / "w.db"))
        heard = []
        db.changes.subscribe(Phase.CACHES, TripEvent, lambda event: heard.append(event.trip_id))
        release = threading.Event()
        try:
            blocker = db.write(lambda tx: release.wait(10))   # the writer is busy
            caller = asyncio.ensure_future(db.write(
                lambda tx: (tx.execute("INSERT INTO app_settings (key, value) VALUES ('k', 'v')"),
                            tx.touch("t1", "social"))))
            await asyncio.sleep(0.05)
            caller.cancel()                                          # e.g. the client hung up
            release.set()
            await blocker
            with pytest.raises(asyncio.CancelledError):
                await caller
            for _ in range(100):
                if heard:
                    break
                await asyncio.sleep(0.01)
            assert heard == ["t1"] and await db.fetchval("SELECT value FROM app_settings WHERE key = 'k'") == "v"
        finally:
            await db.close()

    anyio.run(main)


def test_transactions_queued_behind_a_busy_writer_commit_together_and_a_failing_one_alone_fails(tmp_path):
    """Group commit: what queued while the writer was busy commits in one
    transaction, announced in queue order; when one of them fails, each runs
    again on its own, so the failure commits nothing and the others commit."""
    async def main():
        db = await Database.open(str(tmp_path / "w.db"))
        heard, statements = [], []
        db.changes.subscribe(Phase.CACHES, TripEvent, lambda event: heard.append(event.trip_id))
        writer = db._writer   # idle: its connection may be traced from here
        writer.conn.set_trace_callback(lambda sql: (statements.append(sql.split()[0].upper()), writer._trace(sql)))
        release = threading.Event()

        def insert(key: str, fail: bool = False, untouched: bool = False):
            def work(tx):
                tx.execute("INSERT INTO app_settings (key, value) VALUES (?, 'v')", (key,))
                if untouched:
                    tx.execute("UPDATE trips SET title = 'x' WHERE id = 'none'")   # a trip table, no touch
                else:
                    tx.touch(key, "social")
                if fail:
                    raise LookupError(key)
                return key
            return work

        async def run_behind_a_busy_writer(works):
            blocker = db.write(lambda tx: release.wait(10))
            await asyncio.sleep(0.05)                     # the writer has it
            waits = [db.write(work) for work in works]
            release.set()
            await blocker
            release.clear()
            return await asyncio.gather(*waits, return_exceptions=True)

        try:
            assert await run_behind_a_busy_writer([insert("a"), insert("b"), insert("c")]) == ["a", "b", "c"]
            assert statements[-5:] == ["BEGIN", "INSERT", "INSERT", "INSERT", "COMMIT"]   # one transaction
            assert heard == ["a", "b", "c"]

            heard.clear()
            d, e, f, g = await run_behind_a_busy_writer([insert("d"), insert("e", fail=True), insert("f"),
                                                         insert("g", untouched=True)])
            assert d == "d" and isinstance(e, LookupError) and f == "f" and isinstance(g, RuntimeError)
            assert heard == ["d", "f"]
            assert sorted(r[0] for r in await db.fetchall("SELECT key FROM app_settings")) == ["a", "b", "c", "d", "f"]
        finally:
            await db.close()

    anyio.run(main)
