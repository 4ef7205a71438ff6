"""A small OpenAPI 3.1 document built from the route table.

Handlers declare their body and a summary with `@describe`; the document is
generated from whatever routes the app has, so a new route is described the
moment it is added."""

from __future__ import annotations

from typing import Any

import re
from collections.abc import Callable

from pydantic import BaseModel
from starlette.routing import Route

PARAM = re.compile(r"{(\w+)(?::\w+)?}")


def describe(*, body: type[BaseModel] | None = None, summary: str = "", multipart: bool = False,
             stream: bool | str = False, query: type[BaseModel] | None = None,
             variants: tuple[str, dict[str, type[BaseModel]]] | None = None,
             answer: type[BaseModel] | None = None):
    """`query`: a model of the query parameters. `variants`: (path parameter,
    {value: body model}) for a route whose body depends on a path segment
    (the ops endpoint); each value is also described as its own path.
    `answer`: a model of what `data` holds in a success."""

    def mark(handler: Callable[..., Any]) -> Callable[..., Any]:
        # Read back by build_openapi.
        handler.__api__ = {"body": body, "summary": summary,  # type: ignore[attr-defined]
                           "multipart": multipart, "stream": stream, "query": query, "variants": variants,
                           "answer": answer}
        return handler

    return mark


def _success(stream: bool | str | None) -> str:
    """`stream=True` is the AI SDK UI message stream; a string describes another stream."""
    if not stream:
        return "Success: `{data: ...}`"
    return "AI SDK UI message stream" if stream is True else stream


def _schema_of(model: type[BaseModel], schemas: dict[str, dict]) -> dict:
    """A $ref to the model, its definitions added to `schemas`."""
    schemas[model.__name__] = model.model_json_schema(ref_template="#/components/schemas/{model}")
    for name, sub in schemas[model.__name__].pop("$defs", {}).items():
        schemas[name] = sub
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def _query_parameters(model: type[BaseModel]) -> list[dict]:
    schema = model.model_json_schema()
    required = set(schema.get("required", ()))
    return [{"name": name, "in": "query", "required": name in required, "schema": sub}
            for name, sub in schema.get("properties", {}).items()]


def _operation(route: Route, method: str, meta: dict, params: list[dict], body: type[BaseModel] | None,
               schemas: dict[str, dict], suffix: str = "") -> dict:
    op: dict = {"summary": meta.get("summary", ""),
                "operationId": f"{route.endpoint.__name__}_{method.lower()}{suffix}"}
    parameters = [*params, *(_query_parameters(meta["query"]) if meta.get("query") else [])]
    if parameters:
        op["parameters"] = parameters
    if body is not None:
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": _schema_of(body, schemas)}}}
    elif meta.get("multipart"):
        op["requestBody"] = {
            "required": True,
            "content": {"multipart/form-data": {"schema": {
                "type": "object", "required": ["file"],
                "properties": {"file": {"type": "string", "format": "binary"}}}}},
        }
    content_type = "text/event-stream" if meta.get("stream") else "application/json"
    content: dict = {}
    if meta.get("answer") is not None:
        content = {"schema": {"type": "object", "required": ["data"],
                              "properties": {"data": _schema_of(meta["answer"], schemas)}}}
    op["responses"] = {
        "200": {"description": _success(meta.get("stream")), "content": {content_type: content}},
        "default": {"description": "`{error: {code, message}}`", "content": {"application/json": {}}},
    }
    return op


def _path_parameters(path: str) -> list[dict]:
    return [{"name": name, "in": "path", "required": True, "schema": {"type": "string", "minLength": 1}}
            for name in PARAM.findall(path)]


def build_openapi(routes) -> dict:
    paths: dict[str, dict] = {}
    schemas: dict[str, dict] = {}
    for route in routes:
        if not isinstance(route, Route) or not route.path.startswith(("/api", "/healthz")):
            continue
        path = PARAM.sub(r"{\1}", route.path)
        meta = getattr(route.endpoint, "__api__", {})
        for method in sorted((route.methods or set()) - {"HEAD"}):
            paths.setdefault(path, {})[method.lower()] = _operation(
                route, method, meta, _path_parameters(path), meta.get("body"), schemas)
            name, bodies = meta.get("variants") or ("", {})
            for value, model in bodies.items():
                concrete = path.replace("{" + name + "}", value)
                paths.setdefault(concrete, {})[method.lower()] = _operation(
                    route, method, meta, _path_parameters(concrete), model, schemas, suffix=f"_{value}")
    return {
        "openapi": "3.1.0",
        "info": {"title": "Wayline API", "version": "1.0.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    }
