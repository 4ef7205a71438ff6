"""Trips homed on several machines (issue 25, docs/scaling.md): with
WAYLINE_TRIP_MACHINES, a request for a trip whose home is another machine
is answered with Fly's `fly-replay` header before anything reads it; the
trip's own machine serves it; without the setting nothing changes."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from app.settings import Settings
from app.web.trip_homes import home_of
from helpers import make_client, new_trip, signup

MACHINES = ("148e21ea7e9189", "3d8d9e1b2c7f08", "91852e7a4d3c62")


def trip_id_homed_on(machine: str) -> str:
    for n in itertools.count():
        trip_id = f"{n:016x}"
        if home_of(trip_id, MACHINES) == machine:
            return trip_id
    raise AssertionError("unreachable")


def test_a_trip_of_another_machine_is_replayed_there_unread(settings):
    here, there = MACHINES[0], MACHINES[1]
    on_fly = settings.with_(trip_machines=MACHINES, machine_id=here)
    with make_client(on_fly) as client:
        signup(client)
        theirs = trip_id_homed_on(there)
        for method, path in (("GET", f"/api/trips/{theirs}"), ("POST", f"/api/trips/{theirs}/ops/update_trip"),
                             ("GET", f"/api/trips/{theirs}/live"),
                             ("GET", f"/api/uploads/trips/{theirs}/0123456789abcdef.png"),
                             ("GET", f"/api/calendar/{theirs}.secret-part.ics")):   # a calendar link of that trip
            r = client.request(method, path, content=b"{not even json", headers={"content-type": "application/json"})
            assert r.status_code == 421, (path, r.text)
            assert r.headers["fly-replay"] == f"instance={there}"
            assert r.json()["error"]["code"] == "other_machine"

        # Already replayed once (Fly adds fly-replay-src) and still not ours: no loop, a clear 503.
        again = client.get(f"/api/trips/{theirs}", headers={"fly-replay-src": f"instance={there};t=1"})
        assert again.status_code == 503 and "fly-replay" not in again.headers
        assert again.json()["error"]["code"] == "other_machine_unreachable"

        # Our own trips and everything that is not one trip's are served here as always.
        ours = trip_id_homed_on(here)
        assert client.get(f"/api/trips/{ours}").status_code == 404   # no such trip, answered here
        assert client.get("/api/auth/me").json()["data"]["user"] is not None
        assert "fly-replay" not in client.get("/api/trips").headers


def test_homes_are_stable_spread_and_move_little_when_a_machine_is_added():
    ids = [f"{n:016x}" for n in range(3000)]
    homes = {trip_id: home_of(trip_id, MACHINES) for trip_id in ids}
    assert homes == {trip_id: home_of(trip_id, tuple(reversed(MACHINES))) for trip_id in ids}   # order-free
    assert min(Counter(homes.values()).values()) > 800   # about a third each
    grown = MACHINES + ("e2865d0f3b9a47",)
    moved = [trip_id for trip_id in ids if home_of(trip_id, grown) != homes[trip_id]]
    assert all(home_of(trip_id, grown) == "e2865d0f3b9a47" for trip_id in moved)   # only to the new machine
    assert 0.15 < len(moved) / len(ids) < 0.35   # about a quarter


def test_off_unless_configured(settings):
    with make_client(settings) as client:
        signup(client)
        trip = new_trip(client)
        r = client.get(f"/api/trips/{trip['id']}")
        assert r.status_code == 200 and "fly-replay" not in r.headers
    with pytest.raises(SystemExit, match="FLY_MACHINE_ID"):
        Settings.from_env(env={"WAYLINE_TRIP_MACHINES": ",".join(MACHINES), "FLY_MACHINE_ID": "someone-else"},
                          dotenv=None)
    configured = Settings.from_env(env={"WAYLINE_TRIP_MACHINES": ",".join(MACHINES), "FLY_MACHINE_ID": MACHINES[2]},
                                   dotenv=None)
    assert configured.trip_machines == MACHINES and configured.machine_id == MACHINES[2]
