// Take the plan anywhere: the trip's calendar (a private subscription link,
// shown once, and a download) and GPX for phones' map apps (the day shown, or
// the whole trip). Two buttons on the trip rail, each opening a dialog.

import { get, post, del } from "../api.js";
import { h, clear, openDialog, withBusy, errorBox, copyField, timeAgo, fmtDay, toast } from "./ui.js";
import { icon } from "./icons.js";

export function exportButtons(store) {
  const calendar = h("button", { type: "button", class: "btn btn-ghost btn-sm", "data-testid": "open-calendar", "data-needs-server": true },
    icon("calendar", { size: 16 }), "Calendar");
  const gpx = h("button", { type: "button", class: "btn btn-ghost btn-sm", "data-testid": "open-gpx", "data-needs-server": true },
    icon("route", { size: 16 }), "GPX");
  calendar.addEventListener("click", () => openCalendar(store));
  gpx.addEventListener("click", () => openGpx(store));
  return h("div", { class: "rail-exports", role: "group", "aria-label": "Take the plan with you" }, calendar, gpx);
}

function download(href, label, testid) {
  return h("a", { class: "btn", href, download: "", "data-testid": testid }, label);
}

function openCalendar(store) {
  openDialog("Calendar", () => {
    const body = h("div", { class: "dialog-body stack calendar-dialog" });
    const state = h("div", { class: "stack", "aria-live": "polite" });
    body.append(
      h("p", null, "Subscribe in your calendar app and every stop appears at its time, in the trip's time zone. "
        + "It follows the plan as the group changes it."),
      state,
      h("h3", null, "Or download it once"),
      h("p", { class: "muted" }, "A file of the plan as it is now; it does not update."),
      h("div", { class: "row" }, download(`${store.base}/calendar.ics`, "Download calendar (.ics)", "download-ics")));
    load();
    return body;

    async function load() {
      try {
        show(await get(`${store.base}/calendar`));
      } catch (err) {
        clear(state).append(errorBox(err));
      }
    }

    // `fresh`: the link just made, shown only now.
    function show(status, fresh = null) {
      clear(state);
      const make = h("button", { type: "button", class: `btn${status.enabled ? "" : " btn-primary"}`, "data-testid": "calendar-on" },
        status.enabled ? "Make a new link" : "Turn on my calendar link");
      make.addEventListener("click", () => withBusy(make, async () => {
        try {
          const made = await post(`${store.base}/calendar`, {});
          show(made, made);
        } catch (err) {
          state.append(errorBox(err));
        }
      }, "Making the link…"));
      const off = h("button", { type: "button", class: "btn btn-ghost danger-text", "data-testid": "calendar-off" }, "Turn off");
      off.addEventListener("click", () => withBusy(off, async () => {
        try {
          show(await del(`${store.base}/calendar`, {}));
          toast("Calendar link turned off", "success");
        } catch (err) {
          state.append(errorBox(err));
        }
      }));
      if (fresh) {
        const { row, input } = copyField(fresh.url, { label: "Calendar link", copied: "Calendar link copied",
          attrs: { class: "grow", "data-testid": "calendar-url" } });
        const add = h("a", { class: "btn btn-primary", href: fresh.webcalUrl || fresh.url, "data-testid": "add-to-calendar" },
          icon("calendar", { size: 16 }), "Add to calendar");
        state.append(
          h("p", null, h("strong", null, "Your private link. "), "Copy it now: it is shown only this once. "
            + "Anyone with it can see the plan, so keep it to yourself."),
          row, h("div", { class: "row" }, add, off));
        input.focus();
        input.select();
        return;
      }
      if (status.enabled) {
        const used = status.lastUsedAt ? `last read by a calendar ${timeAgo(status.lastUsedAt)}` : "not read by a calendar yet";
        state.append(
          h("p", null, `Your calendar link is on (made ${fmtDay(status.createdAt.slice(0, 10))}, ${used}). `
            + "A new link replaces it; turning it off stops calendars that use it."),
          h("div", { class: "row" }, make, off));
      } else {
        state.append(h("p", { class: "muted" }, "You have no calendar link for this trip."), h("div", { class: "row" }, make));
      }
    }
  });
}

function openGpx(store) {
  openDialog("GPX for map apps", () => {
    const day = store.day(store.dayId);
    const n = day ? store.trip.days.indexOf(day) + 1 : null;
    return h("div", { class: "dialog-body stack" },
      h("p", null, "Open the places in a map app on your phone: each located stop is a point, and each day a route "
        + "along the streets where the map service gave one (a straight line where it did not)."),
      h("div", { class: "row" },
        day ? download(`${store.base}/days/${encodeURIComponent(day.id)}/route.gpx`, `Day ${n}`, "download-day-gpx") : null,
        download(`${store.base}/trip.gpx`, "The whole trip", "download-trip-gpx")),
      h("p", { class: "muted" }, "Stops without a place on the map are left out."));
  });
}
