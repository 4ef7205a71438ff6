"""Uploads in the replica's bucket (issue 25): with WAYLINE_REPLICA_URL the
same HTTP routes store, serve and delete files in S3 (moto's server on
loopback), with the same checks as on the volume, and nothing on the volume."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

from app.filestore import open_filestore
from app.filestore.local import LocalFileStore
from helpers import make_client, new_trip, png_bytes, signup, use

PNG = png_bytes()


def upload(client, trip_id, name, data, ctype="application/octet-stream"):
    return client.post(f"/api/trips/{trip_id}/media", files={"file": (name, data, ctype)})


def test_uploads_live_in_the_bucket_and_are_served_to_members_only(settings, s3_standin):
    settings = s3_standin.settings(settings, "prod")
    with make_client(settings) as client:
        alice, eve = signup(client, "alice"), signup(client, "eve")
        use(client, alice)
        t = new_trip(client)["id"]
        r = upload(client, t, "holiday.pdf", PNG, "application/pdf")
        assert r.status_code == 201, r.text
        stored = r.json()["data"]
        name = stored["url"].rsplit("/", 1)[1]
        assert s3_standin.keys() == [f"prod/uploads/{t}/{name}"]
        assert not Path(settings.uploads_dir).exists()   # nothing on the volume

        served = client.get(stored["url"])
        assert served.status_code == 200 and served.content == PNG
        assert served.headers["content-type"] == "image/png"
        assert served.headers["content-length"] == str(len(PNG))
        assert served.headers["x-content-type-options"] == "nosniff"
        assert served.headers["content-security-policy"] == "sandbox; default-src 'none'"
        assert served.headers["content-disposition"] == 'inline; filename="holiday.pdf"'

        # The largest file there may be, bytes intact; a type the bytes do not prove is refused before storing.
        big = b"a" * (2 * 1024 * 1024 - 1) + b"\n"
        r = upload(client, t, "notes ü.md", big)
        assert r.status_code == 201 and r.json()["data"]["mediaType"] == "text/markdown"
        served = client.get(r.json()["data"]["url"])
        assert served.content == big
        assert served.headers["content-disposition"] == "attachment; filename*=utf-8''notes%20%C3%BC.md"
        assert upload(client, t, "photo.png", b"MZ\x90\x00\x03\x00").status_code == 415
        assert upload(client, t, "cut.txt", "ü".encode()[:1]).status_code == 415   # a cut UTF-8 sequence
        assert len(s3_standin.keys()) == 2

        for evil in ("..%2F..%2Fwayline.db", "0123456789abcdef.exe", "0123456789abcdef.png"):
            assert client.get(f"/api/uploads/trips/{t}/{evil}").status_code == 404
        use(client, eve)
        assert client.get(stored["url"]).status_code == 404
        client.cookies.clear()
        assert client.get(stored["url"]).status_code == 401

        use(client, alice)
        assert client.delete(f"/api/trips/{t}").status_code == 200
        assert s3_standin.keys() == []


def test_deleting_an_account_removes_its_own_trips_files_from_the_bucket(settings, s3_standin):
    with make_client(s3_standin.settings(settings)) as client:
        signup(client, "alice")
        mine = new_trip(client)["id"]
        assert upload(client, mine, "n.txt", b"notes").status_code == 201
        assert len(s3_standin.keys(f"wayline/uploads/{mine}/")) == 1
        r = client.request("DELETE", "/api/users/me", json={"password": "correct horse"})
        assert r.status_code == 200 and r.json()["data"]["tripsDeleted"] == 1
        assert s3_standin.keys() == []


def test_an_unreachable_bucket_is_a_503_and_stores_nothing(settings, s3_standin):
    from helpers import refused_port

    with refused_port() as port:
        broken = s3_standin.settings(settings).with_(replica_endpoint=f"http://127.0.0.1:{port}")
        with make_client(broken) as client:
            signup(client)
            t = new_trip(client)["id"]
            r = upload(client, t, "a.png", PNG)
            assert r.status_code == 503, r.text
            assert r.json()["error"]["code"] == "files_unavailable"
            assert "127.0.0.1" not in r.text and "s3" not in r.text.lower()
            assert client.get(f"/api/trips/{t}/media").json()["data"]["media"] == []


def test_the_local_store_writes_a_whole_file_or_none(tmp_path):
    store = LocalFileStore(str(tmp_path / "uploads"))

    class Failing(io.BytesIO):
        def read(self, size=-1):
            if self.tell() >= 4:
                raise OSError("disk went away")
            return super().read(4)

    async def scenario():
        try:
            await store.write("trip/a.txt", Failing(b"0123456789"), 10, "text/plain")
        except OSError:
            pass
        else:
            raise AssertionError("the failure was swallowed")
        assert await store.open("trip/a.txt") is None
        assert list((tmp_path / "uploads" / "trip").iterdir()) == []   # no partial file left
        await store.write("trip/b.txt", io.BytesIO(b"x" * 200_000), 200_000, "text/plain")
        opened = await store.open("trip/b.txt")
        chunks = [chunk async for chunk in opened.chunks]
        assert opened.size == 200_000 and len(chunks) > 1 and b"".join(chunks) == b"x" * 200_000

    asyncio.run(scenario())


def test_the_default_install_never_imports_the_s3_client(settings):
    import subprocess
    import sys

    code = ("import sys; from app.settings import Settings; from app.filestore import open_filestore; "
            f"open_filestore(Settings(uploads_dir={settings.uploads_dir!r})); "
            "from app.web.application import create_app; create_app(Settings()); "
            "print('boto3' in sys.modules, 'botocore' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         cwd=Path(__file__).resolve().parent.parent)
    assert out.stdout.split() == ["False", "False"], out.stderr
    assert isinstance(open_filestore(settings), LocalFileStore)
