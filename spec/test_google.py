"""app/providers/google.py and the place routes, against the loopback Google stand-in."""

from __future__ import annotations

import asyncio
import logging
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta

import anyio
import pytest

from app.db import Database
from app.providers.google import DETAILS_MASK, PLACE_FIELDS, SEARCH_MASK, Google, normalize_place, price_level
from app.hours.rules import check_hours
from app.settings import Settings
from helpers import PATIENT_PROVIDERS, make_client, new_trip, provider_client, signup
from standins.google_standin import google_settings

SEARCH = "/v1/places:searchText"
NEARBY = "/v1/places:searchNearby"
ROUTES = "/directions/v2:computeRoutes"
MATRIX = "/distanceMatrix/v2:computeRouteMatrix"
LISBON = (38.7223, -9.1393)
PLANNER_FIELDS = {"id", "displayName", "location", "formattedAddress", "rating", "userRatingCount", "priceLevel",
                  "types", "primaryType", "regularOpeningHours", "currentOpeningHours",
                  "regularSecondaryOpeningHours", "currentSecondaryOpeningHours", "utcOffsetMinutes",
                  "businessStatus"}


class Clock:
    def __init__(self, start: float):
        self.now = start

    def __call__(self) -> float:
        return self.now


@asynccontextmanager
async def google_env(tmp_path, standin, clock=None, **timeouts):
    settings = google_settings(Settings(db_path=str(tmp_path / "g.db"), **{**PATIENT_PROVIDERS, **timeouts}), standin)
    db = await Database.open(settings.db_path)
    try:
        async with provider_client(settings) as http:
            yield Google(settings, http, db, clock=clock)
    finally:
        await db.close()


def _no_key_anywhere(standin, text: str) -> None:
    assert standin.key not in text


# -- the client itself -------------------------------------------------------------


def test_field_masks_name_what_the_planner_needs():
    assert PLANNER_FIELDS <= set(PLACE_FIELDS)
    assert set(SEARCH_MASK.split(",")) == {f"places.{f}" for f in PLACE_FIELDS}
    assert " " not in SEARCH_MASK + DETAILS_MASK


@pytest.mark.anyio
async def test_search_sends_mask_and_key_header_never_in_the_url(tmp_path, google_standin):
    async with google_env(tmp_path, google_standin) as google:
        places = await google.search_text("restaurant", lat=LISBON[0], lng=LISBON[1])
    sent = google_standin.last(SEARCH)
    assert sent.headers["x-goog-api-key"] == google_standin.key
    assert sent.headers["x-goog-fieldmask"] == SEARCH_MASK
    assert "key" not in sent.query and google_standin.key not in sent.path
    assert sent.body["textQuery"] == "restaurant"
    assert sent.body["locationBias"]["circle"]["center"] == {"latitude": 38.7223, "longitude": -9.1393}
    assert places and all(p["placeId"] and p["name"] and p["lat"] and p["lng"] for p in places)
    # The fields the planner reads came back through the mask.
    ramiro = next(p for p in places if p["placeId"] == "ChIJ_cervejaria_ramiro")
    assert ramiro["priceLevel"] == 3 and ramiro["primaryType"] == "seafood_restaurant"
    assert {"currentOpeningHours", "regularSecondaryOpeningHours", "currentSecondaryOpeningHours",
            "utcOffsetMinutes", "businessStatus"} <= set(ramiro["raw"])


@pytest.mark.anyio
async def test_same_request_twice_costs_one_call_and_seeds_details(tmp_path, google_standin):
    async with google_env(tmp_path, google_standin) as google:
        first = await google.search_nearby(*LISBON, radius_m=3000, types=["restaurant"])
        again = await google.search_nearby(*LISBON, radius_m=3000, types=["restaurant"])
        details = await google.place(first[0]["placeId"])
    assert first == again
    assert google_standin.calls[NEARBY] == 1
    assert details["placeId"] == first[0]["placeId"]
    assert not [p for p in google_standin.calls if p.startswith("/v1/places/")]  # answered from the search


@pytest.mark.anyio
async def test_concurrent_identical_requests_share_one_call(tmp_path, google_standin):
    google_standin.delay(SEARCH, 0.2)
    async with google_env(tmp_path, google_standin) as google:
        results = await asyncio.gather(*(google.search_text("cafe") for _ in range(5)))
    assert all(r == results[0] for r in results)
    assert google_standin.calls[SEARCH] == 1


