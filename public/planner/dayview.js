// One day: its header (date, weather, review status, actions), the map and
// the timeline of stops and legs with review findings inline. Built once and
// shared by every day; each part is patched only when what it shows changed.

import { h, fmtDay, fmtLongDay, fmtMinutes, fmtClock, osmCredit, renderMarkdown } from "./ui.js";
import { patch, sig } from "./keyed.js";
import { findingBox } from "./findings.js";
import { dayLabel, weatherIcon, openRenameDay, deleteDay } from "./days.js";
import { createTimeline } from "./timeline.js";
import { openStopForm } from "./stopform.js";
import { createDayMap } from "../map.js";
import { icon } from "./icons.js";

export function createDayView(root, store) {
  const none = h("div", { class: "empty card", hidden: true },
    h("h2", null, "This trip has no days"), h("p", { class: "muted" }, "Add a day from the list."));
  const head = h("header", { class: "day-head" });
  const review = h("div", { class: "review", "aria-live": "polite" });
  const timeline = createTimeline(store);
  const mapBox = h("div", { class: "map-box" });
  const credit = h("div", { class: "day-credit" });
  const view = h("div", { class: "day-view" }, head, review,
    h("div", { class: "day-grid" }, h("div", { class: "day-plan" }, timeline.el, credit), mapBox));
  root.append(none, view);
  const map = createDayMap(mapBox, store);

  function render() {
    const day = store.day();
    none.hidden = Boolean(day);
    view.hidden = !day;
    if (!day) return;
    view.dataset.dayId = day.id;
    const entry = store.reviewOf(day.id);
    if (!entry || entry.version !== store.trip.version) store.review(day.id); // emits "review" when it arrives
    const w = (store.weather && store.weather.byDate.get(day.date)) || null;
    const weather = store.weather && { loading: store.weather.loading, note: store.weather.note, error: store.weather.error && store.weather.error.message };
    patch(head, sig(day.id, day.position, day.date, day.title, day.note, day.startTime, times(day), store.canEdit,
      store.trip.days.length, w, weather), () => header(store, day, w));
    patch(review, sig(day.id, day.stops.map((s) => s.id), entry && entry.data, entry && entry.error && entry.error.message,
      store.canEdit), () => reviewLine(store, day, entry));
    timeline.render(day, entry && entry.data);
    const fromOsm = showsOsmData(day);
    patch(credit, sig(fromOsm), () => (fromOsm ? osmCredit(store.app.session.config) : null));
    map.update(day);
  }

  return { render, destroy: () => map.destroy() };
}

function times(day) {
  return day.stops.map((s) => [s.startMinutes, s.endMinutes, s.durationMin]);
}

// OpenStreetMap's licence asks for its credit wherever its data shows: a
// place found on OSM, or a leg OSM's router timed.
function showsOsmData(day) {
  return day.stops.some((s) => String(s.placeId || "").startsWith("osm:")) || day.legs.some((l) => l.source === "osm");
}

function header(store, day, w) {
  const planned = day.stops.reduce((sum, s) => sum + (s.durationMin || 0), 0);
  // From the earliest start to the latest end (a set time may sit out of order).
  const from = Math.min(...day.stops.map((s) => s.startMinutes));
  const to = Math.max(...day.stops.map((s) => s.endMinutes));
  const meta = [
    day.stops.length ? `${fmtClock(from)} – ${fmtClock(to)}` : `Starts ${day.startTime || "09:00"}`,
    `${day.stops.length} stop${day.stops.length === 1 ? "" : "s"}`,
    planned ? `${fmtMinutes(planned)} planned` : null,
  ].filter(Boolean);
  const actions = store.canEdit
    ? h("div", { class: "day-actions" },
      h("button", { type: "button", class: "btn btn-primary", "data-testid": "add-stop", "data-fkey": "add", onclick: () => openStopForm(store, { day: store.day() }) }, icon("plus"), "Add stop"),
      h("button", { type: "button", class: "btn", "data-fkey": "edit", onclick: () => openRenameDay(store, store.day()) }, "Edit day"),
      store.trip.days.length > 1
        ? h("button", { type: "button", class: "btn btn-ghost danger-text", "data-fkey": "delete", "data-needs-server": true, onclick: () => deleteDay(store, store.day()) }, "Delete day")
        : null)
    : null;
  return [
    h("div", { class: "day-head-text" },
      h("p", { class: "eyebrow" }, `Day ${day.position + 1} · ${fmtDay(day.date)}`),
      // Where the keyboard lands when the line above empties (the last suggestion
      // decided, the last refused change dismissed); it keeps it through a rebuild.
      h("h2", { class: "day-heading", tabindex: "-1", "data-fkey": "day-heading" }, day.title || fmtLongDay(day.date)),
      h("p", { class: "day-meta muted" }, meta.join(" · ")),
      weatherChip(store, w)),
    actions,
    day.note ? h("div", { class: "day-note" }, renderMarkdown(day.note, store.tripId)) : null,
  ];
}

function weatherChip(store, w) {
  if (w) {
    return h("p", { class: "weather-chip", title: w.label || "" },
      weatherIcon(w), ` ${w.summary || ""}`,
      w.source && w.source !== "forecast" ? h("span", { class: "badge" }, w.label || "typical") : null);
  }
  if (store.weather && store.weather.loading) return h("p", { class: "weather-chip muted" }, "Weather…");
  if (store.weather && store.weather.note) return h("p", { class: "weather-chip muted" }, store.weather.note);
  if (store.weather && store.weather.error && store.weather.error.status !== 404) {
    const offline = store.weather.error.status === 0;
    return h("p", { class: "weather-chip muted" }, offline ? "The forecast shows when you are back online." : store.weather.error.message);
  }
  return null;
}

function reviewLine(store, day, entry) {
  if (!entry) return null;
  if (entry.error) {
    if (entry.error.status === 404) return null; // review not available on this server
    if (entry.error.status === 0) return h("p", { class: "muted" }, "The review of this day shows when you are back online.");
    return h("p", { class: "muted" }, `Review unavailable: ${entry.error.message}`);
  }
  const findings = (entry.data && entry.data.findings) || [];
  const stopIds = new Set(day.stops.map((s) => s.id));
  const general = findings.filter((f) => !(f.stopIds || []).some((id) => stopIds.has(id)));
  // Observations ("info", e.g. typical weather for a day beyond the forecast)
  // are shown quietly and never count as something to check.
  const toCheck = findings.filter((f) => f.severity !== "info").length;
  const ok = toCheck === 0;
  // Checks that could not run (no hours known, the forecast down): the day
  // never passes for checked; the server says which, in plain words.
  const unchecked = (entry.data && entry.data.notChecked) || [];
  const text = !ok ? ` ${toCheck} thing${toCheck === 1 ? "" : "s"} to check on ${dayLabel(day)}.`
    : unchecked.length ? " Nothing wrong found, but not everything could be checked:" : " This day looks workable.";
  return [
    h("div", { class: `review-status ${ok ? (unchecked.length ? "partial" : "ok") : "warn"}`, "data-testid": "review-status" },
      icon(ok && !unchecked.length ? "check" : ok ? "info" : "alert", { size: 15 }), text),
    // Under "N things to check" the list needs its own words, or it reads as those things.
    unchecked.length && !ok ? h("p", { class: "hint not-checked-lead", "data-testid": "not-checked-lead" }, "Also, not everything could be checked:") : null,
    unchecked.length ? h("ul", { class: "not-checked hint", "data-testid": "not-checked" }, unchecked.map((c) => h("li", null, c.message))) : null,
    general.map((f) => findingBox(store, f)),
  ];
}
