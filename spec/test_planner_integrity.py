"""The planner's part of "the plan checks everything": "Find places to eat"
replaces a meal the day already has (one change, same place in the day),
Explore ranks by hours, the Optimize preview badges each side from its own
times, and `plan_day`'s schema lists the ids that exist."""

from __future__ import annotations

import json

import pytest

from helpers import make_client, new_trip, op, signup
from standins.google_standin import google_settings, weekly
from standins.openai_standin import ai_settings
from standins.strict_schema import conforms, schema_problems
from test_planner import NO_DEBOUNCE, TRIP_DATE, ScriptedModel, good_plan, optimize, plan_trip, save_prefs, trip_dto


@pytest.fixture
def model(openai_standin) -> ScriptedModel:
    return ScriptedModel(openai_standin)


@pytest.fixture
def env(settings, google_standin, openai_standin, model):
    google_standin.today = TRIP_DATE   # dated hours: confirmed for the trip's date
    with make_client(ai_settings(google_settings(settings, google_standin), openai_standin), **NO_DEBOUNCE) as client:
        yield client


def add(client, trip_id, day_id, name, point, **fields) -> str:
    r = op(client, trip_id, "insert_stop", dayId=day_id, name=name, lat=point[0], lng=point[1], **fields)
    assert r.status_code == 200, r.text
    return next(d for d in r.json()["data"]["trip"]["days"] if d["id"] == day_id)["stops"][-1]["id"]


def timeline_ops(client, trip_id) -> list[dict]:
    messages = client.get(f"/api/trips/{trip_id}/agent/messages").json()["data"]["messages"]
    return [m["parts"][1]["data"] for m in messages if m["source"] == "operation"]


def test_eat_replaces_the_meal_the_day_has_in_one_change(env):
    signup(env)
    trip = new_trip(env)
    day = trip["days"][0]["id"]
    add(env, trip["id"], day, "Castelo", (38.7139, -9.1335), durationMin=120)
    dinner = add(env, trip["id"], day, "Dinner somewhere", (38.7099, -9.1440), kind="food", meal="dinner",
                 setTime="20:00", durationMin=90)
    last = add(env, trip["id"], day, "Fado", (38.7110, -9.1300), setTime="22:30")
    r = env.post(f"/api/trips/{trip['id']}/days/{day}/eat", json={"meal": "dinner"})
    assert r.status_code == 200, r.text
    suggestions = r.json()["data"]["suggestions"]
    assert suggestions
    castelo = trip_dto(env, trip["id"])["days"][0]["stops"][0]["id"]
    for s in suggestions:
        assert s["replacesStopId"] == dinner and s["afterStopId"] == castelo
        assert s["meal"] == "dinner" and s["durationMin"] == 90 and s["hours"]["fits"] is True
    pick = suggestions[0]
    version = trip_dto(env, trip["id"])["version"]

    r = env.post(f"/api/trips/{trip['id']}/drafts/{pick['draftId']}/apply", json={})
    assert r.status_code == 200, r.text
    after = r.json()["data"]
    assert after["version"] == version + 1, "one change"
    stops = after["days"][0]["stops"]
    assert [s["id"] for s in stops][0] == castelo and stops[2]["id"] == last
    assert stops[1]["placeId"] == pick["place"]["placeId"] and stops[1]["setTime"] == "20:00"
    assert dinner not in [s["id"] for s in stops]
    assert [(e["op"], e["version"]) for e in timeline_ops(env, trip["id"])[-2:]] == [
        ("insert_stop", version + 1), ("delete_stop", version + 1)]


def dinner_and_its_replacements(env) -> tuple[dict, str, str, list[dict]]:
    """A day with a dinner, and "Find places to eat" for dinner on it: (trip, day id, dinner's id, suggestions)."""
    trip = new_trip(env)
    day = trip["days"][0]["id"]
    add(env, trip["id"], day, "Castelo", (38.7139, -9.1335), durationMin=120)
    dinner = add(env, trip["id"], day, "Dinner somewhere", (38.7099, -9.1440), kind="food", meal="dinner",
                 setTime="20:00", durationMin=90)
    picks = env.post(f"/api/trips/{trip['id']}/days/{day}/eat", json={"meal": "dinner"}).json()["data"]["suggestions"]
    assert picks[0]["replacesStopId"] == dinner
    return trip, day, dinner, picks