@pytest.mark.anyio
async def test_dated_hours_are_kept_only_until_the_end_of_the_day(tmp_path, google_standin):
    noon = datetime(2026, 12, 10, 12, 0, tzinfo=UTC).timestamp()
    clock = Clock(noon)
    async with google_env(tmp_path, google_standin, clock) as google:
        await google.place("ChIJ_tasca_esquina")
        clock.now = noon + 11 * 3600          # 23:00 the same day: cached
        await google.place("ChIJ_tasca_esquina")
        assert google_standin.calls["/v1/places/ChIJ_tasca_esquina"] == 1
        clock.now = noon + 12 * 3600 + 60     # 00:01 the next day: fetched again
        await google.place("ChIJ_tasca_esquina")
        assert google_standin.calls["/v1/places/ChIJ_tasca_esquina"] == 2
        # A place without any hours lasts the full day.
        await google.place("ChIJ_miradouro_luzia")
        clock.now += 23 * 3600
        await google.place("ChIJ_miradouro_luzia")
        assert google_standin.calls["/v1/places/ChIJ_miradouro_luzia"] == 1


@pytest.mark.anyio
async def test_normalized_place_feeds_the_hours_rule(tmp_path, google_standin):
    today = datetime.now(UTC).date()
    google_standin.today = today
    async with google_env(tmp_path, google_standin) as google:
        bar = await google.place("ChIJ_pensao_amor")
        tasca = await google.place("ChIJ_tasca_esquina")
        viewpoint = await google.place("ChIJ_miradouro_luzia")
    day = (today + timedelta(days=1)).isoformat()
    late = check_hours(bar["raw"], day, "23:30", 75)
    assert late.status == "confirmed" and late.fits and late.closes_at == "03:00"
    assert check_hours(viewpoint["raw"], day, "12:00", 60).status == "none"
    # The midday break ends lunch: 14:30 + 60 + 30 does not fit (on a day it opens).
    open_day = next(today + timedelta(days=k) for k in range(1, 7) if (today + timedelta(days=k)).weekday() != 6)
    assert not check_hours(tasca["raw"], open_day.isoformat(), "14:30", 60).fits
    assert check_hours(tasca["raw"], open_day.isoformat(), "12:00", 60).fits


def test_price_levels():
    assert price_level("PRICE_LEVEL_MODERATE") == 2
    assert price_level("PRICE_LEVEL_VERY_EXPENSIVE") == 4
    assert price_level("PRICE_LEVEL_FREE") is None and price_level(None) is None
    place = normalize_place({"id": "x", "displayName": {"text": "X"}, "location": {"latitude": 1, "longitude": 2}})
    assert place["name"] == "X" and place["priceLevel"] is None and place["types"] == []


@pytest.mark.anyio
async def test_routes_cached_in_memory_and_in_sqlite(tmp_path, google_standin):
    a, b = (38.7069, -9.1459), (38.7139, -9.1335)
    async with google_env(tmp_path, google_standin) as google:
        first = await google.route(a, b, "walk")
        assert await google.route(a, b, "walk") == first
        sent = google_standin.last(ROUTES)
        assert sent.body["travelMode"] == "WALK" and "routingPreference" not in sent.body
        assert sent.headers["x-goog-fieldmask"] == ("routes.duration,routes.distanceMeters,"
                                                    "routes.polyline.geoJsonLinestring")
        assert sent.body["polylineEncoding"] == "GEO_JSON_LINESTRING"
    assert google_standin.calls[ROUTES] == 1
    assert first.duration_s > 0 and first.distance_m > 0
    # The path Google drew ((lat, lng), through the stand-in's corner) is kept with the route.
    assert first.geometry == (a, (a[0], b[1]), b)
    # A new process (empty LRU) on the same database: still no call, the path still there.
    async with google_env(tmp_path, google_standin) as google:
        assert await google.route(a, b, "walk") == first
    assert google_standin.calls[ROUTES] == 1


