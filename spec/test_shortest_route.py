"""Shortest order over HTTP (issue 11, item 7): the exact order of a day's free
stops as a draft, with no model call; its hours, set times and meal windows;
Optimize offering it beside the model's plan; and keyless, on OpenStreetMap."""

from __future__ import annotations

import itertools
import json
import math
from datetime import date

import pytest

from app.review.ordering import day_stops
from app.planner.shortest_order import EXACT_LIMIT, shortest_order
from helpers import join, make_client, new_trip, op, signup, use
from standins.google_standin import MATRIX_PATH, google_settings, weekly
from standins.openai_standin import ai_settings, message_item
from standins.osm_standin import osm_settings
from test_planner import NO_DEBOUNCE, ScriptedModel, save_prefs

TRIP_DATE = date(2026, 12, 10)   # a Thursday
# A zig-zag across Lisbon's centre: visiting them in this order backtracks.
ZIGZAG = [("Castelo", 38.7139, -9.1335), ("Belém", 38.6916, -9.2160), ("Graça", 38.7163, -9.1310),
          ("LX Factory", 38.7034, -9.1784), ("Alfama", 38.7118, -9.1301), ("Estrela", 38.7139, -9.1598)]


@pytest.fixture
def gclient(settings, google_standin):
    google_standin.today = TRIP_DATE
    with make_client(google_settings(settings, google_standin), **NO_DEBOUNCE) as client:
        yield client


def add_stops(client, trip_id: str, day: str, stops, **extra) -> dict:
    ids = {}
    for name, lat, lng, *more in stops:
        r = op(client, trip_id, "insert_stop", dayId=day, name=name, lat=lat, lng=lng, durationMin=45,
               **(more[0] if more else {}), **extra)
        assert r.status_code == 200, r.text
        ids[name] = r.json()["data"]["trip"]["days"][0]["stops"][-1]["id"]
    return ids


def day_of(client, trip_id: str) -> dict:
    return client.get(f"/api/trips/{trip_id}").json()["data"]["days"][0]


def travel_s(day: dict) -> int:
    return sum(leg["durationS"] for leg in day["legs"])


def shortest(client, trip_id: str, day_id: str):
    return client.post(f"/api/trips/{trip_id}/days/{day_id}/shortest", json={})


def test_shortest_order_is_a_draft_that_applies_exactly_with_no_model_call(gclient, google_standin):
    signup(gclient, "ana")
    trip = new_trip(gclient, days=1)
    day = trip["days"][0]["id"]
    add_stops(gclient, trip["id"], day, ZIGZAG)
    before = day_of(gclient, trip["id"])
    matrix_calls = sum(r.path == MATRIX_PATH for r in google_standin.requests)

    r = shortest(gclient, trip["id"], day)
    assert r.status_code == 200, r.text
    draft = r.json()["data"]["draft"]
    assert draft["edits"] and {e["op"] for e in draft["edits"]} == {"move_stop"}
    travel = draft["travel"]
    assert travel["exact"] is True and travel["optimalMin"] == travel["afterMin"] < travel["beforeMin"]
    assert "min less travel" in draft["preview"]["summary"]
    shown = [s["stopId"] for s in draft["preview"]["stops"]]

    applied = gclient.post(f"/api/trips/{trip['id']}/drafts/{draft['id']}/apply", json={})
    assert applied.status_code == 200, applied.text
    after = day_of(gclient, trip["id"])
    assert [s["id"] for s in after["stops"]] == shown, "applied exactly what was previewed"
    assert travel_s(after) < travel_s(before)
    assert sum(r.path == MATRIX_PATH for r in google_standin.requests) > matrix_calls, "one matrix call per mode"
    # Asked again: nothing left to gain.
    again = shortest(gclient, trip["id"], day).json()["data"]["draft"]
    assert again["edits"] == [] and "already in its shortest order" in again["preview"]["summary"]


