// Optimize the selected day: an AI draft shown before/after, applied with
// Apply Plan (once); a stale draft says so once and cannot be applied. The
// row of actions has room for more ways to reorder a day.

import { post } from "../api.js";
import { h, clear, errorBox, progressLine, withBusy, fmtMinutes, toast } from "../planner/ui.js";
import { aiOffNote } from "./common.js";
import { icon } from "../planner/icons.js";

const STALE_TEXT = "The day changed since this preview, so it cannot be applied. Optimize again for a fresh plan.";

export function mountOptimize(el, store, panel) {
  const results = h("div", { class: "assistant-results", "aria-live": "polite" });
  const optimize = h("button", { type: "button", class: "btn btn-primary", "data-testid": "optimize" }, icon("sparkle"), "Optimize my day");
  // More day-ordering actions (e.g. "Shortest order") sit beside Optimize, in this row.
  const actions = h("div", { class: "row wrap optimize-actions", "data-slot": "day-order-actions" });
  if (store.app.session.config.aiEnabled) actions.append(optimize);
  else el.append(aiOffNote("“Optimize my day”"));
  el.append(h("p", { class: "hint" }, "Reorders the free stops (set times never move) and may add a place; you see it before anything changes."),
    actions, results);
  optimize.addEventListener("click", () => run());

  async function run() {
    const day = store.day();
    if (!day) return;
    clear(results).append(progressLine("Optimizing the day: gathering places and asking the AI (this can take up to a minute)…"));
    try {
      const res = await withBusy(optimize, () => post(`${store.base}/days/${encodeURIComponent(day.id)}/optimize`, {}), "Optimizing…");
      clear(results).append(draftPreview(res.draft));
    } catch (err) {
      clear(results).append(errorBox(err));
      if (err.code === "preferences") {
        results.append(h("button", { type: "button", class: "btn", onclick: () => panel.open("preferences") }, "Open Preferences"));
      }
    }
  }

  function draftPreview(draft) {
    const preview = draft.preview || {};
    const stops = preview.stops || [];
    const wrap = h("section", { class: "draft", "data-draft-id": draft.id, "aria-label": "Optimized plan preview" });
    wrap.append(h("h4", null, "Preview"));
    if (preview.summary) wrap.append(h("p", null, preview.summary));
    const before = stops.filter((x) => x.before).sort((a, b) => a.before.startTime.localeCompare(b.before.startTime));
    wrap.append(h("div", { class: "before-after" },
      column("Before", before.map((x) => ({ ...x, time: x.before.startTime }))),
      column("After", stops.map((x) => ({ ...x, time: x.after && x.after.startTime })))));
    const findings = preview.findings || [];
    if (findings.length) wrap.append(h("ul", { class: "draft-findings" }, findings.map((f) => h("li", null, f.message))));
    if (draft.travel) wrap.append(h("p", { class: "hint" }, travelText(draft.travel)));
    const apply = h("button", { type: "button", class: "btn btn-primary", "data-testid": "apply-plan" }, "Apply Plan");
    const discard = h("button", { type: "button", class: "btn", onclick: () => clear(results) }, "Discard");
    const out = h("div", { "aria-live": "assertive" });
    apply.addEventListener("click", async () => {
      clear(out);
      let stale = false;
      await withBusy(apply, async () => {
        try {
          const trip = await post(`${store.base}/drafts/${encodeURIComponent(draft.id)}/apply`, {});
          store.setTrip(trip.trip || trip);
          toast("Applied the optimized plan", "success");
          clear(results).append(h("p", { class: "pill ok" }, icon("check", { size: 14 }), " Plan applied"));
        } catch (err) {
          stale = err.code === "stale";
          out.append(errorBox(stale ? new Error(STALE_TEXT) : err));
        }
      }, "Applying…");
      if (stale) apply.disabled = true; // after withBusy, which re-enables it
    });
    wrap.append(out, store.canEdit ? h("div", { class: "actions" }, discard, apply) : h("p", { class: "muted" }, "Viewers can preview but not apply."));
    return wrap;
  }

  function column(title, items) {
    return h("div", { class: "ba-col" }, h("h5", null, title),
      h("ol", { class: "ba-list" }, items.map((x) => h("li", { class: x.added ? "added" : "" },
        h("span", { class: "ba-time" }, x.time || ""),
        h("span", null, x.name || "Stop"),
        x.setTime ? h("span", { class: "badge" }, "set") : null,
        x.added ? h("span", { class: "badge badge-new" }, "new") : null,
        x.hours && x.hours.fits === false ? h("span", { class: "badge badge-estimate" }, "hours?") : null))));
  }

  function travelText(travel) {
    if (typeof travel === "string") return travel;
    const b = travel.beforeMin ?? travel.before;
    const a = travel.afterMin ?? travel.after;
    if (typeof b === "number" && typeof a === "number") return `Travel: ${fmtMinutes(b)} before, ${fmtMinutes(a)} after.`;
    return "";
  }

  const off = store.on((reason) => {
    if (reason === "day") clear(results); // the preview was for the day shown before
  });
  return { destroy: off };
}