@pytest.mark.anyio
async def test_route_matrix_fills_the_route_cache(tmp_path, google_standin):
    stops = [(38.7069, -9.1459), (38.7139, -9.1335), (38.7247, -9.1135)]
    async with google_env(tmp_path, google_standin) as google:
        matrix = await google.route_matrix(stops, stops, "drive")
        assert set(matrix) == {(i, j) for i in range(3) for j in range(3)}
        assert matrix[(0, 0)].distance_m == 0 and matrix[(0, 2)].distance_m > matrix[(0, 1)].distance_m
        assert await google.route(stops[1], stops[2], "drive") == matrix[(1, 2)]
        assert await google.route_matrix(stops, stops, "drive") == matrix
    assert google_standin.calls[MATRIX] == 1 and google_standin.calls[ROUTES] == 0
    assert "status" in google_standin.last(MATRIX).headers["x-goog-fieldmask"].split(",")


@pytest.mark.anyio
async def test_no_route_is_none_and_cached(tmp_path, google_standin):
    google_standin.no_route_modes.add("TRANSIT")
    async with google_env(tmp_path, google_standin) as google:
        assert await google.route((38.70, -9.14), (38.76, -9.09), "transit") is None
        assert await google.route((38.70, -9.14), (38.76, -9.09), "transit") is None
    assert google_standin.calls[ROUTES] == 1


@pytest.mark.anyio
@pytest.mark.parametrize("status", [400, 403, 429, 500, 503])
async def test_errors_become_unavailable_without_the_key(tmp_path, google_standin, caplog, status):
    from app.errors import Unavailable

    google_standin.fail("/v1/places", status=status, message=f"bad {google_standin.key}")
    caplog.set_level(logging.DEBUG)
    async with google_env(tmp_path, google_standin) as google:
        with pytest.raises(Unavailable) as raised:
            await google.search_text("cafe")
    assert raised.value.code == "places_unavailable"
    assert raised.value.message == "Google Places is unavailable right now"
    _no_key_anywhere(google_standin, repr(raised.value.to_json()) + caplog.text + repr(google))


@pytest.mark.anyio
async def test_timeout_is_unavailable_and_google_rests(tmp_path, google_standin):
    from app.errors import Unavailable

    # Routes answers only when the stand-in stops: the read timeout (a setting) ends the call
    # however late a loaded machine gets to it, while Places' prompt answers fit well inside it.
    google_standin.delay(ROUTES, 600.0)
    async with google_env(tmp_path, google_standin, provider_read_timeout_s=10.0) as google:
        with pytest.raises(Unavailable) as raised:
            await google.route((38.70, -9.14), (38.71, -9.15), "walk")
        assert raised.value.code == "routes_unavailable"
        # Resting: the next call fails fast without reaching Google; Places still works.
        with pytest.raises(Unavailable):
            await google.route((38.70, -9.14), (38.72, -9.15), "walk")
        # The stand-in's thread may record the first call only after the client gave up on it.
        await anyio.to_thread.run_sync(google_standin.wait_for_requests, 1)
        assert google_standin.calls[ROUTES] == 1
        assert await google.search_text("cafe")
        google.cooldown_s = 0
        google._resting_until.clear()
        google_standin.delay(ROUTES, 0)
        assert await google.route((38.70, -9.14), (38.72, -9.15), "walk") is not None


@pytest.mark.anyio
async def test_wrong_key_is_unavailable(tmp_path, google_standin):
    from app.errors import Unavailable

    async with google_env(tmp_path, google_standin) as google:
        google_standin.key = "a-different-key"
        with pytest.raises(Unavailable):
            await google.place("ChIJ_oceanario")


# -- routes ----------------------------------------------------------------------


@pytest.fixture
def gclient(settings, google_standin):
    with make_client(google_settings(settings, google_standin)) as client:
        yield client