def test_the_order_is_the_least_travel_of_all_orders(gclient):
    """Against every permutation, with the legs the server's matrix gives."""
    signup(gclient, "ana")
    trip = new_trip(gclient, days=1)
    day = trip["days"][0]["id"]
    add_stops(gclient, trip["id"], day, ZIGZAG)
    draft = shortest(gclient, trip["id"], day).json()["data"]["draft"]
    gclient.post(f"/api/trips/{trip['id']}/drafts/{draft['id']}/apply", json={}).raise_for_status()
    best = travel_s(day_of(gclient, trip["id"]))
    names = [s[0] for s in ZIGZAG]
    ids = {s["name"]: s["id"] for s in day_of(gclient, trip["id"])["stops"]}
    worse_or_equal = 0
    for perm in itertools.islice(itertools.permutations(names), 0, None, 37):   # a spread of the 720 orders
        for k, name in enumerate(perm):
            op(gclient, trip["id"], "move_stop", stopId=ids[name], toDayId=day, position=k).raise_for_status()
        worse_or_equal += travel_s(day_of(gclient, trip["id"])) >= best
    assert worse_or_equal == math.ceil(720 / 37)


def test_opening_hours_set_times_and_meals_are_kept(gclient, google_standin):
    """A museum that opens at 13:00 comes after it; the pinned 12:00 lunch stays;
    the free stops fit around them."""
    google_standin.add_place("ChIJ_museu", "Museu da Tarde", 38.7120, -9.1400, ["museum"],
                             hours=weekly(range(7), ("13:00", "18:00")))
    signup(gclient, "ana")
    trip = new_trip(gclient, days=1)
    day = trip["days"][0]["id"]
    ids = add_stops(gclient, trip["id"], day, [
        ("Museu da Tarde", 38.7120, -9.1400, {"placeId": "ChIJ_museu", "kind": "sight"}),
        ("Castelo", 38.7139, -9.1335), ("Lunch", 38.7110, -9.1390, {"setTime": "12:00", "kind": "food",
                                                                    "meal": "lunch"}),
        ("Graça", 38.7163, -9.1310)])
    review = gclient.get(f"/api/trips/{trip['id']}/days/{day}/review").json()["data"]
    assert any(f["kind"] == "closed" for f in review["findings"]), "the museum at 09:00 is closed today"
    draft = shortest(gclient, trip["id"], day).json()["data"]["draft"]
    stops = {s["stopId"]: s["after"] for s in draft["preview"]["stops"]}
    assert stops[ids["Museu da Tarde"]]["startMinutes"] >= 13 * 60
    assert stops[ids["Lunch"]]["startTime"] == "12:00"
    assert stops[ids["Museu da Tarde"]]["hours"]["fits"] is True
    assert not any(f["kind"] == "closed" for f in draft["preview"]["findings"])


def test_no_order_that_fits_is_a_plain_409(gclient, google_standin):
    google_standin.add_place("ChIJ_short", "Capela Breve", 38.7120, -9.1400, ["church"],
                             hours=weekly(range(7), ("09:00", "09:20")))
    signup(gclient, "ana")
    trip = new_trip(gclient, days=1)
    day = trip["days"][0]["id"]
    add_stops(gclient, trip["id"], day, [("Castelo", 38.7139, -9.1335),
                                         ("Capela Breve", 38.7120, -9.1400, {"placeId": "ChIJ_short"})])
    r = shortest(gclient, trip["id"], day)
    assert r.status_code == 409 and r.json()["error"]["code"] == "no_order"
    assert "Capela Breve" in r.json()["error"]["message"]


def test_roles_and_inputs(gclient):
    owner = signup(gclient, "ana")
    trip = new_trip(gclient, days=1)
    day = trip["days"][0]["id"]
    add_stops(gclient, trip["id"], day, ZIGZAG[:3])
    viewer = signup(gclient, "vic")
    join(gclient, owner, trip["id"], viewer, role="viewer")
    draft = shortest(gclient, trip["id"], day)
    assert draft.status_code == 200, "any member may look"
    r = gclient.post(f"/api/trips/{trip['id']}/drafts/{draft.json()['data']['draft']['id']}/apply", json={})
    assert r.status_code == 403
    assert gclient.post(f"/api/trips/{trip['id']}/days/{day}/shortest", json={"x": 1}).status_code == 422
    use(gclient, signup(gclient, "outsider"))
    assert shortest(gclient, trip["id"], day).status_code == 404
    use(gclient, owner)
    one = new_trip(gclient, days=1)
    add_stops(gclient, one["id"], one["days"][0]["id"], ZIGZAG[:1])
    r = shortest(gclient, one["id"], one["days"][0]["id"])
    assert r.status_code == 422 and "nothing to reorder" in r.json()["error"]["message"]


