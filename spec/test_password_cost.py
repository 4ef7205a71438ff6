"""The scrypt cost: production strength unless a test sets the test-only flag;
the environment can set neither; every hash verifies at the cost it was made with."""

from __future__ import annotations

import sqlite3

import pytest

from app import auth
from app.settings import Settings
from helpers import make_client, signup

PRODUCTION_N = 2**14
# Every spelling a deployment might try, in the environment and in .env.
WEAKENING_ENV = {
    "PASSWORD_HASH_N": "16", "WAYLINE_PASSWORD_HASH_N": "16",
    "ALLOW_WEAK_PASSWORD_HASH_FOR_TESTS": "1", "WAYLINE_ALLOW_WEAK_PASSWORD_HASH_FOR_TESTS": "true",
}


def stored_hash(settings: Settings, username: str) -> str:
    with sqlite3.connect(settings.db_path) as conn:
        return conn.execute("SELECT password_hash FROM users WHERE username = ?", (username,)).fetchone()[0]


def test_production_cost_is_the_default():
    assert Settings().password_hash_n == PRODUCTION_N
    assert Settings().allow_weak_password_hash_for_tests is False


def test_a_weak_cost_is_refused_without_the_test_flag(settings):
    with pytest.raises(ValueError, match="tests only"):
        Settings(password_hash_n=2**4)
    with pytest.raises(ValueError, match="tests only"):
        settings.with_(allow_weak_password_hash_for_tests=False)  # the fixture's cheap cost, flag off
    assert Settings(password_hash_n=2**15).password_hash_n == 2**15  # stronger is always fine


def test_the_environment_cannot_weaken_the_hash(tmp_path):
    dotenv = tmp_path / ".env"
    dotenv.write_text("".join(f"{name}={value}\n" for name, value in WEAKENING_ENV.items()))
    for loaded in (Settings.from_env(env=WEAKENING_ENV, dotenv=None), Settings.from_env(env={}, dotenv=dotenv)):
        assert loaded.password_hash_n == PRODUCTION_N
        assert loaded.allow_weak_password_hash_for_tests is False


def test_new_hashes_use_the_configured_cost(client, settings):
    signup(client, "alice")
    assert stored_hash(settings, "alice").startswith(f"scrypt${settings.password_hash_n}$")
    assert settings.password_hash_n < PRODUCTION_N  # the suite's cheap cost


def test_a_hash_made_at_another_cost_still_verifies(client, settings):
    signup(client, "alice", password="correct horse")
    with sqlite3.connect(settings.db_path) as conn:
        conn.execute("UPDATE users SET password_hash = ?", (auth.hash_password("old password", PRODUCTION_N),))
    assert stored_hash(settings, "alice").startswith(f"scrypt${PRODUCTION_N}$")
    r = client.post("/api/auth/signin", json={"username": "alice", "password": "old password"})
    assert r.status_code == 200, r.text
    r = client.post("/api/auth/signin", json={"username": "alice", "password": "correct horse"})
    assert r.status_code == 401


def test_an_unknown_username_costs_a_check_at_the_configured_cost(settings, monkeypatch):
    checked = []
    real_verify = auth.verify_password

    def recording_verify(password: str, stored: str) -> bool:
        checked.append(stored)
        return real_verify(password, stored)

    monkeypatch.setattr(auth, "verify_password", recording_verify)
    for cost_settings in (settings, settings.with_(password_hash_n=PRODUCTION_N)):
        checked.clear()
        with make_client(cost_settings) as client:
            r = client.post("/api/auth/signin", json={"username": "nobody", "password": "correct horse"})
        assert r.status_code == 401
        assert [stored.split("$")[1] for stored in checked] == [str(cost_settings.password_hash_n)]
