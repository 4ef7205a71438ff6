"""Money: an amount is an integer in its currency's minor units, as many as
ISO 4217's exponent says (2 for EUR: 1250 is 12.50 EUR; 0 for JPY; 3 for
KWD: 1500 is 1.500 KWD), and it reads one way everywhere: op summaries,
timeline lines, the agent's context and the page (public/money.js is the
twin; spec/fixtures/money_vectors.json pins both).

The exponents come from the `iso4217` package (the ISO 4217 maintenance
agency's table, republished with each amendment); the page gets the same
table in /api/config."""

from __future__ import annotations

from iso4217 import Currency

# Code -> exponent for every currency ISO 4217 gives minor units (funds and
# metals such as XAU and XDR have none: they count as unknown).
EXPONENTS: dict[str, int] = {c.code: c.exponent for c in Currency if c.exponent is not None}
# A code outside the table (older rows, a card from the model): two places,
# as most currencies have and as the page always stored such amounts.
UNKNOWN_EXPONENT = 2


def is_currency(code: str) -> bool:
    """Whether ISO 4217 lists `code` with minor units (a currency money can be kept in)."""
    return code in EXPONENTS


def exponent(currency: str) -> int:
    return EXPONENTS.get(currency, UNKNOWN_EXPONENT)


def format_money(minor: int, currency: str) -> str:
    """1500 KWD -> "1.500 KWD", 800000 JPY -> "800,000 JPY", -1250 EUR ->
    "-12.50 EUR": the amount, then the code (no symbols: "$" could be any dollar)."""
    return f"{format_amount(minor, currency)} {currency}"


def format_amount(minor: int, currency: str) -> str:
    """The number alone, with the currency's decimals and thousands separated
    by commas (1500 KWD -> "1.500"), where the code stands nearby."""
    digits = exponent(currency)
    whole, fraction = divmod(abs(minor), 10**digits)
    return f"{'-' if minor < 0 else ''}{whole:,}" + (f".{fraction:0{digits}d}" if digits else "")
