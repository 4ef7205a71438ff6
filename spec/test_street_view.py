"""Street-view grounding (issue 15 part 2) against the Google and OpenAI
stand-ins: every outcome in the chat stream, the group chat and a stop
thread, answered without a model call or a usage row; images through our own
origin for members only; the server key in no response and no log line."""

from __future__ import annotations

import json
import logging

import pytest

from app.agent.grounding import OUTCOMES, Request, parse
from app.providers.streetview import heading
from helpers import new_trip, op, signup
from standins.google_standin import STREET_VIEW_JPEG, STREET_VIEW_METADATA_PATH, STREET_VIEW_PATH, google_settings
from test_agent_chat import chat, check_protocol
from test_agent_support import agent_client, eventually, events, of_type, user_message

CASTELO = {"name": "Castelo de São Jorge", "lat": 38.7139, "lng": -9.1335}


@pytest.fixture
def seen(openai_standin, google_standin):
    """Every response body and header the test's client received: the key must be in none."""
    bodies: list[str] = []
    yield bodies
    assert google_standin.key not in "\n".join(bodies)
    assert openai_standin.request_count == 0, "street view never calls the model"


def record(seen: list[str], response) -> None:
    seen.append(response.content.decode("latin-1"))
    seen.append(json.dumps(dict(response.headers)))


def setup_trip(client) -> dict:
    signup(client, "alice")
    trip = new_trip(client)
    r = op(client, trip["id"], "insert_stop", dayId=trip["days"][0]["id"], kind="sight", **CASTELO)
    assert r.status_code == 200, r.text
    return trip


def ask(client, seen, trip_id, text, message_id="u1") -> tuple[list[dict], dict]:
    response = chat(client, trip_id, [user_message(text, message_id)])
    record(seen, response)
    chunks = check_protocol(response)
    message_id = of_type(chunks, "start")[0]["messageId"]
    history = client.get(f"/api/trips/{trip_id}/agent/messages")
    record(seen, history)
    stored = next(m for m in history.json()["data"]["messages"] if m["id"] == message_id)
    return chunks, stored


def grounding_of(parts: list[dict]) -> dict:
    return next(p for p in parts if p["type"] == "data-agent-grounding")["data"]


def count_usage(client) -> int:
    db = client.app.state.services.db
    return client.portal.call(db.fetchval, "SELECT COUNT(*) FROM ai_usage")


def test_the_parser_takes_explicit_requests_only():
    assert parse("street view of Torvehallerne").place == "Torvehallerne"
    assert parse("show me Nyhavn in street view").place == "Nyhavn"
    assert parse("@agent Street View of the Castelo, please").place == "Castelo"
    assert parse("Nyhavn 的街景").place == "Nyhavn" and parse("Nyhavn 的街景").language == "zh"
    assert parse("street view").place == ""                     # a request without a place
    for text in ("street view of", "Street view of?", "@agent street view for", "show me the street view of"):
        assert parse(text) == Request("", "en"), text             # the place left out: ask which, no model call
    assert parse("Street View von") == Request("", "de")
    for text in ("street view is amazing here", "I checked the hotel on street view.",
                 "What does the street view of the hotel look like?", "lunch at the castle?"):
        assert parse(text) is None, text


