"""Quotas: how much one address, one account or one trip may take, so that
nobody can fill a small server's disk (a 1 GB volume) for everyone.

The numbers are settings (app/settings.py, the README table, .env.example),
with defaults that suit a small group's server:

| quota | setting | default | refusal |
|---|---|---|---|
| sign-ups per address per hour | `WAYLINE_SIGNUPS_PER_ADDRESS_HOUR` | 10 | 429 |
| trips per account (that it created and still exist) | `WAYLINE_TRIPS_PER_USER` | 50 | 429 |
| days per trip | `WAYLINE_DAYS_PER_TRIP` | 30 | 413 |
| upload bytes per trip | `WAYLINE_UPLOAD_MB_PER_TRIP` | 200 MiB | 413 |
| upload bytes per account (all its trips) | `WAYLINE_UPLOAD_MB_PER_USER` | 100 MiB | 413 |
| expenses per trip | fixed (app/trips/ops.py `MAX_EXPENSES`) | 1000 | 413 |
| assistants' proposals waiting per member and trip | fixed (assistants/proposals.py) | 20 | 429 |
| planner drafts per account (planner/drafts.py) | fixed `DRAFTS_PER_USER` | 100 | oldest dropped |
| answers kept for an account's Idempotency-Key writes (a day) | `WAYLINE_KEPT_ANSWERS_MB_PER_USER` | 32 MiB | 429 |
| changes per account, a minute / an hour | `WAYLINE_WRITES_PER_USER_MINUTE` / `_HOUR` | 120 / 1,500 | 429 |
| place lookups per account, a minute / an hour | `WAYLINE_PLACE_LOOKUPS_PER_USER_MINUTE` / `_HOUR` | 30 / 300 | 429 |

Counts are 429 (too many), sizes 413 (too large); every refusal is
`quota_exceeded` with a plain message and the quota's name in `quota`.
Counts that live in the database are checked inside the write's own
`BEGIN IMMEDIATE` transaction, so concurrent requests cannot pass one
together. Sign-ups are counted in memory per address (IPv6 per /64, as the
sign-in limits), and an account's changes and place lookups in memory per
account: a restart forgives, as for a rate limit.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from .errors import Busy, TooLarge

MIB = 1024 * 1024


def quota_count(message: str, quota: str, **extra) -> Busy:
    return Busy(message, code="quota_exceeded", quota=quota, **extra)


def quota_size(message: str, quota: str) -> TooLarge:
    return TooLarge(message, code="quota_exceeded", quota=quota)


# -- sign-ups -----------------------------------------------------------------


class SignUpLimiter:
    """New accounts per client address in a sliding hour. `address` is the
    counted address (app/web/client_address.py `counted_address`: an IPv6
    client counts by its /64)."""

    def __init__(self, *, window_s: float = 3600, clock=time.monotonic, max_keys: int = 100_000):
        self.window_s, self.clock, self.max_keys = window_s, clock, max_keys
        self._made: dict[str, deque[float]] = {}

    def _recent(self, key: str) -> deque[float]:
        made = self._made.get(key)
        if made is None:
            return deque()
        while made and made[0] <= self.clock() - self.window_s:
            made.popleft()
        if not made:
            del self._made[key]
        return made

    @contextmanager
    def attempt(self, address: str, per_hour: int) -> Iterator[None]:
        """Counts a sign-up from the moment it is admitted, so requests racing
        in parallel cannot all pass; one that fails (a name taken) is not
        counted. 429 when this address made `per_hour` accounts in the last hour."""
        made = self._recent(address)
        if len(made) >= per_hour:
            wait = max(1, int(made[len(made) - per_hour] + self.window_s - self.clock()) + 1)
            raise quota_count(f"Too many new accounts from your network in the last hour (at most {per_hour}). "
                              "Try again later, or sign in to an account you have.", "signups_per_address_hour",
                              retryAfterS=wait)
        if len(self._made) > self.max_keys:
            self._prune()
        stamp = self.clock()
        self._made.setdefault(address, deque()).append(stamp)
        try:
            yield
        except BaseException:
            mine = self._made.get(address)
            if mine is not None and stamp in mine:
                mine.remove(stamp)
            raise

    def _prune(self) -> None:
        for key in list(self._made):
            self._recent(key)
        if len(self._made) > self.max_keys:   # a flood of distinct addresses: forgive rather than grow
            self._made.clear()


# -- trips and days -----------------------------------------------------------


def check_trip_count(trips_created: int, per_user: int) -> None:
    if trips_created >= per_user:
        raise quota_count(f"You can have at most {per_user} trips. Delete one you no longer need to make "
                          "another.", "trips_per_user")


def check_days(days: int, per_trip: int) -> None:
    if days > per_trip:
        raise quota_size(f"A trip can have at most {per_trip} days.", "days_per_trip")


# -- uploads ------------------------------------------------------------------


def check_upload(size: int, trip_bytes: int, user_bytes: int, *, trip_mb: int, user_mb: int) -> None:
    """`trip_bytes` / `user_bytes`: what the trip and the uploader store already."""
    if trip_bytes + size > trip_mb * MIB:
        raise quota_size(f"This trip has no room for more files (at most {trip_mb} MiB in all).",
                         "upload_bytes_per_trip")
    if user_bytes + size > user_mb * MIB:
        raise quota_size(f"You have used all of your upload space (at most {user_mb} MiB across your trips).",
                         "upload_bytes_per_user")


# -- answers kept for Idempotency-Key writes ----------------------------------
# Each keyed write keeps its whole answer for a day (app/idempotency.py). With
# no bound, one member repeating a cheap write under new keys kept a whole
# trip per request (`?full=1`, a megabyte on a long trip): 320 MB in 15 s. A
# day of the page's offline queue keeps a few hundred answers of a few KB.
KEPT_ROW_BYTES = 128   # a kept key's row besides its key and answer (fingerprint, time, index)


def check_kept_answers(kept_bytes: int, *, kept_mb: int, retry_after_s: int) -> None:
    """`kept_bytes`: what the account's keyed writes of the last day keep already."""
    if kept_bytes >= kept_mb * MIB:
        raise quota_count(f"You have sent too many changes marked to be sent once (Idempotency-Key) today (their "
                          f"answers are kept for a day, at most {kept_mb} MiB). Send this change again later, or "
                          "without the key.", "kept_answers_mb_per_user", retryAfterS=max(1, retry_after_s))


