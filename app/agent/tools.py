"""The agent's write tools, from TRIP_OPS; its read tools are READ_TOOLS
(app/read_tools.py).

Write tools are generated from the registry (every `OpSpec` with
`agent=True`): the op's name, its description and the strict JSON schema of
its argument model. They never run without a member's approval (chat.py).
Strict schemas make every field present, so in tool arguments `null` means
"leave as it is" (nulls are dropped before validation). To clear a field
(unpin a stop's set time, say) the model lists it in `clear`, which every write
tool with nullable fields gets, generated from the op's model like the rest.
Ops whose arguments cannot be expressed strictly (free-form share maps) are
offered non-strict.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from ..errors import Invalid
from ..read_tools import function_spec
from ..trips.ops import TRIP_OPS


def write_tool_names() -> list[str]:
    return [name for name, spec in TRIP_OPS.items() if spec.agent]


def clearable_fields(model: type[BaseModel]) -> tuple[str, ...]:
    """What a tool call may clear: the op's own list (`Args.clearable`)."""
    return getattr(model, "clearable", ())


def _write_tool_model(model: type[BaseModel]) -> type[BaseModel]:
    names = clearable_fields(model)
    if not names:
        return model
    # A model built at run time: its field's type is made from the op's list.
    choice: Any = Literal[tuple(names)]
    return create_model(f"{model.__name__}Tool", __base__=model, clear=(
        list[choice],
        Field(default_factory=list, description="Fields to clear (set to nothing), e.g. setTime to unpin a stop"),
    ))


def write_tool_specs() -> list[dict[str, Any]]:
    return [function_spec(name, f"{TRIP_OPS[name].description} Changes the trip: a member must approve it. "
                                "In the arguments, null means 'leave unchanged'; list fields to empty in clear.",
                          _write_tool_model(TRIP_OPS[name].args))
            for name in write_tool_names()]


def is_write_tool(name: str) -> bool:
    spec = TRIP_OPS.get(name)
    return spec is not None and spec.agent


def parse_arguments(raw: str, op_name: str | None = None) -> dict[str, Any]:
    """The model's JSON arguments with nulls dropped (null = not given); for a
    write op, the fields named in `clear` are set to null explicitly."""
    value = json.loads(raw or "{}")
    if not isinstance(value, dict):
        raise ValueError("arguments must be a JSON object")
    clear = value.pop("clear", None) if op_name else None
    args = {k: v for k, v in value.items() if v is not None}
    if clear and op_name is not None:
        allowed = clearable_fields(TRIP_OPS[op_name].args)
        for name in clear:
            if name not in allowed:
                raise Invalid(f"clear: {name!r} cannot be cleared", field="clear")
            if name in args:
                raise Invalid(f"clear: {name!r} is both set and cleared", field="clear")
            args[name] = None
    return args
