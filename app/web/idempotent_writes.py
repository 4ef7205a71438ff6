"""The Idempotency-Key header on writes (app/idempotency.py keeps the answers).

A signed-in member's POST, PUT, PATCH or DELETE under /api/ that carries the
header runs once per key: the first answer (any status below 500 but 429)
is kept and sent again, byte for byte, to every repeat, with
`Idempotent-Replayed: true`. A 5xx answer, a 408 or a 429 (they say "try
again", and the page's outbox does, with the same key) or an error on our
side is not kept, so a repeat runs again. A streamed answer (the AI chat) is passed through and not kept.
Requests without the header, or without a session, are not touched.
"""

from __future__ import annotations

from collections.abc import Awaitable

from starlette.responses import JSONResponse, Response

from ..auth import user_for_token
from ..errors import AppError
from ..idempotency import Answer, fingerprint, parse_key
from ..routes.common import session_token

WRITES = {"POST", "PUT", "PATCH", "DELETE"}
HEADER = b"idempotency-key"


def _error(exc: AppError) -> JSONResponse:
    return JSONResponse(exc.to_json(), status_code=exc.status, headers=exc.headers())


class IdempotencyMiddleware:
    def __init__(self, app):
        self.app = app

    def __call__(self, scope, receive, send) -> Awaitable[None]:
        # Not a keyed write: the inner app's own coroutine, so no frame of
        # ours stays for the request's life (a live stream's is hours, and
        # each frame held is about 0.4 KiB a stream).
        if scope["type"] != "http" or scope["method"] not in WRITES or not scope["path"].startswith("/api/"):
            return self.app(scope, receive, send)
        raw_key = next((v for k, v in scope["headers"] if k == HEADER), None)
        if raw_key is None:
            return self.app(scope, receive, send)
        return self._keyed(scope, receive, send, raw_key)

    async def _keyed(self, scope, receive, send, raw_key: bytes) -> None:
        svc = scope["state"]["services"]   # the lifespan's state, as routes.common.services reads it
        user = await user_for_token(svc.db, session_token(scope), svc.sessions)
        if user is None:   # the route answers 401
            await self.app(scope, receive, send)
            return
        scope["user"] = user   # routes.common.current_user reads it instead of the session again
        try:
            key = parse_key(raw_key.decode("latin-1"))
            body = await _read_body(receive)
            first = await svc.idempotency.begin(
                user["id"], key, fingerprint(scope["method"], scope["path"], scope["query_string"].decode(), body))
        except AppError as exc:
            await _error(exc)(scope, receive, send)
            return
        if first is not None:
            await Response(first.body, status_code=first.status, media_type=first.content_type,
                           headers={"Idempotent-Replayed": "true"})(scope, receive, send)
            return
        await _run_once(self.app, scope, body, receive, send, svc, user["id"], key)


async def _read_body(receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


async def _run_once(app, scope, body: bytes, receive, send, svc, user_id: str, key: str) -> None:
    """Runs the request with the body already read, keeps its answer (stored
    while the answer goes out: repeats meanwhile get it from memory), sends it."""
    keys = svc.idempotency
    sent_body = False

    async def replay_body():
        nonlocal sent_body
        if sent_body:
            return await receive()   # after the body: whatever the client does next (a disconnect)
        sent_body = True
        return {"type": "http.request", "body": body, "more_body": False}

    start: dict | None = None
    chunks: list[bytes] = []
    streaming = False

    async def capture(message):
        nonlocal start, streaming
        if message["type"] == "http.response.start":
            start = message
            headers = dict(message.get("headers", []))
            streaming = headers.get(b"content-type", b"").startswith(b"text/event-stream")
            if streaming:
                await keys.abandon(user_id, key)
                await send(message)
            return
        if streaming:
            await send(message)
            return
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False) and start is not None:
            await _keep_then_send(start, b"".join(chunks))

    async def _keep_then_send(start_message: dict, payload: bytes) -> None:
        status = start_message["status"]
        headers = dict(start_message.get("headers", []))
        if status < 500 and status not in (408, 429):   # "try again": a repeat runs again
            content_type = headers.get(b"content-type", b"").decode("latin-1")
            svc.background.spawn(keys.finish(user_id, key, Answer(status, content_type, payload)),
                                 "idempotency answer")
        else:
            await keys.abandon(user_id, key)
        await send(start_message)
        await send({"type": "http.response.body", "body": payload, "more_body": False})

    try:
        await app(scope, replay_body, capture)
    except BaseException:
        await keys.abandon(user_id, key)   # nothing kept: a repeat runs again (no-op if already settled)
        raise
    if start is None:
        await keys.abandon(user_id, key)
