"""The `showCard` tool: how the model draws a card, and how it refines one.

Strict Structured Outputs cannot express a map with free keys, so the tool
takes the elements as a LIST of `{key, type, props, children}`, one variant
per catalog component (the type fixes the shape of the props): its strict
schema is the catalog. `parse_card_call` turns the arguments into
json-render's flat shape; `build_card` merges them into an earlier card when
refining (json-render's patch mode, by key: add or replace whole elements,
remove keys, optionally a new root) and sanitizes the result like any spec.

The tool has no side effects: it changes nothing on the trip, and what a card
can do is bounded by the catalog (a follow-up message or a focus, on a press).
"""

from __future__ import annotations

import json
import operator
from dataclasses import dataclass, field
from functools import cache, reduce
from typing import Annotated, Any, Literal

from pydantic import Field, create_model

from ..ai import strict_schema
from ..trips.model import Trip
from .cards import CATALOG, MAX_ELEMENTS, MODEL_COMPONENTS, Props, Sanitized, clean_spec

SHOW_CARD = "showCard"
RECENT_CARDS = 3   # cards offered to the model for refinement

Key = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,40}$", description="a short unique key, e.g. 'day-2'")]


class ElementBase(Props):
    key: Key
    children: list[Key] = Field(max_length=MAX_ELEMENTS, description="keys of child elements, in order; [] for none")


def _element_model(name: str) -> type[ElementBase]:
    component = CATALOG[name]
    kind: Any = Literal[name]   # models built at run time, one per component of the catalog
    return create_model(f"{name}Element", __base__=ElementBase, __doc__=component.description,
                        type=(kind, ...), props=(component.props, ...))


@cache
def show_card_model() -> type[Props]:
    """The tool's arguments as a model: one element variant per component,
    told apart by `type` (a union built from the catalog). Built on first use:
    pydantic takes about 20 ms for it, which a server without AI never spends."""
    element: Any = Annotated[reduce(operator.or_, (_element_model(name) for name in MODEL_COMPONENTS)),
                        Field(discriminator="type")]

    class ShowCard(Props):
        refine: str | None = Field(description="the id of a recent card to change (from the context); null: a new "
                                               "card")
        root: Key | None = Field(description="the key of the top element; null only when refining (keeps the root)")
        elements: list[element] = Field(max_length=MAX_ELEMENTS, description=(
            f"every element of the card (at most {MAX_ELEMENTS}); when refining, only the elements to add or "
            "replace (a replaced element is given whole, children included)"))
        remove: list[Key] = Field(max_length=MAX_ELEMENTS, description="keys to remove when refining; [] otherwise")

    return ShowCard


DESCRIPTION = (
    "Show a compact card beside your answer: a plan overview, day or stop summaries, a comparison of 2-4 options, "
    "a budget estimate, alerts, badges and buttons. Keep the prose short when a card says it. The card changes "
    "nothing: to change the trip, use the write tools. Buttons can only send a follow-up message to you "
    "(kind followUp) or focus a day or stop of this trip (kind focus, ids from the context). Day and stop ids must "
    "be this trip's; strings are plain text. To change a recent card, pass its id in refine with only the changed "
    "elements.")


@cache
def _parameters() -> dict:
    return _without_titles(strict_schema(show_card_model()))


def tool_spec() -> dict:
    """The function tool for the Responses API (strict: the schema is the catalog)."""
    return {"type": "function", "name": SHOW_CARD, "description": DESCRIPTION, "parameters": _parameters(),
            "strict": True}


def _without_titles(node: Any) -> Any:
    """pydantic's generated `title`s tell the model nothing here and cost a
    sixth of the schema. (A prop named title is a schema, never a string.)"""
    if isinstance(node, dict):
        return {k: _without_titles(v) for k, v in node.items() if not (k == "title" and isinstance(v, str))}
    if isinstance(node, list):
        return [_without_titles(v) for v in node]
    return node


@dataclass
class CardCall:
    """A showCard call in json-render's flat shape (not yet sanitized)."""

    refine: str | None
    root: str | None
    elements: dict[str, dict]
    remove: list[str]
    dropped: list[str] = field(default_factory=list)


def parse_card_call(arguments: str | dict) -> CardCall:
    """The tool's arguments, list of elements converted to the flat map.

    Tolerant by design: an element without a usable key is noted and left
    out, a repeated key keeps the first; everything else is judged by the
    sanitizer. Raises ValueError when the arguments are not a JSON object."""
    value = json.loads(arguments or "{}") if isinstance(arguments, str) else arguments
    if not isinstance(value, dict):
        raise ValueError("showCard arguments must be a JSON object")
    elements, removed = value.get("elements"), value.get("remove")
    items = elements if isinstance(elements, list) else []
    flat: dict[str, dict] = {}
    dropped: list[str] = []
    for item in items[:MAX_ELEMENTS + 1]:  # one over, so the sanitizer sees the spec is too big
        key = item.get("key") if isinstance(item, dict) else None
        if not isinstance(key, str):
            dropped.append("an element without a key")
        elif key in flat:
            dropped.append(f"{key}: a second element with the same key")
        else:
            flat[key] = {k: v for k, v in item.items() if k != "key"}
    refine, root = value.get("refine"), value.get("root")
    remove = removed if isinstance(removed, list) else []
    return CardCall(refine=refine if isinstance(refine, str) and refine else None,
                    root=root if isinstance(root, str) else None, elements=flat,
                    remove=[k for k in remove if isinstance(k, str)], dropped=dropped)


def merge_patch(base: dict, *, root: str | None = None, upsert: dict[str, Any] | None = None,
                remove: list[str] | tuple[str, ...] = ()) -> dict:
    """json-render's patch mode on a flat spec, by key: remove keys, add or
    replace whole elements, optionally move the root. A new dict (the base is
    not touched); children that name a removed key are left for the sanitizer
    to drop."""
    elements = {k: v for k, v in (base.get("elements") or {}).items() if k not in set(remove)}
    elements.update(upsert or {})
    return {"root": root or base.get("root"), "elements": elements}


def build_card(call: CardCall, *, trip: Trip, base: dict | None = None) -> Sanitized:
    """The card a showCard call asks for, sanitized against `trip`.

    `base` is the sanitized spec the call refines (the caller looks
    `call.refine` up among the recent cards); a refine naming no card is
    refused rather than drawn as a new card."""
    if call.refine is not None and base is None:
        return Sanitized(None, ["there is no recent card with that id to refine"])
    if base is not None:
        raw = merge_patch(base, root=call.root, upsert=call.elements, remove=call.remove)
    else:
        raw = {"root": call.root, "elements": call.elements}
    result = clean_spec(raw, trip=trip)
    return Sanitized(result.spec, call.dropped + result.dropped)


def refinable(recent: list[tuple[str, dict]], *, trip: Trip) -> list[dict]:
    """Recent cards as the model may see them to refine one: `[{id, spec}]`,
    the latest RECENT_CARDS, each sanitized again against the trip as it is now
    (server-only cards such as street view are never offered)."""
    out = []
    for spec_id, spec in recent[-RECENT_CARDS:]:
        clean = clean_spec(spec, trip=trip).spec
        if clean is not None:
            out.append({"id": spec_id, "spec": clean})
    return out
