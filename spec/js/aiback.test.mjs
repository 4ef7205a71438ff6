// public/planner/aiback.js: when AI help is back, in the member's own zone.
// Node reads TZ again whenever it is set, so each case sets the member's zone.
// Run: node --test spec/js/aiback.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { aiBackWords, aiLimitText, aiShareText } from "../../public/planner/aiback.js";

const RESETS = "2026-07-16T00:00:00.000Z"; // the next 00:00 UTC, as the server sends it

function inZone(zone, fn) {
  const saved = process.env.TZ;
  process.env.TZ = zone;
  try {
    fn();
  } finally {
    if (saved === undefined) delete process.env.TZ;
    else process.env.TZ = saved;
  }
}

test("east of UTC in the small hours: later today", () => {
  // 00:30 in Tokyo on the 16th is 15:30 UTC on the 15th: back at 09:00, the same local day.
  inZone("Asia/Tokyo", () => assert.equal(aiBackWords(RESETS, new Date("2026-07-15T15:30:00Z")), "AI help is back at 09:00."));
});

test("Lisbon in summer (UTC+1): tomorrow at 01:00", () => {
  inZone("Europe/Lisbon", () =>
    assert.equal(aiBackWords(RESETS, new Date("2026-07-15T14:30:00Z")), "AI help is back tomorrow at 01:00."));
});

test("UTC itself: at midnight, not tomorrow at 00:00", () => {
  inZone("UTC", () => assert.equal(aiBackWords(RESETS, new Date("2026-07-15T20:00:00Z")), "AI help is back at midnight."));
});

test("west of UTC: this evening", () => {
  inZone("America/New_York", () =>
    assert.equal(aiBackWords(RESETS, new Date("2026-07-15T14:30:00Z")), "AI help is back at 20:00."));
});

test("a clock far off says the date", () => {
  inZone("UTC", () =>
    assert.equal(aiBackWords(RESETS, new Date("2026-07-13T20:00:00Z")), "AI help is back on Thu 16 Jul at 00:00."));
});

test("already past, or no time at all", () => {
  assert.equal(aiBackWords(RESETS, new Date("2026-07-16T00:00:01Z")), "AI help should be back now: try again.");
  assert.equal(aiBackWords(undefined), "");
  assert.equal(aiBackWords("not a time"), "");
});

test("the refusal's own sentence comes first, ended", () => {
  const err = { code: "ai_limit", message: "AI planning is temporarily unavailable because the usage limit has been reached", details: { resetsAt: "2099-01-01T00:00:00.000Z" } };
  inZone("Europe/Lisbon", () => {
    const text = aiLimitText(err);
    assert.match(text, /^AI planning is temporarily unavailable because the usage limit has been reached\. AI help is back /);
  });
  assert.equal(aiLimitText({ ...err, details: {} }), err.message);
});

// A member's own share (429 ai_user_limit): the server's sentence as app/aiusage.py's SHARE_MESSAGE writes it.
const share = { code: "ai_user_limit", message: "You have used your share of today's AI help. It renews at midnight UTC, in 9 h 30 min.",
  details: { resetsAt: RESETS, retryAfterS: 34200 } };

test("a spent share renews on the member's own clock, never 'midnight UTC'", () => {
  const at = new Date("2026-07-15T14:30:00Z");
  inZone("Europe/Lisbon", () => assert.equal(aiShareText(share, at),
    "You have used your share of today's AI help. It renews tomorrow at 01:00."));
  inZone("America/New_York", () => assert.equal(aiShareText(share, at),
    "You have used your share of today's AI help. It renews at 20:00."));
  inZone("Asia/Tokyo", () => assert.equal(aiShareText(share, new Date("2026-07-15T15:30:00Z")),
    "You have used your share of today's AI help. It renews at 09:00."));
  inZone("UTC", () => assert.equal(aiShareText(share, at), "You have used your share of today's AI help. It renews at midnight."));
  for (const zone of ["Europe/Lisbon", "America/New_York", "Asia/Tokyo", "UTC"]) {
    inZone(zone, () => assert.doesNotMatch(aiShareText(share, at), /UTC/));
  }
});

test("a share already renewed says try again; without resetsAt the server's words stand", () => {
  assert.equal(aiShareText(share, new Date("2026-07-16T00:00:01Z")),
    "You have used your share of today's AI help. It should have renewed by now: try again.");
  assert.equal(aiShareText({ ...share, details: {} }), share.message);
  assert.equal(aiShareText({ ...share, details: { resetsAt: "soon" } }), share.message);
});
