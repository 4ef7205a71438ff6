"""AI limits, reservations, leases, usage records and cost.

One shared daily budget for everyone, of which each member may use a fair
share (`WAYLINE_AI_USER_DAILY_SHARE`, 0.25 by default, of the calls and of
the tokens), so one account cannot switch AI off for everyone. Every model
call goes through `reserve()` BEFORE the provider is contacted (the gateway,
`app/ai.py`, does it for every call), charged to the member whose action
caused it (background work included: app/agent/ passes that member's id):

- one `BEGIN IMMEDIATE` transaction (the app's serialized writer) closes
  running rows whose lease has ended as `abandoned`, counts today's calls,
  today's tokens (input + output, plus the reservations of running calls),
  the same two for the member, and the calls still running, then refuses or
  inserts a `running` row that reserves the call's max output tokens. `BEGIN
  IMMEDIATE` takes SQLite's write lock first, so two requests (or two
  processes sharing the file) can never both take the last slot, and the
  counts survive restarts;
- over the daily call or token limit: 503 `ai_limit`; over the member's
  share: 429 `ai_user_limit`; both with `resetsAt` (the next 00:00 UTC,
  `next_reset`) and `retryAfterS`; too many running: 429 `busy` with a short
  `retryAfterS` (BUSY_RETRY_S). Every `retryAfterS` is also sent as the
  `Retry-After` header (app/errors.py). The provider is never called
  for a refused request, and background work skips it silently;
- `finish()` replaces the reservation with the provider's real counts (or keeps
  it when they are unknown, e.g. after a timeout), with duration and cost;
- each row carries the boot id of the process that reserved it. One process
  owns the database, so at start `abandon_earlier_boots()` closes every running
  row of another boot as `abandoned`: a restart after a crash frees the slots
  at once instead of after the lease.

Only the gateway uses the guard; features call `svc.ai.structured(...)` /
`svc.ai.stream(...)`, which wrap each call in it:

    async with usage.guard(user_id=..., trip_id=..., feature="copilot", max_output_tokens=2500) as g:
        ... call the provider with g.max_output_tokens ...
        g.record(input_tokens, output_tokens)

Logs are one JSON object per line on stdout (logger `wayline.ai`):
AI_REQUEST_COMPLETED, AI_REQUEST_FAILED, AI_LIMIT_REACHED, with ids (the
agent's turn id and the provider's response id among them), feature, model,
tokens, cost and duration; never the key, a prompt or an answer.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import secrets
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, UTC
from typing import Any
from collections.abc import Callable

from .db import Database, Tx
from .errors import Busy, Unavailable
from .ids import iso
from .settings import Settings

FEATURES = ("copilot", "plan_day", "agent_chat", "agent_eval", "agent_ambient")
LIMIT_MESSAGE = "AI planning is temporarily unavailable because the usage limit has been reached"
SHARE_MESSAGE = "You have used your share of today's AI help. It renews at midnight UTC, in {wait}."
BUSY_MESSAGE = "AI is busy with other requests right now. Please try again in a moment."
# "A moment", for `busy`: slots free as running calls end, which nothing can
# predict (seconds for most, the timeout at worst), so a short fixed hint
# rather than a promise; a client that retries then and is refused waits again.
BUSY_RETRY_S = 5
LEASE_GRACE_S = 30
HISTORY_DAYS = 30

# What a row counts against the daily token limit: real tokens, plus the
# reservation while it stands (running rows, and rows whose real usage is unknown).
COUNTED_TOKENS = "input_tokens + output_tokens + reserved_output_tokens"


# -- logs ---------------------------------------------------------------------


class _StdoutLines(logging.Handler):
    """Writes each record's message as one line to the *current* sys.stdout."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stdout.write(record.getMessage() + "\n")
            sys.stdout.flush()
        except Exception:  # a log line must never break a request
            self.handleError(record)


log = logging.getLogger("wayline.ai")


def install_log_handler() -> None:
    """Send AI events to stdout as JSON lines; called when an app starts (idempotent)."""
    if not any(isinstance(h, _StdoutLines) for h in log.handlers):
        log.addHandler(_StdoutLines())
        if log.level == logging.NOTSET:  # keep a level someone chose (a benchmark quietens it)
            log.setLevel(logging.INFO)
        log.propagate = False


