// The reference evaluator for OSM opening_hours (the npm package `opening_hours`,
// used by OSM's own tools), run by spec/test_osm_hours_reference.py.
//
// Usage: TZ=Europe/Copenhagen node osm_reference.mjs VALUES_FILE DATE...
// VALUES_FILE has one value per line (lines starting with # are comments);
// DATE is YYYY-MM-DD. Prints one JSON object:
//   {version, results: [{value, parses, error?, days: {DATE: {unknown, intervals}}}]}
// for each date D, evaluated over D 00:00 .. D+2 00:00 local time:
//   intervals: the open periods that start on D, in minutes from D's midnight
//     (a period carried over from D-1 starts at 0; one running past midnight
//     ends after 1440; the window caps ends at 2880), touching periods merged;
//   unknown: whether any part of D itself (0..1440) is in an "unknown" period.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import opening_hours from "opening_hours";

const require = createRequire(import.meta.url);
const { version } = require("opening_hours/package.json");

// What Nominatim answers for central Copenhagen (lat/lon are strings there too).
const NOMINATIM = {
  lat: "55.676",
  lon: "12.568",
  address: { country_code: "dk", state: "Region Hovedstaden" },
};

const [valuesFile, ...dates] = process.argv.slice(2);
if (!valuesFile || dates.length === 0) {
  console.error("usage: node osm_reference.mjs VALUES_FILE DATE...");
  process.exit(2);
}
if (new Date(2026, 6, 1).getTimezoneOffset() !== -120) {
  console.error("run with TZ=Europe/Copenhagen (the dates are Copenhagen's local days)");
  process.exit(2);
}

const values = readFileSync(valuesFile, "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "" && !line.startsWith("#"));

function localDay(iso, plusDays = 0) {
  const [y, m, d] = iso.split("-").map(Number);
  return new Date(y, m - 1, d + plusDays);
}

// Wall-clock minutes from the start of `day` (calendar days, not elapsed ms).
function minutesFrom(day, t) {
  const days = Math.round(
    (Date.UTC(t.getFullYear(), t.getMonth(), t.getDate()) -
      Date.UTC(day.getFullYear(), day.getMonth(), day.getDate())) / 86400000,
  );
  return days * 1440 + t.getHours() * 60 + t.getMinutes();
}

function evaluateDay(oh, iso) {
  const from = localDay(iso);
  const to = localDay(iso, 2);
  const open = [];
  let unknown = false;
  for (const [start, end, isUnknown] of oh.getOpenIntervals(from, to)) {
    const s = minutesFrom(from, start);
    const e = minutesFrom(from, end);
    if (isUnknown) {
      if (s < 1440) unknown = true;
      continue;
    }
    const last = open[open.length - 1];
    if (last && last[1] === s) last[1] = e;
    else open.push([s, e]);
  }
  return { unknown, intervals: open.filter(([s]) => s < 1440) };
}

const results = values.map((value) => {
  let oh;
  try {
    oh = new opening_hours(value, NOMINATIM);
  } catch (error) {
    return { value, parses: false, error: String(error).split("\n")[0] };
  }
  const days = {};
  for (const iso of dates) days[iso] = evaluateDay(oh, iso);
  return { value, parses: true, days };
});

process.stdout.write(JSON.stringify({ version, results }) + "\n");
