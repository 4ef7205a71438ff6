// The AI usage page: today against each app-wide limit, each member's share
// of it, a 30-day chart (inline
// SVG, no library) and the table by day, feature and model. Data comes from
// GET /api/admin/ai-usage, which answers 404 to everyone but the admins.

const SVG = "http://www.w3.org/2000/svg";
const DAYS = 30;
// A limit bar turns amber above this share and red at the limit; the words
// beside it say the same, so colour is never the only cue.
const NEAR_SHARE = 0.8;
// Stable colours per feature (the order of app/aiusage.py FEATURES); others get the spares.
const KNOWN_FEATURES = ["copilot", "plan_day", "agent_chat", "agent_eval", "agent_ambient"];
// What each feature is, in the words the page uses for it (never the code's name).
const FEATURE_WORDS = {
  copilot: "Day review",
  plan_day: "Optimize my day",
  agent_chat: "AI chat",
  agent_eval: "Checks after edits",
  agent_ambient: "Replies in the group chat",
};
export function featureWords(feature) {
  return FEATURE_WORDS[feature] || String(feature).replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());
}
const PALETTE = ["#0f766e", "#6d5bd0", "#ea7a2f", "#0284c7", "#db2777", "#65a30d", "#a16207", "#64748b"];

const numberFormat = new Intl.NumberFormat("en");
const shortDate = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", timeZone: "UTC" });
const longDate = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", year: "numeric", timeZone: "UTC" });

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  for (const child of children) node.append(child);
  return node;
}

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  for (const child of children) node.append(child);
  return node;
}

const fmt = (n) => numberFormat.format(n);
const utcDate = (iso) => new Date(`${iso}T00:00:00Z`);
const plural = (n, one, many = `${one}s`) => `${fmt(n)} ${n === 1 ? one : many}`;

export function formatCost(value) {
  if (value === null || value === undefined) return "—";
  return `$${Number(value).toFixed(value < 0.01 ? 4 : 2)}`;
}

export async function loadUsage(fetchImpl = fetch) {
  const response = await fetchImpl("/api/admin/ai-usage", {
    credentials: "same-origin",
    headers: { Accept: "application/json" },
  });
  if (response.status === 404) {
    await response.body?.cancel(); // unread, an uncached (no-store) answer would keep its connection busy
    return { error: "Not available", notFound: true };
  }
  let payload = null;
  try {
    payload = await response.json();
  } catch {
    payload = null;
  }
  if (!response.ok) {
    return { error: payload?.error?.message || `Usage could not be loaded (HTTP ${response.status}).` };
  }
  return { data: payload.data };
}

// ok below 80 %, near above it, full at (or past) the limit.
export function usageLevel(used, limit) {
  if (!(limit > 0)) return { level: "full", share: 1, percent: "100%" };
  const share = used / limit;
  let percent;
  if (used >= limit) percent = `${Math.round(share * 100)}%`;
  else if (used > 0 && share < 0.01) percent = "<1%";
  else percent = `${Math.min(99, Math.floor(share * 100))}%`; // never "100%" below the limit
  const level = used >= limit ? "full" : share > NEAR_SHARE ? "near" : "ok";
  return { level, share: Math.min(1, share), percent };
}

const LEVEL_WORDS = { near: "Near the limit", full: "Limit reached" };

function limitCard(key, label, used, limit, unit, detail) {
  const { level, share, percent } = usageLevel(used, limit);
  const labelId = `limit-${key}-label`;
  const words = LEVEL_WORDS[level];
  const fill = el("span", { class: "admin-meter-fill" });
  fill.style.width = `${(share * 100).toFixed(2)}%`;
  const meter = el("div", {
    class: "admin-meter", role: "meter", "aria-labelledby": labelId,
    "aria-valuemin": 0, "aria-valuemax": limit, "aria-valuenow": Math.min(used, limit),
    "aria-valuetext": `${fmt(used)} of ${fmt(limit)} ${unit}, ${percent}${words ? `, ${words.toLowerCase()}` : ""}`,
  }, fill);
  return el("article", { class: `card admin-limit is-${level}`, "data-limit": key },
    el("div", { class: "admin-limit-head" },
      el("h3", { id: labelId, class: "admin-limit-name" }, label),
      words ? el("span", { class: "pill admin-level" }, words) : ""),
    el("p", { class: "admin-figure" },
      el("strong", {}, fmt(used)), el("span", { class: "muted" }, ` of ${fmt(limit)}`)),
    meter,
    el("p", { class: "admin-limit-note" }, el("span", { class: "admin-percent" }, percent), ` · ${detail}`));
}

