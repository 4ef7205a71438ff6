"""The planning assistant against the OpenAI and Google stand-ins, over HTTP
through the real app: eat/explore drafts, Optimize my day (an adversarial
model never produces an applied change), preview equals apply, stale and
forged drafts, roles, preferences privacy, limits, and the keys."""

from __future__ import annotations

import json
import logging
import sqlite3
from datetime import date

import pytest

from helpers import join, make_client, new_trip, op, signup, use
from standins.google_standin import google_settings, weekly
from standins.openai_standin import TEST_KEY, Reply, ai_settings, message_item

TRIP_DATE = date(2026, 12, 10)
ALLERGY = "severe peanut allergy ZQX-7781"
DIETARY = "halal-zqx"
FOOD_NOTE_WORDS = "allergies and dietary needs with the restaurant"


QUIET = {"shouldNotify": False, "severity": "low", "confidence": 0.0, "reason": "", "suggestion": "",
         "pendingPatch": None, "expiresInMinutes": None, "fixId": None}
# The trip agent evaluates edits in the background right away (no debounce to wait out at shutdown).
NO_DEBOUNCE = {"agent_debounce_s": 0.0}


class ScriptedModel:
    """Answers the OpenAI stand-in by structured output name (`text.format.name`),
    so the trip agent's own background evaluations can never take a reply
    scripted for the planner or the copilot; they get a quiet "no"."""

    def __init__(self, standin):
        self.standin = standin
        self.queues: dict[str, list[Reply]] = {}
        standin.responder = self

    @staticmethod
    def name_of(request) -> str | None:
        body = request.body if isinstance(request.body, dict) else {}
        return ((body.get("text") or {}).get("format") or {}).get("name")

    def __call__(self, request) -> Reply:
        name = self.name_of(request)
        if self.queues.get(name):
            return self.queues[name].pop(0)
        if name == "intervention_decision":
            return Reply(output=[message_item(json.dumps(QUIET))])
        return Reply(kind="http_error", http_status=500,
                     error={"message": f"nothing scripted for {name}", "type": "server_error", "param": None,
                            "code": None})

    def add(self, name: str, reply: Reply) -> None:
        self.queues.setdefault(name, []).append(reply)

    def json(self, name: str, obj) -> None:
        self.add(name, Reply(output=[message_item(json.dumps(obj))]))

    def text(self, name: str, text: str) -> None:
        self.add(name, Reply(output=[message_item(text)]))

    def refusal(self, name: str) -> None:
        self.add(name, Reply(output=[message_item(refusal="I can't help with that.")]))

    def fail(self, name: str, status: int) -> None:
        # An empty 401 message makes the stand-in echo the key, as the real API does.
        self.add(name, Reply(kind="http_error", http_status=status,
                             error={"message": "" if status == 401 else "Server error", "param": None,
                                    "type": "invalid_request_error", "code": None}))

    def requests(self, name: str) -> list:
        return [r for r in list(self.standin.requests) if self.name_of(r) == name]

    def count(self, name: str) -> int:
        return len(self.requests(name))


@pytest.fixture
def model(openai_standin) -> ScriptedModel:
    return ScriptedModel(openai_standin)


@pytest.fixture
def env(settings, google_standin, openai_standin, model):
    google_standin.today = TRIP_DATE   # dated hours: confirmed for the trip's date
    with make_client(ai_settings(google_settings(settings, google_standin), openai_standin), **NO_DEBOUNCE) as client:
        yield client


def db_rows(settings, sql: str, params=()) -> list[tuple]:
    with sqlite3.connect(settings.db_path) as conn:
        return conn.execute(sql, params).fetchall()


def save_prefs(client, **prefs) -> None:
    body = {"cuisines": ["seafood"], "dietary": [DIETARY], "allergies": ALLERGY, **prefs}
    assert client.put("/api/users/preferences", json=body).status_code == 200


