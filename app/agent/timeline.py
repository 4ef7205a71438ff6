"""The trip's one shared timeline (`agent_messages`) and the agent's DTOs.

Rows are appended with `app.trips.store.append_message` on a write
transaction (`db.write`), which assigns the next `seq`. Member messages keep the client's
ids (AI SDK UIMessage ids) so a live stream and a later history read name the
same message; appending an id that already exists in this trip is a no-op.

Sources: `chat` (member chat and agent answers), `mention` (a member message
that names @agent), `operation` (written by apply_ops), `threshold`
(proactive suggestions and quiet observations), `stop_comment` (@agent
threads on a stop, shown on the stop, not in the drawer), `assistant` (an
outside assistant's proposal over MCP, app/assistants/proposals.py).
"""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import datetime, UTC
from typing import Any, Protocol
from collections.abc import Callable

from ..db import Tx
from ..ids import iso
from .deps import AgentDeps
from ..trips import store

HISTORY_LIMIT = 200
EVENTS_LIMIT = 200
CLIENT_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class Clocked(Protocol):
    @property
    def clock(self) -> Callable[[], float]: ...


def now_dt(svc: Clocked) -> datetime:
    """Now on the services clock (tests inject one to expire suggestions)."""
    return datetime.fromtimestamp(svc.clock(), UTC)


# -- DTOs ---------------------------------------------------------------------


def message_dto(row: sqlite3.Row | dict) -> dict[str, Any]:
    return {
        "id": row["id"], "seq": row["seq"], "role": row["role"], "parts": json.loads(row["parts_json"]),
        "actorUserId": row["actor_user_id"], "actorName": row["actor_name"], "source": row["source"],
        "stopId": row["stop_id"], "createdAt": row["created_at"],
    }


def suggestion_dto(row: sqlite3.Row | dict) -> dict[str, Any]:
    return {
        "id": row["id"], "messageId": row["message_id"],
        "status": row["status"],
        "severity": row["severity"], "confidence": row["confidence"], "reason": row["reason"],
        "suggestionText": row["suggestion_text"], "patch": json.loads(row["patch_json"]),
        "tripVersion": row["trip_version"], "expiresAt": row["expires_at"], "appliedBy": row["applied_by"],
        "createdAt": row["created_at"], "updatedAt": row["updated_at"],
        # An outside assistant's proposal (app/assistants/): "Claude via Alice" and the
        # review's verdict on the trip after it; null for the agent's own suggestions.
        "proposedAs": row["proposed_as"],
        "review": json.loads(row["review_json"]) if row["review_json"] else None,
    }


MESSAGE_COLUMNS = "id, seq, role, parts_json, actor_user_id, actor_name, source, stop_id, created_at"
SUGGESTION_COLUMNS = ("id, message_id, status, severity, confidence, reason, suggestion_text, patch_json, "
                      "trip_version, expires_at, applied_by, created_at, updated_at, proposed_by, proposed_as, "
                      "review_json")


# -- reads --------------------------------------------------------------------


def active_suggestions(conn: sqlite3.Connection, trip_id: str, user_id: str, now: str) -> list[dict[str, Any]]:
    """Pending, unexpired suggestions this member has not dismissed."""
    rows = conn.execute(
        f"SELECT {SUGGESTION_COLUMNS} FROM agent_suggestions s WHERE s.trip_id = ? AND s.status = 'pending' "
        "AND (s.expires_at IS NULL OR s.expires_at > ?) AND NOT EXISTS (SELECT 1 FROM agent_suggestion_dismissals d "
        "WHERE d.suggestion_id = s.id AND d.user_id = ?) ORDER BY s.created_at, s.id", (trip_id, now, user_id))
    return [suggestion_dto(r) for r in rows]


def _history(conn: sqlite3.Connection, trip_id: str, user_id: str, now: str) -> dict[str, Any]:
    rows = conn.execute(
        f"SELECT {MESSAGE_COLUMNS} FROM (SELECT {MESSAGE_COLUMNS} FROM agent_messages WHERE trip_id = ? "
        "ORDER BY seq DESC LIMIT ?) ORDER BY seq", (trip_id, HISTORY_LIMIT)).fetchall()
    return {"messages": [message_dto(r) for r in rows], "suggestions": active_suggestions(conn, trip_id, user_id, now)}


async def history(svc: AgentDeps, trip_id: str, user_id: str) -> dict[str, Any]:
    """About the latest 200 messages (oldest first) and the active suggestions."""
    return await svc.db.read(_history, trip_id, user_id, iso(now_dt(svc)))


NOTHING_NEW = '{"latestSeq":%d,"tripVersion":%d,"messages":[],"suggestions":[]}'


async def events_json(svc: AgentDeps, trip_id: str, user_id: str, after: int) -> bytes:
    """`events` as JSON bytes; a poll with nothing new is formatted directly."""
    version, latest, pending = await svc.heads.get(trip_id)
    if latest <= after and not pending:
        return (NOTHING_NEW % (latest, version)).encode()
    data = await events(svc, trip_id, user_id, after)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


