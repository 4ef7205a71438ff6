"""Travel legs: mode rules, Google durations (labelled google) and the
labelled estimate when Google is off or failing."""

from __future__ import annotations

import sqlite3
from contextlib import asynccontextmanager
from types import SimpleNamespace

import pytest

from app.db import Database
from app.providers.google import Google
from app.providers.route_cache import ESTIMATE_TTL_S
from app.legs import SPEED_MPS, choose_mode, day_legs, day_legs_now, estimate, haversine_m
from app.preferences import TripPreferences
from app.settings import Settings
from helpers import PATIENT_PROVIDERS, make_client, new_trip, op, provider_client, signup
from standins.google_standin import DETOUR, SPEEDS, TRANSIT_WAIT_S, google_settings

ROUTES = "/directions/v2:computeRoutes"
# Mercado da Ribeira -> A Brasileira (~350 m) -> Castelo (~850 m) -> Oceanário (~6.5 km)
MERCADO = (38.7069, -9.1459)
BRASILEIRA = (38.7107, -9.1424)
CASTELO = (38.7139, -9.1335)
OCEANARIO = (38.7635, -9.0937)


def stop(sid: str, point: tuple[float, float] | None) -> SimpleNamespace:
    lat, lng = point if point else (None, None)
    return SimpleNamespace(id=sid, lat=lat, lng=lng)


def north_of(point: tuple[float, float], meters: float) -> tuple[float, float]:
    return point[0] + meters / 111_195.0, point[1]


def standin_leg(a, b, mode: str) -> tuple[int, int]:
    """What the stand-in answers (distance m, duration s) for a Google mode."""
    meters = haversine_m(*a, *b) * DETOUR[mode]
    seconds = meters / SPEEDS[mode] + (TRANSIT_WAIT_S if mode == "TRANSIT" else 0)
    return int(round(meters)), int(round(seconds))


@asynccontextmanager
async def google_svc(tmp_path, standin):
    settings = google_settings(Settings(db_path=str(tmp_path / "legs.db"), **PATIENT_PROVIDERS), standin)
    db = await Database.open(settings.db_path)
    try:
        async with provider_client(settings) as http:
            yield Google(settings, http, db)
    finally:
        await db.close()


NO_GOOGLE = None

# -- mode rules (no Google) -------------------------------------------------------


@pytest.mark.anyio
async def test_a_trip_that_avoids_walking_never_walks():
    prefs = TripPreferences(transport="transit", avoidModes=["walk"], longestWalkM=5000)
    stops = [stop("a", MERCADO), stop("b", BRASILEIRA), stop("c", CASTELO), stop("d", OCEANARIO)]
    legs = await day_legs(NO_GOOGLE, stops, prefs)
    assert len(legs) == 3 and all(leg.mode == "transit" for leg in legs)
    legs = await day_legs(NO_GOOGLE, stops, prefs.model_copy(update={"avoidModes": ["walk", "transit"],
                                                                      "transport": "walk"}))
    assert all(leg.mode != "walk" for leg in legs)


@pytest.mark.anyio
async def test_a_3km_walk_over_a_15km_limit_becomes_transit():
    prefs = TripPreferences(transport="walk", longestWalkM=1500)
    far = north_of(MERCADO, 3000)
    [leg] = await day_legs(NO_GOOGLE, [stop("a", MERCADO), stop("b", far)], prefs)
    assert leg.mode == "transit" and leg.source == "estimate"
    assert leg == estimate("a", "b", MERCADO, far, "transit")
    # Short hops are walked; with transit avoided the long one takes the next allowed mode.
    [short] = await day_legs(NO_GOOGLE, [stop("a", MERCADO), stop("b", BRASILEIRA)], prefs)
    assert short.mode == "walk"
    no_transit = prefs.model_copy(update={"avoidModes": ["transit"]})
    [other] = await day_legs(NO_GOOGLE, [stop("a", MERCADO), stop("b", far)], no_transit)
    assert other.mode == "drive"


