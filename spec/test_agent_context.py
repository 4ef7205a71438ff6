"""The trip as the agent's model reads it: bounded on a long trip, around the
days the call is about, against the OpenAI stand-in.

Every agent call sends the trip. A 30-day trip of 40 stops a day with notes
was ~690,000 characters on every call (app/agent/snapshot.py): now at most
SNAPSHOT_CHARS, with the day in view (or named) in full, the rest outlined
with their stop ids or one line each, and readDay to read any day in full. A
trip that fits is sent exactly as before."""

from __future__ import annotations

import json
import re
from pathlib import Path

from app.agent.chat import CHAT_INSTRUCTIONS
from app.agent.snapshot import SNAPSHOT_CHARS
from helpers import new_trip, op, signup
from test_agent_chat import check_protocol, responded
from test_agent_support import agent_client, eventually, make_set_time_unreachable, of_type, pick_first_fix, \
    user_message

NOTE = ("Tickets at the door, 12 EUR; closes early on Sundays. " * 6)[:300]
FIXTURE = Path(__file__).parent / "fixtures" / "agent_small_trip_snapshot.json"


def long_trip(client, days: int, per_day: int, note: str = NOTE) -> dict:
    """`days` days of `per_day` sights with `note`, far in the future (never under way)."""
    trip = new_trip(client, days=days, startDate="2031-05-03")
    for d, day in enumerate(trip["days"]):
        edits = [{"op": "insert_stop", "args": {"dayId": day["id"], "kind": "sight", "name": f"Sight {d}.{i}",
                                                  "lat": 38.70 + 0.004 * (i % 10), "lng": -9.15 + 0.003 * d,
                                                  "durationMin": 15, "note": note}} for i in range(per_day)]
        r = client.post(f"/api/trips/{trip['id']}/ops", json={"edits": edits})
        assert r.status_code == 200, r.text
    return client.get(f"/api/trips/{trip['id']}").json()["data"]


def turn(client, trip_id: str, messages: list[dict], day_id: str | None = None) -> list[dict]:
    body = {"id": "chat1", "trigger": "submit-message", "messages": messages,
            **({"dayId": day_id} if day_id else {})}
    response = client.post(f"/api/trips/{trip_id}/agent/chat", json=body)
    response.held_calls = {p.get("toolCallId") for m in messages if m["role"] == "assistant" for p in m["parts"]}
    return check_protocol(response)


def context(request) -> dict:
    """The JSON context the model got in a chat round's instructions."""
    return json.loads(request.body["instructions"].split("Context (JSON):\n", 1)[1])


def form(day: dict) -> str:
    if "startTime" in day:
        return "full"
    return "outline" if "stops" in day else "line"


def size(value) -> int:
    return len(json.dumps(value, ensure_ascii=False))


def test_a_month_long_trip_is_sent_bounded_with_the_day_in_view_or_named_in_full(settings, openai_standin):
    """30 days of 40 stops with notes: the model gets at most SNAPSHOT_CHARS
    of trip (it was ~690,000 characters on every call), the day the page
    shows in full (its notes too), the rest outlined or one line each, and
    words saying how to read a day. A later message naming a stop brings
    that stop's day in full."""
    openai_standin.reply_text("Lunch is at 12:30.")
    openai_standin.reply_text("It is open.")
    with agent_client(settings, openai_standin) as client:
        signup(client, "alice")
        trip = long_trip(client, 30, 40)
        days = trip["days"]
        turn(client, trip["id"], [user_message("When is lunch on this day?")], day_id=days[17]["id"])
        first = openai_standin.requests[0]
        sent = context(first)["trip"]
        assert size(sent) <= SNAPSHOT_CHARS
        # What the whole request costs besides the trip: the prompt, the member, the tools (~constant).
        assert len(first.body["instructions"]) < SNAPSHOT_CHARS + len(CHAT_INSTRUCTIONS) + 2_000
        assert [d["id"] for d in sent["days"]] == [d["id"] for d in days]
        forms = [form(d) for d in sent["days"]]
        assert forms[17] == "full" and forms.count("full") == 1, forms
        focus = sent["days"][17]
        assert [s["id"] for s in focus["stops"]] == [s["id"] for s in days[17]["stops"]]
        assert all(s["note"] and NOTE.startswith(s["note"].rstrip("…")) for s in focus["stops"])
        assert "outline" in forms and "line" in forms
        outlined = next(d for d in sent["days"] if form(d) == "outline")
        assert len(outlined["stops"]) == 40 and all("(stop " in line for line in outlined["stops"])
        assert "Tickets" not in json.dumps(outlined)                       # no notes in an outline
        line = next(d for d in sent["days"] if form(d) == "line")
        assert line["stopCount"] == 40 and line["date"]
        assert "readDay" in sent["outline"] and "30 days" in sent["outline"]

        turn(client, trip["id"], [user_message("Is Sight 25.3 open then?", "u2")])
        sent = context(openai_standin.requests[1])["trip"]
        assert size(sent) <= SNAPSHOT_CHARS
        assert form(sent["days"][25]) == "full" and form(sent["days"][17]) != "full"


