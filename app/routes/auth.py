"""Sign up, sign in, sign out, me."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.routing import Route

from .. import auth
from ..web.client_address import counted_address
from ..errors import NotSignedIn
from .common import body, current_user, ok, services, session_token
from .openapi import describe


class SignUp(BaseModel):
    username: str = Field(min_length=1, max_length=64)
    password: str = Field(min_length=1, max_length=256)
    displayName: str | None = Field(default=None, max_length=64)


class SignOut(BaseModel):
    model_config = ConfigDict(extra="forbid")
    everywhere: bool = False


class SignIn(BaseModel):
    username: str = Field(min_length=1, max_length=64)
    password: str = Field(min_length=1, max_length=256)


def _set_cookie(request: Request, response, token: str) -> None:
    response.set_cookie(
        auth.COOKIE, token, max_age=auth.SESSION_DAYS * 86400, httponly=True, samesite="lax",
        secure=services(request).settings.secure_cookies, path="/",
    )


@describe(body=SignUp, summary="Create an account and sign in")
async def signup(request: Request):
    args = await body(request, SignUp)
    svc = services(request)
    with svc.signups.attempt(counted_address(request.scope, svc.settings), svc.settings.signups_per_address_hour):
        user = await auth.create_user(svc.db, args.username.strip().lower(), args.password, args.displayName,
                                      hash_n=svc.settings.password_hash_n, is_admin_name=svc.settings.is_ai_admin)
    token = await auth.create_session(svc.db, user["id"])
    response = ok({"user": user}, status=201)
    _set_cookie(request, response, token)
    return response


@describe(body=SignIn, summary="Sign in")
async def signin(request: Request):
    args = await body(request, SignIn)
    svc = services(request)
    username = args.username.strip().lower()
    address = counted_address(request.scope, svc.settings)
    async with svc.limiter.attempt(username, address) as attempt:
        found = await auth.authenticate(svc.db, username, args.password, hash_n=svc.settings.password_hash_n)
        if found is None:
            attempt.failed()
            raise NotSignedIn("Wrong username or password", code="bad_credentials")
        attempt.succeeded()
    user, checked_hash = found
    token = await auth.create_session(svc.db, user["id"], checked_hash)
    response = ok({"user": user})
    _set_cookie(request, response, token)
    return response


@describe(body=SignOut, summary="Sign out: this session, or every session of yours with everywhere: true")
async def signout(request: Request):
    args = await body(request, SignOut)
    token = session_token(request.scope)
    svc = services(request)
    user = await current_user(request)
    if user is not None and args.everywhere:
        await auth.end_sessions(svc.db, user["id"], svc.sessions)
        svc.live.close_user(user["id"], signed_out=True)
    elif token:
        await auth.delete_session(svc.db, token, svc.sessions)
        if user is not None:   # this session's open pages stop hearing about the trip
            svc.live.close_user(user["id"], session=auth.token_hash(token), signed_out=True)
    response = ok({"signedOut": True})
    response.delete_cookie(auth.COOKIE, path="/")
    return response


@describe(summary="The signed-in user, or null when signed out (a probe, so never a 401)")
async def me(request: Request):
    user = await current_user(request)
    if user is None:
        return ok({"user": None, "isAdmin": False})
    settings = services(request).settings
    return ok({"user": user, "isAdmin": settings.is_ai_admin(user["username"])})


routes = [
    Route("/api/auth/signup", signup, methods=["POST"]),
    Route("/api/auth/signin", signin, methods=["POST"]),
    Route("/api/auth/signout", signout, methods=["POST"]),
    Route("/api/auth/me", me, methods=["GET"]),
]
