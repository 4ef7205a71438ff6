"""The stand-ins as pytest fixtures (registered by spec/conftest.py). Kept
apart from the stand-ins themselves so that the benches, which start the same
stand-ins, run with the project's normal dependencies (no pytest)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .google_standin import GoogleStandIn
from .openai_standin import OpenAIStandIn
from .osm_standin import OSMStandIn
from .s3_standin import S3Standin, new_bucket
from .weather_standin import WeatherStandIn


@pytest.fixture
def openai_standin() -> Iterator[OpenAIStandIn]:
    """A started stand-in; stopped (every request thread joined) after the test."""
    with OpenAIStandIn() as standin:
        yield standin


@pytest.fixture
def google_standin() -> Iterator[GoogleStandIn]:
    """A started Google stand-in; stopped (request threads joined) after the test."""
    with GoogleStandIn() as standin:
        yield standin


@pytest.fixture
def weather_standin() -> Iterator[WeatherStandIn]:
    """A started Open-Meteo stand-in; stopped after the test."""
    with WeatherStandIn() as standin:
        yield standin


@pytest.fixture
def osm_standin() -> Iterator[OSMStandIn]:
    """A started OSM stand-in (Nominatim, Overpass, OSRM); stopped after the test."""
    with OSMStandIn() as standin:
        yield standin


@pytest.fixture
def s3_standin() -> S3Standin:
    """A fresh bucket on the shared local S3 server (started once per process)."""
    return new_bucket()
