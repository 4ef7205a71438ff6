"""Ops made offline and sent later with `madeOnVersion` (app/trips/replay.py):
applied on the trip as it is now, unless what they name is gone (404) or
another member changed it after that version (409 changed_meanwhile)."""

from __future__ import annotations

import json
from pathlib import Path

from app.trips.ops import TRIP_OPS
from helpers import join, new_trip, op, signup, use
from nodetest import node_test

ROOT = Path(__file__).resolve().parent.parent


def scene(client):
    """Alice's trip with Bob as an editor, two stops on day 1; the client acts as Alice."""
    alice = signup(client, "alice")
    trip = new_trip(client, days=2)
    day1, day2 = (d["id"] for d in trip["days"])
    for name in ("Castle", "Belém"):
        assert op(client, trip["id"], "insert_stop", dayId=day1, name=name).status_code == 200
    bob = signup(client, "bob")
    join(client, alice, trip["id"], bob)
    use(client, alice)
    current = client.get(f"/api/trips/{trip['id']}").json()["data"]
    stops = {s["name"]: s["id"] for s in current["days"][0]["stops"]}
    return alice, bob, trip["id"], day1, day2, stops, current["version"]


def names(client, trip_id):
    return [[s["name"] for s in d["stops"]] for d in client.get(f"/api/trips/{trip_id}").json()["data"]["days"]]


def test_the_page_learns_which_ops_it_may_keep_offline_from_the_registry(client):
    offline = client.get("/api/config").json()["data"]["offlineOps"]
    assert offline == [name for name, spec in TRIP_OPS.items() if spec.replay]
    assert {"insert_stop", "move_stop", "update_stop", "update_day", "add_expense"} <= set(offline)
    # Deletes need a connection (their buttons carry data-needs-server): a member never has one waiting.
    need_server = {"delete_stop", "delete_expense", "delete_day", "reorder_days", "swap_stops", "update_trip"}
    assert not need_server & set(offline)


def test_every_op_the_page_keeps_offline_shows_in_its_picture_of_the_trip(client):
    """public/offline/project.js lays each of them over the trip (spec/js/project.test.mjs, given the
    list in spec/fixtures/offline_ops.json, which is what the page gets): one left out would look lost."""
    fixture = json.loads((ROOT / "spec" / "fixtures" / "offline_ops.json").read_text(encoding="utf-8"))
    assert fixture["offlineOps"] == client.get("/api/config").json()["data"]["offlineOps"]
    node_test(ROOT / "spec" / "js" / "project.test.mjs")


def test_the_page_sends_kept_writes_in_order_past_a_refused_one_and_says_why_in_words():
    """public/offline/outbox.js back online: a refused write (409, a trip its author was removed from) is
    kept with its reason, the ones after it still go, a 503 keeps it waiting under the same key; the reason
    reads in words (offline/words.js `refusalText`), never the id the API names a gone stop by."""
    node_test(ROOT / "spec" / "js" / "outbox.test.mjs")


def test_nothing_arriving_after_signing_out_is_kept_on_the_device():
    """public/offline/kept.js and outbox.js: a read, a trip page's copy or a kept write's refusal that
    arrives after the device was cleared (signing out while a trip's reviews, thumbnails or kept writes were
    on their way) is not stored again for the next person to open offline."""
    node_test(ROOT / "spec" / "js" / "kept.test.mjs")


def test_an_offline_move_lands_on_a_newer_version_when_others_changed_other_things(client):
    alice, bob, trip_id, day1, day2, stops, made_on = scene(client)
    use(client, bob)
    assert op(client, trip_id, "insert_stop", dayId=day2, name="Sintra").status_code == 200
    assert op(client, trip_id, "update_stop", stopId=stops["Belém"], note="Bring water").status_code == 200
    use(client, alice)
    r = op(client, trip_id, "move_stop", stopId=stops["Castle"], toDayId=day2, position=0, madeOnVersion=made_on)
    assert r.status_code == 200, r.text
    assert names(client, trip_id) == [["Belém"], ["Castle", "Sintra"]]
    # With baseVersion the same op is refused: the whole trip changed since.
    r = op(client, trip_id, "move_stop", stopId=stops["Castle"], toDayId=day1, position=0, baseVersion=made_on)
    assert r.status_code == 409 and r.json()["error"]["code"] == "stale"


def test_a_stop_another_member_moved_meanwhile_is_not_moved_again(client):
    alice, bob, trip_id, day1, day2, stops, made_on = scene(client)
    use(client, bob)
    assert op(client, trip_id, "move_stop", stopId=stops["Castle"], toDayId=day2, position=0).status_code == 200
    use(client, alice)
    r = op(client, trip_id, "move_stop", stopId=stops["Castle"], toDayId=day1, position=1, madeOnVersion=made_on)
    assert r.status_code == 409
    error = r.json()["error"]
    assert error["code"] == "changed_meanwhile" and error["by"] == "bob"
    assert error["message"] == ("Before your change reached the trip, bob moved “Castle” to Day 2, so this change was "
                                "not made.")
    assert names(client, trip_id) == [["Belém"], ["Castle"]]
    # Made after Bob's move (on its version), the same move goes through.
    version = client.get(f"/api/trips/{trip_id}").json()["data"]["version"]
    r = op(client, trip_id, "move_stop", stopId=stops["Castle"], toDayId=day1, position=1, madeOnVersion=version)
    assert r.status_code == 200
    assert names(client, trip_id) == [["Belém", "Castle"], []]