export function renderToday(container, today, limits) {
  const reserved = today.reservedOutputTokens || 0;
  const tokens = today.inputTokens + today.outputTokens + reserved;
  container.replaceChildren(
    limitCard("calls", "Calls", today.calls, limits.dailyCalls, "calls", "per UTC day"),
    limitCard("tokens", "Tokens", tokens, limits.dailyTokens, "tokens",
      reserved ? `${fmt(reserved)} reserved by running calls` : "input + output"),
    limitCard("running", "Running now", today.running, limits.concurrent, "calls", "at once"),
    el("article", { class: "card admin-limit admin-cost" },
      el("div", { class: "admin-limit-head" }, el("h3", { class: "admin-limit-name" }, "Estimated cost")),
      el("p", { class: "admin-figure" }, el("strong", {}, formatCost(today.costUsd))),
      el("p", { class: "admin-limit-note" },
        `Each call: up to ${fmt(limits.maxOutputTokens)} output tokens and ${limits.timeoutMs / 1000}\u00a0s.`)),
  );
}

// Each member's use of their fair share today (WAYLINE_AI_USER_DAILY_SHARE of
// each daily limit), most calls first: a meter for calls and one for tokens.
const SHARE_WORDS = { near: "Near their share", full: "Share used" };

function shareMeter(label, used, limit, unit) {
  const { level, share, percent } = usageLevel(used, limit);
  const fill = el("span", { class: "admin-meter-fill" });
  fill.style.width = `${(share * 100).toFixed(2)}%`;
  return el("div", { class: `admin-share is-${level}` },
    el("div", {
      class: "admin-meter", role: "meter", "aria-label": label,
      "aria-valuemin": 0, "aria-valuemax": limit, "aria-valuenow": Math.min(used, limit),
      "aria-valuetext": `${fmt(used)} of ${fmt(limit)} ${unit}, ${percent}`,
    }, fill),
    el("span", { class: "admin-share-figure" }, `${fmt(used)} of ${fmt(limit)} ${unit}`));
}

export function renderMembers(list, note, members, limits) {
  const share = Math.round((limits.userShare || 0) * 100);
  note.textContent = `Each member may use ${share}% of each daily limit: ${plural(limits.userDailyCalls, "call")} and `
    + `${plural(limits.userDailyTokens, "token")}. Checks and replies that a member's edits and messages start `
    + "count as theirs. Past the share those are skipped, and the member's own questions are told when it renews.";
  if (!members.length) {
    list.replaceChildren(el("li", { class: "admin-member-empty muted" }, "No one has used AI today."));
    return;
  }
  list.replaceChildren(...members.map((m) => {
    const calls = usageLevel(m.calls, limits.userDailyCalls).level;
    const tokens = usageLevel(m.tokens, limits.userDailyTokens).level;
    const level = [calls, tokens].includes("full") ? "full" : [calls, tokens].includes("near") ? "near" : "ok";
    const name = m.name || "Deleted member";
    return el("li", { class: `admin-member is-${level}`, "data-user-id": m.userId },
      el("div", { class: "admin-member-head" },
        el("strong", { class: "admin-member-name" }, name),
        m.username && m.username !== name ? el("span", { class: "muted" }, ` @${m.username}`) : "",
        SHARE_WORDS[level] ? el("span", { class: "pill admin-level" }, SHARE_WORDS[level]) : ""),
      shareMeter(`Calls by ${name}`, m.calls, limits.userDailyCalls, "calls"),
      shareMeter(`Tokens by ${name}`, m.tokens, limits.userDailyTokens, "tokens"));
  }));
}

function lastDays(todayIso, count) {
  const end = utcDate(todayIso);
  const dates = [];
  for (let i = count - 1; i >= 0; i -= 1) {
    dates.push(new Date(end.getTime() - i * 86400000).toISOString().slice(0, 10));
  }
  return dates;
}

// One entry per day of the window (oldest first), zero days included.
export function dailyTotals(days, todayIso) {
  const totals = new Map(lastDays(todayIso, DAYS).map((date) => [date, { calls: 0, tokens: 0, byFeature: {} }]));
  for (const row of days) {
    const total = totals.get(row.date);
    if (!total) continue;
    total.calls += row.calls;
    total.tokens += row.inputTokens + row.outputTokens;
    total.byFeature[row.feature] = (total.byFeature[row.feature] || 0) + row.calls;
  }
  return [...totals.entries()].map(([date, t]) => ({ date, ...t }));
}

// Features with calls in the window, known ones first so colours stay put.
export function featureColours(days) {
  const seen = [...new Set(days.filter((row) => row.calls > 0).map((row) => row.feature))];
  const rank = (f) => (KNOWN_FEATURES.includes(f) ? KNOWN_FEATURES.indexOf(f) : KNOWN_FEATURES.length);
  seen.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const colours = new Map();
  seen.forEach((feature, i) => {
    const known = KNOWN_FEATURES.indexOf(feature);
    colours.set(feature, PALETTE[known >= 0 ? known : Math.min(PALETTE.length - 1, KNOWN_FEATURES.length + i)]);
  });
  return colours;
}

