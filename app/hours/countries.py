"""The country a trip is in, as far as the server can tell offline: from the
trip's IANA time zone (`Europe/Copenhagen` -> `DK`), read from the tz
database's zone.tab (the `tzdata` package), old names included
(`Asia/Calcutta`, which browsers still report, is `Asia/Kolkata`). Public
holidays in OpenStreetMap opening hours (`PH off`) need it; UTC and zones
with no country give None (those days stay "unknown", never open)."""

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
    # Links, "L Asia/Kolkata Asia/Calcutta": an old name has its target's country.
    links = resources.files("tzdata").joinpath("zoneinfo/tzdata.zi").read_text(encoding="utf-8")
    for line in links.splitlines():
        if line.startswith("L "):
            _, target, alias = line.split()
            if target in out:
                out.setdefault(alias, out[target])
    return out


def country_of_timezone(zone: str | None) -> str | None:
    """ISO 3166 alpha-2 code of the time zone's country, or None."""
    return _zone_countries().get(zone or "")
