"""The country a trip is in, as far as the server can tell offline: from the
trip's IANA time zone (`Europe/Copenhagen` -> `DK`), read from the tz
database's zone.tab (the `tzdata` package). Public holidays in OpenStreetMap
opening hours (`PH off`) need it; a zone shared by several countries, or UTC,
gives None (those days stay "unknown", never open)."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources


@lru_cache(maxsize=1)
def _zone_countries() -> dict[str, str]:
    text = resources.files("tzdata").joinpath("zoneinfo/zone.tab").read_text(encoding="utf-8")
    out: dict[str, str] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            code, _, zone, *_ = line.split("\t")
            out[zone] = code
    return out


def country_of_timezone(zone: str | None) -> str | None:
    """ISO 3166 alpha-2 code of the time zone's country, or None."""
    return _zone_countries().get(zone or "")