def test_a_draft_that_changes_nothing_is_stale_once_the_day_changed(gclient):
    """Shortest order of a day already in it is a draft without edits. Once
    another member changed the day, applying it is refused (409 stale) like
    any draft: the preview ("already in its shortest order") was of another
    day. Before: 200 and the page said the plan was applied."""
    owner = signup(gclient, "ana")
    trip = new_trip(gclient, days=1)
    day = trip["days"][0]["id"]
    ids = add_stops(gclient, trip["id"], day, [("South", 38.700, -9.140), ("Middle", 38.705, -9.140),
                                               ("North", 38.710, -9.140)])   # on one line: already shortest
    r = shortest(gclient, trip["id"], day)
    assert r.status_code == 200, r.text
    draft = r.json()["data"]["draft"]
    assert draft["edits"] == [] and "already in its shortest order" in draft["preview"]["summary"]
    editor = signup(gclient, "eve")
    join(gclient, owner, trip["id"], editor)
    assert op(gclient, trip["id"], "update_stop", stopId=ids["Middle"], durationMin=120).status_code == 200
    use(gclient, owner)
    version = gclient.get(f"/api/trips/{trip['id']}").json()["data"]["version"]
    r = gclient.post(f"/api/trips/{trip['id']}/drafts/{draft['id']}/apply", json={})
    assert r.status_code == 409 and r.json()["error"]["code"] == "stale", r.text
    assert gclient.get(f"/api/trips/{trip['id']}").json()["data"]["version"] == version
    again = shortest(gclient, trip["id"], day).json()["data"]["draft"]
    r = gclient.post(f"/api/trips/{trip['id']}/drafts/{again['id']}/apply", json={})
    assert r.status_code == 200 and r.json()["data"]["version"] == version, "unchanged: nothing to write"


def test_optimize_offers_the_shortest_order_when_the_models_is_longer(settings, google_standin, openai_standin):
    google_standin.today = TRIP_DATE
    model = ScriptedModel(openai_standin)
    with make_client(ai_settings(google_settings(settings, google_standin), openai_standin), **NO_DEBOUNCE) as c:
        signup(c, "ana")
        save_prefs(c)
        trip = new_trip(c, days=1)
        day = trip["days"][0]["id"]
        ids = add_stops(c, trip["id"], day, ZIGZAG)
        # The model keeps the zig-zag.
        model.add("plan_day", ScriptedReply([ids[n] for n, *_ in ZIGZAG]))
        r = c.post(f"/api/trips/{trip['id']}/days/{day}/optimize", json={})
        assert r.status_code == 200, r.text
        data = r.json()["data"]
        draft, better = data["draft"], data["shortestDraft"]
        assert draft["travel"]["optimalMin"] == better["travel"]["afterMin"]
        assert draft["travel"]["afterMin"] - better["travel"]["afterMin"] >= 5
        assert better["id"] != draft["id"]
        applied = c.post(f"/api/trips/{trip['id']}/drafts/{better['id']}/apply", json={})
        assert applied.status_code == 200, applied.text
        assert [s["id"] for s in day_of(c, trip["id"])["stops"]] == [s["stopId"] for s in better["preview"]["stops"]]


def test_optimize_leaves_out_the_offer_past_the_exact_limit(settings, google_standin, openai_standin):
    """Thirteen free stops: the search would be a beam, not exact; Optimize
    answers without the offer (the day's Shortest order still can)."""
    google_standin.today = TRIP_DATE
    model = ScriptedModel(openai_standin)
    with make_client(ai_settings(google_settings(settings, google_standin), openai_standin), **NO_DEBOUNCE) as c:
        signup(c, "ana")
        save_prefs(c)
        trip = new_trip(c, days=1)
        day = trip["days"][0]["id"]
        many = [*ZIGZAG, *((f"{name} again", lat + 0.002, lng - 0.002) for name, lat, lng in ZIGZAG),
                ("Rossio", 38.7139, -9.1394)]
        assert len(many) == EXACT_LIMIT + 1
        ids = add_stops(c, trip["id"], day, many)
        model.add("plan_day", ScriptedReply([ids[n] for n, *_ in many]))
        r = c.post(f"/api/trips/{trip['id']}/days/{day}/optimize", json={})
        assert r.status_code == 200, r.text
        data = r.json()["data"]
        assert data["draft"]["travel"]["optimalMin"] is None
        assert "shortestDraft" not in data
        r = shortest(c, trip["id"], day)
        assert r.status_code == 200, r.text
        assert r.json()["data"]["draft"]["travel"]["exact"] is False