def test_a_stop_removed_meanwhile_is_reported_with_who_removed_it(client):
    alice, bob, trip_id, day1, day2, stops, made_on = scene(client)
    use(client, bob)
    assert op(client, trip_id, "delete_stop", stopId=stops["Castle"]).status_code == 200
    use(client, alice)
    r = op(client, trip_id, "move_stop", stopId=stops["Castle"], toDayId=day2, position=0, madeOnVersion=made_on)
    assert r.status_code == 409
    assert r.json()["error"]["message"] == ("Before your change reached the trip, bob removed “Castle” from Day 1, "
                                            "so this change was not made.")
    # A stop gone with its day: the op's own answer.
    use(client, bob)
    assert op(client, trip_id, "delete_day", dayId=day1).status_code == 200
    use(client, alice)
    r = op(client, trip_id, "update_stop", stopId=stops["Belém"], note="x", madeOnVersion=made_on)
    assert r.status_code == 404


def test_my_own_changes_never_conflict_with_my_queued_ones(client):
    alice, bob, trip_id, day1, day2, stops, made_on = scene(client)
    for args in ({"note": "Tickets online"}, {"setTime": "10:00"}):
        r = op(client, trip_id, "update_stop", stopId=stops["Castle"], madeOnVersion=made_on, **args)
        assert r.status_code == 200, r.text
    r = op(client, trip_id, "move_stop", stopId=stops["Castle"], toDayId=day2, position=0, madeOnVersion=made_on)
    assert r.status_code == 200, r.text
    castle = client.get(f"/api/trips/{trip_id}").json()["data"]["days"][1]["stops"][0]
    assert (castle["note"], castle["setTime"]) == ("Tickets online", "10:00")


def test_other_members_changes_to_other_things_or_before_the_version_do_not_conflict(client):
    alice, bob, trip_id, day1, day2, stops, _ = scene(client)
    use(client, bob)
    assert op(client, trip_id, "update_stop", stopId=stops["Castle"], note="Bob's note").status_code == 200
    made_on = client.get(f"/api/trips/{trip_id}").json()["data"]["version"]
    assert op(client, trip_id, "update_day", dayId=day2, title="Sintra day").status_code == 200
    use(client, alice)
    r = op(client, trip_id, "update_stop", stopId=stops["Castle"], durationMin=90, madeOnVersion=made_on)
    assert r.status_code == 200, r.text
    r = op(client, trip_id, "add_expense", title="Tram", amountMinor=300, currency="EUR", paidBy=alice["id"],
           madeOnVersion=0)
    assert r.status_code == 200, r.text


def test_only_replayable_ops_may_be_sent_later(client):
    alice, bob, trip_id, day1, day2, stops, made_on = scene(client)
    r = op(client, trip_id, "delete_stop", stopId=stops["Castle"], madeOnVersion=made_on)
    assert r.status_code == 422 and r.json()["error"]["field"] == "madeOnVersion"
    r = op(client, trip_id, "move_stop", stopId=stops["Castle"], toDayId=day2, position=0, madeOnVersion="3")
    assert r.status_code == 422
    assert names(client, trip_id) == [["Castle", "Belém"], []]


def test_a_stop_another_member_changed_in_a_change_of_several_ops_is_not_changed_again(client):
    """A review fix or an approved suggestion is one timeline line carrying each op's data: an offline edit
    to any stop it changed (not only its first op's) is refused, never laid silently over it."""
    alice, bob, trip_id, day1, day2, stops, made_on = scene(client)
    use(client, bob)
    r = client.post(f"/api/trips/{trip_id}/ops", json={"edits": [
        {"op": "update_stop", "args": {"stopId": stops["Castle"], "note": "Tickets at 9"}},
        {"op": "update_stop", "args": {"stopId": stops["Belém"], "setTime": "11:00"}}]})
    assert r.status_code == 200, r.text
    use(client, alice)
    r = op(client, trip_id, "update_stop", stopId=stops["Belém"], setTime="15:00", madeOnVersion=made_on)
    assert r.status_code == 409, r.text
    error = r.json()["error"]
    assert error["code"] == "changed_meanwhile" and error["by"] == "bob"
    assert error["message"].startswith("Before your change reached the trip, bob ") and "Belém" in error["message"]
    belem = client.get(f"/api/trips/{trip_id}").json()["data"]["days"][0]["stops"][1]
    assert (belem["name"], belem["setTime"]) == ("Belém", "11:00")


def test_a_stop_added_offline_after_a_stop_that_left_its_day_is_refused_in_words(client):
    """The stop a new one was to follow was moved to another day (or removed) meanwhile: the page shows the
    refusal to its author as it is, so it says what happened, not "afterStopId must be a stop of the same day"
    or the other stop's id."""
    alice, bob, trip_id, day1, day2, stops, made_on = scene(client)
    use(client, bob)
    assert op(client, trip_id, "move_stop", stopId=stops["Castle"], toDayId=day2, position=0).status_code == 200
    assert op(client, trip_id, "delete_stop", stopId=stops["Belém"]).status_code == 200
    use(client, alice)
    for after in (stops["Castle"], stops["Belém"]):
        r = op(client, trip_id, "insert_stop", dayId=day1, afterStopId=after, name="Pastéis", madeOnVersion=made_on)
        assert r.status_code == 409, r.text
        error = r.json()["error"]
        assert error["code"] == "changed_meanwhile"
        assert error["message"] == ("Before your change reached the trip, the stop you put “Pastéis” after was moved "
                                    "to another day or removed, so “Pastéis” was not added. Add it again where it "
                                    "fits now.")
    assert names(client, trip_id) == [[], ["Castle"]]
    # Sent online (no madeOnVersion), the op's own answer names the field for the API caller.
    r = op(client, trip_id, "insert_stop", dayId=day1, afterStopId=stops["Castle"], name="Pastéis")
    assert r.status_code == 422 and r.json()["error"]["field"] == "afterStopId"
