"""Passwords, sessions and sign-in rate limits (the same-origin rule: app/web/same_origin.py)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import math
import re
import secrets
import time
import unicodedata
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime, timedelta, UTC

from .db import Database, Tx
from .ids import iso, new_id, utcnow
from .errors import Busy, Conflict, Invalid, NotSignedIn
from .settings import PASSWORD_HASH_N

COOKIE = "wayline_session"
SESSION_DAYS = 30
USERNAME_RE = re.compile(r"^[a-z0-9_.-]{3,32}$")
MIN_PASSWORD = 8

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


class LastUse:
    """When a secret link or token was last used, written at most once a
    minute per token: a calendar app or an assistant may call often, and each
    use need not cost a write."""

    EVERY_S = 60.0

    def __init__(self, clock=time.monotonic, size: int = 4096):
        self.clock, self.size = clock, size
        self._written: dict[str, float] = {}

    def due(self, key: str) -> bool:
        """True (and remembered) when `key`'s last use should be written now."""
        now = self.clock()
        if now - self._written.get(key, -math.inf) < self.EVERY_S:
            return False
        if len(self._written) >= self.size:
            self._written.clear()
        self._written[key] = now
        return True


class SignInLimiter:
    """Failed sign-ins in a sliding window, counted so that the limits stop an
    attacker without locking the account's owner out. `address` is the
    counted address (an IPv6 client's /64, app/web/client_address.py).

    - per (username, address): `pair_limit` failures refuse that address for
      that username (429);
    - per address, across usernames: `address_limit` failures refuse the
      address (429);
    - per username, across addresses: from `slow_after` failures on, every
      attempt on the username waits first, twice as long for every further
      `slow_after` failures (0.5 s, 1 s, 2 s ... at most `slow_max_s`);
    - per username, past `user_cap` failures (the global cap): an address
      that has failed on the username is refused, and the others are let
      through one at a time (each after its wait): an attempt that finds
      one in progress is refused (429, a few seconds). Hundreds of
      addresses guessing in parallel get one guess per wait instead of
      hundreds; the right password from an address with no failures still
      signs in, and at once from an address that signed in to the account
      before (remembered, `known_per_user` of them).

    An attempt counts as a failure from the moment it is admitted until it
    succeeds, so attempts racing in parallel cannot all pass a limit that
    none of them has reached yet. One process serves the app, so memory is
    the right place; a restart forgives, which is acceptable for a rate limit."""

    def __init__(self, *, pair_limit: int = 5, address_limit: int = 20, slow_after: int = 10,
                 slow_base_s: float = 0.5, slow_max_s: float = 8.0, user_cap: int = 20, window_s: float = 900,
                 clock=time.monotonic, sleep=asyncio.sleep, max_keys: int = 100_000, known_per_user: int = 8):
        self.pair_limit, self.address_limit, self.slow_after = pair_limit, address_limit, slow_after
        self.slow_base_s, self.slow_max_s, self.user_cap, self.window_s = slow_base_s, slow_max_s, user_cap, window_s
        self.clock, self.sleep, self.max_keys, self.known_per_user = clock, sleep, max_keys, known_per_user
        # Each count needs only its most recent failures up to where its answer stops changing.
        self._keep = max(pair_limit, address_limit, user_cap, slow_after * 6)
        self._failures: dict[tuple, deque[float]] = {}
        self._checking: set[str] = set()            # usernames past the cap with an attempt in progress
        self._known: dict[str, deque[str]] = {}     # username -> addresses that signed in to it

    def _recent(self, key: tuple) -> deque[float]:
        q = self._failures.get(key)
        if q is None:
            return deque()
        now = self.clock()
        while q and q[0] <= now - self.window_s:
            q.popleft()
        if not q:
            del self._failures[key]
        return q

    def _refuse(self, q: deque[float], limit: int) -> None:
        # Refused until enough failures have left the window to fall below the limit.
        wait = max(1, int(q[len(q) - limit] + self.window_s - self.clock()) + 1)
        raise _too_many(wait)

    def delay_s(self, username: str) -> float:
        failures = len(self._recent(("user", username)))
        if failures < self.slow_after:
            return 0.0
        return min(self.slow_max_s, self.slow_base_s * 2 ** ((failures - self.slow_after) // self.slow_after))

    @asynccontextmanager
    async def attempt(self, username: str, address: str) -> AsyncIterator[SignInAttempt]:
        """`async with limiter.attempt(username, address) as attempt:` check the
        password inside, then `attempt.succeeded()` or `attempt.failed()`; an
        attempt that ends otherwise (an error) is not counted. Refuses (429)
        before anything is checked."""
        for key, limit in ((("pair", username, address), self.pair_limit), (("address", address), self.address_limit)):
            q = self._recent(key)
            if len(q) >= limit:
                self._refuse(q, limit)
        known = address in self._known.get(username, ())
        gated = not known and len(self._recent(("user", username))) >= self.user_cap
        if gated:
            if self._recent(("pair", username, address)):
                self._refuse(self._recent(("user", username)), self.user_cap)
            if username in self._checking:
                raise _too_many(max(1, round(self.delay_s(username))))
            self._checking.add(username)
        delay = 0.0 if known else self.delay_s(username)
        stamp = self._count(username, address)
        attempt = SignInAttempt()
        try:
            if delay:
                await self.sleep(delay)
            yield attempt
        finally:
            if gated:
                self._checking.discard(username)
            if attempt.outcome != "failed":
                self._uncount(username, address, stamp)
            if attempt.outcome == "ok":
                self._succeeded(username, address)

    def _count(self, username: str, address: str) -> float:
        if len(self._failures) > self.max_keys:
            self._prune()
        now = self.clock()
        for key in (("pair", username, address), ("address", address), ("user", username)):
            self._failures.setdefault(key, deque(maxlen=self._keep)).append(now)
        return now

    def _uncount(self, username: str, address: str, stamp: float) -> None:
        for key in (("pair", username, address), ("address", address), ("user", username)):
            q = self._failures.get(key)
            if q is not None and stamp in q:
                q.remove(stamp)

    def _succeeded(self, username: str, address: str) -> None:
        """The address's own count on the username ends, and it is known from now on."""
        self._failures.pop(("pair", username, address), None)
        known = self._known.setdefault(username, deque(maxlen=self.known_per_user))
        if address not in known:
            known.append(address)
        if len(self._known) > self.max_keys:
            self._known.clear()

    def _prune(self) -> None:
        for key in list(self._failures):
            self._recent(key)
        if len(self._failures) > self.max_keys:   # a flood of distinct names: forgive rather than grow
            self._failures.clear()


class SignInAttempt:
    outcome: str | None = None   # "ok" or "failed" once the password was checked

    def succeeded(self) -> None:
        self.outcome = "ok"

    def failed(self) -> None:
        self.outcome = "failed"


def _too_many(wait: int) -> Busy:
    return Busy("Too many sign-in attempts. Try again in a few minutes." if wait > 60 else
                "Too many sign-in attempts right now. Try again in a few seconds.", code="rate_limited",
                retryAfterS=wait)


def clean_display_name(name: str | None) -> str:
    """A display name as others will see it: other members' lists, comments,
    the agent's prompt. Control and format characters go (a right-to-left
    override shows "evil" as "live", zero-width ones make two names look
    alike, a NUL or newline breaks the lines it is shown in); runs of
    spaces become one; composed the usual way (NFC); at most 64 characters."""
    text = unicodedata.normalize("NFC", name or "")
    text = "".join(" " if ch.isspace() else ch for ch in text if ch.isspace() or unicodedata.category(ch)[0] != "C")
    return " ".join(text.split())[:64].strip()


def username_hash(username: str) -> str:
    """How a deleted account's username is remembered (retired_usernames): not the name itself."""
    return hashlib.sha256(username.encode()).hexdigest()


async def create_user(db: Database, username: str, password: str, display_name: str | None, *, hash_n: int,
                      is_admin_name: Callable[[str], bool] = lambda name: False) -> dict:
    """A new account. A username a deleted account had is free again, unless it
    names an admin (`is_admin_name`): the admin view goes by username, and the
    next person to sign up under a deleted admin's name would have had it."""
    if not USERNAME_RE.match(username):
        raise Invalid("Username must be 3-32 characters of a-z, 0-9, _ . -", field="username")
    require_new_password(password, "password")
    password_hash = await asyncio.to_thread(hash_password, password, hash_n)
    user = {"id": new_id(), "username": username, "displayName": clean_display_name(display_name) or username}

    def work(tx: Tx) -> None:
        taken = tx.fetchone("SELECT 1 FROM users WHERE username = ?", (username,)) is not None
        if not taken and is_admin_name(username):   # a deleted admin's name stays retired
            taken = tx.fetchone("SELECT 1 FROM retired_usernames WHERE username_hash = ?",
                                (username_hash(username),)) is not None
        if taken:
            raise Conflict("That username is taken", code="username_taken", field="username")
        tx.execute(
            "INSERT INTO users (id, username, display_name, password_hash, created_at) VALUES (?, ?, ?, ?, ?)",
            (user["id"], username, user["displayName"], password_hash, utcnow()),
        )

    await db.write(work)
    return user


async def authenticate(db: Database, username: str, password: str, *, hash_n: int) -> tuple[dict, str] | None:
    """The user and the password hash the password matched (for create_session); None when it did not."""
    row = await db.fetchone(
        "SELECT id, username, display_name, password_hash FROM users WHERE username = ?", (username,)
    )
    if row is None:
        # Spend the same time as a real check (at the configured cost) so timing does not reveal usernames.
        await asyncio.to_thread(verify_password, password, f"scrypt${hash_n}$00$00")
        return None
    if not await asyncio.to_thread(verify_password, password, row["password_hash"]):
        return None
    user = {"id": row["id"], "username": row["username"], "displayName": row["display_name"]}
    return user, str(row["password_hash"])


async def create_session(db: Database, user_id: str, checked_hash: str | None = None) -> str:
    """A new session. `checked_hash`: the password hash a sign-in's password
    matched. The check ran before this write, and the password may have
    changed in between: a session then would let the old password in after
    the change that was meant to shut it out (someone signing in over and over
    with a stolen password would almost surely straddle it). None: the
    account was just created by this request."""
    token = secrets.token_urlsafe(32)
    expires = datetime.now(UTC) + timedelta(days=SESSION_DAYS)

    def work(tx: Tx) -> None:
        # The insert first: for an account deleted meanwhile the database's
        # trigger answers (401 account_deleted, migrations/0046).
        tx.execute("INSERT INTO sessions (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
                   (token_hash(token), user_id, utcnow(), iso(expires)))
        if checked_hash is not None and tx.fetchval(
                "SELECT password_hash FROM users WHERE id = ?", (user_id,)) != checked_hash:
            raise NotSignedIn("The password was changed while you were signing in. Sign in with the new one.",
                              code="password_changed")   # raised inside the write: the session is rolled back

    await db.write(work)
    return token


async def delete_session(db: Database, token: str, cache: SessionCache | None = None) -> None:
    await db.write(lambda tx: tx.execute("DELETE FROM sessions WHERE token_hash = ?", (token_hash(token),)))
    if cache is not None:
        cache.drop(token_hash(token))


class SessionCache:
    """Recently seen sessions, so a page's many requests cost one lookup.

    Entries live a short while (`ttl_s`) and never past their session's
    expiry; sign-out, sign-out everywhere, a password change and account
    deletion drop theirs at once. A session deleted any other way stops
    working within `ttl_s`."""

    def __init__(self, ttl_s: float = 30.0, clock=time.monotonic, size: int = 4096, now=time.time):
        self.ttl_s, self.clock, self.size, self.now = ttl_s, clock, size, now
        self._entries: dict[str, tuple[float, dict, float]] = {}

    def get(self, key: str) -> dict | None:
        hit = self._entries.get(key)
        if hit is None:
            return None
        seen, user, expires = hit
        if self.clock() - seen > self.ttl_s or self.now() >= expires:
            self._entries.pop(key, None)
            return None
        return user

    def put(self, key: str, user: dict, expires_at: str) -> None:
        if len(self._entries) >= self.size:
            self._entries.clear()
        expires = datetime.fromisoformat(expires_at.replace("Z", "+00:00")).timestamp()
        self._entries[key] = (self.clock(), user, expires)

    def drop(self, key: str) -> None:
        self._entries.pop(key, None)

    def drop_user(self, user_id: str, keep: str | None = None) -> None:
        """Forget every cached session of the user (but `keep`, a token hash)."""
        for key, (_, user, _) in list(self._entries.items()):
            if user["id"] == user_id and key != keep:
                del self._entries[key]


async def user_for_token(db: Database, token: str | None, cache: SessionCache | None = None) -> dict | None:
    if not token:
        return None
    key = token_hash(token)
    if cache is not None and (user := cache.get(key)) is not None:
        return user
    row = await db.fetchone(
        "SELECT u.id, u.username, u.display_name, s.expires_at FROM sessions s JOIN users u ON u.id = s.user_id "
        "WHERE s.token_hash = ? AND s.expires_at > ?",
        (key, utcnow()),
    )
    if row is None:
        return None
    user = {"id": row["id"], "username": row["username"], "displayName": row["display_name"]}
    if cache is not None:
        cache.put(key, user, row["expires_at"])
    return user


async def session_ends(db: Database, token: str) -> float | None:
    """When the session of `token` expires (Unix seconds); None when it is not
    a session any more (signed out, ended, expired)."""
    expires = await db.fetchval("SELECT expires_at FROM sessions WHERE token_hash = ? AND expires_at > ?",
                                (token_hash(token), utcnow()))
    return None if expires is None else datetime.fromisoformat(expires.replace("Z", "+00:00")).timestamp()


def end_standing_secrets(tx: Tx, user_id: str) -> None:
    """End the account's assistant tokens and calendar links. Any session may
    make them and they outlive it: a stolen cookie made one, and it kept
    reading (and proposing) after the owner signed out everywhere or changed
    the password. Both now end them with the sessions."""
    tx.execute("DELETE FROM access_tokens WHERE user_id = ?", (user_id,))
    tx.execute("DELETE FROM calendar_feeds WHERE user_id = ?", (user_id,))


async def end_sessions(db: Database, user_id: str, cache: SessionCache, *, keep_token: str | None = None) -> None:
    """End every session of the user (but the one of `keep_token`), cached ones at once, and
    the account's assistant tokens and calendar links."""
    keep = token_hash(keep_token) if keep_token else ""

    def work(tx: Tx) -> None:
        tx.execute("DELETE FROM sessions WHERE user_id = ? AND token_hash != ?", (user_id, keep))
        end_standing_secrets(tx, user_id)

    await db.write(work)
    cache.drop_user(user_id, keep=keep or None)


async def check_password(db: Database, user_id: str, password: str) -> bool:
    stored = await db.fetchval("SELECT password_hash FROM users WHERE id = ?", (user_id,))
    return stored is not None and await asyncio.to_thread(verify_password, password, stored)


def require_new_password(password: str, field: str) -> None:
    if len(password) < MIN_PASSWORD:
        raise Invalid(f"Password must be at least {MIN_PASSWORD} characters", field=field)


async def change_password(db: Database, user_id: str, new_password: str, cache: SessionCache,
                          keep_token: str | None, *, hash_n: int) -> None:
    """Store the new password and end every other session of the user, its
    assistant tokens and calendar links, in one transaction."""
    require_new_password(new_password, "newPassword")
    password_hash = await asyncio.to_thread(hash_password, new_password, hash_n)
    keep = token_hash(keep_token) if keep_token else ""

    def work(tx: Tx) -> None:
        tx.execute("UPDATE users SET password_hash = ? WHERE id = ?", (password_hash, user_id))
        tx.execute("DELETE FROM sessions WHERE user_id = ? AND token_hash != ?", (user_id, keep))
        end_standing_secrets(tx, user_id)

    await db.write(work)
    cache.drop_user(user_id, keep=keep or None)


async def server_secret(db: Database, configured: str | None) -> str:
    """WAYLINE_SECRET, or one generated on first start and kept in the database."""
    if configured:
        return configured
    existing = await db.fetchval("SELECT value FROM app_settings WHERE key = 'secret'")
    if existing:
        return existing

    def work(tx: Tx) -> str:
        tx.execute("INSERT OR IGNORE INTO app_settings (key, value) VALUES ('secret', ?)",
                   (secrets.token_urlsafe(32),))
        return str(tx.fetchval("SELECT value FROM app_settings WHERE key = 'secret'"))

    return await db.write(work)


def require_user(user: dict | None) -> dict:
    if user is None:
        raise NotSignedIn("Sign in first")
    return user