def plan_trip(client) -> dict:
    """A day near Lisbon: three free stops and one pinned at 13:00."""
    trip = new_trip(client)
    day = trip["days"][0]["id"]
    ids = {}
    for name, point, extra in [("Castelo", (38.7139, -9.1335), {}), ("Sé", (38.7098, -9.1335), {}),
                               ("Tour", (38.7117, -9.1301), {"setTime": "13:00"}),
                               ("Graça", (38.7163, -9.1310), {})]:
        r = op(client, trip["id"], "insert_stop", dayId=day, name=name, lat=point[0], lng=point[1], **extra)
        ids[name] = r.json()["data"]["trip"]["days"][0]["stops"][-1]["id"]
    return {"id": trip["id"], "day": day, "ids": ids, "free": [ids["Castelo"], ids["Sé"], ids["Graça"]],
            "pinned": ids["Tour"]}


def trip_dto(client, trip_id) -> dict:
    r = client.get(f"/api/trips/{trip_id}")
    assert r.status_code == 200, r.text
    return r.json()["data"]


def optimize(client, t):
    return client.post(f"/api/trips/{t['id']}/days/{t['day']}/optimize", json={})


def good_plan(t, additions=()) -> dict:
    return {"order": [t["free"][2], t["free"][1], t["free"][0]], "additions": list(additions),
            "summary": "Graça first, then down to the Sé."}


# -- Optimize my day ----------------------------------------------------------------------


def test_optimize_asks_for_preferences_once(env, model):
    signup(env)
    t = plan_trip(env)
    r = optimize(env, t)
    assert r.status_code == 409 and r.json()["error"]["code"] == "preferences"
    assert model.count("plan_day") == 0
    save_prefs(env)
    model.json("plan_day", good_plan(t))
    assert optimize(env, t).status_code == 200


def test_preview_then_apply_equals_the_preview(env, model, settings):
    signup(env)
    save_prefs(env)
    t = plan_trip(env)
    version = trip_dto(env, t["id"])["version"]
    # Ramiro at the end of the day: after the tour, where the path does not cross itself.
    model.json("plan_day", good_plan(t, [{"placeId": "ChIJ_cervejaria_ramiro", "afterStopId": t["free"][0]}]))
    r = optimize(env, t)
    assert r.status_code == 200, r.text
    draft = r.json()["data"]["draft"]
    assert set(draft) == {"id", "edits", "preview", "travel"} and draft["preview"]["added"] == []
    assert {e["op"] for e in draft["edits"]} <= {"move_stop", "insert_stop"}
    preview = draft["preview"]
    added = [s for s in preview["stops"] if s["added"]]
    assert [s["name"] for s in added] == ["Cervejaria Ramiro"]
    assert added[0]["before"] is None and added[0]["after"]["hours"]["fits"] is True
    assert added[0]["meal"] in ("lunch", "afternoon_tea")
    pinned = next(s for s in preview["stops"] if s["stopId"] == t["pinned"])
    assert pinned["before"] == pinned["after"] == {"startTime": "13:00", "endTime": "14:00", "startMinutes": 780,
                                                   "endMinutes": 840, "hours": None}
    assert trip_dto(env, t["id"])["version"] == version, "a preview changes nothing"

    r = env.post(f"/api/trips/{t['id']}/drafts/{draft['id']}/apply", json={})
    assert r.status_code == 200, r.text
    day = r.json()["data"]["days"][0]
    assert r.json()["data"]["version"] == version + 1, "one change"
    assert [(s["name"], s["startTime"], s["endTime"]) for s in day["stops"]] == \
        [(s["name"], s["after"]["startTime"], s["after"]["endTime"]) for s in preview["stops"]]
    assert [leg["mode"] for leg in day["legs"]] == [leg["mode"] for leg in preview["legs"]]
    food = next(s for s in day["stops"] if s["name"] == "Cervejaria Ramiro")
    assert FOOD_NOTE_WORDS in food["note"]
    assert db_rows(settings, "SELECT status FROM ai_usage WHERE feature = 'plan_day'") == [("completed",)]
    request = model.requests("plan_day")[0].body
    assert request["text"]["format"]["name"] == "plan_day" and request["max_output_tokens"] == 2500
    assert request["store"] is False


def _place_not_offered(t):
    return good_plan(t, [{"placeId": "ChIJ_farmacia_24h", "afterStopId": t["free"][0]}])


