// Small DOM and formatting helpers shared by every screen.

import { upload } from "../api.js";
import { icon } from "./icons.js";
import { linkTarget } from "../links.js";
import { aiLimitText, aiShareText } from "./aiback.js";

// h("button", {class: "btn", onclick: fn, "aria-label": "Close"}, "×")
export function h(tag, props = null, ...children) {
  const el = document.createElement(tag);
  if (props) {
    for (const [key, value] of Object.entries(props)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "class") el.className = value;
      else if (key === "text") el.textContent = value;
      else if (key === "dataset") Object.assign(el.dataset, value);
      else if (key === "style" && typeof value === "object") Object.assign(el.style, value);
      else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
      else if (key === "value" || key === "checked" || key === "selected" || key === "disabled") el[key] = value;
      else el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

let idCounter = 0;
export const uid = (prefix = "f") => `${prefix}-${++idCounter}`;

// A labelled form field: label + control (+ optional hint), ids wired up.
export function field(labelText, control, hint) {
  const id = control.id || uid("field");
  control.id = id;
  const parts = [h("label", { for: id }, labelText), control];
  if (hint) {
    const hintId = `${id}-hint`;
    control.setAttribute("aria-describedby", hintId);
    parts.push(h("p", { class: "hint", id: hintId }, hint));
  }
  return h("div", { class: "field" }, parts);
}

export function select(name, options, value) {
  return h(
    "select",
    { name },
    options.map(([v, label]) => h("option", { value: v, selected: String(v) === String(value ?? "") }, label)),
  );
}

// -- formatting -------------------------------------------------------------

// Dates read the same for everyone: "Mon 14 Dec", "14 Dec 2026", "Monday 14 December".
const WEEKDAY = new Intl.DateTimeFormat("en-GB", { weekday: "short", day: "numeric", month: "short", timeZone: "UTC" });
const LONG_DATE = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", year: "numeric", timeZone: "UTC" });

export function fmtDay(iso) {
  if (!iso) return "";
  return WEEKDAY.format(new Date(`${iso}T00:00:00Z`));
}

const LONG_DAY = new Intl.DateTimeFormat("en-GB", { weekday: "long", day: "numeric", month: "long", timeZone: "UTC" });

export function fmtLongDay(iso) {
  return iso ? LONG_DAY.format(new Date(`${iso}T00:00:00Z`)) : "";
}

export function fmtDate(iso) {
  if (!iso) return "";
  return LONG_DATE.format(new Date(`${iso}T00:00:00Z`));
}

export function addDays(iso, n) {
  const d = new Date(`${iso}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}

export function daysBetween(a, b) {
  return Math.round((new Date(`${b}T00:00:00Z`) - new Date(`${a}T00:00:00Z`)) / 86400000);
}

export function fmtMinutes(min) {
  if (min === null || min === undefined) return "";
  const m = Math.round(min);
  if (m < 60) return `${m} min`;
  const hours = Math.floor(m / 60);
  const rest = m % 60;
  return rest ? `${hours} h ${rest} min` : `${hours} h`;
}

// A schedule time as people read it, from minutes after the day's midnight:
// "09:30", and "00:30 (+1)" once a day runs past midnight. Order and gaps
// are always worked out on the minutes, never on this text.
export function fmtClock(minutes) {
  if (typeof minutes !== "number" || !Number.isFinite(minutes)) return "";
  const m = Math.round(minutes);
  const days = Math.floor(m / 1440);
  const inDay = m - days * 1440;
  const text = `${String(Math.floor(inDay / 60)).padStart(2, "0")}:${String(inDay % 60).padStart(2, "0")}`;
  return days > 0 ? `${text} (+${days})` : text;
}

// The same time as an element: the "(+1)" is a smaller part of it, so a
// narrow time column can put it on a line of its own.
export function clockEl(minutes, className) {
  const text = fmtClock(minutes);
  const cut = text.indexOf(" (+");
  return cut < 0 ? h("span", { class: className }, text)
    : h("span", { class: className }, text.slice(0, cut), " ", h("span", { class: "next-day", title: "After midnight: the next day" }, text.slice(cut + 1)));
}

export function fmtDistance(m) {
  if (m === null || m === undefined) return "";
  return m < 1000 ? `${Math.round(m)} m` : `${(m / 1000).toFixed(m < 10000 ? 1 : 0)} km`;
}

export function timeAgo(iso) {
  if (!iso) return "";
  const then = new Date(iso);
  const s = Math.max(0, (Date.now() - then.getTime()) / 1000);
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return fmtDay(then.toISOString().slice(0, 10));
}

export const KIND_LABELS = {
  stay: "Stay", sight: "Sight", food: "Food", activity: "Activity", transit: "Transit", other: "Other",
};
// The meals a food stop may be, as [key, label] in the day's order: filled
// once at boot from GET /api/meals (the server's app/meals.py), never copied here.
export const MEALS = [];
export function setMeals(meals) {
  MEALS.splice(0, MEALS.length, ...meals.map((m) => [m.key, m.label]));
}
// How long each meal takes by default (the product's rule, pinned to the
// server's table by the hours vectors; changeable per stop).
export { MEAL_MINUTES } from "../hours.js";

// -- feedback ---------------------------------------------------------------

// Toasts show over everything: while a modal dialog is open they live in it
// (the top layer), not behind its backdrop (a refused upload says why there).
// News and errors each have their own live region in the host, made once and
// left in place (a region added with its words is often not read): news is
// polite (role=status), an error interrupts (role=alert), and no toast is a
// live region inside another, which some readers announce twice.
function toastHost(kind) {
  const modal = [...document.querySelectorAll("dialog[open]")].filter((d) => d.matches(":modal")).pop();
  const parent = modal || document.body;
  let host = modal ? modal.querySelector(":scope > .toasts") : document.getElementById("toasts");
  if (!host) {
    host = h("div", { class: "toasts", id: modal ? null : "toasts" });
    parent.append(host);
  }
  const cls = kind === "error" ? "toast-alerts" : "toast-news";
  let region = host.querySelector(`:scope > .${cls}`);
  if (!region) {
    region = h("div", { class: `toast-region ${cls}`, role: kind === "error" ? "alert" : "status" });
    host.append(region);
  }
  return { host, region };
}

export function toast(message, kind = "info", ms = 3200) {
  const item = h("div", { class: `toast toast-${kind}` }, message);
  const { host, region } = toastHost(kind);
  // Two at most: a burst of edits should not bury the page.
  let shown = host.querySelectorAll(".toast");
  while (shown.length >= 2) {
    shown[0].remove();
    shown = host.querySelectorAll(".toast");
  }
  region.append(item);
  setTimeout(() => item.remove(), ms);
  return item;
}

export function showError(err) {
  toast(errorText(err), "error", 7000);
}

// The server names a thing that is gone by its id ("No stop 6ba7… in this
// trip", "paidBy: 8f7a… is not a member"), which suits API clients; on the
// page it means someone else removed it while a form was open, so say that.
const GONE = new Map([
  ["stop_not_found", "That stop is no longer in the trip: someone else may have just removed it."],
  ["day_not_found", "That day is no longer in the trip: someone else may have just removed it."],
  ["expense_not_found", "That expense is no longer in the trip: someone else may have just removed it."],
  ["not_a_member", "Someone chosen here is no longer a member of this trip. Choose again."],
]);

export function errorText(err) {
  if (!err) return "Something went wrong.";
  if (err.code === "ai_limit" && err.message) return aiLimitText(err); // every AI surface says when it is back
  if (err.code === "ai_user_limit" && err.message) return aiShareText(err); // a member's share: on their own clock
  return GONE.get(err.code) || err.message || String(err);
}

// A secret or a link shown once, in a read-only field with a Copy button
// (the clipboard where the browser allows it, else a hint to copy by hand).
// `attrs` go on the field (a class, a test id).
export function copyField(value, { label, copied, attrs = {} }) {
  const input = h("input", { readonly: true, value, "aria-label": label, ...attrs });
  const copy = h("button", { type: "button", class: "btn" }, "Copy");
  copy.addEventListener("click", async () => {
    input.select();
    try {
      await navigator.clipboard.writeText(value);
      toast(copied, "success");
    } catch {
      toast("Select the text and copy it", "info");
    }
  });
  return { row: h("div", { class: "row copy-row" }, input, copy), input, copy };
}

// Shows progress on a button while `work` runs; the label comes back after.
// A disabled button loses the keyboard's focus to the page's body; when
// it is still there afterwards (a refusal, "Try again"), it gets it back.
export async function withBusy(button, work, busyLabel) {
  const saved = button ? [...button.childNodes] : []; // icons included
  const focused = Boolean(button) && document.activeElement === button;
  if (button) {
    button.disabled = true;
    button.setAttribute("aria-busy", "true");
    if (busyLabel) button.textContent = busyLabel;
    button.classList.add("is-busy");
  }
  try {
    return await work();
  } finally {
    if (button) {
      button.disabled = false;
      button.removeAttribute("aria-busy");
      button.classList.remove("is-busy");
      if (busyLabel) button.replaceChildren(...saved);
      const lost = !document.activeElement || document.activeElement === document.body;
      if (focused && lost && button.isConnected) button.focus();
    }
  }
}

// Where the keyboard goes when the region it was in empties and hides (the
// last suggestion decided, the last refused change dismissed): the first
// heading after it in its parent (the view's own), else the page's main;
// never the page's body, where Tab would start over from the top.
export function focusPastRegion(region) {
  const heading = [...(region.parentElement ? region.parentElement.querySelectorAll("h1, h2") : [])]
    .find((el) => region.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING && el.getClientRects().length);
  const target = heading || document.getElementById("main");
  if (!target) return;
  if (!target.hasAttribute("tabindex")) target.setAttribute("tabindex", "-1"); // focusable by script only
  target.focus();
}

// A progress line for long AI waits: "Thinking… 4 s". A status of its own,
// unless it goes in a region that is live already (`live: false`): nested,
// it would be read twice. The seconds are for the eye: read out, they would
// be announced every second.
export function progressLine(text, { live = true } = {}) {
  const label = h("span", null, text);
  const secs = h("span", { class: "muted", "aria-hidden": "true" });
  const el = h("div", { class: "progress", role: live ? "status" : null }, h("span", { class: "spinner", "aria-hidden": "true" }), label, secs);
  const started = Date.now();
  const timer = setInterval(() => {
    if (!el.isConnected) return clearInterval(timer);
    secs.textContent = ` ${Math.round((Date.now() - started) / 1000)} s`;
  }, 1000);
  return el;
}

// An error in words: an alert of its own, unless it goes in a region that
// is live already (`live: false`: the region reads it, once).
export function errorBox(err, { live = true } = {}) {
  return h("div", { class: "error-box", role: live ? "alert" : null }, errorText(err));
}

// A modal <dialog>. `build(close)` returns the body; the dialog gives focus
// back to whatever opened it when it closes. An opener rebuilt meanwhile (the
// day's header, after the stop the dialog added) is found again by its
// `data-fkey`; failing that, focus goes to the page's main, never its body.
export function openDialog(title, build, { wide = false } = {}) {
  const opener = document.activeElement;
  const fkey = opener && opener.dataset ? opener.dataset.fkey : null;
  const item = fkey ? opener.closest("[data-key]") : null; // a stop's Edit: that stop's, not the first one's
  const titleId = uid("dlg");
  const dialog = h("dialog", { class: `dialog${wide ? " dialog-wide" : ""}`, "aria-labelledby": titleId });
  const close = () => dialog.close();
  const header = h(
    "div",
    { class: "dialog-head" },
    h("h2", { id: titleId }, title),
    h("button", { type: "button", class: "icon-btn", "aria-label": "Close", onclick: close }, icon("x")),
  );
  dialog.append(header, build(close));
  dialog.addEventListener("close", () => {
    dialog.remove();
    if (opener && opener.isConnected) return opener.focus();
    const within = item ? `[data-key="${CSS.escape(item.dataset.key)}"] ` : "";
    const again = fkey ? [...document.querySelectorAll(`${within}[data-fkey="${CSS.escape(fkey)}"]`)]
      .find((el) => el.getClientRects().length) : null;
    if (again) return again.focus();
    const main = opener && opener !== document.body ? document.getElementById("main") : null;
    if (main) main.focus({ preventScroll: true });
  });
  document.body.append(dialog);
  dialog.showModal();
  const first = dialog.querySelector("[autofocus], input:not([type=hidden]), select, textarea");
  if (first) first.focus();
  return dialog;
}

export function confirmDialog(title, message, confirmLabel = "Delete") {
  return new Promise((resolve) => {
    let answer = false;
    const dlg = openDialog(title, (close) =>
      h(
        "div",
        { class: "dialog-body" },
        h("p", null, message),
        h(
          "div",
          { class: "actions" },
          h("button", { type: "button", class: "btn", onclick: close }, "Cancel"),
          h("button", { type: "button", class: "btn btn-danger", onclick: () => { answer = true; close(); } }, confirmLabel),
        ),
      ),
    );
    dlg.addEventListener("close", () => resolve(answer));
  });
}

// What a `check()` returns to drop a submit quietly: no save, no message.
export const SKIP_SUBMIT = Symbol("skip submit");

// The submit plumbing of a form: on submit the default is prevented and
// `errorSlot` cleared; `check()` (optional) reads and validates the fields
// (returning SKIP_SUBMIT stops there), `onSubmit(checked)` saves with `button`
// busy (`busyLabel`), then `after(result, checked)` (optional) runs. Anything
// thrown on the way shows in the slot as its message, unless `place(err)`
// (optional) showed it itself (e.g. next to its field) and returned true;
// then `onError(err)` (optional) runs, e.g. to move focus.
export function handleSubmit(form, { button, errorSlot, busyLabel, check, onSubmit, after, onError, place }) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clear(errorSlot);
    try {
      const checked = check ? check() : undefined;
      if (checked === SKIP_SUBMIT) return;
      const result = await withBusy(button, () => onSubmit(checked), busyLabel);
      if (after) await after(result, checked);
    } catch (err) {
      if (!(place && place(err))) errorSlot.append(errorBox(err));
      if (onError) onError(err);
    }
  });
  return form;
}

// A field whose own error shows right under it (and is read with it):
// `{el, control, show(message), reset()}`.
export function fieldWithError(labelText, control, hint) {
  const el = field(labelText, control, hint);
  const error = h("p", { class: "field-error", id: `${control.id}-error`, hidden: true });
  control.after(error); // right under the control, above any hint
  const described = control.getAttribute("aria-describedby");
  control.setAttribute("aria-describedby", [described, error.id].filter(Boolean).join(" "));
  return {
    el,
    control,
    show(message) {
      error.textContent = message;
      error.hidden = false;
      control.setAttribute("aria-invalid", "true");
      control.focus();
    },
    reset() {
      error.textContent = "";
      error.hidden = true;
      control.removeAttribute("aria-invalid");
    },
  };
}

// "in 40 seconds", "in 1 minute", "in 15 minutes": how long to wait, in words.
export function waitWords(seconds) {
  const s = Math.max(1, Math.ceil(seconds));
  if (s < 60) return `in ${s} second${s === 1 ? "" : "s"}`;
  const m = Math.ceil(s / 60);
  return `in ${m} minute${m === 1 ? "" : "s"}`;
}

// A refusal for too many password attempts says when to try again.
export function plainLimit(err) {
  if (!err || err.code !== "rate_limited" || typeof (err.details && err.details.retryAfterS) !== "number") return err;
  const plain = new Error(`Too many attempts with a wrong password. Try again ${waitWords(err.details.retryAfterS)}.`);
  plain.code = err.code;
  plain.details = err.details;
  return plain;
}

// The form inside a dialog: `fields`, an error slot, then Cancel and the
// primary submit button (`submitLabel`). On submit (see handleSubmit):
// `check()` (optional) reads and validates the fields, `onSubmit(checked)`
// saves with the button busy (`busyLabel`), the dialog closes, then
// `after(result, checked)` (optional) runs. Anything thrown on the way shows
// in the slot as its message.
export function dialogForm({ fields, submitLabel, busyLabel, onSubmit, close, check, after, novalidate = false }) {
  const errorSlot = h("div"); // its error box is an alert: no live region around it (read twice)
  const submit = h("button", { type: "submit", class: "btn btn-primary" }, submitLabel);
  const form = h("form", { class: "stack dialog-body", novalidate },
    fields,
    errorSlot,
    h("div", { class: "actions" }, h("button", { type: "button", class: "btn", onclick: close }, "Cancel"), submit));
  return handleSubmit(form, {
    button: submit,
    errorSlot,
    busyLabel,
    check,
    onSubmit,
    after: async (result, checked) => {
      close();
      if (after) await after(result, checked);
    },
  });
}

// The files a trip accepts as uploads (images, PDFs, plain text).
const UPLOAD_ACCEPT = "image/png,image/jpeg,image/webp,application/pdf,text/plain,text/markdown,text/csv,.md,.csv,.txt";

// Makes `button` attach a file: it opens a hidden file picker, the chosen
// file is uploaded to `url` with the button busy (`busyLabel`, optional) and
// `onUploaded(media, file)` gets the server's record; a failure is a toast.
// Returns the hidden <input type=file>, to place next to the button.
export function attachUpload(button, { url, busyLabel, onUploaded }) {
  // Never shown or focused: the button is the control (and names it).
  const input = h("input", { type: "file", hidden: true, accept: UPLOAD_ACCEPT });
  button.addEventListener("click", () => input.click());
  input.addEventListener("change", () => {
    const file = input.files[0];
    if (!file) return;
    withBusy(button, async () => {
      try {
        onUploaded(await upload(url, file), file);
      } catch (err) {
        showError(err);
      } finally {
        input.value = "";
      }
    }, busyLabel);
  });
  return input;
}

// -- notes: a tiny, safe Markdown subset -------------------------------------
// Paragraphs, line breaks, **bold**, *italic*, `code`, [links](url) and
// images ![alt](url). Nothing is parsed as HTML. Where a link may go is
// public/links.js: resolved and normalised first, then only this trip's
// uploads (an image or a link) or a web address (a link); anything else is
// shown as its words.

function inline(text, tripId, links = true) {
  const out = [];
  const pattern = /(!?)\[([^\]]*)\]\(([^)\s]+)\)|\*\*([^*]+)\*\*|\*([^*]+)\*|`([^`]+)`/g;
  let last = 0;
  let m;
  while ((m = pattern.exec(text)) !== null) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[3] !== undefined) {
      const [, bang, label, url] = m;
      const target = links ? linkTarget(url, tripId) : null;
      if (!links) out.push(label && label !== url ? `${label} (${url})` : url);
      else if (!target) out.push(label || url);
      else if (bang && target === "upload") out.push(h("img", { src: url, alt: label || "Attachment", class: "note-img", loading: "lazy" }));
      else out.push(h("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, label || url));
    } else if (m[4] !== undefined) out.push(h("strong", null, m[4]));
    else if (m[5] !== undefined) out.push(h("em", null, m[5]));
    else if (m[6] !== undefined) out.push(h("code", null, m[6]));
    last = pattern.lastIndex;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

// A note's words without its Markdown: links and images become their labels
// (for places that show plain text, such as the AI's cards).
export function markdownText(text) {
  return String(text || "").replace(/(!?)\[([^\]]*)\]\(([^)\s]+)\)/g, (_, bang, label, url) => label || (bang ? "attachment" : url))
    .replace(/\*\*([^*]+)\*\*|\*([^*]+)\*|`([^`]+)`/g, (_, b, i, c) => b || i || c);
}

// `tripId`: the trip the text belongs to (only its uploads are shown or linked).
// `links: false` for the model's words, which are not the server's facts: a
// link or an image shows as its words and its address, nothing to follow or fetch.
export function renderMarkdown(text, tripId, { links = true } = {}) {
  const wrap = h("div", { class: "md" });
  for (const block of String(text || "").split(/\n{2,}/)) {
    if (!block.trim()) continue;
    const lines = block.split("\n");
    if (lines.every((l) => /^\s*[-*] /.test(l))) {
      wrap.append(h("ul", null, lines.map((l) => h("li", null, inline(l.replace(/^\s*[-*] /, ""), tripId, links)))));
      continue;
    }
    const p = h("p");
    lines.forEach((line, i) => {
      if (i) p.append(h("br"));
      append(p, inline(line, tripId, links));
    });
    wrap.append(p);
  }
  return wrap;
}

export function initials(name) {
  return String(name || "?")
    .split(/[\s._-]+/)
    .filter(Boolean)
    .slice(0, 2)
    .map((p) => p[0].toUpperCase())
    .join("");
}

// OpenStreetMap's data licence asks for this wherever its place data shows
// (the map credits its tiles itself); nothing when Google answers.
export function osmCredit(config) {
  if (!config || config.placesProvider !== "osm") return null;
  return h("p", { class: "osm-credit" },
    h("a", { href: "https://www.openstreetmap.org/copyright", target: "_blank", rel: "noopener" }, "© OpenStreetMap contributors"));
}

// One of eight colours for a member, from the user id (a small stable FNV-1a
// hash), so a member has the same colour in the chat and on the day rail:
// .tone-N (avatars in the chat) and .pc-N (presence) share their hues.
export function memberTone(userId) {
  let x = 0x811c9dc5;
  for (const ch of String(userId || "")) {
    x ^= ch.codePointAt(0);
    x = Math.imul(x, 0x01000193) >>> 0;
  }
  return x % 8;
}
