"""A trip's days kept encoded in SQLite (migration 0036, app/trips/stored_days.py):
after a restart the first read joins them, and answers exactly what a build
from the trip would; days stored for another version of the trip, days with
votes or comments since, and missing days are built instead. Tested from
outside: HTTP through the real app on a SQLite file, a restart being a new
app on the same file."""

from __future__ import annotations

import json
import sqlite3

from helpers import add_sights, make_client, new_trip, op, signup, use


def _trip(client) -> tuple[dict, str]:
    user = signup(client)
    trip = new_trip(client, days=3)
    add_sights(client, trip, 4)
    return user, trip["id"]


def _read(client, trip_id: str) -> bytes:
    r = client.get(f"/api/trips/{trip_id}")
    assert r.status_code == 200, r.text
    return r.content


def _stored(settings, trip_id: str) -> tuple[int | None, int, dict[str, bytes]]:
    """(the version the days are stored for, the trip's version, {day id: body})."""
    with sqlite3.connect(settings.db_path) as conn:
        stamp = conn.execute("SELECT version FROM trip_bodies WHERE trip_id = ?", (trip_id,)).fetchone()
        version = conn.execute("SELECT version FROM trips WHERE id = ?", (trip_id,)).fetchone()[0]
        days = dict(conn.execute("SELECT day_id, body FROM day_bodies WHERE trip_id = ?", (trip_id,)).fetchall())
    return (stamp[0] if stamp else None), version, days


def _restarted(settings, user: dict, trip_id: str) -> bytes:
    with make_client(settings) as client:
        use(client, user)
        return _read(client, trip_id)


def _built(settings, user: dict, trip_id: str) -> bytes:
    """The trip read after a restart with nothing stored: built from its rows."""
    with sqlite3.connect(settings.db_path) as conn:
        conn.execute("DELETE FROM trip_bodies WHERE trip_id = ?", (trip_id,))
    return _restarted(settings, user, trip_id)


def test_a_restart_reads_the_stored_days_and_answers_the_same_bytes(settings):
    with make_client(settings) as client:
        user, trip_id = _trip(client)
        day_ids = [d["id"] for d in client.get(f"/api/trips/{trip_id}").json()["data"]["days"]]
        r = op(client, trip_id, "update_day", full=False, dayId=day_ids[1], title="Belém ☀ \"day\"")
        assert r.status_code == 200, r.text
        before = _read(client, trip_id)
    stamp, version, days = _stored(settings, trip_id)
    assert stamp == version and set(days) == set(day_ids)   # stored on the way out, for the trip's version
    assert _restarted(settings, user, trip_id) == before

    # The stored bytes are what the first read joins: a (harmless) change to one is served as it is.
    with sqlite3.connect(settings.db_path) as conn:
        conn.execute("UPDATE day_bodies SET body = CAST(replace(body, 'Belém', 'Belem') AS BLOB) WHERE day_id = ?",
                     (day_ids[1],))
    assert _restarted(settings, user, trip_id) == before.replace("Belém".encode(), b"Belem")
    assert _built(settings, user, trip_id) == before


def test_days_stored_for_another_version_are_built_again(settings):
    with make_client(settings) as client:
        user, trip_id = _trip(client)
        before = _read(client, trip_id)
    stamp, version, days = _stored(settings, trip_id)
    assert stamp == version and len(days) == 3
    # Another writer (a restored backup, a script) changes a stop and the
    # version. The trigger drops that stop's day; the other days stay stored,
    # for a version that is no longer the trip's.
    with sqlite3.connect(settings.db_path) as conn:
        conn.execute("UPDATE stops SET name = 'Renamed' WHERE trip_id = ? AND name = 'Sight 0.0'", (trip_id,))
        conn.execute("UPDATE trips SET version = version + 1 WHERE id = ?", (trip_id,))
    after = _restarted(settings, user, trip_id)
    assert b'"name":"Renamed"' in after and b"Sight 0.0" not in after
    assert after.replace(b"Renamed", b"Sight 0.0") != before   # the version moved too
    assert _stored(settings, trip_id)[0] == version + 1     # and the read stored them again
    assert _restarted(settings, user, trip_id) == after


def test_a_missing_day_is_built_and_the_others_are_joined(settings):
    with make_client(settings) as client:
        user, trip_id = _trip(client)
        before = _read(client, trip_id)
    _, _, days = _stored(settings, trip_id)
    with sqlite3.connect(settings.db_path) as conn:
        conn.execute("DELETE FROM day_bodies WHERE day_id = ?", (next(iter(days)),))
    assert _restarted(settings, user, trip_id) == before
    assert len(_stored(settings, trip_id)[2]) == 3   # stored again


