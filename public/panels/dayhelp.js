// "This day" in the AI panel: an AI review of the selected day, ideas (places
// to eat, things to see nearby) and ways to order it (Optimize my day,
// Shortest order), one section each.

import { h, fmtDay } from "../planner/ui.js";
import { patch, sig } from "../planner/keyed.js";
import { mountReview } from "./review.js";
import { mountIdeas } from "./ideas.js";
import { mountOptimize } from "./optimize.js";

const PARTS = [
  ["review", "Review this day", mountReview],
  ["ideas", "Ideas", mountIdeas],
  ["optimize", "Order the day", mountOptimize],
];

export function mountDayHelp(el, store, panel) {
  const heading = h("p", { class: "muted day-help-for" });
  el.append(h("div", { class: "panel-intro" }, heading));
  const views = PARTS.map(([id, title, mount]) => {
    const body = h("div", { class: "help-body" });
    el.append(h("section", { class: "help-section", "data-section": id, "aria-labelledby": `help-${id}` },
      h("h3", { id: `help-${id}` }, title), body));
    return mount(body, store, panel) || {};
  });

  function render() {
    const day = store.day();
    patch(heading, sig(day && [day.position, day.title, day.date]), () =>
      (day ? `For day ${day.position + 1} · ${fmtDay(day.date)}${day.title ? ` · ${day.title}` : ""}` : ""));
  }
  const off = store.on((reason) => {
    if (reason === "day" || reason === "trip") render();
  });
  render();
  return {
    shown() {
      for (const v of views) if (v.shown) v.shown();
    },
    destroy() {
      off();
      for (const v of views) if (v.destroy) v.destroy();
    },
  };
}
