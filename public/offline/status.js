// What the member sees about the connection and the writes this device
// keeps: "Offline: showing the plan as of 14:32", which changes wait to be
// sent, and each one the server refused, with what happened, until its
// author dismisses it (never dropped quietly).

import { h, focusPastRegion } from "../planner/ui.js";
import { patch, sig } from "../planner/keyed.js";
import { icon } from "../planner/icons.js";
import { isOnline } from "./connection.js";
import { allWrites, dismiss, onOutbox } from "./outbox.js";
import { refusalText } from "./words.js";

const CLOCK = new Intl.DateTimeFormat("en-GB", { hour: "2-digit", minute: "2-digit" });
const DAY_AND_CLOCK = new Intl.DateTimeFormat("en-GB", { weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" });

// "14:32" today, "Mon 14 Dec, 14:32" before.
export function asOf(savedAt) {
  const at = new Date(savedAt);
  return at.toDateString() === new Date().toDateString() ? CLOCK.format(at) : DAY_AND_CLOCK.format(at).replace(" at ", ", ");
}

// "Offline: showing <what> as of 14:32" (what: "the plan", "your trips").
// A status of its own, unless it is put in a live region (`live: false`).
export function offlineLine(what, savedAt, extra = null, { live = true } = {}) {
  return h("div", { class: "offline-line", role: live ? "status" : null, "data-testid": "offline-line" },
    icon("offline", { size: 18 }),
    h("div", null,
      h("p", { class: "offline-title" }, savedAt ? `Offline: showing ${what} as of ${asOf(savedAt)}` : `Offline: showing ${what}`),
      extra ? h("p", { class: "offline-more" }, extra) : null));
}

const KEPT_HINT = "New stops, moves, times, expenses, votes and comments are kept on this device and sent when you are "
  + "back online. Anything else needs a connection.";

// The planner's line above the view: the offline notice, the writes
// waiting to be sent, and the refused ones.
export function createTripStatus(store) {
  // The offline notice and what waits are read politely as they change; each
  // refused change is an alert of its own, outside that region: nested live
  // regions are read twice.
  const news = h("div", { "aria-live": "polite" });
  const refused = h("div");
  const el = h("div", { class: "trip-status" }, news, refused);

  function render() {
    const online = isOnline();
    const waiting = store.writes.filter((w) => w.state === "waiting" && w.kept);
    const failed = store.writes.filter((w) => w.state === "failed");
    const moved = waiting.some((w) => w.kind === "op" && w.op !== "add_expense" && w.op !== "update_expense");
    const focused = el.contains(document.activeElement) ? document.activeElement : null;
    const at = focused ? [...refused.children].findIndex((r) => r.contains(focused)) : -1;
    patch(news, sig(online, store.savedAt, waiting.map((w) => w.key)), () => [
      online ? null : offlineLine("the plan", store.savedAt, KEPT_HINT, { live: false }),
      waiting.length ? h("details", { class: "kept-writes", "data-testid": "waiting-writes" },
        h("summary", null, waiting.length === 1 ? "1 change waits to be sent" : `${waiting.length} changes wait to be sent`),
        h("ul", null, waiting.map((w) => h("li", null, w.label))),
        moved ? h("p", { class: "muted" }, "Times are worked out again once your changes are sent.") : null) : null,
    ]);
    patch(refused, sig(failed.map((w) => w.key)), () => failed.map((w) => refusedLine(w, () => store.dismissWrite(w.key))));
    el.hidden = online && !waiting.length && !failed.length;
    keepFocus(el, refused, focused, at);
  }

  render();
  return { el, render };
}

// One refused change: what it was, why it was not made, and Dismiss.
function refusedLine(w, onDismiss) {
  return h("div", { class: "write-refused", role: "alert", "data-testid": "refused-write" },
    icon("alert", { size: 18 }),
    h("div", null,
      h("p", { class: "refused-title" }, `Not sent: ${w.label}`),
      h("p", null, refusalText(w))),
    h("button", { type: "button", class: "btn btn-sm", "aria-label": `Dismiss: ${w.label}`, onclick: onDismiss }, "Dismiss"));
}

// A Dismiss that had the keyboard leaves with its line: focus goes to the
// next refused change's Dismiss, else past this region.
function keepFocus(el, refused, focused, at) {
  if (!focused || focused.isConnected) return;
  const buttons = [...refused.querySelectorAll("button")];
  if (buttons.length) buttons[Math.min(Math.max(at, 0), buttons.length - 1)].focus();
  else focusPastRegion(el);
}

// The trips list's line for changes refused for a trip that is not in the
// list any more (their author was removed from it, or it was deleted): the
// planner, where refused changes show, cannot open, so they are said here,
// each until dismissed, never dropped quietly. `setTrips(ids)`: the trips
// the list shows.
export function createGoneTripRefusals() {
  const refused = h("div");
  const el = h("div", { class: "trip-status", hidden: true }, refused);
  let trips = null;

  function render() {
    if (!trips) return;
    const failed = allWrites().filter((w) => w.state === "failed" && !trips.has(w.tripId));
    const focused = el.contains(document.activeElement) ? document.activeElement : null;
    const at = focused ? [...refused.children].findIndex((r) => r.contains(focused)) : -1;
    patch(refused, sig(failed.map((w) => w.key)), () => failed.map((w) => refusedLine(w, () => dismiss(w.key))));
    el.hidden = !failed.length;
    keepFocus(el, refused, focused, at);
  }

  const stop = onOutbox(render);
  return {
    el,
    setTrips(ids) {
      trips = new Set(ids);
      render();
    },
    destroy: stop,
  };
}
