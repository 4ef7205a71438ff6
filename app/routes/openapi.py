"""A small OpenAPI 3.1 document built from the route table.

Handlers declare their body and a summary with `@describe`; the document is
generated from whatever routes the app has, so a new route is described the
moment it is added."""

from __future__ import annotations

import re
from typing import Callable

from pydantic import BaseModel
from starlette.routing import Route

PARAM = re.compile(r"{(\w+)(?::\w+)?}")


def describe(*, body: type[BaseModel] | None = None, summary: str = "", multipart: bool = False,
             stream: bool | str = False):
    def mark(handler: Callable) -> Callable:
        handler.__api__ = {"body": body, "summary": summary, "multipart": multipart, "stream": stream}
        return handler

    return mark


def _success(stream: bool | str | None) -> str:
    """`stream=True` is the AI SDK UI message stream; a string describes another stream."""
    if not stream:
        return "Success: `{data: ...}`"
    return "AI SDK UI message stream" if stream is True else stream


def build_openapi(routes) -> dict:
    paths: dict[str, dict] = {}
    schemas: dict[str, dict] = {}
    for route in routes:
        if not isinstance(route, Route) or not route.path.startswith(("/api", "/healthz")):
            continue
        path = PARAM.sub(r"{\1}", route.path)
        params = [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in PARAM.findall(route.path)
        ]
        meta = getattr(route.endpoint, "__api__", {})
        for method in sorted((route.methods or set()) - {"HEAD"}):
            op: dict = {"summary": meta.get("summary", ""), "operationId": f"{route.endpoint.__name__}_{method.lower()}"}
            if params:
                op["parameters"] = params
            model = meta.get("body")
            if model is not None:
                schemas[model.__name__] = model.model_json_schema(ref_template="#/components/schemas/{model}")
                for name, sub in schemas[model.__name__].pop("$defs", {}).items():
                    schemas[name] = sub
                op["requestBody"] = {
                    "required": True,
                    "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}},
                }
            elif meta.get("multipart"):
                op["requestBody"] = {
                    "required": True,
                    "content": {"multipart/form-data": {"schema": {"type": "object", "properties": {"file": {"type": "string", "format": "binary"}}}}},
                }
            content_type = "text/event-stream" if meta.get("stream") else "application/json"
            op["responses"] = {
                "200": {"description": _success(meta.get("stream")),
                        "content": {content_type: {}}},
                "default": {"description": "`{error: {code, message}}`", "content": {"application/json": {}}},
            }
            paths.setdefault(path, {})[method.lower()] = op
    return {
        "openapi": "3.1.0",
        "info": {"title": "Wayline API", "version": "1.0.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    }
