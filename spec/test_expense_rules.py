"""Expenses as careless users send them: splits in every shape, currencies in
any case, more expenses than a trip holds. A refusal is 422/413 in words
(no union tags, member ids as paths or regular expressions) and changes nothing."""

from __future__ import annotations

import pytest

from app.trips import ops
from helpers import join, make_client, new_trip, op, signup, use


@pytest.fixture
def group(client):
    alice, bob = signup(client, "alice"), signup(client, "bob")
    use(client, alice)
    trip = new_trip(client)
    join(client, alice, trip["id"], bob)
    use(client, alice)
    return client, trip["id"], alice, bob


def _version(client, trip_id: str) -> int:
    return client.get(f"/api/trips/{trip_id}").json()["data"]["version"]


def test_a_bad_split_is_refused_in_words_and_changes_nothing(group):
    client, t, alice, bob = group
    version = _version(client, t)
    cases = {
        # pydantic said "Input tag 'exact' found using 'kind' does not match any of the expected tags"
        "kind must be 'equal' or 'shares'": {"kind": "exact", "amounts": {alice["id"]: 30}},
        # the path was split.shares.shares.<alice's id>
        "each share must be at least 0": {"kind": "shares", "shares": {alice["id"]: -1, bob["id"]: 2}},
        "each member id must be at most 64 characters": {"kind": "shares", "shares": {"x" * 65: 1}},
        "shares must be whole numbers, 0 or more, at least one above 0": {"kind": "shares", "shares": {alice["id"]: 0}},
        "each member id must not be empty": {"kind": "equal", "members": [""]},
    }
    for words, split in cases.items():
        r = op(client, t, "add_expense", title="Taxi", amountMinor=1000, currency="EUR", paidBy=alice["id"],
               split=split)
        assert r.status_code == 422, r.text
        error = r.json()["error"]
        assert (error["code"], error["message"]) == ("invalid", f"split: {words}")
        assert error["field"].split(".")[0] == "split" and ".shares.shares" not in error["field"]
    assert _version(client, t) == version


def test_a_split_without_its_kind_is_what_its_fields_say(group):
    """EqualSplit's kind defaults to "equal", yet the tag alone refused a split without it."""
    client, t, alice, bob = group
    r = op(client, t, "add_expense", title="Taxi", amountMinor=1000, currency="EUR", paidBy=alice["id"],
           split={"members": [alice["id"], bob["id"]]})
    assert r.status_code == 200, r.text
    r = op(client, t, "add_expense", title="Hotel", amountMinor=900, currency="EUR", paidBy=bob["id"],
           split={"shares": {alice["id"]: 1, bob["id"]: 2}})
    assert r.status_code == 200, r.text
    splits = [e["split"] for e in r.json()["data"]["trip"]["expenses"]]
    assert splits == [{"kind": "equal", "members": [alice["id"], bob["id"]]},
                      {"kind": "shares", "shares": {alice["id"]: 1, bob["id"]: 2}}]


def test_a_currency_code_in_the_wrong_form_is_refused_in_words(group):
    """The refusal quoted a regular expression: "String should match pattern '^[A-Z]{3}$'"."""
    client, t, alice, _ = group
    version = _version(client, t)
    for code in ("eur", "Eur", "EURO", ""):
        r = op(client, t, "add_expense", title="Tea", amountMinor=5, currency=code, paidBy=alice["id"])
        assert r.status_code == 422, r.text
        assert r.json()["error"]["field"] == "currency"
        assert "pattern" not in r.text and "^" not in r.text
    r = op(client, t, "add_expense", title="Tea", amountMinor=5, currency="eur", paidBy=alice["id"])
    assert r.json()["error"]["message"] == "currency: must be an ISO 4217 currency code such as EUR"
    assert _version(client, t) == version


def test_a_trip_holds_a_bounded_number_of_expenses(group, monkeypatch):
    """Every read carries every expense and its balances: without a bound one
    member could grow a trip until reading it was slow for everyone."""
    client, t, alice, _ = group
    monkeypatch.setattr(ops, "MAX_EXPENSES", 3)
    tea = {"title": "Tea", "amountMinor": 5, "currency": "JPY", "paidBy": alice["id"]}
    expense = {"op": "add_expense", "args": tea}
    version = _version(client, t)
    r = client.post(f"/api/trips/{t}/ops", json={"edits": [expense] * 4})   # all or nothing
    assert r.status_code == 413, r.text
    assert r.json()["error"] == {"code": "quota_exceeded", "quota": "expenses_per_trip",
                                 "message": "A trip can have at most 3 expenses; delete ones it no longer needs first."}
    assert _version(client, t) == version
    assert client.post(f"/api/trips/{t}/ops", json={"edits": [expense] * 3}).status_code == 200
    assert op(client, t, "add_expense", **expense["args"]).status_code == 413
    deleted = client.get(f"/api/trips/{t}").json()["data"]["expenses"][0]["id"]
    assert op(client, t, "delete_expense", expenseId=deleted).status_code == 200
    assert op(client, t, "add_expense", **expense["args"]).status_code == 200