def log_event(event: str, **fields: Any) -> None:
    """One compact JSON object per line, so `grep '"event":"AI_'` finds them."""
    log.info(json.dumps({"event": event, **fields}, separators=(",", ":"), default=str))


# -- time ---------------------------------------------------------------------


def _moment(clock_value: Any) -> datetime:
    if isinstance(clock_value, datetime):
        return clock_value.astimezone(UTC)
    return datetime.fromtimestamp(float(clock_value), UTC)


def next_reset(now: datetime) -> tuple[datetime, int]:
    """When today's counts end (a day is the UTC date of `now`, the `day`
    column), and the whole seconds until then, rounded up so a client that
    waits that long is never early. The one rule every "when does it renew" uses."""
    resets = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return resets, max(1, math.ceil((resets - now).total_seconds()))


# -- cost ---------------------------------------------------------------------


def estimate_cost(settings: Settings, input_tokens: int, output_tokens: int) -> float | None:
    """USD, or None unless both prices are configured (never guessed).
    Cached input is counted at the full input price, so the estimate errs high."""
    price_in, price_out = settings.ai_price_input_per_mtok, settings.ai_price_output_per_mtok
    if price_in is None or price_out is None:
        return None
    return round((input_tokens * price_in + output_tokens * price_out) / 1_000_000, 6)


# -- reservations -------------------------------------------------------------


@dataclass(frozen=True)
class Reservation:
    id: str
    user_id: str | None
    trip_id: str | None
    feature: str
    model: str
    reserved_output_tokens: int
    started_at: datetime
    lease_until: datetime
    turn_id: str | None = None     # the member message that started an agent turn


class UsageGuard:
    """What `AIUsage.guard()` yields: the reservation, the output-token cap to
    pass to the model, and `record()` for the provider's real counts."""

    def __init__(self, usage: AIUsage, reservation: Reservation):
        self._usage = usage
        self.reservation = reservation
        self.max_output_tokens = reservation.reserved_output_tokens
        self.model = reservation.model
        self.input_tokens: int | None = None
        self.output_tokens: int | None = None
        self.failure: str | None = None
        self.response_id: str | None = None   # the provider's id for the answer, when it gave one

    def record(self, input_tokens: int, output_tokens: int) -> None:
        """The provider's real counts for this call (replace the reservation)."""
        self.input_tokens, self.output_tokens = int(input_tokens), int(output_tokens)

    def fail(self, code: str = "failed") -> None:
        """Mark the call failed without raising (e.g. a stream's error event)."""
        self.failure = code

    async def _close(self, exc: BaseException | None) -> None:
        if exc is None and self.failure is None:
            status, error = "completed", None
        else:
            status = "failed"
            error = self.failure or _error_code(exc)
            if self.input_tokens is None and exc is not None:
                spent = getattr(exc, "usage", None)  # AIError carries what the provider reported
                if spent is not None:
                    self.record(getattr(spent, "input_tokens", 0), getattr(spent, "output_tokens", 0))
        finishing = self._usage.finish(self.reservation, status, self.input_tokens, self.output_tokens,
                                       error=error, response_id=self.response_id)
        # Shielded so a cancelled request still closes its row (else it holds
        # a slot until the lease ends).
        try:
            await asyncio.shield(finishing)
        except Exception:
            if exc is None:
                raise
            # Keep the body's own error; the row is closed later by its lease.
            log_event("AI_REQUEST_FAILED", id=self.reservation.id, feature=self.reservation.feature,
                      model=self.reservation.model, status="running", error="record_not_closed")


def _error_code(exc: BaseException | None) -> str:
    if exc is None:
        return "failed"
    if isinstance(exc, asyncio.CancelledError):
        return "cancelled"
    if isinstance(exc, GeneratorExit):
        return "abandoned"  # the consumer of a streamed round stopped reading
    code = getattr(exc, "code", None)
    return code if isinstance(code, str) else type(exc).__name__


