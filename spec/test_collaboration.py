"""Invites, roles, comments, votes and uploads, from the outside."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from helpers import join, new_trip, op, png_bytes, signup, use

PNG = png_bytes()


def test_invite_lifecycle_expired_and_revoked_are_refused(client, settings):
    owner, guest = signup(client, "owner"), signup(client, "guest")
    use(client, owner)
    trip = new_trip(client)
    t = trip["id"]
    created = client.post(f"/api/trips/{t}/invites", json={"role": "viewer"})
    assert created.status_code == 201
    invite = created.json()["data"]
    assert invite["role"] == "viewer" and invite["token"] in invite["url"]

    revoked = client.post(f"/api/trips/{t}/invites", json={"role": "editor"}).json()["data"]
    assert client.delete(f"/api/trips/{t}/invites/{revoked['id']}").status_code == 200
    expired = client.post(f"/api/trips/{t}/invites", json={"role": "editor"}).json()["data"]
    with sqlite3.connect(settings.db_path) as conn:
        conn.execute("UPDATE invites SET expires_at = '2000-01-01T00:00:00.000Z' WHERE id = ?", (expired["id"],))

    use(client, guest)
    r = client.post(f"/api/invites/{revoked['token']}/accept", json={})
    assert r.status_code == 404 and r.json()["error"]["code"] == "invite_invalid"
    r = client.post(f"/api/invites/{expired['token']}/accept", json={})
    assert r.status_code == 404 and r.json()["error"]["code"] == "invite_expired"
    assert client.post("/api/invites/not-a-token/accept", json={}).status_code == 404
    assert client.get(f"/api/trips/{t}").status_code == 404

    shown = client.get(f"/api/invites/{invite['token']}").json()["data"]
    # What the invite page names: the trip, who invited you, when and where.
    assert shown["tripTitle"] == "Lisbon" and shown["role"] == "viewer"
    assert shown["inviterName"] == owner["displayName"] and shown["startDate"] == "2026-12-10"
    assert shown["destination"] == "Lisbon"
    accepted = client.post(f"/api/invites/{invite['token']}/accept", json={}).json()["data"]
    assert accepted == {"tripId": t, "role": "viewer", "joined": True}
    assert client.get(f"/api/trips/{t}").json()["data"]["role"] == "viewer"
    # Accepting again changes nothing.
    again = client.post(f"/api/invites/{invite['token']}/accept", json={}).json()["data"]
    assert again == {"tripId": t, "role": "viewer", "joined": False}


def test_roles_change_and_the_last_owner_stays(client):
    owner, bob = signup(client, "owner"), signup(client, "bob")
    use(client, owner)
    t = new_trip(client)["id"]
    join(client, owner, t, bob, "viewer")
    use(client, owner)
    assert client.patch(f"/api/trips/{t}/members/{bob['id']}", json={"role": "editor"}).status_code == 200
    use(client, bob)
    assert op(client, t, "add_day").status_code == 200
    use(client, owner)
    r = client.patch(f"/api/trips/{t}/members/{owner['id']}", json={"role": "editor"})
    assert r.status_code == 409 and r.json()["error"]["code"] == "last_owner"
    assert client.delete(f"/api/trips/{t}/members/{owner['id']}").status_code == 409
    use(client, bob)
    assert client.delete(f"/api/trips/{t}/members/{bob['id']}").status_code == 200
    assert client.get(f"/api/trips/{t}").status_code == 404


def test_comments_and_votes(client):
    alice, bob = signup(client, "alice"), signup(client, "bob")
    use(client, alice)
    trip = new_trip(client)
    t = trip["id"]
    join(client, alice, t, bob)
    r = op(client, t, "insert_stop", dayId=trip["days"][0]["id"], name="Tram 28")
    stop = r.json()["data"]["trip"]["days"][0]["stops"][0]
    s = stop["id"]
    assert client.post(f"/api/trips/{t}/stops/{s}/comments", json={"body": "Go early!"}).status_code == 201
    assert client.put(f"/api/trips/{t}/stops/{s}/vote", json={"value": 1}).json()["data"]["up"] == 1
    use(client, alice)
    assert client.put(f"/api/trips/{t}/stops/{s}/vote", json={"value": -1}).json()["data"] == {
        "stopId": s, "up": 1, "down": 1, "mine": -1}
    dto_stop = client.get(f"/api/trips/{t}").json()["data"]["days"][0]["stops"][0]
    assert dto_stop["votes"] == {"up": 1, "down": 1, "mine": -1} and dto_stop["commentCount"] == 1
    client.put(f"/api/trips/{t}/stops/{s}/vote", json={"value": 0})
    assert client.get(f"/api/trips/{t}").json()["data"]["days"][0]["stops"][0]["votes"]["mine"] == 0
    comments = client.get(f"/api/trips/{t}/stops/{s}/comments").json()["data"]["comments"]
    assert [(c["author"], c["body"]) for c in comments] == [("bob", "Go early!")]
    assert client.put(f"/api/trips/{t}/stops/{s}/vote", json={"value": 2}).status_code == 422
    assert client.post(f"/api/trips/{t}/stops/nope/comments", json={"body": "x"}).status_code == 404


def test_a_blank_comment_is_refused_not_saved_empty(client):
    signup(client, "alice")
    trip = new_trip(client)
    t = trip["id"]
    s = op(client, t, "insert_stop", dayId=trip["days"][0]["id"], name="Tram 28").json()["data"]["trip"][
        "days"][0]["stops"][0]["id"]
    for blank in (" ", "  \n\t "):
        r = client.post(f"/api/trips/{t}/stops/{s}/comments", json={"body": blank})
        assert r.status_code == 422, r.text
        assert r.json()["error"]["field"] == "body"
    assert client.get(f"/api/trips/{t}/stops/{s}/comments").json()["data"]["comments"] == []
    assert client.get(f"/api/trips/{t}").json()["data"]["days"][0]["stops"][0]["commentCount"] == 0
    r = client.post(f"/api/trips/{t}/stops/{s}/comments", json={"body": "  Go early!  "})
    assert r.status_code == 201 and r.json()["data"]["body"] == "Go early!"


def upload(client, trip_id, name, data, ctype="application/octet-stream"):
    return client.post(f"/api/trips/{trip_id}/media", files={"file": (name, data, ctype)})


def test_uploads_are_typed_from_bytes_and_capped(client, settings):
    signup(client)
    t = new_trip(client)["id"]
    r = upload(client, t, "holiday.pdf", PNG, "application/pdf")
    assert r.status_code == 201
    stored = r.json()["data"]
    assert stored["mediaType"] == "image/png" and stored["url"].endswith(".png")
    served = client.get(stored["url"])
    assert served.status_code == 200 and served.headers["content-type"] == "image/png" and served.content == PNG
    assert served.headers["x-content-type-options"] == "nosniff"

    assert upload(client, t, "notes.md", b"# Day 1\n").json()["data"]["mediaType"] == "text/markdown"
    assert upload(client, t, "a.pdf", b"%PDF-1.7\n...\n%%EOF\n").json()["data"]["mediaType"] == "application/pdf"
    exe = upload(client, t, "photo.png", b"MZ\x90\x00\x03\x00\x00\x00")
    assert exe.status_code == 415 and exe.json()["error"]["code"] == "unsupported_type"

    too_big = upload(client, t, "big.txt", b"a" * (2 * 1024 * 1024 + 1))
    assert too_big.status_code == 413
    exact = upload(client, t, "max.txt", b"a" * (2 * 1024 * 1024))
    assert exact.status_code == 201

    sneaky = upload(client, t, "../../../etc/passwd", b"root:x:0:0")
    assert sneaky.status_code == 201
    assert sneaky.json()["data"]["filename"] == "passwd"
    assert "/etc" not in sneaky.json()["data"]["url"]
    uploads = Path(settings.uploads_dir)
    files = sorted(p.relative_to(uploads).parts[0] for p in uploads.rglob("*") if p.is_file())
    assert set(files) == {t}
    assert not (Path(settings.uploads_dir).parent / "etc").exists()

    for evil in ("..%2F..%2Fwayline.db", "..%2Fx.png", "0123456789abcdef.exe"):
        assert client.get(f"/api/uploads/trips/{t}/{evil}").status_code == 404
    assert client.post(f"/api/trips/{t}/media", json={"file": "x"}).status_code == 400


JPEG = (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"   # SOI, APP0
        b"\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00" + b"\x12\xff\x00\x34" + b"\xff\xd9")   # scan, EOI
WEBP = b"RIFF" + (4 + 8 + 10).to_bytes(4, "little") + b"WEBPVP8L" + (10).to_bytes(4, "little") + b"\x2f" + b"\0" * 9


def test_an_image_or_pdf_must_be_whole(client):
    """A file was accepted as an image from its first bytes alone: a PNG cut
    off after 20 bytes, three bytes of 'JPEG', a PNG with a web page glued on
    after its end were stored and shown to every member as broken images."""
    signup(client)
    t = new_trip(client)["id"]
    for name, data in (("ok.png", PNG), ("ok.jpg", JPEG), ("ok.webp", WEBP), ("ok.pdf", b"%PDF-1.4\n%%EOF")):
        assert upload(client, t, name, data).status_code == 201, name
    assert upload(client, t, "phone.jpg", JPEG + b"SEFT trailer a phone appends").status_code == 201
    before = client.get(f"/api/trips/{t}/media").json()["data"]["media"]
    for name, data in (("cut.png", PNG[:20]), ("cut.png", PNG[:-1]), ("glued.png", PNG + b"<html><script>"),
                       ("magic.jpg", b"\xff\xd8\xff"), ("cut.jpg", JPEG[:-6]), ("cut.webp", WEBP[:-1]),
                       ("cut.pdf", b"%PDF-1.4\n1 0 obj")):
        r = upload(client, t, name, data)
        assert r.status_code == 415 and r.json()["error"]["code"] == "damaged_file", (name, r.text)
        assert r.json()["error"]["message"].startswith(f"{name} is not a whole ")
    assert client.get(f"/api/trips/{t}/media").json()["data"]["media"] == before   # nothing kept


def test_text_named_as_an_image_is_refused(client):
    """An HTML page or an SVG named photo.png was kept as text under that name;
    the bytes decide, and text under an image's or PDF's name is no picture."""
    signup(client)
    t = new_trip(client)["id"]
    for name, data in (("photo.png", b"<html><script>alert(1)</script></html>"),
                       ("photo.png", b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'),
                       ("logo.svg", b'<svg xmlns="http://www.w3.org/2000/svg"/>'), ("doc.PDF", b"plain words")):
        r = upload(client, t, name, data)
        assert r.status_code == 415 and r.json()["error"]["code"] == "unsupported_type", r.text
        assert f"{name} is not a PNG, JPEG or WebP image or a PDF" in r.json()["error"]["message"]
    assert client.get(f"/api/trips/{t}/media").json()["data"]["media"] == []
    # Text under a text name (or any other) is still text.
    assert upload(client, t, "page.html", b"<p>hi</p>").json()["data"]["mediaType"] == "text/plain"


def test_only_images_are_served_inline(client):
    """A PDF was served inline (on our origin, opened in place); everything but an image is a download."""
    signup(client)
    t = new_trip(client)["id"]
    for name, data, disposition in (("a.png", PNG, "inline"), ("a.pdf", b"%PDF-1.4\n%%EOF", "attachment"),
                                    ("a.txt", b"words", "attachment")):
        served = client.get(upload(client, t, name, data).json()["data"]["url"])
        assert served.headers["content-disposition"] == f'{disposition}; filename="{name}"'
        assert served.headers["x-content-type-options"] == "nosniff"
        assert served.headers["cache-control"].startswith("private")


def test_an_upload_is_deleted_by_its_uploader_or_an_owner(client, settings):
    """There was no way to take back a file (a passport scan uploaded by mistake)."""
    owner, ed, eve = signup(client, "owner"), signup(client, "edd"), signup(client, "eve")
    use(client, owner)
    trip = new_trip(client)
    t = trip["id"]
    join(client, owner, t, ed, "editor")
    join(client, owner, t, eve, "editor")
    use(client, ed)
    mine, spare = upload(client, t, "passport.png", PNG).json()["data"], upload(client, t, "b.png", PNG).json()["data"]
    note = f"Scan: ![passport]({mine['url']})"
    stop = op(client, t, "insert_stop", dayId=trip["days"][0]["id"], name="Border", note=note)
    assert stop.status_code == 200, stop.text
    on_disk = Path(settings.uploads_dir) / t / mine["url"].rsplit("/", 1)[1]
    assert on_disk.is_file()

    use(client, eve)                       # another editor: not hers
    r = client.delete(f"/api/trips/{t}/media/{mine['id']}")
    assert r.status_code == 403 and r.json()["error"]["message"].startswith("Only the member who uploaded"), r.text
    assert client.get(mine["url"]).status_code == 200 and on_disk.is_file()    # nothing changed

    use(client, ed)
    assert client.delete(f"/api/trips/{t}/media/{mine['id']}").json()["data"] == {"deleted": True}
    assert client.get(mine["url"]).status_code == 404 and not on_disk.exists()
    assert [m["id"] for m in client.get(f"/api/trips/{t}/media").json()["data"]["media"]] == [spare["id"]]
    r = client.delete(f"/api/trips/{t}/media/{mine['id']}")
    assert r.status_code == 404 and r.json()["error"]["code"] == "upload_not_found"
    # The stop that showed it keeps its words; the image is simply gone.
    assert client.get(f"/api/trips/{t}").json()["data"]["days"][0]["stops"][0]["note"] == note

    use(client, owner)                     # an owner may delete anyone's
    assert client.delete(f"/api/trips/{t}/media/{spare['id']}").status_code == 200
    use(client, ed)
    ours = upload(client, t, "c.png", PNG).json()["data"]
    use(client, owner)
    client.patch(f"/api/trips/{t}/members/{ed['id']}", json={"role": "viewer"})
    use(client, ed)                        # a viewer now: not even their own
    assert client.delete(f"/api/trips/{t}/media/{ours['id']}").status_code == 403
    assert client.get(ours["url"]).status_code == 200


def test_uploads_are_served_to_members_only(client):
    alice, eve = signup(client, "alice"), signup(client, "eve")
    use(client, alice)
    t = new_trip(client)["id"]
    url = upload(client, t, "a.png", PNG).json()["data"]["url"]
    use(client, eve)
    assert client.get(url).status_code == 404
    client.cookies.clear()
    assert client.get(url).status_code == 401


def test_deleting_a_trip_removes_its_files(client, settings):
    signup(client)
    t = new_trip(client)["id"]
    upload(client, t, "a.png", PNG)
    assert (Path(settings.uploads_dir) / t).is_dir()
    assert client.delete(f"/api/trips/{t}").status_code == 200
    assert not (Path(settings.uploads_dir) / t).exists()
    assert client.get(f"/api/trips/{t}").status_code == 404
