"""GET /api/admin/ai-usage and the admin page."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel

from helpers import make_client, signup
from standins.openai_standin import TEST_KEY, ai_settings

NOON = datetime(2026, 12, 10, 12, 0, tzinfo=UTC).timestamp()


class Decision(BaseModel):
    shouldNotify: bool


async def model_call(svc, feature: str, user_id: str) -> None:
    """What feature code does: one guarded call through the gateway."""
    await svc.ai.structured(feature=feature, user_id=user_id, trip_id=None, name="intervention_decision",
                            schema=Decision, instructions="Decide.", input="An op happened.",
                            max_output_tokens=svc.settings.ai_max_output_tokens)


def calls(client, user: dict, *features: str) -> None:
    """One model call of each feature, made by `user` through the app's AI gateway."""
    svc = client.app.state.services
    for feature in features:
        client.portal.call(model_call, svc, feature, user["id"])


def test_admin_sees_totals_limits_and_days(settings, openai_standin):
    settings = ai_settings(settings, openai_standin, ai_admins=("ada",), ai_daily_limit=40,
                           ai_price_input_per_mtok=1.0, ai_price_output_per_mtok=4.0)
    openai_standin.reply_json({"shouldNotify": False}, usage=(1000, 100))
    openai_standin.reply_json({"shouldNotify": True}, usage=(2000, 300))
    openai_standin.reply_json({"shouldNotify": True}, usage=(500, 50))
    with make_client(settings, clock=lambda: NOON) as client:
        ada = signup(client, "ada")
        calls(client, ada, "agent_eval", "agent_eval", "copilot")
        r = client.get("/api/admin/ai-usage")
    assert r.status_code == 200, r.text
    data = r.json()["data"]
    today = data["today"]
    assert today["date"] == "2026-12-10"
    assert (today["calls"], today["inputTokens"], today["outputTokens"], today["running"]) == (3, 3500, 450, 0)
    assert today["costUsd"] == 0.0053  # (3500 * 1 + 450 * 4) / 1e6
    assert data["limits"] == {"dailyCalls": 40, "concurrent": settings.ai_concurrent,
                              "dailyTokens": settings.ai_daily_tokens,
                              "maxOutputTokens": settings.ai_max_output_tokens,
                              "timeoutMs": settings.ai_timeout_ms,
                              # each member's fair share: a quarter of each daily limit
                              "userShare": 0.25, "userDailyCalls": 10, "userDailyTokens": settings.ai_daily_tokens // 4}
    assert data["members"] == [{"userId": ada["id"], "name": "ada", "username": "ada", "calls": 3, "tokens": 3950}]
    assert data["days"] == [
        {"date": "2026-12-10", "feature": "agent_eval", "model": settings.openai_model, "calls": 2,
         "inputTokens": 3000, "outputTokens": 400, "costUsd": 0.0046},
        {"date": "2026-12-10", "feature": "copilot", "model": settings.openai_model, "calls": 1,
         "inputTokens": 500, "outputTokens": 50, "costUsd": 0.0007},
    ]
    assert TEST_KEY not in r.text and "sk-" not in r.text


def test_a_deleted_members_use_today_stays_in_the_list_unnamed(settings, openai_standin):
    """Deleting an account cut its usage rows loose (user_id NULL), so the admin's
    list of today's members left it out while the day's total kept it: 5 calls
    today, members adding up to 3. It stays, as "Deleted member", still
    counted against no one else's share."""
    settings = ai_settings(settings, openai_standin, ai_admins=("ada",))
    for _ in range(5):
        openai_standin.reply_json({"shouldNotify": False}, usage=(100, 10))
    with make_client(settings, clock=lambda: NOON) as client:
        bob = signup(client, "bob")
        calls(client, bob, "agent_eval", "copilot")
        assert client.request("DELETE", "/api/users/me", json={"password": "correct horse"}).status_code == 200
        ada = signup(client, "ada")
        calls(client, ada, "copilot", "copilot", "copilot")
        data = client.get("/api/admin/ai-usage").json()["data"]
    assert data["today"]["calls"] == 5
    assert [(m["name"], m["username"], m["calls"], m["tokens"]) for m in data["members"]] == [
        ("ada", "ada", 3, 330), ("Deleted member", None, 2, 220)]
    assert "bob" not in str(data["members"])


def test_everyone_else_gets_404(settings, openai_standin):
    settings = ai_settings(settings, openai_standin, ai_admins=("ada",))
    with make_client(settings) as client:
        anonymous = client.get("/api/admin/ai-usage")
        signup(client, "bob")
        bob = client.get("/api/admin/ai-usage")
    for r in (anonymous, bob):
        assert r.status_code == 404
        assert r.json()["error"]["code"] == "not_found"
        assert TEST_KEY not in r.text


def test_usage_works_without_an_ai_key(settings):
    # AI off: no client, but the limits and the admin view still answer.
    with make_client(settings.with_(ai_admins=("Ada",))) as client:
        assert client.app.state.services.ai is None
        signup(client, "ada")
        r = client.get("/api/admin/ai-usage")
    assert r.status_code == 200
    assert r.json()["data"]["today"] == {"date": datetime.now(UTC).strftime("%Y-%m-%d"), "calls": 0, "inputTokens": 0,
                                         "outputTokens": 0, "costUsd": None, "running": 0, "reservedOutputTokens": 0}
    assert r.json()["data"]["days"] == []


def test_admin_page_is_served(client):
    page = client.get("/admin.html")
    assert page.status_code == 200
    assert '<script type="module" src="/admin.js"></script>' in page.text
    script = client.get("/admin.js")
    assert script.status_code == 200 and "/api/admin/ai-usage" in script.text
