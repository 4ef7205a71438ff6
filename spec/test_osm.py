"""app/providers/osm.py (the OpenStreetMap provider) against the loopback OSM stand-in:
Nominatim, Overpass and OSRM with real Copenhagen places."""

from __future__ import annotations

import asyncio
import time
import inspect
import logging
from contextlib import asynccontextmanager
from importlib import metadata

import anyio
import httpx
import pytest

from app.db import Database
from app.errors import Invalid, NotFound, Unavailable
from app.providers.google import Google, normalize_place as google_normalize_place
from app.providers.osm import OSM, OSRM_SLOTS, OVERPASS_QUERY_TIMEOUT_S, OVERPASS_SLOTS, user_agent
from app.providers.outbound import OutboundClient
from app.providers.osm_tags import TYPE_TAGS, google_types
from app.planner.candidates import CUISINE_TYPES, DEFAULT_EXPLORE_TYPES, INTEREST_TYPES, MEAL_TYPES, is_food
from app.planner.optimize import DEFAULT_PLAN_TYPES
from app.providers.route_cache import Route
from app.settings import Settings
from standins.osm_standin import FILTER, OVERPASS_PATH, OSMStandIn, load_elements, osm_settings
from helpers import PATIENT_PROVIDERS, provider_client

CENTRE = (55.6786, 12.5729)        # Rådhuspladsen / Strøget, Indre By
NORREBRO = (55.6935, 12.5470)      # Jægersborggade
TORVEHALLERNE = (55.6838, 12.5697)
ROSENBORG = (55.6858, 12.5772)
GLYPTOTEK = (55.6727, 12.5724)
UA = f"Wayline/{metadata.version('wayline')} (+tests@wayline.invalid)"