// A round top for the y axis and the step between its gridlines.
function yScale(max) {
  if (max <= 4) return { top: Math.max(1, max), step: 1 };
  const raw = max / 4;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw);
  return { top: Math.ceil(max / step) * step, step };
}

export function renderLegend(list, days, colours) {
  const calls = new Map();
  for (const row of days) calls.set(row.feature, (calls.get(row.feature) || 0) + row.calls);
  list.replaceChildren(...[...colours.entries()].map(([feature, colour]) => {
    const swatch = el("span", { class: "admin-swatch", "aria-hidden": "true" });
    swatch.style.background = colour;
    return el("li", {}, swatch, el("span", { class: "admin-feature-name" }, featureWords(feature)),
      el("span", { class: "muted" }, ` ${fmt(calls.get(feature) || 0)}`));
  }));
}

// Drawn at the container's pixel width so the labels stay at a readable size
// on a phone as on a desktop; main() redraws it when the width changes.
export function renderChart(container, days, todayIso, colours = featureColours(days)) {
  const totals = dailyTotals(days, todayIso);
  const width = Math.max(280, Math.round(container.clientWidth || 600));
  const height = width < 520 ? 190 : 230;
  const narrow = width < 520;
  const max = Math.max(0, ...totals.map((t) => t.calls));
  const { top: yTop, step: yStep } = yScale(max);
  const left = 12 + 7 * String(fmt(yTop)).length;
  const right = 4;
  const plotTop = 10;
  const bottom = 26;
  const plotHeight = height - plotTop - bottom;
  const base = height - bottom;
  const slot = (width - left - right) / totals.length;
  const gap = Math.max(1, Math.min(6, slot * 0.22));
  const sum = totals.reduce((n, t) => n + t.calls, 0);
  const busiest = totals.reduce((a, b) => (b.calls > a.calls ? b : a), totals[0]);
  const today = totals[totals.length - 1];
  const y = (value) => base - (plotHeight * value) / yTop;

  const titleId = "admin-chart-title";
  const descId = "admin-chart-desc";
  const description = sum === 0
    ? `No model calls from ${shortDate.format(utcDate(totals[0].date))} to ${shortDate.format(utcDate(today.date))}.`
    : `From ${shortDate.format(utcDate(totals[0].date))} to ${shortDate.format(utcDate(today.date))}: ` +
      `${plural(sum, "call")} in total; the busiest day was ${shortDate.format(utcDate(busiest.date))} ` +
      `with ${plural(busiest.calls, "call")}; today ${plural(today.calls, "call")}. ` +
      "The table below lists every day by feature and model.";
  const chart = svg("svg", {
    viewBox: `0 0 ${width} ${height}`, width, height, role: "img", class: "admin-chart-svg",
    "aria-labelledby": `${titleId} ${descId}`,
  },
  svg("title", { id: titleId }, `Model calls per UTC day, last ${DAYS} days`),
  svg("desc", { id: descId }, description));

  for (let value = 0; value <= yTop; value += yStep) {
    chart.append(
      svg("line", { x1: left, y1: y(value), x2: width - right, y2: y(value), class: value === 0 ? "axis" : "grid" }),
      svg("text", { x: left - 6, y: y(value) + 4, "text-anchor": "end", class: "tick" }, fmt(value)),
    );
  }

  totals.forEach((t, i) => {
    const x = left + i * slot + gap / 2;
    const barWidth = Math.max(1, slot - gap);
    const group = svg("g", { class: "day" + (i === totals.length - 1 ? " today" : "") },
      svg("title", {}, `${shortDate.format(utcDate(t.date))}: ${plural(t.calls, "call")}, ${fmt(t.tokens)} tokens`));
    let stacked = 0;
    for (const [feature, colour] of colours) {
      const calls = t.byFeature[feature] || 0;
      if (!calls) continue;
      const segment = svg("rect", { x, y: y(stacked + calls), width: barWidth,
        height: y(stacked) - y(stacked + calls) });
      segment.style.fill = colour;
      group.append(segment);
      stacked += calls;
    }
    if (t.calls === 0) group.append(svg("rect", { x, y: base - 2, width: barWidth, height: 2, class: "zero" }));
    chart.append(group);
    const back = totals.length - 1 - i;
    if (back % 7 === 0) { // today, and every week back from it
      const centre = x + barWidth / 2;
      const label = back === 0 ? "Today" : shortDate.format(utcDate(t.date));
      const anchor = back === 0 && narrow ? "end" : "middle";
      chart.append(svg("text", { x: anchor === "end" ? x + barWidth : centre, y: height - 8, "text-anchor": anchor,
        class: "tick" + (back === 0 ? " tick-today" : "") }, label));
    }
  });
  if (sum === 0) {
    chart.append(svg("text", { x: left + (width - left) / 2, y: plotTop + plotHeight / 2, "text-anchor": "middle",
      class: "empty-note" }, "No model calls yet"));
  }
  container.replaceChildren(chart);
}

