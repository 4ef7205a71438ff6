"""Trips kept as their TripDto's bytes only (app/trips/state.py's `Shed`,
issue 26): when the trip cache is full, the least recently used trips
beyond a share of it let their aggregate go and are read from their bytes,
with no load; an op, a vote, a member's change or any other change loads
them again, and what is read is always what is committed."""

from __future__ import annotations

import threading
import time

import httpx

from app.trips import state as state_mod
from app.trips.dto import SLIM_BYTES_PER_VIEW
from app.web.application import create_app
from helpers import LiveServer, add_sights, join, new_trip, op, signup, use
from test_trip_memory import from_scratch


def services(client):
    return client.app.state.services


def states_bytes(svc) -> int:
    return svc.trips.bytes + svc.trips.shed_bytes


def counting_reads(svc) -> list[str]:
    """The trip loads (and re-reads of votes) made from now on."""
    reads: list[str] = []
    real = svc.db.read

    async def counted(fn, *args):
        if getattr(fn, "__name__", "") in ("read_state", "_social"):
            reads.append(fn.__name__)
        return await real(fn, *args)

    svc.db.read = counted
    return reads


def test_a_trip_kept_as_bytes_only_reads_the_same_bytes_and_etags_without_a_load(client):
    owner, bob, eve = signup(client, "owner"), signup(client, "bob"), signup(client, "eve")
    use(client, owner)
    trip = new_trip(client, days=3)
    add_sights(client, trip, 5)   # over compression.MIN_BYTES
    join(client, owner, trip["id"], bob)
    use(client, bob)
    stop = client.get(f"/api/trips/{trip['id']}").json()["data"]["days"][1]["stops"][2]["id"]
    client.put(f"/api/trips/{trip['id']}/stops/{stop}/vote", json={"value": -1}).raise_for_status()
    url = f"/api/trips/{trip['id']}"
    before = {}
    for user in (owner, bob):
        use(client, user)
        r = client.get(url)
        before[user["id"]] = (r.content, r.headers["etag"])
    svc = services(client)
    assert svc.trips.let_go_aggregate(trip["id"])
    assert svc.trips.cached(trip["id"]) is None and svc.trips.shed(trip["id"]) is not None
    reads = counting_reads(svc)
    for user in (owner, bob):
        use(client, user)
        content, etag = before[user["id"]]
        r = client.get(url)
        assert (r.content, r.headers["etag"]) == (content, etag)   # bob's own vote spliced in as before
        assert client.get(url, headers={"If-None-Match": etag}).status_code == 304
        packed = client.get(url, headers={"Accept-Encoding": "br"})
        assert packed.headers["content-encoding"] == "br" and packed.content == content   # httpx decodes it
    assert b'"mine":-1' in before[bob["id"]][0] and b'"mine":-1' not in before[owner["id"]][0]
    use(client, eve)
    assert client.get(url).status_code == 404   # not a member: as for a trip with its aggregate
    assert client.get(f"{url}/stops/{stop}/comments").status_code == 404
    use(client, bob)   # other reads that ask for the caller's role: from what was kept too
    assert client.get(f"{url}/stops/{stop}/comments").status_code == 200
    assert reads == []
    shed = svc.trips.shed(trip["id"])
    assert shed is not None and shed.view.slim and svc.trips.cached(trip["id"]) is None
    # What it counts: its bytes and the compressed variants kept since, not the aggregate.
    kept = [v for v in shed.view.derived.values() if isinstance(v, bytes)]
    assert len(kept) == 2   # the owner's role's and bob's own (his vote)
    assert shed.size == shed.view.size() == SLIM_BYTES_PER_VIEW + shed.view.length + sum(map(len, kept))
    assert states_bytes(svc) == sum(s.size for s in svc.trips._shed.values()) + svc.trips.bytes


def test_an_op_on_a_trip_kept_as_bytes_only_loads_it_and_answers_the_change(client):
    owner = signup(client, "owner")
    use(client, owner)
    trip = new_trip(client, days=2)
    add_sights(client, trip, 3)
    data = client.get(f"/api/trips/{trip['id']}").json()["data"]
    svc = services(client)
    assert svc.trips.let_go_aggregate(trip["id"])
    stop = data["days"][0]["stops"][1]["id"]
    r = op(client, trip["id"], "update_stop", full=False, stopId=stop, note="after \"it\" was let go")
    assert r.status_code == 200, r.text
    change = r.json()["data"]["change"]
    # As for a trip not in memory: the version before is not known here, the page reads the trip.
    assert change["fromVersion"] is None and change["version"] == data["version"] + 1
    assert svc.trips.shed(trip["id"]) is None and svc.trips.cached(trip["id"]) is not None
    served = client.get(f"/api/trips/{trip['id']}")
    assert served.content == b'{"data":' + from_scratch(client, trip["id"], owner["id"]) + b"}"
    assert served.json()["data"]["days"][0]["stops"][1]["note"] == 'after "it" was let go'


