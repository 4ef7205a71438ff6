// The opening-hours rules: the browser twin of app/hours/rules.py.
// Both run against spec/fixtures/hours_vectors.json; change them together.
// See app/hours/rules.py's docstring for the full rules. In short: a meal fits when
// the meal plus CLOSING_BUFFER_MIN lies inside ONE opening period on the
// trip's date (checkHours); any other visit fits when the visit lies inside
// one period, no buffer (checkVisit). Periods become spans [open, close) in
// minutes from 00:00 on the date (place-local wall clock), so a period past
// midnight ends after 1440 and the previous evening's period starts below 0.
// Dated currentOpeningHours that cover the date are "confirmed", weekly
// regularOpeningHours "unconfirmed", no hours "none" (never open). KITCHEN
// secondary hours, when listed, bound a meal too. OpenStreetMap places
// ({source: "osm"}) are evaluated by the server only: here they have no
// hours ("none"), which is never read as open.

export const MEAL_MINUTES = Object.freeze({
  breakfast: 45, brunch: 60, lunch: 60, afternoon_tea: 45, dinner: 75,
});
export const CLOSING_BUFFER_MIN = 30;

const DAY = 24 * 60;
const WEEK = 7 * DAY;
const MERGE_GAP = 1; // minutes of "break" that are really one period (23:59 -> 00:00)
const ALWAYS = [-10 * WEEK, 10 * WEEK]; // the 24-hour span; far beyond any meal
const MS_PER_DAY = 86400000;

export function mealMinutes(meal, override = null) {
  if (override !== null && override !== undefined) {
    if (!Number.isInteger(override) || override <= 0) {
      throw new RangeError("duration must be a positive number of minutes");
    }
    return override;
  }
  if (!Object.hasOwn(MEAL_MINUTES, String(meal))) {
    throw new RangeError(`unknown meal ${JSON.stringify(meal)}: give a duration`);
  }
  return MEAL_MINUTES[meal];
}

const NO_HOURS = Object.freeze({ status: "none", fits: false, closesAt: null, latestStart: null });

// {status, spans} for the date, or null (no hours). meal: kitchen hours bound the periods.
export function hoursOn(place, date, { meal = true } = {}) {
  const day = parseDate(date);
  const p = isObj(place) ? place : {};
  if (p.source === "osm") return null; // the server evaluates OSM opening_hours
  const main = choose(p.currentOpeningHours, p.regularOpeningHours, day);
  if (!main) return null;
  let [status, spans] = main;
  if (meal) {
    const kitchen = choose(kitchenOf(p.currentSecondaryOpeningHours),
      kitchenOf(p.regularSecondaryOpeningHours), day);
    if (kitchen) {
      spans = intersect(spans, kitchen[1]);
      if (kitchen[0] !== "confirmed") status = "unconfirmed"; // the bound is only the usual one
    }
  }
  return { status, spans };
}

// How a check of a place's hours ({status, fits, closesAt}, as the server's
// suggestions and previews carry it) reads on the page: {tone, line, badge,
// title}, or null without one. tone: "open", "closed" or "unknown". A place
// with no hours known ("none": no hours listed, or an OpenStreetMap value that
// can't be read) comes with fits false, since the rules never take it as open,
// but it is not known to be closed either: it reads as unknown, in words.
const HOURS_SOURCE = {
  confirmed: "Hours confirmed for that date",
  unconfirmed: "Usual weekly hours (not confirmed for that date)",
};

export function hoursReading(hours) {
  if (!isObj(hours) || typeof hours.status !== "string") return null;
  if (hours.status === "none") {
    return { tone: "unknown", line: "Opening hours unknown for that date", badge: "hours unknown",
      title: "No opening hours are known for this date: check with the place" };
  }
  const closes = hours.closesAt ? ` · closes ${hours.closesAt}` : "";
  const open = hours.fits === true;
  return {
    tone: open ? "open" : "closed",
    line: `${HOURS_SOURCE[hours.status] || hours.status}${closes}${open ? "" : " · does not fit"}`,
    badge: open ? "open" : "closed then",
    title: open ? (hours.closesAt ? `Open then; closes ${hours.closesAt}` : "Open then") : "Not open for the whole visit at this time",
  };
}