@pytest.mark.anyio
async def test_estimated_walk_longer_than_the_limit_is_chosen_again():
    prefs = TripPreferences(transport="walk", longestWalkM=1500)
    near_limit = north_of(MERCADO, 1400)  # straight line under the limit, x1.3 on streets over it
    assert choose_mode(1400, prefs) == "walk"
    [leg] = await day_legs(NO_GOOGLE, [stop("a", MERCADO), stop("b", near_limit)], prefs)
    assert leg.mode == "transit" and leg.source == "estimate"


@pytest.mark.anyio
async def test_pairs_without_coordinates_are_skipped():
    prefs = TripPreferences()
    stops = [stop("a", MERCADO), stop("b", None), stop("c", CASTELO), stop("d", BRASILEIRA)]
    legs = await day_legs(NO_GOOGLE, stops, prefs)
    assert [(leg.from_stop_id, leg.to_stop_id) for leg in legs] == [("c", "d")]
    assert await day_legs(NO_GOOGLE, [], prefs) == []
    assert await day_legs(NO_GOOGLE, [stop("a", MERCADO)], prefs) == []


def test_estimate_keeps_its_semantics():
    leg = estimate("a", "b", MERCADO, CASTELO, "walk")
    distance = haversine_m(*MERCADO, *CASTELO) * 1.3
    assert leg.distance_m == round(distance) and leg.duration_s == round(distance / SPEED_MPS["walk"])
    assert leg.to_json()["source"] == "estimate"


# -- with Google -------------------------------------------------------------------


@pytest.mark.anyio
async def test_google_durations_are_used_and_labelled_google(tmp_path, google_standin):
    prefs = TripPreferences(transport="transit", longestWalkM=1500)
    stops = [stop("a", MERCADO), stop("b", BRASILEIRA), stop("c", CASTELO), stop("d", OCEANARIO)]
    async with google_svc(tmp_path, google_standin) as svc:
        legs = await day_legs(svc, stops, prefs)
        assert [leg.mode for leg in legs] == ["walk", "walk", "transit"]
        assert all(leg.source == "google" for leg in legs)
        for leg, (a, b), mode in zip(legs, [(MERCADO, BRASILEIRA), (BRASILEIRA, CASTELO), (CASTELO, OCEANARIO)],
                                     ["WALK", "WALK", "TRANSIT"], strict=True):
            assert (leg.distance_m, leg.duration_s) == standin_leg(a, b, mode)
        assert google_standin.calls[ROUTES] == 3
        # Recomputing the day (every trip load does) costs nothing.
        assert await day_legs(svc, stops, prefs) == legs
        assert google_standin.calls[ROUTES] == 3


@pytest.mark.anyio
async def test_google_walk_over_the_limit_is_chosen_again(tmp_path, google_standin):
    prefs = TripPreferences(transport="walk", longestWalkM=1500)
    b = north_of(MERCADO, 1300)  # the stand-in walks it as 1300 x 1.25 = 1625 m
    async with google_svc(tmp_path, google_standin) as svc:
        [leg] = await day_legs(svc, [stop("a", MERCADO), stop("b", b)], prefs)
    assert leg.mode == "transit" and leg.source == "google"
    assert (leg.distance_m, leg.duration_s) == standin_leg(MERCADO, b, "TRANSIT")
    modes = [r.body["travelMode"] for r in google_standin.requests]
    assert modes == ["WALK", "TRANSIT"]


@pytest.mark.anyio
async def test_legs_known_in_memory_need_no_wait(tmp_path, google_standin):
    prefs = TripPreferences(transport="walk", longestWalkM=1500)
    stops = [stop("a", MERCADO), stop("b", north_of(MERCADO, 1300)), stop("c", CASTELO)]
    assert day_legs_now(NO_GOOGLE, stops, prefs) == await day_legs(NO_GOOGLE, stops, prefs)
    async with google_svc(tmp_path, google_standin) as svc:
        assert day_legs_now(svc, stops, prefs) is None  # routes Google has not answered: wait for them
        legs = await day_legs(svc, stops, prefs)
        calls = google_standin.calls[ROUTES]
        assert day_legs_now(svc, stops, prefs) == legs  # the walk over the limit chosen again, too
        assert legs[0].mode == "transit" and google_standin.calls[ROUTES] == calls


