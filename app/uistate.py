"""Per-account UI state that follows a member across devices (table
`user_ui_state`, migration 0008). Not a preference: never given to the model.

The agent panel's open state: `GET /api/users/preferences/agent-panel` ->
`{open, updatedAt}` (closed until first saved), `PUT ... {open}` answers the
snapshot it wrote (not a re-read).

How far a member has read a trip's group chat (table `chat_reads`, migration
0045): `GET /api/trips/{tripId}/chat/read` -> `{seq}` (0 until first saved);
`PUT ... {seq}` only moves it forward, never past the trip's newest message,
and answers what is kept. The page counts unread messages after it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt

from .db import Database, Tx
from .ids import utcnow


class AgentPanel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    open: StrictBool


async def agent_panel(db: Database, user_id: str) -> dict:
    row = await db.fetchone("SELECT agent_panel_open, updated_at FROM user_ui_state WHERE user_id = ?", (user_id,))
    if row is None:
        return {"open": False, "updatedAt": None}
    return {"open": bool(row[0]), "updatedAt": row[1]}


async def save_agent_panel(db: Database, user_id: str, panel: AgentPanel) -> dict:
    now = utcnow()
    await db.write(lambda tx: tx.execute(
        "INSERT INTO user_ui_state (user_id, agent_panel_open, updated_at) VALUES (?, ?, ?) "
        "ON CONFLICT (user_id) DO UPDATE SET agent_panel_open = excluded.agent_panel_open, "
        "updated_at = excluded.updated_at", (user_id, int(panel.open), now)))
    return {"open": panel.open, "updatedAt": now}


class ChatRead(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seq: StrictInt = Field(ge=0, le=2**53)


async def chat_read(db: Database, trip_id: str, user_id: str) -> dict:
    seq = await db.fetchval("SELECT seq FROM chat_reads WHERE trip_id = ? AND user_id = ?", (trip_id, user_id))
    return {"seq": seq or 0}


async def save_chat_read(db: Database, trip_id: str, user_id: str, read: ChatRead) -> dict:
    """Forward only (two devices may report out of order), and no further
    than the newest message (a wrong number cannot hide messages yet to come)."""
    def work(tx: Tx) -> Any:
        tx.execute(
            "INSERT INTO chat_reads (trip_id, user_id, seq, updated_at) VALUES (?, ?, MIN(?, (SELECT "
            "COALESCE(MAX(seq), 0) FROM agent_messages WHERE trip_id = ?)), ?) ON CONFLICT (trip_id, user_id) "
            "DO UPDATE SET seq = MAX(seq, excluded.seq), updated_at = excluded.updated_at",
            (trip_id, user_id, read.seq, trip_id, utcnow()))
        return tx.fetchval("SELECT seq FROM chat_reads WHERE trip_id = ? AND user_id = ?", (trip_id, user_id))

    return {"seq": await db.write(work)}
