// The planner screen: the trip rail (days) on the left, the selected view in
// the centre (a day's timeline, expenses, or members), and the AI panel on
// the right (a bottom sheet on phones).

import { h, clear, errorBox, fmtDate, addDays } from "./ui.js";
import { createStore } from "./store.js";
import { startSync } from "./sync.js";
import { renderRail } from "./days.js";
import { renderDayView } from "./dayview.js";
import { renderExpenses } from "./expenses.js";
import { renderMembers } from "./members.js";
import { mountPanel } from "../panels/panel.js";
import { mountSuggestionCards } from "../panels/suggestions.js";
import { icon } from "./icons.js";

const VIEWS = [
  ["plan", "Itinerary", "calendar"],
  ["expenses", "Expenses", "wallet"],
  ["members", "People", "users"],
];

export function mountPlanner(main, app, tripId, params) {
  const store = createStore(app, tripId);
  const rail = h("aside", { class: "rail", "aria-label": "Trip and days" });
  const center = h("section", { class: "planner-main" });
  const side = h("aside", { class: "side", id: "side-panel", "aria-label": "Assistant panel" });
  const mobileTabs = h("nav", { class: "mobile-tabs", "aria-label": "Planner sections" });
  const shell = h("div", { class: "planner" }, rail, center, side);
  const loading = h("div", { class: "page" }, h("p", { role: "status", class: "muted" }, "Loading the trip…"));
  main.append(loading);

  const panel = mountPanel(side, store);
  const toggle = h(
    "button",
    { type: "button", class: "btn btn-ghost sparkle", "aria-controls": "side-panel", "aria-expanded": String(panel.isOpen()), onclick: () => panel.toggle() },
    icon("sparkle"), h("span", { class: "sparkle-label" }, "Assistant"),
  );
  const titleSlot = h("div", { class: "topbar-trip" });
  clear(app.topbarSlot()).append(titleSlot, toggle);
  panel.onChange((open) => {
    toggle.setAttribute("aria-expanded", String(open));
    shell.classList.toggle("panel-open", open);
    // The centre changed width: draw it again (the map is drawn to fit).
    if (store.trip) render("panel");
    else renderMobileTabs();
  });
  shell.classList.toggle("panel-open", panel.isOpen());

  let sync = null;
  let cards = null;
  const unsubscribe = store.on((reason) => {
    if (reason === "agent") return;
    if (reason === "trip") store.loadWeather(); // refetches only when dates or destination changed
    render(reason);
  });

  function applyParams(p) {
    if (!p) return;
    const day = p.get("day");
    const view = p.get("view");
    if (view && VIEWS.some(([v]) => v === view)) store.view = view;
    if (day && store.day(day)) store.dayId = day;
    else if (day) store.pendingDay = day;
  }

  applyParams(params);
  store
    .refresh()
    .then(() => {
      if (store.pendingDay && store.day(store.pendingDay)) store.dayId = store.pendingDay;
      loading.remove();
      main.append(shell, mobileTabs);
      sync = startSync(store);
      store.sync = sync;
      cards = mountSuggestionCards(document.body, store, panel);
      store.loadWeather();
      render("trip");
    })
    .catch((err) => {
      clear(loading).append(
        h("div", { class: "card narrow" }, h("h1", null, "This trip could not be opened"), errorBox(err),
          h("p", null, h("a", { href: "#/" }, "Back to your trips"))),
      );
    });

  function render(reason) {
    const trip = store.trip;
    if (!trip) return;
    document.title = `${trip.title} · Wayline`;
    const lastDay = trip.days.length ? addDays(trip.startDate, trip.days.length - 1) : trip.startDate;
    clear(titleSlot).append(
      h("span", { class: "topbar-trip-title" }, trip.title),
      h("span", { class: "topbar-trip-dates muted" }, `${fmtDate(trip.startDate)} – ${fmtDate(lastDay)}`),
    );
    renderRail(rail, store, VIEWS);
    const scroll = center.scrollTop;
    clear(center);
    if (store.view === "expenses") renderExpenses(center, store);
    else if (store.view === "members") renderMembers(center, store);
    else renderDayView(center, store);
    if (reason === "trip") center.scrollTop = scroll;
    renderMobileTabs();
    syncHash();
  }

  function renderMobileTabs() {
    clear(mobileTabs);
    for (const [view, label, iconName] of VIEWS) {
      const active = store.view === view && !panel.isOpen();
      mobileTabs.append(
        h("button", {
          type: "button", class: `mobile-tab${active ? " active" : ""}`, "aria-current": active ? "page" : null,
          onclick: () => { panel.close(); store.setView(view); },
        }, icon(iconName, { size: 20 }), h("span", null, label)),
      );
    }
    mobileTabs.append(
      h("button", {
        type: "button", class: `mobile-tab${panel.isOpen() ? " active" : ""}`, "aria-expanded": String(panel.isOpen()),
        "aria-controls": "side-panel", onclick: () => panel.toggle(),
      }, icon("sparkle", { size: 20 }), h("span", null, "Assistant")),
    );
  }

  // Keep the address bar in step so reloads and shared links open the same day.
  function syncHash() {
    const q = new URLSearchParams();
    if (store.dayId) q.set("day", store.dayId);
    if (store.view !== "plan") q.set("view", store.view);
    const target = `#/trips/${encodeURIComponent(tripId)}?${q}`;
    if (location.hash !== target) history.replaceState(null, "", target);
  }

  return {
    update(p) {
      const before = `${store.dayId}|${store.view}`;
      applyParams(p);
      if (store.trip && `${store.dayId}|${store.view}` !== before) render("day");
    },
    destroy() {
      store.destroyed = true;
      unsubscribe();
      if (sync) sync.stop();
      if (cards) cards.destroy();
      panel.destroy();
      document.title = "Wayline";
    },
  };
}