def test_a_replacement_hands_the_meals_expenses_to_the_new_place(env):
    """The dinner's deposit (recorded after the suggestions came, as a member
    might meanwhile) was left for a stop that is gone once another place
    replaced the dinner: it is the new place's now, on its day."""
    me = signup(env)
    trip, day, dinner, picks = dinner_and_its_replacements(env)
    r = op(env, trip["id"], "add_expense", title="Deposit", amountMinor=5000, currency="EUR", paidBy=me["id"],
           dayId=day, stopId=dinner)
    assert r.status_code == 200, r.text
    r = env.post(f"/api/trips/{trip['id']}/drafts/{picks[0]['draftId']}/apply", json={})
    assert r.status_code == 200, r.text
    after = r.json()["data"]
    new = next(s for s in after["days"][0]["stops"] if s.get("placeId") == picks[0]["place"]["placeId"])
    [deposit] = after["expenses"]
    assert (deposit["title"], deposit["stopId"], deposit["dayId"]) == ("Deposit", new["id"], day)


def test_a_replacement_is_refused_once_the_meal_it_removes_got_a_note(env):
    """A replacement deletes the old meal: a note written on it since (by
    another member, say) would go with it, unseen by whoever applies."""
    signup(env)
    trip, day, dinner, picks = dinner_and_its_replacements(env)
    assert op(env, trip["id"], "update_stop", stopId=dinner, note="Booked for 8 people, ask for Rui").status_code == 200
    version = trip_dto(env, trip["id"])["version"]
    r = env.post(f"/api/trips/{trip['id']}/drafts/{picks[0]['draftId']}/apply", json={})
    assert r.status_code == 409 and r.json()["error"]["code"] == "stale", r.text
    after = trip_dto(env, trip["id"])
    assert after["version"] == version
    assert [s["note"] for s in after["days"][0]["stops"] if s["id"] == dinner] == ["Booked for 8 people, ask for Rui"]
    # Asked again, the replacement is offered on the day as it is, and applies.
    picks = env.post(f"/api/trips/{trip['id']}/days/{day}/eat", json={"meal": "dinner"}).json()["data"]["suggestions"]
    assert env.post(f"/api/trips/{trip['id']}/drafts/{picks[0]['draftId']}/apply", json={}).status_code == 200


def test_eat_for_a_meal_the_day_lacks_adds_one(env):
    signup(env)
    t = plan_trip(env)
    suggestions = env.post(f"/api/trips/{t['id']}/days/{t['day']}/eat", json={}).json()["data"]["suggestions"]
    assert suggestions and all(s["replacesStopId"] is None and s["meal"] == "lunch" for s in suggestions)


def test_a_replacement_is_still_checked_against_its_hours_on_apply(env):
    signup(env)
    trip = new_trip(env)
    day = trip["days"][0]["id"]
    add(env, trip["id"], day, "Castelo", (38.7139, -9.1335), durationMin=120)
    add(env, trip["id"], day, "Lunch somewhere", (38.7099, -9.1440), kind="food", meal="lunch")
    pick = env.post(f"/api/trips/{trip['id']}/days/{day}/eat", json={"meal": "lunch"}).json()["data"]["suggestions"][0]
    version = trip_dto(env, trip["id"])["version"]
    r = env.post(f"/api/trips/{trip['id']}/drafts/{pick['draftId']}/apply", json={"startTime": "04:00"})
    assert r.status_code == 409 and r.json()["error"]["code"] == "hours"
    assert trip_dto(env, trip["id"])["version"] == version, "nothing removed either"


def test_explore_ranks_places_that_fit_their_hours_first_and_no_hours_last(env, google_standin):
    signup(env)
    t = plan_trip(env)
    suggestions = env.post(f"/api/trips/{t['id']}/days/{t['day']}/explore", json={}).json()["data"]["suggestions"]
    statuses = [s["hours"]["status"] for s in suggestions]
    assert "none" in statuses and statuses[0] != "none", statuses
    assert statuses == sorted(statuses, key=lambda status: status == "none"), "no hours only at the end"
    assert all(s["hours"]["fits"] for s in suggestions if s["hours"]["status"] != "none")
    # The viewpoint without hours is the best rated of them, and still comes last.
    assert suggestions[-1]["place"]["placeId"] == "ChIJ_miradouro_luzia"


