// Generative UI cards: the one renderer of the card catalog (app/agent/cards.py).
//
// A card is a json-render flat spec {root, elements: {key: {type, props, children}}},
// already sanitized by the server. The renderer still trusts nothing: unknown types,
// bad props and anything past the bounds render nothing, every string goes in with
// textContent (never HTML), the only image source is this app's street-view route,
// and a button press calls only onFollowUp(text) or onFocus({dayId, stopId}).

import { h, fmtLongDay, KIND_LABELS, markdownText } from "../planner/ui.js";
import { formatMoney } from "../money.js";
import { icon, KIND_ICON } from "../planner/icons.js";

const MAX_ELEMENTS = 60;
const MAX_DEPTH = 6;
const STREET_VIEW_SRC = /^\/api\/trips\/[A-Za-z0-9_-]+\/street-view\/[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}(\?[A-Za-z0-9._~=&,%-]{1,300})?$/;
const TONES = ["neutral", "info", "success", "warning", "danger"];
const ALERT_ICON = { info: "sparkle", warning: "alert", danger: "alert" };

const str = (value) => (typeof value === "string" && value ? value : null);
const list = (value) => (Array.isArray(value) ? value : []);
const pick = (value, allowed, fallback) => (allowed.includes(value) ? value : fallback);

// The spec a stored `data-spec` part carries (json-render's flat payload), or null.
export function specOfPart(part) {
  const data = part && part.type === "data-spec" ? part.data : null;
  return data && data.type === "flat" && data.spec && typeof data.spec === "object" ? data.spec : null;
}

// A DOM node for the card, or null when nothing in it can be drawn.
export function renderSpec(spec, handlers = {}) {
  if (!spec || typeof spec !== "object" || typeof spec.root !== "string") return null;
  const elements = spec.elements && typeof spec.elements === "object" ? spec.elements : {};
  const walk = { elements, handlers: handlers || {}, used: new Set() };
  const node = renderElement(walk, spec.root, 1);
  return node ? h("div", { class: "gen-card" }, node) : null;
}

function renderElement(walk, key, depth) {
  if (typeof key !== "string" || walk.used.has(key) || walk.used.size >= MAX_ELEMENTS || depth > MAX_DEPTH) return null;
  const el = Object.prototype.hasOwnProperty.call(walk.elements, key) ? walk.elements[key] : null;
  const draw = el && typeof el === "object" && Object.prototype.hasOwnProperty.call(COMPONENTS, el.type) ? COMPONENTS[el.type] : null;
  if (!draw) return null;
  walk.used.add(key);
  const props = el.props && typeof el.props === "object" ? el.props : {};
  const kids = () => {
    const nodes = list(el.children).map((child) => renderElement(walk, child, depth + 1)).filter(Boolean);
    return nodes.length ? h("div", { class: "gc-children" }, nodes) : null;
  };
  const node = draw(props, { depth, kids, handlers: walk.handlers });
  if (node) node.dataset.cardType = el.type;
  return node;
}

// Headings follow nesting: a card's title is an h3, a nested one an h4, and so on.
function heading(depth, text, className) {
  return text ? h(`h${Math.min(2 + depth, 6)}`, { class: className }, text) : null;
}

function lines(items, className) {
  const texts = list(items).map(str).filter(Boolean);
  return texts.length ? h("ul", { class: className }, texts.map((t) => h("li", null, t))) : null;
}

function longDay(iso) {
  const valid = typeof iso === "string" && /^\d{4}-\d{2}-\d{2}$/.test(iso) && !Number.isNaN(Date.parse(`${iso}T00:00:00Z`));
  return valid ? fmtLongDay(iso) : null;
}

function money(minor, currency) {
  return Number.isInteger(minor) && /^[A-Z]{3}$/.test(currency || "") ? formatMoney(minor, currency) : null;
}

