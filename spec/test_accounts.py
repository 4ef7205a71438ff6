"""Accounts (issue 12, failure 9): change the password, sign out everywhere,
delete the account; sessions never outlive their expiry or these changes."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from datetime import datetime, timedelta, UTC

from app import accounts
from app.ids import iso
from helpers import concurrent_client, held_at_its_write, join, make_client, new_trip, op, signup, use

PASSWORD = "correct horse"


def second_session(client, username: str, password: str = PASSWORD) -> str:
    """Sign in again (another device); returns its token, leaving the client's cookie alone."""
    saved = dict(client.cookies)
    r = client.post("/api/auth/signin", json={"username": username, "password": password})
    assert r.status_code == 200, r.text
    token = r.cookies["wayline_session"]
    client.cookies.clear()
    for name, value in saved.items():
        client.cookies.set(name, value)
    return token


def me_with(client, token: str) -> int:
    """200 when `token` is a live session, 401 when it is not (the signed-out
    probe answers 200 with no user, so the status is read from the body)."""
    r = client.get("/api/auth/me", cookies=None, headers={"Cookie": f"wayline_session={token}"})
    assert r.status_code == 200
    return 200 if r.json()["data"]["user"] is not None else 401


def test_a_password_change_ends_every_other_session_at_once_and_keeps_this_one(client):
    alice = signup(client, "alice")
    other = second_session(client, "alice")
    assert me_with(client, other) == 200          # now cached
    use(client, alice)
    r = client.post("/api/auth/password", json={"currentPassword": "wrong one", "newPassword": "new password 1"})
    assert r.status_code == 403 and r.json()["error"]["code"] == "wrong_password"
    assert r.json()["error"]["field"] == "currentPassword"
    r = client.post("/api/auth/password", json={"currentPassword": PASSWORD, "newPassword": "short"})
    assert r.status_code == 422 and r.json()["error"]["field"] == "newPassword"
    r = client.post("/api/auth/password", json={"currentPassword": PASSWORD, "newPassword": "new password 1"})
    assert r.status_code == 200 and r.json()["data"] == {"changed": True}
    assert me_with(client, other) == 401
    assert me_with(client, alice["token"]) == 200
    client.cookies.clear()
    assert client.post("/api/auth/signin", json={"username": "alice", "password": PASSWORD}).status_code == 401
    assert client.post("/api/auth/signin", json={"username": "alice", "password": "new password 1"}).status_code == 200


def test_sign_out_everywhere_ends_every_session_at_once(client):
    alice = signup(client, "alice")
    other = second_session(client, "alice")
    bob = signup(client, "bob")
    assert me_with(client, other) == 200
    use(client, alice)
    r = client.post("/api/auth/signout", json={"everywhere": True})
    assert r.status_code == 200
    assert me_with(client, other) == 401 and me_with(client, alice["token"]) == 401
    assert me_with(client, bob["token"]) == 200
    # Plain sign-out still ends only this session.
    third, fourth = second_session(client, "bob"), bob["token"]
    use(client, bob)
    assert client.post("/api/auth/signout", json={}).status_code == 200
    assert me_with(client, fourth) == 401 and me_with(client, third) == 200


def test_an_expired_session_is_refused_at_once_even_when_cached(client, settings):
    alice = signup(client, "alice")
    soon = iso(datetime.now(UTC) + timedelta(seconds=1))
    with sqlite3.connect(settings.db_path) as conn:
        conn.execute("UPDATE sessions SET expires_at = ?", (soon,))
    client.app.state.services.sessions.drop_user(alice["id"])   # as if first seen now
    assert client.get("/api/auth/me").json()["data"]["user"] is not None   # cached until its expiry
    time.sleep(1.2)
    assert client.get("/api/auth/me").json()["data"]["user"] is None


