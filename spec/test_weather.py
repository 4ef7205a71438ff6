"""app/providers/weather.py and GET /api/trips/{tripId}/weather against the Open-Meteo stand-in."""

from __future__ import annotations

from contextlib import asynccontextmanager
from datetime import UTC, date, datetime, timedelta

import pytest

from app.db import Database
from app.errors import Unavailable
from app.settings import Settings
from app.providers.weather import TYPICAL_LABEL, Weather, archive_base
from helpers import PATIENT_PROVIDERS, make_client, new_trip, provider_client, signup
from standins.weather_standin import daily_values, weather_settings

FORECAST = "/v1/forecast"
ARCHIVE = "/v1/archive"
TODAY = date(2026, 12, 1)
LISBON = (38.7223, -9.1393)


class Clock:
    def __init__(self, day: date):
        self.now = datetime(day.year, day.month, day.day, 12, tzinfo=UTC).timestamp()

    def __call__(self) -> float:
        return self.now


@asynccontextmanager
async def weather_env(tmp_path, standin, clock, **timeouts):
    standin.today = TODAY
    settings = weather_settings(Settings(db_path=str(tmp_path / "w.db"), **{**PATIENT_PROVIDERS, **timeouts}), standin)
    db = await Database.open(settings.db_path)
    try:
        async with provider_client(settings) as http:
            yield Weather(settings, http, db, clock=clock)
    finally:
        await db.close()


def test_archive_base_is_derived_from_the_weather_base():
    assert archive_base("https://api.open-meteo.com") == "https://archive-api.open-meteo.com"
    assert archive_base("https://customer-api.open-meteo.com") == "https://customer-archive-api.open-meteo.com"
    assert archive_base("http://127.0.0.1:8123") == "http://127.0.0.1:8123"


@pytest.mark.anyio
async def test_forecast_inside_the_horizon(tmp_path, weather_standin):
    async with weather_env(tmp_path, weather_standin, Clock(TODAY)) as weather:
        days = await weather.days(*LISBON, TODAY + timedelta(days=2), 3)
    assert [d["date"] for d in days] == ["2026-12-03", "2026-12-04", "2026-12-05"]
    assert weather_standin.calls == {FORECAST: 1}
    sent = weather_standin.last(FORECAST).query
    assert sent["forecast_days"] == ["16"] and "start_date" not in sent
    assert sent["timezone"] == ["auto"] and sent["latitude"] == ["38.72"]
    assert set(sent["daily"][0].split(",")) == {"weather_code", "temperature_2m_max", "temperature_2m_min",
                                                "precipitation_sum", "precipitation_probability_max"}
    for day in days:
        expected = daily_values(date.fromisoformat(day["date"]))
        assert day["source"] == "forecast" and day["label"] == "forecast"
        assert day["tempMaxC"] == expected["temperature_2m_max"]
        assert day["tempMinC"] == expected["temperature_2m_min"]
        assert day["precipitationMm"] == expected["precipitation_sum"]
        assert day["precipitationProbability"] == expected["precipitation_probability_max"]
        assert day["weatherCode"] == expected["weather_code"] and day["summary"]


@pytest.mark.anyio
async def test_typical_beyond_the_horizon(tmp_path, weather_standin):
    target = TODAY + timedelta(days=60)
    async with weather_env(tmp_path, weather_standin, Clock(TODAY)) as weather:
        [day] = await weather.days(*LISBON, target, 1)
    assert weather_standin.calls == {ARCHIVE: 5}
    assert day["source"] == "typical" and day["label"] == TYPICAL_LABEL == "typical, not forecast"
    assert day["summary"].startswith("Typically")
    # The same calendar window (+/- 3 days) in five past years, all before today.
    samples = []
    years = set()
    for request in weather_standin.requests:
        start, end = (date.fromisoformat(request.query[k][0]) for k in ("start_date", "end_date"))
        assert (end - start).days == 6 and end < TODAY
        assert (start + timedelta(days=3)).timetuple()[1:3] == target.timetuple()[1:3]
        years.add(start.year)
        samples += [daily_values(start + timedelta(days=k)) for k in range(7)]
    assert len(years) == 5
    assert day["tempMaxC"] == round(sum(s["temperature_2m_max"] for s in samples) / len(samples), 1)
    rainy = sum(1 for s in samples if s["precipitation_sum"] >= 1.0)
    assert day["precipitationProbability"] == round(100 * rainy / len(samples))