def ScriptedReply(order: list[str]):
    from standins.openai_standin import Reply

    return Reply(output=[message_item(json.dumps({"order": order, "additions": [], "summary": "As it is."}))])


def test_keyless_on_openstreetmap(settings, osm_standin):
    """No keys at all: the matrix comes from OSRM, hours from OSM's strings."""
    with make_client(osm_settings(settings, osm_standin)) as client:
        signup(client, "ana")
        trip = new_trip(client, days=1, startDate="2026-12-10", timezone="Europe/Copenhagen",
                        destination={"name": "Copenhagen", "lat": 55.6761, "lng": 12.5683})
        day = trip["days"][0]["id"]
        add_stops(client, trip["id"], day, [("Nyhavn", 55.6798, 12.5910), ("Tivoli", 55.6736, 12.5681),
                                            ("Rosenborg", 55.6858, 12.5772), ("Christiansborg", 55.6761, 12.5803)])
        r = shortest(client, trip["id"], day)
        assert r.status_code == 200, r.text
        draft = r.json()["data"]["draft"]
        assert draft["travel"]["afterMin"] <= draft["travel"]["beforeMin"]
        assert osm_standin.count("/routed-foot/table") >= 1


def test_the_solver_sees_the_days_hours_as_review_does():
    """day_stops: set times pin, hours and meal windows bound the free stops."""
    from app.trips.model import Day, Stop

    day = Day("d", 0, stops=[Stop("a", "d", 0, "sight", "A", duration_min=120),
                             Stop("l", "d", 1, "food", "L", meal="lunch"),
                             Stop("p", "d", 2, "sight", "P", set_time="15:00")])
    stops = {s.id: s for s in day_stops(day, "2026-12-10", {})}
    assert stops["a"].allowed_starts is None
    assert stops["l"].allowed_starts == ((11 * 60, 15 * 60),)
    assert stops["p"].set_start == 15 * 60 and stops["p"].allowed_starts is None
    result = shortest_order(list(stops.values()), {(x, y): 600 for x in "alp" for y in "alp" if x != y}, 9 * 60)
    assert result.feasible


def test_a_meal_on_any_stop_keeps_its_window_in_the_shortest_order():
    """The review judges a meal's time on any stop that carries one (a picnic
    in a park is a sight with a lunch), so the search keeps it to its window too."""
    from app.meals import MEALS
    from app.trips.model import Day, Stop

    picnic = Stop("s1", "d1", 0, "sight", "Picnic", lat=38.71, lng=-9.13, duration_min=60, meal="lunch")
    [stop] = day_stops(Day("d1", 0, stops=[picnic]), "2026-12-10", None)
    assert stop.allowed_starts == (MEALS["lunch"].window,)


def test_shortest_order_reads_only_its_own_days_places(gclient, google_standin):
    """Its preview computes no fixes, so the other days' places are not looked
    up (with OpenStreetMap each uncached one is a second of Nominatim)."""
    signup(gclient, "ana")
    trip = new_trip(gclient, days=2)
    first, second = trip["days"][0]["id"], trip["days"][1]["id"]
    add_stops(gclient, trip["id"], first, ZIGZAG[:3])
    add_stops(gclient, trip["id"], second, [("Museu do Azulejo", 38.7247, -9.1135)],
              placeId="ChIJ_museu_azulejo")
    google_standin.requests.clear()
    assert shortest(gclient, trip["id"], first).status_code == 200
    assert not [r.path for r in google_standin.requests if r.path == "/v1/places/ChIJ_museu_azulejo"]