ADVERSARIAL = {
    "a place id it was not given": (_place_not_offered, "did not offer"),
    "an invented place id": (lambda t: good_plan(t, [{"placeId": "ChIJ_made_up", "afterStopId": t["free"][0]}]),
                             "did not offer"),
    "a set-time stop moved": (lambda t: {**good_plan(t), "order": [t["pinned"], *t["free"]]}, "set time"),
    "a free stop missing": (lambda t: {**good_plan(t), "order": t["free"][:2]}, "left out"),
    "a free stop doubled": (lambda t: {**good_plan(t), "order": [t["free"][0], *t["free"]]}, "twice"),
    "five additions": (lambda t: good_plan(t, [{"placeId": p, "afterStopId": t["free"][0]} for p in
                                              ("ChIJ_cervejaria_ramiro", "ChIJ_mercado_ribeira", "ChIJ_miradouro_luzia",
                                               "ChIJ_castelo_jorge", "ChIJ_taberna_flores")]), "at most 4"),
    "an unknown stop to follow": (lambda t: good_plan(t, [{"placeId": "ChIJ_cervejaria_ramiro",
                                                          "afterStopId": "nope"}]), "not on this day"),
}


@pytest.mark.parametrize("case", sorted(ADVERSARIAL) + ["malformed JSON", "wrong shape", "a refusal"])
def test_an_adversarial_model_never_changes_the_trip(env, model, settings, case):
    signup(env)
    save_prefs(env)
    t = plan_trip(env)
    before = trip_dto(env, t["id"])
    if case == "malformed JSON":
        model.text("plan_day", '{"order": ["')
    elif case == "wrong shape":
        model.json("plan_day", {"order": "all of them", "additions": [], "summary": "x"})
    elif case == "a refusal":
        model.refusal("plan_day")
    else:
        model.json("plan_day", ADVERSARIAL[case][0](t))
    r = optimize(env, t)
    assert r.status_code == 502, r.text
    error = r.json()["error"]
    if case in ADVERSARIAL:
        assert error["code"] == "plan_rejected"
        assert ADVERSARIAL[case][1] in error["message"] and "Nothing was changed" in error["message"]
    else:
        assert error["code"] == "ai_bad_output" and error["message"]
    after = trip_dto(env, t["id"])
    assert after["version"] == before["version"] and after["days"] == before["days"]
    assert db_rows(settings, "SELECT COUNT(*) FROM planner_drafts")[0][0] == 0, "nothing stored to apply"
    assert db_rows(settings, "SELECT status FROM ai_usage WHERE feature = 'plan_day'") == [("failed",)]


def test_a_restaurant_added_outside_its_hours_is_refused(env, model, google_standin):
    # Open 12:00-15:00 and 19:00-23:00: lunch right after the 13:00-14:00 tour runs into the break.
    google_standin.add_place("ChIJ_tasca_do_meio", "Tasca do Meio", 38.7121, -9.1318, ["restaurant", "food"],
                             rating=4.9, count=8000, hours=weekly(range(7), ("12:00", "15:00"), ("19:00", "23:00")))
    signup(env)
    save_prefs(env, cuisines=[])   # candidates from the default types: sights and restaurants
    t = plan_trip(env)
    version = trip_dto(env, t["id"])["version"]
    model.json("plan_day", good_plan(t, [{"placeId": "ChIJ_tasca_do_meio", "afterStopId": t["pinned"]}]))
    r = optimize(env, t)
    assert r.status_code == 502 and r.json()["error"]["code"] == "plan_rejected", r.text
    assert "Tasca do Meio" in r.json()["error"]["message"] and "not open" in r.json()["error"]["message"]
    assert trip_dto(env, t["id"])["version"] == version


def test_optimize_limits_the_day_to_25_stops(env, model):
    signup(env)
    save_prefs(env)
    trip = new_trip(env)
    day = trip["days"][0]["id"]
    for i in range(26):
        op(env, trip["id"], "insert_stop", dayId=day, name=f"S{i}", lat=38.71 + i * 0.0005, lng=-9.14)
    r = env.post(f"/api/trips/{trip['id']}/days/{day}/optimize", json={})
    assert r.status_code == 422 and model.count("plan_day") == 0


