"""`/mcp`: the MCP endpoint for outside AI assistants (app/assistants/).

Only the door is here: the `Authorization: Bearer` personal access token is
checked (401 in the API's error shape for a missing, unknown or revoked
token) and the request goes on to the SDK's streamable HTTP transport with
the caller beside it. Not under /api: assistants call from outside the page,
with no cookie, so the same-origin rule does not apply (nor is it needed: a
browser page cannot know the token).
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.routing import Route

from ..assistants.tokens import authenticate
from ..errors import NotSignedIn


def bearer(scope) -> str | None:
    for name, value in scope["headers"]:
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" else None
    return None


class MCPEndpoint:
    """An ASGI app (not a request handler): the transport answers in its own way."""

    async def __call__(self, scope, receive, send) -> None:
        if scope["method"] != "POST":
            # The transport is stateless (each request stands alone): no session
            # to end with DELETE, and nothing the server would ever send on the
            # stream a GET opens (the SDK held one open, empty, for as long as
            # the client kept it). MCP lets such a server answer 405, which the
            # SDK's clients expect; they never GET without a session id.
            raise HTTPException(405, "This address takes MCP messages sent with POST only.", headers={"Allow": "POST"})
        svc = scope["state"]["services"]
        caller = await authenticate(svc, bearer(scope), svc.last_use)
        if caller is None:
            error = NotSignedIn("This assistant's access token is missing, unknown or revoked. Create one under "
                                "Account, Connected assistants.", code="invalid_token")
            response = JSONResponse(error.to_json(), status_code=error.status,
                                    headers={"WWW-Authenticate": 'Bearer realm="Wayline"'})
            await response(scope, receive, send)
            return
        await svc.assistants.handle(scope, receive, send, caller, svc)


routes = [Route("/mcp", endpoint=MCPEndpoint())]   # every method: the endpoint answers the ones it refuses
