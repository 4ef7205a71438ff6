"""The page's files over HTTP (app/web/static_assets.py): compressed once in
the coding the browser accepts, revalidated with their ETag, an edit on disk
served at once, and nothing outside the folder reachable. (httpx decodes br
and gzip: `.content` is what the browser gets after decoding, the headers say
what travelled.)"""

from __future__ import annotations

import os
from pathlib import Path

from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from app.web import static_assets
from app.web.application import PUBLIC_DIR
from app.web.static_assets import StaticAssets
from helpers import make_client

IDENTITY = {"accept-encoding": "identity"}


def test_a_module_comes_in_the_coding_the_browser_accepts_and_is_the_file(settings):
    on_disk = (PUBLIC_DIR / "planner" / "ui.js").read_bytes()
    with make_client(settings) as client:
        br = client.get("/planner/ui.js", headers={"accept-encoding": "gzip, deflate, br"})
        gz = client.get("/planner/ui.js", headers={"accept-encoding": "gzip"})
        plain = client.get("/planner/ui.js", headers=IDENTITY)
        refused = client.get("/planner/ui.js", headers={"accept-encoding": "br;q=0, gzip"})
    assert br.headers["content-encoding"] == "br" and br.content == on_disk
    assert gz.headers["content-encoding"] == "gzip" and gz.content == on_disk
    assert "content-encoding" not in plain.headers and plain.content == on_disk
    assert refused.headers["content-encoding"] == "gzip"
    for r in (br, gz, plain):
        assert r.status_code == 200
        assert r.headers["content-type"] == "text/javascript; charset=utf-8"
        assert r.headers["cache-control"] == "no-cache"   # kept, but asked again: module names carry no version
        assert r.headers["vary"] == "Accept-Encoding"
        assert r.headers["content-security-policy"]       # the pages' headers, as before
    assert int(br.headers["content-length"]) < int(gz.headers["content-length"]) < len(on_disk)
    assert br.headers["etag"] == gz.headers["etag"] == plain.headers["etag"]


def test_a_kept_file_is_revalidated_with_a_304_and_no_body(settings):
    with make_client(settings) as client:
        first = client.get("/app.js")
        again = client.get("/app.js", headers={"if-none-match": first.headers["etag"]})
        weak = client.get("/app.js", headers={"if-none-match": f'"other", W/{first.headers["etag"]}'})
        by_date = client.get("/app.js", headers={"if-modified-since": first.headers["last-modified"]})
        stale = client.get("/app.js", headers={"if-none-match": '"other"'})
        head = client.head("/styles.css", headers=IDENTITY)
    assert again.status_code == weak.status_code == by_date.status_code == 304
    assert again.content == b"" and again.headers["etag"] == first.headers["etag"]
    assert stale.status_code == 200 and stale.content == first.content
    assert head.status_code == 200 and head.content == b""
    assert int(head.headers["content-length"]) == (PUBLIC_DIR / "styles.css").stat().st_size


def test_small_files_and_images_go_as_they_are(settings):
    with make_client(settings) as client:
        manifest = client.get("/manifest.webmanifest", headers={"accept-encoding": "br, gzip"})
        icon = client.get("/icons/icon-512.png", headers={"accept-encoding": "br, gzip"})
        home = client.get("/", headers=IDENTITY)
    assert manifest.headers["content-type"] == "application/manifest+json"
    assert "content-encoding" not in manifest.headers and "vary" not in manifest.headers   # under 4 KB
    assert icon.headers["content-type"] == "image/png" and "content-encoding" not in icon.headers
    assert icon.content == (PUBLIC_DIR / "icons" / "icon-512.png").read_bytes()
    assert home.headers["content-type"] == "text/html; charset=utf-8"
    assert home.content == (PUBLIC_DIR / "index.html").read_bytes()


def test_leaflet_comes_from_its_package_compressed(settings):
    with make_client(settings) as client:
        r = client.get("/vendor/leaflet/leaflet-src.esm.js", headers={"accept-encoding": "br"})
    assert r.status_code == 200 and r.headers["content-encoding"] == "br"
    assert b"Leaflet" in r.content


def test_nothing_outside_the_folder_and_only_reads(settings, tmp_path):
    (tmp_path / "secret.txt").write_text("not for you")
    with make_client(settings) as client:
        answers = [client.get(path) for path in (
            "/../pyproject.toml", "/%2e%2e/pyproject.toml", "/planner/../../app/settings.py", "/nope.js",
            "/offline", "/offline/", "/icons/", "/vendor/leaflet/../../../../etc/passwd", "/app.js%00.png")]
        post = client.post("/app.js")
    for r in answers:
        assert r.status_code == 404, (r.url, r.text)
        assert r.json() == {"error": {"code": "not_found", "message": "Not found"}}
    assert post.status_code == 405 and post.json()["error"]["code"] == "method_not_allowed"
    assert post.headers["allow"] == "GET, HEAD"   # a 405 says what is allowed (RFC 9110)


def _folder_app(folder: Path) -> TestClient:
    return TestClient(Starlette(routes=[Mount("/", app=StaticAssets(folder, html=True))]))


def test_an_edit_on_disk_is_served_at_once_and_a_link_out_is_not(tmp_path):
    site, outside = tmp_path / "site", tmp_path / "outside"
    site.mkdir()
    outside.mkdir()
    page = site / "page.js"
    page.write_text("export const version = 1;\n" * 300)
    (outside / "secret.txt").write_text("not for you")
    os.symlink(outside / "secret.txt", site / "link.txt")
    with _folder_app(site) as client:
        first = client.get("/page.js", headers={"accept-encoding": "br"})
        page.write_text("export const version = 2;\n" * 300)
        os.utime(page, ns=(page.stat().st_mtime_ns + 10**9,) * 2)   # a clock that moved on
        second = client.get("/page.js", headers={"accept-encoding": "br"})
        revalidated = client.get("/page.js", headers={"if-none-match": first.headers["etag"]})
        link = client.get("/link.txt")
    assert b"version = 1" in first.content
    assert b"version = 2" in second.content
    assert second.headers["etag"] != first.headers["etag"]
    assert revalidated.status_code == 200   # the old ETag no longer matches
    assert link.status_code == 404


def test_a_file_is_compressed_once_for_every_request_and_app(settings, monkeypatch):
    calls = []
    real = static_assets.compress_once
    monkeypatch.setattr(static_assets, "compress_once", lambda body, coding: calls.append(coding) or real(body, coding))
    static_assets._assets.pop(os.path.realpath(PUBLIC_DIR / "planner" / "dayview.js"), None)
    bodies = []
    for _ in range(2):   # two apps, as two tests or two workers' servers in one process
        with make_client(settings) as client:
            bodies += [client.get("/planner/dayview.js", headers={"accept-encoding": "br"}).content for _ in range(3)]
    assert calls == ["br"] and len(set(bodies)) == 1
