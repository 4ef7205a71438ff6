"""Content-Security-Policy on every page (issue 12, failure 7)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.web.csp import tile_source
from helpers import make_client, new_trip, signup

PUBLIC = Path(__file__).resolve().parents[1] / "public"


def policy(response) -> dict[str, list[str]]:
    header = response.headers["content-security-policy"]
    return {d.split()[0]: d.split()[1:] for d in (part.strip() for part in header.split(";")) if d}


@pytest.mark.parametrize("path", ["/", "/admin.html", "/invite/x", "/index.html"])
def test_every_page_carries_a_strict_policy(client, path):
    r = client.get(path)
    assert r.status_code == 200
    csp = policy(r)
    assert csp["script-src"] == ["'self'"]
    assert csp["style-src"] == ["'self'"]
    assert csp["img-src"] == ["'self'", "data:", "https://tile.openstreetmap.org"]
    assert csp["connect-src"] == ["'self'"]
    assert csp["object-src"] == ["'none'"] and csp["frame-ancestors"] == ["'none'"]
    assert not any("google" in source for sources in csp.values() for source in sources)
    assert r.headers["x-frame-options"] == "DENY" and r.headers["x-content-type-options"] == "nosniff"


def test_google_map_hosts_only_with_a_browser_key(settings):
    with make_client(settings.with_(google_maps_browser_key="browser-key")) as client:
        csp = policy(client.get("/"))
    assert "https://*.googleapis.com" in csp["script-src"] and csp["script-src"][0] == "'self'"
    assert "https://*.gstatic.com" in csp["img-src"]
    assert "browser-key" not in str(csp)


def test_the_json_api_has_no_page_policy_and_uploads_keep_their_sandbox(client):
    signup(client, "alice")
    trip = new_trip(client)
    assert "content-security-policy" not in client.get(f"/api/trips/{trip['id']}").headers
    r = client.post(f"/api/trips/{trip['id']}/media", files={"file": ("a.txt", b"hello", "text/plain")})
    served = client.get(r.json()["data"]["url"])
    assert served.headers["content-security-policy"] == "sandbox; default-src 'none'"


def test_tile_host_comes_from_the_tile_url_template():
    assert tile_source(None) == "https://tile.openstreetmap.org"
    assert tile_source("https://{s}.tiles.example.net/{z}/{x}/{y}.png") == "https://*.tiles.example.net"
    assert tile_source("http://127.0.0.1:8123/{z}/{x}/{y}.png") == "http://127.0.0.1:8123"
    assert tile_source("javascript:alert(1)") == "https://tile.openstreetmap.org"


@pytest.mark.parametrize("page", sorted(PUBLIC.glob("*.html")), ids=lambda p: p.name)
def test_pages_have_no_inline_script_or_style_the_policy_would_block(page):
    html = page.read_text(encoding="utf-8")
    for tag in re.findall(r"<script\b[^>]*>", html, re.I):
        assert "src=" in tag, f"inline script in {page.name}: {tag}"
    assert not re.search(r"<style\b", html, re.I), f"inline <style> in {page.name}"
    assert not re.search(r"\sstyle\s*=", html, re.I), f"style attribute in {page.name}"
    assert not re.search(r"\son[a-z]+\s*=", html, re.I), f"inline event handler in {page.name}"
    assert "javascript:" not in html.lower()
