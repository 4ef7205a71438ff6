"""Shared fixtures: a real app on a temp SQLite file, driven over HTTP.
Helpers (signup, new_trip, op, LiveServer, ...) live in spec/helpers.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.web.application import create_app
from app.settings import Settings
from helpers import LiveServer, make_client

# The loopback stand-ins' fixtures (openai_standin, google_standin, weather_standin, osm_standin).
pytest_plugins = ("standins.openai_standin", "standins.google_standin", "standins.weather_standin",
                  "standins.osm_standin", "standins.s3_standin")


# The discard port: a provider a test did not point at a stand-in refuses at
# once, so no test reaches the internet. Weather is always on (the review asks
# it), and without a Google key places and routes come from OpenStreetMap.
CLOSED = "http://127.0.0.1:9"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Browser tests take seconds each: run them first, so that under xdist
    # (scripts/test) they spread over the workers instead of ending the run.
    items.sort(key=lambda item: item.get_closest_marker("browser") is None)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    # A cheap scrypt cost (test-only, behind its flag): every test signs up members,
    # and the production cost would spend most of the suite's CPU on hashing.
    return Settings(db_path=str(tmp_path / "wayline.db"), uploads_dir=str(tmp_path / "uploads"),
                    password_hash_n=2**4, allow_weak_password_hash_for_tests=True,
                    nominatim_url=CLOSED, overpass_url=f"{CLOSED}/api/interpreter",
                    osrm_url=f"{CLOSED}/routed-{{profile}}",
                    weather_base_url=CLOSED)


@pytest.fixture
def client(settings):
    with make_client(settings) as c:
        yield c


@pytest.fixture
def live_server(settings):
    with LiveServer(create_app(settings)) as server:
        yield server

