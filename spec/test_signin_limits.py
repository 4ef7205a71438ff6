"""Sign-in limits that can't be turned against a user (issue 12, failures 2
and 3): failures count per (username, address) and per address; a burst on
one username from many addresses slows it but never refuses the right
password from a clean address; forwarded headers count only from a trusted
proxy."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from app.auth import SignInLimiter
from app.web.client_address import client_address, parse_networks
from app.web.application import create_app
from helpers import signup

WRONG = {"username": "alice", "password": "wrong password"}
RIGHT = {"username": "alice", "password": "correct horse"}


class RecordedSleep:
    def __init__(self):
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def app_client(settings, peer: str = "198.51.100.1", **overrides) -> TestClient:
    return TestClient(create_app(settings, **overrides), base_url="http://testserver", client=(peer, 40000))


def test_a_burst_from_many_addresses_slows_the_username_but_the_owner_still_signs_in(settings):
    sleep = RecordedSleep()
    proxied = settings.with_(trusted_proxies=("10.0.0.0/8",))
    with app_client(proxied, peer="10.1.2.3", limiter=SignInLimiter(sleep=sleep)) as client:
        signup(client, "alice")
        client.cookies.clear()
        for i in range(30):   # 30 addresses, one wrong guess each
            r = client.post("/api/auth/signin", json=WRONG, headers={"X-Forwarded-For": f"203.0.113.{i}"})
            assert r.status_code == 401, (i, r.text)
        # Those attempts were slowed, more and more: 0.5 s from the 10th failure on, doubling every 10.
        assert sleep.waits == [0.5] * 10 + [1.0] * 10
        # The owner, from an address that has not failed, gets in (after the wait).
        r = client.post("/api/auth/signin", json=RIGHT, headers={"X-Forwarded-For": "192.0.2.50"})
        assert r.status_code == 200, r.text
        assert sleep.waits[-1] == 2.0


def test_one_address_is_refused_for_a_username_after_5_failures_and_for_all_after_20(settings):
    with app_client(settings, limiter=SignInLimiter(sleep=RecordedSleep())) as client:
        signup(client, "alice")
        client.cookies.clear()
        for _ in range(5):
            assert client.post("/api/auth/signin", json=WRONG).status_code == 401
        r = client.post("/api/auth/signin", json=RIGHT)
        assert r.status_code == 429 and r.json()["error"]["code"] == "rate_limited"
        assert r.json()["error"]["retryAfterS"] > 0
        # Other usernames from this address are still answered, until 20 failures in all.
        for i in range(15):
            assert client.post("/api/auth/signin", json={"username": f"user{i}", "password": "x"}).status_code == 401
        assert client.post("/api/auth/signin", json={"username": "bob", "password": "x"}).status_code == 429
    # Another address is not affected by any of it.
    with app_client(settings, peer="198.51.100.2") as other:
        assert other.post("/api/auth/signin", json=RIGHT).status_code == 200


def test_forwarded_headers_from_an_untrusted_peer_are_ignored(settings):
    """Rotating X-Forwarded-For once gave 0 refusals in 30 tries."""
    with make_limited(settings) as client:
        refused = 0
        for i in range(30):
            r = client.post("/api/auth/signin", json={"username": f"u{i}", "password": "x"},
                            headers={"X-Forwarded-For": f"203.0.113.{i}", "Fly-Client-IP": f"192.0.2.{i}"})
            refused += r.status_code == 429
        assert refused == 10


def make_limited(settings) -> TestClient:
    return app_client(settings, peer="198.51.100.9", limiter=SignInLimiter(sleep=RecordedSleep()))


ON_FLY, ELSEWHERE = True, False


@pytest.mark.parametrize("peer,headers,trusted,fly,expected", [
    ("198.51.100.1", [(b"x-forwarded-for", b"203.0.113.5")], (), ON_FLY, "198.51.100.1"),
    ("198.51.100.1", [(b"fly-client-ip", b"203.0.113.5")], ("10.0.0.0/8",), ON_FLY, "198.51.100.1"),
    ("10.0.0.2", [(b"fly-client-ip", b"203.0.113.5"), (b"x-forwarded-for", b"1.1.1.1")], ("10.0.0.0/8",), ON_FLY,
     "203.0.113.5"),
    # Elsewhere a proxy that does not set Fly-Client-IP passes the client's own through: never read.
    ("10.0.0.2", [(b"fly-client-ip", b"203.0.113.5"), (b"x-forwarded-for", b"1.1.1.1")], ("10.0.0.0/8",),
     ELSEWHERE, "1.1.1.1"),
    ("10.0.0.2", [(b"x-forwarded-for", b"6.6.6.6, 203.0.113.5, 10.0.0.9")], ("10.0.0.0/8",), ELSEWHERE,
     "203.0.113.5"),
    ("10.0.0.2", [(b"x-forwarded-for", b"garbage, 10.0.0.9")], ("10.0.0.0/8",), ELSEWHERE, "10.0.0.2"),
    ("10.0.0.2", [(b"x-forwarded-for", b"10.0.0.7")], ("10.0.0.0/8",), ELSEWHERE, "10.0.0.2"),
    ("fdaa::3", [(b"fly-client-ip", b"2001:db8::1")], ("fdaa::/16",), ON_FLY, "2001:db8::1"),
    ("10.0.0.2", [], ("10.0.0.2",), ELSEWHERE, "10.0.0.2"),
])
def test_client_address_rule(peer, headers, trusted, fly, expected):
    scope = {"client": (peer, 1234), "headers": headers}
    assert client_address(scope, trusted, fly=fly) == expected


def test_trusted_proxies_setting_is_checked():
    assert parse_networks(" 172.16.0.0/12 ,fdaa::/16,") == ("172.16.0.0/12", "fdaa::/16")
    with pytest.raises(ValueError):
        parse_networks("172.16.0.0/12, *")


def test_the_real_server_does_not_let_x_forwarded_for_pick_the_address(settings, monkeypatch):
    """`python -m app` behind a public URL: rotating the header must not
    escape the per-address limit (uvicorn once trusted it from anyone)."""
    import threading
    import time

    import httpx
    import uvicorn

    from app import __main__ as entry
    import socket

    captured = {}
    # python -m app serves with app/web/uvicorn_server.py's run (uvicorn's server that ends live streams at shutdown)
    monkeypatch.setattr(entry, "run", lambda app, **kwargs: captured.update(app=app, **kwargs))
    monkeypatch.setenv("WAYLINE_DB", settings.db_path)
    monkeypatch.setenv("WAYLINE_UPLOADS", settings.uploads_dir)
    monkeypatch.setenv("WAYLINE_PUBLIC_URL", "https://wayline.example")
    monkeypatch.chdir(settings.db_path.rsplit("/", 1)[0])   # no .env of the worktree
    entry.main([])
    app = captured.pop("app")
    captured.update(log_level="warning")
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))   # bound here and handed over: no race for the port
    captured["port"] = listening.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, **captured))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        refused = 0
        with httpx.Client(base_url=f"http://127.0.0.1:{captured['port']}",
                          headers={"Origin": "https://wayline.example"}) as http:
            for i in range(25):
                r = http.post("/api/auth/signin", json={"username": f"u{i}", "password": "x"},
                              headers={"X-Forwarded-For": f"203.0.113.{i}", "Host": "wayline.example"})
                refused += r.status_code == 429
        assert refused == 5
    finally:
        server.should_exit = True
        thread.join(timeout=15)


def test_refusals_last_until_failures_leave_the_window_and_memory_stays_bounded():
    import asyncio

    now = [1000.0]
    limiter = SignInLimiter(clock=lambda: now[0], sleep=RecordedSleep(), max_keys=50)
    for _ in range(100):
        limiter.failed("alice", "198.51.100.1")
        now[0] += 1
    with pytest.raises(Exception) as refused:
        asyncio.run(limiter.admit("alice", "198.51.100.1"))
    assert refused.value.status == 429
    # The 5 most recent failures keep the pair refused; the oldest of them (at 1095)
    # leaves the window at 1995, 895 s from now: rounded up.
    assert refused.value.extra["retryAfterS"] == 896
    now[0] += 900
    asyncio.run(limiter.admit("alice", "198.51.100.1"))   # forgiven
    for i in range(200):
        limiter.failed(f"user{i}", f"203.0.113.{i % 250}")
    assert len(limiter._failures) <= 50 + 3


def test_fly_toml_trusts_flys_proxy_so_clients_keep_their_own_address():
    """Issue 22, item 11: fly.toml left WAYLINE_TRUSTED_PROXIES unset, so behind
    Fly every client shared the proxy's address (21 failed sign-ins by anyone
    locked a victim out)."""
    import tomllib
    from pathlib import Path

    from app.settings import Settings

    fly = tomllib.loads((Path(__file__).resolve().parents[1] / "fly.toml").read_text())
    env = {**fly["env"], "FLY_APP_NAME": "wayline"}
    settings = Settings.from_env(env=env, dotenv=None)
    scope = {"client": ("172.19.4.10", 5000), "headers": [(b"fly-client-ip", b"203.0.113.9")]}
    assert client_address(scope, settings.trusted_proxies, fly=settings.fly_client_ip) == "203.0.113.9"
    # Anyone outside Fly's private network still cannot name an address.
    scope["client"] = ("198.51.100.1", 5000)
    assert client_address(scope, settings.trusted_proxies, fly=settings.fly_client_ip) == "198.51.100.1"