export function renderTable(tbody, days, tfoot = null, colours = featureColours(days)) {
  if (tfoot) tfoot.replaceChildren();
  tbody.closest(".admin-table-card")?.classList.toggle("is-empty", days.length === 0);
  if (days.length === 0) {
    tbody.replaceChildren(el("tr", {},
      el("td", { colspan: 7, class: "admin-empty" }, "No model calls in the last 30 days.")));
    return;
  }
  tbody.replaceChildren(...days.map((row, i) => {
    const swatch = el("span", { class: "admin-swatch", "aria-hidden": "true" });
    swatch.style.background = colours.get(row.feature) || PALETTE[PALETTE.length - 1];
    // A day's first row shows its date; the rest keep it for screen readers only.
    const first = i === 0 || days[i - 1].date !== row.date;
    return el("tr", first ? { class: "day-start" } : {},
      el("th", { scope: "row", class: "admin-date" },
        first ? row.date : el("span", { class: "visually-hidden" }, row.date)),
      el("td", {}, el("span", { class: "admin-feature" }, swatch, featureWords(row.feature))),
      el("td", { class: "admin-model" }, row.model),
      el("td", { class: "num" }, fmt(row.calls)),
      el("td", { class: "num" }, fmt(row.inputTokens)),
      el("td", { class: "num" }, fmt(row.outputTokens)),
      el("td", { class: "num" }, formatCost(row.costUsd)));
  }));
  if (tfoot && days.length > 1) {
    const add = (key) => days.reduce((n, row) => n + row[key], 0);
    const priced = days.filter((row) => row.costUsd !== null && row.costUsd !== undefined);
    let cost = "—";
    if (priced.length) {
      const known = formatCost(priced.reduce((n, row) => n + row.costUsd, 0));
      cost = priced.length === days.length ? known : `≥ ${known}`; // some calls not priced yet
    }
    tfoot.replaceChildren(el("tr", {},
      el("th", { scope: "row", colspan: 3 }, `Total, last ${DAYS} days`),
      el("td", { class: "num" }, fmt(add("calls"))),
      el("td", { class: "num" }, fmt(add("inputTokens"))),
      el("td", { class: "num" }, fmt(add("outputTokens"))),
      el("td", { class: "num" }, cost)));
  }
}

function showProblem(status, message, notFound) {
  status.classList.add(notFound ? "is-unavailable" : "is-error");
  status.querySelector(".spinner")?.remove();
  document.getElementById("admin-status-text").textContent = message;
  document.getElementById("admin-back").hidden = false;
}

async function main() {
  const page = document.getElementById("admin");
  const status = document.getElementById("admin-status");
  let result;
  try {
    result = await loadUsage();
  } catch {
    result = { error: "Usage could not be loaded. Check your connection and try again." };
  }
  page.setAttribute("aria-busy", "false");
  if (result.error) {
    showProblem(status, result.error, result.notFound);
    return;
  }
  const { today, limits, days, members } = result.data;
  const todayIso = today.date || new Date().toISOString().slice(0, 10); // the server's UTC day
  status.hidden = true;
  const colours = featureColours(days);
  document.getElementById("admin-today-date").textContent = `${longDate.format(utcDate(todayIso))} (UTC)`;
  renderToday(document.getElementById("admin-bars"), today, limits);
  renderMembers(document.getElementById("admin-member-list"), document.getElementById("admin-share-note"),
    members || [], limits);
  document.getElementById("admin-members").hidden = false;
  renderLegend(document.getElementById("admin-legend"), days, colours);
  const table = document.getElementById("admin-table");
  renderTable(table.tBodies[0], days, table.tFoot, colours);
  document.getElementById("admin-today").hidden = false;
  document.getElementById("admin-history").hidden = false;

  // Drawn once visible (it needs the width), then again when the width changes.
  const plot = document.getElementById("admin-chart");
  let drawnWidth = 0;
  const draw = () => {
    if (plot.clientWidth === drawnWidth) return;
    drawnWidth = plot.clientWidth;
    renderChart(plot, days, todayIso, colours);
  };
  draw();
  let pending = 0;
  window.addEventListener("resize", () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(draw);
  });
}

if (typeof document !== "undefined" && document.getElementById("admin")) {
  main();
}
