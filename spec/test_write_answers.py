"""A write answers what it changed, not the whole trip (issue 26): the
version it started from, the trip's own fields, the order of the days and
only the days (and members, expenses, preferences) that changed; the whole
trip with ?full=1. The page's own patch code (public/planner/patch.js),
run under node, turns the trip before each write plus its answer into
exactly the trip the server reads afterwards."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import add_sights, join, new_trip, op, signup, use

ROOT = Path(__file__).resolve().parent.parent


def _read(client, trip_id: str) -> dict:
    r = client.get(f"/api/trips/{trip_id}")
    assert r.status_code == 200, r.text
    return r.json()["data"]


def _stops(client, trip: dict, per_day: int) -> dict:
    add_sights(client, trip, per_day)
    return _read(client, trip["id"])


def test_writes_answer_what_changed_and_the_page_applies_it(client, tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH: the page's patch code cannot run (install Node 20+)", pytrace=False)
    owner = signup(client)
    trip = new_trip(client, days=3)
    t = trip["id"]
    friend = signup(client)
    join(client, owner, t, friend)
    use(client, owner)
    trip = _stops(client, trip, 4)
    d0, d1, d2 = (d["id"] for d in trip["days"])
    s00, s01 = trip["days"][0]["stops"][0]["id"], trip["days"][0]["stops"][1]["id"]
    s10 = trip["days"][1]["stops"][0]["id"]
    for stop_id, value in ((s00, 1), (s10, -1)):   # the writer's own votes are spliced into its answer
        assert client.put(f"/api/trips/{t}/stops/{stop_id}/vote", json={"value": value}).status_code == 200
    use(client, friend)
    assert client.put(f"/api/trips/{t}/stops/{s01}/vote", json={"value": 1}).status_code == 200
    use(client, owner)
    writes = [
        ("update_stop", lambda: op(client, t, "update_stop", stopId=s00, durationMin=75, full=False), {d0}),
        ("move_stop across days", lambda: op(client, t, "move_stop", stopId=s01, toDayId=d2, position=0, full=False),
         {d0, d2}),
        ("several edits as one change", lambda: client.post(f"/api/trips/{t}/ops", json={"edits": [
            {"op": "update_stop", "args": {"stopId": s10, "note": "Book ahead"}},
            {"op": "update_day", "args": {"dayId": d1, "title": "Sintra"}}]}), {d1}),
        ("reorder_days", lambda: op(client, t, "reorder_days", dayIds=[d2, d0, d1], full=False), {d0, d1, d2}),
        ("add_expense", lambda: op(client, t, "add_expense", title="Tram", amountMinor=300, currency="EUR",
                                   paidBy=owner["id"], full=False), set()),
        ("add_day", lambda: op(client, t, "add_day", full=False), None),
        ("delete_day", lambda: op(client, t, "delete_day", dayId=d1, full=False), None),
        ("update_trip", lambda: client.patch(f"/api/trips/{t}", json={"title": "Lisbon and Sintra"}), set()),
        ("set_trip_preferences", lambda: op(client, t, "set_trip_preferences", pace="packed", full=False), None),
    ]
    cases = []
    for name, write, changed_days in writes:
        before = _read(client, t)
        r = write()
        assert r.status_code == 200, (name, r.text)
        answer = r.json()["data"]
        assert "trip" not in answer and answer["ok"] is True and answer["summary"], name
        change = answer["change"]
        after = _read(client, t)
        assert (change["fromVersion"], change["version"]) == (before["version"], after["version"]), name
        if changed_days is not None:
            assert {d["id"] for d in change["days"]} == changed_days, name
            if len(changed_days) <= 1:   # a day of three, or none: much less than the trip
                assert len(r.content) < len(json.dumps(after)) / 2, name
        stale = {**before, "version": before["version"] - 1}
        cases.append({"name": name, "before": before, "change": change, "after": after, "stale": stale})
    (tmp_path / "cases.json").write_text(json.dumps(cases), encoding="utf-8")
    proc = subprocess.run([node, str(ROOT / "spec/js/patch_check.mjs"), str(tmp_path / "cases.json")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]


def test_full_1_answers_the_whole_trip(client):
    signup(client)
    trip = new_trip(client, days=2)
    r = client.post(f"/api/trips/{trip['id']}/ops/update_day?full=1", json={"dayId": trip["days"][0]["id"],
                                                                            "title": "Belém"})
    assert r.status_code == 200, r.text
    answer = r.json()["data"]
    assert "change" not in answer and answer["trip"]["days"][0]["title"] == "Belém"
    assert answer["trip"] == _read(client, trip["id"])

