"""Shared fixtures: a real app on a temp SQLite file, driven over HTTP.
Helpers (signup, new_trip, op, LiveServer, ...) live in spec/helpers.py."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from app.db import connect, migrate
from app.web.application import create_app
from app.settings import Settings
from helpers import LiveServer, make_client

# The loopback stand-ins' fixtures (openai_standin, google_standin, weather_standin, osm_standin,
# s3_standin); the stand-ins themselves do not import pytest, so the benches can start them.
pytest_plugins = ("standins.fixtures",)


# The discard port: a provider a test did not point at a stand-in refuses at
# once, so no test reaches the internet. Weather is always on (the review asks
# it), and without a Google key places and routes come from OpenStreetMap.
CLOSED = "http://127.0.0.1:9"


# How long each slow test took in a whole run here (`scripts/test
# --record-durations` writes it again). The longest start first, so that
# under xdist they spread over the workers instead of ending the run last.
DURATIONS = Path(__file__).resolve().parent / "durations.json"
NEW_BROWSER_TEST_S = 10.0  # a browser test not yet in the file: a typical one
# Workers per core for `-n auto` (scripts/test). One: run one at a time the
# tests keep a core busy 84% of their time (367 busy CPU-s in 436 s), so a
# second worker per core only makes them share it. On this two-core machine
# two workers took the same time as four alone (4:17 against 4:02-4:14) for
# 383 busy CPU-s instead of 474-495, and with a second copy of the suite
# running, 7:17 instead of 8:14 (832 busy CPU-s for both, against 1,000).
WORKERS_PER_CORE = 1


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    return WORKERS_PER_CORE * len(os.sched_getaffinity(0))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--record-durations", action="store_true",
                     help=f"write each slow test's duration to {DURATIONS.name} (the order tests start in)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    known = json.loads(DURATIONS.read_text(encoding="utf-8")) if DURATIONS.is_file() else {}

    def expected_s(item: pytest.Item) -> float:
        default = NEW_BROWSER_TEST_S if item.get_closest_marker("browser") else 0.0
        return known.get(item.nodeid, default)

    items.sort(key=expected_s, reverse=True)  # stable: equal ones keep pytest's order


def _stop_shared_browser() -> None:
    harness = sys.modules.get("browser.harness")
    if harness is not None:
        harness.stop_shared_browser()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    # The worker's Chromium and Playwright driver (spec/browser/harness.py)
    # stay up for the whole run: starting them again after every other test
    # cost about a CPU-second each time, 20-30 times a run. Between its calls
    # the driver leaves its asyncio loop marked as running on this thread,
    # which asyncio.run and anyio refuse to run beside, so a test that is not
    # a browser test runs with the mark put aside, and gets it back after.
    harness = sys.modules.get("browser.harness")
    if harness is None or item.get_closest_marker("browser") is not None:
        yield
        return
    with harness.driver_set_aside():
        yield


def pytest_sessionfinish() -> None:
    _stop_shared_browser()


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("record_durations") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_DurationRecorder(), "wayline-durations")


class _DurationRecorder:
    """Adds up setup, call and teardown per test (xdist sends every worker's
    reports here) and merges the slow ones into DURATIONS at the end."""

    SLOW_S = 1.0

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[report.nodeid] = self.seconds.get(report.nodeid, 0.0) + report.duration

    def pytest_sessionfinish(self) -> None:
        known = json.loads(DURATIONS.read_text(encoding="utf-8")) if DURATIONS.is_file() else {}
        for nodeid, seconds in self.seconds.items():
            known.pop(nodeid, None)
            if seconds >= self.SLOW_S:
                known[nodeid] = round(seconds, 1)
        ordered = dict(sorted(known.items(), key=lambda kv: (-kv[1], kv[0])))
        DURATIONS.write_text(json.dumps(ordered, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


@pytest.fixture(scope="session")
def migrated_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database file with every migration applied as the writer applies
    them (app/db.py), made once per test process. Each test's database starts
    as a copy: running the ~46 migrations again took about 90 ms a test (35
    ms of CPU), a copy 2 ms. The app still checks the migrations at start, and
    what a first start adds (the generated secret) is each test's own;
    spec/test_migrations.py migrates files of its own."""
    path = tmp_path_factory.mktemp("migrated") / "wayline.db"
    conn = connect(str(path))
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        migrate(conn)
    finally:
        conn.close()   # the last connection: its WAL is checkpointed into the file and removed
    return path


@pytest.fixture
def settings(tmp_path: Path, migrated_database: Path) -> Settings:
    shutil.copyfile(migrated_database, tmp_path / "wayline.db")
    # A cheap scrypt cost (test-only, behind its flag): every test signs up members,
    # and the production cost would spend most of the suite's CPU on hashing.
    # Every test signs up from one address: the sign-up quota (app/quotas.py) is
    # set out of the way here, and the paces of writes and place lookups;
    # spec/test_quotas.py sets its own.
    return Settings(db_path=str(tmp_path / "wayline.db"), uploads_dir=str(tmp_path / "uploads"),
                    password_hash_n=2**4, allow_weak_password_hash_for_tests=True, signups_per_address_hour=10_000,
                    writes_per_user_minute=10_000_000, writes_per_user_hour=10_000_000,
                    place_lookups_per_user_minute=10_000_000, place_lookups_per_user_hour=10_000_000,
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