def test_place_routes_for_members(gclient, google_standin):
    signup(gclient)
    trip = new_trip(gclient)
    base = f"/api/trips/{trip['id']}/places"
    r = gclient.get(f"{base}/search", params={"q": "pastéis belém"})
    assert r.status_code == 200, r.text
    places = r.json()["data"]["places"]
    assert places[0]["placeId"] == "ChIJ_pasteis_belem" and places[0]["priceLevel"] == 1
    assert gclient.get(f"{base}/search", params={"q": "pastéis belém"}).json()["data"]["places"] == places
    assert google_standin.calls[SEARCH] == 1  # the repeated request cost no Google call
    circle = google_standin.last(SEARCH).body["locationBias"]["circle"]
    assert circle["center"] == {"latitude": 38.7223, "longitude": -9.1393}

    r = gclient.get(f"{base}/nearby", params={"lat": 38.7139, "lng": -9.1335, "type": "museum", "radius": 3000})
    assert [p["placeId"] for p in r.json()["data"]["places"]] == ["ChIJ_museu_azulejo"]
    r = gclient.get(f"{base}/nearby", params={"type": "bar"})  # the trip's destination
    assert r.status_code == 200 and google_standin.last(NEARBY).body["includedTypes"] == ["bar"]

    r = gclient.get(f"{base}/ChIJ_oceanario")
    assert r.status_code == 200 and r.json()["data"]["place"]["name"] == "Oceanário de Lisboa"
    r = gclient.get(f"{base}/ChIJ_nowhere_at_all")
    assert r.status_code == 404 and r.json()["error"]["code"] == "place_not_found"


@pytest.mark.parametrize("path, params, field", [
    ("search", {}, "q"),
    ("search", {"q": "   "}, "q"),
    ("search", {"q": "x" * 201}, "q"),
    ("nearby", {"lat": "north", "lng": "1"}, "lat"),
    ("nearby", {"lat": "91", "lng": "1"}, "lat"),
    ("nearby", {"lat": "38.7"}, "lng"),
    ("nearby", {"type": "Bar; DROP"}, "type"),
    ("nearby", {"radius": "0"}, "radius"),
    ("bad..id", {}, "placeId"),
])
def test_place_routes_validate(gclient, google_standin, path, params, field):
    signup(gclient)
    trip = new_trip(gclient)
    r = gclient.get(f"/api/trips/{trip['id']}/places/{path}", params=params)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["field"] == field
    assert not google_standin.requests


def test_place_routes_need_membership(gclient, google_standin):
    signup(gclient)
    trip = new_trip(gclient)
    gclient.post("/api/auth/signout", json={})
    assert gclient.get(f"/api/trips/{trip['id']}/places/search", params={"q": "cafe"}).status_code == 401
    signup(gclient)
    for path in ("search?q=cafe", "nearby", "ChIJ_oceanario"):
        r = gclient.get(f"/api/trips/{trip['id']}/places/{path}")
        assert r.status_code == 404, path
    assert not google_standin.requests


def test_provider_error_is_a_plain_503(gclient, google_standin):
    signup(gclient)
    trip = new_trip(gclient)
    google_standin.fail(SEARCH, status=500)
    r = gclient.get(f"/api/trips/{trip['id']}/places/search", params={"q": "cafe"})
    assert r.status_code == 503
    assert r.json()["error"] == {"code": "places_unavailable", "message": "Google Places is unavailable right now"}
    assert google_standin.key not in r.text


def test_without_a_key_places_come_from_openstreetmap_and_its_outage_is_plain(client):
    """No Google key: OpenStreetMap answers (here its servers are unreachable,
    so every place route says so plainly and the rest works)."""
    signup(client)
    trip = new_trip(client)
    services = client.app.state.services
    assert services.google is None and services.places.name == "osm"
    assert client.get("/api/config").json()["data"]["placesProvider"] == "osm"
    for path in ("search?q=cafe", "nearby?lat=38.7&lng=-9.1", "osm:node/123"):
        r = client.get(f"/api/trips/{trip['id']}/places/{path}")
        assert r.status_code == 503, path
        assert r.json()["error"] == {"code": "places_unavailable",
                                     "message": "OpenStreetMap place search is unavailable right now"}
    assert client.get("/api/trips").status_code == 200
    assert client.get(f"/api/trips/{trip['id']}").status_code == 200


# -- answers of the wrong shape -----------------------------------------------------


def _wrong(place: dict, **fields) -> dict:
    return {**place, **fields}