def test_read_day_gives_the_model_an_outlined_day_in_full_and_refuses_other_ids(settings, openai_standin):
    """Two weeks of 8 stops with notes (~60,000 characters whole): the
    model calls readDay for a day it sees only in outline and gets it in full,
    notes and all, as valid JSON; an id that is not one of the trip's days is
    refused in words (the member sees them; the model gets what to do)."""
    with agent_client(settings, openai_standin) as client:
        signup(client, "alice")
        trip = long_trip(client, 14, 8)
        days = trip["days"]
        openai_standin.reply_function_calls([("readDay", {"dayId": days[11]["id"]}), ("readDay", {"dayId": "nope"})])
        openai_standin.reply_text("Day 12 has eight sights.")
        chunks = turn(client, trip["id"], [user_message("What is on the last days?")], day_id=days[0]["id"])
        sent = context(openai_standin.requests[0])["trip"]
        assert form(sent["days"][0]) == "full" and form(sent["days"][11]) != "full"
        output = of_type(chunks, "tool-output-available")[0]["output"]
        assert output["day"]["id"] == days[11]["id"]
        assert [(s["id"], s["note"]) for s in output["day"]["stops"]] == [(s["id"], NOTE) for s in days[11]["stops"]]
        assert of_type(chunks, "tool-output-error")[0]["errorText"] == (
            "Could not read the day: it is not a day of this trip.")
        assert of_type(chunks, "finish")[0]["finishReason"] == "stop"
        # The second round: both answers went back to the model, the day as JSON it can parse.
        outputs = [item["output"] for item in openai_standin.requests[1].body["input"]
                   if item.get("type") == "function_call_output"]
        assert json.loads(outputs[0]) == output
        assert "not one of this trip's days" in json.loads(outputs[1])["detail"]


def test_a_write_naming_a_stop_of_an_outlined_day_is_offered_and_applies(settings, openai_standin):
    """The outline carries each stop's id, so the model can name a stop of a
    day it does not see in full: the write is offered for approval, applies
    once approved, and the model's next round has that day in full."""
    with agent_client(settings, openai_standin) as client:
        signup(client, "alice")
        trip = long_trip(client, 14, 8)
        days = trip["days"]
        openai_standin.reply_text("Which stop?")
        turn(client, trip["id"], [user_message("Shorten a visit please")], day_id=days[0]["id"])
        sent = context(openai_standin.requests[0])["trip"]
        outlined = next(d for d in sent["days"] if form(d) == "outline")
        stop_id = re.search(r"\(stop ([0-9a-f]+)", outlined["stops"][2]).group(1)
        assert stop_id == next(d for d in days if d["id"] == outlined["id"])["stops"][2]["id"]

        openai_standin.reply_function_call("update_stop", {"stopId": stop_id, "durationMin": 30})
        messages = [user_message("The third one of that day, 30 minutes", "u2")]
        first = turn(client, trip["id"], messages, day_id=days[0]["id"])
        assert of_type(first, "tool-approval-request")
        assert of_type(first, "tool-input-available")[0]["input"]["stopId"] == stop_id
        openai_standin.reply_text("Done.")
        turn(client, trip["id"], [*messages, responded(first, approved=True)], day_id=days[0]["id"])
        after = client.get(f"/api/trips/{trip['id']}").json()["data"]
        changed = next(s for d in after["days"] for s in d["stops"] if s["id"] == stop_id)
        assert changed["durationMin"] == 30
        continued = context(openai_standin.requests[-1])["trip"]
        assert form(next(d for d in continued["days"] if d["id"] == outlined["id"])) == "full"