def test_members_who_left_keep_their_balances_and_their_names(client):
    """Two people removed from a trip both read as "A former member" in
    "who pays whom": the trip names them (formerMembers) so they read apart,
    and their balances still add up to zero in every currency."""
    alice, bob, carol = signup(client, "alice"), signup(client, "bob"), signup(client, "carol")
    use(client, alice)
    t = new_trip(client)["id"]
    join(client, alice, t, bob)
    join(client, alice, t, carol)
    use(client, alice)
    sushi = {"title": "Sushi", "amountMinor": 1000, "currency": "JPY", "paidBy": bob["id"]}
    assert op(client, t, "add_expense", **sushi).status_code == 200
    assert op(client, t, "add_expense", title="Tea", amountMinor=1001, currency="KWD", paidBy=carol["id"],
              split={"kind": "shares", "shares": {alice["id"]: 1, bob["id"]: 1, carol["id"]: 1}}).status_code == 200
    assert client.get(f"/api/trips/{t}").json()["data"]["formerMembers"] == []
    for gone in (bob, carol):
        assert client.delete(f"/api/trips/{t}/members/{gone['id']}").status_code == 200
    trip = client.get(f"/api/trips/{t}").json()["data"]
    assert [m["userId"] for m in trip["members"]] == [alice["id"]]
    assert trip["formerMembers"] == [{"userId": bob["id"], "displayName": "bob"},
                                     {"userId": carol["id"], "displayName": "carol"}]
    for currency, sums in trip["expenseSummary"]["byCurrency"].items():
        assert sum(m["netMinor"] for m in sums["members"]) == 0, currency
    # JPY 1000 / 3 and KWD 1.001 / 3: each leftover unit goes to exactly one person
    assert {m["owesMinor"] for m in trip["expenseSummary"]["byCurrency"]["JPY"]["members"]} == {333, 334}
    assert sorted(m["owesMinor"] for m in trip["expenseSummary"]["byCurrency"]["KWD"]["members"]) == [333, 334, 334]
    # A write's small answer carries them with the members when those change.
    r = op(client, t, "update_trip", full=False, title="Lisbon again")
    assert r.status_code == 200 and "formerMembers" not in r.json()["data"]["change"]


def test_an_expense_names_its_stop_on_its_own_day(group, settings):
    """An expense "on Day 1, at the museum" with the museum on Day 2 was taken,
    and moving its stop to another day left the expense on the old one."""
    client, t, alice, _ = group
    trip = client.get(f"/api/trips/{t}").json()["data"]
    day1, day2 = (d["id"] for d in trip["days"])
    r = op(client, t, "insert_stop", dayId=day2, name="Museum")
    museum = r.json()["data"]["trip"]["days"][1]["stops"][0]["id"]
    version = r.json()["data"]["trip"]["version"]
    tickets = {"title": "Tickets", "amountMinor": 1500, "currency": "EUR", "paidBy": alice["id"]}
    r = op(client, t, "add_expense", **tickets, dayId=day1, stopId=museum)
    assert r.status_code == 422, r.text
    assert r.json()["error"] == {"code": "invalid", "field": "stopId",
                                 "message": "stopId: that stop is on another day than the expense's day"}
    assert _version(client, t) == version
    r = op(client, t, "add_expense", **tickets, dayId=day2, stopId=museum)
    expense = r.json()["data"]["trip"]["expenses"][0]["id"]
    assert op(client, t, "update_expense", expenseId=expense, dayId=day1).status_code == 422
    r = op(client, t, "move_stop", stopId=museum, toDayId=day1, position=0)
    assert r.status_code == 200, r.text
    [moved] = r.json()["data"]["trip"]["expenses"]
    assert (moved["dayId"], moved["stopId"]) == (day1, museum)
    r = op(client, t, "insert_stop", dayId=day2, name="Park")
    park = r.json()["data"]["trip"]["days"][1]["stops"][0]["id"]
    r = op(client, t, "swap_stops", stopId=museum, otherStopId=park)
    [swapped] = r.json()["data"]["trip"]["expenses"]
    assert (swapped["dayId"], swapped["stopId"]) == (day2, museum)
    with make_client(settings) as fresh:   # what the database holds, read by a new process
        use(fresh, alice)
        assert fresh.get(f"/api/trips/{t}").json()["data"]["expenses"] == r.json()["data"]["trip"]["expenses"]