def test_found_from_a_stop_streams_the_card_and_serves_the_image_to_members_only(
        settings, openai_standin, google_standin, seen, caplog):
    caplog.set_level(logging.DEBUG)
    with agent_client(google_settings(settings, google_standin), openai_standin) as client:
        trip = setup_trip(client)
        chunks, stored = ask(client, seen, trip["id"], "street view of Castelo")
        assert [c["type"] for c in chunks] == ["start", "start-step", "data-agent-grounding", "text-start",
                                               "text-delta", "text-end", "data-spec", "finish-step", "finish"]
        grounding = of_type(chunks, "data-agent-grounding")[0]["data"]
        assert grounding["outcome"] == "found" and grounding["kind"] == "street_view"
        assert grounding["place"]["source"] == "stop" and grounding["place"]["name"] == CASTELO["name"]
        assert of_type(chunks, "text-delta")[0]["delta"] == "Street view of Castelo de São Jorge."
        spec = of_type(chunks, "data-spec")[0]["data"]["spec"]
        image = spec["elements"][spec["root"]]
        assert image["type"] == "StreetViewImage"
        assert image["props"]["copyright"] == "© Google" and image["props"]["date"] == "2023-06"
        url = image["props"]["imageUrl"]
        assert url.startswith(f"/api/trips/{trip['id']}/street-view/")
        assert [p["type"] for p in stored["parts"]] == ["data-agent-grounding", "text", "data-spec"]
        assert count_usage(client) == 0

        # Google was asked with the server key, for the panorama near the stop, the camera facing it.
        metadata = google_standin.last(STREET_VIEW_METADATA_PATH).query
        assert metadata["key"] == [google_standin.key] and metadata["source"] == ["outdoor"]
        picture = google_standin.last(STREET_VIEW_PATH).query
        assert picture["return_error_code"] == ["true"] and picture["pano"] == ["CAoSLEFGMVFpcE_castelo"]
        assert picture["heading"] == [str(heading(38.71382, -9.13372, CASTELO["lat"], CASTELO["lng"]))]

        served = client.get(url)
        record(seen, served)
        assert served.status_code == 200 and served.content == STREET_VIEW_JPEG
        assert served.headers["content-type"] == "image/jpeg"
        assert served.headers["cache-control"].startswith("private")
        assert google_standin.calls[STREET_VIEW_PATH] == 1      # fetched once, at grounding; then cached

        tampered = url[:-1] + ("0" if url[-1] != "0" else "1")
        unsigned = url.rsplit("/", 1)[0] + "/CAoSLEFGMVFpcE_castelo.0.000000000000000000000000"
        for bad in (tampered, unsigned, "/api/trips/" + trip["id"] + "/street-view/..%2F..%2Fwayline.db"):
            assert client.get(bad).status_code == 404, bad
        # Signed for this trip only: the same name under another trip is refused.
        other = new_trip(client)
        assert client.get(url.replace(trip["id"], other["id"])).status_code == 404

        signup(client, "bob")
        outsider = client.get(url)
        record(seen, outsider)
        assert outsider.status_code == 404                    # not a member of this trip
        client.cookies.clear()
        assert client.get(url).status_code == 401
        assert google_standin.calls[STREET_VIEW_PATH] == 1
    assert google_standin.key not in caplog.text


def test_found_by_place_search_in_the_group_chat(settings, openai_standin, google_standin, seen):
    with agent_client(google_settings(settings, google_standin), openai_standin) as client:
        trip = setup_trip(client)
        posted = client.post(f"/api/trips/{trip['id']}/agent/messages",
                             json={"text": "show me Mercado da Ribeira in street view"})
        record(seen, posted)
        assert posted.status_code == 201 and posted.json()["data"]["addressed"] is True
        reply = eventually(lambda: [m for m in events(client, trip["id"])["messages"] if m["role"] == "assistant"])
        [message] = reply
        grounding = grounding_of(message["parts"])
        assert grounding["outcome"] == "found" and grounding["place"]["source"] == "search"
        assert grounding["place"]["placeId"] == "ChIJ_mercado_ribeira"
        assert message["parts"][-1]["type"] == "data-spec"
        record(seen, client.get(f"/api/trips/{trip['id']}/agent/messages"))
        assert google_standin.calls["/v1/places:searchText"] == 1
        assert count_usage(client) == 0


@pytest.mark.parametrize("text, outcome", [
    ("street view of Oceanário de Lisboa", "empty"),           # a known place, no panorama within 50 m
    ("street view of Atlantis Underwater Palace", "place_not_found"),
    ("street view", "invalid_request"),
    ("street view of", "invalid_request"),
    ("street view of " + "x" * 130, "invalid_request"),
])
def test_failure_outcomes_carry_a_status_part(settings, openai_standin, google_standin, seen, text, outcome):
    with agent_client(google_settings(settings, google_standin), openai_standin) as client:
        trip = setup_trip(client)
        chunks, stored = ask(client, seen, trip["id"], text)
        assert [p["type"] for p in stored["parts"]] == ["data-agent-grounding", "text", "data-agent-status"]
        assert grounding_of(stored["parts"])["outcome"] == outcome
        status = of_type(chunks, "data-agent-status")[0]["data"]
        assert status["outcome"] == outcome and status["message"] == stored["parts"][1]["text"]
        assert not of_type(chunks, "data-spec")
        if outcome == "invalid_request":
            assert google_standin.request_count == 0


