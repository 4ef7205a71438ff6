"""The opening-hours rule: app/hours/rules.py and public/hours.js against one vectors file."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from nodetest import copy_under_commonjs_parent, node_test
from app.hours.rules import (CLOSING_BUFFER_MIN, MEAL_MINUTES, DayHours, HoursCheck, check_at, check_hours,
                             check_visit, first_start, hours_on, meal_minutes, osm_value)

ROOT = Path(__file__).resolve().parent.parent
VECTORS_FILE = ROOT / "spec" / "fixtures" / "hours_vectors.json"
JS_TEST = ROOT / "spec" / "js" / "hours.test.mjs"
VECTORS = json.loads(VECTORS_FILE.read_text(encoding="utf-8"))["vectors"]


def check_vector(v: dict) -> None:
    """Asserts that the implementation gives exactly the vector's expectation."""
    rule = check_visit if v.get("rule") == "visit" else check_hours
    got = rule(v["place"], v["date"], v["start"], v["durationMin"]).to_json()
    assert got == v["expect"], f"{v['name']}: got {got}, expected {v['expect']}"
    if "meal" in v:
        assert meal_minutes(v["meal"], v.get("overrideMin")) == v["durationMin"], v["name"]


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_vector(vector):
    check_vector(vector)


def test_vectors_file_is_well_formed():
    names = [v["name"] for v in VECTORS]
    assert len(VECTORS) >= 60
    assert len(names) == len(set(names)), "vector names must be unique (they are test ids)"
    for v in VECTORS:
        assert set(v["expect"]) == {"status", "fits", "closesAt", "latestStart"}, v["name"]
        assert v.get("rule", "meal") in ("meal", "visit"), v["name"]
    # both rules and both sources are exercised, past midnight and closed days included
    visits = [v for v in VECTORS if v.get("rule") == "visit"]
    osm = [v for v in VECTORS if v["place"].get("source") == "osm"]
    assert len(visits) >= 10 and len(osm) >= 10
    assert {v.get("rule", "meal") for v in osm} == {"meal", "visit"}
    assert all(v["expect"]["status"] != "confirmed" for v in osm), "OSM hours are never confirmed"
    # every default meal length is exercised by at least one vector
    assert {v["meal"] for v in VECTORS if "meal" in v and "overrideMin" not in v} == set(MEAL_MINUTES)


def _mutations(v: dict):
    e = v["expect"]
    yield "fits", not e["fits"]
    yield "status", {"confirmed": "unconfirmed", "unconfirmed": "confirmed", "none": "unconfirmed"}[e["status"]]
    yield "closesAt", "12:34" if e["closesAt"] != "12:34" else None
    yield "latestStart", None if e["latestStart"] is not None else "23:59"


@pytest.mark.parametrize("index", [0, 10, 22, 45, 92, len(VECTORS) - 1])
def test_a_wrong_vector_fails(index):
    """The checker is not vacuous: any wrong expectation is caught."""
    for field, wrong in _mutations(VECTORS[index]):
        bad = copy.deepcopy(VECTORS[index])
        bad["expect"][field] = wrong
        with pytest.raises(AssertionError):
            check_vector(bad)


def test_meal_minutes():
    assert MEAL_MINUTES == {"breakfast": 45, "brunch": 60, "lunch": 60, "afternoon_tea": 45, "dinner": 75}
    assert CLOSING_BUFFER_MIN == 30
    assert meal_minutes("dinner", None) == 75
    assert meal_minutes("afternoon_tea", None) == 45
    assert meal_minutes("breakfast", 20) == 20
    assert meal_minutes(None, 50) == 50
    bad = [(None, None), ("supper", None), ("lunch", 0), ("lunch", -5), ("lunch", True), ("lunch", 1.5)]
    for meal, override in bad:
        with pytest.raises(ValueError):
            meal_minutes(meal, override)


