"""Weather for a trip's dates from Open-Meteo (no key).

Dates inside the forecast horizon (16 days from today) get the daily forecast
from `{WEATHER_BASE_URL}/v1/forecast`. The request asks for
`forecast_days=16` rather than exact dates: Open-Meteo counts those days from
the *place's* local today, which can be a day off UTC today (the injectable
clock), and exact dates past its horizon are an error. Whatever dates the
answer holds are forecast; one answer per place serves every trip there.
Every other date gets a *typical* value,
labelled "typical, not forecast": the same calendar days (+/- 3 days) in the
last five years that the historical archive already holds, averaged.

The archive lives on another host (`archive-api.open-meteo.com`, api-facts D)
while only WEATHER_BASE_URL is a setting, so its base is derived: a host
starting with `api.` becomes `archive-api.` (`customer-api.` becomes
`customer-archive-api.`); any other host (a proxy, a test stand-in) serves
`/v1/archive` itself.

Cached in SQLite via app.providers.cache.ProviderCache: forecasts for 3 hours, archive
answers (history does not change) for 30 days. Failures are `Unavailable`.
After a failed connection, a timeout, a 429 or a 5xx, that endpoint rests for
`cooldown_s` (monotonic time), as Google and OpenStreetMap do: while
Open-Meteo is down, each review asks nothing (it goes on without the weather)
instead of waiting for the service again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx

from ..db import Database
from ..errors import Unavailable
from .outbound import OutboundClient
from .cache import ProviderCache, request_key

log = logging.getLogger("wayline.weather")

FORECAST_DAYS = 16
FORECAST_TTL_S = 3 * 3600
ARCHIVE_TTL_S = 30 * 24 * 3600
TYPICAL_YEARS = 5
WINDOW_DAYS = 3         # each side of the date, in each past year
ARCHIVE_LAG_DAYS = 7    # the archive trails today by a few days
RAINY_MM = 1.0          # a day "with rain" for the typical probability
FORECAST_VARS = ("weather_code", "temperature_2m_max", "temperature_2m_min",
                 "precipitation_sum", "precipitation_probability_max")
ARCHIVE_VARS = FORECAST_VARS[:4]
FORECAST_LABEL = "forecast"
TYPICAL_LABEL = "typical, not forecast"
COOLDOWN_S = 20.0

# WMO weather interpretation codes as Open-Meteo documents them.
WMO = {
    0: "Clear sky", 1: "Mainly clear", 2: "Partly cloudy", 3: "Overcast", 45: "Fog", 48: "Freezing fog",
    51: "Light drizzle", 53: "Drizzle", 55: "Heavy drizzle", 56: "Freezing drizzle", 57: "Freezing drizzle",
    61: "Light rain", 63: "Rain", 65: "Heavy rain", 66: "Freezing rain", 67: "Freezing rain",
    71: "Light snow", 73: "Snow", 75: "Heavy snow", 77: "Snow grains",
    80: "Rain showers", 81: "Rain showers", 82: "Violent rain showers", 85: "Snow showers", 86: "Snow showers",
    95: "Thunderstorm", 96: "Thunderstorm with hail", 99: "Thunderstorm with hail",
}


def archive_base(weather_base_url: str) -> str:
    url = httpx.URL(weather_base_url)
    host = url.host
    if host.startswith("api."):
        host = "archive-" + host
    elif host.startswith("customer-api."):
        host = "customer-archive-api." + host[len("customer-api."):]
    return str(url.copy_with(host=host)).rstrip("/")


def shift_years(d: date, years: int) -> date:
    try:
        return d.replace(year=d.year + years)
    except ValueError:  # 29 February in a year without one
        return d.replace(year=d.year + years, day=28)


class Weather:
    def __init__(self, settings, http: OutboundClient, db: Database, clock: Callable[[], float] | None = None):
        base = settings.weather_base_url.rstrip("/")
        self.forecast_url = f"{base}/v1/forecast"
        self.archive_url = f"{archive_base(base)}/v1/archive"
        self.http = http
        self.clock = clock or time.time
        self.cache = ProviderCache(db, self.clock)
        self.cooldown_s = COOLDOWN_S
        self._resting_until: dict[str, float] = {}   # by path, on time.monotonic (not the injectable clock)

    def today(self) -> date:
        return datetime.fromtimestamp(self.clock(), UTC).date()

    async def days(self, lat: float, lng: float, start: date, count: int) -> list[dict]:
        """One entry per date from `start`, in order."""
        dates = [start + timedelta(days=i) for i in range(count)]
        if not dates:
            return []
        today = self.today()
        # ~1 km: Open-Meteo's grid is coarser, and nearby trips share the cache.
        lat, lng = round(float(lat), 2), round(float(lng), 2)
        # The place's today is within a day of UTC today.
        maybe = [d for d in dates if today - timedelta(days=1) <= d <= today + timedelta(days=FORECAST_DAYS)]
        found = await self._forecast(lat, lng, maybe) if maybe else {}
        found.update(await self._typical(lat, lng, [d for d in dates if d not in found], today))
        return [found[d] for d in dates]

    # -- forecast ------------------------------------------------------------

    async def _forecast(self, lat: float, lng: float, dates: list[date]) -> dict[date, dict]:
        """The dates the 16-day forecast holds (the others are left out)."""
        params = {"latitude": lat, "longitude": lng, "daily": ",".join(FORECAST_VARS), "timezone": "auto",
                  "forecast_days": FORECAST_DAYS}
        daily = await self._daily(self.forecast_url, params, FORECAST_TTL_S)
        out = {}
        for d in dates:
            row = daily.get(d.isoformat())
            if row is None or _number(row, "temperature_2m_max") is None:
                continue
            code = _int(row, "weather_code")
            tmax, tmin = _round(row, "temperature_2m_max"), _round(row, "temperature_2m_min")
            prob = _int(row, "precipitation_probability_max")
            text = WMO.get(code, "Weather") if code is not None else "Weather"
            summary = f"{text}, {_range(tmin, tmax)}" + (f", {prob}% chance of rain" if prob is not None else "")
            out[d] = _day(d, "forecast", FORECAST_LABEL, tmax, tmin, _round(row, "precipitation_sum"),
                          prob, code, summary)
        return out

    # -- typical -------------------------------------------------------------

    async def _typical(self, lat: float, lng: float, dates: list[date], today: date) -> dict[date, dict]:
        if not dates:
            return {}
        first, last = min(dates), max(dates)
        newest_allowed = today - timedelta(days=ARCHIVE_LAG_DAYS)
        shift = today.year - last.year
        while shift_years(last, shift) + timedelta(days=WINDOW_DAYS) > newest_allowed:
            shift -= 1
        shifts = [shift - k for k in range(TYPICAL_YEARS)]
        window = timedelta(days=WINDOW_DAYS)
        years = await asyncio.gather(*(
            self._daily(self.archive_url, {
                "latitude": lat, "longitude": lng, "daily": ",".join(ARCHIVE_VARS), "timezone": "auto",
                "start_date": (shift_years(first, s) - window).isoformat(),
                "end_date": (shift_years(last, s) + window).isoformat(),
            }, ARCHIVE_TTL_S)
            for s in shifts
        ))
        out = {}
        for d in dates:
            samples = []
            for s, daily in zip(shifts, years):
                center = shift_years(d, s)
                for k in range(-WINDOW_DAYS, WINDOW_DAYS + 1):
                    row = daily.get((center + timedelta(days=k)).isoformat())
                    if row is not None:
                        samples.append(row)
            out[d] = _typical_day(d, samples)
        return out

    # -- HTTP ----------------------------------------------------------------

    async def _daily(self, url: str, params: dict, ttl_s: float) -> dict[str, dict]:
        """The `daily` block as {date: {variable: value}}, cached."""
        key = request_key("weather:" + httpx.URL(url).path, "", params)
        hit, daily = await self.cache.get(key)
        if not hit:
            data = await self._get(url, params)
            block = data.get("daily") if isinstance(data, dict) else None
            if not isinstance(block, dict) or not isinstance(block.get("time"), list):
                log.warning("weather: %s answered without a daily block", httpx.URL(url).path)
                raise _unavailable()
            daily = {}
            for i, day in enumerate(block["time"]):
                daily[str(day)] = {name: _at(block.get(name), i) for name in block if name != "time"}
            await self.cache.put(key, daily, self.clock() + ttl_s)
        return daily

    async def _get(self, url: str, params: dict) -> Any:
        kwargs: dict[str, Any] = {"params": params}
        path = httpx.URL(url).path
        if self._resting_until.get(path, 0.0) > time.monotonic():
            raise _unavailable()
        try:
            response = await self.http.get(url, **kwargs)
        except httpx.HTTPError as exc:
            log.warning("weather: GET %s failed: %s", path, type(exc).__name__)
            self._rest(path)
            raise _unavailable() from None
        if response.status_code >= 500 or response.status_code == 429:
            self._rest(path)
        if response.status_code >= 400:
            reason = ""
            try:
                reason = str(response.json().get("reason") or "")[:200]
            except (ValueError, AttributeError):
                pass
            log.warning("weather: GET %s answered %s %s", path, response.status_code, reason)
            raise _unavailable()
        try:
            return response.json()
        except ValueError:
            log.warning("weather: GET %s answered a body that is not JSON", path)
            raise _unavailable() from None

    def _rest(self, path: str) -> None:
        self._resting_until[path] = time.monotonic() + self.cooldown_s


def _typical_day(d: date, samples: list[dict]) -> dict:
    def mean(name: str) -> float | None:
        values = [v for v in (_number(s, name) for s in samples) if v is not None]
        return round(sum(values) / len(values), 1) if values else None

    rain = [v for v in (_number(s, "precipitation_sum") for s in samples) if v is not None]
    prob = round(100 * sum(1 for v in rain if v >= RAINY_MM) / len(rain)) if rain else None
    codes = Counter(c for c in (_int(s, "weather_code") for s in samples) if c is not None)
    code = codes.most_common(1)[0][0] if codes else None
    tmax, tmin = mean("temperature_2m_max"), mean("temperature_2m_min")
    text = WMO.get(code, "mixed weather").lower() if code is not None else "mixed weather"
    summary = f"Typically {text}, {_range(tmin, tmax)}" + (
        f"; rain on {prob}% of these days in past years" if prob is not None else "")
    return _day(d, "typical", TYPICAL_LABEL, tmax, tmin, mean("precipitation_sum"), prob, code, summary)


def _day(d: date, source: str, label: str, tmax, tmin, precip, prob, code, summary: str) -> dict:
    return {"date": d.isoformat(), "source": source, "label": label, "tempMaxC": tmax, "tempMinC": tmin,
            "precipitationMm": precip, "precipitationProbability": prob, "weatherCode": code,
            "summary": summary}


def _range(tmin, tmax) -> str:
    if tmin is None or tmax is None:
        return "temperature unknown"
    return f"{round(tmin)}–{round(tmax)} °C"


def _at(values: Any, i: int) -> Any:
    return values[i] if isinstance(values, list) and i < len(values) else None


# What a day's value may be (wider than the planet's records). Anything else is
# unknown: Python's JSON reads Infinity, NaN and 1e999 as numbers, and one of
# them in an answer made the trip's weather and its review a 500 (a float that
# will not round, or JSON that cannot be written); a merely absurd one would
# have read "1e+300 °C".
PLAUSIBLE = {"weather_code": (0, 99), "temperature_2m_max": (-95, 65), "temperature_2m_min": (-95, 65),
             "precipitation_sum": (0, 2000), "precipitation_probability_max": (0, 100)}


def _number(row: dict, name: str) -> float | None:
    value = row.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    low, high = PLAUSIBLE[name]
    return float(value) if low <= value <= high else None   # NaN compares false: unknown too


def _round(row: dict, name: str) -> float | None:
    value = _number(row, name)
    return None if value is None else round(value, 1)


def _int(row: dict, name: str) -> int | None:
    value = _number(row, name)
    return None if value is None else int(round(value))


def _unavailable() -> Unavailable:
    return Unavailable("Weather is unavailable right now", code="weather_unavailable")
