"""Signed, single-use approval ids for chat write tools.

When the model calls a write tool, the server streams `tool-input-available`
and then `tool-approval-request {approvalId}`. The approvalId is

    "apv_" + HMAC-SHA256(svc.secret, "wayline-approval-v1" | trip | turn |
                          toolCallId | toolName | canonical JSON of the input)

where the turn is the assistant message id the server chose for the turn.
The id is also recorded (`agent_approvals`, status 'requested') with the input
that was shown.

A continuation carries `{type: "tool-<name>", toolCallId, input, state:
"approval-responded", approval: {id, approved}}` parts. Each is accepted only
if the HMAC recomputed from the part's own toolCallId, tool name and input
(and the trip and turn of the request) equals approval.id (constant-time),
AND a single `UPDATE ... WHERE id = ? AND trip_id = ? AND turn_id = ? AND
status = 'requested'` moves the record out of 'requested'. So a client cannot
approve a call the model never made (no secret, no record), cannot change the
input it approves (the HMAC covers it), and cannot use an approval twice (the
record is spent) — also not by sending it twice at once.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Any

from ..ids import utcnow
from .deps import AgentDeps

PREFIX = "apv_"


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def approval_id(secret: str, trip_id: str, turn_id: str, tool_call_id: str, tool_name: str, tool_input: Any) -> str:
    message = "\x1f".join(["wayline-approval-v1", trip_id, turn_id, tool_call_id, tool_name, canonical(tool_input)])
    digest = hmac.new(secret.encode(), message.encode(), hashlib.sha256).hexdigest()
    return PREFIX + digest


async def issue(svc: AgentDeps, trip_id: str, turn_id: str, tool_call_id: str, tool_name: str, tool_input: dict,
                user_id: str) -> str:
    """Sign and record an approval request; returns its approvalId."""
    aid = approval_id(svc.secret, trip_id, turn_id, tool_call_id, tool_name, tool_input)
    await svc.db.write(lambda tx: tx.execute(
        "INSERT OR IGNORE INTO agent_approvals (id, trip_id, turn_id, tool_call_id, tool_name, input_json, status, "
        "requested_by, created_at) VALUES (?, ?, ?, ?, ?, ?, 'requested', ?, ?)",
        (aid, trip_id, turn_id, tool_call_id, tool_name, canonical(tool_input), user_id, utcnow())))
    return aid


@dataclass(frozen=True)
class Response:
    """One approval response found in a continuation, after verification."""

    tool_call_id: str
    tool_name: str
    input: dict
    approved: bool
    reason: str | None
    error: str | None = None   # why it was refused (forged, replayed, ...); None when accepted
    approval_id: str = ""


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def signature_ok(svc: AgentDeps, trip_id: str, turn_id: str, part: dict) -> bool:
    approval = _object(part.get("approval"))
    claimed = approval.get("id")
    if not isinstance(claimed, str) or not claimed.startswith(PREFIX):
        return False
    expected = approval_id(svc.secret, trip_id, turn_id, str(part.get("toolCallId")), str(part.get("type"))[5:],
                           part.get("input"))
    return hmac.compare_digest(expected.encode(), claimed.encode())


async def redeem(svc: AgentDeps, trip_id: str, turn_id: str, part: dict, user_id: str) -> Response:
    """Verify one responded tool part and spend its approval (see module doc)."""
    approval = _object(part.get("approval"))
    approved = approval.get("approved") is True
    reason = approval.get("reason") if isinstance(approval.get("reason"), str) else None
    name, call_id = str(part.get("type"))[5:], str(part.get("toolCallId"))
    tool_input = _object(part.get("input"))
    if not signature_ok(svc, trip_id, turn_id, part):
        return Response(call_id, name, tool_input, False, reason,
                        error="This approval could not be verified, so nothing was changed.")
    spent = await svc.db.write(lambda tx: tx.execute(
        "UPDATE agent_approvals SET status = ?, decided_by = ?, decided_at = ? "
        "WHERE id = ? AND trip_id = ? AND turn_id = ? AND status = 'requested'",
        ("approved" if approved else "denied", user_id, utcnow(), approval["id"], trip_id, turn_id)).rowcount)
    if spent != 1:
        return Response(call_id, name, tool_input, False, reason,
                        error="This approval was already used, so nothing was changed.")
    stored = await svc.db.fetchval("SELECT input_json FROM agent_approvals WHERE id = ?", (approval["id"],))
    return Response(call_id, name, json.loads(stored), approved, reason, approval_id=approval["id"])


async def settle(svc: AgentDeps, approval_ids: list[str], status: str) -> None:
    """After the apply: 'applied' or 'failed' (bookkeeping for the audit trail)."""
    if approval_ids:
        await svc.db.write(lambda tx: tx.executemany(
            "UPDATE agent_approvals SET status = ? WHERE id = ? AND status = 'approved'",
            [(status, aid) for aid in approval_ids]))