def test_deleting_an_account(client, settings):
    alice, bob, carol = signup(client, "alice"), signup(client, "bob"), signup(client, "carol")
    use(client, alice)
    alone = new_trip(client, title="Only mine")
    upload = client.post(f"/api/trips/{alone['id']}/media", files={"file": ("n.txt", b"notes", "text/plain")})
    assert upload.status_code == 201 and (Path(settings.uploads_dir) / alone["id"]).is_dir()
    shared = new_trip(client, title="Shared")          # alice owner; carol viewer (earlier), bob editor
    join(client, alice, shared["id"], carol, role="viewer")
    join(client, alice, shared["id"], bob, role="editor")
    use(client, alice)
    day = shared["days"][0]["id"]
    r = op(client, shared["id"], "insert_stop", dayId=day, name="Museum")
    stop = r.json()["data"]["trip"]["days"][0]["stops"][0]["id"]
    assert client.post(f"/api/trips/{shared['id']}/stops/{stop}/comments", json={"body": "Let's go"}).status_code == 201
    assert client.put(f"/api/trips/{shared['id']}/stops/{stop}/vote", json={"value": 1}).status_code == 200
    assert client.put("/api/users/preferences", json={"allergies": "peanuts"}).status_code == 200
    with sqlite3.connect(settings.db_path) as conn:   # a usage row of alice's
        conn.execute("INSERT INTO ai_usage (id, day, started_at, lease_until, user_id, trip_id, feature, model, "
                     "status, input_tokens, output_tokens) "
                     "VALUES ('u1', '2026-01-01', 'x', 'x', ?, ?, 'copilot', 'm', 'completed', 10, 20)",
                     (alice["id"], shared["id"]))
    other = second_session(client, "alice")
    use(client, bob)
    assert client.get(f"/api/trips/{shared['id']}").status_code == 200   # bob's view is cached
    use(client, alice)

    r = client.request("DELETE", "/api/users/me", json={"password": "wrong one"})
    assert r.status_code == 403 and r.json()["error"]["field"] == "password"
    r = client.request("DELETE", "/api/users/me", json={"password": PASSWORD})
    assert r.status_code == 200 and r.json()["data"] == {"deleted": True, "tripsDeleted": 1}
    assert "wayline_session=" in r.headers["set-cookie"]

    # Every session is gone at once; the name can be taken again; nobody signs in as the placeholder.
    assert me_with(client, alice["token"]) == 401 and me_with(client, other) == 401
    client.cookies.clear()
    assert client.post("/api/auth/signin", json={"username": "alice", "password": PASSWORD}).status_code == 401
    assert client.post("/api/auth/signin",
                       json={"username": f"deleted:{alice['id']}", "password": "!"}).status_code == 401

    use(client, bob)
    assert client.get(f"/api/trips/{alone['id']}").status_code == 404
    assert not (Path(settings.uploads_dir) / alone["id"]).exists()
    trip = client.get(f"/api/trips/{shared['id']}").json()["data"]   # bob's cache followed the change
    roles = {m["username"]: m["role"] for m in trip["members"]}
    assert roles == {"bob": "owner", "carol": "viewer"}   # the editor, not the earlier viewer, took over
    assert trip["days"][0]["stops"][0]["votes"]["up"] == 0
    comments = client.get(f"/api/trips/{shared['id']}/stops/{stop}/comments").json()["data"]["comments"]
    assert [(c["author"], c["body"], c["byAgent"]) for c in comments] == [("Deleted member", "Let's go", False)]
    assert "alice" not in client.get(f"/api/trips/{shared['id']}/members").text
    with sqlite3.connect(settings.db_path) as conn:
        names = {r[0] for r in conn.execute("SELECT actor_name FROM agent_messages WHERE actor_user_id = ?",
                                            (alice["id"],))}
        assert names == {"Deleted member"}   # her edits stay on the timeline, unnamed
        assert conn.execute("SELECT COUNT(*) FROM sessions WHERE user_id = ?", (alice["id"],)).fetchone()[0] == 0
        assert conn.execute("SELECT COUNT(*) FROM user_preferences WHERE user_id = ?",
                            (alice["id"],)).fetchone()[0] == 0
        # Its usage keeps its counts, under the nameless placeholder (the admin sees "Deleted member").
        assert conn.execute("SELECT user_id, input_tokens, output_tokens FROM ai_usage").fetchall() == [
            (alice["id"], 10, 20)]
        assert conn.execute("SELECT COUNT(*) FROM users "
                            "WHERE username = 'alice' OR display_name = 'alice'").fetchone()[0] == 0
    # The name is free again.
    assert client.post("/api/auth/signup", json={"username": "alice", "password": PASSWORD}).status_code == 201


def test_a_last_owner_without_editors_hands_the_trip_to_the_longest_standing_viewer(client):
    alice, bob, carol = signup(client, "alice"), signup(client, "bob"), signup(client, "carol")
    use(client, alice)
    trip = new_trip(client)
    join(client, alice, trip["id"], carol, role="viewer")
    join(client, alice, trip["id"], bob, role="viewer")
    use(client, alice)
    assert client.request("DELETE", "/api/users/me", json={"password": PASSWORD}).status_code == 200
    use(client, bob)
    roles = {m["username"]: m["role"] for m in client.get(f"/api/trips/{trip['id']}/members").json()["data"]["members"]}
    assert roles == {"carol": "owner", "bob": "viewer"}


