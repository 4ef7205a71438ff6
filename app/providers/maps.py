"""Who answers place search, details and routes: Google (Places API (New) and
Routes, with GOOGLE_MAPS_API_KEY) or OpenStreetMap (Nominatim, Overpass and
OSRM, no key). One interface in front of both, so the planner, review, the
agent's tools and Shortest order never know which one answers.

`WAYLINE_PLACES_PROVIDER` chooses (`Settings.places_provider`: google with a
key, else osm)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Protocol
from collections.abc import Callable

from . import osm

if TYPE_CHECKING:
    from ..db import Database
    from .google import Google
    from .outbound import OutboundClient
    from .route_cache import Route
    from ..settings import Settings

# Google place ids are URL-safe base64-like text; OSM ids are namespaced.
GOOGLE_PLACE_ID = re.compile(r"[A-Za-z0-9_-]{4,512}")


class PlacesProvider(Protocol):
    name: str                 # "google" | "osm": legs say whose durations they show
    attribution: str | None   # shown wherever the provider's data shows ("© OpenStreetMap contributors")

    async def search_text(self, query: str, *, lat: float | None = None, lng: float | None = None,
                          radius_m: float = 20_000, max_results: int = 20, included_type: str | None = None,
                          language: str | None = None) -> list[dict]: ...

    async def search_nearby(self, lat: float, lng: float, *, radius_m: float = 1500, types: list[str] | None = None,
                            max_results: int = 20, rank: str = "POPULARITY",
                            language: str | None = None) -> list[dict]: ...

    async def place(self, place_id: str) -> dict: ...

    async def route(self, origin: tuple[float, float], destination: tuple[float, float],
                    mode: str) -> Route | None: ...

    def route_in_memory(self, origin: tuple[float, float], destination: tuple[float, float],
                        mode: str) -> tuple[bool, Route | None]: ...

    async def load_routes(self, wanted: list[tuple[tuple[float, float], tuple[float, float], str]]) -> None: ...

    async def route_matrix(self, origins: list[tuple[float, float]], destinations: list[tuple[float, float]],
                           mode: str) -> dict[tuple[int, int], Route | None]: ...


def in_country(raw: dict, country: str | None) -> dict:
    """An OpenStreetMap place's raw with the trip's country for its public
    holidays (`PH` in its hours), when the place does not name its own."""
    if not (country and isinstance(raw, dict) and raw.get("source") == "osm") or raw.get("country_code"):
        return raw
    tags = raw.get("tags")
    if isinstance(tags, dict) and tags.get("addr:country"):
        return raw   # a café in Malmö on a Copenhagen trip keeps Sweden's holidays
    return {**raw, "country_code": country}


def valid_place_id(value: str) -> bool:
    """A place id either provider could have given (checked before it reaches a URL)."""
    return bool(GOOGLE_PLACE_ID.fullmatch(value) or osm.PLACE_ID.fullmatch(value))


def open_provider(settings: Settings, http: OutboundClient, db: Database, clock: Callable[[], float],
                  google: Google | None) -> PlacesProvider:
    """The configured provider (Google reuses the app's Google client)."""
    if settings.places_provider == "google":
        if google is None:
            raise ValueError("WAYLINE_PLACES_PROVIDER=google needs GOOGLE_MAPS_API_KEY")
        return google
    return osm.OSM(settings, http, db, clock=clock)
