"""Markdown links and images resolved and normalised before they are allowed
(issue 22, failure 8): `![a](/api/uploads/../trips/<id>/live?1)` in a note made
every viewer's browser open a live stream. The server refuses such text; the
page's renderer (public/links.js) never draws it as an image or a link. Both
run spec/fixtures/markdown_links.json."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from app.markdown_links import link_target
from helpers import new_trip, op, png_bytes, signup
from nodetest import node_test

ROOT = Path(__file__).resolve().parents[1]
VECTORS = json.loads((ROOT / "spec" / "fixtures" / "markdown_links.json").read_text())
JS_TEST = ROOT / "spec" / "js" / "links.test.mjs"
PNG = png_bytes()


@pytest.mark.parametrize("vector", VECTORS["vectors"], ids=lambda v: v["name"])
def test_the_server_rule_on_the_shared_vectors(vector):
    assert link_target(vector["url"], VECTORS["tripId"], VECTORS["origin"]) == vector["expect"]


def test_the_page_rule_on_the_shared_vectors():
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH: public/links.js cannot be checked against the vectors (install Node 20+)")
    proc = subprocess.run([node, "--test", str(JS_TEST)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"node --test failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}"


def test_notes_comments_and_messages_refuse_links_that_leave_the_trips_files(client):
    signup(client, "alice")
    trip = new_trip(client)
    t, day = trip["id"], trip["days"][0]["id"]
    attack = f"Look ![a](/api/uploads/../trips/{t}/live?1)"
    r = op(client, t, "insert_stop", dayId=day, name="Castle", note=attack)
    assert r.status_code == 422 and r.json()["error"]["field"] == "note", r.text
    assert "web address" in r.json()["error"]["message"]
    assert op(client, t, "update_day", dayId=day, note=attack).status_code == 422
    assert op(client, t, "add_day", note="[me](/api/auth/me)").status_code == 422
    stop = op(client, t, "insert_stop", dayId=day, name="Castle").json()["data"]["trip"]["days"][0]["stops"][0]
    assert op(client, t, "update_stop", stopId=stop["id"], note="![x](javascript:alert(1))").status_code == 422
    r = client.post(f"/api/trips/{t}/stops/{stop['id']}/comments", json={"body": attack})
    assert r.status_code == 422, r.text
    assert client.get(f"/api/trips/{t}").json()["data"]["version"] == trip["version"] + 1   # only the plain stop
    # This trip's own files and web addresses are fine.
    photo = client.post(f"/api/trips/{t}/media", files={"file": ("p.png", PNG, "image/png")}).json()["data"]
    note = f"![castle]({photo['url']}) and [the museum](https://www.museu.example/visit?lang=en)"
    r = op(client, t, "update_stop", stopId=stop["id"], note=note)
    assert r.status_code == 200, r.text
    assert client.post(f"/api/trips/{t}/stops/{stop['id']}/comments", json={"body": note}).status_code == 201


def test_chat_messages_refuse_them_too(settings, openai_standin):
    from test_agent_support import agent_client, user_message

    with agent_client(settings, openai_standin) as client:
        signup(client, "alice")
        trip = new_trip(client)
        attack = f"see ![a](/api/uploads/../trips/{trip['id']}/live?1)"
        r = client.post(f"/api/trips/{trip['id']}/agent/messages", json={"text": attack})
        assert r.status_code == 422 and r.json()["error"]["field"] == "text", r.text
        r = client.post(f"/api/trips/{trip['id']}/agent/chat", json={"messages": [user_message("@agent " + attack)]})
        assert r.status_code == 422 and r.json()["error"]["field"] == "text", r.text
        assert openai_standin.requests == []
        r = client.post(f"/api/trips/{trip['id']}/agent/messages", json={"text": "menu: [here](https://x.example/m)"})
        assert r.status_code in (200, 201), r.text


def test_the_stop_dialog_finds_and_takes_out_a_notes_uploads(client):
    """public/planner/notelinks.js (spec/js/notelinks.test.mjs): the uploads a
    note links, the note without one of them, who is offered Remove and its
    refusals in words. It reads an upload's id from its stored name, which
    this pins on the server's side."""
    signup(client, "alice")
    t = new_trip(client)["id"]
    saved = client.post(f"/api/trips/{t}/media", files={"file": ("castle.png", PNG, "image/png")}).json()["data"]
    assert saved["url"].rsplit("/", 1)[1].split(".")[0] == saved["id"]
    node_test(ROOT / "spec" / "js" / "notelinks.test.mjs")
