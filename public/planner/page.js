// The planner screen: the trip rail (days) on the left, the selected view in
// the centre (a day, expenses, or people) under the AI's suggestions tray,
// and the side panel on the right (Chat, or AI help; a sheet on phones). Every region is built once and re-rendered only for the
// store events that concern it (see store.js); inside, lists are keyed by id
// (keyed.js), so what someone is typing survives other members' changes.
// Other members' changes arrive through sync.js (the live stream, or the poll
// when the stream does not work); this page tells the stream which day it
// shows, for the others' presence avatars.

import { h, clear, errorBox, fmtDate, addDays, toast } from "./ui.js";
import { patch, sig } from "./keyed.js";
import { createStore } from "./store.js";
import { startSync } from "./sync.js";
import { createRail } from "./days.js";
import { createDayView } from "./dayview.js";
import { createExpensesView } from "./expenses.js";
import { createMembersView } from "./members.js";
import { mountPanel, isPhone, MODES } from "../panels/panel.js";
import { mountSuggestionTray } from "../panels/suggestions.js";
import { trackReading } from "../panels/chatread.js";
import { icon } from "./icons.js";
import { showOnPlan } from "../panels/common.js";
import { createTripStatus } from "../offline/status.js";
import { forgetTrip } from "../offline/kept.js";

const VIEWS = [
  ["plan", "Itinerary", "calendar", createDayView],
  ["expenses", "Expenses", "wallet", createExpensesView],
  ["members", "People", "users", createMembersView],
];

// A Chat or AI help button (top bar, bottom tabs): its label, and for the
// chat the unread count ("Chat 3", read out as "Chat, 3 unread").
function panelButtonContent(mode, unread, iconSize) {
  const count = mode === "chat" && unread ? h("span", { class: "count-badge", "data-testid": "unread-count" }, String(unread)) : null;
  return [icon(MODES[mode].icon, { size: iconSize }), h("span", { class: "toggle-label" }, MODES[mode].title),
    count ? " " : null, count, count ? h("span", { class: "visually-hidden" }, " unread") : null];
}