@pytest.mark.anyio
async def test_missing_pairs_are_asked_for_at_once(tmp_path, google_standin):
    google_standin.hold(ROUTES, until=4)  # answered once all four wait together
    stops = [stop(str(i), north_of(MERCADO, 400 * i)) for i in range(5)]
    async with google_svc(tmp_path, google_standin) as svc:
        legs = await day_legs(svc, stops, TripPreferences())
    assert len(legs) == 4 and all(leg.source == "google" for leg in legs)
    assert google_standin.calls[ROUTES] == 4
    assert google_standin.together[ROUTES] == 4  # concurrent: all four were out at once


@pytest.mark.anyio
async def test_google_failure_falls_back_to_the_labelled_estimate(tmp_path, google_standin):
    google_standin.fail(ROUTES, status=500)
    prefs = TripPreferences(transport="transit", longestWalkM=1500)
    stops = [stop("a", MERCADO), stop("b", BRASILEIRA), stop("c", OCEANARIO)]
    async with google_svc(tmp_path, google_standin) as svc:
        legs = await day_legs(svc, stops, prefs)
    assert [leg.source for leg in legs] == ["estimate", "estimate"]
    assert legs == [estimate("a", "b", MERCADO, BRASILEIRA, "walk"),
                    estimate("b", "c", BRASILEIRA, OCEANARIO, "transit")]


@pytest.mark.anyio
async def test_no_route_in_a_mode_is_an_estimate_in_that_mode(tmp_path, google_standin):
    google_standin.no_route_modes.add("TRANSIT")
    async with google_svc(tmp_path, google_standin) as svc:
        legs = await day_legs(svc, [stop("a", MERCADO), stop("b", OCEANARIO)], TripPreferences())
    assert legs == [estimate("a", "b", MERCADO, OCEANARIO, "transit")]


# -- through the trip ----------------------------------------------------------------


def test_trip_legs_come_from_google(settings, google_standin):
    with make_client(google_settings(settings, google_standin)) as client:
        signup(client)
        trip = new_trip(client, days=1)
        day_id = trip["days"][0]["id"]
        for name, (lat, lng) in [("Mercado", MERCADO), ("Castelo", CASTELO), ("Oceanário", OCEANARIO)]:
            r = op(client, trip["id"], "insert_stop", dayId=day_id, kind="sight", name=name, lat=lat, lng=lng)
            assert r.status_code == 200, r.text
        day = client.get(f"/api/trips/{trip['id']}").json()["data"]["days"][0]
        google = client.app.state.services.google
        asked = []
        real_route = google.route

        async def route(*args):
            asked.append(args)
            return await real_route(*args)

        google.route = route  # legs computed again (new shared choices) from known routes never wait on Google
        echo = op(client, trip["id"], "set_trip_preferences", pace="packed").json()["data"]
        assert echo["trip"]["days"][0]["legs"] == day["legs"] and asked == []
    legs = day["legs"]
    assert len(legs) == 2 and all(leg["source"] == "google" for leg in legs)
    assert legs[1]["mode"] == "transit"


# -- a trip read for the first time (a restart): its legs from what is stored --------


def _trip_with_stops(client, points) -> str:
    signup(client)
    trip = new_trip(client, days=1)
    day_id = trip["days"][0]["id"]
    for i, (lat, lng) in enumerate(points):
        r = op(client, trip["id"], "insert_stop", dayId=day_id, kind="sight", name=f"Stop {i}", lat=lat, lng=lng)
        assert r.status_code == 200, r.text
    return trip["id"]


def _count_calls(obj, name: str) -> list:
    calls, real = [], getattr(obj, name)

    async def counted(*args, **kwargs):
        calls.append(args)
        return await real(*args, **kwargs)

    setattr(obj, name, counted)
    return calls