def test_an_explored_sight_is_rechecked_on_apply_by_the_visit_rule(env):
    """Hours apply to every stop with a place: an explored sight applied with an
    edited start its (confirmed) hours rule out is refused like a meal (409
    `hours` with the latest start, nothing saved), by the visit rule (no
    buffer); a time that fits is saved; a sight with no hours known is not
    refused (unknown is not closed)."""
    signup(env)
    t = plan_trip(env)
    suggestions = env.post(f"/api/trips/{t['id']}/days/{t['day']}/explore", json={}).json()["data"]["suggestions"]
    castle = next(s for s in suggestions if s["place"]["placeId"] == "ChIJ_castelo_jorge")   # 09:00-21:00
    version = trip_dto(env, t["id"])["version"]
    r = env.post(f"/api/trips/{t['id']}/drafts/{castle['draftId']}/apply", json={"startTime": "04:00"})
    assert r.status_code == 409 and r.json()["error"]["code"] == "hours", r.text
    # The visit rule: the whole visit inside the hours, no 30 minutes before closing.
    assert r.json()["error"]["latestStart"] == f"{(21 * 60 - castle['durationMin']) // 60:02d}:" \
                                                f"{(21 * 60 - castle['durationMin']) % 60:02d}"
    assert "visit" in r.json()["error"]["message"] and "meal" not in r.json()["error"]["message"]
    assert trip_dto(env, t["id"])["version"] == version, "nothing saved"
    r = env.post(f"/api/trips/{t['id']}/drafts/{castle['draftId']}/apply", json={"startTime": "16:00"})
    assert r.status_code == 200, r.text

    t = plan_trip(env)
    suggestions = env.post(f"/api/trips/{t['id']}/days/{t['day']}/explore", json={}).json()["data"]["suggestions"]
    viewpoint = next(s for s in suggestions if s["hours"]["status"] == "none")
    r = env.post(f"/api/trips/{t['id']}/drafts/{viewpoint['draftId']}/apply", json={"startTime": "16:30"})
    assert r.status_code == 200, r.text


def test_the_latest_start_offered_after_midnight_is_one_that_fits(env, google_standin):
    """An edited start after midnight ("25:00", the day plan's clock) is
    judged on the next date's hours. The 409's latest start is then a start
    this apply takes back: the next morning's when that fits, else the day's
    own. Before: it was the next date's latest on its own clock ("21:30"),
    which sent back is 21:30 of the day itself, under other hours, and
    refused again."""
    # Thursday 10 December (the trip's date) 10:00-18:00; Friday 10:00-23:00.
    hours = weekly([4], ("10:00", "18:00"))
    hours["periods"] += weekly([5], ("10:00", "23:00"))["periods"]
    google_standin.add_place("ChIJ_galeria_quinta", "Galeria da Quinta", 38.7125, -9.1320,
                             ["art_gallery", "museum", "tourist_attraction"], rating=4.9, count=90000, hours=hours)
    signup(env)
    t = plan_trip(env)
    suggestions = env.post(f"/api/trips/{t['id']}/days/{t['day']}/explore", json={}).json()["data"]["suggestions"]
    gallery = next(s for s in suggestions if s["place"]["placeId"] == "ChIJ_galeria_quinta")
    version = trip_dto(env, t["id"])["version"]
    apply = f"/api/trips/{t['id']}/drafts/{gallery['draftId']}/apply"
    r = env.post(apply, json={"startTime": "25:00", "durationMin": 90})
    assert r.status_code == 409 and r.json()["error"]["code"] == "hours", r.text
    latest = r.json()["error"]["latestStart"]
    assert latest == "16:30" and "latest start that fits is 16:30" in r.json()["error"]["message"]
    assert trip_dto(env, t["id"])["version"] == version, "nothing saved"
    r = env.post(apply, json={"startTime": latest, "durationMin": 90})
    assert r.status_code == 200, r.text


