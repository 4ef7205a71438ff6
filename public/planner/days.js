// The trip rail: trip name and dates, the section switcher, and the list of
// days (select, add, reorder, rename and delete live here and in the day view).

import { h, clear, fmtDay, showError, withBusy, openDialog, dialogForm, field, confirmDialog } from "./ui.js";
import { icon, weatherIconName } from "./icons.js";

export function weatherIcon(w) {
  return icon(weatherIconName(w), { size: 16 });
}

export function dayLabel(day) {
  return `Day ${day.position + 1}${day.title ? ` · ${day.title}` : ""}`;
}

export function renderRail(rail, store, views) {
  const trip = store.trip;
  clear(rail);
  rail.append(
    h("div", { class: "rail-head" },
      h("h1", { class: "rail-title" }, trip.title),
      h("p", { class: "muted rail-sub" }, trip.destination ? trip.destination.name : "No destination yet")),
    h("nav", { class: "rail-views", "aria-label": "Trip sections" },
      views.map(([view, label, iconName]) =>
        h("button", {
          type: "button", class: `rail-view${store.view === view ? " active" : ""}`,
          "aria-current": store.view === view ? "page" : null, onclick: () => store.setView(view),
        }, icon(iconName), label))),
  );

  const list = h("ol", { class: "day-list", "aria-label": "Days" });
  trip.days.forEach((day, index) => list.append(dayItem(store, day, index)));
  rail.append(h("h2", { class: "rail-section" }, "Days"), list);
  if (store.canEdit) {
    const add = h("button", { type: "button", class: "btn btn-ghost btn-block add-day" }, icon("plus"), "Add day");
    add.addEventListener("click", () =>
      withBusy(add, async () => {
        try {
          const res = await store.op("add_day", {});
          const days = res.trip.days;
          store.view = "plan";
          store.dayId = days[days.length - 1].id;
          store.emit("day");
        } catch (err) {
          showError(err);
        }
      }),
    );
    rail.append(add);
  }
}

function dayItem(store, day, index) {
  const trip = store.trip;
  const active = store.dayId === day.id && store.view === "plan";
  const w = store.weather && store.weather.byDate.get(day.date);
  const select = h(
    "button",
    {
      type: "button", class: "day-btn", "aria-current": active ? "true" : null, "data-day-id": day.id,
      onclick: () => { store.view = "plan"; store.dayId = day.id; store.emit("day"); },
    },
    h("span", { class: "day-num" }, String(day.position + 1)),
    h("span", { class: "day-text" },
      h("span", { class: "day-date" }, fmtDay(day.date)),
      h("span", { class: "day-title" }, day.title || `${day.stops.length} stop${day.stops.length === 1 ? "" : "s"}`)),
    w ? h("span", { class: "day-weather", title: w.summary || "" }, weatherIcon(w)) : null,
  );
  const item = h("li", { class: `day-item${active ? " active" : ""}` }, select);
  if (store.canEdit && trip.days.length > 1) {
    const move = async (delta) => {
      const ids = trip.days.map((d) => d.id);
      const [moved] = ids.splice(index, 1);
      ids.splice(index + delta, 0, moved);
      try {
        await store.op("reorder_days", { dayIds: ids });
      } catch (err) {
        showError(err);
      }
    };
    item.append(
      h("span", { class: "day-reorder" },
        h("button", { type: "button", class: "icon-btn", disabled: index === 0, "aria-label": `Move day ${day.position + 1} earlier`, onclick: () => move(-1) }, icon("chevronUp", { size: 14 })),
        h("button", { type: "button", class: "icon-btn", disabled: index === trip.days.length - 1, "aria-label": `Move day ${day.position + 1} later`, onclick: () => move(1) }, icon("chevronDown", { size: 14 }))),
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