def test_optimize_on_an_empty_day_says_so_before_the_model(env, model, settings):
    """A day without stops has nothing to order and no stop to add a place
    after: refused in words before the model is asked. Before: the model was
    asked, then the shortest-order offer read the empty order's first stop,
    a 500."""
    signup(env)
    save_prefs(env)
    trip = new_trip(env)
    day = trip["days"][0]["id"]
    model.json("plan_day", {"order": [], "additions": [], "summary": "Nothing to do."})
    r = env.post(f"/api/trips/{trip['id']}/days/{day}/optimize", json={})
    assert r.status_code == 422, r.text
    assert r.json()["error"]["field"] == "dayId" and "add a stop first" in r.json()["error"]["message"]
    assert model.count("plan_day") == 0
    assert db_rows(settings, "SELECT COUNT(*) FROM ai_usage WHERE feature = 'plan_day'")[0][0] == 0


# -- drafts: stale, forged, roles ---------------------------------------------------------------


def _draft(client, model, t) -> str:
    model.json("plan_day", good_plan(t))
    r = optimize(client, t)
    assert r.status_code == 200, r.text
    return r.json()["data"]["draft"]["id"]


def test_a_stale_draft_and_a_forged_draft_are_refused(env, model):
    signup(env)
    save_prefs(env)
    t = plan_trip(env)
    draft = _draft(env, model, t)
    op(env, t["id"], "update_stop", stopId=t["free"][0], durationMin=45)
    version = trip_dto(env, t["id"])["version"]
    r = env.post(f"/api/trips/{t['id']}/drafts/{draft}/apply", json={})
    assert r.status_code == 409 and r.json()["error"]["code"] == "stale"
    assert trip_dto(env, t["id"])["version"] == version
    for forged in ("dr_forged", draft[:-2] + "xx"):
        r = env.post(f"/api/trips/{t['id']}/drafts/{forged}/apply", json={})
        assert r.status_code == 404
    other = plan_trip(env)   # a draft of one trip cannot be applied to another
    draft = _draft(env, model, other)
    assert env.post(f"/api/trips/{t['id']}/drafts/{draft}/apply", json={}).status_code == 404
    r = env.post(f"/api/trips/{other['id']}/drafts/{draft}/apply", json={"startTime": "10:00"})
    assert r.status_code == 422, "a plan's times are computed, not edited"


def test_an_editor_may_apply_a_viewer_may_not(env, model):
    owner, editor, viewer, stranger = (signup(env) for _ in range(4))
    use(env, owner)
    save_prefs(env)
    t = plan_trip(env)
    join(env, owner, t["id"], editor, role="editor")
    join(env, owner, t["id"], viewer, role="viewer")
    use(env, owner)
    draft = _draft(env, model, t)
    use(env, stranger)
    assert env.post(f"/api/trips/{t['id']}/drafts/{draft}/apply", json={}).status_code == 404
    use(env, viewer)
    r = env.post(f"/api/trips/{t['id']}/drafts/{draft}/apply", json={})
    assert r.status_code == 403, r.text
    use(env, editor)
    r = env.post(f"/api/trips/{t['id']}/drafts/{draft}/apply", json={})
    assert r.status_code == 200 and r.json()["data"]["role"] == "editor"


