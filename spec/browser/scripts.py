"""Scripted answers for the OpenAI stand-in in browser tests: a responder that
answers each structured-output request by its schema name, and helpers to
script agent chat turns."""

from __future__ import annotations

import json

from standins.openai_standin import Reply, function_call_item, message_item


def _json(obj) -> Reply:
    return Reply(output=[message_item(json.dumps(obj))])


def user_facts(body: dict) -> dict:
    """The JSON facts the planner sends as the user message."""
    for item in body.get("input") or []:
        content = item.get("content")
        if isinstance(content, str):
            try:
                return json.loads(content)
            except ValueError:
                continue
        if isinstance(content, list):
            for part in content:
                text = part.get("text") if isinstance(part, dict) else None
                if text:
                    try:
                        return json.loads(text)
                    except ValueError:
                        continue
    return {}


def plan_day_answer(body: dict) -> dict:
    """A valid plan: the free stops reversed, plus the first candidate after
    the last stop of that new order (the end of the day, when places are open)."""
    facts = user_facts(body)
    free = facts.get("freeStopIds", [])
    stops = facts.get("stops", [])
    candidates = facts.get("candidates", [])
    additions = []
    if candidates and stops:
        last = free[0] if stops[-1]["id"] in free else stops[-1]["id"]   # reversed: the first free stop ends the day
        additions = [{"placeId": candidates[0]["placeId"], "afterStopId": last}]
    return {"order": list(reversed(free)), "additions": additions,
            "summary": "Reversed the visits to save walking and added a well-rated place at the end."}


KEEP_SUMMARY = "Your day already flows well, so I kept every stop where it is."


def keeping_responder(request) -> Reply:
    """quiet_responder, but the plan keeps the day as it is: the free stops in
    their own order, nothing added."""
    body = request.body or {}
    if ((body.get("text") or {}).get("format") or {}).get("name") == "plan_day":
        return _json({"order": user_facts(body).get("freeStopIds", []), "additions": [], "summary": KEEP_SUMMARY})
    return quiet_responder(request)


def quiet_responder(request) -> Reply:
    """Answers every background/structured call calmly; chat turns get plain text."""
    body = request.body or {}
    name = ((body.get("text") or {}).get("format") or {}).get("name")
    if name == "plan_day":
        return _json(plan_day_answer(body))
    if name == "is_addressed":
        return _json({"addressed": False})
    if name == "intervention_decision":
        return _json({"shouldNotify": False, "severity": "low", "confidence": 0.1, "reason": "Nothing material.",
                      "suggestion": "", "pendingPatch": None, "expiresInMinutes": 60, "fixId": None})
    if name == "copilot_answer":
        return _json({"answer": "The day looks fine.", "recommendedFixIds": []})
    return Reply(output=[message_item("Noted.")])


def tool_call(name: str, args: dict) -> Reply:
    return Reply(output=[function_call_item(name, args)])


def proposing_responder(request) -> Reply:
    """Like quiet_responder, but an intervention decision proposes the first fix
    the review computed, with high confidence (a suggestion card for members)."""
    body = request.body or {}
    name = ((body.get("text") or {}).get("format") or {}).get("name")
    if name == "intervention_decision":
        raw = body.get("input")
        payload = json.loads(raw) if isinstance(raw, str) else user_facts(body)
        fixes = [f for r in payload.get("newRisks", []) for f in r.get("fixes", [])]
        risk = (payload.get("newRisks") or [{}])[0]
        return _json({"shouldNotify": bool(fixes), "severity": "high", "confidence": 0.92,
                      "reason": risk.get("message", "Two stops overlap."),
                      "suggestion": "Move the second stop so the times work.",
                      "pendingPatch": None, "fixId": fixes[0]["id"] if fixes else None,
                      "expiresInMinutes": 60})
    return quiet_responder(request)


def _copilot_facts(body: dict) -> dict:
    """The day's facts the copilot sends: JSON after the first line of the first message."""
    for item in body.get("input") or []:
        content = item.get("content")
        text = content if isinstance(content, str) else " ".join(
            p.get("text", "") for p in content or [] if isinstance(p, dict))
        if text.startswith("Facts about the day"):
            return json.loads(text.split("\n", 1)[1])
    return {}


def recommending_responder(request) -> Reply:
    """Like quiet_responder, but the copilot recommends the first fix the review computed."""
    body = request.body or {}
    name = ((body.get("text") or {}).get("format") or {}).get("name")
    if name == "copilot_answer":
        findings = _copilot_facts(body).get("review", {}).get("findings", [])
        fixes = [x["id"] for f in findings for x in f.get("fixes", [])]
        return _json({"answer": "Two set times clash; clearing one fixes it.", "recommendedFixIds": fixes[:1]})
    return quiet_responder(request)