// Whether [at, at + duration + buffer) lies inside one period (at in 0..1439).
export function fit(hours, at, durationMin, bufferMin) {
  if (!hours) return { ...NO_HOURS };
  const need = durationMin + bufferMin;
  const current = hours.spans.find(([o, c]) => o <= at && at < c) ?? null;
  const fits = current !== null && at + need <= current[1];
  const closesAt = current && current[1] - at <= DAY ? fmt(current[1]) : null;
  // Latest start on this date (00:00..23:59) anywhere in a period.
  let latest = null;
  for (const [o, c] of hours.spans) {
    const s = Math.min(c - need, DAY - 1);
    if (s >= Math.max(o, 0) && (latest === null || s > latest)) latest = s;
  }
  return { status: hours.status, fits, closesAt, latestStart: latest === null ? null : fmt(latest) };
}

// Whether an edited start (HH:MM on the suggestion's date) and length fit
// the periods the server sent with a suggestion (hours.spans: [open, close)
// minutes from the date's midnight, for Google's and OpenStreetMap's hours
// alike), by the meal rule (meal: + CLOSING_BUFFER_MIN) or the visit rule.
// {fits, latestStart}, or null when there is nothing to go on (no hours
// known, no spans, no usable input): the server checks again on apply.
export function precheckSuggestion(hours, start, durationMin, meal) {
  if (!isObj(hours) || hours.status === "none" || !Array.isArray(hours.spans)) return null;
  if (!Number.isInteger(durationMin) || durationMin <= 0) return null;
  const spans = hours.spans.filter((sp) => Array.isArray(sp) && sp.length === 2 && sp.every(Number.isInteger));
  let at;
  try {
    at = parseClock(start);
  } catch {
    return null;
  }
  const r = fit({ status: hours.status, spans }, at, durationMin, meal ? CLOSING_BUFFER_MIN : 0);
  return { fits: r.fits, latestStart: r.latestStart };
}

// The meal rule at HH:MM on the date.
export function checkHours(place, date, start, durationMin) {
  const at = parseClock(start);
  checkDuration(durationMin);
  return fit(hoursOn(place, date, { meal: true }), at, durationMin, CLOSING_BUFFER_MIN);
}

// The visit rule (doors' hours, no buffer) at HH:MM on the date.
export function checkVisit(place, date, start, durationMin) {
  const at = parseClock(start);
  checkDuration(durationMin);
  return fit(hoursOn(place, date, { meal: false }), at, durationMin, 0);
}

function checkDuration(durationMin) {
  if (!Number.isInteger(durationMin) || durationMin <= 0) {
    throw new RangeError("duration must be a positive number of minutes");
  }
}

function choose(current, regular, day) {
  if (isObj(current) && covers(current, day)) {
    return ["confirmed", merge(spansOf(current.periods, day, true))];
  }
  if (isObj(regular) && Array.isArray(regular.periods)) {
    return ["unconfirmed", merge(spansOf(regular.periods, day, false))];
  }
  return null;
}

function kitchenOf(entries) {
  if (!Array.isArray(entries)) return null;
  return entries.find((e) => isObj(e) && e.secondaryHoursType === "KITCHEN") ?? null;
}

function covers(hours, day) {
  const dates = [];
  for (const p of list(hours.periods).map(obj)) {
    const d = ymd(obj(p.open).date);
    if (d === null) continue;
    dates.push(d);
    if (is24h(p)) dates.push(d + 6);
  }
  for (const sd of list(hours.specialDays)) {
    const d = ymd(obj(sd).date);
    if (d !== null) dates.push(d);
  }
  return dates.length > 0 && Math.min(...dates) <= day && day <= Math.max(...dates);
}