def test_votes_and_comments_since_the_days_were_stored_are_shown(settings):
    with make_client(settings) as client:
        user, trip_id = _trip(client)
        trip = client.get(f"/api/trips/{trip_id}").json()["data"]
        stop = trip["days"][2]["stops"][1]["id"]
    assert len(_stored(settings, trip_id)[2]) == 3
    with make_client(settings) as client:   # a vote and a comment change no version
        use(client, user)
        assert client.put(f"/api/trips/{trip_id}/stops/{stop}/vote", json={"value": 1}).status_code == 200
        assert client.post(f"/api/trips/{trip_id}/stops/{stop}/comments", json={"body": "Yes"}).status_code == 201
        voted = _read(client, trip_id)
    after = _restarted(settings, user, trip_id)
    assert after == voted
    shown = [s for d in json.loads(after)["data"]["days"] for s in d["stops"] if s["id"] == stop][0]
    assert shown["votes"] == {"up": 1, "down": 0, "mine": 1} and shown["commentCount"] == 1
    assert _built(settings, user, trip_id) == after


def test_ops_after_a_restart_answer_what_a_build_would(settings):
    with make_client(settings) as client:
        user, trip_id = _trip(client)
        trip = client.get(f"/api/trips/{trip_id}").json()["data"]
    first = trip["days"][0]["stops"]
    with make_client(settings) as client:
        use(client, user)
        _read(client, trip_id)   # from the stored days
        r = op(client, trip_id, "update_stop", full=False, stopId=first[1]["id"], durationMin=95, note="naïve")
        assert r.status_code == 200, r.text
        changed = r.json()["data"]["change"]["days"]
        assert [d["id"] for d in changed] == [trip["days"][0]["id"]]
        r = op(client, trip_id, "move_stop", stopId=first[0]["id"], toDayId=trip["days"][2]["id"], position=1)
        assert r.status_code == 200, r.text
        after = _read(client, trip_id)
    assert _restarted(settings, user, trip_id) == after
    assert _built(settings, user, trip_id) == after


def test_a_fix_made_while_the_server_is_stopped_is_seen_even_without_a_new_version(settings):
    """docs/architecture.md: edits from outside need a restart. A manual fix
    rarely bumps the version; the stored bytes of what it changed go with it."""
    with make_client(settings) as client:
        user, trip_id = _trip(client)
        trip = client.get(f"/api/trips/{trip_id}").json()["data"]
    assert len(_stored(settings, trip_id)[2]) == 3
    with sqlite3.connect(settings.db_path) as conn:
        conn.execute("UPDATE stops SET name = 'Fixed by hand' WHERE id = ?", (trip["days"][1]["stops"][2]["id"],))
        conn.execute("UPDATE days SET title = 'Retitled' WHERE id = ?", (trip["days"][2]["id"],))
    stamp, version, days = _stored(settings, trip_id)
    assert stamp == version and set(days) == {trip["days"][0]["id"]}
    after = _restarted(settings, user, trip_id)
    assert b'"name":"Fixed by hand"' in after and b'"title":"Retitled"' in after
    assert _built(settings, user, trip_id) == after
    with sqlite3.connect(settings.db_path) as conn:   # a new start date: every day's date moves
        conn.execute("UPDATE trips SET start_date = '2027-01-05' WHERE id = ?", (trip_id,))
    assert _stored(settings, trip_id)[2] == {}
    moved = json.loads(_restarted(settings, user, trip_id))["data"]
    assert [d["date"] for d in moved["days"]] == ["2027-01-05", "2027-01-06", "2027-01-07"]


def test_an_op_before_any_read_after_a_restart_is_not_answered_from_older_stored_days(settings):
    with make_client(settings) as client:
        user, trip_id = _trip(client)
        trip = client.get(f"/api/trips/{trip_id}").json()["data"]
    stop = trip["days"][1]["stops"][0]["id"]
    with make_client(settings) as client:   # the first request after the restart is a write
        use(client, user)
        r = op(client, trip_id, "update_stop", stopId=stop, durationMin=111, name="Changed first")
        assert r.status_code == 200, r.text
        echoed = json.dumps(r.json()["data"]["trip"], ensure_ascii=False, separators=(",", ":")).encode()
        after = _read(client, trip_id)
    assert b'"name":"Changed first"' in after and b'"durationMin":111' in after
    assert echoed in after
    assert _built(settings, user, trip_id) == after
