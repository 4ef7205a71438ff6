"""app/hours/osm.py on hand-checked examples (the reference comparison is
spec/test_osm_hours_reference.py). Dates are 2026: Mar 2 is a Monday."""

from __future__ import annotations

from datetime import date

import pytest

from app.hours.osm import intervals

MON, TUE, WED, THU, FRI, SAT, SUN = (date(2026, 3, d) for d in range(2, 9))
CHRISTMAS_EVE, CHRISTMAS_DAY, BOXING_DAY = date(2026, 12, 24), date(2026, 12, 25), date(2026, 12, 26)
H = 60


def fits(found, start: int, minutes: int) -> bool:
    """The consumer's check: the whole visit inside ONE interval."""
    return any(s <= start and start + minutes <= e for s, e in found or [])


def test_midday_break():
    value = "Mo-Fr 10:00-12:00,13:00-18:00; Sa 10:00-14:00"
    assert intervals(value, WED) == [(10 * H, 12 * H), (13 * H, 18 * H)]
    assert intervals(value, SAT) == [(10 * H, 14 * H)]
    assert intervals(value, SUN) == []
    assert not fits(intervals(value, WED), 11 * H + 30, 60)  # runs into the break


def test_closed_weekday():
    value = "Tu-Su 10:00-17:00; Mo off"
    assert intervals(value, MON) == []
    assert intervals(value, TUE) == [(10 * H, 17 * H)]


def test_past_midnight_on_both_sides():
    assert intervals("Fr 18:00-02:00", FRI) == [(18 * H, 26 * H)]
    assert intervals("Fr 18:00-02:00", SAT) == [(0, 2 * H)]
    assert intervals("Fr 18:00-02:00", THU) == []
    # Every day: the night before's tail, then tonight's period.
    assert intervals("18:00-02:00", WED) == [(0, 2 * H), (18 * H, 26 * H)]
    assert fits(intervals("18:00-02:00", WED), 23 * H + 30, 90)


def test_a_period_runs_on_until_the_place_closes():
    assert intervals("Mo 20:00-24:00; Tu 00:00-03:00", MON) == [(20 * H, 27 * H)]
    assert intervals("Mo-Sa 10:00-24:00", SAT) == [(10 * H, 24 * H)]
    assert intervals("Mo-Su 10:00-24:00", SAT) == [(10 * H, 24 * H)]


def test_always_open():
    for value in ("24/7", "open", "Mo-Su 00:00-24:00"):
        assert intervals(value, THU) == [(0, 48 * H)], value
        assert fits(intervals(value, THU), 23 * H + 30, 60)


def test_a_later_rule_replaces_the_whole_day_it_selects():
    # Saturday's own rule also drops Friday night's tail (the reference does the same).
    assert intervals("Fr 18:00-02:00; Sa 10:00-12:00", SAT) == [(10 * H, 12 * H)]
    assert intervals("Sa 10:00-12:00; Fr 18:00-02:00", SAT) == [(0, 2 * H), (10 * H, 12 * H)]
    # A closing rule closes only what it names.
    assert intervals("Mo-Fr 08:00-20:00; We 12:00-13:00 off", WED) == [(8 * H, 12 * H), (13 * H, 20 * H)]


def test_additional_and_fallback_rules():
    assert intervals("Mo-Fr 10:00-12:00, We 14:00-16:00", WED) == [(10 * H, 12 * H), (14 * H, 16 * H)]
    fallback = "Mo-Fr 10:00-18:00 || Mo-Sa 09:00-12:00"
    assert intervals(fallback, WED) == [(9 * H, 18 * H)]  # only where the rules say closed
    assert intervals(fallback, SAT) == [(9 * H, 12 * H)]
    # A comment as the fallback makes every closed hour unknown, so no day is known.
    assert intervals('Mo-Fr 10:00-18:00 || "by appointment"', WED) is None


def test_public_holidays_from_the_danish_table():
    value = "Mo-Fr 10:00-18:00; PH off"
    assert intervals(value, CHRISTMAS_DAY, country="DK") == []
    assert intervals(value, CHRISTMAS_DAY, country="dk") == []
    # Christmas Eve is a working day in Denmark's public holiday table.
    assert intervals(value, CHRISTMAS_EVE, country="DK") == [(10 * H, 18 * H)]
    assert intervals("PH 10:00-14:00", BOXING_DAY, country="DK") == [(10 * H, 14 * H)]
    assert intervals("Mo-Sa 09:00-17:00; PH +1 day 12:00-17:00", BOXING_DAY, country="DK") == [(12 * H, 17 * H)]