class AIUsage:
    """Limits and usage records on the app's Database.

    `clock()` returns the current time (epoch seconds or an aware datetime);
    the UTC day comes from it, so tests can roll the day over. `boot_id`
    names this process on its rows (a fresh one per app by default)."""

    def __init__(self, db: Database, settings: Settings, clock: Callable[[], Any] | None = None,
                 boot_id: str | None = None):
        install_log_handler()
        self.db = db
        self.settings = settings
        self.clock = clock or time.time
        self.boot_id = boot_id or secrets.token_hex(8)

    def now(self) -> datetime:
        return _moment(self.clock())

    def limits(self) -> dict[str, Any]:
        s = self.settings
        calls, tokens = self.user_share()
        return {"dailyCalls": s.ai_daily_limit, "concurrent": s.ai_concurrent, "dailyTokens": s.ai_daily_tokens,
                "maxOutputTokens": s.ai_max_output_tokens, "timeoutMs": s.ai_timeout_ms,
                "userShare": s.ai_user_daily_share, "userDailyCalls": calls, "userDailyTokens": tokens}

    def user_share(self) -> tuple[int, int]:
        """One member's calls and tokens per UTC day: the share of each daily limit (at least one call)."""
        s = self.settings
        return (max(1, int(s.ai_daily_limit * s.ai_user_daily_share)),
                max(1, int(s.ai_daily_tokens * s.ai_user_daily_share)))

    def share_refusal(self, now: datetime) -> Busy:
        """429 `ai_user_limit`: the member's share is spent until the next 00:00 UTC."""
        resets, wait_s = next_reset(now)
        hours, minutes = divmod(-(-wait_s // 60), 60)
        wait = f"{hours} h {minutes} min" if hours else f"{minutes} min"
        return Busy(SHARE_MESSAGE.format(wait=wait), code="ai_user_limit", resetsAt=iso(resets), retryAfterS=wait_s)

    def limit_refusal(self, now: datetime) -> Unavailable:
        """503 `ai_limit`: everyone's budget is spent until the next 00:00 UTC.
        The message is the spec's, word for word; when AI comes back is data
        (`resetsAt`, `retryAfterS`, and the Retry-After header from it), which
        the page words in the member's own time zone."""
        resets, wait_s = next_reset(now)
        return Unavailable(LIMIT_MESSAGE, code="ai_limit", resetsAt=iso(resets), retryAfterS=wait_s)

    async def check_share(self, user_id: str, trip_id: str | None, feature: str, *, everyone: bool = False,
                          max_output_tokens: int | None = None) -> None:
        """429 when the member's share of today is already spent: an explicit ask
        can say so before anything starts (each call's reservation still decides,
        and reports the app-wide limit first, as here). `everyone`: the app-wide
        limit is said here too (503), for an ask that would spend something else
        first (Optimize's place searches, billed by Google) on a call that cannot run,
        and so are the concurrent calls (429 busy) when every slot is taken.
        `max_output_tokens`: the size the call will reserve, so that a share with
        less than that left is refused here, as the reservation would refuse it,
        and not after the ask was stored."""
        now, s = self.now(), self.settings
        reserve_tokens = 0 if max_output_tokens is None else self.output_cap(max_output_tokens)
        row = await self.db.fetchone(
            f"SELECT COUNT(*), COALESCE(SUM({COUNTED_TOKENS}), 0), "
            f"COALESCE(SUM(user_id = ?), 0), COALESCE(SUM(CASE WHEN user_id = ? THEN {COUNTED_TOKENS} END), 0) "
            f"FROM ai_usage WHERE day = ?", (user_id, user_id, now.strftime("%Y-%m-%d")))
        calls, tokens, user_calls, user_tokens = row if row is not None else (0, 0, 0, 0)
        if calls >= s.ai_daily_limit or tokens + max(1, reserve_tokens) > s.ai_daily_tokens:
            if not everyone:
                return   # everyone's budget is spent: the call itself says so (503 ai_limit)
            log_event("AI_LIMIT_REACHED", limit="daily_calls" if calls >= s.ai_daily_limit else "daily_tokens",
                      userId=user_id, tripId=trip_id, feature=feature, callsToday=calls, tokensToday=tokens,
                      limits=self.limits())
            raise self.limit_refusal(now)
        share_calls, share_tokens = self.user_share()
        if user_calls >= share_calls or user_tokens + max(1, reserve_tokens) > share_tokens:
            log_event("AI_LIMIT_REACHED", limit="user_calls" if user_calls >= share_calls else "user_tokens",
                      userId=user_id, tripId=trip_id, feature=feature, userCallsToday=user_calls,
                      userTokensToday=user_tokens, limits=self.limits())
            raise self.share_refusal(now)
        if everyone:
            running = await self.db.fetchval(
                "SELECT COUNT(*) FROM ai_usage WHERE status = 'running' AND lease_until >= ?", (iso(now),))
            if running >= s.ai_concurrent:
                log_event("AI_LIMIT_REACHED", limit="concurrent", userId=user_id, tripId=trip_id, feature=feature,
                          running=running, limits=self.limits())
                raise Busy(BUSY_MESSAGE, code="busy", retryAfterS=BUSY_RETRY_S)

    def output_cap(self, requested: int | None) -> int:
        """A feature may ask for fewer output tokens than the cap, never more."""
        cap = self.settings.ai_max_output_tokens
        return cap if requested is None else max(1, min(int(requested), cap))

    def guard(self, *, user_id: str | None, trip_id: str | None, feature: str,
              max_output_tokens: int | None = None, model: str | None = None,
              turn_id: str | None = None) -> _GuardContext:
        """`async with usage.guard(...) as g:` reserve, run, finish (see module doc)."""
        return _GuardContext(self, user_id, trip_id, feature, max_output_tokens, model, turn_id)

    async def reserve(self, user_id: str | None, trip_id: str | None, feature: str, model: str | None = None,
                      max_output_tokens: int | None = None, turn_id: str | None = None) -> Reservation:
        """Insert a running row, or raise Unavailable (503 ai_limit) / Busy (429)."""
        if feature not in FEATURES:
            raise ValueError(f"unknown AI feature {feature!r}")
        s = self.settings
        model = model or s.openai_model
        reserve_tokens = self.output_cap(max_output_tokens)
        now = self.now()
        now_iso, day = iso(now), now.strftime("%Y-%m-%d")
        lease_until = now + timedelta(milliseconds=s.ai_timeout_ms, seconds=LEASE_GRACE_S)
        reservation = Reservation(secrets.token_hex(8), user_id, trip_id, feature, model, reserve_tokens,
                                  now, lease_until, turn_id)

        def reserve(tx: Tx) -> tuple[list[Any], str | None, tuple[int, int, int, int, int]]:
            abandoned = tx.fetchall(
                "UPDATE ai_usage SET status = 'abandoned', finished_at = lease_until "
                "WHERE status = 'running' AND lease_until < ? "
                "RETURNING id, user_id, trip_id, feature, model, reserved_output_tokens", (now_iso,))
            row = tx.fetchall(
                f"SELECT (SELECT COUNT(*) FROM ai_usage WHERE day = ?), "
                f"(SELECT COALESCE(SUM({COUNTED_TOKENS}), 0) FROM ai_usage WHERE day = ?), "
                f"(SELECT COUNT(*) FROM ai_usage WHERE status = 'running'), "
                f"(SELECT COUNT(*) FROM ai_usage WHERE day = ? AND user_id = ?), "
                f"(SELECT COALESCE(SUM({COUNTED_TOKENS}), 0) FROM ai_usage WHERE day = ? AND user_id = ?)",
                (day, day, day, user_id, day, user_id))[0]
            counts = (row[0], row[1], row[2], row[3], row[4])
            calls, tokens, running, user_calls, user_tokens = counts
            share_calls, share_tokens = self.user_share()
            refused: str | None = None
            if calls >= s.ai_daily_limit:
                refused = "daily_calls"
            elif tokens + reserve_tokens > s.ai_daily_tokens:
                refused = "daily_tokens"
            elif user_id is not None and user_calls >= share_calls:
                refused = "user_calls"
            elif user_id is not None and user_tokens + reserve_tokens > share_tokens:
                refused = "user_tokens"
            elif running >= s.ai_concurrent:
                refused = "concurrent"
            else:
                tx.execute(
                    "INSERT INTO ai_usage (id, day, started_at, lease_until, user_id, trip_id, feature, model, "
                    "status, reserved_output_tokens, boot_id, turn_id) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?)",
                    (reservation.id, day, now_iso, iso(lease_until), user_id, trip_id, feature, model,
                     reserve_tokens, self.boot_id, turn_id))
            return abandoned, refused, counts

        abandoned, refused, (calls, tokens, running, user_calls, user_tokens) = await self.db.write(reserve)
        # Logged after the commit: the abandoned rows are closed either way.
        _log_abandoned(abandoned, "lease_expired")
        if refused is not None:
            log_event("AI_LIMIT_REACHED", limit=refused, userId=user_id, tripId=trip_id, turnId=turn_id,
                      feature=feature, model=model, callsToday=calls, tokensToday=tokens, running=running,
                      userCallsToday=user_calls, userTokensToday=user_tokens, limits=self.limits())
            if refused == "concurrent":
                raise Busy(BUSY_MESSAGE, code="busy", retryAfterS=BUSY_RETRY_S)
            if refused in ("user_calls", "user_tokens"):
                raise self.share_refusal(now)
            raise self.limit_refusal(now)
        return reservation

    async def abandon_earlier_boots(self) -> int:
        """Close every running row of another boot (an earlier process, which
        can no longer be calling) as `abandoned`; called once at start. Their
        reservations stay in the day's token count, as after a lease ends.
        Returns how many were closed."""
        now = iso(self.now())
        abandoned = await self.db.write(lambda tx: tx.fetchall(
            "UPDATE ai_usage SET status = 'abandoned', finished_at = ? "
            "WHERE status = 'running' AND boot_id IS NOT ? "
            "RETURNING id, user_id, trip_id, feature, model, reserved_output_tokens", (now, self.boot_id)))
        _log_abandoned(abandoned, "earlier_process")
        return len(abandoned)

    async def finish(self, reservation: Reservation, status: str, input_tokens: int | None = None,
                     output_tokens: int | None = None, *, error: str | None = None,
                     response_id: str | None = None) -> dict[str, Any]:
        """Close the row: real counts replace the reservation. With no counts
        (None, None) the reservation stays counted, since the provider may have
        worked on the call (a timeout). A row already closed as abandoned is
        corrected with the real outcome."""
        if status not in ("completed", "failed"):
            raise ValueError(f"finish status must be completed or failed, not {status!r}")
        now = self.now()
        duration_ms = max(0, round((now - reservation.started_at).total_seconds() * 1000))
        if input_tokens is None and output_tokens is None:
            tokens_in, tokens_out, reserved = 0, 0, reservation.reserved_output_tokens
        else:
            tokens_in, tokens_out, reserved = int(input_tokens or 0), int(output_tokens or 0), 0
        cost = estimate_cost(self.settings, tokens_in, tokens_out + reserved)
        await self.db.write(lambda tx: tx.execute(
            "UPDATE ai_usage SET status = ?, finished_at = ?, input_tokens = ?, output_tokens = ?, "
            "reserved_output_tokens = ?, cost_usd = ?, duration_ms = ?, response_id = ? WHERE id = ?",
            (status, iso(now), tokens_in, tokens_out, reserved, cost, duration_ms, response_id, reservation.id)))
        record = {"id": reservation.id, "userId": reservation.user_id, "tripId": reservation.trip_id,
                  "turnId": reservation.turn_id, "responseId": response_id,
                  "feature": reservation.feature, "model": reservation.model, "status": status,
                  "inputTokens": tokens_in, "outputTokens": tokens_out, "reservedOutputTokens": reserved,
                  "costUsd": cost, "durationMs": duration_ms}
        if status == "completed":
            log_event("AI_REQUEST_COMPLETED", **record)
        else:
            log_event("AI_REQUEST_FAILED", **record, error=error or "failed")
        return record

    # -- admin views -----------------------------------------------------------

    async def today_summary(self) -> dict[str, Any]:
        """Today's totals (UTC `date`). `reservedOutputTokens` is what running
        (or unknown-outcome) calls still hold against the token limit."""
        now = self.now()
        row = await self.db.fetchone(
            "SELECT COUNT(*), COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0), SUM(cost_usd), "
            "COALESCE(SUM(reserved_output_tokens), 0) FROM ai_usage WHERE day = ?", (now.strftime("%Y-%m-%d"),))
        running = await self.db.fetchval(
            "SELECT COUNT(*) FROM ai_usage WHERE status = 'running' AND lease_until >= ?", (iso(now),))
        assert row is not None   # an aggregate always has its one row
        return {"date": now.strftime("%Y-%m-%d"), "calls": row[0], "inputTokens": row[1], "outputTokens": row[2],
                "costUsd": None if row[3] is None else round(row[3], 6), "running": running,
                "reservedOutputTokens": row[4]}

    async def members_today(self, limit: int = 50) -> list[dict[str, Any]]:
        """Today's calls and tokens per member (their share's use), most calls first.
        Work charged to no one (none today) is left out; a deleted account shows as such."""
        rows = await self.db.fetchall(
            f"SELECT a.user_id, u.display_name, u.username, COUNT(*), COALESCE(SUM({COUNTED_TOKENS}), 0) "
            f"FROM ai_usage a LEFT JOIN users u ON u.id = a.user_id WHERE a.day = ? AND a.user_id IS NOT NULL "
            f"GROUP BY a.user_id ORDER BY COUNT(*) DESC, a.user_id LIMIT ?", (self.now().strftime("%Y-%m-%d"), limit))
        return [{"userId": r[0], "name": r[1] if r[2] and ":" not in r[2] else "Deleted member",
                 "username": r[2] if r[2] and ":" not in r[2] else None, "calls": r[3], "tokens": r[4]}
                for r in rows]

    async def last_30_days(self) -> list[dict[str, Any]]:
        """Calls, tokens and cost per UTC day, feature and model; newest first."""
        now = self.now()
        first = (now - timedelta(days=HISTORY_DAYS - 1)).strftime("%Y-%m-%d")
        rows = await self.db.fetchall(
            "SELECT day, feature, model, COUNT(*), COALESCE(SUM(input_tokens), 0), "
            "COALESCE(SUM(output_tokens), 0), SUM(cost_usd) FROM ai_usage WHERE day >= ? "
            "GROUP BY day, feature, model ORDER BY day DESC, feature, model", (first,))
        return [{"date": r[0], "feature": r[1], "model": r[2], "calls": r[3], "inputTokens": r[4],
                 "outputTokens": r[5], "costUsd": None if r[6] is None else round(r[6], 6)} for r in rows]


def _log_abandoned(rows, error: str) -> None:
    for gone in rows:
        log_event("AI_REQUEST_FAILED", id=gone[0], userId=gone[1], tripId=gone[2], feature=gone[3],
                  model=gone[4], status="abandoned", error=error, inputTokens=None,
                  outputTokens=None, reservedOutputTokens=gone[5], costUsd=None, durationMs=None)


# Closings of rows whose caller was cancelled while reserving, kept until done
# (the event loop holds only weak references to tasks).
_CLOSING: set[asyncio.Future[None]] = set()


class _GuardContext:
    """Reserves on enter (so a refused call never runs its body) and finishes
    on exit: `completed`, or `failed` when the body raised or called g.fail()."""

    def __init__(self, usage: AIUsage, user_id, trip_id, feature, max_output_tokens, model, turn_id):
        self._usage = usage
        self._args = (user_id, trip_id, feature, model, max_output_tokens, turn_id)
        self._guard: UsageGuard | None = None

    async def __aenter__(self) -> UsageGuard:
        # Shielded: the writer commits the running row whatever happens to the
        # caller, so a request cancelled while reserving (the member left) would
        # hold one of the concurrent slots until its lease ran out. The row is
        # closed as cancelled instead, once it is written.
        reserving = asyncio.ensure_future(self._usage.reserve(*self._args))
        try:
            reservation = await asyncio.shield(reserving)
        except asyncio.CancelledError:
            closing = asyncio.ensure_future(self._close_cancelled(reserving))
            _CLOSING.add(closing)
            closing.add_done_callback(_CLOSING.discard)
            raise
        self._guard = UsageGuard(self._usage, reservation)
        return self._guard

    async def _close_cancelled(self, reserving: asyncio.Future[Reservation]) -> None:
        try:
            reservation = await reserving
        except Exception:
            return   # refused or failed: no row was left running
        # Nothing was sent to the provider: the reservation is given back.
        await self._usage.finish(reservation, "failed", 0, 0, error="cancelled")

    async def __aexit__(self, exc_type, exc, tb) -> None:
        assert self._guard is not None
        await self._guard._close(exc)
