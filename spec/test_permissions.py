"""The role x action matrix of docs/permissions.md, checked over HTTP.

Each row: an action and the status each caller gets. Non-members get 404
(another group's trip is never revealed), viewers 403 on writes, anonymous
callers 401."""

from __future__ import annotations

import pytest

from helpers import join, new_trip, op, png_bytes, signup, use

PNG = png_bytes()

# action: (owner, editor, viewer, outsider)
MATRIX = {
    "read trip": (200, 200, 200, 404),
    "list members": (200, 200, 200, 404),
    "run an op": (200, 200, 403, 404),
    "patch trip": (200, 200, 403, 404),
    "create invite": (201, 403, 403, 404),
    "list invites": (200, 403, 403, 404),
    "change a role": (200, 403, 403, 404),
    "read comments": (200, 200, 200, 404),
    "comment": (201, 201, 403, 404),
    "vote": (200, 200, 403, 404),
    "upload media": (201, 201, 403, 404),
    "read media": (200, 200, 200, 404),
    "delete an owner's upload": (200, 403, 403, 404),
    "read trip preferences": (200, 200, 200, 404),
    "set trip preferences": (200, 200, 200, 404),
    "delete trip": (200, 403, 403, 404),
}


@pytest.fixture
def world(client):
    names = ("owner", "editor", "viewer", "outsider", "extra")
    owner, editor, viewer, outsider, extra = (signup(client, n) for n in names)
    use(client, owner)
    trip = new_trip(client)
    join(client, owner, trip["id"], editor, "editor")
    join(client, owner, trip["id"], viewer, "viewer")
    join(client, owner, trip["id"], extra, "viewer")
    use(client, owner)
    day = trip["days"][0]["id"]
    stop = op(client, trip["id"], "insert_stop", dayId=day, name="Castle").json()["data"]["trip"]["days"][0]["stops"][0]
    upload = client.post(f"/api/trips/{trip['id']}/media", files={"file": ("a.png", PNG, "image/png")}).json()["data"]
    return {"client": client, "trip": trip["id"], "day": day, "stop": stop["id"], "upload": upload["url"],
            "uploadId": upload["id"],
            "extra": extra["id"], "users": {"owner": owner, "editor": editor, "viewer": viewer, "outsider": outsider}}


def perform(w, action: str):
    c, t, s = w["client"], w["trip"], w["stop"]
    return {
        "read trip": lambda: c.get(f"/api/trips/{t}"),
        "list members": lambda: c.get(f"/api/trips/{t}/members"),
        "list invites": lambda: c.get(f"/api/trips/{t}/invites"),
        "run an op": lambda: op(c, t, "update_day", dayId=w["day"], title="Arrival"),
        "patch trip": lambda: c.patch(f"/api/trips/{t}", json={"title": "Porto"}),
        "create invite": lambda: c.post(f"/api/trips/{t}/invites", json={"role": "viewer"}),
        "change a role": lambda: c.patch(f"/api/trips/{t}/members/{w['extra']}", json={"role": "viewer"}),
        "read comments": lambda: c.get(f"/api/trips/{t}/stops/{s}/comments"),
        "comment": lambda: c.post(f"/api/trips/{t}/stops/{s}/comments", json={"body": "Looks good"}),
        "vote": lambda: c.put(f"/api/trips/{t}/stops/{s}/vote", json={"value": 1}),
        "upload media": lambda: c.post(f"/api/trips/{t}/media", files={"file": ("b.png", PNG, "image/png")}),
        "read media": lambda: c.get(w["upload"]),
        "delete an owner's upload": lambda: c.delete(f"/api/trips/{t}/media/{w['uploadId']}"),
        "read trip preferences": lambda: c.get(f"/api/trips/{t}/preferences"),
        "set trip preferences": lambda: c.put(f"/api/trips/{t}/preferences", json={"pace": "relaxed"}),
        "delete trip": lambda: c.delete(f"/api/trips/{t}"),
    }[action]()


ROLES = ("owner", "editor", "viewer", "outsider")


@pytest.mark.parametrize("action", list(MATRIX))
def test_matrix(world, action):
    # The owner goes last so that deleting the trip cannot hide the others' answers.
    for role in ("outsider", "viewer", "editor", "owner"):
        use(world["client"], world["users"][role])
        response = perform(world, action)
        expected = MATRIX[action][ROLES.index(role)]
        assert response.status_code == expected, f"{action} as {role}: {response.status_code} {response.text}"
        if expected >= 400:
            error = response.json()["error"]
            assert error["code"] and error["message"]


def test_anonymous_gets_401_everywhere(world):
    c = world["client"]
    c.cookies.clear()
    for action in MATRIX:
        assert perform(world, action).status_code == 401, action
    assert c.get("/api/trips").status_code == 401


def test_outsider_sees_the_same_404_as_a_missing_trip(world):
    use(world["client"], world["users"]["outsider"])
    real = world["client"].get(f"/api/trips/{world['trip']}")
    missing = world["client"].get("/api/trips/0000000000000000")
    assert real.status_code == missing.status_code == 404
    assert real.json() == missing.json()


def test_permissions_doc_lists_every_action():
    from pathlib import Path

    doc = (Path(__file__).resolve().parent.parent / "docs" / "permissions.md").read_text()
    for action in MATRIX:
        assert action in doc, f"docs/permissions.md is missing {action!r}"


def test_a_refusal_names_the_callers_role_in_plain_words(world):
    c = world["client"]
    for role, action, message in [
            ("editor", "create invite", "Only the trip's owners can do this; you are an editor on this trip."),
            ("viewer", "create invite", "Only the trip's owners can do this; you are a viewer on this trip."),
            ("viewer", "vote", "Only editors and owners can do this; you are a viewer on this trip.")]:
        use(c, world["users"][role])
        r = perform(world, action)
        assert r.status_code == 403 and r.json()["error"]["message"] == message, (role, action, r.text)