def test_deleting_needs_a_signed_in_caller(client):
    assert client.request("DELETE", "/api/users/me", json={"password": PASSWORD}).status_code == 401
    assert client.post("/api/auth/password",
                       json={"currentPassword": "a", "newPassword": "bbbbbbbb"}).status_code == 401
    assert client.post("/api/auth/signout", json={"everywhere": True}).status_code == 200


def test_a_display_name_keeps_no_control_or_direction_characters(client):
    """It stored 'a\\u202eevil\\x00' as given: a right-to-left override made other
    members read a name backwards, and NUL, newlines and zero-width spaces
    went into their lists and the agent's prompt."""
    r = client.post("/api/auth/signup", json={"username": "mallory", "password": PASSWORD,
                                              "displayName": "Ann\u202eeve\x00\u200b  the\nowner "})
    assert r.status_code == 201, r.text
    assert r.json()["data"]["user"]["displayName"] == "Anneve the owner"
    assert client.get("/api/auth/me").json()["data"]["user"]["displayName"] == "Anneve the owner"
    r = client.post("/api/auth/signup",
                    json={"username": "nobody", "password": PASSWORD, "displayName": "\u202e\u200b "})
    assert r.json()["data"]["user"]["displayName"] == "nobody"     # nothing left: the username stands in



def test_an_account_that_never_joined_a_trip_can_be_deleted(client):
    """It was a 500: the deletion renamed the account's (no) comments without
    saying which trips changed, which the write path refuses."""
    signup(client, "lonely")
    r = client.request("DELETE", "/api/users/me", json={"password": PASSWORD})
    assert r.status_code == 200 and r.json()["data"] == {"deleted": True, "tripsDeleted": 0}, r.text
    assert client.post("/api/auth/signin", json={"username": "lonely", "password": PASSWORD}).status_code == 401


def test_a_deleted_admins_username_is_never_given_to_someone_else(settings):
    """WAYLINE_AI_ADMINS names usernames. A deleted account's username is free
    again, so whoever signed up next as "ops" saw the admin view: every
    member's AI use by name. An admin's name is retired; any other is free."""
    with make_client(settings.with_(ai_admins=("Ops",))) as client:
        signup(client, "ops")
        assert client.get("/api/auth/me").json()["data"]["isAdmin"] is True   # the names' case aside
        assert client.get("/api/admin/ai-usage").status_code == 200
        assert client.request("DELETE", "/api/users/me", json={"password": PASSWORD}).status_code == 200
        signup(client, "bob")
        assert client.request("DELETE", "/api/users/me", json={"password": PASSWORD}).status_code == 200
        client.cookies.clear()

        r = client.post("/api/auth/signup", json={"username": "ops", "password": PASSWORD})
        assert r.status_code == 409 and r.json()["error"]["code"] == "username_taken", r.text
        assert client.get("/api/auth/me").json()["data"]["user"] is None
        assert client.post("/api/auth/signup", json={"username": "bob", "password": PASSWORD}).status_code == 201
        with sqlite3.connect(settings.db_path) as conn:   # remembered without the names themselves
            hashes = [r[0] for r in conn.execute("SELECT username_hash FROM retired_usernames")]
        assert len(hashes) == 2 and not {"ops", "bob"} & set(hashes)


def test_a_request_under_way_when_its_account_is_deleted_leaves_nothing_behind(client, settings):
    """Each request passed its checks, then the account was deleted before its
    write: a sign-in got a live session for the deleted placeholder (which could
    then make trips as "Deleted member"), an invite joined it to a trip, a vote
    stayed counted. The database refuses them now; the caller reads a 401."""
    owner = signup(client, "owner")
    trip = new_trip(client)
    day = trip["days"][0]["id"]
    stop = op(client, trip["id"], "insert_stop", dayId=day, name="Museum").json()["data"]["trip"]["days"][0]["stops"][0]
    link = client.post(f"/api/trips/{trip['id']}/invites", json={"role": "editor"}).json()["data"]
    eve, joiner, voter = signup(client, "eve"), signup(client, "joiner"), signup(client, "voter")
    join(client, owner, trip["id"], voter, role="editor")
    svc = client.app.state.services

    async def under_way(user, method, path, body):
        """The request, held at its write while `user`'s account is deleted."""
        cookies = {"wayline_session": user["token"]} if method != "POST" or "signin" not in path else None
        async with concurrent_client(client, cookies=cookies) as http:
            sent, release = await held_at_its_write(svc.db, lambda: http.request(method, path, json=body))
            await accounts.delete_account(svc.db, svc.files, user["id"], svc.sessions)
            release()
            return await sent

    for user, method, path, body in [
        (eve, "POST", "/api/auth/signin", {"username": "eve", "password": PASSWORD}),
        (joiner, "POST", f"/api/invites/{link['token']}/accept", {}),
        (voter, "PUT", f"/api/trips/{trip['id']}/stops/{stop['id']}/vote", {"value": 1}),
    ]:
        r = client.portal.call(under_way, user, method, path, body)
        assert r.status_code == 401 and r.json()["error"]["code"] == "account_deleted", (path, r.text)
        assert r.json()["error"]["message"] == "This account has been deleted. Nothing was changed."

    with sqlite3.connect(settings.db_path) as conn:
        ghosts = "(SELECT id FROM users WHERE username GLOB 'deleted:*')"
        assert conn.execute(f"SELECT COUNT(*) FROM users WHERE id IN {ghosts}").fetchone() == (3,)
        for table in ("sessions", "members", "votes"):
            assert conn.execute(f"SELECT COUNT(*) FROM {table} WHERE user_id IN {ghosts}").fetchone() == (0,), table