function spansOf(periods, day, dated) {
  const weekday = (((day + 4) % 7) + 7) % 7; // day 0 (1970-01-01) was a Thursday; 0 = Sunday
  const out = [];
  for (const p of list(periods).map(obj)) {
    if (is24h(p)) return [ALWAYS];
    const op = point(p.open);
    const cl = point(p.close);
    if (op === null || cl === null) continue; // malformed: never guess a missing end
    // Never assume close.day == open.day: the week wraps (Sat 22:00 -> Sun 02:00).
    const length = mod((cl[0] * DAY + cl[1]) - (op[0] * DAY + op[1]), WEEK);
    if (dated) {
      const od = ymd(p.open.date);
      if (od === null) continue;
      const o = (od - day) * DAY + op[1];
      const cd = ymd(p.close.date);
      const c = cd !== null ? (cd - day) * DAY + cl[1] : o + length;
      if (c > o) out.push([o, c]);
    } else if (length > 0) { // a zero-length weekly period is ambiguous: not open
      const base = (op[0] - weekday) * DAY + op[1];
      for (const k of [-2, -1, 0, 1]) out.push([base + k * WEEK, base + k * WEEK + length]);
    }
  }
  return out;
}

function merge(spans) {
  const out = [];
  for (const [o, c] of [...spans].sort((a, b) => a[0] - b[0] || a[1] - b[1])) {
    const last = out[out.length - 1];
    if (last && o <= last[1] + MERGE_GAP) last[1] = Math.max(last[1], c);
    else out.push([o, c]);
  }
  return out;
}

function intersect(a, b) {
  const out = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const o = Math.max(a[i][0], b[j][0]);
    const c = Math.min(a[i][1], b[j][1]);
    if (o < c) out.push([o, c]);
    if (a[i][1] < b[j][1]) i++;
    else j++;
  }
  return out;
}

function is24h(p) {
  const op = point(p.open);
  return (p.close === undefined || p.close === null) && op !== null && op[1] === 0;
}

// [day, minutes] of a Point; proto3 JSON may omit zero fields, so they default to 0.
function point(pt) {
  if (!isObj(pt)) return null;
  const d = pt.day ?? 0;
  const h = pt.hour ?? 0;
  const m = pt.minute ?? 0;
  if (![d, h, m].every(Number.isInteger) || d < 0 || d > 6 || m < 0 || m > 59) return null;
  if (!((h >= 0 && h <= 23) || (h === 24 && m === 0))) return null; // 24:00 = midnight
  return [d, h * 60 + m];
}

// A {year, month, day} as a day number (days since 1970-01-01), or null.
function ymd(d) {
  const { year: y, month: m, day: dd } = obj(d);
  if (![y, m, dd].every(Number.isInteger)) return null;
  return dayNumber(y, m, dd);
}

function dayNumber(y, m, d) {
  if (y < 1 || y > 9999 || m < 1 || m > 12 || d < 1) return null;
  const t = new Date(Date.UTC(2000, m - 1, d));
  t.setUTCFullYear(y); // Date.UTC maps years 0-99 to 1900s
  if (t.getUTCFullYear() !== y || t.getUTCMonth() !== m - 1 || t.getUTCDate() !== d) return null;
  return Math.round(t.getTime() / MS_PER_DAY);
}

function parseDate(s) {
  const m = typeof s === "string" ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(s) : null;
  const day = m ? dayNumber(Number(m[1]), Number(m[2]), Number(m[3])) : null;
  if (day === null) throw new RangeError(`date must be YYYY-MM-DD, got ${JSON.stringify(s)}`);
  return day;
}

function parseClock(s) {
  const m = typeof s === "string" ? /^([01]\d|2[0-3]):([0-5]\d)$/.exec(s) : null;
  if (!m) throw new RangeError(`start must be HH:MM, got ${JSON.stringify(s)}`);
  return Number(m[1]) * 60 + Number(m[2]);
}

function fmt(minutes) {
  const t = mod(minutes, DAY);
  return `${String(Math.floor(t / 60)).padStart(2, "0")}:${String(t % 60).padStart(2, "0")}`;
}

const mod = (a, n) => ((a % n) + n) % n;
const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const obj = (v) => (isObj(v) ? v : {});
const list = (v) => (Array.isArray(v) ? v : []);