def test_places_of_the_wrong_shape_are_left_out_not_a_500(gclient, google_standin):
    """Google's answer holds places whose fields are of the wrong type (a
    point that is text, a rating that is a word, a name that is a number):
    those places are left out of eat, explore and place search, and a field
    that is only an extra (a count, an address, the types) is read as absent;
    the good places are suggested as usual. Before: a 500, or a 422 naming
    `placeId` for a request that sent none."""
    signup(gclient)
    trip = new_trip(gclient)
    day = trip["days"][0]["id"]
    r = gclient.post(f"/api/trips/{trip['id']}/ops/insert_stop?full=1",
                     json={"dayId": day, "name": "Castelo", "lat": 38.7139, "lng": -9.1335})
    assert r.status_code == 200, r.text
    good = google_standin.place_now("ChIJ_taberna_flores")
    sight = google_standin.place_now("ChIJ_miradouro_luzia")
    odd = _wrong(google_standin.place_now("ChIJ_mercado_ribeira"), userRatingCount="many", formattedAddress=9,
                 types=["restaurant", 7, "food"], businessStatus=3)
    answer = {"places": [
        _wrong(good, id="ChIJ_text_point", location="somewhere"),
        _wrong(good, id="ChIJ_text_latitude", location={"latitude": "38.7", "longitude": -9.14}),
        _wrong(good, id="ChIJ_off_the_globe", location={"latitude": 138.7, "longitude": -9.14}),
        _wrong(good, id="ChIJ_word_rating", rating="high", displayName={"text": "Word"}),
        _wrong(good, id="ChIJ_number_name", displayName=5),
        _wrong(good, id=7),
        "not a place",
        good, sight, odd,
    ]}
    google_standin.answers = {NEARBY: answer, SEARCH: answer}
    base = f"/api/trips/{trip['id']}"
    eat = gclient.post(f"{base}/days/{day}/eat", json={"meal": "dinner"})
    assert eat.status_code == 200, eat.text
    assert {s["place"]["placeId"] for s in eat.json()["data"]["suggestions"]} <= {
        "ChIJ_taberna_flores", "ChIJ_mercado_ribeira", "ChIJ_word_rating"}
    explore = gclient.post(f"{base}/days/{day}/explore", json={})
    assert explore.status_code == 200, explore.text
    assert "ChIJ_miradouro_luzia" in {s["place"]["placeId"] for s in explore.json()["data"]["suggestions"]}
    found = gclient.get(f"{base}/places/search", params={"q": "tasca"})
    assert found.status_code == 200, found.text
    places = {p["placeId"]: p for p in found.json()["data"]["places"]}
    assert set(places) == {"ChIJ_taberna_flores", "ChIJ_miradouro_luzia", "ChIJ_mercado_ribeira",
                           "ChIJ_word_rating"}
    assert places["ChIJ_word_rating"]["rating"] is None
    assert places["ChIJ_mercado_ribeira"]["userRatingCount"] is None
    assert places["ChIJ_mercado_ribeira"]["address"] is None
    assert places["ChIJ_mercado_ribeira"]["types"] == ["restaurant", "food"]


def test_routes_of_the_wrong_shape_are_estimates_not_a_500(gclient, google_standin):
    """A computeRoutes answer whose distance is text, and a route matrix whose
    index is text: the trip still loads (its legs estimated, labelled) and
    Shortest order still answers, on estimates. Before: every read of the trip
    was a 500 while Google answered so."""
    signup(gclient)
    trip = new_trip(gclient)
    day = trip["days"][0]["id"]
    edits = [{"op": "insert_stop", "args": {"dayId": day, "name": n, "lat": lat, "lng": -9.1335}}
             for n, lat in (("A", 38.7139), ("B", 38.7098), ("C", 38.7160))]
    google_standin.answers = {ROUTES: {"routes": [{"distanceMeters": "far", "duration": "120s"}]},
                              MATRIX: [{"originIndex": "first", "condition": "ROUTE_EXISTS",
                                        "distanceMeters": 10, "duration": "9s"}]}
    r = gclient.post(f"/api/trips/{trip['id']}/ops", json={"edits": edits})
    assert r.status_code == 200, r.text
    r = gclient.get(f"/api/trips/{trip['id']}")
    assert r.status_code == 200, r.text
    legs = r.json()["data"]["days"][0]["legs"]
    assert len(legs) == 2 and {leg["source"] for leg in legs} == {"estimate"}
    r = gclient.post(f"/api/trips/{trip['id']}/days/{day}/shortest", json={})
    assert r.status_code == 200, r.text
    assert r.json()["data"]["draft"]["travel"]["estimated"] is True
    assert google_standin.calls[ROUTES] >= 1 and google_standin.calls[MATRIX] >= 1
