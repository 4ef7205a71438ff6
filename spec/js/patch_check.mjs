// Applies each write's small answer to the trip before it, with the page's
// own code (public/planner/patch.js), and compares with the trip the server
// answers afterwards. spec/test_write_answers.py writes the cases.
// Run: node spec/js/patch_check.mjs CASES.json
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { patched } from "../../public/planner/patch.js";

const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));
for (const c of cases) {
  assert.deepEqual(patched(c.before, c.change), c.after, `${c.name}: the patched trip is not the server's`);
  if (c.stale) assert.equal(patched(c.stale, c.change), null, `${c.name}: a page on another version patched`);
}
console.log(`${cases.length} answers applied`);