def test_a_sign_in_that_straddles_a_password_change_gets_no_session(client, settings):
    """Someone with the old password signs in while the owner changes it: the
    password was checked before the change, the session written after it, so
    the old password kept a way in after the change that was meant to end it."""
    from app import auth

    owner = signup(client, "owner")
    svc = client.app.state.services

    async def straddling():
        async with concurrent_client(client) as http:
            sent, release = await held_at_its_write(
                svc.db, lambda: http.post("/api/auth/signin", json={"username": "owner", "password": PASSWORD}))
            await auth.change_password(svc.db, owner["id"], "a new secret phrase", svc.sessions, None,
                                       hash_n=settings.password_hash_n)
            release()
            return await sent

    r = client.portal.call(straddling)
    assert r.status_code == 401 and r.json()["error"]["code"] == "password_changed", r.text
    assert "wayline_session" not in r.cookies
    with sqlite3.connect(settings.db_path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM sessions WHERE user_id = ?", (owner["id"],)).fetchone() == (0,)
    assert client.post("/api/auth/signin", json={"username": "owner", "password": PASSWORD}).status_code == 401
    r = client.post("/api/auth/signin", json={"username": "owner", "password": "a new secret phrase"})
    assert r.status_code == 200


def standing_secrets_work(client, trip_id: str, token: str, feed_url: str) -> tuple[int, int]:
    """(the assistant token's /mcp status, the calendar link's status), asked without a session."""
    listed = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, cookies=None,
                         headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
                                  "Cookie": ""})
    feed = client.get(feed_url.removeprefix("http://testserver"), headers={"Cookie": ""})
    return listed.status_code, feed.status_code


def make_standing_secrets(client, trip_id: str) -> tuple[str, str]:
    """What any session of the account can make, and what outlives it: an assistant's token, a calendar link."""
    token = client.post("/api/users/me/assistants", json={"name": "Claude", "scope": "propose"}).json()["data"]["token"]
    feed = client.post(f"/api/trips/{trip_id}/calendar").json()["data"]["url"]
    return token, feed


def test_a_password_change_and_sign_out_everywhere_end_assistant_tokens_and_calendar_links(client):
    """A stolen cookie can make an assistant token (reads every trip, files
    proposals) and calendar links (every stop's place and time) without the
    password. They outlived the stolen session: after the owner signed out
    everywhere or changed the password, both still answered. Now both end
    them with the sessions; a plain sign-out does not."""
    alice = signup(client, "alice")
    trip = new_trip(client)
    token, feed = make_standing_secrets(client, trip["id"])
    assert standing_secrets_work(client, trip["id"], token, feed) == (200, 200)
    use(client, alice)
    r = client.post("/api/auth/password", json={"currentPassword": PASSWORD, "newPassword": "new password 1"})
    assert r.status_code == 200
    assert standing_secrets_work(client, trip["id"], token, feed) == (401, 404)
    use(client, alice)
    assert client.get("/api/users/me/assistants").json()["data"]["tokens"] == []
    assert client.get(f"/api/trips/{trip['id']}/calendar").json()["data"]["enabled"] is False

    token, feed = make_standing_secrets(client, trip["id"])
    other = second_session(client, "alice", "new password 1")
    use(client, {"token": other})
    assert client.post("/api/auth/signout", json={}).status_code == 200   # one device: the secrets stay
    assert standing_secrets_work(client, trip["id"], token, feed) == (200, 200)
    use(client, alice)
    assert client.post("/api/auth/signout", json={"everywhere": True}).status_code == 200
    assert standing_secrets_work(client, trip["id"], token, feed) == (401, 404)
