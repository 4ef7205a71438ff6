"""Idempotency keys: a write sent again with the same key changes nothing
and gets the first answer again (the IETF httpapi draft's Idempotency-Key).

The page's offline queue (public/offline/outbox.js) sends every write it
keeps with a key of its own, so a write whose answer was lost on the way
(the connection dropped, the page closed) can be sent again safely.

The first answer is kept per (user, key) for `KEEP_FOR`. A repeat with a
different method, path or body is refused (422), never answered with
another request's answer. Repeats that arrive while the first request still
runs wait for its answer: this process owns the database, so the requests in
flight are known here exactly. A key whose row has no answer and no request
in flight belonged to a process that stopped mid-request: whether that
write was made is unknown, and the repeat is told so (409) instead of
risking the write twice.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from .db import Database, Tx
from .errors import BadRequest, Conflict, Invalid
from .ids import iso
from .quotas import KEPT_ROW_BYTES, check_kept_answers

KEEP_FOR = timedelta(hours=24)
# The draft's key is a structured-field string: printable ASCII, quoted or not.
_KEY = re.compile(r'^"?([\x20-\x21\x23-\x7e]{1,255})"?$')


@dataclass(frozen=True)
class Answer:
    status: int
    content_type: str
    body: bytes


def parse_key(header: str) -> str:
    match = _KEY.match(header.strip())
    if match is None:
        raise BadRequest("The Idempotency-Key header must be 1 to 255 printable characters.",
                         code="bad_idempotency_key")
    return match.group(1)


def fingerprint(method: str, path: str, query: str, body: bytes) -> str:
    """What makes a repeat the same request: method, path and body."""
    digest = hashlib.sha256(f"{method} {path}?{query}\n".encode())
    digest.update(body)
    return digest.hexdigest()


def _reused() -> Invalid:
    return Invalid("This Idempotency-Key was already used for a different request. Send a new key.",
                   code="idempotency_key_reused")


def _unknown() -> Conflict:
    return Conflict("The first request with this Idempotency-Key did not finish (the server restarted), so it is "
                    "not known whether the change was made. Reload to see the trip as it is.",
                    code="idempotency_unknown")


class IdempotencyKeys:
    """`begin` before running a keyed request, then `finish` with its answer
    or `abandon` when there is no answer worth keeping (a failure on our
    side: a repeat may run again)."""

    def __init__(self, db: Database, *, kept_mb: int = 32):
        self.db = db
        # What one account's keys of the last day may keep (app/quotas.py): past it, a new key is 429.
        self.kept_mb = kept_mb
        # (user, key) -> (fingerprint, the first request's answer: None when abandoned)
        self._running: dict[tuple[str, str], tuple[str, asyncio.Future[Answer | None]]] = {}

    async def begin(self, user_id: str, key: str, print_: str) -> Answer | None:
        """None: this is the first request with the key; run it. An Answer:
        the first request's, to send again. Raises 422 for a key used with
        another request, 409 when the first one's outcome is unknown."""
        slot = (user_id, key)
        while (running := self._running.get(slot)) is not None:
            first_print, first_answer = running
            if first_print != print_:
                raise _reused()
            first = await asyncio.shield(first_answer)
            if first is not None:
                return first
            # The first request ended without an answer to keep: this one may run.
        # Claimed before the first await, so a concurrent repeat waits for this one.
        self._running[slot] = (print_, asyncio.get_running_loop().create_future())
        try:
            row = await self.db.write(lambda tx: _claim(tx, user_id, key, print_, self.kept_mb))
        except BaseException:
            self._release(slot, None)
            raise
        if row is None:
            return None
        stored_print, status, content_type, body = row
        if stored_print != print_:
            self._release(slot, None)
            raise _reused()
        if status is None:
            self._release(slot, None)
            raise _unknown()
        stored = Answer(status, content_type or "application/json", bytes(body or b""))
        self._release(slot, stored)
        return stored

    async def finish(self, user_id: str, key: str, answer: Answer) -> None:
        """Hands the answer to the repeats waiting for it at once, then stores
        it (a queued one-statement transaction: group commit). The key stays
        known in memory until the database holds its answer, so no repeat can
        slip between the two. The caller need not wait for this before
        answering the first request (app/web/idempotent_writes.py does not)."""
        slot = (user_id, key)
        running = self._running.get(slot)
        if running is not None and not running[1].done():
            running[1].set_result(answer)
        try:
            await self.db.write(lambda tx: _keep(tx, user_id, key, answer))
        finally:
            self._release(slot, answer)

    async def abandon(self, user_id: str, key: str) -> None:
        if (running := self._running.get((user_id, key))) is not None and running[1].done():
            return   # answered already (its answer is being stored): nothing to take back
        try:
            await self.db.write(lambda tx: tx.execute(
                "DELETE FROM idempotency_keys WHERE user_id = ? AND key = ? AND status IS NULL", (user_id, key)))
        finally:
            self._release((user_id, key), None)

    def _release(self, slot: tuple[str, str], answer: Answer | None) -> None:
        running = self._running.pop(slot, None)
        if running is not None and not running[1].done():
            running[1].set_result(answer)


def _claim(tx: Tx, user_id: str, key: str, print_: str, kept_mb: int) -> tuple | None:
    """In one transaction: forget expired keys, then the stored row for this
    key, or a new row with no answer yet (None) while the account's keys keep
    less than `kept_mb` (a repeat of a kept key is always answered)."""
    now = datetime.now(UTC)
    tx.execute("DELETE FROM idempotency_keys WHERE created_at < ?", (iso(now - KEEP_FOR),))
    # An hour's bytes go once the whole hour is past KEEP_FOR: kept bytes count up to an hour longer than keys.
    tx.execute("DELETE FROM idempotency_kept_bytes WHERE hour < ?", (_hour(now - KEEP_FOR),))
    row = tx.execute("SELECT fingerprint, status, content_type, body FROM idempotency_keys "
                     "WHERE user_id = ? AND key = ?", (user_id, key)).fetchone()
    if row is not None:
        return tuple(row)
    kept, oldest = tx.execute("SELECT COALESCE(SUM(bytes), 0), MIN(hour) FROM idempotency_kept_bytes "
                              "WHERE user_id = ?", (user_id,)).fetchone()
    if oldest is not None:
        frees_in = datetime.fromisoformat(f"{oldest}:00:00+00:00") + timedelta(hours=1) + KEEP_FOR - now
        check_kept_answers(kept, kept_mb=kept_mb, retry_after_s=int(frees_in.total_seconds()) + 1)
    tx.execute("INSERT INTO idempotency_keys (user_id, key, fingerprint, created_at) VALUES (?, ?, ?, ?)",
               (user_id, key, print_, iso(now)))
    return None


def _keep(tx: Tx, user_id: str, key: str, answer: Answer) -> None:
    """Store the key's answer and count its bytes in this hour's total (what the quota reads)."""
    tx.execute("UPDATE idempotency_keys SET status = ?, content_type = ?, body = ? WHERE user_id = ? AND key = ?",
               (answer.status, answer.content_type, answer.body, user_id, key))
    tx.execute("INSERT INTO idempotency_kept_bytes (user_id, hour, bytes) VALUES (?, ?, ?) "
               "ON CONFLICT (user_id, hour) DO UPDATE SET bytes = bytes + excluded.bytes",
               (user_id, _hour(datetime.now(UTC)), len(answer.body) + len(key) + KEPT_ROW_BYTES))


def _hour(moment: datetime) -> str:
    """The UTC hour of `moment` as idempotency_kept_bytes stores it ('YYYY-MM-DDTHH')."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H")