def test_each_account_keeps_only_its_newest_drafts(env, model, settings, monkeypatch):
    """Every answer of eat, explore, Optimize and Shortest order is stored as
    a draft for a day, and any member (a viewer too) may ask again and
    again: each account keeps its newest DRAFTS_PER_USER drafts, older ones
    go in the same write (applying one is a plain 404, "ask again"), and
    nobody else's are touched. Before: nothing bounded them, and one viewer's
    connection stored about 1.4 GB of 15 KB drafts an hour."""
    from app.planner import drafts

    monkeypatch.setattr(drafts, "DRAFTS_PER_USER", 6, raising=False)
    owner, viewer = signup(env), signup(env)
    use(env, owner)
    t = plan_trip(env)
    join(env, owner, t["id"], viewer, role="viewer")
    use(env, owner)
    kept_by_owner = env.post(f"/api/trips/{t['id']}/days/{t['day']}/shortest", json={}).json()["data"]["draft"]["id"]
    use(env, viewer)
    first = env.post(f"/api/trips/{t['id']}/days/{t['day']}/shortest", json={}).json()["data"]["draft"]["id"]
    for _ in range(7):
        assert env.post(f"/api/trips/{t['id']}/days/{t['day']}/shortest", json={}).status_code == 200
    r = env.post(f"/api/trips/{t['id']}/days/{t['day']}/eat", json={})
    assert r.status_code == 200 and r.json()["data"]["suggestions"], r.text
    newest = r.json()["data"]["suggestions"][0]["draftId"]
    rows = db_rows(settings, "SELECT user_id, COUNT(*) FROM planner_drafts GROUP BY user_id")
    assert dict(rows) == {viewer["id"]: 6, owner["id"]: 1}
    use(env, owner)
    r = env.post(f"/api/trips/{t['id']}/drafts/{first}/apply", json={})
    assert r.status_code == 404 and r.json()["error"]["code"] == "draft_not_found", r.text
    assert env.post(f"/api/trips/{t['id']}/drafts/{newest}/apply", json={}).status_code == 200
    assert db_rows(settings, "SELECT COUNT(*) FROM planner_drafts WHERE id = ?", (kept_by_owner,)) == [(1,)]


# -- limits, availability, keys ---------------------------------------------------------


def test_the_daily_limit_refuses_before_the_provider(settings, google_standin, openai_standin, model):
    google_standin.today = TRIP_DATE
    # Set up on an app without AI (so no agent evaluation can use the one call), same database file.
    with make_client(google_settings(settings, google_standin)) as setup:
        user = signup(setup)
        save_prefs(setup)
        t = plan_trip(setup)
    limited = ai_settings(google_settings(settings, google_standin), openai_standin, ai_daily_limit=1)
    with make_client(limited, **NO_DEBOUNCE) as client:
        use(client, user)
        model.json("plan_day", good_plan(t))
        assert optimize(client, t).status_code == 200
        model.json("plan_day", good_plan(t))
        r = optimize(client, t)
        assert r.status_code == 503 and r.json()["error"]["code"] == "ai_limit"
        assert "usage limit" in r.json()["error"]["message"]
        assert openai_standin.request_count == 1, "nothing at all reached the provider"
        r = client.post(f"/api/trips/{t['id']}/days/{t['day']}/eat", json={})
        assert r.status_code == 200, "eat is Google + code: no AI limit"


def test_optimize_spends_no_place_search_once_the_days_ai_is_spent(settings, google_standin, openai_standin, model):
    """Optimize searches places (billed by Google) before its model call: with
    today's AI spent, it says so first and searches nothing."""
    google_standin.today = TRIP_DATE
    with make_client(google_settings(settings, google_standin)) as setup:
        user = signup(setup)
        save_prefs(setup)
        t = plan_trip(setup)
        porto = new_trip(setup)
        day = porto["days"][0]["id"]
        r = op(setup, porto["id"], "insert_stop", dayId=day, name="Ribeira", lat=41.1406, lng=-8.6110)
        assert r.status_code == 200, r.text
    limited = ai_settings(google_settings(settings, google_standin), openai_standin, ai_daily_limit=1)
    with make_client(limited, **NO_DEBOUNCE) as client:
        use(client, user)
        model.json("plan_day", good_plan(t))
        assert optimize(client, t).status_code == 200
        searched = google_standin.calls["/v1/places:searchNearby"]
        assert searched, "the first Optimize searched nearby places"
        r = optimize(client, {"id": porto["id"], "day": day})
        assert r.status_code == 503 and r.json()["error"]["code"] == "ai_limit", r.text
        assert google_standin.calls["/v1/places:searchNearby"] == searched, "no search for a call that cannot run"


