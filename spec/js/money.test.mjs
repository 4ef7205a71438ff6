// public/money.js against the shared vectors (spec/fixtures/money_vectors.json);
// spec/test_money.py runs the same `format` vectors against app/money.py.
// Run: node --test spec/js/money.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { formatAmount, formatMoney, fromMinor, maxAmount, overLimit, toMinor, useCurrencyExponents } from "../../public/money.js";

const vectors = JSON.parse(readFileSync(new URL("../fixtures/money_vectors.json", import.meta.url), "utf8"));
useCurrencyExponents(vectors.exponents); // as the app does with /api/config's table

for (const v of vectors.format) {
  test(`format: ${v.name}`, () => {
    assert.equal(formatMoney(v.minor, v.currency), v.text);
    assert.equal(formatAmount(v.minor, v.currency), v.amount);
    if ("typed" in v) {
      assert.equal(fromMinor(v.minor, v.currency), v.typed);
      assert.equal(toMinor(v.typed, v.currency), v.minor || null, "what the field shows reads back");
    }
  });
}

for (const v of vectors.parse) {
  test(`parse: ${v.name}`, () => assert.equal(toMinor(v.typed, v.currency), v.minor));
}

test("the vectors cover KWD, JPY, EUR, DKK, negatives, zero, large amounts and an unknown code", () => {
  const currencies = new Set(vectors.format.map((v) => v.currency));
  for (const code of ["KWD", "JPY", "EUR", "DKK"]) assert.ok(currencies.has(code), code);
  assert.ok(vectors.format.some((v) => v.minor < 0));
  assert.ok(vectors.format.some((v) => v.minor === 0));
  assert.ok(vectors.format.some((v) => v.minor >= 10 ** 12));
  assert.ok(vectors.format.some((v) => !(v.currency in vectors.exponents)));
  assert.equal(new Set([...vectors.format, ...vectors.parse].map((v) => v.name)).size,
    vectors.format.length + vectors.parse.length, "names are unique");
});

test("an amount past the most one expense can be is told apart from one that is not an amount", () => {
  assert.equal(toMinor("99999999999", "EUR"), null);
  assert.equal(overLimit("99999999999", "EUR"), true);
  assert.equal(overLimit("10,000,000,000.00", "EUR"), false);   // exactly the most: taken
  assert.equal(toMinor("10,000,000,000.00", "EUR"), 10 ** 12);
  assert.equal(overLimit("1000000000001", "JPY"), true);
  for (const notLarge of ["12.50", "0", "abc", "", "1.2.3"]) assert.equal(overLimit(notLarge, "EUR"), false, notLarge);
  assert.equal(maxAmount("EUR"), formatMoney(10 ** 12, "EUR"));
});
