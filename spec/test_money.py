"""Money, one rule: app/money.py and public/money.js against one vectors file
(spec/fixtures/money_vectors.json), the ISO 4217 exponents the page gets in
/api/config, and every place the server writes an amount."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.money import EXPONENTS, UNKNOWN_EXPONENT, exponent, format_amount, format_money
from app.agent.snapshot import trip_snapshot
from app.trips.model import Expense, Trip
from helpers import new_trip, op, signup
from nodetest import copy_under_commonjs_parent, node_test

ROOT = Path(__file__).resolve().parent.parent
VECTORS = json.loads((ROOT / "spec" / "fixtures" / "money_vectors.json").read_text(encoding="utf-8"))
JS_TEST = ROOT / "spec" / "js" / "money.test.mjs"


@pytest.mark.parametrize("v", VECTORS["format"], ids=lambda v: v["name"])
def test_format_vectors(v):
    assert format_money(v["minor"], v["currency"]) == v["text"]
    assert format_amount(v["minor"], v["currency"]) == v["amount"]


def test_the_page_twin_passes_the_same_vectors():
    node_test(JS_TEST)


def test_the_page_twin_passes_under_a_parent_folder_whose_package_json_says_commonjs(tmp_path):
    node_test(JS_TEST, root=copy_under_commonjs_parent(tmp_path, "public", "spec/js/money.test.mjs",
                                                        "spec/fixtures/money_vectors.json"))


def test_the_vectors_exponents_are_iso_4217s():
    """What the node test gives the page twin is what the server sends."""
    assert VECTORS["exponents"] == {code: EXPONENTS[code] for code in VECTORS["exponents"]}
    assert {"KWD": 3, "BHD": 3, "JPY": 0, "ISK": 0, "EUR": 2, "DKK": 2, "CLF": 4}.items() <= EXPONENTS.items()
    unknown = {v["currency"] for v in VECTORS["format"]} - EXPONENTS.keys()
    assert unknown == {"XYZ", "QQQ", "XAU"} and all(exponent(code) == UNKNOWN_EXPONENT for code in unknown)
    assert len(EXPONENTS) > 150  # the whole table, not a few hand-picked codes


def test_the_page_gets_the_whole_table_in_its_config(client):
    assert client.get("/api/config").json()["data"]["currencyExponents"] == EXPONENTS


def test_amounts_are_kept_only_in_currencies_iso_4217_gives_minor_units(client):
    """An unknown code would leave "1500" meaning 15.00 or 1.500 or 1500: refused, naming the field."""
    me = signup(client, "alice")
    trip = new_trip(client)
    for code in ("XYZ", "XAU"):
        r = op(client, trip["id"], "add_expense", title="Tea", amountMinor=1500, currency=code, paidBy=me["id"])
        assert r.status_code == 422, r.text
        assert "currency" in r.text and "ISO 4217" in r.json()["error"]["message"]
        r = client.post("/api/trips", json={"title": "Gold", "startDate": "2026-12-10", "days": 1, "currency": code})
        assert r.status_code == 422, r.text
        assert op(client, trip["id"], "update_trip", currency=code).status_code == 422
    assert op(client, trip["id"], "update_trip", currency="KWD").status_code == 200
    assert client.get(f"/api/trips/{trip['id']}").json()["data"]["currency"] == "KWD"


def test_the_agent_reads_amounts_as_people_do():
    trip = Trip(id="t", title="Kuwait", dest_name=None, dest_lat=None, dest_lng=None, start_date="2026-12-10",
                timezone="Asia/Kuwait", currency="KWD", version=1, created_by="u", days=[],
                expenses=[Expense(id="e", title="Tea", amount_minor=1500, currency="KWD", paid_by="u",
                                  split={"kind": "equal", "members": ["u"]})],
                member_ids=["u"])
    [expense] = trip_snapshot(trip)["expenses"]
    assert expense["amount"] == "1.500 KWD" and expense["amountMinor"] == 1500
