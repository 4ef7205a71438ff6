"""Who a chat message is for (app/agent/addressing.py), against the vectors the
page's twin (public/panels/addressing.js) runs too."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from app.agent.addressing import decide, member_names

ROOT = Path(__file__).resolve().parent.parent
VECTORS = json.loads((ROOT / "spec" / "fixtures" / "addressing_vectors.json").read_text(encoding="utf-8"))
JS_TEST = ROOT / "spec" / "js" / "addressing.test.mjs"


@pytest.mark.parametrize("vector", VECTORS["vectors"], ids=lambda v: v["name"])
def test_vector(vector):
    got = decide(vector["text"], after_agent=vector["afterAgent"], members=VECTORS["members"],
                 ai_on=vector.get("aiOn", True))
    assert got.to_json() == vector["expect"]


def test_names_are_longest_first_and_never_the_agent():
    names = member_names([{"username": "agent", "displayName": "Ana"}, {"username": "ana2", "displayName": "Ana Rita"},
                          {"username": "x", "displayName": ""}])
    assert [key for key, _ in names] == ["ana rita", "ana2", "ana"]   # one-letter and "agent" are no names


def test_js_twin_passes_the_same_vectors():
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH: public/panels/addressing.js cannot be checked against the vectors "
                    "(install Node 20+ to run spec/js/addressing.test.mjs)")
    proc = subprocess.run([node, "--test", str(JS_TEST)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"node --test failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}"


def test_a_connected_assistants_proposal_opens_no_agent_turn():
    from datetime import UTC, datetime

    from app.agent.addressing import after_agent

    now = datetime(2027, 5, 3, 12, 0, tzinfo=UTC)
    answer = {"role": "assistant", "source": "chat", "created_at": "2027-05-03T11:59:00.000Z"}
    assert after_agent(answer, now) is True
    assert after_agent({**answer, "source": "assistant"}, now) is False   # "Claude via Alice proposes: ..."
    assert after_agent({**answer, "source": "threshold"}, now) is False
