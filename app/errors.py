"""Errors that carry their HTTP status and code; one JSON shape for all."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError


class AppError(Exception):
    status = 400
    code = "bad_request"

    def __init__(self, message: str, *, code: str | None = None, field: str | None = None, **extra):
        super().__init__(message)
        self.message = message
        if code:
            self.code = code
        self.field = field
        self.extra = extra

    def to_json(self) -> dict:
        error = {"code": self.code, "message": self.message}
        if self.field:
            error["field"] = self.field
        error.update(self.extra)
        return {"error": error}

    def headers(self) -> dict[str, str]:
        """The refusal's HTTP headers: a body that says `retryAfterS` also sends
        the standard `Retry-After` (seconds), so clients and proxies that read
        only the header wait as long as the body says."""
        wait = self.extra.get("retryAfterS")
        return {"Retry-After": str(wait)} if isinstance(wait, int) else {}


class BadRequest(AppError):
    status, code = 400, "bad_request"


class NotSignedIn(AppError):
    status, code = 401, "not_signed_in"


class Forbidden(AppError):
    status, code = 403, "forbidden"


class NotFound(AppError):
    status, code = 404, "not_found"


class Conflict(AppError):
    status, code = 409, "conflict"


class TooLarge(AppError):
    status, code = 413, "too_large"


class UnsupportedType(AppError):
    status, code = 415, "unsupported_type"


class Invalid(AppError):
    status, code = 422, "invalid"


class TooSlow(AppError):
    """A body that did not arrive in time (app/web/bodies.py): the rest of it
    is never read, so the connection ends with the answer."""

    status, code = 408, "request_timeout"

    def headers(self) -> dict[str, str]:
        return {"Connection": "close"}


class Busy(AppError):
    status, code = 429, "busy"


class Unavailable(AppError):
    status, code = 503, "unavailable"


def field_name(loc: tuple) -> str:
    return ".".join(str(part) for part in loc) or "body"


def validation_error(exc: ValidationError) -> Invalid:
    """A pydantic failure as a 422 naming the first bad field."""
    first = exc.errors()[0]
    name = field_name(first.get("loc", ()))
    return Invalid(f"{name}: {_plain(first)}", field=name)


# Text fields that must say something carry `pattern=r"\S"`; the page shows
# this message as it is, and pydantic's would quote the regular expression.
BLANK_PATTERN = r"\S"


# pydantic's own sentences ("Input should be a valid number", "Value error,
# must be ...") read as a library talking; API clients and outside assistants
# (MCP) get these words instead. Types not listed keep pydantic's message.
PLAIN_WORDS = {
    "missing": "is required",
    "extra_forbidden": "is not expected here",
    "string_type": "must be text",
    "int_type": "must be a whole number", "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number", "float_parsing": "must be a number",
    "bool_type": "must be true or false", "bool_parsing": "must be true or false",
    "list_type": "must be a list", "dict_type": "must be an object", "model_type": "must be an object",
    "model_attributes_type": "must be an object",
}
LIMIT_WORDS = {
    "string_too_long": "must be at most {max_length} characters",
    "string_too_short": "must be at least {min_length} characters",
    "too_long": "must have at most {max_length} items",
    "too_short": "must have at least {min_length} items",
    "less_than_equal": "must be at most {le}", "greater_than_equal": "must be at least {ge}",
    "less_than": "must be below {lt}", "greater_than": "must be above {gt}",
}


def _unquoted(name: str) -> str:
    return name.strip("'")


def _choices(tags: str) -> str:
    """"'equal', 'shares'" -> "'equal' or 'shares'"."""
    parts = [t.strip() for t in tags.split(",")]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " or " + parts[-1]


def plain_words(error: Any) -> str:
    """One pydantic error (an item of `exc.errors()`) in the API's words, without its field."""
    return _plain(error)


def _plain(error: Any) -> str:
    kind, ctx = error.get("type"), error.get("ctx") or {}
    if kind == "string_pattern_mismatch":
        # Never the regular expression itself: nobody reads "'^[A-Z]{3}$'".
        return "must not be blank" if ctx.get("pattern") == BLANK_PATTERN else "is not in the expected form"
    if kind == "string_too_short" and ctx.get("min_length") == 1:
        return "must not be empty"
    if kind in PLAIN_WORDS:
        return PLAIN_WORDS[kind]
    if kind in LIMIT_WORDS:
        # "at most 90", not "at most 90.0": a float field's bound is a float.
        bounds = {k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in ctx.items()}
        try:
            words = LIMIT_WORDS[kind].format(**bounds)
            return words.replace(" 1 items", " 1 item").replace(" 1 characters", " 1 character")
        except (KeyError, IndexError):
            pass
    if kind == "value_error" and "error" in ctx:
        return str(ctx["error"])   # our validator's own sentence, without "Value error, "
    if kind == "literal_error" and "expected" in ctx:
        return f"must be {ctx['expected']}"
    # A tagged choice (an expense's split): pydantic's "Input tag 'x' found using
    # 'kind' does not match any of the expected tags" says the same at length.
    if kind == "union_tag_invalid" and "expected_tags" in ctx:
        return f"{_unquoted(ctx.get('discriminator', 'kind'))} must be {_choices(ctx['expected_tags'])}"
    if kind == "union_tag_not_found":
        return f"must say its {_unquoted(ctx.get('discriminator', 'kind'))}"
    return str(error.get("msg", "invalid value"))


# SQLite failures that mean the disk or file refuses writes (full, read-only,
# I/O): a plain 503 that ends when the disk recovers. Any other database
# error is a bug (500, logged).
STORAGE_ERROR_NAMES = ("SQLITE_FULL", "SQLITE_READONLY", "SQLITE_IOERR", "SQLITE_CANTOPEN")
STORAGE_ERROR_TEXT = ("database or disk is full", "readonly database", "disk i/o error", "unable to open database")


# The text the database's triggers raise when a write would give a deleted
# account a session, a membership or words in a trip (migrations/0046).
ACCOUNT_DELETED = "account_deleted"


def database_refusal(exc: Exception) -> AppError | None:
    """What a database error means for the client, when it is not a bug: the
    disk refusing writes, or an account deleted while its request was under way."""
    if str(exc) == ACCOUNT_DELETED:
        return NotSignedIn("This account has been deleted. Nothing was changed.", code=ACCOUNT_DELETED)
    return storage_fault(exc)


def storage_fault(exc: Exception) -> Unavailable | None:
    name = getattr(exc, "sqlite_errorname", "") or ""
    text = str(exc).lower()
    if name.startswith(STORAGE_ERROR_NAMES) or any(t in text for t in STORAGE_ERROR_TEXT):
        return storage_unavailable()
    return None


def storage_unavailable() -> Unavailable:
    """The disk refuses writes (full, read-only): the database's and the uploads' one answer."""
    return Unavailable("Wayline cannot save changes right now (its storage is full or read-only). "
                       "Nothing was changed; please try again later.", code="storage_unavailable")
