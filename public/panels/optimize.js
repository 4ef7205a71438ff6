// Ways to order the selected day, each a draft shown before/after and applied
// with Apply Plan (once; `draftpreview.js`):
// - Optimize my day: the AI reorders the free stops and may add a place, or
//   keeps the day as it is (said so, with nothing to apply); when the
//   server's exact shortest order of that plan saves time, it is offered
//   beside it with its own preview.
// - Shortest order: the order of the free stops with the least travel,
//   computed by the server (no AI, so it works without an AI key).

import { post } from "../api.js";
import { h, append, clear, errorBox, progressLine, withBusy, fmtMinutes } from "../planner/ui.js";
import { icon } from "../planner/icons.js";
import { draftPreview } from "./draftpreview.js";

const STALE_OPTIMIZE = "The day changed since this preview, so it cannot be applied. Optimize again for a fresh plan.";
const KEPT_HEADLINE = "The AI would keep this day as it is";
// What goes in the results, a live region already (nested, it would be read twice).
const IN_RESULTS = { live: false };
const STALE_SHORTEST = "The day changed since this preview, so it cannot be applied. Ask for the shortest order again.";

export function mountOptimize(el, store, panel) {
  const results = h("div", { class: "assistant-results", "aria-live": "polite" });
  const optimize = h("button", { "data-needs-server": true, type: "button", class: "btn btn-primary", "data-testid": "optimize" }, icon("sparkle"), "Optimize my day");
  const shortest = h("button", { "data-needs-server": true, type: "button", class: "btn", "data-testid": "shortest" }, icon("route"), "Shortest order");
  const ai = store.app.session.config.aiEnabled;
  const actions = h("div", { class: "row wrap optimize-actions", "data-slot": "day-order-actions" }, ai ? optimize : null, shortest);
  append(el, [
    h("p", { class: "hint" }, ai
      ? "Optimize my day asks the AI to reorder the free stops and may add a place. Shortest order finds the order with the least travel, without AI. Set times never move, and you see a preview before anything changes."
      : "Shortest order finds the order of the free stops with the least travel. Set times never move, and you see a preview before anything changes."),
    actions,
    ai ? null : h("p", { class: "hint", role: "note" }, "“Optimize my day” uses AI, which is turned off on this server."),
    results]);
  optimize.addEventListener("click", () => runOptimize());
  shortest.addEventListener("click", () => runShortest());

  // Apply, Discard and Close take the preview (and the button pressed) away:
  // the keyboard goes back to the button that asked for it, not to the page's body.
  const lost = () => !document.activeElement || document.activeElement === document.body;
  const done = (from) => (shown) => {
    if (shown) clear(results).append(shown);
    else clear(results);
    if (lost()) from.focus();
  };
  // A preview lands under the buttons, often below the panel's fold.
  const reveal = (el) => { if (el) el.scrollIntoView({ block: "nearest" }); };

  async function runOptimize() {
    const day = store.day();
    if (!day) return;
    clear(results).append(progressLine("Optimizing the day: gathering places and asking the AI (this can take up to a minute)…", IN_RESULTS));
    try {
      const res = await withBusy(optimize, () => post(`${store.base}/days/${encodeURIComponent(day.id)}/optimize`, {}), "Optimizing…");
      // A plan with no edits is the day as it is (Before and After alike, nothing to apply): the
      // headline says so, so it does not read as a preview that failed to change anything.
      const kept = !(res.draft.edits || []).length;
      clear(results).append(draftPreview(store, res.draft, {
        label: "Optimized plan preview", headline: kept ? KEPT_HEADLINE : "Preview", notes: [res.draft.preview && res.draft.preview.summary],
        staleText: STALE_OPTIMIZE, appliedText: "Applied the optimized plan", onDone: done(optimize),
      }));
      if (res.shortestDraft) results.append(shortestOffer(res.draft, res.shortestDraft));
    } catch (err) {
      clear(results).append(errorBox(err, IN_RESULTS));
      if (err.code === "preferences") {
        results.append(h("button", { type: "button", class: "btn", onclick: () => panel.open("preferences") }, "Open Preferences"));
      }
    }
    reveal(results.firstElementChild);
  }

  // The same plan in the exact shortest order, when it saves time: offered
  // under the AI's preview, opened into a preview of its own.
  function shortestOffer(draft, alternative) {
    const saved = draft.travel.afterMin - alternative.travel.afterMin;
    const headline = `Shortest order saves ${fmtMinutes(saved)}`;
    const show = h("button", { "data-needs-server": true, type: "button", class: "btn btn-sm" }, "Show the shortest order");
    const offer = h("aside", { class: "draft-offer", "data-testid": "shortest-offer" },
      h("p", null, h("strong", null, headline), ": the same stops and places in the order with the least travel."), show);
    show.addEventListener("click", () => {
      const preview = draftPreview(store, alternative, {
        label: "Shortest order preview", headline, notes: ["The same plan as above, in the order with the least travel."],
        staleText: STALE_SHORTEST, appliedText: "Applied the shortest order",
        onDone: (shown) => {
          if (shown) return done(optimize)(shown);
          preview.remove(); // Discard leaves the AI's plan shown
          if (lost()) optimize.focus();
        },
      });
      offer.replaceWith(preview);
      reveal(preview);
    });
    return offer;
  }

  async function runShortest() {
    const day = store.day();
    if (!day) return;
    clear(results).append(progressLine("Working out the shortest order…", IN_RESULTS));
    try {
      const res = await withBusy(shortest, () => post(`${store.base}/days/${encodeURIComponent(day.id)}/shortest`, {}), "Working it out…");
      clear(results).append(draftPreview(store, res.draft, {
        label: "Shortest order preview", ...shortestWords(res.draft),
        staleText: STALE_SHORTEST, appliedText: "Applied the shortest order", onDone: done(shortest),
      }));
    } catch (err) {
      clear(results).append(errorBox(err, IN_RESULTS)); // 409: no order fits, and which stop blocks (the server's words)
    }
    reveal(results.firstElementChild);
  }

  const off = store.on((reason) => {
    if (reason === "day") clear(results); // the preview was for the day shown before
  });
  return { destroy: off };
}

// The headline and notes of a Shortest order draft, from its travel figures.
function shortestWords(draft) {
  const t = draft.travel || {};
  const saved = (t.beforeMin ?? 0) - (t.afterMin ?? 0);
  const moves = (draft.edits || []).length;
  const headline = moves && saved > 0 ? `Shortest order saves ${fmtMinutes(saved)}`
    : moves ? "Shortest order: the same travel time, in another order" : "This day is already in its shortest order";
  const notes = [
    t.exact === false
      ? `Best order found: ${t.freeStops} stops have too many orders to try every one (Wayline tries them all up to ${t.exactLimit}), so a slightly shorter order may exist.`
      : "Exact: no order of these stops has less travel.",
    t.estimated ? "Some travel times are estimates (straight-line distance), not real routes." : null,
  ];
  return { headline, notes };
}
