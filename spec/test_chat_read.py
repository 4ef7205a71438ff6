"""How far a member has read a trip's group chat (app/uistate.py, the page's
unread count): members only, forward only, never past the newest message,
kept per member and across that member's devices, gone with the membership."""

from __future__ import annotations

from helpers import join, new_trip, op, signup, use


def read(client, trip_id: str):
    return client.get(f"/api/trips/{trip_id}/chat/read")


def mark(client, trip_id: str, seq):
    return client.put(f"/api/trips/{trip_id}/chat/read", json={"seq": seq})


def test_read_marker_moves_forward_only_and_stops_at_the_newest_message(client):
    alice = signup(client, "alice")
    trip = new_trip(client)
    t, day = trip["id"], trip["days"][0]["id"]
    assert read(client, t).json()["data"] == {"seq": 0}
    for n in range(3):                                       # three timeline rows (edit lines): seq 1..3
        op(client, t, "update_day", dayId=day, title=f"Day {n}")
    assert mark(client, t, 2).json()["data"] == {"seq": 2}
    assert mark(client, t, 1).json()["data"] == {"seq": 2}   # an older device's report does not move it back
    assert mark(client, t, 99).json()["data"] == {"seq": 3}  # not past what exists
    client.cookies.clear()                                    # alice on another device: a second session
    r = client.post("/api/auth/signin", json={"username": "alice", "password": "correct horse"})
    assert r.status_code == 200 and r.cookies.get("wayline_session") != alice["token"]
    assert read(client, t).json()["data"] == {"seq": 3}
    for bad in (-1, "3", 1.5, None, True):
        r = mark(client, t, bad)
        assert r.status_code == 422 and r.json()["error"]["field"] == "seq", bad
    assert client.put(f"/api/trips/{t}/chat/read", json={"seq": 1, "extra": 1}).status_code == 422
    use(client, signup(client, "mallory"))
    assert read(client, t).status_code == 404                 # not a member
    assert mark(client, t, 1).status_code == 404
    client.cookies.clear()
    assert read(client, t).status_code == 401


def test_each_member_has_their_own_and_a_removed_member_loses_it(client):
    alice, bob = signup(client, "alice"), signup(client, "bob")
    use(client, alice)
    trip = new_trip(client)
    t = trip["id"]
    op(client, t, "update_day", dayId=trip["days"][0]["id"], title="Arrival")
    join(client, alice, t, bob)
    assert mark(client, t, 1).json()["data"] == {"seq": 1}
    use(client, alice)
    assert read(client, t).json()["data"] == {"seq": 0}
    assert client.delete(f"/api/trips/{t}/members/{bob['id']}").status_code in (200, 204)
    join(client, alice, t, bob)                               # back in: a fresh start, nothing kept
    assert read(client, t).json()["data"] == {"seq": 0}
