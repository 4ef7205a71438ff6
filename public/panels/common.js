// Shared bits of the panel tabs.

import { h } from "../planner/ui.js";

export function aiOffNote(what) {
  return h("div", { class: "ai-off", role: "note" },
    h("h3", null, "AI is turned off on this server"),
    h("p", null, `${what} needs an OpenAI key, which this Wayline server does not have. Everything else — days, stops, travel times, expenses, comments — works as usual.`));
}

// Shows a day of the trip (and rings a stop on it) from the panel or the
// tray; on phones the sheet closes, since it covers the day.
export function showOnPlan(store, panel, dayId, stopId = null) {
  store.selectDay(dayId);
  if (panel) panel.closeIfSheet();
  if (!stopId) return;
  requestAnimationFrame(() => {
    const stop = document.querySelector(`.timeline .stop[data-stop-id="${CSS.escape(stopId)}"]`);
    if (!stop) return;
    stop.scrollIntoView({ block: "center", behavior: "smooth" });
    stop.classList.add("focused");
    setTimeout(() => stop.classList.remove("focused"), 2400);
  });
}