def test_an_evaluation_on_a_long_trip_has_the_risky_day_in_full(settings, openai_standin):
    """An edit that makes a set time unreachable on day 10 of two weeks: the
    evaluation's trip is bounded, with day 10 (the edit's and the risk's) in
    full, and the suggestion is made as on a small trip."""
    openai_standin.responder = pick_first_fix
    with agent_client(settings, openai_standin) as client:
        signup(client, "alice")
        trip = long_trip(client, 14, 8)
        make_set_time_unreachable(client, trip["id"], trip["days"][9]["id"])
        eventually(lambda: openai_standin.requests)
        payload = json.loads(openai_standin.requests[0].body["input"])
        sent = payload["trip"]
        assert size(sent) <= SNAPSHOT_CHARS and "outline" in sent
        assert form(sent["days"][9]) == "full" and "readDay" not in sent["outline"]   # the evaluation has no tools
        assert [form(d) for d in sent["days"]].count("full") < 14


def normalized(trip_json: str, trip: dict) -> str:
    """The snapshot's JSON with the trip's random ids as stable names."""
    names = {trip["id"]: "TRIP"}
    for d, day in enumerate(trip["days"]):
        names[day["id"]] = f"DAY{d}"
        for s, stop in enumerate(day["stops"]):
            names[stop["id"]] = f"STOP{d}.{s}"
    for e, expense in enumerate(trip["expenses"]):
        names[expense["id"]] = f"EXPENSE{e}"
    for m, member in enumerate(trip["members"]):
        names[member["userId"]] = f"USER{m}"
    for real, name in names.items():
        trip_json = trip_json.replace(real, name)
    return trip_json


def small_trip_snapshot(client, standin) -> str:
    """A small trip with the snapshot's every field (set time, meal, notes,
    a day note and title, an expense), as the chat's model gets it."""
    alice = signup(client, "alice")
    trip = new_trip(client, days=3)
    t = trip["id"]
    days = trip["days"]
    assert op(client, t, "update_day", dayId=days[0]["id"], title="Belém", note="Tram 15 from Praça").status_code == 200
    for d, day in enumerate(days):
        for i in range(4):
            r = op(client, t, "insert_stop", dayId=day["id"], kind="food" if i == 1 else "sight", name=f"Stop {d}.{i}",
                   lat=38.70 + 0.01 * i, lng=-9.20 + 0.01 * d, durationMin=60 + 15 * i, note=f"Note {d}.{i} " * 3,
                   **({"setTime": "13:00", "meal": "lunch"} if i == 1 else {}))
            assert r.status_code == 200, r.text
    r = client.post(f"/api/trips/{t}/ops/add_expense", json={"title": "Tickets", "amountMinor": 2450, "currency": "EUR",
                                                            "paidBy": alice["id"], "dayId": days[0]["id"]})
    assert r.status_code == 200, r.text
    standin.reply_text("Hello.")
    turn(client, t, [user_message("Hello agent")], day_id=days[1]["id"])
    instructions = standin.requests[0].body["instructions"]
    sent = context(standin.requests[0])["trip"]
    text = json.dumps(sent, ensure_ascii=False)
    assert text in instructions   # the trip's JSON as it stands in the prompt
    return normalized(text, client.get(f"/api/trips/{t}").json()["data"])


