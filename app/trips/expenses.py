"""Who paid, who owes, and a minimal set of payments that settles it.

Amounts are integer minor units per currency; rounding leftovers go to the
first members in a stable order so every split adds up exactly."""

from __future__ import annotations

from typing import Any
from collections import defaultdict

from .model import Expense


def shares_of(expense: Expense) -> dict[str, int]:
    """How much of the expense each member owes, summing exactly to the amount."""
    split = expense.split
    if split.get("kind") == "shares":
        weights = {m: n for m, n in split["shares"].items() if n > 0}
    else:
        weights = {m: 1 for m in split.get("members", [])}
    if not weights:
        return {expense.paid_by: expense.amount_minor}
    total = sum(weights.values())
    exact = {m: expense.amount_minor * w / total for m, w in weights.items()}
    owed = {m: int(v) for m, v in exact.items()}
    leftover = expense.amount_minor - sum(owed.values())
    # Largest remainder first, then member id, so the result is stable.
    for m in sorted(weights, key=lambda m: (-(exact[m] - owed[m]), m))[:leftover]:
        owed[m] += 1
    return owed


def settle(net: dict[str, int]) -> list[dict[str, Any]]:
    """Greedy matching of the largest debtor with the largest creditor."""
    debtors = sorted(((-v, m) for m, v in net.items() if v < 0), reverse=True)
    creditors = sorted(((v, m) for m, v in net.items() if v > 0), reverse=True)
    payments: list[dict[str, Any]] = []
    i = j = 0
    owing = [a for a, _ in debtors]       # what each debtor and creditor has left
    owed = [a for a, _ in creditors]
    while i < len(debtors) and j < len(creditors):
        amount = min(owing[i], owed[j])
        payments.append({"from": debtors[i][1], "to": creditors[j][1], "amountMinor": amount})
        owing[i] -= amount
        owed[j] -= amount
        if owing[i] == 0:
            i += 1
        if owed[j] == 0:
            j += 1
    return payments


def summarize(expenses: list[Expense]) -> dict[str, Any]:
    by_currency: dict[str, dict[str, Any]] = {}
    paid: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    owes: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    totals: dict[str, int] = defaultdict(int)
    for e in expenses:
        totals[e.currency] += e.amount_minor
        paid[e.currency][e.paid_by] += e.amount_minor
        for member, amount in shares_of(e).items():
            owes[e.currency][member] += amount
    for currency in sorted(totals):
        members = sorted(set(paid[currency]) | set(owes[currency]))
        net = {m: paid[currency][m] - owes[currency][m] for m in members}
        by_currency[currency] = {
            "totalMinor": totals[currency],
            "members": [{"userId": m, "paidMinor": paid[currency][m], "owesMinor": owes[currency][m],
                         "netMinor": net[m]} for m in members],
            "settlements": settle(net),
        }
    return {"byCurrency": by_currency}
