// A day's timeline: stops with set (pinned) or computed times, the legs
// between them, votes, comments and the review's findings inline.

import { put } from "../api.js";
import { h, fmtMinutes, fmtDistance, renderMarkdown, showError, confirmDialog, openDialog, dialogForm, field, select, withBusy, clear,
  KIND_LABELS, MEALS } from "./ui.js";
import { openStopForm } from "./stopform.js";
import { renderThread } from "./stopdetail.js";
import { findingBox } from "./findings.js";
import { icon, KIND_ICON, MODE_ICON } from "./icons.js";

const toMin = (hhmm) => {
  const m = /^(\d{1,2}):(\d{2})$/.exec(hhmm || "");
  return m ? Number(m[1]) * 60 + Number(m[2]) : null;
};

export function renderTimeline(box, store, day, review) {
  if (!day.stops.length) {
    box.append(
      h("div", { class: "empty timeline-empty" },
        h("p", null, "Nothing planned for this day yet."),
        store.canEdit ? h("button", { type: "button", class: "btn btn-primary", onclick: () => openStopForm(store, { day }) }, "Add the first stop") : null),
    );
    return;
  }
  const findingsByStop = new Map();
  for (const f of (review && review.findings) || []) {
    const target = (f.stopIds || []).find((id) => day.stops.some((s) => s.id === id));
    if (!target) continue;
    if (!findingsByStop.has(target)) findingsByStop.set(target, []);
    findingsByStop.get(target).push(f);
  }
  const legs = new Map(day.legs.map((l) => [`${l.fromStopId}>${l.toStopId}`, l]));
  const list = h("ol", { class: "timeline", "aria-label": `Stops on day ${day.position + 1}` });
  day.stops.forEach((stop, i) => {
    if (i > 0) {
      const prev = day.stops[i - 1];
      list.append(legItem(legs.get(`${prev.id}>${stop.id}`), prev, stop));
    }
    list.append(stopItem(store, day, stop, findingsByStop.get(stop.id) || []));
  });
  box.append(list);
}

function legItem(leg, prev, next) {
  const parts = [];
  if (leg) {
    parts.push(
      h("span", { class: "leg-mode" }, icon(MODE_ICON[leg.mode] || "walk", { size: 16 })),
      h("span", null, `${leg.mode} · ${fmtMinutes(Math.round(leg.durationS / 60))}`),
      leg.distanceM ? h("span", { class: "muted" }, ` · ${fmtDistance(leg.distanceM)}`) : null,
      leg.source === "estimate" ? h("span", { class: "badge badge-estimate", title: "Straight-line estimate, not from Google" }, "estimate") : null,
    );
  } else {
    parts.push(h("span", { class: "muted" }, "No travel time (add a location to both stops)"));
  }
  const arrive = toMin(prev.endTime) + (leg ? Math.round(leg.durationS / 60) : 0);
  const gap = toMin(next.startTime) - arrive;
  if (next.setTime && gap > 0) parts.push(h("span", { class: "leg-free" }, ` · ${fmtMinutes(gap)} free`));
  if (gap < 0) parts.push(h("span", { class: "leg-late" }, ` · ${fmtMinutes(-gap)} short`));
  return h("li", { class: "leg", "data-from": prev.id, "data-to": next.id, "aria-label": leg ? `Travel: ${leg.mode}, ${Math.round(leg.durationS / 60)} minutes${leg.source === "estimate" ? ", estimate" : ""}` : "No travel time" }, parts);
}

function stopItem(store, day, stop, findings) {
  const pinned = Boolean(stop.setTime);
  const meal = stop.meal ? (MEALS.find(([v]) => v === stop.meal) || [null, stop.meal])[1] : null;
  const time = h("div", { class: `stop-time${pinned ? " pinned" : ""}` },
    h("span", { class: "t-start" }, stop.startTime),
    h("span", { class: "t-end muted" }, stop.endTime),
    h("span", { class: "t-kind", title: pinned ? "Set time: nothing automatic moves it" : "Computed from the previous stop and travel" },
      pinned ? [icon("pin", { size: 11 }), " set"] : "auto"));
  const card = h("div", { class: "stop-card" },
    h("div", { class: "stop-top" },
      h("span", { class: `kind-dot kind-${stop.kind}` }, icon(KIND_ICON[stop.kind] || "other")),
      h("div", { class: "stop-title" },
        h("h3", { class: "stop-name" }, stop.name),
        h("p", { class: "stop-sub muted" },
          [KIND_LABELS[stop.kind] || stop.kind, meal, fmtMinutes(stop.durationMin), stop.address].filter(Boolean).join(" · "))),
      store.canEdit ? stopMenu(store, day, stop) : null),
    stop.note ? renderMarkdown(stop.note) : null,
    findings.map((f) => findingBox(store, f)),
    stopFooter(store, stop),
  );
  const item = h("li", { class: "stop", "data-stop-id": stop.id, "data-pinned": pinned ? "true" : "false" }, time, card);
  if (store.openThreads && store.openThreads.has(stop.id)) card.append(renderThread(store, stop));
  return item;
}

