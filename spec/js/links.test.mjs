// public/links.js against the shared vectors (spec/fixtures/markdown_links.json),
// which app/markdown_links.py runs too. Run: node --test spec/js/links.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { linkTarget } from "../../public/links.js";

const file = JSON.parse(readFileSync(new URL("../fixtures/markdown_links.json", import.meta.url), "utf8"));

for (const v of file.vectors) {
  test(v.name, () => {
    assert.equal(linkTarget(v.url, file.tripId, file.origin), v.expect);
  });
}

test("no trip or no origin allows nothing of ours", () => {
  const upload = file.vectors.find((v) => v.expect === "upload").url;
  assert.equal(linkTarget(upload, "", file.origin), null);
  assert.equal(linkTarget(upload, file.tripId, ""), null);
});
