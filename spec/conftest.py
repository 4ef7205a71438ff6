"""Shared fixtures: a real app on a temp SQLite file, driven over HTTP.
Helpers (signup, new_trip, op, LiveServer, ...) live in spec/helpers.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.server import create_app
from app.settings import Settings
from helpers import LiveServer, make_client

# The loopback stand-ins' fixtures (openai_standin, google_standin, weather_standin, osm_standin).
pytest_plugins = ("standins.openai_standin", "standins.google_standin", "standins.weather_standin",
                  "standins.osm_standin")


# Without a Google key the app uses OpenStreetMap's public servers: tests that
# bring no stand-in point them at a closed loopback port (refused at once).
CLOSED = "http://127.0.0.1:9"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(db_path=str(tmp_path / "wayline.db"), uploads_dir=str(tmp_path / "uploads"),
                    nominatim_url=CLOSED, overpass_url=f"{CLOSED}/api/interpreter",
                    osrm_url=f"{CLOSED}/routed-{{profile}}")


@pytest.fixture
def client(settings):
    with make_client(settings) as c:
        yield c


@pytest.fixture
def live_server(settings):
    with LiveServer(create_app(settings)) as server:
        yield server