@pytest.mark.parametrize("date,start,duration", [
    ("2025-6-3", "12:00", 60), ("2025-02-30", "12:00", 60), ("20250603", "12:00", 60), (None, "12:00", 60),
    ("2025-06-03", "24:00", 60), ("2025-06-03", "9:00", 60), ("2025-06-03", "12:60", 60),
    ("2025-06-03", "12:00", 0), ("2025-06-03", "12:00", True), ("2025-06-03", "12:00", 60.0),
])
def test_bad_input_is_refused(date, start, duration):
    with pytest.raises(ValueError):
        check_hours({}, date, start, duration)


def test_result_shape():
    r = check_hours({}, "2025-06-03", "12:00", 60)
    assert isinstance(r, HoursCheck)
    with pytest.raises(AttributeError):
        r.fits = True  # frozen
    assert r.to_json() == {"status": "none", "fits": False, "closesAt": None, "latestStart": None}


def test_js_implementation_passes_the_same_vectors():
    node_test(JS_TEST)


def test_js_vectors_pass_under_a_parent_folder_whose_package_json_says_commonjs(tmp_path):
    """node takes a .js file's module type from the nearest package.json: the
    repository's own says "module", so a parent folder's cannot change it."""
    copied = copy_under_commonjs_parent(tmp_path, "public", "spec/js/hours.test.mjs",
                                        "spec/fixtures/hours_vectors.json")
    node_test(JS_TEST, root=copied)


# -- the (status, spans) model the review runs on -----------------------------------------

LATE_BAR = {"regularOpeningHours": {"periods": [
    {"open": {"day": d, "hour": 18}, "close": {"day": (d + 1) % 7, "hour": 3}} for d in range(7)]}}


def test_a_stop_after_midnight_is_checked_on_the_next_date():
    # 2025-06-03 (Tue) minute 1530 is Wednesday 01:30, inside Tuesday evening's period.
    assert check_at(LATE_BAR, "2025-06-03", 25 * 60 + 30, 60, meal=False).fits
    assert not check_at(LATE_BAR, "2025-06-03", 25 * 60 + 30, 120, meal=False).fits
    # The meal rule keeps its 30 minutes before closing: 01:31 + 60 + 30 > 03:00.
    assert not check_at(LATE_BAR, "2025-06-03", 25 * 60 + 31, 60, meal=True).fits
    assert check_at(LATE_BAR, "2025-06-03", 25 * 60, 60, meal=True).fits
    osm = {"source": "osm", "opening_hours": "Tu 18:00-03:00"}
    assert check_at(osm, "2025-06-03", 25 * 60 + 30, 60, meal=False).fits
    assert not check_at(osm, "2025-06-04", 25 * 60 + 30, 60, meal=False).fits   # Thursday 01:30: closed


def test_first_start_is_exact_on_the_spans():
    lunch_break = hours_on({"source": "osm", "opening_hours": "Mo-Sa 12:00-15:00,19:00-23:00"}, "2025-06-03")
    assert lunch_break == DayHours("unconfirmed", ((720, 900), (1140, 1380)))
    assert first_start(lunch_break, 0, 60, 30) == 720
    assert first_start(lunch_break, 803, 60, 30, step=15) == 810        # 13:30 still fits lunch
    assert first_start(lunch_break, 811, 60, 30, step=15) == 1140       # after 13:30: the evening
    assert first_start(lunch_break, 1291, 60, 30) is None               # nothing left today
    assert first_start(lunch_break, 1000, 60, 30, last=1100) is None
    assert first_start(None, 0, 60, 30) is None                         # no hours are never open
    # The exact minute when the round one no longer fits.
    assert first_start(DayHours("unconfirmed", ((721, 811),)), 721, 60, 30, step=15) == 721


def test_kitchen_hours_bound_meals_but_not_visits():
    place = next(v["place"] for v in VECTORS if v["name"] == "kitchen closes before the doors and bounds dinner")
    def tuesday(meal):
        return next(span for span in hours_on(place, "2025-06-03", meal=meal).spans if span[0] == 12 * 60)

    assert tuesday(meal=True) == (12 * 60, 21 * 60 + 30)
    assert tuesday(meal=False) == (12 * 60, 23 * 60)
    assert osm_value({"source": "osm", "tags": {"opening_hours": "24/7"}}) == "24/7"
    assert osm_value({"source": "osm"}) is None and hours_on({"source": "osm"}, "2025-06-03") is None
