"""The JSON Schema subset Structured Outputs accepts with `strict: true`, as
the OpenAI stand-in applies it: the request checks the real API makes before
any model runs (a schema outside the subset is a 400), and `conforms`, what
strict decoding guarantees of every answer.

The subset (OpenAI's Structured Outputs guide): types string, number,
integer, boolean, object, array, null, plus enum and anyOf; every object has
`additionalProperties: false` and lists every property in `required`; the
root is an object; `$ref` / `$defs` for reuse; descriptions and titles; the
documented constraints (pattern, format, numeric bounds, minItems/maxItems).
"""

from __future__ import annotations

from typing import Any

ALLOWED = {"type", "properties", "required", "additionalProperties", "items", "enum", "anyOf", "$ref", "$defs",
           "description", "title", "const", "pattern", "format", "minimum", "maximum", "exclusiveMinimum",
           "exclusiveMaximum", "multipleOf", "minItems", "maxItems"}
TYPES = {"string", "number", "integer", "boolean", "object", "array", "null"}


def schema_problems(schema: Any) -> list[str]:
    """Why the real API would refuse this strict schema ([] when it accepts it)."""
    problems: list[str] = []
    if not isinstance(schema, dict) or schema.get("type") != "object":
        problems.append("the root must be an object")
    defs = schema.get("$defs", {}) if isinstance(schema, dict) else {}

    def walk(node: Any, path: str) -> None:
        if not isinstance(node, dict):
            problems.append(f"{path}: a schema must be an object")
            return
        for key in node:
            if key not in ALLOWED:
                problems.append(f"{path}: '{key}' is not permitted")
        kind = node.get("type")
        kinds = kind if isinstance(kind, list) else [kind] if kind is not None else []
        if any(k not in TYPES for k in kinds):
            problems.append(f"{path}: unknown type {kind!r}")
        if "enum" in node and (not isinstance(node["enum"], list) or not node["enum"]):
            problems.append(f"{path}: 'enum' must be a non-empty array")
        if "anyOf" in node:
            if not isinstance(node["anyOf"], list) or not node["anyOf"]:
                problems.append(f"{path}: 'anyOf' must be a non-empty array")
            else:
                for i, sub in enumerate(node["anyOf"]):
                    walk(sub, f"{path}.anyOf[{i}]")
        if "$ref" in node:
            name = str(node["$ref"]).rsplit("/", 1)[-1]
            if not str(node["$ref"]).startswith("#/$defs/") or name not in defs:
                problems.append(f"{path}: unresolvable $ref {node['$ref']!r}")
        if "object" in kinds or "properties" in node:
            props = node.get("properties", {})
            if node.get("additionalProperties") is not False:
                problems.append(f"{path}: 'additionalProperties' must be false")
            if sorted(node.get("required", [])) != sorted(props):
                problems.append(f"{path}: 'required' must list every property")
            for name, sub in props.items():
                walk(sub, f"{path}.{name}")
        if "array" in kinds:
            if "items" not in node:
                problems.append(f"{path}: an array needs 'items'")
            else:
                walk(node["items"], f"{path}.items")

    if isinstance(schema, dict):
        walk(schema, "schema")
        for name, sub in defs.items():
            walk(sub, f"$defs.{name}")
    return problems


def conforms(schema: dict, value: Any) -> bool:
    """Whether strict decoding could produce `value` under `schema`."""
    defs = schema.get("$defs", {})

    def ok(node: dict, v: Any) -> bool:
        if "$ref" in node:
            return ok(defs[node["$ref"].rsplit("/", 1)[-1]], v)
        if "anyOf" in node:
            return any(ok(sub, v) for sub in node["anyOf"])
        if "enum" in node and v not in node["enum"]:
            return False
        kind = node.get("type")
        kinds = kind if isinstance(kind, list) else [kind] if kind else []
        if kinds and not any(_is(k, v) for k in kinds):
            return False
        if isinstance(v, dict):
            props = node.get("properties", {})
            return set(v) == set(props) and all(ok(props[k], v[k]) for k in v)
        if isinstance(v, list):
            return all(ok(node.get("items", {}), item) for item in v)
        return True

    return ok(schema, value)


def _is(kind: str, v: Any) -> bool:
    return {"string": isinstance(v, str), "boolean": isinstance(v, bool), "null": v is None,
            "integer": isinstance(v, int) and not isinstance(v, bool),
            "number": isinstance(v, (int, float)) and not isinstance(v, bool),
            "object": isinstance(v, dict), "array": isinstance(v, list)}[kind]
