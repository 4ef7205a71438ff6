"""The installable page: the manifest and its icons (real PNGs of the sizes
it names), and /sw.js, the service worker with the shell it caches written
in front of it (app/web/service_worker.py)."""

from __future__ import annotations

import json
import re
import shutil
import struct

from app.web.application import PUBLIC_DIR
from app.web.service_worker import ShellWorker
from nodetest import ROOT, node_test


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def shell_of(script: bytes) -> dict:
    head, _ = script.split(b";\n", 1)
    assert head.startswith(b"const SHELL = ")
    return json.loads(head[len(b"const SHELL = "):])


def test_the_manifest_makes_the_page_installable(client):
    r = client.get("/manifest.webmanifest")
    assert r.status_code == 200
    manifest = r.json()
    assert manifest["name"] == "Wayline" and manifest["short_name"]
    assert manifest["start_url"] == "/#/" and manifest["display"] == "standalone"
    assert re.fullmatch(r"#[0-9a-f]{6}", manifest["theme_color"]) and manifest["background_color"]
    sizes = {}
    for icon in manifest["icons"]:
        got = client.get(icon["src"])
        assert got.status_code == 200 and got.headers["content-type"] == "image/png"
        width, height = png_size(got.content)
        assert icon["sizes"] == f"{width}x{height}" and icon["type"] == "image/png"
        sizes.setdefault(icon.get("purpose", "any"), set()).add(width)
    assert {192, 512} <= sizes["any"]
    assert '<link rel="manifest" href="/manifest.webmanifest">' in client.get("/").text


def test_the_service_worker_comes_from_our_origin_with_the_whole_shell(client):
    r = client.get("/sw.js")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/javascript")
    assert r.headers["cache-control"] == "no-cache"   # every start checks for a new version
    assert "worker-src 'self'" in r.headers["content-security-policy"]
    shell = shell_of(r.content)
    assert re.fullmatch(r"[0-9a-f]{16}", shell["version"])
    files = set(shell["files"])
    assert {"/", "/app.js", "/api.js", "/styles.css", "/offline/outbox.js", "/planner/page.js", "/manifest.webmanifest",
            "/icons/icon-192.png", "/vendor/leaflet/leaflet-src.esm.js", "/vendor/leaflet/leaflet.css"} <= files
    assert not {"/sw.js", "/admin.html", "/admin.js", "/cards-gallery.html"} & files
    for path in files:   # every file the worker caches at install is there to be cached
        assert client.get(path).status_code == 200, path
    assert r.content.endswith((PUBLIC_DIR / "sw.js").read_bytes())


def test_any_change_to_the_page_is_a_new_version(tmp_path):
    page = tmp_path / "public"
    shutil.copytree(PUBLIC_DIR, page)
    worker = ShellWorker(page)
    first = shell_of(worker.script())
    assert shell_of(worker.script()) == first   # unchanged files, the same script
    (page / "offline" / "new-module.js").write_text("export const x = 1;\n")
    second = shell_of(worker.script())
    assert second["version"] != first["version"] and "/offline/new-module.js" in second["files"]
    with (page / "styles.css").open("a") as css:
        css.write("/* a change */\n")
    assert shell_of(worker.script())["version"] != second["version"]


def test_a_refused_upload_is_not_answered_with_a_kept_thumbnail():
    """The worker answered any non-200 for an upload with the thumbnail the page
    kept: a member removed from the trip, or a file or trip since deleted (404),
    still saw the picture. Only no connection or a 5xx falls back to it."""
    node_test(ROOT / "spec" / "js" / "sw.test.mjs")