@pytest.mark.anyio
async def test_horizon_edge_and_a_trip_across_it(tmp_path, weather_standin):
    async with weather_env(tmp_path, weather_standin, Clock(TODAY)) as weather:
        days = await weather.days(*LISBON, TODAY + timedelta(days=14), 4)
        assert [d["source"] for d in days] == ["forecast", "forecast", "typical", "typical"]
        assert days[1]["date"] == (TODAY + timedelta(days=15)).isoformat()
        assert weather_standin.calls == {FORECAST: 1, ARCHIVE: 5}
        # Another trip at the same place, inside the horizon: the same answer serves it.
        await weather.days(*LISBON, TODAY, 3)
        assert weather_standin.calls == {FORECAST: 1, ARCHIVE: 5}


@pytest.mark.anyio
async def test_the_places_own_today_decides_the_horizon(tmp_path, weather_standin):
    # The place is a day behind UTC: its 16 days end one date earlier, and
    # that date is typical instead of an error.
    async with weather_env(tmp_path, weather_standin, Clock(TODAY)) as weather:
        weather_standin.today = TODAY - timedelta(days=1)
        days = await weather.days(*LISBON, TODAY + timedelta(days=14), 2)
    assert [d["source"] for d in days] == ["forecast", "typical"]


@pytest.mark.anyio
async def test_cached_forecast_for_hours_typical_for_weeks(tmp_path, weather_standin):
    clock = Clock(TODAY)
    async with weather_env(tmp_path, weather_standin, clock) as weather:
        first = await weather.days(*LISBON, TODAY + timedelta(days=10), 10)
        assert await weather.days(*LISBON, TODAY + timedelta(days=10), 10) == first
        assert weather_standin.calls == {FORECAST: 1, ARCHIVE: 5}
        clock.now += 4 * 3600  # the forecast is stale, the typical values are not
        await weather.days(*LISBON, TODAY + timedelta(days=10), 10)
        assert weather_standin.calls == {FORECAST: 2, ARCHIVE: 5}
        clock.now += 31 * 24 * 3600
        weather_standin.today = TODAY + timedelta(days=31)
        await weather.days(*LISBON, TODAY + timedelta(days=70), 2)
        assert weather_standin.calls[ARCHIVE] == 10


@pytest.mark.anyio
@pytest.mark.parametrize("path", [FORECAST, ARCHIVE])
async def test_failures_are_unavailable(tmp_path, weather_standin, path):
    weather_standin.fail(path, status=500)
    async with weather_env(tmp_path, weather_standin, Clock(TODAY)) as weather:
        with pytest.raises(Unavailable) as raised:
            await weather.days(*LISBON, TODAY + timedelta(days=10), 10)
    assert raised.value.code == "weather_unavailable"
    assert raised.value.message == "Weather is unavailable right now"


@pytest.mark.anyio
async def test_after_a_failure_the_endpoint_rests_and_then_is_asked_again(tmp_path, weather_standin):
    """While Open-Meteo is down a review asks it nothing (it goes on without
    the weather), as Google and OpenStreetMap rest; the archive is another
    endpoint and is still asked. A 400 is about one request: no rest."""
    weather_standin.fail(FORECAST, status=503, times=1)
    async with weather_env(tmp_path, weather_standin, Clock(TODAY)) as weather:
        for _ in range(2):
            with pytest.raises(Unavailable):
                await weather.days(*LISBON, TODAY, 2)
        assert weather_standin.calls == {FORECAST: 1}
        assert [d["source"] for d in await weather.days(*LISBON, TODAY + timedelta(days=60), 1)] == ["typical"]
        weather.cooldown_s = 0
        weather._resting_until.clear()   # the rest is over
        assert [d["source"] for d in await weather.days(*LISBON, TODAY, 2)] == ["forecast", "forecast"]
        assert weather_standin.calls[FORECAST] == 2

        weather_standin.fail(ARCHIVE, status=400, message="bad dates", times=1)
        with pytest.raises(Unavailable):
            await weather.days(*LISBON, TODAY + timedelta(days=90), 1)
        assert (await weather.days(*LISBON, TODAY + timedelta(days=90), 1))[0]["source"] == "typical"


