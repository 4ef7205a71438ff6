"""Strict JSON schemas for Structured Outputs and function tools, from pydantic
models. Pure code (no SDK): the gateway uses it for `text.format`, the agent
for its tools' `parameters`."""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel

# Keywords Structured Outputs does not accept; pydantic still enforces them when
# the answer is validated, so dropping them from the schema loses nothing.
_UNSUPPORTED = {"default", "examples", "minLength", "maxLength", "uniqueItems", "minProperties",
                "maxProperties", "propertyNames", "patternProperties", "unevaluatedProperties",
                "contains", "discriminator"}


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
