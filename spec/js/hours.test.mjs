// public/hours.js against the shared vectors (spec/fixtures/hours_vectors.json).
// Run: node --test spec/js/hours.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { checkHours, checkVisit, hoursReading, precheckSuggestion, mealMinutes, MEAL_MINUTES, CLOSING_BUFFER_MIN } from "../../public/hours.js";

const all = JSON.parse(
  readFileSync(new URL("../fixtures/hours_vectors.json", import.meta.url), "utf8"),
).vectors;
// OpenStreetMap opening_hours are evaluated by the server (app/hours/osm.py);
// spec/test_hours.py runs those vectors. The page gives them no hours.
const isOsm = (v) => v.place.source === "osm";
const vectors = all.filter((v) => !isOsm(v));

function checkVector(v) {
  const rule = v.rule === "visit" ? checkVisit : checkHours;
  const got = rule(v.place, v.date, v.start, v.durationMin);
  assert.deepStrictEqual(got, v.expect, v.name);
  if ("meal" in v) assert.equal(mealMinutes(v.meal, v.overrideMin ?? null), v.durationMin, v.name);
}

for (const v of vectors) {
  test(v.name, () => checkVector(v));
}

test("vectors file is well formed", () => {
  assert.ok(vectors.length >= 70);
  assert.equal(new Set(all.map((v) => v.name)).size, all.length, "names must be unique");
  assert.ok(vectors.filter((v) => v.rule === "visit").length >= 10);
});

test("OSM places have no hours in the browser (never open)", () => {
  const osm = all.filter(isOsm);
  assert.ok(osm.length >= 10);
  for (const v of osm) {
    const rule = v.rule === "visit" ? checkVisit : checkHours;
    assert.deepStrictEqual(rule(v.place, v.date, v.start, v.durationMin),
      { status: "none", fits: false, closesAt: null, latestStart: null }, v.name);
  }
});

function* mutations(v) {
  const e = v.expect;
  yield ["fits", !e.fits];
  yield ["status", { confirmed: "unconfirmed", unconfirmed: "confirmed", none: "unconfirmed" }[e.status]];
  yield ["closesAt", e.closesAt !== "12:34" ? "12:34" : null];
  yield ["latestStart", e.latestStart !== null ? null : "23:59"];
}

test("a deliberately wrong vector fails", () => {
  for (const i of [0, 10, 22, 45, 90, vectors.length - 1]) {
    for (const [field, wrong] of mutations(vectors[i])) {
      const bad = structuredClone(vectors[i]);
      bad.expect[field] = wrong;
      assert.throws(() => checkVector(bad), assert.AssertionError, `${bad.name}: ${field}`);
    }
  }
});

test("meal minutes", () => {
  assert.deepEqual({ ...MEAL_MINUTES }, { breakfast: 45, brunch: 60, lunch: 60, afternoon_tea: 45, dinner: 75 });
  assert.equal(CLOSING_BUFFER_MIN, 30);
  assert.equal(mealMinutes("dinner"), 75);
  assert.equal(mealMinutes("breakfast", 20), 20);
  assert.equal(mealMinutes(null, 50), 50);
  for (const [meal, override] of [[null, null], ["supper", null], ["lunch", 0], ["lunch", -5], ["lunch", true], ["lunch", 1.5], ["toString", null]]) {
    assert.throws(() => mealMinutes(meal, override), RangeError);
  }
});

test("bad input is refused", () => {
  for (const [date, start, dur] of [
    ["2025-6-3", "12:00", 60], ["2025-02-30", "12:00", 60], ["20250603", "12:00", 60], [null, "12:00", 60],
    ["2025-06-03", "24:00", 60], ["2025-06-03", "9:00", 60], ["2025-06-03", "12:60", 60],
    ["2025-06-03", "12:00", 0], ["2025-06-03", "12:00", true], ["2025-06-03", "12:00", 1.5],
  ]) {
    assert.throws(() => checkHours({}, date, start, dur), RangeError, `${date} ${start} ${dur}`);
  }
});

// How a server check of a place's hours reads on the page (a suggestion's
// line, a preview's badge). No hours known is never "closed" or "does not
// fit": the server's "none" comes with fits false (never open to the rules),
// and the page must say the hours are unknown, in words.
test("a check with no hours reads as unknown, never as closed", () => {
  const none = hoursReading({ status: "none", fits: false, closesAt: null });
  assert.equal(none.tone, "unknown");
  assert.equal(none.badge, "hours unknown");
  assert.match(none.line, /opening hours unknown/i);
  assert.doesNotMatch(`${none.line} ${none.badge} ${none.title}`, /closed|does not fit|won't fit/i);
});

test("a check that fits or not reads as open or closed then, with its source", () => {
  const open = hoursReading({ status: "unconfirmed", fits: true, closesAt: "18:00" });
  assert.deepEqual([open.tone, open.badge], ["open", "open"]);
  assert.equal(open.line, "Usual weekly hours (not confirmed for that date) · closes 18:00");
  assert.equal(open.title, "Open then; closes 18:00");
  const shut = hoursReading({ status: "confirmed", fits: false, closesAt: null });
  assert.deepEqual([shut.tone, shut.badge], ["closed", "closed then"]);
  assert.equal(shut.line, "Hours confirmed for that date · does not fit");
  assert.equal(hoursReading(null), null);
  assert.equal(hoursReading({}), null);
});

// Places to eat / Explore nearby warn before Add when an edited start or
// length will not fit: the server sends the date's periods with each
// suggestion (hours.spans, minutes from the date's midnight; none when no
// hours are known), the same rule decides (a meal: + 30 minutes).
test("a suggestion's edited time is prechecked on the periods the server sent", () => {
  const lunch = { status: "unconfirmed", fits: true, closesAt: "15:00", spans: [[720, 900], [1140, 1380]] };
  assert.deepEqual(precheckSuggestion(lunch, "12:30", 60, true), { fits: true, latestStart: "21:30" });
  const late = precheckSuggestion(lunch, "14:00", 60, true);  // 15:00 close, 30 min before: no
  assert.deepEqual(late, { fits: false, latestStart: "21:30" });
  assert.equal(precheckSuggestion(lunch, "14:00", 60, false).fits, true, "a visit has no buffer");
  assert.equal(precheckSuggestion(lunch, "04:00", 60, true).fits, false);
  // A bar open past midnight: a start late in the evening carries on.
  const bar = { status: "unconfirmed", fits: true, closesAt: "03:00", spans: [[0, 180], [1080, 1620]] };
  assert.equal(precheckSuggestion(bar, "23:30", 120, false).fits, true);
  // No hours known, or an old answer without spans: no opinion (never "won't fit").
  assert.equal(precheckSuggestion({ status: "none", fits: false, closesAt: null, spans: null }, "04:00", 60, false), null);
  assert.equal(precheckSuggestion({ status: "confirmed", fits: true, closesAt: "18:00" }, "04:00", 60, true), null);
  assert.equal(precheckSuggestion(lunch, "", 60, true), null);
  assert.equal(precheckSuggestion(lunch, "12:30", 0, true), null);
});
