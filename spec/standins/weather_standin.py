"""A loopback stand-in for Open-Meteo, for tests.

Speaks `GET /v1/forecast` and `GET /v1/archive` (the app derives the archive
base from WEATHER_BASE_URL; on a non-`api.` host such as this one it is the
same server). Answers the real shape: `latitude`, `longitude`, `timezone`,
`daily_units`, `daily {time: [...], <variable>: [...]}` as parallel arrays, and
errors as `{"error": true, "reason": "..."}` with status 400, like Open-Meteo.

Values are deterministic per date (`daily_values(day)`), so a test can say
what it expects. The forecast refuses dates outside [today - 92, today + 15]
and the archive dates after today (`today`: settable, default UTC today), so a
request on the wrong endpoint fails the way the real one would.

    from standins.weather_standin import weather_settings, weather_standin  # noqa: F401

Scripting (`loopback.PathScriptedServer`, as for Google): `url`; `today`;
`overrides` {date: {variable: value}} (a day's weather turned another way);
`fail(prefix, status=500, message=None, times=None)` (answers
`{"error": true, "reason": message}`); `delay(prefix, seconds)`; `calls`
(Counter of paths); `requests`; `last(path)`; `reset()`.
"""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta

from .loopback import PathScriptedServer

FORECAST_PATH = "/v1/forecast"
ARCHIVE_PATH = "/v1/archive"
UNITS = {"weather_code": "wmo code", "temperature_2m_max": "°C", "temperature_2m_min": "°C",
         "precipitation_sum": "mm", "precipitation_probability_max": "%"}


class WeatherError(Exception):
    def __init__(self, reason: str, status: int = 400):
        self.reason, self.status = reason, status


def daily_values(day: date) -> dict:
    """The stand-in's weather for one date: a seasonal curve, rain every fifth day."""
    season = math.sin(2 * math.pi * (day.timetuple().tm_yday - 110) / 365.25)
    rainy = (day.toordinal() % 5) == 0
    tmax = round(19.0 + 7.0 * season + (day.year % 3) * 0.3, 1)
    return {
        "weather_code": 61 if rainy else (1 if season > 0 else 3),
        "temperature_2m_max": tmax,
        "temperature_2m_min": round(tmax - 8.0, 1),
        "precipitation_sum": 4.2 if rainy else 0.0,
        "precipitation_probability_max": 70 if rainy else 10,
    }


class WeatherStandIn(PathScriptedServer):
    name = "weather-standin"
    json_content_type = "application/json; charset=UTF-8"

    def __init__(self) -> None:
        super().__init__()
        self.today: date | None = None
        self.overrides: dict[date, dict] = {}

    def handle(self, method, path, query, headers, body):
        if not self.waited(path):
            return 503, {"error": True, "reason": "stopping"}
        try:
            failure = self.scripted_failure(path)
            if failure:
                raise WeatherError(failure[1] or "Internal server error", failure[0])
            if method != "GET" or path not in (FORECAST_PATH, ARCHIVE_PATH):
                raise WeatherError("Not Found", 404)
            return 200, self._daily(path, {k: v[0] for k, v in query.items()})
        except WeatherError as exc:
            return exc.status, {"error": True, "reason": exc.reason}

    def _daily(self, path: str, params: dict) -> dict:
        try:
            lat, lng = float(params["latitude"]), float(params["longitude"])
        except (KeyError, ValueError):
            raise WeatherError("Parameter 'latitude' and 'longitude' must be set") from None
        today = self.today or datetime.now(UTC).date()
        try:
            start = date.fromisoformat(params["start_date"]) if "start_date" in params else None
            end = date.fromisoformat(params["end_date"]) if "end_date" in params else None
        except ValueError:
            raise WeatherError("Invalid date format") from None
        if path == ARCHIVE_PATH:
            if start is None or end is None:
                raise WeatherError("Parameter 'start_date' and 'end_date' are required")
            if end > today:
                raise WeatherError(f"Parameter 'end_date' is out of allowed range from 1940-01-01 to {today}")
        else:
            if start is None or end is None:
                start = today
                end = today + timedelta(days=int(params.get("forecast_days", 7)) - 1)
            low, high = today - timedelta(days=92), today + timedelta(days=15)
            if not (low <= start <= high and low <= end <= high):
                raise WeatherError(f"Parameter 'start_date' is out of allowed range from {low} to {high}")
        if end < start:
            raise WeatherError("End-date must be larger or equal than start-date")
        names = [n for n in (params.get("daily") or "").split(",") if n]
        unknown = [n for n in names if n not in UNITS or (path == ARCHIVE_PATH and n.endswith("_probability_max"))]
        if unknown:
            raise WeatherError(f"Cannot initialize WeatherVariable from invalid String value {unknown[0]}")
        days = [start + timedelta(days=i) for i in range((end - start).days + 1)]
        values = [{**daily_values(d), **self.overrides.get(d, {})} for d in days]
        daily = {"time": [d.isoformat() for d in days], **{n: [v[n] for v in values] for n in names}}
        return {"latitude": lat, "longitude": lng, "generationtime_ms": 0.1, "utc_offset_seconds": 0,
                "timezone": "Europe/Lisbon" if params.get("timezone") == "auto" else params.get("timezone", "GMT"),
                "timezone_abbreviation": "GMT", "elevation": 50.0,
                "daily_units": {"time": "iso8601", **{n: UNITS[n] for n in names}}, "daily": daily}


def weather_settings(settings, standin: WeatherStandIn, **changes):
    return settings.with_(weather_base_url=standin.url, **changes)
