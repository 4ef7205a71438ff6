"""Op summaries are sentences for people (toasts and the group's timeline):
names, times and lengths, never field names or arrows."""

from __future__ import annotations

import re

from helpers import new_trip, op, signup

FIELD_NAMES = re.compile(r"setTime|durationMin|placeId|stopId|dayId|→|\(\w+(, \w+)*\)")


def summary(client, trip_id: str, op_name: str, **args) -> str:
    r = op(client, trip_id, op_name, **args)
    assert r.status_code == 200, r.text
    text = r.json()["data"]["summary"]
    assert not FIELD_NAMES.search(text), text
    return text


def test_stop_changes_read_as_sentences(client):
    signup(client, "alice")
    trip = new_trip(client)
    t = trip["id"]
    day1, day2 = (d["id"] for d in trip["days"])
    stop = lambda r: r.json()["data"]["trip"]["days"][0]["stops"][-1]["id"]  # noqa: E731
    lunch = stop(op(client, t, "insert_stop", dayId=day1, name="Schønnemann", kind="food", meal="lunch"))
    castle = stop(op(client, t, "insert_stop", dayId=day1, name="Castle"))

    assert summary(client, t, "update_stop", stopId=lunch, setTime="11:30") == "Set lunch at “Schønnemann” to 11:30"
    assert summary(client, t, "update_stop", stopId=lunch, setTime=None, durationMin=90) == (
        "Cleared the fixed time of lunch at “Schønnemann” and made it 1 h 30 min long")
    assert summary(client, t, "update_stop", stopId=castle, name="Castelo", lat=38.71, lng=-9.13) == (
        "Renamed “Castle” to “Castelo” and changed its location")
    assert summary(client, t, "update_stop", stopId=lunch, meal="dinner") == (
        "Marked lunch at “Schønnemann” as dinner")
    assert summary(client, t, "move_stop", stopId=lunch, toDayId=day1, position=1) == (
        "Moved “Schønnemann” after “Castelo” on Day 1")
    assert summary(client, t, "move_stop", stopId=lunch, toDayId=day2, position=0) == "Moved “Schønnemann” to Day 2"
    assert summary(client, t, "update_day", dayId=day2, title="Sintra", startTime="10:00") == (
        "Renamed Day 2 to “Sintra” and set it to start at 10:00")
    assert summary(client, t, "update_trip", startDate="2026-12-14") == "Moved the trip to start on Mon 14 Dec"


def test_expense_amounts_use_the_currency_s_own_units(client):
    me = signup(client, "alice")
    t = new_trip(client)["id"]
    assert summary(client, t, "add_expense", title="Sushi", amountMinor=3000, currency="JPY", paidBy=me["id"]) == (
        "Added the expense “Sushi” (3,000 JPY)")
    assert summary(client, t, "add_expense", title="Tram", amountMinor=640, currency="EUR", paidBy=me["id"]) == (
        "Added the expense “Tram” (6.40 EUR)")
    # 1500 fils are 1.500 KWD (ISO 4217 gives the dinar three decimals), never "15.00 KWD".
    r = op(client, t, "add_expense", title="Tea", amountMinor=1500, currency="KWD", paidBy=me["id"])
    assert r.json()["data"]["summary"] == "Added the expense “Tea” (1.500 KWD)"
    tea = r.json()["data"]["trip"]["expenses"][-1]["id"]
    assert summary(client, t, "update_expense", expenseId=tea, amountMinor=2250) == (
        "Changed the expense “Tea” to 2.250 KWD")
    assert summary(client, t, "update_expense", expenseId=tea, currency="BHD") == (
        "Changed the expense “Tea” to 2.250 BHD")
    assert summary(client, t, "update_expense", expenseId=tea, title="Mint tea") == "Changed the expense “Mint tea”"