const COMPONENTS = {
  TripPlanCard(p, { depth, kids }) {
    const days = list(p.days).filter((d) => d && str(d.label) && str(d.title));
    return h("article", { class: "gc gc-plan" },
      heading(depth, str(p.title), "gc-title"),
      str(p.subtitle) ? h("p", { class: "gc-sub" }, p.subtitle) : null,
      days.length ? h("ol", { class: "gc-days" }, days.map((d) => h("li", null,
        h("span", { class: "gc-day-label" }, d.label),
        h("span", { class: "gc-day-title" }, d.title),
        str(d.summary) ? h("span", { class: "gc-day-summary" }, d.summary) : null))) : null,
      kids());
  },

  Text(p, { depth }) {
    if (!str(p.text)) return null;
    if (p.variant === "heading") return heading(depth, p.text, "gc-heading");
    return h("p", { class: `gc-text${p.variant === "muted" ? " muted" : ""}` }, p.text);
  },

  Badge(p) {
    return str(p.label) ? h("span", { class: `gc-badge tone-${pick(p.tone, TONES, "neutral")}` }, p.label) : null;
  },

  Alert(p) {
    if (!str(p.text)) return null;
    const tone = pick(p.tone, ["info", "warning", "danger"], "info");
    return h("div", { class: `gc-alert tone-${tone}`, role: "note" },
      icon(ALERT_ICON[tone], { size: 16 }),
      h("div", null, str(p.title) ? h("strong", { class: "gc-alert-title" }, p.title) : null, h("p", null, p.text)));
  },

  DaySummary(p, { depth, kids }) {
    if (!str(p.title)) return null;
    return h("article", { class: "gc gc-day" },
      longDay(p.date) ? h("p", { class: "gc-eyebrow" }, longDay(p.date)) : null,
      heading(depth, p.title, "gc-title"),
      lines(p.stops, "gc-lines"),
      kids());
  },

  StopSummary(p, { depth, kids }) {
    if (!str(p.name)) return null;
    const kind = Object.prototype.hasOwnProperty.call(KIND_LABELS, p.kind) ? p.kind : null;
    return h("article", { class: "gc gc-stop" },
      h("div", { class: "gc-stop-head" },
        kind ? h("span", { class: "gc-stop-icon" }, icon(KIND_ICON[kind], { size: 16 })) : null,
        h("div", { class: "gc-stop-name" },
          heading(depth, p.name, "gc-title"),
          h("p", { class: "gc-meta" },
            str(p.time) ? h("time", null, p.time) : null,
            str(p.time) && kind ? " · " : null,
            kind ? KIND_LABELS[kind] : null))),
      str(p.note) ? h("p", { class: "gc-text" }, markdownText(p.note)) : null,
      kids());
  },

  Comparison(p, { depth, kids }) {
    const options = list(p.options).filter((o) => o && str(o.title)).slice(0, 4);
    if (options.length < 2) return null;
    return h("section", { class: "gc gc-compare" },
      heading(depth, str(p.title), "gc-title"),
      h("ul", { class: `gc-options n-${options.length}` }, options.map((o) => h("li", { class: "gc-option" },
        heading(depth + 1, o.title, "gc-option-title"),
        lines(o.points, "gc-points"),
        str(o.price) ? h("p", { class: "gc-price" }, o.price) : null))),
      kids());
  },

  BudgetEstimate(p, { depth, kids }) {
    const rows = list(p.lines).filter((l) => l && str(l.label) && money(l.amountMinor, p.currency) !== null);
    const total = money(p.totalMinor, p.currency);
    if (!rows.length || total === null) return null;
    return h("section", { class: "gc gc-budget" },
      heading(depth, str(p.title) || "Budget estimate", "gc-title"),
      h("table", { class: "gc-table" },
        h("tbody", null, rows.map((l) => h("tr", null, h("th", { scope: "row" }, l.label),
          h("td", null, money(l.amountMinor, p.currency))))),
        h("tfoot", null, h("tr", null, h("th", { scope: "row" }, "Total"), h("td", null, total)))),
      str(p.note) ? h("p", { class: "gc-text muted" }, markdownText(p.note)) : null,
      kids());
  },

  ActionButton(p, { handlers }) {
    const a = p.action && typeof p.action === "object" ? p.action : {};
    let press = null;
    if (a.kind === "followUp" && str(a.text)) {
      press = () => handlers.onFollowUp && handlers.onFollowUp(a.text);
    } else if (a.kind === "focus" && str(a.dayId)) {
      press = () => handlers.onFocus && handlers.onFocus({ dayId: a.dayId, stopId: str(a.stopId) });
    }
    if (!press || !str(p.label)) return null;
    const button = h("button", { "data-needs-server": true, type: "button", class: `btn btn-sm gc-action${p.variant === "primary" ? " btn-primary" : ""}` },
      a.kind === "focus" ? icon("pin", { size: 14 }) : null, p.label);
    button.addEventListener("click", press);
    return button;
  },

  StreetViewImage(p) {
    if (!str(p.imageUrl) || !STREET_VIEW_SRC.test(p.imageUrl) || !str(p.placeName)) return null;
    const img = h("img", { src: p.imageUrl, alt: `Street view of ${p.placeName}`, loading: "lazy", class: "gc-street-img" });
    img.addEventListener("error", () => img.replaceWith(h("p", { class: "gc-img-missing" }, "The street-view image is not available right now.")));
    return h("figure", { class: "gc gc-street" }, img,
      h("figcaption", null,
        h("strong", null, p.placeName),
        h("span", { class: "gc-meta" }, [str(p.date), str(p.copyright) || "© Google"].filter(Boolean).join(" · "))));
  },
};
