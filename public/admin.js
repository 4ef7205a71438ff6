// The AI usage page: today against each app-wide limit, a 30-day chart (inline
// SVG, no library) and the table by day, feature and model. Data comes from
// GET /api/admin/ai-usage, which answers 404 to everyone but the admins.

const SVG = "http://www.w3.org/2000/svg";
const DAYS = 30;

const numberFormat = new Intl.NumberFormat("en");

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

export function formatCost(value) {
  if (value === null || value === undefined) return "—";
  return `$${Number(value).toFixed(value < 0.01 ? 4 : 2)}`;
}

export async function loadUsage(fetchImpl = fetch) {
  const response = await fetchImpl("/api/admin/ai-usage", {
    credentials: "same-origin",
    headers: { Accept: "application/json" },
  });
  if (response.status === 404) return { error: "Not available" };
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

function bar(label, used, limit, detail) {
  const share = limit > 0 ? Math.min(1, used / limit) : 1;
  const id = `bar-${label.toLowerCase().replace(/[^a-z]+/g, "-")}`;
  const meter = el("meter", { id, min: 0, max: limit, value: Math.min(used, limit), low: limit * 0.7,
    high: limit * 0.9, optimum: 0 });
  meter.textContent = `${numberFormat.format(used)} of ${numberFormat.format(limit)}`;
  const row = el("div", { class: "admin-bar" + (share >= 1 ? " is-full" : "") },
    el("label", { for: id }, label),
    meter,
    el("span", { class: "admin-bar-text" },
      `${numberFormat.format(used)} of ${numberFormat.format(limit)}${detail ? ` · ${detail}` : ""}`));
  return row;
}

export function renderToday(container, extra, today, limits) {
  const tokens = today.inputTokens + today.outputTokens + (today.reservedOutputTokens || 0);
  container.replaceChildren(
    bar("Calls", today.calls, limits.dailyCalls, "per UTC day"),
    bar("Tokens", tokens, limits.dailyTokens,
      today.reservedOutputTokens ? `${numberFormat.format(today.reservedOutputTokens)} reserved` : "input + output"),
    bar("Running now", today.running, limits.concurrent, "at once"),
  );
  extra.textContent = `Estimated cost today: ${formatCost(today.costUsd)}. ` +
    `Each call may use up to ${numberFormat.format(limits.maxOutputTokens)} output tokens and ` +
    `${limits.timeoutMs / 1000} s.`;
}

function lastDays(todayIso, count) {
  const end = new Date(`${todayIso}T00:00:00Z`);
  const dates = [];
  for (let i = count - 1; i >= 0; i -= 1) {
    dates.push(new Date(end.getTime() - i * 86400000).toISOString().slice(0, 10));
  }
  return dates;
}

export function dailyTotals(days, todayIso) {
  const totals = new Map(lastDays(todayIso, DAYS).map((date) => [date, { calls: 0, tokens: 0 }]));
  for (const row of days) {
    const total = totals.get(row.date);
    if (!total) continue;
    total.calls += row.calls;
    total.tokens += row.inputTokens + row.outputTokens;
  }
  return [...totals.entries()].map(([date, t]) => ({ date, ...t }));
}

export function renderChart(container, days, todayIso) {
  const totals = dailyTotals(days, todayIso);
  const width = 600;
  const height = 160;
  const top = 10;
  const bottom = 24;
  const left = 32;
  const step = (width - left) / totals.length;
  const max = Math.max(1, ...totals.map((t) => t.calls));
  const sum = totals.reduce((n, t) => n + t.calls, 0);
  const chart = svg("svg", {
    viewBox: `0 0 ${width} ${height}`, role: "img", class: "admin-chart-svg",
    "aria-label": `Model calls per day for the last ${DAYS} days: ${sum} in total, at most ${max} in a day.`,
  });
  chart.append(
    svg("line", { x1: left, y1: height - bottom, x2: width, y2: height - bottom, class: "axis" }),
    svg("text", { x: left - 4, y: top + 8, "text-anchor": "end", class: "tick" }, String(max)),
    svg("text", { x: left - 4, y: height - bottom, "text-anchor": "end", class: "tick" }, "0"),
  );
  totals.forEach((t, i) => {
    const h = ((height - top - bottom) * t.calls) / max;
    const x = left + i * step + 1;
    const rect = svg("rect", { x, y: height - bottom - h, width: Math.max(1, step - 2), height: h, class: "bar" },
      svg("title", {}, `${t.date}: ${t.calls} calls, ${numberFormat.format(t.tokens)} tokens`));
    chart.append(rect);
    if ((totals.length - 1 - i) % 7 === 0) { // today, and every week back from it
      chart.append(svg("text", { x: x + step / 2, y: height - 6, "text-anchor": "middle", class: "tick" },
        t.date.slice(5)));
    }
  });
  container.replaceChildren(chart);
}

export function renderTable(tbody, days) {
  if (days.length === 0) {
    tbody.replaceChildren(el("tr", {}, el("td", { colspan: 7 }, "No model calls in the last 30 days.")));
    return;
  }
  tbody.replaceChildren(...days.map((row) => el("tr", {},
    el("th", { scope: "row" }, row.date),
    el("td", {}, row.feature),
    el("td", {}, row.model),
    el("td", { class: "num" }, numberFormat.format(row.calls)),
    el("td", { class: "num" }, numberFormat.format(row.inputTokens)),
    el("td", { class: "num" }, numberFormat.format(row.outputTokens)),
    el("td", { class: "num" }, formatCost(row.costUsd)),
  )));
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
    status.textContent = result.error;
    return;
  }
  const { today, limits, days } = result.data;
  const todayIso = today.date || new Date().toISOString().slice(0, 10); // the server's UTC day
  status.textContent = "";
  status.hidden = true;
  renderToday(document.getElementById("admin-bars"), document.getElementById("admin-today-extra"), today, limits);
  renderChart(document.getElementById("admin-chart"), days, todayIso);
  renderTable(document.querySelector("#admin-table tbody"), days);
  document.getElementById("admin-today").hidden = false;
  document.getElementById("admin-history").hidden = false;
}

if (typeof document !== "undefined" && document.getElementById("admin")) {
  main();
}
