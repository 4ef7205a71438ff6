"""What a fix does with the expenses of a stop it removes or replaces.

A removal alone leaves a stop's expenses for a stop that is gone, which the
trip agent then reports (`expense_unlinked`, a material risk): the fix that
cleared one problem made another. So a fix that takes a stop away says what
becomes of its expenses and does it in the same change: a place replaced by
another for the same purpose (a closed restaurant's dinner) hands them over
(`takeExpensesOf` on the insert); a place removed for good takes them with
it, each named with its amount in the label, so nobody deletes money
unawares. A duplicate's expenses stay with the first visit (remedies.py)."""

from __future__ import annotations

from ..money import format_money
from ..trips.model import Expense, Stop, Trip
from .issues import Edits, Json, quote


def expenses_for(trip: Trip, stop: Stop) -> list[Expense]:
    return [e for e in trip.expenses if e.stop_id == stop.id]


def replacing(trip: Trip, stop: Stop, insert_args: Json) -> tuple[Json, str]:
    """The new place's insert arguments, taking over `stop`'s expenses, and
    the words the label adds for them ("" when it has none)."""
    held = expenses_for(trip, stop)
    if not held:
        return insert_args, ""
    said = "its expense moves to the new place" if len(held) == 1 else f"its {len(held)} expenses move to the new place"
    return {**insert_args, "takeExpensesOf": stop.id}, f" ({said})"


def removing(trip: Trip, stop: Stop) -> tuple[Edits, str]:
    """The edits that delete `stop`'s expenses before it goes, and the words
    the label adds for them: each named, with its amount."""
    held = expenses_for(trip, stop)
    edits: Edits = tuple(("delete_expense", {"expenseId": e.id}) for e in held)
    if not held:
        return edits, ""
    named = ", ".join(f"{quote(e.title)} ({format_money(e.amount_minor, e.currency)})" for e in held)
    return edits, f" and its expense{'s' if len(held) > 1 else ''} {named}"