class FakeTime:
    """Monotonic time that only moves when the client sleeps (Nominatim's pace)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


class Clock:
    def __init__(self, start: float = 1_800_000_000.0):
        self.now = start

    def __call__(self) -> float:
        return self.now


@asynccontextmanager
async def osm_env(tmp_path, standin, *, clock=None, fake: FakeTime | None = None, real_time: bool = False,
                  on_request=None, **timeouts):
    settings = osm_settings(Settings(db_path=str(tmp_path / "osm.db"), **{**PATIENT_PROVIDERS, **timeouts}), standin)
    db = await Database.open(settings.db_path)
    fake = fake or FakeTime()
    hooks = {"request": [on_request]} if on_request else {}
    timing = {} if real_time else {"monotonic": fake.monotonic, "sleep": fake.sleep}
    try:
        async with provider_client(settings, event_hooks=hooks) as http:
            yield OSM(settings, http, db, clock=clock, **timing)
    finally:
        await db.close()


# -- settings ----------------------------------------------------------------------


def test_provider_defaults_to_google_with_a_key_else_osm():
    assert Settings.from_env(env={}, dotenv=None).places_provider == "osm"
    assert Settings.from_env(env={"GOOGLE_MAPS_API_KEY": "k"}, dotenv=None).places_provider == "google"
    chosen = Settings.from_env(env={"GOOGLE_MAPS_API_KEY": "k", "WAYLINE_PLACES_PROVIDER": " OSM "}, dotenv=None)
    assert chosen.places_provider == "osm"
    assert Settings(google_maps_api_key="k").places_provider == "google" and Settings().places_provider == "osm"


def test_osm_urls_and_contact_have_public_defaults_and_are_settings():
    d = Settings.from_env(env={}, dotenv=None)
    assert d.nominatim_url == "https://nominatim.openstreetmap.org"
    assert d.overpass_url == "https://overpass-api.de/api/interpreter"
    assert d.osrm_url == "https://routing.openstreetmap.de/routed-{profile}"
    assert d.contact is None
    s = Settings.from_env(env={"WAYLINE_NOMINATIM_URL": "http://n.local/", "WAYLINE_OVERPASS_URL": "http://o.local/i",
                               "WAYLINE_OSRM_URL": "http://r.local/{profile}/", "WAYLINE_CONTACT": "ops@example.org"},
                          dotenv=None)
    assert (s.nominatim_url, s.overpass_url, s.osrm_url, s.contact) == (
        "http://n.local", "http://o.local/i", "http://r.local/{profile}", "ops@example.org")


def test_provider_timeouts_are_settings_the_shared_client_keeps():
    d = Settings.from_env(env={}, dotenv=None)
    assert (d.provider_connect_timeout_s, d.provider_read_timeout_s) == (3.0, 8.0)
    s = Settings.from_env(env={"WAYLINE_PROVIDER_CONNECT_TIMEOUT_S": "5", "WAYLINE_PROVIDER_READ_TIMEOUT_S": "12.5"},
                          dotenv=None)
    timeout = OutboundClient.for_providers(s).client.timeout
    assert (timeout.connect, timeout.read) == (5.0, 12.5)
    overpass = OSM(s, OutboundClient.for_providers(s), None)._timeouts["overpass"]   # + its own query limit
    assert (overpass.connect, overpass.read) == (5.0, 12.5 + OVERPASS_QUERY_TIMEOUT_S)


@pytest.mark.parametrize("env, words", [
    ({"WAYLINE_PROVIDER_READ_TIMEOUT_S": "0"}, "WAYLINE_PROVIDER_READ_TIMEOUT_S must be a number of seconds above 0"),
    ({"WAYLINE_PROVIDER_CONNECT_TIMEOUT_S": "soon"}, "WAYLINE_PROVIDER_CONNECT_TIMEOUT_S must be a number"),
    ({"WAYLINE_PLACES_PROVIDER": "mapbox"}, "WAYLINE_PLACES_PROVIDER must be google or osm, got 'mapbox'"),
    ({"WAYLINE_PLACES_PROVIDER": "google"}, "WAYLINE_PLACES_PROVIDER=google needs GOOGLE_MAPS_API_KEY"),
    ({"WAYLINE_OSRM_URL": "https://router.example/car"}, "WAYLINE_OSRM_URL must contain {profile}"),
])
def test_bad_provider_settings_stop_the_start_with_a_plain_message(env, words):
    with pytest.raises(SystemExit) as stopped:
        Settings.from_env(env=env, dotenv=None)
    assert words in str(stopped.value)


def test_user_agent_names_the_app_and_the_contact():
    version = metadata.version("wayline")
    assert user_agent("ops@example.org") == f"Wayline/{version} (+ops@example.org)"
    assert user_agent(None) == f"Wayline/{version}"            # no contact is invented
    assert user_agent("a\r\nX-Evil: 1") == f"Wayline/{version} (+aX-Evil: 1)"  # no header injection


def test_same_public_interface_as_google():
    for name in ("search_text", "search_nearby", "place", "route", "route_matrix"):
        ours, theirs = inspect.signature(getattr(OSM, name)), inspect.signature(getattr(Google, name))
        assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == \
               [(p.name, p.kind, p.default) for p in theirs.parameters.values()], name
    assert OSM.name == "osm" and OSM.attribution == "© OpenStreetMap contributors"


# -- the type mapping ----------------------------------------------------------------


def test_every_type_the_planner_asks_for_has_a_mapping():
    asked = {t for types in MEAL_TYPES.values() for t in types} | set(CUISINE_TYPES.values())
    asked |= {t for types in INTEREST_TYPES.values() for t in types}
    asked |= set(DEFAULT_EXPLORE_TYPES) | set(DEFAULT_PLAN_TYPES) | {"lodging"}
    assert asked - set(TYPE_TAGS) == set()


def test_overpass_filters_and_google_types_agree_on_every_fixture_place():
    """The forward mapping (the Overpass QL we send, read by the stand-in's
    interpreter) and the backward one (google_types) come from one table: a
    place Overpass finds for a type always carries that type, and only then."""
    elements = list(load_elements().values())
    checked = 0
    for google_type, selectors in TYPE_TAGS.items():
        for element in elements:
            found = any(OSMStandIn._selects(element, FILTER.findall("".join(f.query() for f in selector)),
                                            1e9, *CENTRE) for selector in selectors)
            assert found == (google_type in google_types(element["tags"])), (google_type, element["tags"])
            checked += found
    assert checked > 60  # the fixture exercises the table, not just the negatives


def test_google_style_types_feed_the_planner():
    types = {e["tags"].get("name"): google_types(e["tags"]) for e in load_elements().values()}
    assert types["Bæst"][:3] == ["italian_restaurant", "pizza_restaurant", "restaurant"]
    assert types["Sticks'n'Sushi"][0] == "sushi_restaurant"   # the tag's own order
    assert types["Gasoline Grill"][0] == "hamburger_restaurant" and "restaurant" not in types["Gasoline Grill"]
    assert types["Atelier September"][:2] == ["breakfast_restaurant", "coffee_shop"]
    assert types["Meyers Bageri"] == ["bakery", "food"]
    assert types["Rosenborg Slot"] == ["museum", "historical_landmark", "tourist_attraction"]
    assert types["Frederiks Kirke"] == ["church", "tourist_attraction"]
    assert types["Torvehallerne"] == ["market"] and types["Tivoli"] == ["amusement_park", "tourist_attraction"]
    assert types["Hotel d'Angleterre"] == ["hotel", "lodging"] and types["Strøget"] == []
    assert is_food({"types": types["Ruby"]}) and not is_food({"types": types["Statens Museum for Kunst"]})


# -- places ---------------------------------------------------------------------------


@pytest.mark.anyio
async def test_text_search_is_bounded_to_a_box_and_normalized_like_google(tmp_path, osm_standin):
    async with osm_env(tmp_path, osm_standin) as osm:
        places = await osm.search_text("rosenborg", lat=CENTRE[0], lng=CENTRE[1], radius_m=5000)
        far = await osm.search_text("rosenborg", lat=38.7223, lng=-9.1393)  # from Lisbon: outside the box
    assert far == []
    [rosenborg] = places
    assert set(rosenborg) == set(google_normalize_place({}))
    assert rosenborg["placeId"] == "osm:way/23786112" and rosenborg["name"] == "Rosenborg Slot"
    assert (rosenborg["lat"], rosenborg["lng"]) == ROSENBORG
    assert rosenborg["address"] == "Øster Voldgade 4A, 1350 København K"
    assert (rosenborg["rating"], rosenborg["userRatingCount"], rosenborg["priceLevel"]) == (None, None, None)
    assert rosenborg["primaryType"] == "museum" and rosenborg["businessStatus"] == "OPERATIONAL"
    raw = rosenborg["raw"]
    assert raw["source"] == "osm" and raw["tags"]["opening_hours"] == "Tu-Su 10:00-16:00; Dec 24-26 off"
    sent = osm_standin.requests[0]
    assert sent.path == "/search" and sent.headers["user-agent"] == UA
    q = {k: v[0] for k, v in sent.query.items()}
    assert q["q"] == "rosenborg" and q["format"] == "jsonv2" and q["bounded"] == "1"
    assert q["extratags"] == q["addressdetails"] == q["namedetails"] == "1"
    west, north, east, south = map(float, q["viewbox"].split(","))
    assert west < CENTRE[1] < east and south < CENTRE[0] < north
    assert 0.08 < north - south < 0.1  # 5 km either side


@pytest.mark.anyio
async def test_text_search_of_one_type_and_in_a_language(tmp_path, osm_standin):
    async with osm_env(tmp_path, osm_standin) as osm:
        churches = await osm.search_text("kirke", lat=CENTRE[0], lng=CENTRE[1], included_type="church")
        everything = await osm.search_text("kirke", lat=CENTRE[0], lng=CENTRE[1])
        english = await osm.search_text("round tower", lat=CENTRE[0], lng=CENTRE[1], language="en-GB")
        with pytest.raises(Invalid):
            await osm.search_text("kirke", included_type="spaceport")
        assert await osm.search_text("   ") == []
    assert {p["name"] for p in churches} == {"Frederiks Kirke", "Vor Frue Kirke"}
    assert "Assistens Kirkegård" in {p["name"] for p in everything}
    assert [p["name"] for p in english] == ["Round Tower"]
    assert osm_standin.last("/search").query["accept-language"] == ["en"]
    assert osm_standin.count("/search") == 3  # the empty query and the unknown type asked nothing


@pytest.mark.anyio
async def test_nearby_restaurants_of_a_cuisine(tmp_path, osm_standin):
    async with osm_env(tmp_path, osm_standin) as osm:
        italian = await osm.search_nearby(*NORREBRO, radius_m=1500, types=["italian_restaurant"])
        lunch = await osm.search_nearby(*TORVEHALLERNE, radius_m=1000, types=["restaurant", "sushi_restaurant"])
    assert [p["name"] for p in italian] == ["Bæst"]
    assert italian[0]["placeId"] == "osm:node/4417823109" and is_food(italian[0])
    query = OSMStandIn.form(osm_standin.requests[0])["data"]
    assert query.startswith("[out:json][timeout:10];(") and query.endswith(");out center tags 100;")
    assert '["cuisine"~"(^|;) *(italian) *(;|$)",i]["name"](around:1500,55.6935,12.547);' in query
    names = {p["name"] for p in lunch}
    assert {"Schønnemann", "Sticks'n'Sushi", "Aamanns 1921"} <= names
    assert "Gasoline Grill" not in names  # fast food is not a restaurant
    assert all(p["name"] for p in lunch)  # the unnamed restaurant nearby never comes back
    assert osm_standin.count(OVERPASS_PATH) == 2


@pytest.mark.anyio
async def test_nearby_museums_and_parks_ranked(tmp_path, osm_standin):
    async with osm_env(tmp_path, osm_standin) as osm:
        museums = await osm.search_nearby(*CENTRE, radius_m=2500, types=["museum"])
        nearest = await osm.search_nearby(*CENTRE, radius_m=2500, types=["museum"], rank="DISTANCE", max_results=2)
        parks = await osm.search_nearby(*ROSENBORG, radius_m=800, types=["park"])
        with pytest.raises(Invalid) as refused:
            await osm.search_nearby(*CENTRE, types=["spaceport"])
    assert refused.value.field == "type"
    assert {p["name"] for p in museums} == {"Rosenborg Slot", "Designmuseum Danmark", "Statens Museum for Kunst",
                                            "Ny Carlsberg Glyptotek", "Nationalmuseet"}
    assert all("museum" in p["types"] for p in museums)
    assert [p["name"] for p in nearest] == ["Nationalmuseet", "Ny Carlsberg Glyptotek"]
    assert {p["name"] for p in parks} == {"Kongens Have", "Botanisk Have"}
    kongens_have = next(p for p in parks if p["name"] == "Kongens Have")
    assert (kongens_have["lat"], kongens_have["lng"]) == (55.6853, 12.5801)  # a way: its centre
    assert osm_standin.count(OVERPASS_PATH) == 3


@pytest.mark.anyio
async def test_details_by_namespaced_id(tmp_path, osm_standin):
    async with osm_env(tmp_path, osm_standin) as osm:
        place = await osm.place("osm:node/1107568271")
        with pytest.raises(NotFound) as missing:
            await osm.place("osm:relation/999999")
    assert place["name"] == "Schønnemann" and place["types"] == ["restaurant", "food"]
    assert place["raw"]["tags"]["opening_hours"] == "Mo-Sa 11:30-17:00; Su,PH off"
    assert osm_standin.requests[0].query["osm_ids"] == ["N1107568271"]
    assert osm_standin.requests[1].query["osm_ids"] == ["R999999"]
    assert missing.value.code == "place_not_found" and missing.value.status == 404


@pytest.mark.anyio
async def test_an_unknown_place_is_remembered_not_asked_again(tmp_path, osm_standin):
    async with osm_env(tmp_path, osm_standin) as osm:
        for _ in range(2):
            with pytest.raises(NotFound):
                await osm.place("osm:relation/999999")
    assert osm_standin.count("/lookup") == 1


@pytest.mark.anyio
async def test_requests_queued_for_nominatim_fail_at_once_when_it_goes_down(tmp_path, osm_standin):
    """Real time: the second request waits its second, then learns the
    service is resting; the third does not wait at all."""
    osm_standin.fail("/search", status=503)
    async with osm_env(tmp_path, osm_standin, real_time=True) as osm:
        started = time.monotonic()
        answers = await asyncio.gather(*(osm.search_text(q) for q in ("nyhavn", "tivoli", "rundetaarn")),
                                       return_exceptions=True)
        waited = time.monotonic() - started
    assert all(isinstance(a, Unavailable) for a in answers)
    assert osm_standin.count("/search") == 1, "the queued ones never asked"
    assert waited < 1.8, "the third did not wait a second turn to learn it"


@pytest.mark.anyio
@pytest.mark.parametrize("place_id", [
    "ChIJ_tasca_esquina", "osm:node/0", "osm:node/-1", "osm:node/12a", "osm:area/1", "osm:node/1/../2",
    "osm:node/1?format=xml", "OSM:node/1", " osm:node/1", "osm:node/1\n", "osm:node/" + "9" * 20, "", None,
])
async def test_bad_ids_are_refused_before_any_request(tmp_path, osm_standin, place_id):
    async with osm_env(tmp_path, osm_standin) as osm:
        with pytest.raises(NotFound) as refused:
            await osm.place(place_id)
    assert refused.value.code == "place_not_found"
    assert not osm_standin.requests


# -- routes ---------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_route_per_mode_and_transit_is_none(tmp_path, osm_standin):
    async with osm_env(tmp_path, osm_standin) as osm:
        walk = await osm.route(TORVEHALLERNE, ROSENBORG, "walk")
        bike = await osm.route(TORVEHALLERNE, ROSENBORG, "bicycle")
        drive = await osm.route(TORVEHALLERNE, ROSENBORG, "drive")
        assert await osm.route(TORVEHALLERNE, ROSENBORG, "transit") is None
        with pytest.raises(ValueError):
            await osm.route(TORVEHALLERNE, ROSENBORG, "teleport")
    paths = [r.path for r in osm_standin.requests]
    assert paths == [f"/routed-{p}/route/v1/{p}/12.5697,55.6838;12.5772,55.6858" for p in ("foot", "bike", "car")]
    assert osm_standin.requests[0].query["overview"] == ["full"]
    assert osm_standin.requests[0].query["geometries"] == ["geojson"]
    # The path OSRM drew, as (lat, lng), through the stand-in's corner: kept with the route.
    assert walk.geometry == (TORVEHALLERNE, (TORVEHALLERNE[0], ROSENBORG[1]), ROSENBORG)
    assert all(r.headers["user-agent"] == UA for r in osm_standin.requests)
    # One street distance per profile, durations at the profile's speed.
    for route, profile in ((walk, "foot"), (bike, "bike"), (drive, "car")):
        assert isinstance(route, Route) and route.distance_m > 500
        assert route.duration_s == pytest.approx(route.distance_m / osm_standin.speeds[profile], abs=2)
    assert walk.duration_s > bike.duration_s > drive.duration_s


@pytest.mark.anyio
async def test_routes_are_cached_in_memory_and_in_sqlite(tmp_path, osm_standin):
    async with osm_env(tmp_path, osm_standin) as osm:
        first = await osm.route(TORVEHALLERNE, GLYPTOTEK, "walk")
        assert await osm.route(TORVEHALLERNE, GLYPTOTEK, "walk") == first
    async with osm_env(tmp_path, osm_standin) as osm:  # a new process on the same database
        assert await osm.route(TORVEHALLERNE, GLYPTOTEK, "walk") == first
    assert osm_standin.count("/routed-foot/route") == 1


@pytest.mark.anyio
async def test_no_route_is_none_and_cached(tmp_path, osm_standin):
    osm_standin.unreachable.add((55.6382, 12.6565))  # Den Blå Planet, say, cut off
    async with osm_env(tmp_path, osm_standin) as osm:
        assert await osm.route(CENTRE, (55.6382, 12.6565), "drive") is None
        assert await osm.route(CENTRE, (55.6382, 12.6565), "drive") is None
        # Outside the region the server holds: OSRM finds no road to snap to.
        assert await osm.route(CENTRE, (38.7223, -9.1393), "drive") is None
    assert osm_standin.count("/routed-car/route") == 2


@pytest.mark.anyio
async def test_route_matrix_is_one_table_request_that_fills_the_route_cache(tmp_path, osm_standin):
    origins, destinations = [TORVEHALLERNE, ROSENBORG, NORREBRO], [GLYPTOTEK, CENTRE]
    async with osm_env(tmp_path, osm_standin) as osm:
        matrix = await osm.route_matrix(origins, destinations, "bicycle")
        assert set(matrix) == {(i, j) for i in range(3) for j in range(2)}
        assert await osm.route(NORREBRO, CENTRE, "bicycle") == matrix[(2, 1)]
        assert await osm.route_matrix(origins, destinations, "bicycle") == matrix
        assert await osm.route_matrix(origins, destinations, "transit") == {pair: None for pair in matrix}
        with pytest.raises(ValueError):
            await osm.route_matrix([CENTRE] * 60, [CENTRE] * 41, "walk")
    assert [r.path.split("/v1/")[0] for r in osm_standin.requests] == ["/routed-bike/table"]
    sent = osm_standin.requests[0]
    assert sent.query["sources"] == ["0;1;2"] and sent.query["destinations"] == ["3;4"]
    assert sent.query["annotations"] == ["duration,distance"]
    assert matrix[(2, 0)].distance_m > matrix[(0, 0)].distance_m  # Nørrebro is further from the Glyptotek


@pytest.mark.anyio
async def test_route_matrix_marks_unreachable_pairs(tmp_path, osm_standin):
    osm_standin.unreachable.add((round(GLYPTOTEK[0], 4), round(GLYPTOTEK[1], 4)))
    async with osm_env(tmp_path, osm_standin) as osm:
        matrix = await osm.route_matrix([CENTRE, ROSENBORG], [GLYPTOTEK, NORREBRO], "walk")
    assert matrix[(0, 0)] is None and matrix[(1, 0)] is None
    assert matrix[(0, 1)] is not None and matrix[(1, 1)] is not None


# -- caching, sharing and politeness -------------------------------------------------------


@pytest.mark.anyio
async def test_repeated_requests_cost_nothing_until_the_day_is_over(tmp_path, osm_standin):
    clock = Clock()
    async with osm_env(tmp_path, osm_standin, clock=clock) as osm:
        first = await osm.search_text("torvehallerne", lat=CENTRE[0], lng=CENTRE[1])
        assert await osm.search_text("torvehallerne", lat=CENTRE[0], lng=CENTRE[1]) == first
        cafes = await osm.search_nearby(*NORREBRO, types=["cafe"])
        assert await osm.search_nearby(*NORREBRO, types=["cafe"]) == cafes
        # Each result also answers a later details lookup.
        assert (await osm.place(first[0]["placeId"]))["name"] == "Torvehallerne"
        assert (await osm.place(cafes[0]["placeId"]))["name"] == cafes[0]["name"]
        counts = (osm_standin.count("/search"), osm_standin.count(OVERPASS_PATH), osm_standin.count("/lookup"))
        assert counts == (1, 1, 0)
        clock.now += 25 * 3600
        await osm.search_text("torvehallerne", lat=CENTRE[0], lng=CENTRE[1])
    assert osm_standin.count("/search") == 2


@pytest.mark.anyio
async def test_identical_requests_in_flight_share_one_call(tmp_path, osm_standin):
    osm_standin.delay(OVERPASS_PATH, 0.3)
    osm_standin.delay("/search", 0.3)
    async with osm_env(tmp_path, osm_standin) as osm:
        nearby = await asyncio.gather(*(osm.search_nearby(*CENTRE, types=["bar"]) for _ in range(5)))
        found = await asyncio.gather(*(osm.search_text("nyhavn") for _ in range(5)))
    assert all(r == nearby[0] for r in nearby) and nearby[0]
    assert all(r == found[0] for r in found) and found[0]
    assert osm_standin.count(OVERPASS_PATH) == 1 and osm_standin.count("/search") == 1


@pytest.mark.anyio
async def test_nominatim_requests_start_at_least_a_second_apart(tmp_path, osm_standin):
    fake = FakeTime()
    sent: list[tuple[float, str]] = []

    async def on_request(request: httpx.Request) -> None:
        if request.url.path in ("/search", "/lookup"):
            sent.append((fake.now, request.url.params.get("q") or request.url.params.get("osm_ids")))

    async with osm_env(tmp_path, osm_standin, fake=fake, on_request=on_request) as osm:
        await asyncio.gather(osm.search_text("nyhavn"), osm.search_text("tivoli"), osm.place("osm:node/1386219865"),
                             osm.search_text("rundetaarn"))
        await osm.search_nearby(*CENTRE, types=["bar"])  # Overpass: not paced
    assert sorted(what for _, what in sent) == ["N1386219865", "nyhavn", "rundetaarn", "tivoli"]
    times = [t for t, _ in sent]
    assert [b - a for a, b in zip(times, times[1:])] == [1.0, 1.0, 1.0]
    assert fake.sleeps == [1.0, 1.0, 1.0]


@pytest.mark.anyio
async def test_nominatim_pace_holds_in_real_time(tmp_path, osm_standin):
    async with osm_env(tmp_path, osm_standin, real_time=True) as osm:
        started = time.monotonic()
        await asyncio.gather(osm.search_text("nyhavn"), osm.search_text("tivoli"))
    (_, _), (second, _) = osm_standin.arrivals
    # The first request's turn came at `started` or later and the second's a
    # second after it: the second cannot have arrived sooner, however loaded
    # the machine (arrival times between the two would jitter with the load).
    assert second - started >= 1.0


def test_nothing_asks_the_public_nominatim_faster_than_once_a_second(osm_standin):
    assert Settings().nominatim_interval_s == 1.0
    with pytest.raises(ValueError, match="one request every 1 s"):
        Settings(nominatim_interval_s=0.5)
    with pytest.raises(ValueError, match="one request every 1 s"):
        Settings(nominatim_url="https://nominatim.openstreetmap.org/", nominatim_interval_s=0.0)
    with pytest.raises(ValueError, match="one request every 1 s"):   # any real server, not only the default
        Settings(nominatim_url="https://nominatim.example.org/", nominatim_interval_s=0.2)
    # A test's loopback stand-in may be asked as fast as it answers.
    assert osm_settings(Settings(), osm_standin, nominatim_interval_s=0.0).nominatim_interval_s == 0.0


@pytest.mark.anyio
async def test_overpass_runs_two_queries_at_once_and_osrm_a_few(tmp_path, osm_standin):
    osm_standin.delay(OVERPASS_PATH, 0.25)
    osm_standin.delay("/routed-", 0.25)
    kinds = ["cafe", "bar", "museum", "park", "bakery", "hotel"]
    async with osm_env(tmp_path, osm_standin) as osm:
        await asyncio.gather(*(osm.search_nearby(*CENTRE, types=[k]) for k in kinds))
        targets = [(CENTRE[0] + k / 1000, CENTRE[1]) for k in range(1, 10)]
        await asyncio.gather(*(osm.route(TORVEHALLERNE, t, "walk") for t in targets))
    assert osm_standin.count(OVERPASS_PATH) == 6 and osm_standin.max_active["overpass"] == OVERPASS_SLOTS == 2
    assert osm_standin.count("/routed-foot") == 9 and osm_standin.max_active["osrm"] == OSRM_SLOTS


def test_the_standin_refuses_a_library_user_agent_like_nominatim(osm_standin):
    r = httpx.get(f"{osm_standin.url}/search", params={"q": "nyhavn", "format": "jsonv2"})
    assert r.status_code == 403 and "usage policy" in r.text


# -- failures ---------------------------------------------------------------------------------


PLACES_DOWN = "OpenStreetMap place search is unavailable right now"
ROUTES_DOWN = "OpenStreetMap routing is unavailable right now"

CALLS = {
    "search": ("/search", lambda osm: osm.search_text("nyhavn", lat=CENTRE[0], lng=CENTRE[1])),
    "lookup": ("/lookup", lambda osm: osm.place("osm:node/1470221330")),
    "overpass": (OVERPASS_PATH, lambda osm: osm.search_nearby(*CENTRE, types=["bar"])),
    "route": ("/routed-car/route", lambda osm: osm.route(CENTRE, ROSENBORG, "drive")),
    "table": ("/routed-foot/table", lambda osm: osm.route_matrix([CENTRE], [ROSENBORG, GLYPTOTEK], "walk")),
}


def script(standin: OSMStandIn, prefix: str, failure: str) -> None:
    if failure == "garbled":
        standin.garble(prefix)
    elif failure == "timeout":
        standin.delay(prefix, 600.0)  # answers only when the stand-in stops: longer than any timeout
    else:
        standin.fail(prefix, status=int(failure), message="Internal error at http://127.0.0.1/secret?q=nyhavn")


@pytest.mark.anyio
@pytest.mark.parametrize("failure", ["500", "429", "403", "400", "garbled", "timeout"])
@pytest.mark.parametrize("call", list(CALLS))
async def test_any_failure_is_unavailable_in_plain_words(tmp_path, osm_standin, caplog, call, failure):
    prefix, run = CALLS[call]
    script(osm_standin, prefix, failure)
    caplog.set_level(logging.DEBUG)
    # A timeout's call is held until the stand-in stops: a short read timeout ends it. The
    # other failures keep the patient one, so a loaded machine cannot turn them into timeouts.
    timeouts = {"provider_read_timeout_s": 1.0} if failure == "timeout" else {}
    async with osm_env(tmp_path, osm_standin, **timeouts) as osm:
        with pytest.raises(Unavailable) as raised:
            await run(osm)
    routes = call in ("route", "table")
    assert raised.value.to_json() == {"error": {"code": "routes_unavailable" if routes else "places_unavailable",
                                                "message": ROUTES_DOWN if routes else PLACES_DOWN}}
    # The stand-in's thread may read a request only after the client gave up on it (a loaded
    # machine); once the call has failed nothing more is sent, so one arrival is all there is.
    await anyio.to_thread.run_sync(osm_standin.wait_for_requests, 1)
    assert osm_standin.count(prefix) == 1
    # Our log names the service and the status, never the URL, the query or the answer.
    logged = " ".join(r.getMessage() for r in caplog.records if r.name == "wayline.osm")
    service = {"search": "nominatim", "lookup": "nominatim", "overpass": "overpass"}.get(call, "osrm")
    assert logged.startswith(f"osm {service}: ")
    for secret in ("127.0.0.1", "nyhavn", "secret", "12.57", "Internal error"):
        assert secret not in logged


@pytest.mark.anyio
async def test_an_overpass_runtime_error_is_unavailable_not_an_empty_answer(tmp_path, osm_standin):
    osm_standin.remark(times=1)
    async with osm_env(tmp_path, osm_standin) as osm:
        with pytest.raises(Unavailable):
            await osm.search_nearby(*CENTRE, types=["cafe"])
        osm._resting_until.clear()
        assert await osm.search_nearby(*CENTRE, types=["cafe"])  # nothing empty was cached
    assert osm_standin.count(OVERPASS_PATH) == 2


@pytest.mark.anyio
async def test_after_an_outage_the_service_rests_then_recovers(tmp_path, osm_standin):
    fake = FakeTime()
    osm_standin.fail(OVERPASS_PATH, status=504, times=1)
    osm_standin.fail("/routed-", status=502)
    async with osm_env(tmp_path, osm_standin, fake=fake) as osm:
        with pytest.raises(Unavailable):
            await osm.search_nearby(*CENTRE, types=["cafe"])
        with pytest.raises(Unavailable):
            await osm.search_nearby(*CENTRE, types=["museum"])  # resting: fails fast, asks nothing
        assert await osm.search_text("nyhavn")  # Nominatim is another service: still asked
        with pytest.raises(Unavailable):
            await osm.route(CENTRE, ROSENBORG, "walk")
        assert osm_standin.count(OVERPASS_PATH) == 1 and osm_standin.count("/routed-") == 1
        fake.now += osm.cooldown_s + 1
        assert await osm.search_nearby(*CENTRE, types=["museum"])
    assert osm_standin.count(OVERPASS_PATH) == 2


def test_elements_of_the_wrong_shape_are_left_out_not_a_500(settings, osm_standin):
    """Overpass and Nominatim answer elements whose fields are of the wrong
    type (tags or a centre that are lists, an address that is text, a point
    off the globe or a boolean): those places are left out, the good ones are
    suggested and searched as usual. Before: Explore nearby and place search
    were a 500 (and a point off the globe reached a route's URL)."""
    from helpers import make_client, new_trip, signup

    good = {"type": "node", "id": 11, "lat": 55.6790, "lon": 12.5735,
            "tags": {"name": "Good Museum", "tourism": "museum", "opening_hours": "Mo-Su 08:00-22:00"}}
    museum = {"name": "Odd Museum", "tourism": "museum"}
    osm_standin.answers = {
        OVERPASS_PATH: {"elements": [
            {"type": "node", "id": 12, "lat": 55.679, "lon": 12.573, "tags": ["name", "Listed"]},
            {"type": "way", "id": 13, "center": [55.679, 12.573], "tags": museum},
            {"type": "node", "id": 14, "lat": 255.679, "lon": 12.573, "tags": museum},
            {"type": "node", "id": 15, "lat": True, "lon": 12.573, "tags": museum},
            "not an element", good]},
        "/search": [
            {"osm_type": "node", "osm_id": 21, "lat": "55.679", "lon": "12.573", "name": "Text Address",
             "category": "tourism", "type": "museum", "address": "Nyhavn 1"},
            {"osm_type": "node", "osm_id": 22, "lat": "55.679", "lon": "12.573", "name": "Listed Tags",
             "category": "tourism", "type": "museum", "extratags": ["opening_hours"], "namedetails": "x"},
            {"osm_type": "node", "osm_id": 23, "lat": "155.679", "lon": "12.573", "name": "Off the Globe"},
            {"osm_type": "node", "osm_id": 24, "lat": "55.679", "lon": "12.573", "name": {"da": "Ordbog"}},
            {"osm_type": "node", "osm_id": 11, "lat": "55.6790", "lon": "12.5735", "name": "Good Museum",
             "category": "tourism", "type": "museum", "extratags": {"opening_hours": "Mo-Su 08:00-22:00"}}],
    }
    with make_client(osm_settings(settings, osm_standin)) as client:
        signup(client)
        trip = new_trip(client, days=1, timezone="Europe/Copenhagen",
                        destination={"name": "Copenhagen", "lat": CENTRE[0], "lng": CENTRE[1]})
        day = trip["days"][0]["id"]
        r = client.post(f"/api/trips/{trip['id']}/ops/insert_stop",
                        json={"dayId": day, "name": "Rådhuspladsen", "lat": CENTRE[0], "lng": CENTRE[1]})
        assert r.status_code == 200, r.text
        explore = client.post(f"/api/trips/{trip['id']}/days/{day}/explore", json={})
        assert explore.status_code == 200, explore.text
        assert [s["place"]["name"] for s in explore.json()["data"]["suggestions"]] == ["Good Museum"]
        found = client.get(f"/api/trips/{trip['id']}/places/search", params={"q": "museum"})
        assert found.status_code == 200, found.text
        places = {p["name"]: p for p in found.json()["data"]["places"]}
        assert set(places) == {"Text Address", "Listed Tags", "Good Museum"}
        assert places["Text Address"]["address"] is None


class Trickle:
    """A loopback server that answers every request with a 200 head and then
    one byte of its body now and then, never all of it, until stopped: each
    read gets a byte well inside any read timeout."""

    def __init__(self) -> None:
        import socket
        import threading

        self.stopping = threading.Event()
        self.answered = threading.Event()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.threads = [threading.Thread(target=self._accept, daemon=True)]
        self.threads[0].start()

    def _accept(self) -> None:
        import threading

        self.sock.settimeout(0.2)
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            thread = threading.Thread(target=self._trickle, args=(conn,), daemon=True)
            self.threads.append(thread)
            thread.start()

    def _trickle(self, conn) -> None:
        with conn:
            try:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{")
                self.answered.set()
                while not self.stopping.wait(0.2):   # the stand-in's pace, not the test's
                    conn.sendall(b" ")
            except OSError:
                return   # the client gave up: what the test waits for

    def stop(self) -> None:
        self.stopping.set()
        self.sock.close()
        for thread in self.threads:
            thread.join()


def test_an_answer_that_trickles_in_is_unavailable_not_a_hang(settings, osm_standin):
    """Nominatim sends its head, then a byte of the body now and then: each
    read is well inside the read timeout, so httpx alone waited as long as
    it trickled (a place search, or Explore holding one of Overpass's two
    slots for everyone, never answered). The whole answer has a deadline
    (connect + twice the read timeout): the search says it is unavailable."""
    from helpers import make_client, new_trip, signup

    trickle = Trickle()
    try:
        quick = osm_settings(settings, osm_standin, nominatim_url=trickle.url,
                             provider_connect_timeout_s=1.0, provider_read_timeout_s=1.0)
        with make_client(quick) as client:
            signup(client)
            trip = new_trip(client, days=1, timezone="Europe/Copenhagen",
                            destination={"name": "Copenhagen", "lat": CENTRE[0], "lng": CENTRE[1]})
            r = client.get(f"/api/trips/{trip['id']}/places/search", params={"q": "museum"})
            assert trickle.answered.is_set()
            assert r.status_code == 503, r.text
            assert r.json()["error"] == {"code": "places_unavailable", "message": PLACES_DOWN}
    finally:
        trickle.stop()