def test_a_small_trips_snapshot_is_byte_for_byte_what_it_was(settings, openai_standin):
    """A trip that fits the bound is sent exactly as before the bound: the
    fixture was taken from the prompt before this change (ids named)."""
    with agent_client(settings, openai_standin) as client:
        got = small_trip_snapshot(client, openai_standin)
    assert got == FIXTURE.read_text(encoding="utf-8").rstrip("\n")
    assert '"outline"' not in got


def test_an_agent_comment_on_a_stop_of_a_long_trip_has_its_day_in_full(settings, openai_standin):
    """An @agent comment on a stop of day 12: the reply's model call has that
    day in full (and the trip bounded)."""
    openai_standin.reply_text("It opens at 10:00.")
    with agent_client(settings, openai_standin) as client:
        signup(client, "alice")
        trip = long_trip(client, 14, 8)
        stop = trip["days"][11]["stops"][3]
        r = client.post(f"/api/trips/{trip['id']}/stops/{stop['id']}/comments", json={"body": "@agent when open?"})
        assert r.status_code in (200, 201), r.text
        eventually(lambda: openai_standin.requests)
        sent = context(openai_standin.requests[0])["trip"]
        assert size(sent) <= SNAPSHOT_CHARS
        assert form(sent["days"][11]) == "full" and [form(d) for d in sent["days"]].count("full") < 14


def test_the_days_a_message_names():
    """focus.mentioned: a stop by its name as words of its own or its id, a
    day by "day N", its date or its id; the first named first; nothing else."""
    from app.agent.focus import mentioned
    from app.trips.model import Day, Stop, Trip

    trip = Trip(id="t", title="T", dest_name=None, dest_lat=None, dest_lng=None, start_date="2031-05-03",
                timezone="Europe/Lisbon", currency="EUR", version=1, created_by="u")
    names = (["Bar", "Castelo"], ["Barcelona walk", "Museu"], ["Pena"])
    for d, stops in enumerate(names):
        trip.days.append(Day(id=f"d{d}", position=d, stops=[
            Stop(id=f"s{d}{i}", day_id=f"d{d}", position=i, kind="sight", name=name) for i, name in enumerate(stops)]))
    assert mentioned(trip, "Move the museu after the castelo?") == ["d1", "d0"]
    assert mentioned(trip, "barcelona walk then") == ["d1"]            # "Bar" is not a word of it
    assert mentioned(trip, "What about day 3 and 2031-05-04?") == ["d2", "d1"]
    assert mentioned(trip, "stop s20 or day d0") == ["d2", "d0"]
    assert mentioned(trip, "第3天 的安排") == ["d2"]
    assert mentioned(trip, "day 9, 2031-06-01, nothing") == [] and mentioned(trip, "") == []


def test_a_members_private_defaults_never_reach_the_shared_agent(settings, openai_standin):
    """The agent answers in the group's chat and writes notes every member
    reads: it gets the trip's shared choices, never the asking member's
    private defaults (food, price, allergies, usual transport), which it
    could repeat to the group."""
    openai_standin.reply_text("Try the market hall.")
    with agent_client(settings, openai_standin) as client:
        signup(client, "alice")
        r = client.put("/api/users/preferences", json={"cuisines": ["ramen"], "dietary": ["vegan"],
                                                       "allergies": "peanuts", "maxPriceLevel": 2,
                                                       "transport": "bicycle"})
        assert r.status_code == 200, r.text
        trip = new_trip(client, days=1)
        r = client.put(f"/api/trips/{trip['id']}/preferences", json={"interests": ["museums"], "pace": "relaxed"})
        assert r.status_code == 200, r.text
        turn(client, trip["id"], [user_message("Where should we eat tonight?")])
        request = openai_standin.requests[0]
        instructions = request.body["instructions"]
        for private in ("ramen", "vegan", "peanuts", "hasAllergies", "maxPriceLevel", "bicycle"):
            assert private not in instructions, private
        choices = context(request)["tripChoices"]
        assert choices["interests"] == ["museums"] and choices["pace"] == "relaxed"
        assert choices["transport"] == "transit"   # the trip's, not alice's usual bicycle
