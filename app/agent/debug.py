""""Copy debug info" for an agent message: safe correlation ids only.

`GET /api/trips/:tripId/agent/messages/:messageId/debug` (members) answers
the ids an operator needs to find a message's turn in the logs, the usage
rows and the traces: trip, message, turn, the provider's response ids, the
models, times and token counts of the turn's model calls, the part types, and
a short fingerprint of the text (the first 12 hex digits of its SHA-256), so
two reports of the same answer can be matched without the text itself.

Never in it: the message's text, tool inputs or outputs, preferences, user
ids or keys.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..errors import NotFound
from ..ids import iso
from .deps import AgentDeps
from .timeline import now_dt, text_of

MAX_PART_TYPES = 40


def fingerprint(text: str) -> str | None:
    return hashlib.sha256(text.encode()).hexdigest()[:12] if text else None


async def debug_info(svc: AgentDeps, trip_id: str, message_id: str) -> dict[str, Any]:
    row = await svc.db.fetchone(
        "SELECT id, role, source, parts_json, created_at, turn_id FROM agent_messages WHERE id = ? AND trip_id = ?",
        (message_id, trip_id))
    if row is None:
        raise NotFound("Message not found")
    parts = json.loads(row["parts_json"])
    # A member message starts its own turn; an agent answer records the turn it belongs to.
    turn_id = row["turn_id"] or (row["id"] if row["role"] == "user" else None)
    calls = await svc.db.fetchall(
        "SELECT feature, model, status, started_at, finished_at, duration_ms, input_tokens, output_tokens, "
        "response_id FROM ai_usage WHERE turn_id = ? AND trip_id = ? ORDER BY started_at, rowid",
        (turn_id, trip_id)) if turn_id else []
    grounding = next((p.get("data", {}).get("outcome") for p in parts
                      if isinstance(p, dict) and p.get("type") == "data-agent-grounding"), None)
    return {
        "tripId": trip_id,
        "messageId": row["id"],
        "turnId": turn_id,
        "role": row["role"],
        "source": row["source"],
        "createdAt": row["created_at"],
        "textSha256": fingerprint(text_of(parts)),
        "partTypes": [str(p.get("type"))[:60] for p in parts if isinstance(p, dict)][:MAX_PART_TYPES],
        "streetView": grounding,
        "models": sorted({c["model"] for c in calls}),
        "modelCalls": [{"responseId": c["response_id"], "feature": c["feature"], "model": c["model"],
                        "status": c["status"], "startedAt": c["started_at"], "finishedAt": c["finished_at"],
                        "durationMs": c["duration_ms"], "inputTokens": c["input_tokens"],
                        "outputTokens": c["output_tokens"]} for c in calls],
        "generatedAt": iso(now_dt(svc)),
    }