@pytest.mark.parametrize("break_google", ["metadata_500", "over_quota", "denied_key", "image_500", "places_down",
                                          "no_google_stop", "no_google_search"])
def test_service_unavailable_when_google_fails(settings, openai_standin, google_standin, seen, break_google):
    configured = google_settings(settings, google_standin)
    place = "Castelo"                                   # a stop: no place search needed
    if break_google == "metadata_500":
        google_standin.fail(STREET_VIEW_METADATA_PATH, 500)
    elif break_google == "over_quota":
        google_standin.street_view_status = "OVER_QUERY_LIMIT"
    elif break_google == "denied_key":
        configured = configured.with_(google_maps_api_key="AIzaSyWRONG-key-000000000")
    elif break_google == "image_500":
        google_standin.street_view_image_status = 500
    elif break_google == "places_down":
        google_standin.fail("/v1/places", 503)
        place = "Mercado da Ribeira"                    # not a stop: place search is needed, and down
    else:
        configured = settings                           # no Google key: no imagery; places from OSM (down here)
        place = "Castelo" if break_google == "no_google_stop" else "Mercado da Ribeira"
    with agent_client(configured, openai_standin) as client:
        trip = setup_trip(client)
        chunks, stored = ask(client, seen, trip["id"], f"street view of {place}")
        assert grounding_of(stored["parts"])["outcome"] == "service_unavailable"
        assert of_type(chunks, "data-agent-status")[0]["data"]["tone"] == "error"
        assert stored["parts"][1]["text"] == "Street view is unavailable right now. Please try again later."
        assert "AIzaSyWRONG" not in json.dumps(stored)


def test_a_stop_thread_mention_gets_the_text_and_the_timeline_the_card(settings, openai_standin, google_standin,
                                                                      seen):
    with agent_client(google_settings(settings, google_standin), openai_standin) as client:
        trip = setup_trip(client)
        stop_id = client.get(f"/api/trips/{trip['id']}").json()["data"]["days"][0]["stops"][0]["id"]
        url = f"/api/trips/{trip['id']}/stops/{stop_id}/comments"
        assert client.post(url, json={"body": "@agent street view of Castelo"}).status_code == 201
        comments = eventually(lambda: [c for c in client.get(url).json()["data"]["comments"] if c["userId"] is None])
        assert comments[0]["body"] == "Street view of Castelo de São Jorge."
        thread = [m for m in events(client, trip["id"])["messages"]
                  if m["source"] == "stop_comment" and m["role"] == "assistant"]
        assert [p["type"] for p in thread[0]["parts"]] == ["data-agent-grounding", "text", "data-spec"]


def test_every_outcome_is_one_of_the_five():
    assert OUTCOMES == ("found", "empty", "place_not_found", "invalid_request", "service_unavailable")


def test_a_stop_is_named_by_whole_words_only():
    from app.agent.grounding import match_stop
    from app.trips.model import Day, Stop, Trip

    stops = [Stop(f"s{i}", "d1", i, "sight", name, lat=41.4, lng=2.17)
             for i, name in enumerate(["Spa", "Bar", "Sagrada Família"])]
    trip = Trip("t1", "Barcelona", None, None, None, "2026-12-10", "Europe/Madrid", "EUR", 1, "u1",
                days=[Day("d1", 0, stops=stops)])
    assert match_stop(trip, "Barcelona Cathedral") is None
    assert match_stop(trip, "Spanish Steps") is None
    assert match_stop(trip, "sagrada familia").id == "s2"
    assert match_stop(trip, "Sagrada").id == "s2"
    assert match_stop(trip, "the Bar on the corner").id == "s1"