def test_optimize_spends_no_place_search_while_every_ai_slot_is_taken(settings, google_standin, openai_standin,
                                                                       model):
    """The concurrent calls are full (another member's chat turn is running):
    Optimize says AI is busy (429, try again in a moment) before its searches."""
    google_standin.today = TRIP_DATE
    with make_client(ai_settings(google_settings(settings, google_standin), openai_standin, ai_concurrent=1),
                     **NO_DEBOUNCE) as client:
        signup(client)
        save_prefs(client)
        t = plan_trip(client)
        usage = client.app.state.services.aiusage
        running = client.portal.call(usage.reserve, "someone-else", None, "agent_chat")
        r = optimize(client, t)
        assert r.status_code == 429 and r.json()["error"]["code"] == "busy", r.text
        assert r.headers["retry-after"] == "5"
        assert google_standin.calls["/v1/places:searchNearby"] == 0 and openai_standin.request_count == 0
        client.portal.call(usage.finish, running, "completed", 10, 5)
        model.json("plan_day", good_plan(t))
        assert optimize(client, t).status_code == 200   # the slot is free again


def test_without_keys_features_say_they_are_unavailable(client):
    signup(client)
    save_prefs(client)
    t = plan_trip(client)
    r = optimize(client, t)
    assert r.status_code == 503 and r.json()["error"]["code"] == "ai_unavailable"
    r = client.post(f"/api/trips/{t['id']}/days/{t['day']}/eat", json={})
    assert r.status_code == 503 and r.json()["error"]["code"] == "places_unavailable"
    assert client.get(f"/api/trips/{t['id']}/days/{t['day']}/review").status_code == 200


