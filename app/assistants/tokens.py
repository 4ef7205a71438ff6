"""Personal access tokens: how an outside AI assistant acts for one member over MCP.

A member creates one under Account -> "Connected assistants": a name (what
the group sees: "Claude via Alice"), one trip or all their trips, and a
scope, `read` or `propose`. The token is shown once and stored as its
sha256; revoking deletes it. A one-trip token ends with the membership (the
members row's delete cascades, migration 0026); every token ends with the
account (app/accounts.py).

A token never has more than its member's role, checked on every call from the
members in memory: `read` acts as a viewer at most, `propose` as the
member's own role, so a viewer's token can read and never propose.
"""

from __future__ import annotations

from typing import Any

import secrets
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..db import Tx
from ..auth import LastUse, token_hash
from .deps import AssistantDeps
from ..errors import Conflict, Forbidden, NotFound
from ..ids import new_id, utcnow
from ..roles import ROLE_RANK

PREFIX = "wl_pat_"          # recognisable in a config file or a secret scanner
MAX_TOKENS = 20             # per member: a list people can still read
Scope = Literal["read", "propose"]


class NewToken(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=40, pattern=r"\S",
                      description="The assistant's name, shown to the group: e.g. Claude")
    tripId: str | None = Field(default=None, min_length=1, max_length=64,
                               description="One trip, or null for all your trips")
    scope: Scope = "read"


@dataclass(frozen=True)
class Caller:
    """Who an MCP request acts for."""

    token_id: str
    user_id: str
    member_name: str
    assistant: str          # the token's name
    trip_id: str | None     # None: every trip of the member
    scope: str

    @property
    def label(self) -> str:
        """How the group sees what it files: "Claude via Alice"."""
        return f"{self.assistant} via {self.member_name}"


def _dto(row) -> dict:
    return {"id": row["id"], "name": row["name"], "scope": row["scope"], "tripId": row["trip_id"],
            "tripTitle": row["trip_title"], "createdAt": row["created_at"], "lastUsedAt": row["last_used_at"]}


LIST_SQL = ("SELECT a.id, a.name, a.scope, a.trip_id, t.title AS trip_title, a.created_at, a.last_used_at "
            "FROM access_tokens a LEFT JOIN trips t ON t.id = a.trip_id WHERE a.user_id = ?")


async def list_tokens(svc: AssistantDeps, user_id: str) -> list[dict]:
    rows = await svc.db.fetchall(LIST_SQL + " ORDER BY a.created_at, a.id", (user_id,))
    return [_dto(r) for r in rows]


async def create(svc: AssistantDeps, user_id: str, new: NewToken) -> tuple[str, dict]:
    """(the token, shown once; its entry). A one-trip token needs the
    membership (404 otherwise, as for any trip the member cannot see)."""
    if new.tripId is not None:
        role, _ = await svc.trips.membership(new.tripId, user_id)
        if role is None:
            raise NotFound("Trip not found")
    token = PREFIX + secrets.token_urlsafe(32)
    token_id = new_id()

    def work(tx: Tx) -> Any:
        if tx.fetchval("SELECT COUNT(*) FROM access_tokens WHERE user_id = ?", (user_id,)) >= MAX_TOKENS:
            raise Conflict(f"You have {MAX_TOKENS} connected assistants already; revoke one first.",
                           code="too_many_tokens")
        tx.execute(
            "INSERT INTO access_tokens (id, token_hash, user_id, trip_id, name, scope, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (token_id, token_hash(token), user_id, new.tripId, new.name.strip(), new.scope, utcnow()))
        return tx.fetchone(LIST_SQL + " AND a.id = ?", (user_id, token_id))

    return token, _dto(await svc.db.write(work))


async def revoke(svc: AssistantDeps, user_id: str, token_id: str) -> None:
    if not await svc.db.write(lambda tx: tx.execute("DELETE FROM access_tokens WHERE id = ? AND user_id = ?",
                                                    (token_id, user_id)).rowcount):
        raise NotFound("No such connected assistant", code="token_not_found")


async def authenticate(svc: AssistantDeps, token: str | None, last_use: LastUse) -> Caller | None:
    """The caller a bearer token stands for; None for a missing, unknown or revoked token."""
    if not token or not token.startswith(PREFIX) or len(token) > 200:
        return None
    key = token_hash(token)
    row = await svc.db.fetchone(
        "SELECT a.id, a.user_id, u.display_name, a.name, a.trip_id, a.scope FROM access_tokens a "
        "JOIN users u ON u.id = a.user_id WHERE a.token_hash = ?", (key,))
    if row is None:
        return None
    if last_use.due(key):
        await svc.db.write(lambda tx: tx.execute("UPDATE access_tokens SET last_used_at = ? WHERE id = ?",
                                                 (utcnow(), row["id"])))
    return Caller(row["id"], row["user_id"], row["display_name"], row["name"], row["trip_id"], row["scope"])


async def role_for(svc: AssistantDeps, caller: Caller, trip_id: str, needs: str = "viewer") -> str:
    """The role the caller acts with on the trip: the member's, capped by the
    token's scope. 404 (in the same words as the HTTP API) for a trip the
    token is not for or the member is not in; 403 in plain words when the
    role is too low."""
    if caller.trip_id is not None and caller.trip_id != trip_id:
        raise NotFound("Trip not found: this assistant's access is for another trip")
    role, _ = await svc.trips.membership(trip_id, caller.user_id)
    if role is None:
        raise NotFound("Trip not found")
    acting = role if caller.scope == "propose" else "viewer"
    if ROLE_RANK[acting] < ROLE_RANK[needs]:
        if caller.scope == "read":
            raise Forbidden("This assistant's access is read-only: it cannot propose changes.", code="read_only")
        raise Forbidden(f"{caller.member_name} is a {role} of this trip, so an assistant acting for them cannot "
                        "propose changes.", code="forbidden")
    return acting