def test_public_holidays_without_a_table_are_unknown_only_where_they_matter():
    value = "Mo-Fr 10:00-18:00; PH off"
    for country in (None, "XX"):
        assert intervals(value, WED, country=country) is None  # could be a holiday
        assert intervals(value, SAT, country=country) == []  # closed either way
    assert intervals("Mo-Fr 10:00-18:00", WED, country=None) == [(10 * H, 18 * H)]


def test_school_holidays_are_unknown():
    assert intervals("Mo-Fr 08:00-16:00; SH off", WED, country="DK") is None
    assert intervals("Mo-Fr 08:00-16:00; SH off", SUN, country="DK") == []


def test_month_ranges_and_dates():
    seasons = "Nov-Feb 10:00-16:00; Mar-Oct 09:00-20:00"
    assert intervals(seasons, date(2026, 1, 31)) == [(10 * H, 16 * H)]
    assert intervals(seasons, date(2026, 3, 1)) == [(9 * H, 20 * H)]
    holidays_off = "10:00-18:00; Dec 24-Jan 02 off"
    assert intervals(holidays_off, date(2026, 12, 31)) == []
    assert intervals(holidays_off, date(2026, 1, 2)) == []
    assert intervals(holidays_off, date(2026, 1, 3)) == [(10 * H, 18 * H)]
    assert intervals("09:00-17:00; Dec 24-26,31 off", date(2026, 12, 31)) == []
    assert intervals("09:00-17:00; Dec 24-26,31 off", date(2026, 12, 30)) == [(9 * H, 17 * H)]
    # Order matters: a bare time rule after the closing one adds its hours back.
    assert intervals("Dec 24-26,31 off; 09:00-17:00", date(2026, 12, 31)) == [(9 * H, 17 * H)]


def test_nth_weekday_of_the_month():
    assert intervals("Sa[1] 09:00-13:00", SAT) == [(9 * H, 13 * H)]  # Mar 7: the first Saturday
    assert intervals("Sa[1] 09:00-13:00", date(2026, 3, 14)) == []
    assert intervals("Mo[-1] 10:00-12:00", date(2026, 3, 30)) == [(10 * H, 12 * H)]
    assert intervals("Mo[-1] 10:00-12:00", date(2026, 3, 23)) == []


def test_weeks_years_and_easter():
    assert intervals("10:00-18:00; week 30-31 off", date(2026, 7, 27)) == []  # ISO week 31
    assert intervals("10:00-18:00; week 30-31 off", date(2026, 8, 3)) == [(10 * H, 18 * H)]
    assert intervals("2026 10:00-12:00", WED) == [(10 * H, 12 * H)]
    assert intervals("2026 10:00-12:00", date(2027, 3, 3)) == []
    assert intervals("09:00-17:00; easter -2 days off", date(2026, 4, 3)) == []  # Good Friday
    assert intervals("09:00-17:00; easter -2 days off", date(2026, 4, 2)) == [(9 * H, 17 * H)]


def test_case_and_whitespace_tolerance():
    expected = [(10 * H, 18 * H)]
    for value in ("mo-fr 10:00-18:00", "MO-FR 10:00 - 18:00", "Mon-Fri 10:00-18:00",
                  "Mo-Fr: 10.00-18.00", "Mo–Fr 10:00–18:00", "Mo-Fr 10-18", "Mo-Fr 10:00-18:00;"):
        assert intervals(value, WED) == expected, value


@pytest.mark.parametrize("value", [
    "", " ; ", "lunch and dinner", "Mo 25:00-26:00", "Mo 10:60-11:00", "Feb 30 off",
    "Mo[0] 10:00-12:00", "Mo 10:00", "Mo-Fr 10:00am-6:00pm", "sunrise-sunset",
    "Mo-Fr 10:00-12:00 shop", "Fr, 10:00-12:00", "week 54 off", "Mo-Fr 10:00-12:00 \"open",
])
def test_malformed_or_left_out_values_have_no_hours(value):
    assert intervals(value, WED) is None


@pytest.mark.parametrize("value", [
    "unknown", '"by appointment"', '17:30-24:00 "last order 21:30"', "17:00+", "Mo-Fr 10:00-18:00+",
])
def test_unknown_days_have_no_hours(value):
    assert intervals(value, WED) is None


def test_unknown_only_on_the_days_it_covers():
    assert intervals("Mo-Fr 10:00-18:00; Sa unknown", SAT) is None
    assert intervals("Mo-Fr 10:00-18:00; Sa unknown", WED) == [(10 * H, 18 * H)]
    # Friday's open end reaches into Saturday: unknown there too.
    assert intervals("Fr 18:00+", SAT) is None
    assert intervals("Fr 18:00+", SUN) == []
