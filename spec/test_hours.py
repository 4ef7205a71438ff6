"""The opening-hours rule: app/hours.py and public/hours.js against one vectors file."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from app.hours import CLOSING_BUFFER_MIN, MEAL_MINUTES, HoursCheck, check_hours, meal_minutes

ROOT = Path(__file__).resolve().parent.parent
VECTORS_FILE = ROOT / "spec" / "fixtures" / "hours_vectors.json"
JS_TEST = ROOT / "spec" / "js" / "hours.test.mjs"
VECTORS = json.loads(VECTORS_FILE.read_text(encoding="utf-8"))["vectors"]


def check_vector(v: dict) -> None:
    """Asserts that the implementation gives exactly the vector's expectation."""
    got = check_hours(v["place"], v["date"], v["start"], v["durationMin"]).to_json()
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
    # every default meal length is exercised by at least one vector
    assert {v["meal"] for v in VECTORS if "meal" in v and "overrideMin" not in v} == set(MEAL_MINUTES)


def _mutations(v: dict):
    e = v["expect"]
    yield "fits", not e["fits"]
    yield "status", {"confirmed": "unconfirmed", "unconfirmed": "confirmed", "none": "unconfirmed"}[e["status"]]
    yield "closesAt", "12:34" if e["closesAt"] != "12:34" else None
    yield "latestStart", None if e["latestStart"] is not None else "23:59"


@pytest.mark.parametrize("index", [0, 10, 22, 45, len(VECTORS) - 1])
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
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH: public/hours.js cannot be checked against the vectors "
                    "(install Node 20+ to run spec/js/hours.test.mjs)")
    proc = subprocess.run([node, "--test", str(JS_TEST)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, f"node --test failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}"
