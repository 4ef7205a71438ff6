"""The access log: one line per answer, as uvicorn words it
(`INFO:     127.0.0.1:50312 - "POST /api/trips/t1/ops/update_stop HTTP/1.1" 200`),
written cheaply and without the secrets some paths carry.

uvicorn hands each line to `logging`: a LogRecord, the handler's lock, and a
write and a flush of stdout for every request, about 5% of the event loop's
time on a write (py-spy, 16 clients writing). app/web/uvicorn_server.py
gives uvicorn's protocol an `AccessLog` as its access logger instead: the
line is formatted at once, kept, and what one turn of the event loop
answered is written with one write at the end of that turn. It stays on
the loop: handing lines to a thread was tried, and its GIL switches
lengthened the herd's and the pollers' tails (docs/performance.md).

An invite's token and a calendar feed's token are in their paths, and
either opens a trip to whoever holds it: a log must not hold them, so they
are written as `[token]`.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any, TextIO

LEVEL = "INFO:     "   # uvicorn's access lines, as they read in `fly logs` before this module
SECRET_PREFIXES = ("/api/calendar/", "/api/invites/", "/invite/")
_SECRET_PATH = re.compile(r"^(/api/calendar/|/api/invites/|/invite/)[^/?]+?(\.ics)?(?=[/?]|$)")


def redact(path: str) -> str:
    """The path with a token it carries (an invite's, a calendar feed's) as `[token]`."""
    return _SECRET_PATH.sub(lambda m: f"{m[1]}[token]{m[2] or ''}", path, count=1)


class AccessLog:
    """Stands in for the `uvicorn.access` logger on our protocol (uvicorn
    calls only `info(format, client, method, path, http_version, status)`)."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.lines: list[str] = []

    def info(self, message: str, *args: Any) -> None:
        if len(args) == 5 and isinstance(args[2], str) and args[2].startswith(SECRET_PREFIXES):
            args = (args[0], args[1], redact(args[2]), args[3], args[4])
        if not self.lines:
            asyncio.get_running_loop().call_soon(self.flush)
        self.lines.append(LEVEL + (message % args) + "\n")

    def flush(self) -> None:
        if not self.lines:
            return
        text = "".join(self.lines)
        self.lines.clear()
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):   # stdout closed or gone (a pipe nobody reads): the answers matter more
            pass