def _since(conn: sqlite3.Connection, trip_id: str, user_id: str, after: int, messages: bool,
           suggestions: bool, now: str) -> tuple[list[sqlite3.Row], list[dict[str, Any]]]:
    rows = conn.execute(
        f"SELECT {MESSAGE_COLUMNS} FROM agent_messages WHERE trip_id = ? AND seq > ? ORDER BY seq LIMIT ?",
        (trip_id, after, EVENTS_LIMIT)).fetchall() if messages else []
    return rows, active_suggestions(conn, trip_id, user_id, now) if suggestions else []


async def events(svc: AgentDeps, trip_id: str, user_id: str, after: int) -> dict[str, Any]:
    """Messages with seq > after (oldest first, at most 200), active
    suggestions, the trip version and `latestSeq`: the seq to pass as `after`
    next time (the last message returned when the page is full)."""
    version, latest, pending = await svc.heads.get(trip_id)
    if latest <= after and not pending:
        return {"latestSeq": latest, "tripVersion": version, "messages": [], "suggestions": []}
    rows, suggestions = await svc.db.read(_since, trip_id, user_id, after, latest > after, bool(pending),
                                          iso(now_dt(svc)))
    messages = [message_dto(r) for r in rows]
    if messages:
        latest = max(latest, messages[-1]["seq"]) if len(messages) < EVENTS_LIMIT else messages[-1]["seq"]
    return {"latestSeq": latest, "tripVersion": version, "messages": messages, "suggestions": suggestions}


def latest_chat(tx: Tx, trip_id: str) -> Any:
    """The newest chat message (role, source, created_at): not an operation event, not a stop comment."""
    return tx.fetchone(
        "SELECT role, source, created_at FROM agent_messages WHERE trip_id = ? "
        "AND source NOT IN ('operation', 'stop_comment') ORDER BY seq DESC LIMIT 1", (trip_id,))


# -- writes -------------------------------------------------------------------


def usable_client_id(value: Any) -> str | None:
    return value if isinstance(value, str) and CLIENT_ID.match(value) else None


async def turn_of(svc: AgentDeps, trip_id: str, message_id: str) -> str | None:
    """The turn an agent answer belongs to (None: unknown, e.g. a message from before turn ids)."""
    return await svc.db.fetchval("SELECT turn_id FROM agent_messages WHERE id = ? AND trip_id = ?",
                                 (message_id, trip_id))


async def upsert_assistant(svc: AgentDeps, trip_id: str, message_id: str, parts: list[Any], *,
                           source: str = "chat", turn_id: str | None = None) -> dict[str, Any] | None:
    """Store an assistant turn's parts under its id. A continuation of the same
    turn replaces the parts and moves the row to a new seq, so pollers (who
    ask for seq > after) see the updated message; clients merge by id."""
    return await svc.db.write(lambda tx: _upsert(tx, trip_id, message_id, parts, source, turn_id))


def _upsert(tx: Tx, trip_id: str, message_id: str, parts: list[Any], source: str,
            turn_id: str | None) -> dict[str, Any] | None:
    rows = tx.fetchall("SELECT trip_id, role FROM agent_messages WHERE id = ?", (message_id,))
    if rows and (rows[0]["trip_id"] != trip_id or rows[0]["role"] != "assistant"):
        return None  # never overwrite someone else's row
    if not rows:
        return store.append_message(tx, trip_id, role="assistant", parts=parts, source=source,
                                    actor_name="Wayline agent", message_id=message_id, turn_id=turn_id)
    tx.touch(trip_id, "timeline")
    seq = tx.fetchval("SELECT COALESCE(MAX(seq), 0) + 1 FROM agent_messages WHERE trip_id = ?", (trip_id,))
    tx.execute("UPDATE agent_messages SET parts_json = ?, seq = ? WHERE id = ?",
               (json.dumps(parts, ensure_ascii=False), seq, message_id))
    row = tx.fetchone(f"SELECT {MESSAGE_COLUMNS} FROM agent_messages WHERE id = ?", (message_id,))
    return None if row is None else dict(row)


async def chat_history(svc: AgentDeps, trip_id: str, through_id: str, limit: int) -> list[dict]:
    """The trip's chat as stored, oldest first: the last `limit` member and
    agent messages (not edit lines, not stop comments) up to and including
    the message `through_id`, each `{"id", "role", "parts"}`. [] when that
    message is not this trip's."""
    rows = await svc.db.fetchall(
        "SELECT id, role, parts_json FROM agent_messages WHERE trip_id = ? AND role IN ('user', 'assistant') "
        "AND source NOT IN ('operation', 'stop_comment') "
        "AND seq <= (SELECT seq FROM agent_messages WHERE id = ? AND trip_id = ?) ORDER BY seq DESC LIMIT ?",
        (trip_id, through_id, trip_id, limit))
    return [{"id": r["id"], "role": r["role"], "parts": json.loads(r["parts_json"])} for r in reversed(rows)]


async def stored_parts(svc: AgentDeps, trip_id: str, message_id: str) -> list | None:
    raw = await svc.db.fetchval("SELECT parts_json FROM agent_messages WHERE id = ? AND trip_id = ?",
                                (message_id, trip_id))
    return None if raw is None else json.loads(raw)


def text_of(parts: list) -> str:
    return "\n".join(p.get("text", "") for p in parts if isinstance(p, dict) and p.get("type") == "text").strip()
