// A day's timeline: stops with set (pinned) or computed times, the legs
// between them, votes, comments and the review's findings inline. The list is
// reconciled by id: a stop whose data did not change is left alone, a changed
// one is patched in place and its comment thread (with whatever is being
// typed in it) stays where it is.

import { h, fmtMinutes, clockEl, fmtDistance, renderMarkdown, showError, confirmDialog, openDialog, dialogForm, field, select, withBusy, clear,
  KIND_LABELS, MEALS } from "./ui.js";
import { patch, reconcile, sig } from "./keyed.js";
import { openStopForm } from "./stopform.js";
import { createThread } from "./stopdetail.js";
import { findingBox } from "./findings.js";
import { dragHandle } from "./dragstops.js";
import { icon, KIND_ICON, MODE_ICON } from "./icons.js";

const MODE_WORDS = { walk: "Walk", transit: "Public transport", drive: "Drive", bicycle: "Cycle" };

export function createTimeline(store) {
  const list = h("ol", { class: "timeline" });
  const empty = h("div", { class: "empty timeline-empty", "data-drop-end": "true", hidden: true });
  const el = h("div", { class: "timeline-wrap" }, list, empty);

  function render(day, review) {
    list.setAttribute("aria-label", `Stops on day ${day.position + 1}`);
    list.dataset.dayId = day.id;
    empty.dataset.dropDay = day.id;
    empty.hidden = day.stops.length > 0;
    patch(empty, sig(day.stops.length, store.canEdit, day.id), () => [
      h("p", null, "Nothing planned for this day yet."),
      store.canEdit ? h("button", { type: "button", class: "btn btn-primary", "data-fkey": "first", onclick: () => openStopForm(store, { day }) }, "Add the first stop") : null,
    ]);
    const findings = findingsByStop(day, review);
    const legs = new Map(day.legs.map((l) => [`${l.fromStopId}>${l.toStopId}`, l]));
    const items = [];
    day.stops.forEach((stop, i) => {
      if (i > 0) {
        const prev = day.stops[i - 1];
        items.push({ leg: legs.get(`${prev.id}>${stop.id}`) || null, prev, next: stop });
      }
      items.push({ stop, index: i, findings: findings.get(stop.id) || [] });
    });
    reconcile(list, items, {
      key: (item) => (item.stop ? `s:${item.stop.id}` : `l:${item.prev.id}>${item.next.id}`),
      signature: (item) => (item.stop
        ? sig(item.stop, item.index, item.findings, store.canEdit, store.isThreadOpen(item.stop.id))
        : sig(item.leg, item.prev.endMinutes, item.next.startMinutes, item.next.setTime, item.prev.pending, item.next.pending)),
      create: (item) => (item.stop ? stopItem(store, day, item) : legItem(item)),
      update: (el, item) => (item.stop ? updateStop(store, day, el, item) : updateLeg(el, item)),
    });
  }
  return { el, render };
}

function findingsByStop(day, review) {
  const out = new Map();
  for (const f of (review && review.findings) || []) {
    const target = (f.stopIds || []).find((id) => day.stops.some((s) => s.id === id));
    if (!target) continue;
    if (!out.has(target)) out.set(target, []);
    out.get(target).push(f);
  }
  return out;
}

function legItem(item) {
  const el = h("li", { class: "leg" });
  updateLeg(el, item);
  return el;
}

function updateLeg(el, { leg, prev, next }) {
  const parts = [];
  if (leg) {
    const minutes = Math.round(leg.durationS / 60);
    parts.push(
      h("span", { class: "leg-mode" }, icon(MODE_ICON[leg.mode] || "walk", { size: 16 })),
      h("span", null, `${MODE_WORDS[leg.mode] || leg.mode} · ${fmtMinutes(minutes)}`),
      leg.distanceM ? h("span", { class: "muted" }, ` · ${fmtDistance(leg.distanceM)}`) : null,
      leg.source === "estimate" ? h("span", { class: "badge badge-estimate", title: "Straight-line estimate, not a real route" }, "estimate") : null,
    );
  }
  const noLeg = leg ? null : prev.pending || next.pending
    ? "Travel time follows once your changes are sent" : "No travel time (add a location to both stops)";
  if (noLeg) parts.push(h("span", { class: "muted" }, `${noLeg}.`));
  // In minutes from the day's midnight (past 1440 after it), so a stop at
  // 00:05 (+1) comes after one ending at 23:50, not a day before it.
  const arrive = prev.endMinutes + (leg ? Math.round(leg.durationS / 60) : 0);
  const gap = next.startMinutes - arrive;
  const said = [leg
    ? `Travel: ${MODE_WORDS[leg.mode] || leg.mode}, ${fmtMinutes(Math.round(leg.durationS / 60))}${leg.source === "estimate" ? ", estimate" : ""}`
    : noLeg];
  // After a sentence (no leg) the gap goes on as a new one, so a line that
  // wraps there does not start with a stray "·".
  const sep = leg ? " · " : " ";
  if (next.setTime && gap > 0) {
    parts.push(h("span", { class: "leg-free" }, `${sep}${fmtMinutes(gap)} free`));
    said.push(`${fmtMinutes(gap)} free`);
  }
  if (gap < 0) {
    parts.push(h("span", { class: "leg-late" }, `${sep}${fmtMinutes(-gap)} short`));
    said.push(`${fmtMinutes(-gap)} short`);
  }
  const label = said.join(", ");
  el.dataset.from = prev.id;
  el.dataset.to = next.id;
  el.setAttribute("aria-label", label);
  el.replaceChildren(...parts.filter(Boolean));
}

