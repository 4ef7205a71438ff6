// The preview of a day-order draft (Optimize my day, Shortest order): the
// stops before and after, each side ordered by its own minutes and carrying
// its own opening-hours badge, the review of the new day, the travel, and
// Apply (once) or Discard. A stale draft says so once and cannot be applied.

import { post } from "../api.js";
import { h, clear, errorBox, withBusy, fmtMinutes, fmtClock, toast } from "../planner/ui.js";
import { icon } from "../planner/icons.js";
import { hoursReading } from "../hours.js";

// `draft`: {id, edits, preview, travel}. Options:
//   label       what the section is, for screen readers ("Shortest order preview")
//   headline    the first line ("Preview", "Shortest order saves 14 min")
//   notes       plain sentences under it (the summary, exact or not, estimates)
//   staleText   what to say when the day changed since
//   appliedText the toast after Apply
//   onDone(el)  replaces the preview once applied or discarded (el: what to show, or null)
export function draftPreview(store, draft, { label, headline, notes = [], staleText, appliedText, onDone }) {
  const preview = draft.preview || {};
  const stops = preview.stops || [];
  const wrap = h("section", { class: "draft", "data-draft-id": draft.id, "aria-label": label });
  wrap.append(h("h4", null, headline));
  for (const note of notes.filter(Boolean)) wrap.append(h("p", { class: "draft-note" }, note));
  const side = (name) => stops.filter((x) => x[name])
    .sort((a, b) => a[name].startMinutes - b[name].startMinutes)
    .map((x) => ({ ...x, side: x[name] }));
  wrap.append(h("div", { class: "before-after" }, column("Before", side("before")), column("After", side("after"))));
  const findings = preview.findings || [];
  if (findings.length) {
    wrap.append(h("ul", { class: "draft-findings" }, findings.map((f) => h("li", { class: `sev-${f.severity || "info"}` }, f.message))));
  }
  if (draft.travel) wrap.append(h("p", { class: "hint" }, travelText(draft.travel)));
  if (!(draft.edits || []).length) {
    wrap.append(h("div", { class: "actions" }, h("button", { type: "button", class: "btn", onclick: () => onDone(null) }, "Close")));
    return wrap;
  }
  if (!store.canEdit) {
    wrap.append(h("p", { class: "muted" }, "Viewers can preview but not apply."));
    return wrap;
  }
  const apply = h("button", { "data-needs-server": true, type: "button", class: "btn btn-primary", "data-testid": "apply-plan" }, "Apply Plan");
  const discard = h("button", { type: "button", class: "btn", onclick: () => onDone(null) }, "Discard");
  const out = h("div", { "aria-live": "assertive" });
  apply.addEventListener("click", async () => {
    clear(out);
    let stale = false;
    await withBusy(apply, async () => {
      try {
        const trip = await post(`${store.base}/drafts/${encodeURIComponent(draft.id)}/apply`, {});
        store.applyWriteAnswer(trip);
        toast(appliedText, "success");
        onDone(h("p", { class: "pill ok" }, icon("check", { size: 14 }), " Plan applied"));
      } catch (err) {
        stale = err.code === "stale";
        out.append(errorBox(stale ? new Error(staleText) : err));
      }
    }, "Applying…");
    if (stale) apply.disabled = true; // after withBusy, which re-enables it
  });
  wrap.append(out, h("div", { class: "actions" }, discard, apply));
  return wrap;
}

function column(title, items) {
  return h("div", { class: "ba-col", "data-side": title.toLowerCase() }, h("h5", null, title),
    h("ol", { class: "ba-list" }, items.map((x) => h("li", { class: x.added ? "added" : "", "data-ref": x.ref },
      h("span", { class: "ba-time" }, fmtClock(x.side.startMinutes)),
      h("span", { class: "ba-name" }, x.name || "Stop"),
      x.setTime ? h("span", { class: "badge" }, "set") : null,
      x.added ? h("span", { class: "badge badge-new" }, "new") : null,
      hoursBadge(x.side.hours)))));
}

// This side's own check of the opening hours at this side's own times
// (nothing when the stop has no place; "hours unknown" when its place has none).
const BADGE_CLASS = { open: "badge-open", closed: "badge-estimate", unknown: "badge-unknown" };

function hoursBadge(hours) {
  const reading = hoursReading(hours);
  if (!reading) return null;
  return h("span", { class: `badge ${BADGE_CLASS[reading.tone]}`, title: reading.title }, reading.badge);
}

function travelText(travel) {
  const { beforeMin, afterMin } = travel;
  if (typeof beforeMin === "number" && typeof afterMin === "number") {
    return `Travel: ${fmtMinutes(beforeMin)} before, ${fmtMinutes(afterMin)} after.`;
  }
  return "";
}
