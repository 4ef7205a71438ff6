"""Ids and timestamps, written one way everywhere.

Ids are random hex text. Timestamps are ISO-8601 UTC with milliseconds and a
Z, so they sort as text and compare correctly in SQL."""

from __future__ import annotations

import secrets
from datetime import datetime, UTC


def new_id() -> str:
    return secrets.token_hex(8)


def iso(moment: datetime) -> str:
    """`moment` (aware) as the stored timestamp text (isoformat: a third of strftime's cost)."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


def utcnow() -> str:
    return iso(datetime.now(UTC))
