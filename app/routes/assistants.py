"""Account -> "Connected assistants": your personal access tokens for
outside AI assistants over MCP (app/assistants/tokens.py). The token itself
is in the answer that creates it, and nowhere else, ever."""

from __future__ import annotations

from starlette.requests import Request
from starlette.routing import Route

from ..assistants import tokens
from .common import body, ok, public_base, services, signed_in
from .openapi import describe


@describe(summary="Your connected assistants: name, trip, scope, created, last used (never the token)")
async def list_tokens(request: Request):
    user = await signed_in(request)
    return ok({"tokens": await tokens.list_tokens(services(request), user["id"]),
               "mcpUrl": f"{public_base(request)}/mcp"})


@describe(body=tokens.NewToken, summary="Connect an assistant: a token for one trip or all yours, read or "
                                        "propose; shown only in this answer")
async def create_token(request: Request):
    user = await signed_in(request)
    new = await body(request, tokens.NewToken)
    token, entry = await tokens.create(services(request), user["id"], new)
    return ok({**entry, "token": token, "mcpUrl": f"{public_base(request)}/mcp"}, status=201)


@describe(summary="Revoke a connected assistant's token: its next call is refused")
async def revoke_token(request: Request):
    user = await signed_in(request)
    await tokens.revoke(services(request), user["id"], request.path_params["tokenId"])
    return ok({"revoked": True})


routes = [
    Route("/api/users/me/assistants", list_tokens, methods=["GET"]),
    Route("/api/users/me/assistants", create_token, methods=["POST"]),
    Route("/api/users/me/assistants/{tokenId}", revoke_token, methods=["DELETE"]),
]
