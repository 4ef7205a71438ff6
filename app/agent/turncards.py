"""Cards in an agent turn: what the model may refine, and its showCard calls.

A turn offers the model the recent cards of this trip's thread (the latest
RECENT_CARDS data-spec parts of the last RECENT_MESSAGES agent answers,
re-sanitized against the trip as it is now, street-view cards never) with
their ids, as structured context in the instructions. They are not prose:
later turns never see a card flattened into text (transcript.py replays
assistant prose only).

`TurnCards.show(arguments)` runs one showCard call: the card is built (or
refined by id, json-render's patch mode), sanitized, and returned as the
`data-spec` part to stream and persist, with the tool output for the model
(`Sanitized.for_model()` plus the card's id). A refine that changes nothing
returns no part (the same card is not stored twice) and `unchanged: true`;
if the model then says nothing, chat.py answers that the card is unchanged.
"""

from __future__ import annotations

import json
from typing import Any

from ..ids import new_id
from .deps import AgentDeps
from ..trips.model import Trip
from .cards import spec_of_part, spec_part
from .cardtool import build_card, parse_card_call, refinable

RECENT_MESSAGES = 6          # agent answers searched for cards ("the recent thread")
OFFERED_BYTES = 24 * 1024    # the cards offered to the model, at most (newest first)


async def recent_cards(svc: AgentDeps, trip: Trip) -> list[dict]:
    """`[{id, spec}]`, oldest first, for the instructions' context."""
    rows = await svc.db.fetchall(
        "SELECT parts_json FROM agent_messages WHERE trip_id = ? AND role = 'assistant' "
        "AND source IN ('chat', 'mention') ORDER BY seq DESC LIMIT ?", (trip.id, RECENT_MESSAGES))
    found: list[tuple[str, dict]] = []
    for row in reversed(rows):
        for part in json.loads(row["parts_json"]):
            spec = spec_of_part(part)
            if spec is not None and isinstance(part.get("id"), str):
                found.append((part["id"], spec))
    offered, size = [], 0
    for card in reversed(refinable(found, trip=trip)):
        size += len(json.dumps(card, ensure_ascii=False, separators=(",", ":")))
        if size > OFFERED_BYTES:
            break
        offered.append(card)
    return offered[::-1]


class TurnCards:
    """The cards one turn may refine: the offered ones, then those it draws."""

    def __init__(self, trip: Trip, offered: list[dict]) -> None:
        self.trip = trip
        self.by_id: dict[str, dict] = {card["id"]: card["spec"] for card in offered}

    def show(self, arguments: str) -> tuple[dict | None, dict[str, Any]]:
        """(the data-spec part or None, the tool output for the model)."""
        try:
            call = parse_card_call(arguments)
        except ValueError:
            return None, {"shown": False, "dropped": ["the arguments are not a JSON object"]}
        base = self.by_id.get(call.refine) if call.refine is not None else None
        result = build_card(call, trip=self.trip, base=base)
        output = result.for_model()
        if result.spec is None:
            return None, output
        if base is not None and result.spec == base:
            return None, {**output, "id": call.refine, "unchanged": True}
        spec_id = "card_" + new_id()
        self.by_id[spec_id] = result.spec
        return spec_part(result.spec, spec_id), {**output, "id": spec_id}
