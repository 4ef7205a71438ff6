"""Strict JSON schemas for Structured Outputs and function tools, from pydantic
models. Pure code (no SDK): the gateway uses it for `text.format`, the agent
for its tools' `parameters`."""

from __future__ import annotations

import copy
import functools
import json
from typing import Any, TypeVar
from collections.abc import Mapping, Sequence

from pydantic import BaseModel

# Keywords Structured Outputs does not accept; pydantic still enforces them when
# the answer is validated, so dropping them from the schema loses nothing.
_UNSUPPORTED = {"default", "examples", "minLength", "maxLength", "uniqueItems", "minProperties",
                "maxProperties", "propertyNames", "patternProperties", "unevaluatedProperties",
                "contains", "discriminator"}

M = TypeVar("M", bound=BaseModel)

def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema in the form `strict: true` requires.

    Every object gets `additionalProperties: false` and lists every property
    in `required` (optional fields must therefore be typed `X | None`, which
    pydantic emits as `anyOf [..., {"type": "null"}]`); `$ref`s with siblings
    are inlined; `oneOf` becomes `anyOf`; unsupported keywords are dropped.
    Free-form objects (`dict[str, Any]`) cannot be strict and raise TypeError:
    carry such data as a JSON string field instead. Field aliases are used, so
    camelCase aliases appear in the schema and are expected in the answer.
    Reused by the agent for function tool `parameters`."""
    schema = model.model_json_schema(by_alias=True, mode="validation")
    defs = schema.pop("$defs", {})
    strict_defs = {name: _strict(node, defs, f"$defs.{name}") for name, node in defs.items()}
    root = _strict(schema, defs, model.__name__)
    if root.get("type") != "object":
        raise TypeError(f"{model.__name__}: a structured output must be a JSON object")
    if strict_defs:
        root["$defs"] = strict_defs
    return root


def _strict(node: Any, defs: dict, path: str) -> Any:
    if isinstance(node, list):
        return [_strict(item, defs, f"{path}[{i}]") for i, item in enumerate(node)]
    if not isinstance(node, dict):
        return node
    node = {k: copy.deepcopy(v) for k, v in node.items() if k not in _UNSUPPORTED}
    if "$ref" in node and len(node) > 1:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        merged = {**target, **node}
        merged.pop("$ref")
        return _strict(merged, defs, path)
    if "allOf" in node and len(node["allOf"]) == 1:
        only = node.pop("allOf")[0]
        return _strict({**only, **node}, defs, path)
    if "oneOf" in node:
        node["anyOf"] = node.pop("oneOf")
    if node.get("type") == "object" or "properties" in node:
        props = node.get("properties") or {}
        extra = node.get("additionalProperties")
        if not props and extra not in (None, False):
            raise TypeError(f"{path}: free-form objects cannot be strict; use a JSON string field")
        node["properties"] = {k: _strict(v, defs, f"{path}.{k}") for k, v in props.items()}
        node["required"] = list(props)
        node["additionalProperties"] = False
    for key in ("items", "anyOf", "allOf", "prefixItems"):
        if key in node:
            node[key] = _strict(node[key], defs, f"{path}.{key}")
    return node


EMPTY_ITEMS = {"type": "null"}   # the items of a list that can only be []


def with_choices(model: type[M], choices: Mapping[str, Sequence[str]]) -> type[M]:
    """`model` with string fields narrowed, in its JSON schema, to the ids a
    call was given, so the provider is told which ids exist.

    `choices` maps a path to its ids: `"order[]"` (the items of a list of
    strings), `"additions[].placeId"` (a field of a list's objects). Each such
    field becomes exactly `{"type": "string", "enum": ids}`. With no ids, the
    nearest list on the path can only be empty: its items become `{"type":
    "null"}` (Structured Outputs refuses an empty `enum`, and `maxItems` is not
    in every strict-mode subset). Validation is the model's own: the feature
    still judges the ids against its facts (an enum is advice to the
    provider, not a guarantee the server relies on)."""
    base = model

    class Narrowed(base):  # type: ignore[valid-type,misc]
        @classmethod
        def model_json_schema(cls, by_alias: bool = True, mode: str = "validation", **_: Any) -> dict[str, Any]:
            schema = json.loads(_schema_text(base, by_alias, mode))   # a fresh copy to narrow
            for path, ids in choices.items():
                _narrow(schema, path, list(dict.fromkeys(ids)))
            _drop_unused_defs(schema)
            return schema

    Narrowed.__name__ = Narrowed.__qualname__ = base.__name__
    return Narrowed


@functools.lru_cache(maxsize=32)
def _schema_text(model: type[BaseModel], by_alias: bool, mode: str) -> str:
    """A model's JSON schema, generated once (pydantic takes milliseconds)."""
    return json.dumps(model.model_json_schema(by_alias=by_alias, mode=mode))  # type: ignore[arg-type]


def _narrow(schema: dict, path: str, ids: list[str]) -> None:
    defs = schema.get("$defs", {})
    node, last_list = schema, None
    for part in path.split("."):
        many = part.endswith("[]")
        name = part[:-2] if many else part
        node = _own(node["properties"], name, defs)
        if many:
            last_list = node
            node = _own(node, "items", defs)
            if node == EMPTY_ITEMS:
                return  # an earlier path emptied this list: nothing inside to narrow
    if ids:
        node.clear()
        node.update({"type": "string", "enum": ids})
    elif last_list is not None:
        last_list["items"] = dict(EMPTY_ITEMS)
        note = "Always [] here: nothing to choose from."
        last_list["description"] = f"{last_list.get('description', '')} {note}".strip()
    else:
        raise ValueError(f"{path}: no ids to choose from and no list to leave empty")


def _drop_unused_defs(schema: dict) -> None:
    defs = schema.get("$defs")
    if not defs:
        return
    text = json.dumps({k: v for k, v in schema.items() if k != "$defs"}) + json.dumps(defs)
    for name in [n for n in defs if f'"#/$defs/{n}"' not in text]:
        del defs[name]
    if not defs:
        del schema["$defs"]


def _own(container: dict, key: str, defs: dict) -> dict:
    """container[key] as a node of its own (a `$ref` is inlined, so narrowing
    one use of a shared definition leaves the others alone)."""
    node = container[key]
    if "$ref" in node:
        node = {**copy.deepcopy(defs[node["$ref"].rsplit("/", 1)[-1]]),
                **{k: v for k, v in node.items() if k != "$ref"}}
    else:
        node = copy.deepcopy(node)
    container[key] = node
    return node
