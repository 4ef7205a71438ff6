"""Your account: change the password, delete the account. Both ask for the
password again (counted by the sign-in limits like a sign-in)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.routing import Route

from .. import accounts, auth
from ..web.client_address import counted_address
from ..errors import Forbidden
from .common import body, ok, services, session_token, signed_in
from .openapi import describe

Password = Field(min_length=1, max_length=256)


class PasswordChange(BaseModel):
    model_config = ConfigDict(extra="forbid")
    currentPassword: str = Password
    newPassword: str = Password


class AccountDeletion(BaseModel):
    model_config = ConfigDict(extra="forbid")
    password: str = Password


async def confirm_password(request: Request, user: dict, password: str, field: str) -> None:
    """403 `wrong_password` unless `password` is the user's; failures count
    toward the sign-in limits, so a stolen session cannot guess it freely."""
    svc = services(request)
    async with svc.limiter.attempt(user["username"], counted_address(request.scope, svc.settings)) as attempt:
        if not await auth.check_password(svc.db, user["id"], password):
            attempt.failed()
            raise Forbidden("That is not your password.", code="wrong_password", field=field)
        attempt.succeeded()


@describe(body=PasswordChange, summary="Change your password; every other session of yours ends")
async def change_password(request: Request):
    user = await signed_in(request)
    args = await body(request, PasswordChange)
    await confirm_password(request, user, args.currentPassword, "currentPassword")
    svc = services(request)
    token = session_token(request.scope)
    await auth.change_password(svc.db, user["id"], args.newPassword, svc.sessions,
                               keep_token=token, hash_n=svc.settings.password_hash_n)
    # The other sessions ended: so do their open pages (a stolen cookie's included).
    svc.live.close_user(user["id"], keep_session=auth.token_hash(token) if token else None,
                        signed_out=True)
    return ok({"changed": True})


@describe(body=AccountDeletion, summary="Delete your account: you leave every trip; trips only you belonged to go")
async def delete_me(request: Request):
    user = await signed_in(request)
    args = await body(request, AccountDeletion)
    await confirm_password(request, user, args.password, "password")
    svc = services(request)
    deleted = await accounts.delete_account(svc.db, svc.files, user["id"], svc.sessions)
    svc.live.close_user(user["id"])
    response = ok({"deleted": True, "tripsDeleted": len(deleted)})
    response.delete_cookie(auth.COOKIE, path="/")
    return response


routes = [
    Route("/api/auth/password", change_password, methods=["POST"]),
    Route("/api/users/me", delete_me, methods=["DELETE"]),
]