function stopMenu(store, day, stop) {
  return h("div", { class: "stop-actions" },
    h("button", { type: "button", class: "icon-btn", "aria-label": `Edit ${stop.name}`, title: "Edit", onclick: () => openStopForm(store, { day, stop }) }, icon("edit", { size: 16 })),
    h("button", { type: "button", class: "icon-btn", "aria-label": `Move ${stop.name}`, title: "Move", onclick: () => openMove(store, day, stop) }, icon("move", { size: 16 })),
    h("button", { type: "button", class: "icon-btn", "aria-label": `Delete ${stop.name}`, title: "Delete", onclick: () => removeStop(store, stop) }, icon("trash", { size: 16 })));
}

function stopFooter(store, stop) {
  const votes = stop.votes || { up: 0, down: 0, mine: 0 };
  const vote = async (value, button) => {
    const next = votes.mine === value ? 0 : value;
    await withBusy(button, async () => {
      try {
        await put(`${store.base}/stops/${encodeURIComponent(stop.id)}/vote`, { value: next });
        await store.refresh();
      } catch (err) {
        showError(err);
      }
    });
  };
  const up = h("button", { type: "button", class: `chip-btn${votes.mine > 0 ? " on" : ""}`, "aria-pressed": String(votes.mine > 0), "aria-label": `Vote for ${stop.name} (${votes.up})` }, icon("up", { size: 14 }), ` ${votes.up}`);
  const down = h("button", { type: "button", class: `chip-btn${votes.mine < 0 ? " on" : ""}`, "aria-pressed": String(votes.mine < 0), "aria-label": `Vote against ${stop.name} (${votes.down})` }, icon("down", { size: 14 }), ` ${votes.down}`);
  up.addEventListener("click", () => vote(1, up));
  down.addEventListener("click", () => vote(-1, down));
  store.openThreads = store.openThreads || new Set();
  const open = store.openThreads.has(stop.id);
  const comments = h("button", {
    type: "button", class: `chip-btn${open ? " on" : ""}`, "aria-expanded": String(open),
    onclick: () => {
      if (open) store.openThreads.delete(stop.id);
      else store.openThreads.add(stop.id);
      store.emit("view");
    },
  }, icon("comment", { size: 14 }), ` ${stop.commentCount || 0} comment${stop.commentCount === 1 ? "" : "s"}`);
  return h("div", { class: "stop-foot" }, up, down, comments);
}

async function removeStop(store, stop) {
  if (!(await confirmDialog(`Remove “${stop.name}”?`, "The stop is removed for every member. Expenses linked to it stay, unlinked.", "Remove"))) return;
  try {
    await store.op("delete_stop", { stopId: stop.id });
  } catch (err) {
    showError(err);
  }
}

function openMove(store, day, stop) {
  const days = store.trip.days;
  const daySelect = select("toDayId", days.map((d) => [d.id, `Day ${d.position + 1}${d.title ? ` · ${d.title}` : ""}`]), day.id);
  const position = h("select", { name: "position" });
  const fillPositions = () => {
    clear(position);
    const target = days.find((d) => d.id === daySelect.value);
    const others = target.stops.filter((s) => s.id !== stop.id);
    position.append(h("option", { value: "0" }, "At the start"));
    others.forEach((s, i) => position.append(h("option", { value: String(i + 1) }, `After ${s.name}`)));
    position.value = target.id === day.id ? String(stop.position) : String(others.length);
  };
  fillPositions();
  daySelect.addEventListener("change", fillPositions);
  openDialog(`Move “${stop.name}”`, (close) => dialogForm({
    close,
    fields: [field("To day", daySelect), field("Position", position)],
    submitLabel: "Move",
    busyLabel: "Moving…",
    onSubmit: () => store.op("move_stop", { stopId: stop.id, toDayId: daySelect.value, position: Number(position.value) }),
  }));
}
