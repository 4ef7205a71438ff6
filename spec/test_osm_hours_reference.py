"""app/hours/osm.py against the reference evaluator: the npm package `opening_hours`
(pinned in spec/js/package.json, installed by scripts/test with `npm ci --prefix spec/js`).

spec/js/osm_reference.mjs evaluates every value for every date in DATES, over
the date and the next day, and reports the open periods that start on the date
in the same convention as ours (carried over from the day before: start 0;
past midnight: end after 1440; cut at 2880) plus whether any of the date's 24
hours is "unknown". Our answer must be exactly those periods, or None where
the reference says unknown. Every pair where we differ is listed below with the
reason: the test fails on a new difference and on a listed one that went away.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import date
from pathlib import Path

import pytest

from app.hours.osm import intervals

ROOT = Path(__file__).resolve().parent.parent
JS_DIR = ROOT / "spec" / "js"
COPENHAGEN = ROOT / "spec" / "fixtures" / "osm_opening_hours_cph.txt"
SYNTAX = ROOT / "spec" / "fixtures" / "osm_opening_hours_syntax.txt"

# Copenhagen's local dates (2026): every weekday, a weekend, Danish public
# holidays (Easter Sunday, Christmas Day), Christmas Eve (see below), summer
# (week 31), week 42, and month boundaries (Jan 31/Feb 1, Mar 31/Apr 1).
# None is next to a daylight-saving change.
DATES = (
    "2026-03-04", "2026-03-05", "2026-03-06", "2026-03-07", "2026-03-08",
    "2026-07-27", "2026-10-13", "2026-01-31", "2026-02-01", "2026-03-31",
    "2026-04-01", "2026-04-05", "2026-12-24", "2026-12-25",
)
EVERY_DATE = DATES

CHRISTMAS_EVE = (
    "the reference's Danish table counts Dec 24 (Juleaftensdag) as a public holiday; the "
    "`holidays` package does not (it is no public holiday by law), so PH rules differ that day")
CHRISTMAS_EVE_TAIL = CHRISTMAS_EVE + ", and on Dec 25 in the PH rule's tail past midnight"

KNOWN_COPENHAGEN = {
    "05:00-18:00; Sa 05:00-16:00; Su,PH off": (("2026-12-24",), CHRISTMAS_EVE),
    "06:00-17:00; Sa,Su,PH 07:00-17:00": (("2026-12-24",), CHRISTMAS_EVE),
    "07:00-18:00; Sa-Su 08:00-18:00; PH 08:00-16:00": (("2026-12-24",), CHRISTMAS_EVE),
    "10:00-22:00; Th 10:00-23:00; PH 10:00-22:00, Fr-Sa 10:00-03:00": (("2026-12-24",), CHRISTMAS_EVE),
    "11:00-24:00; Su,PH 13:00-24:00": (("2026-12-24",), CHRISTMAS_EVE),
    "11:30-16:00; Su,PH off": (("2026-12-24",), CHRISTMAS_EVE),
    "12:15-24:00; Sa,PH 12:15-22:00; Su 12:15-17:00; Mo off": (("2026-12-24",), CHRISTMAS_EVE),
    "Mo-Fr 06:00-18:00; PH,Sa,Su 06:00-17:00": (("2026-12-24",), CHRISTMAS_EVE),
    "Mo-Fr 07:00-18:00; PH,Sa,Su 08:00-18:00": (("2026-12-24",), CHRISTMAS_EVE),
    "Mo-Fr 09:00-23:00; Sa,Su,PH 10:00-23:00": (("2026-12-24",), CHRISTMAS_EVE),
    "Mo-Fr 09:30-14:00; PH off": (("2026-12-24",), CHRISTMAS_EVE),
    "Mo-Fr 10:00-18:00; Sa,Su,PH 10:00-17:00": (("2026-12-24",), CHRISTMAS_EVE),
    "Mo-Fr 11:00-20:00; Sa,Su,PH off": (("2026-12-24",), CHRISTMAS_EVE),
    "Mo-Fr 11:30-16:00; Sa 12:00-16:00; PH off; easter -1 day off": (("2026-12-24",), CHRISTMAS_EVE),
    "Mo-Th 10:00-22:00; Fr 10:00-24:00; Sa 10:00-23:00; PH,Su 10:00-20:00": (("2026-12-24",), CHRISTMAS_EVE),
    "Mo-Th 11:00-21:00; Fr-Sa 11:00-22:00; Su,PH 12:00-21:00": (("2026-12-24",), CHRISTMAS_EVE),
    "Mo-Th 11:00-22:00; Fr,Sa 11:00-23:00; PH,Su 12:00-22:00": (("2026-12-24",), CHRISTMAS_EVE),
    "Mo-We 11:00+; Su,PH 12:00+": (("2026-12-24",), CHRISTMAS_EVE),
    "Mo-We 11:30-16:00; Th-Fr 11:30-16:00,17:30-21:00; Sa 17:30-21:00; Su,PH off": (
        ("2026-12-24",), CHRISTMAS_EVE),
    "PH,Mo-Th 10:00-01:00, PH,Su 10:00-20:00, PH,Fr,Sa 10:00-02:00": (
        ("2026-12-24", "2026-12-25"), CHRISTMAS_EVE_TAIL),
    "Sa,Su 07:00-17:00; Mo-Fr 07:00-18:00; PH 07:00-17:00": (("2026-12-24",), CHRISTMAS_EVE),
    "Tu-Th 17:30-24:00; Th-Fr 12:00-15:00,17:30-24:00,PH off; week 42 off": (
        ("2026-12-24",), CHRISTMAS_EVE),
}

LEFT_OUT = "syntax app/hours/osm.py leaves out on purpose (it answers None): "
KNOWN_SYNTAX = {
    "sunrise-sunset": (EVERY_DATE, LEFT_OUT + "variable times need coordinates and a sun model"),
    "Mo-Fr sunrise-18:00": (EVERY_DATE, LEFT_OUT + "variable times"),
    "Mo-Fr 10:00am-6:00pm": (EVERY_DATE, LEFT_OUT + "the reference's 12-hour clock correction"),
    "daily 10:00-18:00": (EVERY_DATE, LEFT_OUT + "the reference's word corrections"),
    "Mo-Fr 10:00-18:00 except holidays": (
        EVERY_DATE, LEFT_OUT + "the reference's word corrections (it reads this as always closed)"),
    "Mo-Fr 09:00-17:00; PH off; PH +1 day 10:00-12:00": (("2026-12-24", "2026-12-25"), CHRISTMAS_EVE),
    "Mo-Fr 10:00-18:00; PH closed \"public holidays\"": (("2026-12-24",), CHRISTMAS_EVE),
    "PH 10:00-12:00": (("2026-12-24",), CHRISTMAS_EVE),
    "PH Mo-Fr 10:00-12:00": (("2026-12-24",), CHRISTMAS_EVE),
    "Mo-Sa 10:00-12:00; Su,PH off": (("2026-12-24",), CHRISTMAS_EVE),
    "10:00-20:00; Mo-Fr 12:00-14:00 off; PH 11:00-13:00": (("2026-12-24",), CHRISTMAS_EVE),
}


def _values(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").split("\n")
    return [line for line in lines if line.strip() and not line.startswith("#")]


def _run_reference(path: Path) -> dict:
    if not shutil.which("node"):
        pytest.fail("node is not installed: the reference comparison needs it (scripts/test installs nodejs)")
    pinned = json.loads((JS_DIR / "package.json").read_text())["dependencies"]["opening_hours"]
    if not (JS_DIR / "node_modules" / "opening_hours" / "package.json").exists():
        pytest.fail("the reference evaluator is not installed: run "
                    "`npm ci --prefix spec/js --no-audit --no-fund` (scripts/test does)")
    done = subprocess.run(
        ["node", str(JS_DIR / "osm_reference.mjs"), str(path), *DATES],
        env={**os.environ, "TZ": "Europe/Copenhagen"}, capture_output=True, text=True, timeout=110)
    if done.returncode != 0:
        pytest.fail(f"spec/js/osm_reference.mjs failed: {done.stderr[-2000:]}")
    report = json.loads(done.stdout)
    assert report["version"] == pinned, "node_modules is stale: run `npm ci --prefix spec/js`"
    assert [r["value"] for r in report["results"]] == _values(path)
    return report


def _compare(report: dict) -> tuple[int, dict[str, tuple[str, ...]], list[str]]:
    """(pairs the reference parses, disagreeing dates by value, None-rule breaches)."""
    pairs = 0
    disagreements: dict[str, list[str]] = {}
    breaches = []
    for result in report["results"]:
        if not result["parses"]:
            continue
        for day, expected in result["days"].items():
            pairs += 1
            want = None if expected["unknown"] else [tuple(i) for i in expected["intervals"]]
            got = intervals(result["value"], date.fromisoformat(day), country="DK")
            if got != want:
                disagreements.setdefault(result["value"], []).append(day)
            if got is None and not expected["unknown"]:
                breaches.append(f"{result['value']!r} on {day}: None, the reference says {want}")
    return pairs, {value: tuple(days) for value, days in disagreements.items()}, breaches


def _check_listed(found: dict[str, tuple[str, ...]], known: dict) -> None:
    listed = {value: days for value, (days, _reason) in known.items()}
    new = {v: d for v, d in found.items() if listed.get(v) != d}
    gone = {v: d for v, d in listed.items() if found.get(v) != d}
    assert not new and not gone, (
        f"disagreements not listed (or on other dates): {new}\n"
        f"listed disagreements that no longer happen as listed: {gone}")


@pytest.fixture(scope="module")
def copenhagen() -> dict:
    return _run_reference(COPENHAGEN)


def test_copenhagen_values_agree_with_the_reference(copenhagen):
    pairs, found, breaches = _compare(copenhagen)
    disagreeing = sum(len(days) for days in found.values())
    agreed = pairs - disagreeing
    print(f"\nOSM opening hours vs opening_hours {copenhagen['version']}: "
          f"{agreed}/{pairs} (value, date) pairs agree = {100 * agreed / pairs:.2f} %")
    assert pairs == 580 * len(DATES), "every Copenhagen value parses in the reference"
    assert agreed / pairs >= 0.99
    assert not breaches, "None only where the reference rejects the value or calls the day unknown"
    _check_listed(found, KNOWN_COPENHAGEN)


def test_hand_written_syntax_agrees_with_the_reference():
    report = _run_reference(SYNTAX)
    pairs, found, _breaches = _compare(report)
    assert pairs > 1000
    _check_listed(found, KNOWN_SYNTAX)
    # Values the reference rejects have no hours here either (SH: Denmark has no
    # school-holiday table in either, so only days SH cannot change get an answer).
    for result in report["results"]:
        if not result["parses"] and "SH" not in result["value"]:
            assert all(intervals(result["value"], date.fromisoformat(d), country="DK") is None
                       for d in DATES), result["value"]


def test_a_wrong_listing_fails():
    """The listing check is not vacuous: an unlisted or a vanished disagreement fails."""
    known = {"a": (("2026-12-24",), "x")}
    _check_listed({"a": ("2026-12-24",)}, known)
    with pytest.raises(AssertionError):
        _check_listed({"a": ("2026-12-24",), "b": ("2026-03-04",)}, known)
    with pytest.raises(AssertionError):
        _check_listed({}, known)
    with pytest.raises(AssertionError):
        _check_listed({"a": ("2026-12-24", "2026-12-25")}, known)
