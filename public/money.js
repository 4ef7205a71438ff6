// Money on the page, the twin of app/money.py (spec/fixtures/money_vectors.json
// pins both): an amount is an integer in its currency's minor units, as many
// as ISO 4217's exponent says (1250 EUR is 12.50 EUR; 8000 JPY is 8,000 JPY;
// 1500 KWD is 1.500 KWD), shown as "1,234.50 EUR" whatever the browser's
// language, so the page and the server's summaries read the same.
// The exponents are the server's (/api/config's currencyExponents, from the
// ISO 4217 table): the app calls useCurrencyExponents() once at start.

// A code outside the table: two places (app/money.py UNKNOWN_EXPONENT).
export const UNKNOWN_EXPONENT = 2;
const MAX_MINOR = 10 ** 12; // the largest expense amount the server takes (MAX_AMOUNT_MINOR)

let exponents = new Map();

export function useCurrencyExponents(table) {
  exponents = new Map(Object.entries(table || {}).filter(([, e]) => Number.isInteger(e) && e >= 0));
}

export function currencyExponent(currency) {
  return exponents.has(currency) ? exponents.get(currency) : UNKNOWN_EXPONENT;
}

// The unsigned minor units as "whole" and "fraction" digit strings, exact
// for any safe integer (no floating point).
function split(minor, digits) {
  const units = String(Math.abs(minor)).padStart(digits + 1, "0");
  return [units.slice(0, units.length - digits), units.slice(units.length - digits)];
}

// 1500 KWD -> "1.500 KWD"; -1250 EUR -> "-12.50 EUR"; 8000 JPY -> "8,000 JPY".
export function formatMoney(minor, currency) {
  return `${formatAmount(minor, currency)} ${currency}`;
}

// The number alone (1500 KWD -> "1.500"), where the code stands nearby (a table under "KWD balances").
export function formatAmount(minor, currency) {
  const digits = currencyExponent(currency);
  const [whole, fraction] = split(minor, digits);
  const grouped = whole.replace(/\B(?=(\d{3})+$)/g, ",");
  return `${minor < 0 ? "-" : ""}${grouped}${digits ? `.${fraction}` : ""}`;
}

// What an amount field shows for editing: 1500 KWD -> "1.500" (reads back with toMinor).
export function fromMinor(minor, currency) {
  const digits = currencyExponent(currency);
  const [whole, fraction] = split(minor, digits);
  return `${minor < 0 ? "-" : ""}${whole}${digits ? `.${fraction}` : ""}`;
}

// An example amount for a hint: "12.50" for EUR, "1.500" for KWD, "1200" for JPY.
export function exampleAmount(currency) {
  const digits = currencyExponent(currency);
  return digits ? `12.${"5".padEnd(digits, "0")}` : "1200";
}

// An amount a person typed, in minor units; null when it is not a positive
// amount this currency can hold. Either "." or "," may be the decimal point
// ("12.50", "12,50"); the other, or a space, groups thousands ("1,234.50",
// "1.234,50", "1 234,50"). A lone separator before exactly three digits
// groups thousands when the currency has fewer decimals ("1,500" EUR is
// 1500.00; "1,500" KWD is 1.500). More decimals than the currency has are
// refused, never rounded. More than the server takes (MAX_MINOR) is null too:
// `overLimit` tells that case apart, for the form to say so.
export function toMinor(text, currency) {
  const minor = readMinor(text, currency);
  return minor !== null && Number.isSafeInteger(minor) && minor > 0 && minor <= MAX_MINOR ? minor : null;
}

// Whether `text` reads as an amount, only too large for one expense.
export function overLimit(text, currency) {
  const minor = readMinor(text, currency);
  return minor !== null && minor > MAX_MINOR;
}

export function maxAmount(currency) {
  return formatMoney(MAX_MINOR, currency);
}

function readMinor(text, currency) {
  const digits = currencyExponent(currency);
  let typed = String(text ?? "").trim();
  if (/\s/.test(typed)) {
    // Spaces only ever group thousands.
    if (!/^\d{1,3}(\s\d{3})+([.,]\d+)?$/.test(typed)) return null;
    typed = typed.replace(/\s/g, "");
  }
  if (!/^\d+([.,]\d+)*$/.test(typed)) return null;
  const marks = typed.replace(/\d/g, "");
  let decimal = null;
  if (marks.includes(".") && marks.includes(",")) decimal = marks.at(-1);
  else if (marks.length === 1) decimal = typed.length - typed.indexOf(marks) - 1 === 3 && digits < 3 ? null : marks;
  if (decimal && marks.indexOf(decimal) !== marks.length - 1) return null; // a decimal point, then more marks
  const [whole, fraction = ""] = decimal ? typed.split(decimal) : [typed];
  const groups = whole.split(/[.,]/);
  if (groups.length > 1 && (new Set(whole.replace(/\d/g, "")).size > 1 || !/^\d{1,3}$/.test(groups[0])
      || groups.slice(1).some((g) => !/^\d{3}$/.test(g)))) return null;
  if (fraction.length > digits) return null;
  return Number(groups.join("") + fraction.padEnd(digits, "0"));
}