def test_a_restarted_server_reads_a_trips_stored_routes_in_one_query(settings, google_standin):
    points = [north_of(MERCADO, 400 * i) for i in range(6)]
    with make_client(google_settings(settings, google_standin)) as client:
        trip_id = _trip_with_stops(client, points)
        before = client.get(f"/api/trips/{trip_id}").json()["data"]["days"][0]["legs"]
        cookies = dict(client.cookies)
    assert len(before) == 5 and all(leg["source"] == "google" for leg in before)
    google_standin.reset()
    with sqlite3.connect(settings.db_path) as conn:   # the trip's stored days (0036) would need no route at all
        conn.execute("DELETE FROM trip_bodies")
    with make_client(google_settings(settings, google_standin)) as client:   # a restart: nothing in memory
        client.cookies.update(cookies)
        cache = client.app.state.services.google.routes.cache
        one_by_one, at_once = _count_calls(cache, "get"), _count_calls(cache, "get_many")
        after = client.get(f"/api/trips/{trip_id}").json()["data"]["days"][0]["legs"]
    assert after == before
    assert google_standin.calls[ROUTES] == 0
    assert (len(one_by_one), len(at_once)) == (0, 1)   # not one query per leg


def test_a_leg_estimated_in_an_outage_is_kept_until_a_real_route_can_replace_it(settings, google_standin):
    now = [1_800_000_000.0]
    clock = lambda: now[0]   # noqa: E731
    points = [north_of(MERCADO, 400 * i) for i in range(4)]
    google_standin.fail(ROUTES, status=503)
    with make_client(google_settings(settings, google_standin), clock=clock) as client:
        trip_id = _trip_with_stops(client, points)
        legs = client.get(f"/api/trips/{trip_id}").json()["data"]["days"][0]["legs"]
        cookies = dict(client.cookies)
    assert len(legs) == 3 and all(leg["source"] == "estimate" for leg in legs)
    google_standin.reset()   # Google answers again
    with make_client(google_settings(settings, google_standin), clock=clock) as client:   # a restart
        client.cookies.update(cookies)
        again = client.get(f"/api/trips/{trip_id}").json()["data"]["days"][0]["legs"]
        assert again == legs and google_standin.calls[ROUTES] == 0   # the estimates were kept: nobody asked
    now[0] += ESTIMATE_TTL_S + 1
    with make_client(google_settings(settings, google_standin), clock=clock) as client:   # later, restarted
        client.cookies.update(cookies)
        real = client.get(f"/api/trips/{trip_id}").json()["data"]["days"][0]["legs"]
    assert google_standin.calls[ROUTES] == 3
    assert all(leg["source"] == "google" for leg in real)


@pytest.mark.anyio
async def test_a_trips_load_keeps_the_routes_it_shares_with_others_in_memory(tmp_path):
    """A trip read after others shares some of their routes: loading its own
    must not push the shared ones out of the LRU before its legs are built."""
    from app.providers.cache import ProviderCache
    from app.providers.route_cache import ESTIMATE_TTL_S, Route, RouteCache

    db = await Database.open(str(tmp_path / "routes.db"))
    try:
        cache = ProviderCache(db, lambda: 1000.0)
        routes = RouteCache(cache, lambda: 1000.0, lru_size=4)
        await routes.put_many([("a", Route(60, 80)), ("b", Route(60, 80))])
        routes.estimated("c")
        await cache.put_many([(k, Route(60, 80).to_json(), 1000.0 + ESTIMATE_TTL_S) for k in ("d", "e", "f")])
        assert routes.in_memory("c", estimates=True) == (True, None)   # an outage's estimate, known
        await routes.load_many(["a", "c", "d", "e"])   # a and c are in memory already; d and e are stored
        assert all(routes.in_memory(k, estimates=True)[0] for k in ("a", "c", "d", "e"))
        assert routes.in_memory("c") == (False, None)   # a route matrix or a route call asks again
    finally:
        await db.close()
