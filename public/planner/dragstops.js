// Dragging a stop: onto another stop of the timeline (above or below it, by
// which half it is dropped on) or onto a day in the rail (to the end of that
// day). HTML drag and drop for mice; pointer events for touch and pens (HTML
// drag and drop does not start from a finger everywhere). Each drop is one
// move_stop op. The Move dialog stays the keyboard way. While a finger
// drags, every card shrinks to its name row (a phone's card with findings
// and notes can be taller than the screen), and holding near the top or
// bottom of the screen keeps scrolling.

import { h, showError } from "./ui.js";
import { icon } from "./icons.js";

let dragging = null; // {store, stopId, li, touch, marked}
let listening = false;

export function dragHandle(store, stop, li) {
  const handle = h("span", { class: "drag-handle", draggable: "true", title: `Drag to move ${stop.name}`, "aria-hidden": "true" },
    icon("grip", { size: 16 }));
  handle.addEventListener("dragstart", (e) => {
    if (dragging && dragging.touch) {
      e.preventDefault();
      return;
    }
    begin(store, stop.id, li, false);
    e.dataTransfer.effectAllowed = "move";
    e.dataTransfer.setData("text/plain", stop.name);
    e.dataTransfer.setDragImage(li.querySelector(".stop-card") || li, 24, 24);
  });
  handle.addEventListener("dragend", end);
  handle.addEventListener("pointerdown", (e) => {
    if (e.pointerType === "mouse" || !e.isPrimary) return;
    e.preventDefault();
    begin(store, stop.id, li, true);
    const move = (ev) => {
      mark(targetAt(ev.clientX, ev.clientY));
      if (dragging) dragging.pointer = { x: ev.clientX, y: ev.clientY };
    };
    const done = (ev) => {
      stopListening();
      if (ev.type === "pointerup") drop(targetAt(ev.clientX, ev.clientY));
      else end();
    };
    const stopListening = () => {
      window.removeEventListener("pointermove", move);
      window.removeEventListener("pointerup", done);
      window.removeEventListener("pointercancel", done);
    };
    window.addEventListener("pointermove", move);
    window.addEventListener("pointerup", done);
    window.addEventListener("pointercancel", done);
  });
  listenForDrops();
  return handle;
}

function begin(store, stopId, li, touch) {
  end(); // a drag that never finished
  dragging = { store, stopId, li, touch, marked: null, pointer: null };
  li.classList.add("dragging");
  document.body.classList.add("dragging-stop");
  if (touch) {
    const before = li.getBoundingClientRect().top;
    document.body.classList.add("dragging-compact");
    // The whole day in view when it now fits (every place to drop is in reach);
    // otherwise the dragged stop stays under the finger.
    const day = li.closest(".timeline").getBoundingClientRect();
    const area = visibleArea();
    const fits = day.height <= area.bottom - area.top - 16;
    scroller().scrollBy(0, fits ? day.top - area.top - 8 : li.getBoundingClientRect().top - before);
    requestAnimationFrame(edgeScroll);
  }
}

function end() {
  if (!dragging) return;
  mark(null);
  dragging.li.classList.remove("dragging");
  document.body.classList.remove("dragging-stop", "dragging-compact");
  dragging = null;
}

// The document listens once for mouse drags over targets (only while a stop is dragged).
function listenForDrops() {
  if (listening) return;
  listening = true;
  document.addEventListener("dragover", (e) => {
    if (!dragging || dragging.touch) return;
    const target = targetFrom(e.target, e.clientY);
    mark(target);
    if (target) {
      e.preventDefault();
      e.dataTransfer.dropEffect = "move";
    }
  });
  // Dropped nowhere, or the handle was redrawn mid-drag: the drag still ends.
  document.addEventListener("dragend", end);
  document.addEventListener("drop", (e) => {
    if (!dragging || dragging.touch) return;
    const target = targetFrom(e.target, e.clientY);
    if (!target) return;
    e.preventDefault();
    drop(target);
  });
}

