"""AI usage for the admins named in WAYLINE_AI_ADMINS; a 404 for everyone else
(signed in or not), so the page's existence is not revealed."""

from __future__ import annotations

from starlette.requests import Request
from starlette.routing import Route

from ..errors import NotFound
from .common import current_user, ok, services
from .openapi import describe


async def require_admin(request: Request) -> dict:
    user = await current_user(request)
    if user is None or not services(request).settings.is_ai_admin(user["username"]):
        raise NotFound("Not found")
    return user


@describe(summary="AI usage: today against the limits, each member's share today, the last 30 days (admins only)")
async def ai_usage(request: Request):
    await require_admin(request)
    usage = services(request).aiusage
    return ok({
        "today": await usage.today_summary(),
        "limits": usage.limits(),
        "members": await usage.members_today(),
        "days": await usage.last_30_days(),
    })


routes = [
    Route("/api/admin/ai-usage", ai_usage, methods=["GET"]),
]