def test_any_change_to_a_trip_kept_as_bytes_only_is_read_at_once(client):
    owner, bob = signup(client, "owner"), signup(client, "bob")
    use(client, owner)
    trip = new_trip(client, days=2)
    add_sights(client, trip, 2)
    join(client, owner, trip["id"], bob)
    url = f"/api/trips/{trip['id']}"
    stop = client.get(url).json()["data"]["days"][0]["stops"][0]["id"]
    svc = services(client)

    assert svc.trips.let_go_aggregate(trip["id"])   # a vote: the voter reads it
    client.put(f"{url}/stops/{stop}/vote", json={"value": 1}).raise_for_status()
    assert svc.trips.shed(trip["id"]) is None
    votes = client.get(url).json()["data"]["days"][0]["stops"][0]["votes"]
    assert votes == {"up": 1, "down": 0, "mine": 1}

    assert svc.trips.let_go_aggregate(trip["id"])   # a comment: everyone reads its count
    client.post(f"{url}/stops/{stop}/comments", json={"body": "ok"}).raise_for_status()
    assert client.get(url).json()["data"]["days"][0]["stops"][0]["commentCount"] == 1

    use(client, bob)
    assert client.get(url).status_code == 200
    assert svc.trips.let_go_aggregate(trip["id"])   # a member removed: no longer reads it
    use(client, owner)
    client.delete(f"{url}/members/{bob['id']}").raise_for_status()
    use(client, bob)
    assert client.get(url).status_code == 404

    use(client, owner)
    assert svc.trips.let_go_aggregate(trip["id"])   # deleted: gone
    client.delete(url).raise_for_status()
    assert client.get(url).status_code == 404 and svc.trips.shed(trip["id"]) is None


def test_a_full_cache_keeps_the_least_recently_used_trips_as_bytes_only_within_its_budget(client, monkeypatch):
    owner = signup(client, "owner")
    use(client, owner)
    svc, states = services(client), services(client).trips
    probe = new_trip(client, days=3, title="Probe")
    add_sights(client, probe, 3)
    client.get(f"/api/trips/{probe['id']}")
    full = states.cached(probe["id"]).size
    # Room for about one trip with its aggregate and the rest as bytes only.
    monkeypatch.setattr(state_mod, "HOT_SHARE", 0.3)
    states.budget_bytes = 4 * full
    trips = [new_trip(client, days=3, title=f"Trip {i}") for i in range(6)]
    bodies = {}
    for t in trips:
        add_sights(client, t, 3)
        bodies[t["id"]] = client.get(f"/api/trips/{t['id']}").content
    assert states.bytes + states.shed_bytes <= states.budget_bytes
    assert len(states) == 1 and states.held() >= 5
    kept = [t["id"] for t in trips if states.shed(t["id"]) is not None]
    reads = counting_reads(svc)
    for trip_id in kept:
        assert client.get(f"/api/trips/{trip_id}").content == bodies[trip_id]
    assert reads == []
    # The least recently used go first: the first trip read again is loaded.
    gone = [t["id"] for t in trips if states.shed(t["id"]) is None and states.cached(t["id"]) is None]
    for trip_id in gone:
        assert client.get(f"/api/trips/{trip_id}").content == bodies[trip_id]
    assert len(reads) == len(gone)
    assert states.bytes + states.shed_bytes <= states.budget_bytes


def test_readers_of_a_trip_shed_and_loaded_again_over_real_connections_never_see_an_older_version(settings):
    app = create_app(settings)
    with LiveServer(app) as server, httpx.Client(base_url=server.url) as c:
        c.post("/api/auth/signup", json={"username": "owner", "password": "correct horse"}).raise_for_status()
        made = [c.post("/api/trips", json={"title": f"T{i}", "startDate": "2026-12-01", "days": 3}).json()["data"]
                for i in range(4)]
        target, others = made[0]["id"], [t["id"] for t in made[1:]]
        sizes = []
        for t in made:
            c.get(f"/api/trips/{t['id']}").raise_for_status()
            sizes.append(app.state.services.trips.cached(t["id"]).size)
        states = app.state.services.trips
        # Before the readers start: each trip read or written sheds the least recently used one.
        states.budget_bytes = int(2.2 * max(sizes))
        shed_target = []
        let_go = states.let_go_aggregate

        def counted(trip_id: str) -> bool:
            kept = let_go(trip_id)
            if kept and trip_id == target:
                shed_target.append(trip_id)
            return kept

        states.let_go_aggregate = counted
        committed: list[tuple[float, int]] = []   # (when an op's answer came, the version it made)
        seen: list[tuple[float, int]] = []         # (when a read was sent, the version it got)
        stop = threading.Event()
        errors: list[str] = []

        def reader() -> None:
            with httpx.Client(base_url=server.url, cookies=c.cookies) as mine:
                last = 0
                while not stop.is_set():
                    sent = time.monotonic()
                    r = mine.get(f"/api/trips/{target}")
                    if r.status_code != 200:
                        errors.append(r.text)
                        return
                    version = r.json()["data"]["version"]
                    if version < last:
                        errors.append(f"version {version} after {last}")
                    last = version
                    seen.append((sent, version))

        threads = [threading.Thread(target=reader) for _ in range(4)]
        for t in threads:
            t.start()
        try:
            for i in range(12):
                r = c.post(f"/api/trips/{target}/ops/update_trip", json={"title": f"Round {i}"})
                assert r.status_code == 200, r.text
                committed.append((time.monotonic(), r.json()["data"]["change"]["version"]))
                for other in others:   # the target is shed (or let go) meanwhile
                    c.get(f"/api/trips/{other}").raise_for_status()
        finally:
            stop.set()
            for t in threads:
                t.join(30)
        assert not errors, errors[:3]
        assert len(shed_target) >= 3   # it was kept as bytes only, and loaded again by the next op, several times
        assert len(seen) >= 4
        for sent, version in seen:
            done = [v for at, v in committed if at < sent]
            assert version >= max(done, default=0)
        final = c.get(f"/api/trips/{target}").json()["data"]
        assert (final["title"], final["version"]) == ("Round 11", committed[-1][1])
        assert states.bytes + states.shed_bytes <= states.budget_bytes