function targetAt(x, y) {
  return targetFrom(document.elementFromPoint(x, y), y);
}

// {el, stopId, after} for a stop, {el, dayId} for a day; null elsewhere.
function targetFrom(node, y) {
  const el = node && node.nodeType === 1 ? node : node && node.parentElement;
  if (!el || !dragging) return null;
  const leg = el.closest(".timeline .leg");
  if (leg) {
    const next = leg.nextElementSibling;
    return next ? { el: next, stopId: next.dataset.stopId, after: false } : null;
  }
  const stopEl = el.closest(".timeline .stop[data-stop-id]");
  if (stopEl) {
    if (stopEl.dataset.stopId === dragging.stopId) return null;
    const box = stopEl.getBoundingClientRect();
    return { el: stopEl, stopId: stopEl.dataset.stopId, after: y > box.top + box.height / 2 };
  }
  const dayEl = el.closest("[data-drop-day]");
  return dayEl ? { el: dayEl, dayId: dayEl.dataset.dropDay } : null;
}

function mark(target) {
  const before = dragging && dragging.marked;
  if (before) before.classList.remove("drop-before", "drop-after", "drop-into");
  if (!dragging) return;
  dragging.marked = target ? target.el : null;
  if (target) target.el.classList.add(target.dayId ? "drop-into" : target.after ? "drop-after" : "drop-before");
}

// Where the stop lands: move_stop's day and 0-based position among the
// day's other stops.
function placeFor(store, stopId, target) {
  const from = store.stop(stopId);
  if (!from) return null;
  if (target.dayId) {
    const day = store.day(target.dayId);
    if (!day) return null;
    return { toDayId: day.id, position: day.stops.filter((s) => s.id !== stopId).length };
  }
  const to = store.stop(target.stopId);
  if (!to) return null;
  const others = to.day.stops.filter((s) => s.id !== stopId);
  const position = others.findIndex((s) => s.id === target.stopId) + (target.after ? 1 : 0);
  if (to.day.id === from.day.id && position === from.day.stops.indexOf(from.stop)) return null; // where it already is
  return { toDayId: to.day.id, position };
}

async function drop(target) {
  if (!dragging) return;
  const { store, stopId } = dragging;
  end();
  const place = target && placeFor(store, stopId, target);
  if (!place) return;
  try {
    await store.op("move_stop", { stopId, ...place });
  } catch (err) {
    showError(err);
  }
}

// What scrolls the timeline: the centre column on wide screens, the page on phones.
function scroller() {
  const main = document.querySelector(".planner-main");
  return main && main.scrollHeight > main.clientHeight ? main : window;
}

// The part of the screen the timeline shows in: below the sticky bars (the
// top bar, and the day strip on phones), above the bottom tabs.
function visibleArea() {
  const rect = (selector) => { const el = document.querySelector(selector); return el ? el.getBoundingClientRect() : null; };
  const bar = rect(".topbar");
  const strip = rect(".rail");
  const tabs = rect(".mobile-tabs");
  const barBottom = bar ? bar.bottom : 0;
  const top = strip && strip.height < window.innerHeight / 2 && strip.top <= barBottom + 1 ? strip.bottom : barBottom;
  return { top, bottom: tabs && tabs.height ? tabs.top : window.innerHeight };
}

// A finger held near the top or bottom of that part scrolls the page along,
// every frame until it moves away.
function edgeScroll() {
  if (!dragging || !dragging.touch) return;
  const p = dragging.pointer;
  if (p) {
    const { top, bottom } = visibleArea();
    const edge = 56;
    const step = p.y < top + edge ? -12 : p.y > bottom - edge ? 12 : 0;
    if (step) {
      scroller().scrollBy(0, step);
      mark(targetAt(p.x, p.y));
    }
  }
  requestAnimationFrame(edgeScroll);
}