export function mountPlanner(main, app, tripId, params) {
  const store = createStore(app, tripId);
  const railEl = h("aside", { class: "rail", "aria-label": "Trip and days" });
  const center = h("section", { class: "planner-main" });
  const side = h("aside", { class: "side", id: "side-panel" });
  const mobileTabs = h("nav", { class: "mobile-tabs", "aria-label": "Planner sections" });
  const trayHost = h("div", { class: "tray-host" });
  const status = createTripStatus(store); // offline, and the changes this device keeps
  center.append(status.el, trayHost);
  const shell = h("div", { class: "planner" }, railEl, center, side);
  const loading = h("div", { class: "page" }, h("p", { role: "status", class: "muted" }, "Loading the trip…"));
  main.append(loading);

  const panel = mountPanel(side, store);
  const toggles = h("div", { class: "panel-toggles" });
  const titleSlot = h("div", { class: "topbar-trip" });
  clear(app.topbarSlot()).append(titleSlot, toggles);
  panel.onChange((open) => {
    shell.classList.toggle("panel-open", open);
    document.body.classList.toggle("sheet-open", open && isPhone());
    renderToggles();
  });
  shell.classList.toggle("panel-open", panel.isOpen());

  const rail = createRail(railEl, store, VIEWS);
  const views = new Map(); // view name -> {el, render(reason)}, built on first use
  let shownKey = null; // which view (and day) the centre shows, for its scroll position
  let tray = null;
  let reading = null;
  let shownDay; // the day last announced to the others (null: none), undefined before the first
  let address = location.hash; // the address the page last applied or wrote (syncHash)

  const unsubscribe = store.on((reason) => {
    if (reason === "agent") {
      renderToggles(); // the unread count; the panel and the tray listen for themselves
      return;
    }
    if (reason === "presence") {
      if (store.trip) rail.render(); // the avatars live on the rail only
      return;
    }
    if (reason === "trip") store.loadWeather(); // refetches only when dates or destination changed
    render(reason);
  });

  applyParams(params);
  store
    .refresh()
    .then(() => {
      loading.remove();
      main.append(shell, mobileTabs);
      store.attachSync(startSync(store, { onGone: tripGone }));
      tray = mountSuggestionTray(trayHost, store, panel);
      reading = trackReading(store, panel);
      store.loadWeather();
      render("trip");
      store.keepReviews(); // the other days' reviews too, for offline (quietly, one at a time)
      // A link to one stop (a calendar event's URL): show it once the day is drawn.
      if (params && params.get("stop")) showOnPlan(store, null, store.dayId, params.get("stop"));
    })
    .catch((err) => {
      const why = err.status === 0
        ? new Error("You are offline, and this trip is not kept on this device yet. Open it once while online to have it here without a connection.")
        : err;
      clear(loading).append(
        h("div", { class: "card narrow" }, h("h1", null, "This trip could not be opened"), errorBox(why),
          h("p", null, h("a", { href: "#/" }, "Back to your trips"))),
      );
    });

  function applyParams(p) {
    address = location.hash; // what the page shows now answers to this address
    if (!p) return;
    const view = p.get("view");
    store.show(VIEWS.some(([v]) => v === view) ? view : "plan", p.get("day") || store.dayId);
  }

  function render(reason) {
    const trip = store.trip;
    if (!trip) return;
    document.title = `${trip.title} · Wayline`;
    const lastDay = trip.days.length ? addDays(trip.startDate, trip.days.length - 1) : trip.startDate;
    patch(titleSlot, sig(trip.title, trip.startDate, lastDay), () => [
      h("span", { class: "topbar-trip-title" }, trip.title),
      h("span", { class: "topbar-trip-dates muted" }, `${fmtDate(trip.startDate)} – ${fmtDate(lastDay)}`),
    ]);
    rail.render();
    status.render();
    showView();
    views.get(store.view).render(reason);
    restoreScroll();
    renderToggles();
    syncHash();
    announceDay();
  }

  // The others see which day this page shows (none outside the itinerary).
  function announceDay() {
    const day = store.view === "plan" ? store.dayId : null;
    if (!store.sync || day === shownDay) return;
    shownDay = day;
    store.sync.showDay(day);
  }

  // The trip was deleted, or this member was removed (or the account): say
  // so plainly on the trips list. Signed out (another tab, "Sign out
  // everywhere", a password change on another device): the account goes on,
  // so sign-in says that, unless this page is already on its way there.
  function tripGone(reason) {
    if (app.session.endingHere) return; // this page ended the sessions: it says so itself (planner/account.js)
    if (reason === "signedOut") {
      if (app.session.me) app.signedOut("You were signed out.");
      return;
    }
    if (reason === "expired") { // its session ran out: sign in again, and back to this day
      if (app.session.me) app.sessionEnded();
      return;
    }
    forgetTrip(store.tripId); // not theirs to open any more, with or without a connection
    const title = store.trip ? `“${store.trip.title}”` : "This trip";
    const message = {
      deleted: `${title} was deleted.`,
      removed: `You are no longer a member of ${title}.`,
      account: "Your account was deleted.",
    }[reason] || `${title} is no longer available to you.`;
    app.navigate("#/", { replace: true }).then(() => toast(message, "info", 8000));
  }

  function scroller() {
    return isPhone() ? document.scrollingElement : center;
  }

  // One view in the centre at a time; the others stay built (and keep their
  // state) but hidden. Each view and day comes back where it was scrolled.
  function showView() {
    const key = viewKey();
    if (key === shownKey) return;
    if (shownKey) store.saveScroll(shownKey, scroller().scrollTop);
    if (!views.has(store.view)) {
      const [, , , create] = VIEWS.find(([v]) => v === store.view);
      const el = h("div", { class: "view", "data-view": store.view });
      center.append(el);
      views.set(store.view, { el, ...create(el, store, panel) });
    }
    for (const [name, view] of views) view.el.hidden = name !== store.view;
  }

  function restoreScroll() {
    const key = viewKey();
    if (key === shownKey) return;
    shownKey = key;
    scroller().scrollTop = store.scrollOf(key);
  }

  function viewKey() {
    return store.view === "plan" ? `plan:${store.dayId}` : store.view;
  }

  // The Chat and AI help buttons: in the top bar on wide screens, among the
  // bottom tabs on phones (with the planner's views). Both are there with or
  // without AI: the chat is the group's either way, and AI help says what is off.
  function renderToggles() {
    const unread = store.unread() || 0;
    const chat = panel.showing("chat");
    const help = panel.showing("help");
    patch(toggles, sig(unread, chat, help), () => [
      // data-fkey: the rebuilt toggle keeps the keyboard (it is the button just pressed).
      h("button", { type: "button", class: "btn btn-ghost panel-toggle", "data-mode": "chat", "data-fkey": "toggle-chat", "aria-controls": "side-panel",
        "aria-expanded": String(chat), onclick: () => panel.toggle("chat") }, panelButtonContent("chat", unread, 18)),
      h("button", { type: "button", class: "btn btn-ghost panel-toggle sparkle", "data-mode": "help", "data-fkey": "toggle-help", "aria-controls": "side-panel",
        "aria-expanded": String(help), onclick: () => panel.toggle("help") }, panelButtonContent("help", 0, 18)),
    ]);
    const open = panel.isOpen();
    patch(mobileTabs, sig(store.view, open, unread, chat, help), () => [
      ...VIEWS.map(([view, label, iconName]) => {
        const active = store.view === view && !open;
        return h("button", {
          type: "button", class: `mobile-tab${active ? " active" : ""}`, "aria-current": active ? "page" : null, "data-fkey": view,
          onclick: () => { panel.close(); store.setView(view); },
        }, icon(iconName, { size: 20 }), h("span", null, label));
      }),
      ...["chat", "help"].map((mode) => h("button", {
        type: "button", class: `mobile-tab${panel.showing(mode) ? " active" : ""}`, "aria-expanded": String(panel.showing(mode)),
        "data-fkey": mode, "aria-controls": "side-panel", onclick: () => panel.toggle(mode),
      }, panelButtonContent(mode, unread, 20))),
    ]);
    mobileTabs.style.setProperty("--tabs", String(mobileTabs.children.length));
  }

  // Keep the address bar in step so reloads and shared links open the same day.
  // Only an address this page applied or wrote is rewritten: one that changed
  // since (a link to the trips list, Back, a view typed in) is a navigation
  // whose hashchange has not been routed yet, and writing over it before then
  // left the member where they were.
  function syncHash() {
    if (location.hash !== address) return;
    const q = new URLSearchParams();
    if (store.dayId) q.set("day", store.dayId);
    if (store.view !== "plan") q.set("view", store.view);
    const target = `#/trips/${encodeURIComponent(tripId)}?${q}`;
    if (location.hash !== target) history.replaceState(null, "", target);
    address = location.hash;
  }

  return {
    update(p) {
      applyParams(p);
    },
    destroy() {
      unsubscribe();
      store.destroy();
      if (tray) tray.destroy();
      if (reading) reading.destroy();
      for (const view of views.values()) if (view.destroy) view.destroy();
      panel.destroy();
      document.body.classList.remove("sheet-open");
      document.title = "Wayline";
    },
  };
}