@pytest.mark.anyio
async def test_timeout_is_unavailable(tmp_path, weather_standin):
    weather_standin.delay(FORECAST, 600.0)   # answers only when the stand-in stops
    async with weather_env(tmp_path, weather_standin, Clock(TODAY), provider_read_timeout_s=1.0) as weather:
        with pytest.raises(Unavailable):
            await weather.days(*LISBON, TODAY, 1)


# -- the route -----------------------------------------------------------------------


def test_trip_weather_route(settings, weather_standin):
    today = datetime.now(UTC).date()
    with make_client(weather_settings(settings, weather_standin)) as client:
        signup(client)
        trip = new_trip(client, days=3, startDate=(today + timedelta(days=1)).isoformat())
        r = client.get(f"/api/trips/{trip['id']}/weather")
        assert r.status_code == 200, r.text
        days = r.json()["data"]["days"]
        assert [d["date"] for d in days] == [(today + timedelta(days=k)).isoformat() for k in (1, 2, 3)]
        assert {d["source"] for d in days} == {"forecast"}
        assert set(days[0]) == {"date", "source", "label", "tempMaxC", "tempMinC", "precipitationMm",
                                "precipitationProbability", "weatherCode", "summary"}
        assert client.get(f"/api/trips/{trip['id']}/weather").json()["data"]["days"] == days
        assert weather_standin.calls == {FORECAST: 1}

        far = new_trip(client, days=1, startDate=(today + timedelta(days=120)).isoformat())
        [day] = client.get(f"/api/trips/{far['id']}/weather").json()["data"]["days"]
        assert day["source"] == "typical" and day["label"] == "typical, not forecast"

        nowhere = new_trip(client, days=1, destination=None)
        assert client.get(f"/api/trips/{nowhere['id']}/weather").json()["data"]["days"] == []

        signup(client)  # someone else
        assert client.get(f"/api/trips/{trip['id']}/weather").status_code == 404


def test_trip_weather_failure_is_a_plain_503(settings, weather_standin):
    weather_standin.fail(FORECAST, status=502)
    today = datetime.now(UTC).date()
    with make_client(weather_settings(settings, weather_standin)) as client:
        signup(client)
        trip = new_trip(client, days=1, startDate=today.isoformat())
        r = client.get(f"/api/trips/{trip['id']}/weather")
    assert r.status_code == 503
    assert r.json()["error"] == {"code": "weather_unavailable", "message": "Weather is unavailable right now"}


def test_numbers_that_are_not_weather_are_unknown_not_a_500(settings, weather_standin):
    """Python's JSON reads Infinity and NaN as numbers: one in a forecast made the
    trip's weather (and its day's review) a 500, a float that would not round or
    JSON that could not be written. Such a value, or an absurd one, is unknown:
    a day without a usable high falls back to the typical weather, a day with one
    keeps what is usable."""
    today = datetime.now(UTC).date()
    first, second = today + timedelta(days=1), today + timedelta(days=2)
    weather_standin.overrides = {
        first: {"temperature_2m_max": float("inf"), "weather_code": float("nan")},
        second: {"temperature_2m_min": -float("inf"), "precipitation_sum": 1e300,
                 "precipitation_probability_max": float("nan"), "weather_code": 1e300},
    }
    with make_client(weather_settings(settings, weather_standin)) as client:
        signup(client)
        trip = new_trip(client, days=2, startDate=first.isoformat())
        r = client.get(f"/api/trips/{trip['id']}/weather")
        assert r.status_code == 200, r.text
        one, two = r.json()["data"]["days"]
        assert one["source"] == "typical"   # no usable high: the forecast's day is not used
        assert two["source"] == "forecast" and two["tempMaxC"] == daily_values(second)["temperature_2m_max"]
        assert (two["tempMinC"], two["precipitationMm"], two["precipitationProbability"], two["weatherCode"]) == (
            None, None, None, None)
        assert two["summary"] == "Weather, temperature unknown"
        review = client.get(f"/api/trips/{trip['id']}/days/{trip['days'][1]['id']}/review")
        assert review.status_code == 200, review.text
