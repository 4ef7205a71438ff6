"""Per-account UI state that follows a member across devices (table
`user_ui_state`, migration 0008). Not a preference: never given to the model.

The agent panel's open state: `GET /api/users/preferences/agent-panel` ->
`{open, updatedAt}` (closed until first saved), `PUT ... {open}` answers the
snapshot it wrote (not a re-read).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, StrictBool

from .db import Database
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
    await db.execute_write(
        "INSERT INTO user_ui_state (user_id, agent_panel_open, updated_at) VALUES (?, ?, ?) "
        "ON CONFLICT (user_id) DO UPDATE SET agent_panel_open = excluded.agent_panel_open, "
        "updated_at = excluded.updated_at", (user_id, int(panel.open), now))
    return {"open": panel.open, "updatedAt": now}
