"""A remedy as data: several registry ops applied together as one change.

The shape every client sends and every producer stores: `{"edits": [{"op",
"args"}, ...]}`. A review fix, `POST /api/trips/:tripId/ops`, an agent
suggestion's patch (and an outside assistant's, issue 24) all use it. A patch
of one edit may also be written the older way, `{"op", "args"}`, and reads
the same.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import Invalid, validation_error

MAX_EDITS = 60      # a pace fix moves a few stops, an order fix at most a day's worth of moves


class Edit(BaseModel):
    model_config = ConfigDict(extra="forbid")
    op: str = Field(min_length=1, max_length=64)
    args: dict[str, Any] = Field(default_factory=dict)


class Edits(BaseModel):
    """The body of POST /api/trips/:tripId/ops."""

    model_config = ConfigDict(extra="forbid")
    edits: list[Edit] = Field(min_length=1, max_length=MAX_EDITS)
    baseVersion: int | None = Field(default=None, strict=True)


Pairs = list[tuple[str, dict[str, Any]]]   # (op, args), what apply_ops takes


def as_pairs(edits: list[Edit] | list[dict[str, Any]]) -> Pairs:
    return [(e.op, e.args) if isinstance(e, Edit) else (e["op"], e["args"]) for e in edits]


def patch_edits(patch: Any) -> Pairs:
    """The ops of a stored or received patch: `{"edits": [...]}`, or one
    `{"op", "args"}`. 422 for anything else."""
    if isinstance(patch, dict) and "edits" in patch:
        data = patch["edits"]
    elif isinstance(patch, dict) and "op" in patch:
        data = [{"op": patch["op"], "args": patch.get("args") or {}}]
    else:
        raise Invalid("patch: must be {edits: [{op, args}, ...]} or {op, args}", field="patch")
    if not isinstance(data, list) or not data:
        raise Invalid("patch: edits must list at least one {op, args}", field="patch")
    try:
        return as_pairs([Edit.model_validate(e) for e in data])
    except ValidationError as exc:
        raise validation_error(exc) from None


def as_patch(edits: Pairs, **extra: Any) -> dict[str, Any]:
    """The stored form: `edits`, plus `op` and `args` when there is one edit
    (what readers of the older form look at)."""
    out: dict[str, Any] = {"edits": [{"op": op, "args": args} for op, args in edits]}
    if len(edits) == 1:
        out["op"], out["args"] = edits[0]
    return {**out, **extra}