// A stop: the time column and the card's main part are patched when the stop
// changes; the thread below them is kept (it holds the comment being typed).
function stopItem(store, day, item) {
  const time = h("div", { class: "stop-time" });
  const main = h("div", { class: "stop-main" });
  const threadSlot = h("div", { class: "thread-slot" });
  const card = h("div", { class: "stop-card" }, main, threadSlot);
  const el = h("li", { class: "stop", "data-stop-id": item.stop.id }, time, card);
  el._parts = { time, main, threadSlot, thread: null };
  updateStop(store, day, el, item);
  return el;
}

function updateStop(store, day, el, { stop, index, findings }) {
  const { time, main, threadSlot } = el._parts;
  const pinned = Boolean(stop.setTime);
  el.dataset.pinned = pinned ? "true" : "false";
  patch(time, sig(stop.startMinutes, stop.endMinutes, pinned, index), () => [
    h("span", { class: "stop-num", title: "Its number on the map" }, String(index + 1)),
    clockEl(stop.startMinutes, "t-start"),
    clockEl(stop.endMinutes, "t-end muted"),
    h("span", { class: `t-kind${pinned ? " pinned" : ""}`, title: pinned ? "Set time: nothing automatic moves it" : "Computed from the previous stop and travel" },
      pinned ? [icon("pin", { size: 11 }), " set"] : "auto"),
  ]);
  const meal = stop.meal ? (MEALS.find(([v]) => v === stop.meal) || [null, stop.meal])[1] : null;
  patch(main, sig(stop, findings, store.canEdit, store.isThreadOpen(stop.id)), () => [
    h("div", { class: "stop-top" },
      h("span", { class: `kind-dot kind-${stop.kind}` }, icon(KIND_ICON[stop.kind] || "other")),
      h("div", { class: "stop-title" },
        h("h3", { class: "stop-name" }, stop.name),
        stop.pending ? h("p", { class: "pending-badge" }, "Waiting to send") : null,
        h("p", { class: "stop-sub muted" },
          [KIND_LABELS[stop.kind] || stop.kind, meal, fmtMinutes(stop.durationMin), stop.address].filter(Boolean).join(" · "))),
      store.canEdit && !isNew(stop) ? stopMenu(store, stop, el) : null),
    stop.note ? renderMarkdown(stop.note, store.tripId) : null,
    findings.map((f) => findingBox(store, f)),
    isNew(stop) ? null : stopFooter(store, stop),
  ]);
  const parts = el._parts;
  if (store.isThreadOpen(stop.id)) {
    if (!parts.thread) {
      parts.thread = createThread(store, stop);
      threadSlot.append(parts.thread.el);
    } else {
      parts.thread.update(stop);
    }
  } else if (parts.thread) {
    parts.thread.el.remove();
    parts.thread = null;
  }
}

// A stop added on this device and not sent yet: nothing can be done to it
// until the server has it (it has no id there).
function isNew(stop) {
  return stop.id.startsWith("pending:");
}

function stopMenu(store, stop, el) {
  // The day is looked up when clicked: the stop may have moved since this was drawn.
  const dayOf = () => (store.stop(stop.id) || {}).day;
  return h("div", { class: "stop-actions" },
    dragHandle(store, stop, el),
    h("button", { type: "button", class: "icon-btn", "data-fkey": "edit", "aria-label": `Edit ${stop.name}`, title: "Edit", onclick: () => openStopForm(store, { day: dayOf(), stop }) }, icon("edit", { size: 16 })),
    h("button", { type: "button", class: "icon-btn", "data-fkey": "move", "aria-label": `Move ${stop.name}`, title: "Move to another place or day", onclick: () => openMove(store, dayOf(), stop) }, icon("move", { size: 16 })),
    h("button", { type: "button", class: "icon-btn", "data-fkey": "delete", "aria-label": `Delete ${stop.name}`, title: "Delete", "data-needs-server": true, onclick: () => removeStop(store, stop) }, icon("trash", { size: 16 })));
}

function stopFooter(store, stop) {
  const votes = stop.votes || { up: 0, down: 0, mine: 0 };
  const vote = async (value, button) => {
    const next = votes.mine === value ? 0 : value;
    await withBusy(button, async () => {
      try {
        await store.vote(stop.id, next); // the answer is applied by the store (kept when offline)
      } catch (err) {
        showError(err);
      }
    });
  };
  // Named by their own words, the count included: "Vote for Belém, 2 so far".
  const voteWords = (what, count) => [h("span", { class: "visually-hidden" }, `${what} ${stop.name}, `), String(count), h("span", { class: "visually-hidden" }, " so far")];
  const up = h("button", { type: "button", class: `chip-btn${votes.mine > 0 ? " on" : ""}`, "data-fkey": "up", "aria-pressed": String(votes.mine > 0) }, icon("up", { size: 14 }), voteWords("Vote for", votes.up));
  const down = h("button", { type: "button", class: `chip-btn${votes.mine < 0 ? " on" : ""}`, "data-fkey": "down", "aria-pressed": String(votes.mine < 0) }, icon("down", { size: 14 }), voteWords("Vote against", votes.down));
  up.addEventListener("click", () => vote(1, up));
  down.addEventListener("click", () => vote(-1, down));
  const open = store.isThreadOpen(stop.id);
  const count = stop.commentCount || 0;
  const comments = h("button", {
    type: "button", class: `chip-btn${open ? " on" : ""}`, "aria-expanded": String(open), "data-fkey": "comments",
    onclick: () => store.toggleThread(stop.id),
  }, icon("comment", { size: 14 }), ` ${count} comment${count === 1 ? "" : "s"}`);
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

// The keyboard way to move a stop (dragging is the pointer way).
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
