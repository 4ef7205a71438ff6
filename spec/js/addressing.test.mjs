// public/panels/addressing.js against the shared vectors
// (spec/fixtures/addressing_vectors.json), which app/agent/addressing.py runs too.
// Run: node --test spec/js/addressing.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { decide } from "../../public/panels/addressing.js";

const file = JSON.parse(readFileSync(new URL("../fixtures/addressing_vectors.json", import.meta.url), "utf8"));

for (const v of file.vectors) {
  test(v.name, () => {
    assert.deepStrictEqual(decide(v.text, { afterAgent: v.afterAgent, members: file.members, aiOn: v.aiOn ?? true }), v.expect);
  });
}

test("vectors file is well formed", () => {
  assert.ok(file.vectors.length >= 40);
  assert.equal(new Set(file.vectors.map((v) => v.name)).size, file.vectors.length, "names must be unique");
  for (const to of ["agent", "group", "ask"]) assert.ok(file.vectors.some((v) => v.expect.to === to), to);
  assert.ok(file.vectors.some((v) => v.aiOn === false), "a server without AI");
});
