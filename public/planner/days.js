// The trip rail: trip name and dates, the section switcher, and the list of
// days (select, add, reorder, rename and delete live here and in the day view),
// with the other members' presence avatars beside the day each is looking at.

import { h, fmtDay, showError, withBusy, openDialog, dialogForm, field, confirmDialog } from "./ui.js";
import { patch, reconcile, sig } from "./keyed.js";
import { icon, weatherIconName } from "./icons.js";
import { presenceAvatars, presenceKey } from "./presence.js";
import { exportButtons } from "./exports.js";

export function weatherIcon(w) {
  return icon(weatherIconName(w), { size: 16 });
}

export function dayLabel(day) {
  return `Day ${day.position + 1}${day.title ? ` · ${day.title}` : ""}`;
}

// The rail: built once; the head and section switcher are patched, the days
// reconciled by id. A day is also a drop target for a dragged stop (it goes
// to the end of that day).
export function createRail(rail, store, views) {
  const head = h("div", { class: "rail-head" });
  const nav = h("nav", { class: "rail-views", "aria-label": "Trip sections" });
  const list = h("ol", { class: "day-list", "aria-label": "Days" });
  const add = h("button", { type: "button", class: "btn btn-ghost btn-block add-day", "data-needs-server": true }, icon("plus"), "Add day");
  add.addEventListener("click", () =>
    withBusy(add, async () => {
      try {
        const res = await store.op("add_day", {});
        const days = res.trip.days;
        store.selectDay(days[days.length - 1].id);
      } catch (err) {
        showError(err);
      }
    }),
  );
  rail.append(head, nav, exportButtons(store), h("h2", { class: "rail-section" }, "Days"), list, add);

  function render() {
    const trip = store.trip;
    patch(head, sig(trip.title, trip.destination && trip.destination.name, presenceKey(store, null)), () => [
      h("h1", { class: "rail-title" }, trip.title),
      h("p", { class: "muted rail-sub" }, trip.destination ? trip.destination.name : "No destination yet"),
      presenceAvatars(store, null),
    ]);
    patch(nav, sig(store.view), () => views.map(([view, label, iconName]) =>
      h("button", {
        type: "button", class: `rail-view${store.view === view ? " active" : ""}`, "data-fkey": view,
        "aria-current": store.view === view ? "page" : null, onclick: () => store.setView(view),
      }, icon(iconName), label)));
    const count = trip.days.length;
    reconcile(list, trip.days, {
      key: (day) => day.id,
      signature: (day) => sig(day.position, day.date, day.title, day.stops.length, count, store.canEdit,
        store.dayId === day.id && store.view === "plan", weatherOf(store, day), presenceKey(store, day.id)),
      create: (day) => dayItem(store, day),
    });
    add.hidden = !store.canEdit;
  }
  return { render };
}

function weatherOf(store, day) {
  return (store.weather && store.weather.byDate.get(day.date)) || null;
}

function dayItem(store, day) {
  const trip = store.trip;
  const index = trip.days.indexOf(day);
  const active = store.dayId === day.id && store.view === "plan";
  const w = weatherOf(store, day);
  const select = h(
    "button",
    {
      type: "button", class: "day-btn", "aria-current": active ? "true" : null, "data-day-id": day.id,
      "data-fkey": "select", onclick: () => store.selectDay(day.id),
    },
    h("span", { class: "day-num" }, String(day.position + 1)),
    h("span", { class: "day-text" },
      h("span", { class: "day-date" }, fmtDay(day.date)),
      h("span", { class: "day-title" }, day.title || `${day.stops.length} stop${day.stops.length === 1 ? "" : "s"}`)),
    w ? h("span", { class: "day-weather", title: w.summary || "" }, weatherIcon(w)) : null,
  );
  const item = h("li", { class: `day-item${active ? " active" : ""}`, "data-drop-day": day.id }, select,
    presenceAvatars(store, day.id));
  if (store.canEdit && trip.days.length > 1) {
    const move = async (delta) => {
      const ids = store.trip.days.map((d) => d.id);
      const at = ids.indexOf(day.id);
      ids.splice(at, 1);
      ids.splice(at + delta, 0, day.id);
      try {
        await store.op("reorder_days", { dayIds: ids });
      } catch (err) {
        showError(err);
      }
    };
    item.append(
      h("span", { class: "day-reorder" },
        h("button", { type: "button", class: "icon-btn", "data-fkey": "earlier", "data-needs-server": true, disabled: index === 0, "aria-label": `Move day ${day.position + 1} earlier`, onclick: () => move(-1) }, icon("chevronUp", { size: 14 })),
        h("button", { type: "button", class: "icon-btn", "data-fkey": "later", "data-needs-server": true, disabled: index === trip.days.length - 1, "aria-label": `Move day ${day.position + 1} later`, onclick: () => move(1) }, icon("chevronDown", { size: 14 }))),
    );
  }
  return item;
}

export function openRenameDay(store, day) {
  const title = h("input", { name: "title", maxlength: 120, value: day.title || "", placeholder: "e.g. Alfama and Belém", autofocus: true });
  const start = h("input", { name: "startTime", type: "time", value: day.startTime || "09:00" });
  const note = h("textarea", { name: "note", rows: 3, maxlength: 4000 }, day.note || "");
  openDialog(`Edit day ${day.position + 1}`, (close) => dialogForm({
    close,
    fields: [
      field("Day title", title),
      field("Day starts at", start, "Stops without a set time are scheduled from here."),
      field("Day note", note),
    ],
    submitLabel: "Save",
    busyLabel: "Saving…",
    onSubmit: () => store.op("update_day", {
      dayId: day.id, title: title.value.trim(), note: note.value, startTime: start.value || null,
    }),
  }));
}

export async function deleteDay(store, day) {
  const ok = await confirmDialog(
    `Delete day ${day.position + 1}?`,
    `This removes the day and its ${day.stops.length} stop${day.stops.length === 1 ? "" : "s"} for everyone. Later days move one date earlier.`,
    "Delete day",
  );
  if (!ok) return;
  try {
    await store.op("delete_day", { dayId: day.id });
  } catch (err) {
    showError(err);
  }
}
