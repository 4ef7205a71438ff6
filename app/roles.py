"""Trip roles and the one rule for checking them.

owner > editor > viewer: owners manage members and invites, editors change
the plan, viewers read. Non-members never reach this check: they get 404
before it (another group's trip is never revealed)."""

from __future__ import annotations

from .db import Tx
from .errors import Forbidden, NotFound

ROLE_RANK = {"viewer": 0, "editor": 1, "owner": 2}
WHO_MAY = {"viewer": "Members", "editor": "Only editors and owners", "owner": "Only the trip's owners"}


def has_role(role: str, needs: str) -> bool:
    return ROLE_RANK[role] >= ROLE_RANK[needs]


def require_role(role: str, needs: str) -> None:
    """403 with a plain message when `role` is below `needs`."""
    if not has_role(role, needs):
        raise Forbidden(f"{WHO_MAY[needs]} can do this; you are {'an' if role[0] in 'aeiou' else 'a'} {role} "
                        f"on this trip.")


def require_role_in(tx: Tx, trip_id: str, user_id: str, needs: str) -> str:
    """The member's role as the write sees it (inside its transaction), held
    to `needs`: a route checks the role before it reads the body, and another
    owner's request may demote or remove the member meanwhile. 404 when no
    longer a member, as for any trip of someone else's; 403 below `needs`."""
    role = tx.fetchval("SELECT role FROM members WHERE trip_id = ? AND user_id = ?", (trip_id, user_id))
    if role is None:
        raise NotFound("Trip not found")
    require_role(str(role), needs)
    return str(role)