# -- an account's pace of changes and of place lookups -------------------------
# Every change is stored (an op, its timeline line, a comment, a chat
# message): with no bound on how fast, one account sending cheap writes in a
# loop grew the database by megabytes a minute for everyone on the server. A
# person planning, even fast (dragging stops, chatting, a phone sending a
# day's offline changes on reconnect), stays far under these.
#
# Every place lookup a member asks for (a search, places nearby, a place's
# details; from the page or through a connected assistant) may be a paid call
# to Google, or one to OpenStreetMap's volunteer servers, whose usage policy
# asks for at most about one a second. The AI features' lookups are bounded by
# the AI limits already; these were not, so one account (or its assistant, in
# a loop) could spend the operator's Google money without end. A person adds
# a stop with one or two searches, pressed, not typed.


@dataclass(frozen=True)
class PaceWords:
    """What a pace is called in a refusal (`quota`: `<kind>_per_user_minute`
    / `_hour`) and what the refusal says, `{n}` being the limit."""

    kind: str
    too_fast: str
    too_many: str


WRITES = PaceWords("writes",
                   "You are making changes faster than Wayline takes them (at most {n} a minute). Nothing was "
                   "changed: try again in a moment.",
                   "You have made as many changes as Wayline takes in an hour (at most {n}). Nothing was "
                   "changed: try again later.")
PLACE_LOOKUPS = PaceWords("place_lookups",
                          "You are looking places up faster than Wayline can ask for them (at most {n} a minute). "
                          "Try again in a moment.",
                          "You have looked up as many places as Wayline allows in an hour (at most {n}). Try "
                          "again later, or type the place's details yourself.")


class Pace:
    """Requests of one kind per account, in a sliding minute and hour."""

    def __init__(self, words: PaceWords = WRITES, *, clock=time.monotonic, max_keys: int = 100_000):
        self.words, self.clock, self.max_keys = words, clock, max_keys
        self._minute: dict[str, deque[float]] = {}
        self._hour: dict[str, deque[float]] = {}

    @staticmethod
    def _within(stamps: deque[float], since: float) -> deque[float]:
        while stamps and stamps[0] <= since:
            stamps.popleft()
        return stamps

    def take(self, user_id: str, per_minute: int, per_hour: int) -> None:
        """Counts one request of `user_id`, or raises 429 when the account made
        `per_minute` in the last minute or `per_hour` in the last hour."""
        now = self.clock()
        minute = self._within(self._minute.setdefault(user_id, deque()), now - 60)
        hour = self._within(self._hour.setdefault(user_id, deque()), now - 3600)
        if len(minute) >= per_minute:
            wait = max(1, int(minute[len(minute) - per_minute] + 60 - now) + 1)
            raise quota_count(self.words.too_fast.format(n=per_minute), f"{self.words.kind}_per_user_minute",
                              retryAfterS=wait)
        if len(hour) >= per_hour:
            wait = max(1, int(hour[len(hour) - per_hour] + 3600 - now) + 1)
            raise quota_count(self.words.too_many.format(n=per_hour), f"{self.words.kind}_per_user_hour",
                              retryAfterS=wait)
        if len(self._hour) > self.max_keys:
            self._prune(now)
        minute.append(now)
        hour.append(now)

    def _prune(self, now: float) -> None:
        for user_id in list(self._hour):
            if not self._within(self._hour[user_id], now - 3600):
                del self._hour[user_id]
                self._minute.pop(user_id, None)
