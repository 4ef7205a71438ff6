"""Invite links end for a removed member; owners list and revoke them; a
link is never built from the request's Host (issue 22, failure 4 and item 11)."""

from __future__ import annotations

import asyncio

from app import members
from app.errors import NotFound
from app.trips import catalog
from helpers import held_at_its_write, join, make_client, new_trip, op, signup, use


def invite(client, trip_id: str, role: str = "editor") -> dict:
    r = client.post(f"/api/trips/{trip_id}/invites", json={"role": role})
    assert r.status_code == 201, r.text
    return r.json()["data"]


def test_a_removed_member_cannot_rejoin_with_the_link_they_used(client):
    """It answered 200 `joined: true`, and the removed member edited again."""
    owner, mallory, carol = signup(client, "owner"), signup(client, "mallory"), signup(client, "carol")
    use(client, owner)
    trip = new_trip(client)
    link, unused = invite(client, trip["id"]), invite(client, trip["id"], "viewer")
    use(client, mallory)
    assert client.post(f"/api/invites/{link['token']}/accept", json={}).json()["data"]["joined"] is True
    use(client, owner)
    assert client.delete(f"/api/trips/{trip['id']}/members/{mallory['id']}").status_code == 200

    use(client, mallory)
    r = client.post(f"/api/invites/{link['token']}/accept", json={})
    assert r.status_code == 403 and r.json()["error"]["code"] == "removed_from_trip", r.text
    assert "owner" in r.json()["error"]["message"]
    assert client.get(f"/api/trips/{trip['id']}").status_code == 404
    assert op(client, trip["id"], "add_day").status_code == 404
    # Any link made before the removal is closed to them, used or not ...
    assert client.post(f"/api/invites/{unused['token']}/accept", json={}).status_code == 403
    # ... and still works for anyone else.
    use(client, carol)
    assert client.post(f"/api/invites/{link['token']}/accept", json={}).json()["data"]["joined"] is True
    # An owner who wants them back makes a new link.
    use(client, owner)
    again = invite(client, trip["id"], "viewer")
    use(client, mallory)
    r = client.post(f"/api/invites/{again['token']}/accept", json={})
    assert r.status_code == 200 and r.json()["data"] == {"tripId": trip["id"], "role": "viewer", "joined": True}


def test_a_member_who_leaves_by_themselves_may_come_back(client):
    owner, bob = signup(client, "owner"), signup(client, "bob")
    use(client, owner)
    trip = new_trip(client)
    link = invite(client, trip["id"])
    use(client, bob)
    client.post(f"/api/invites/{link['token']}/accept", json={})
    assert client.delete(f"/api/trips/{trip['id']}/members/{bob['id']}").status_code == 200
    assert client.post(f"/api/invites/{link['token']}/accept", json={}).json()["data"]["joined"] is True


def test_owners_list_their_links_with_who_joined_and_revoke_them(client):
    owner, bob, eve = signup(client, "owner"), signup(client, "bob"), signup(client, "eve")
    use(client, owner)
    trip = new_trip(client)
    editors, viewers = invite(client, trip["id"]), invite(client, trip["id"], "viewer")
    use(client, bob)
    client.post(f"/api/invites/{editors['token']}/accept", json={})
    use(client, owner)
    r = client.get(f"/api/trips/{trip['id']}/invites")
    assert r.status_code == 200, r.text
    links = {i["id"]: i for i in r.json()["data"]["invites"]}
    assert set(links) == {editors["id"], viewers["id"]}
    assert links[editors["id"]]["role"] == "editor" and links[editors["id"]]["createdByName"] == owner["displayName"]
    assert [j["displayName"] for j in links[editors["id"]]["joined"]] == [bob["displayName"]]
    assert links[viewers["id"]]["joined"] == []
    assert "token" not in r.text and editors["token"] not in r.text   # shown once, when made
    # Revoked: gone from the list, and the link no longer opens.
    assert client.delete(f"/api/trips/{trip['id']}/invites/{viewers['id']}").status_code == 200
    listed = client.get(f"/api/trips/{trip['id']}/invites").json()["data"]["invites"]
    assert [i["id"] for i in listed] == [editors["id"]]
    use(client, eve)
    assert client.post(f"/api/invites/{viewers['token']}/accept", json={}).status_code == 404
    # Only owners list them.
    join(client, owner, trip["id"], eve, "editor")
    assert client.get(f"/api/trips/{trip['id']}/invites").status_code == 403


def test_invite_links_never_come_from_the_host_header(settings):
    """Without WAYLINE_PUBLIC_URL the link was built from `Host`: a forged Host
    made the owner copy a link to another site. Now it is a path on the page's
    own origin (the page makes it absolute from where it was opened)."""
    with make_client(settings) as client:
        signup(client, "owner")
        trip = new_trip(client)
        r = client.post(f"/api/trips/{trip['id']}/invites", json={"role": "viewer"},
                        headers={"Host": "evil.example", "X-Forwarded-Host": "evil.example"})
        link = r.json()["data"]
        assert link["url"] == f"/#/invite/{link['token']}"
    with make_client(settings.with_(public_url="https://wayline.example/")) as client:
        use(client, signup(client, "owner2"))
        trip = new_trip(client)
        link = client.post(f"/api/trips/{trip['id']}/invites", json={"role": "viewer"},
                           headers={"Host": "evil.example"}).json()["data"]
        assert link["url"] == f"https://wayline.example/#/invite/{link['token']}"


def services(client):
    return client.app.state.services


def _accept_racing(client, settings, end_link):
    """Accept a link whose check passed, while `end_link(svc, trip, owner,
    link)` ends it before the join is written; returns what accepting raised."""
    owner, eve = signup(client, "owner"), signup(client, "eve")
    use(client, owner)
    trip = new_trip(client)
    link = invite(client, trip["id"])
    svc = services(client)

    async def race():
        accepting, release = await held_at_its_write(
            svc.db, lambda: members.accept_invite(svc.db, link["token"], eve["id"]))   # the link was open then
        await end_link(svc, trip, owner, link)
        release()
        return (await asyncio.gather(accepting, return_exceptions=True))[0]

    raised = client.portal.call(race)
    use(client, eve)
    assert client.get(f"/api/trips/{trip['id']}").status_code == 404
    return raised


def test_a_link_revoked_while_it_is_being_accepted_lets_no_one_in(client, settings):
    """It joined eve through a link the owner had revoked a moment before."""
    async def revoke(svc, trip, owner, link):
        await members.revoke_invite(svc.db, trip["id"], owner["id"], link["id"])

    raised = _accept_racing(client, settings, revoke)
    assert isinstance(raised, NotFound) and raised.code == "invite_invalid", raised


def test_a_trip_deleted_while_its_link_is_being_accepted_is_plainly_gone(client, settings):
    """It failed on the database's foreign key (a 500) instead of saying the link is gone."""
    async def delete(svc, trip, owner, link):
        await catalog.delete_trip(svc.db, svc.files, trip["id"], owner["id"])

    raised = _accept_racing(client, settings, delete)
    assert isinstance(raised, NotFound) and raised.code == "invite_invalid", raised
