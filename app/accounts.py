"""Deleting an account: the person goes, the trips they shared stay whole.

In one transaction the account leaves every trip: a trip it alone belonged
to is deleted (its uploads after the commit); where it was the last owner,
the longest-standing editor, else viewer, becomes owner; its votes go as
when leaving. Its comments and timeline messages stay, shown as from a
deleted member (so do its assistants' suggestions). Its sessions, private
preferences, dismissals, calendar links and assistants' access tokens go; AI
usage rows keep their counts under the placeholder below, so the admin's
list of today's members still adds up to the day's total ("Deleted member"). Every trip it touched is
announced through the change signal.

The users row stays only as an anonymous placeholder (no name, no password,
a username no one can sign in with or register): trips, invites and uploads
keep referring to who created them without naming anyone. The username is
free again for anyone, except one WAYLINE_AI_ADMINS names (retired_usernames
keeps a hash of it; app/auth.py create_user).
"""

from __future__ import annotations

from . import media
from .auth import SessionCache, username_hash
from .db import Database, Tx
from .filestore import FileStore
from .ids import utcnow

DELETED_NAME = "Deleted member"
SUCCESSION = "CASE role WHEN 'owner' THEN 0 WHEN 'editor' THEN 1 ELSE 2 END, joined_at, user_id"


async def delete_account(db: Database, files: FileStore, user_id: str, sessions: SessionCache) -> list[str]:
    """Delete the account; returns the ids of the trips deleted with it."""
    def work(tx: Tx) -> list[str]:
        deleted: list[str] = []
        memberships = tx.fetchall("SELECT trip_id, role FROM members WHERE user_id = ?", (user_id,))
        for trip_id, role in memberships:
            others = tx.fetchall(
                f"SELECT user_id, role FROM members WHERE trip_id = ? AND user_id != ? ORDER BY {SUCCESSION}",
                (trip_id, user_id))
            if not others:
                tx.touch(trip_id, "deleted")
                tx.execute("DELETE FROM trips WHERE id = ?", (trip_id,))
                deleted.append(trip_id)
                continue
            tx.touch(trip_id, "members", "social")
            if role == "owner" and others[0][1] != "owner":
                tx.execute("UPDATE members SET role = 'owner' WHERE trip_id = ? AND user_id = ?",
                           (trip_id, others[0][0]))
            tx.execute("DELETE FROM members WHERE trip_id = ? AND user_id = ?", (trip_id, user_id))
            tx.execute("DELETE FROM votes WHERE trip_id = ? AND user_id = ?", (trip_id, user_id))
        # What they wrote stays, under the placeholder's name. Each table is
        # rewritten only where it has their rows: a write to trip tables must
        # say which trips it changed, and an account that never wrote has none.
        _rename_in(tx, "comments", "author", "user_id", DELETED_NAME, user_id, "social")
        _rename_in(tx, "agent_messages", "actor_name", "actor_user_id", DELETED_NAME, user_id, "timeline")
        _rename_in(tx, "agent_suggestions", "proposed_as", "proposed_by",
                   f"An assistant of a {DELETED_NAME.lower()}", user_id, "suggestions")
        tx.execute("DELETE FROM sessions WHERE user_id = ?", (user_id,))
        # Assistants' access tokens end with the account (one-trip ones already went with the memberships).
        tx.execute("DELETE FROM access_tokens WHERE user_id = ?", (user_id,))
        tx.execute("DELETE FROM user_preferences WHERE user_id = ?", (user_id,))
        tx.execute("DELETE FROM agent_suggestion_dismissals WHERE user_id = ?", (user_id,))
        # The name is free again, but remembered (as a hash): an admin's is never given to anyone else.
        username = tx.fetchone("SELECT username FROM users WHERE id = ?", (user_id,))
        if username is not None:
            tx.execute("INSERT OR IGNORE INTO retired_usernames (username_hash, retired_at) VALUES (?, ?)",
                       (username_hash(username[0]), utcnow()))
        # ':' is not allowed in usernames, so the placeholder's name is never taken or signed in with.
        tx.execute("UPDATE users SET username = 'deleted:' || id, display_name = ?, password_hash = '!' "
                   "WHERE id = ?", (DELETED_NAME, user_id))
        return deleted

    deleted = await db.write(work)
    sessions.drop_user(user_id)
    for trip_id in deleted:
        await media.delete_trip_files(files, trip_id)
    return deleted


def _rename_in(tx: Tx, table: str, name_column: str, user_column: str, name: str, user_id: str, kind: str) -> None:
    """Show the user's rows in `table` under `name`, announcing each trip they are in."""
    trips = tx.fetchall(f"SELECT DISTINCT trip_id FROM {table} WHERE {user_column} = ?", (user_id,))
    if not trips:
        return
    for (trip_id,) in trips:
        tx.touch(trip_id, kind)
    tx.execute(f"UPDATE {table} SET {name_column} = ? WHERE {user_column} = ?", (name, user_id))
