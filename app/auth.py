"""Passwords, sessions, sign-in rate limits and the same-origin rule."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import re
import secrets
import time
from collections import deque
from datetime import datetime, timedelta, timezone
from urllib.parse import urlsplit

from .db import Database
from .ids import iso, new_id, utcnow
from .errors import Busy, Conflict, Invalid, NotSignedIn
from .settings import PASSWORD_HASH_N

COOKIE = "wayline_session"
SESSION_DAYS = 30
USERNAME_RE = re.compile(r"^[a-z0-9_.-]{3,32}$")

# scrypt's other parameters; the cost n is Settings.password_hash_n and is
# stored in each hash, so hashes made at another cost still verify.
SCRYPT = {"r": 8, "p": 1, "maxmem": 64 * 1024 * 1024, "dklen": 32}


def hash_password(password: str, n: int = PASSWORD_HASH_N) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=n, **SCRYPT)
    return f"scrypt${n}${salt.hex()}${digest.hex()}"


def verify_password(password: str, stored: str) -> bool:
    try:
        scheme, n, salt, digest = stored.split("$")
        candidate = hashlib.scrypt(password.encode(), salt=bytes.fromhex(salt), n=int(n), **SCRYPT)
    except (ValueError, TypeError):
        return False
    return scheme == "scrypt" and hmac.compare_digest(candidate.hex(), digest)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class SignInLimiter:
    """Failed sign-ins per username and per client address, in a sliding window.

    One process serves the app, so memory is the right place; a restart
    forgives, which is acceptable for a rate limit."""

    def __init__(self, attempts: int = 10, window_s: float = 900, clock=time.monotonic):
        self.attempts, self.window_s, self.clock = attempts, window_s, clock
        self._failures: dict[str, deque[float]] = {}

    def _recent(self, key: str) -> deque[float]:
        now = self.clock()
        q = self._failures.setdefault(key, deque())
        while q and q[0] <= now - self.window_s:
            q.popleft()
        return q

    def check(self, username: str, address: str) -> None:
        for key in (f"u:{username}", f"a:{address}"):
            if len(self._recent(key)) >= self.attempts:
                raise Busy("Too many sign-in attempts. Try again in a few minutes.", code="rate_limited")

    def failed(self, username: str, address: str) -> None:
        for key in (f"u:{username}", f"a:{address}"):
            self._recent(key).append(self.clock())

    def succeeded(self, username: str) -> None:
        self._failures.pop(f"u:{username}", None)


async def create_user(db: Database, username: str, password: str, display_name: str | None, *, hash_n: int) -> dict:
    if not USERNAME_RE.match(username):
        raise Invalid("Username must be 3-32 characters of a-z, 0-9, _ . -", field="username")
    if len(password) < 8:
        raise Invalid("Password must be at least 8 characters", field="password")
    password_hash = await asyncio.to_thread(hash_password, password, hash_n)
    user = {"id": new_id(), "username": username, "displayName": (display_name or username).strip()[:64] or username}
    async with db.write() as conn:
        taken = await conn.execute_fetchall("SELECT 1 FROM users WHERE username = ?", (username,))
        if taken:
            raise Conflict("That username is taken", code="username_taken", field="username")
        await conn.execute(
            "INSERT INTO users (id, username, display_name, password_hash, created_at) VALUES (?, ?, ?, ?, ?)",
            (user["id"], username, user["displayName"], password_hash, utcnow()),
        )
    return user


async def authenticate(db: Database, username: str, password: str, *, hash_n: int) -> dict | None:
    row = await db.fetchone(
        "SELECT id, username, display_name, password_hash FROM users WHERE username = ?", (username,)
    )
    if row is None:
        # Spend the same time as a real check (at the configured cost) so timing does not reveal usernames.
        await asyncio.to_thread(verify_password, password, f"scrypt${hash_n}$00$00")
        return None
    if not await asyncio.to_thread(verify_password, password, row["password_hash"]):
        return None
    return {"id": row["id"], "username": row["username"], "displayName": row["display_name"]}


async def create_session(db: Database, user_id: str) -> str:
    token = secrets.token_urlsafe(32)
    expires = datetime.now(timezone.utc) + timedelta(days=SESSION_DAYS)
    await db.execute_write(
        "INSERT INTO sessions (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
        (token_hash(token), user_id, utcnow(), iso(expires)),
    )
    return token


async def delete_session(db: Database, token: str, cache: SessionCache | None = None) -> None:
    await db.execute_write("DELETE FROM sessions WHERE token_hash = ?", (token_hash(token),))
    if cache is not None:
        cache.drop(token_hash(token))


class SessionCache:
    """Recently seen sessions, so a page's many requests cost one lookup.

    Entries live a short while; sign-out drops its entry at once, and a
    session deleted elsewhere stops working within `ttl_s`."""

    def __init__(self, ttl_s: float = 30.0, clock=time.monotonic, size: int = 4096):
        self.ttl_s, self.clock, self.size = ttl_s, clock, size
        self._entries: dict[str, tuple[float, dict]] = {}

    def get(self, key: str) -> dict | None:
        hit = self._entries.get(key)
        if hit is None or self.clock() - hit[0] > self.ttl_s:
            return None
        return hit[1]

    def put(self, key: str, user: dict) -> None:
        if len(self._entries) >= self.size:
            self._entries.clear()
        self._entries[key] = (self.clock(), user)

    def drop(self, key: str) -> None:
        self._entries.pop(key, None)

    def drop_user(self, user_id: str) -> None:
        for key in [k for k, (_, u) in self._entries.items() if u["id"] == user_id]:
            del self._entries[key]


async def user_for_token(db: Database, token: str | None, cache: SessionCache | None = None) -> dict | None:
    if not token:
        return None
    key = token_hash(token)
    if cache is not None and (user := cache.get(key)) is not None:
        return user
    row = await db.fetchone(
        "SELECT u.id, u.username, u.display_name FROM sessions s JOIN users u ON u.id = s.user_id "
        "WHERE s.token_hash = ? AND s.expires_at > ?",
        (key, utcnow()),
    )
    if row is None:
        return None
    user = {"id": row["id"], "username": row["username"], "displayName": row["display_name"]}
    if cache is not None:
        cache.put(key, user)
    return user


def require_user(user: dict | None) -> dict:
    if user is None:
        raise NotSignedIn("Sign in first")
    return user


def same_origin(headers, host: str) -> bool:
    """True when a state-changing request comes from our own pages (or a non-browser client).

    Browsers send Sec-Fetch-Site; older ones send Origin. A request with
    neither is not from a browser form, so it cannot ride a member's cookie."""
    site = headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return False
    origin = headers.get("origin")
    if origin is not None:
        if origin == "null":
            return False
        return urlsplit(origin).netloc.lower() == host.lower()
    return True
