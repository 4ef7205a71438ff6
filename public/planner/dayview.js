// One day: its header (date, weather, review status, actions), the map and
// the timeline of stops and legs with review findings inline.

import { h, append, clear, fmtDay, fmtLongDay, fmtMinutes } from "./ui.js";
import { findingBox } from "./findings.js";
import { dayLabel, weatherIcon, openRenameDay, deleteDay } from "./days.js";
import { renderTimeline } from "./timeline.js";
import { openStopForm } from "./stopform.js";
import { renderMap } from "../map.js";
import { icon } from "./icons.js";

export function renderDayView(center, store) {
  const day = store.day();
  if (!day) {
    center.append(h("div", { class: "empty card" }, h("h2", null, "This trip has no days"), h("p", { class: "muted" }, "Add a day from the list.")));
    return;
  }
  const view = h("div", { class: "day-view", "data-day-id": day.id });
  center.append(view);

  const w = store.weather && store.weather.byDate.get(day.date);
  const planned = day.stops.reduce((sum, s) => sum + (s.durationMin || 0), 0);
  const first = day.stops[0];
  const last = day.stops[day.stops.length - 1];
  const meta = [
    first ? `${first.startTime} – ${last.endTime}` : `Starts ${day.startTime || "09:00"}`,
    `${day.stops.length} stop${day.stops.length === 1 ? "" : "s"}`,
    planned ? `${fmtMinutes(planned)} planned` : null,
  ].filter(Boolean);

  const actions = h("div", { class: "day-actions" });
  if (store.canEdit) {
    append(actions, [
      h("button", { type: "button", class: "btn btn-primary", "data-testid": "add-stop", onclick: () => openStopForm(store, { day }) }, icon("plus"), "Add stop"),
      h("button", { type: "button", class: "btn", onclick: () => openRenameDay(store, day) }, "Edit day"),
      store.trip.days.length > 1
        ? h("button", { type: "button", class: "btn btn-ghost danger-text", onclick: () => deleteDay(store, day) }, "Delete day")
        : null,
    ]);
  }

  view.append(
    h("header", { class: "day-head" },
      h("div", { class: "day-head-text" },
        h("p", { class: "eyebrow" }, `Day ${day.position + 1} · ${fmtDay(day.date)}`),
        h("h2", { class: "day-heading" }, day.title || fmtLongDay(day.date)),
        h("p", { class: "day-meta muted" }, meta.join(" · ")),
        weatherChip(store, w)),
      actions),
  );
  if (day.note) view.append(h("p", { class: "day-note" }, day.note));

  const review = h("div", { class: "review", "aria-live": "polite" });
  const mapBox = h("div", { class: "map-box" });
  const timeline = h("div", { class: "timeline-wrap" });
  view.append(review, h("div", { class: "day-grid" }, timeline, mapBox));

  renderTimeline(timeline, store, day, null);
  renderMap(mapBox, store, day);

  // Findings arrive after the first paint; the timeline is drawn again with them.
  store.review(day.id).then((entry) => {
    if (!view.isConnected || store.dayId !== day.id) return;
    renderReview(review, store, day, entry);
    if (entry.data) {
      clear(timeline);
      renderTimeline(timeline, store, day, entry.data);
    }
  });
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
    return h("p", { class: "weather-chip muted" }, store.weather.error.message);
  }
  return null;
}

function renderReview(box, store, day, entry) {
  clear(box);
  if (entry.error) {
    if (entry.error.status === 404) return; // review not available on this server yet
    box.append(h("p", { class: "muted" }, `Review unavailable: ${entry.error.message}`));
    return;
  }
  const data = entry.data || {};
  const findings = data.findings || [];
  const stopIds = new Set(day.stops.map((s) => s.id));
  const general = findings.filter((f) => !(f.stopIds || []).some((id) => stopIds.has(id)));
  const ok = findings.length === 0;
  box.append(
    h("div", { class: `review-status ${ok ? "ok" : "warn"}`, "data-testid": "review-status" },
      icon(ok ? "check" : "alert", { size: 15 }),
      ok ? " This day looks workable." : ` ${findings.length} thing${findings.length === 1 ? "" : "s"} to check on ${dayLabel(day)}.`),
    general.map((f) => findingBox(store, f)),
  );
}