def test_each_suggestion_carries_its_dates_periods_for_the_pages_precheck(env):
    """The page warns before Add when an edited start or length will not fit
    (public/hours.js precheckSuggestion): each suggestion's hours carry the
    date's periods by its rule (a meal: kitchen hours bound them), none when
    no hours are known."""
    signup(env)
    t = plan_trip(env)
    eat = env.post(f"/api/trips/{t['id']}/days/{t['day']}/eat", json={"meal": "dinner"}).json()["data"]
    ramiro = next(s for s in eat["suggestions"] if s["place"]["placeId"] == "ChIJ_cervejaria_ramiro")
    # Thu 10 Dec: open 12:00-00:30, kitchen until 00:00; Wednesday night's kitchen ran to 00:00 too.
    assert ramiro["hours"]["spans"] == [[12 * 60, 24 * 60]], ramiro["hours"]
    explore = env.post(f"/api/trips/{t['id']}/days/{t['day']}/explore", json={}).json()["data"]
    castle = next(s for s in explore["suggestions"] if s["place"]["placeId"] == "ChIJ_castelo_jorge")
    assert castle["hours"]["spans"] == [[9 * 60, 21 * 60]]
    viewpoint = next(s for s in explore["suggestions"] if s["hours"]["status"] == "none")
    assert viewpoint["hours"]["spans"] is None


def test_the_preview_badges_each_side_from_its_own_times(env, model):
    signup(env)
    save_prefs(env)
    t = plan_trip(env)
    # Cervejaria Ramiro opens at 12:00: first thing in the morning it is closed, after the
    # 13:00 tour it is open.
    # (Placed past Graça, so the path after the tour does not cross itself.)
    ramiro = add(env, t["id"], t["day"], "Cervejaria Ramiro", (38.7185, -9.1295), kind="food", meal="lunch",
                 placeId="ChIJ_cervejaria_ramiro")
    assert op(env, t["id"], "move_stop", stopId=ramiro, toDayId=t["day"], position=0).status_code == 200
    model.json("plan_day", {"order": [t["free"][0], t["free"][1], t["free"][2], ramiro], "additions": [],
                            "summary": "Lunch after the tour."})
    r = optimize(env, t)
    assert r.status_code == 200, r.text
    stop = next(s for s in r.json()["data"]["draft"]["preview"]["stops"] if s["stopId"] == ramiro)
    assert stop["before"]["startTime"] == "09:00" and stop["before"]["hours"]["fits"] is False
    assert stop["after"]["startMinutes"] > 14 * 60 and stop["after"]["hours"]["fits"] is True
    assert stop["before"]["hours"]["status"] == stop["after"]["hours"]["status"] == "confirmed"
    castelo = next(s for s in r.json()["data"]["draft"]["preview"]["stops"] if s["stopId"] == t["free"][0])
    assert castelo["before"]["hours"] is None, "no place, no badge"


def test_plan_day_is_told_which_ids_exist(env, model):
    signup(env)
    save_prefs(env)
    t = plan_trip(env)
    model.json("plan_day", good_plan(t))
    assert optimize(env, t).status_code == 200
    schema = model.requests("plan_day")[0].body["text"]["format"]["schema"]
    assert schema_problems(schema) == []
    assert schema["properties"]["order"]["items"] == {"type": "string", "enum": t["free"]}
    addition = schema["properties"]["additions"]["items"]["properties"]
    assert set(addition["afterStopId"]["enum"]) == set(t["ids"].values())
    candidates = addition["placeId"]["enum"]
    assert candidates and "ChIJ_made_up" not in candidates
    assert conforms(schema, good_plan(t, [{"placeId": candidates[0], "afterStopId": t["free"][0]}]))
    assert not conforms(schema, good_plan(t, [{"placeId": "ChIJ_made_up", "afterStopId": t["free"][0]}]))
    assert not conforms(schema, {**good_plan(t), "order": [t["pinned"], *t["free"]]})