def test_the_keys_never_appear_in_responses_or_logs(env, model, google_standin, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    signup(env)
    save_prefs(env)
    t = plan_trip(env)
    texts = []
    model.fail("plan_day", 401)   # the real API echoes the key in this message
    texts.append(optimize(env, t).text)
    model.fail("copilot_answer", 500)
    texts.append(env.post(f"/api/trips/{t['id']}/days/{t['day']}/copilot", json={"question": "ok?"}).text)
    model.json("plan_day", good_plan(t))
    texts.append(optimize(env, t).text)
    texts.append(env.post(f"/api/trips/{t['id']}/days/{t['day']}/eat", json={}).text)
    google_standin.fail("/v1/places", 403)
    texts.append(env.post(f"/api/trips/{t['id']}/days/{t['day']}/explore", json={}).text)
    captured = capsys.readouterr()
    everything = "\n".join(texts + [caplog.text, captured.out, captured.err])
    assert '"code":"ai_auth"' in texts[0]
    assert TEST_KEY not in everything and google_standin.key not in everything


# -- preferences privacy ----------------------------------------------------------------


def test_food_preferences_stay_private_and_allergy_text_never_leaves(env, model, openai_standin, google_standin):
    alice, bob = signup(env), signup(env)
    use(env, alice)
    save_prefs(env)
    t = plan_trip(env)
    join(env, alice, t["id"], bob, role="editor")
    use(env, alice)
    model.json("plan_day", good_plan(t))
    assert optimize(env, t).status_code == 200
    model.json("copilot_answer", {"answer": "Looks fine.", "recommendedFixIds": []})
    assert env.post(f"/api/trips/{t['id']}/days/{t['day']}/copilot", json={"question": "ok?"}).status_code == 200
    eat = env.post(f"/api/trips/{t['id']}/days/{t['day']}/eat", json={"meal": "dinner"})
    assert eat.status_code == 200
    sent = [r.raw.decode() for r in openai_standin.requests]
    plan_input = model.requests("plan_day")[0].body["input"][0]["content"]
    assert json.loads(plan_input)["preferences"]["hasAllergies"] is True
    google_sent = [str(r.body) + str(r.query) + r.path for r in google_standin.requests]
    for text in sent + google_sent + [eat.text]:
        assert "ZQX-7781" not in text and "peanut" not in text

    use(env, bob)
    seen = [env.get("/api/users/preferences").text, env.get(f"/api/trips/{t['id']}/preferences").text,
            env.get(f"/api/trips/{t['id']}").text,
            env.post(f"/api/trips/{t['id']}/days/{t['day']}/eat", json={}).text]
    for text in seen:
        assert "peanut" not in text and DIETARY not in text and "seafood" not in text


# -- eat and explore ---------------------------------------------------------------------


def test_find_places_to_eat_and_apply_one(env, model, settings):
    signup(env)
    t = plan_trip(env)
    r = env.post(f"/api/trips/{t['id']}/days/{t['day']}/eat", json={"meal": "lunch"})
    assert r.status_code == 200, r.text
    suggestions = r.json()["data"]["suggestions"]
    assert 1 <= len(suggestions) <= 5
    for s in suggestions:
        assert set(s) >= {"draftId", "place", "afterStopId", "startTime", "durationMin", "hours", "note"}
        assert set(s["place"]) == {"placeId", "name", "lat", "lng", "rating", "priceLevel"}
        assert s["hours"]["fits"] is True and s["hours"]["status"] == "confirmed"
        assert FOOD_NOTE_WORDS in s["note"] and s["durationMin"] == 60
    assert model.count("plan_day") == 0 and model.count("copilot_answer") == 0
    assert db_rows(settings, "SELECT COUNT(*) FROM ai_usage WHERE feature IN ('plan_day', 'copilot')")[0][0] == 0

    pick = suggestions[0]
    r = env.post(f"/api/trips/{t['id']}/drafts/{pick['draftId']}/apply", json={"startTime": "04:00"})
    assert r.status_code == 409 and r.json()["error"]["code"] == "hours"
    assert r.json()["error"]["latestStart"]
    r = env.post(f"/api/trips/{t['id']}/drafts/{pick['draftId']}/apply", json={})
    assert r.status_code == 200, r.text
    stops = r.json()["data"]["days"][0]["stops"]
    added = next(s for s in stops if s["placeId"] == pick["place"]["placeId"])
    assert added["startTime"] == pick["startTime"] and added["kind"] == "food" and added["meal"] == "lunch"
    after = next(i for i, s in enumerate(stops) if s["id"] == pick["afterStopId"])
    assert stops[after + 1]["id"] == added["id"]


def test_an_edited_time_that_fits_is_saved_as_a_set_time(env):
    signup(env)
    t = plan_trip(env)
    eat = env.post(f"/api/trips/{t['id']}/days/{t['day']}/eat", json={"meal": "dinner"})
    pick = eat.json()["data"]["suggestions"][0]
    r = env.post(f"/api/trips/{t['id']}/drafts/{pick['draftId']}/apply", json={"startTime": "20:00", "durationMin": 90})
    assert r.status_code == 200, r.text
    added = next(s for s in r.json()["data"]["days"][0]["stops"] if s["placeId"] == pick["place"]["placeId"])
    assert added["setTime"] == "20:00" and added["durationMin"] == 90


def test_explore_nearby_suggests_places_not_already_in_the_day(env, model):
    signup(env)
    t = plan_trip(env)
    r = env.post(f"/api/trips/{t['id']}/days/{t['day']}/explore", json={})
    assert r.status_code == 200, r.text
    suggestions = r.json()["data"]["suggestions"]
    assert suggestions and model.count("plan_day") == 0
    r = env.post(f"/api/trips/{t['id']}/drafts/{suggestions[0]['draftId']}/apply", json={})
    assert r.status_code == 200
    assert suggestions[0]["place"]["name"] in [s["name"] for s in r.json()["data"]["days"][0]["stops"]]


def test_a_place_already_on_the_day_is_never_a_candidate():
    from app.planner.candidates import already_planned
    from app.trips.model import Day, Stop

    day = Day(id="d", position=0, stops=[
        Stop(id="a", day_id="d", position=0, kind="sight", name="Miradouro de Santa Luzia", lat=38.7117, lng=-9.1301),
        Stop(id="b", day_id="d", position=1, kind="food", name="Lunch", place_id="pl-1")])
    assert already_planned({"placeId": "pl-1", "name": "Somewhere", "lat": 38.0, "lng": -9.0}, day)
    same_name_nearby = {"placeId": "pl-2", "name": "miradouro de santa luzia ", "lat": 38.7118, "lng": -9.1302}
    assert already_planned(same_name_nearby, day)
    assert not already_planned({"placeId": "pl-3", "name": "Miradouro de Santa Luzia", "lat": 38.80, "lng": -9.20}, day)
    assert not already_planned({"placeId": "pl-4", "name": "Castelo", "lat": 38.7117, "lng": -9.1301}, day)