def test_plan_day_is_never_offered_a_place_that_cannot_open_that_day(env, model, google_standin):
    """The model sees no opening hours, so a candidate must be able to take
    a stop on the trip's date: a restaurant with no hours (never treated as
    open) or one closed that Thursday is not offered (any addition of it
    could only have the whole plan refused, the call spent); a restaurant
    open that day is, and so is a sight with no hours known (unknown is not
    closed)."""
    near = (38.7125, -9.1322)
    google_standin.add_place("ChIJ_sem_horario", "Sem Horário", *near, ["restaurant", "food"], rating=5.0,
                             count=99000)
    google_standin.add_place("ChIJ_fecha_quinta", "Fecha à Quinta", *near, ["restaurant", "food"], rating=5.0,
                             count=98000, hours=weekly((0, 1, 2, 3, 5, 6), ("12:00", "23:00")))
    google_standin.add_place("ChIJ_aberto", "Sempre Aberto", *near, ["restaurant", "food"], rating=5.0,
                             count=97000, hours=weekly(range(7), ("12:00", "23:00")))
    signup(env)
    save_prefs(env, cuisines=[])   # restaurants from the default type
    t = plan_trip(env)
    model.json("plan_day", good_plan(t))
    assert optimize(env, t).status_code == 200
    facts = json.loads(model.requests("plan_day")[0].body["input"][0]["content"])
    offered = {c["placeId"] for c in facts["candidates"]}
    assert "ChIJ_aberto" in offered and "ChIJ_miradouro_luzia" in offered
    assert not offered & {"ChIJ_sem_horario", "ChIJ_fecha_quinta"}
    schema = model.requests("plan_day")[0].body["text"]["format"]["schema"]
    assert "ChIJ_sem_horario" not in schema["properties"]["additions"]["items"]["properties"]["placeId"]["enum"]
    # What it is offered comes with its hours that day, so it can place a meal inside them.
    hours = {c["placeId"]: c.get("openOnDate") for c in facts["candidates"]}
    assert hours["ChIJ_aberto"] == ["12:00-23:00"] and hours["ChIJ_miradouro_luzia"] is None
    assert hours["ChIJ_cervejaria_ramiro"] == ["12:00-00:00 (+1)"]   # by its kitchen: the doors close at 00:30


def test_explore_never_pushes_a_booked_time_out_of_reach(env):
    """A sight slotted between a stop and a tight set-time lunch would make the
    lunch unreachable: such a suggestion is not offered."""
    signup(env)
    trip = new_trip(env, days=1)
    day = trip["days"][0]["id"]
    first = add(env, trip["id"], day, "Castelo", (38.7139, -9.1335), durationMin=60)
    add(env, trip["id"], day, "Lunch", (38.7120, -9.1360), kind="food", meal="lunch", setTime="10:15")
    suggestions = env.post(f"/api/trips/{trip['id']}/days/{day}/explore", json={}).json()["data"]["suggestions"]
    assert suggestions, "places after the lunch still fit"
    assert all(s["afterStopId"] != first for s in suggestions)


def test_eat_never_offers_a_place_whose_wait_for_opening_makes_a_booking_late(env, google_standin):
    """The only restaurant opens at 12:30: lunch there before the 13:00 tour
    would have to wait and end at 13:45, after the tour starts. It is offered
    after the tour instead, still at lunch time, never before it."""
    google_standin.places = {}
    google_standin.add_place("ChIJ_late_opener", "Tasca Tardia", 38.7125, -9.1340, ["restaurant", "food"],
                             hours=weekly(range(7), ("12:30", "22:00")))
    signup(env)
    save_prefs(env)
    trip = new_trip(env, days=1)
    day = trip["days"][0]["id"]
    add(env, trip["id"], day, "Castelo", (38.7139, -9.1335), durationMin=60)
    add(env, trip["id"], day, "Tour", (38.7130, -9.1345), setTime="13:00", durationMin=60)
    tour = trip_dto(env, trip["id"])["days"][0]["stops"][1]["id"]
    r = env.post(f"/api/trips/{trip['id']}/days/{day}/eat", json={"meal": "lunch"})
    assert r.status_code == 200, r.text
    [lunch] = r.json()["data"]["suggestions"]
    assert lunch["place"]["placeId"] == "ChIJ_late_opener" and lunch["afterStopId"] == tour
    assert 14 * 60 <= lunch["startMinutes"] <= 15 * 60 and lunch["hours"]["fits"]
