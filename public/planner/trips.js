// Your trips: the list, creating a trip, and accepting an invite link.

import { get, post, ApiError } from "../api.js";
import { readThrough, kept, keepOnlyTrips } from "../offline/kept.js";
import { isOnline, onConnection } from "../offline/connection.js";
import { offlineLine, createGoneTripRefusals } from "../offline/status.js";
import { h, field, select, errorBox, clear, fmtDate, addDays, daysBetween, openDialog, dialogForm, toast, withBusy } from "./ui.js";
import { icon } from "./icons.js";

// Well-known destinations so a new trip gets coordinates, a time zone and a
// currency without a geocoding call. Anything else: type coordinates, or the
// trip's place search (Google or OpenStreetMap) fills them in after creation.
const CITIES = [
  ["Amsterdam", 52.3676, 4.9041, "Europe/Amsterdam", "EUR"], ["Athens", 37.9838, 23.7275, "Europe/Athens", "EUR"],
  ["Bangkok", 13.7563, 100.5018, "Asia/Bangkok", "THB"], ["Barcelona", 41.3874, 2.1686, "Europe/Madrid", "EUR"],
  ["Berlin", 52.52, 13.405, "Europe/Berlin", "EUR"], ["Boston", 42.3601, -71.0589, "America/New_York", "USD"],
  ["Buenos Aires", -34.6037, -58.3816, "America/Argentina/Buenos_Aires", "ARS"],
  ["Cape Town", -33.9249, 18.4241, "Africa/Johannesburg", "ZAR"], ["Chicago", 41.8781, -87.6298, "America/Chicago", "USD"],
  ["Copenhagen", 55.6761, 12.5683, "Europe/Copenhagen", "DKK"], ["Dublin", 53.3498, -6.2603, "Europe/Dublin", "EUR"],
  ["Edinburgh", 55.9533, -3.1883, "Europe/London", "GBP"], ["Florence", 43.7696, 11.2558, "Europe/Rome", "EUR"],
  ["Hong Kong", 22.3193, 114.1694, "Asia/Hong_Kong", "HKD"], ["Istanbul", 41.0082, 28.9784, "Europe/Istanbul", "TRY"],
  ["Kyoto", 35.0116, 135.7681, "Asia/Tokyo", "JPY"], ["Lisbon", 38.7223, -9.1393, "Europe/Lisbon", "EUR"],
  ["London", 51.5072, -0.1276, "Europe/London", "GBP"], ["Los Angeles", 34.0522, -118.2437, "America/Los_Angeles", "USD"],
  ["Madrid", 40.4168, -3.7038, "Europe/Madrid", "EUR"], ["Mexico City", 19.4326, -99.1332, "America/Mexico_City", "MXN"],
  ["Montreal", 45.5019, -73.5674, "America/Toronto", "CAD"], ["Munich", 48.1351, 11.582, "Europe/Berlin", "EUR"],
  ["New York", 40.7128, -74.006, "America/New_York", "USD"], ["Oslo", 59.9139, 10.7522, "Europe/Oslo", "NOK"],
  ["Paris", 48.8566, 2.3522, "Europe/Paris", "EUR"], ["Porto", 41.1579, -8.6291, "Europe/Lisbon", "EUR"],
  ["Prague", 50.0755, 14.4378, "Europe/Prague", "CZK"], ["Reykjavik", 64.1466, -21.9426, "Atlantic/Reykjavik", "ISK"],
  ["Rome", 41.9028, 12.4964, "Europe/Rome", "EUR"], ["San Francisco", 37.7749, -122.4194, "America/Los_Angeles", "USD"],
  ["Seoul", 37.5665, 126.978, "Asia/Seoul", "KRW"], ["Singapore", 1.3521, 103.8198, "Asia/Singapore", "SGD"],
  ["Stockholm", 59.3293, 18.0686, "Europe/Stockholm", "SEK"], ["Sydney", -33.8688, 151.2093, "Australia/Sydney", "AUD"],
  ["Taipei", 25.033, 121.5654, "Asia/Taipei", "TWD"], ["Tokyo", 35.6762, 139.6503, "Asia/Tokyo", "JPY"],
  ["Toronto", 43.6532, -79.3832, "America/Toronto", "CAD"], ["Vancouver", 49.2827, -123.1207, "America/Vancouver", "CAD"],
  ["Vienna", 48.2082, 16.3738, "Europe/Vienna", "EUR"], ["Zurich", 47.3769, 8.5417, "Europe/Zurich", "CHF"],
];
export const CURRENCIES = ["EUR", "USD", "GBP", "JPY", "CHF", "CAD", "AUD", "SEK", "NOK", "DKK", "CZK", "PLN", "HUF",
  "TRY", "THB", "SGD", "HKD", "KRW", "TWD", "CNY", "INR", "MXN", "BRL", "ARS", "ZAR", "NZD", "ISK"];

// A time zone the browser knows by this name; the server checks it again. A
// name it does not know is refused here in words, not as the server's
// "timezone: Value error, …".
export const ZONE_HELP = "Give the time zone as a place name such as Europe/Lisbon or America/New_York.";
export function knownZone(name) {
  try {
    new Intl.DateTimeFormat("en", { timeZone: name });
    return Boolean(name);
  } catch {
    return false;
  }
}

function browserZone() {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  } catch {
    return "UTC";
  }
}

export function mountTrips(main, app) {
  const list = h("div", { class: "trip-grid", "aria-live": "polite" });
  const status = h("div", { class: "trips-status" });
  const refusals = createGoneTripRefusals();
  const page = h(
    "div",
    { class: "page" },
    h(
      "div",
      { class: "page-head" },
      h("div", null, h("h1", null, "Your trips"), h("p", { class: "muted" }, "Plan together: every member sees the same timeline.")),
      h("div", { class: "row" },
        h("button", { type: "button", class: "btn", "data-needs-server": true, onclick: () => openJoin(app) }, "Join with a link"),
        h("button", { type: "button", class: "btn btn-primary", "data-needs-server": true, onclick: () => openCreate(app) }, icon("plus"), "New trip")),
    ),
    status,
    refusals.el,
    list,
  );
  main.append(page);
  load();
  // Back online: the list as it is now.
  // Offline or back: the list again (offline, this device's copy, and which trips open without a connection).
  const stopWatching = onConnection(() => load());

  async function load() {
    clear(list).append(h("p", { class: "muted" }, "Loading your trips…"));
    try {
      const { data, savedAt, fromDevice } = await readThrough("/api/trips");
      const { trips } = data;
      clear(status);
      if (fromDevice || !isOnline()) {
        status.append(offlineLine("your trips", savedAt, "Trips you opened on this device open without a connection."));
      }
      refusals.setTrips(trips.map((t) => t.id));
      if (!fromDevice) keepOnlyTrips(trips.map((t) => t.id)); // removed meanwhile: no longer opens offline
      clear(list);
      if (!trips.length) {
        list.append(
          h("div", { class: "empty card" },
            h("h2", null, "No trips yet"),
            h("p", { class: "muted" }, "Create your first trip, or open an invite link a friend sent you."),
            h("button", { type: "button", class: "btn btn-primary", "data-needs-server": true, onclick: () => openCreate(app) }, "Create a trip")),
        );
      }
      for (const t of trips) {
        // Offline, a trip this device never opened cannot open: it says so instead of being a link.
        const here = fromDevice || !isOnline() ? await kept(`/api/trips/${encodeURIComponent(t.id)}`) : true;
        list.append(tripCard(t, Boolean(here)));
      }
    } catch (err) {
      clear(list).append(errorBox(err));
    }
  }
  return {
    destroy() {
      stopWatching();
      refusals.destroy();
    },
  };
}

function tripCard(t, available = true) {
  const end = t.days > 1 ? ` – ${fmtDate(addDays(t.startDate, t.days - 1))}` : "";
  return h(
    available ? "a" : "div",
    { class: `card trip-card${available ? "" : " not-kept"}`, href: available ? `#/trips/${encodeURIComponent(t.id)}` : null,
      "data-trip-id": t.id },
    h("div", { class: "trip-card-band", "aria-hidden": "true" }, (t.destination || t.title || "?").slice(0, 1).toUpperCase()),
    h("div", { class: "trip-card-body" },
      h("h2", null, t.title),
      h("p", { class: "muted" }, t.destination || "No destination yet"),
      h("p", { class: "trip-meta" }, `${fmtDate(t.startDate)}${end}`),
      h("p", { class: "trip-meta" },
        h("span", { class: "pill" }, `${t.days} day${t.days === 1 ? "" : "s"}`),
        h("span", { class: "pill" }, `${t.members} member${t.members === 1 ? "" : "s"}`),
        h("span", { class: `pill role-${t.role}` }, t.role)),
      available ? null : h("p", { class: "trip-meta muted" }, "Not kept on this device: open it once while online.")),
  );
}

function openCreate(app) {
  const today = new Date().toISOString().slice(0, 10);
  const title = h("input", { name: "title", required: true, maxlength: 120, placeholder: "Lisbon with friends", autofocus: true });
  const start = h("input", { name: "startDate", type: "date", required: true, value: addDays(today, 14) });
  const end = h("input", { name: "endDate", type: "date", required: true, value: addDays(today, 16) });
  const dest = h("input", { name: "destination", list: "city-list", placeholder: "City", maxlength: 120, autocomplete: "off" });
  const datalist = h("datalist", { id: "city-list" }, CITIES.map((c) => h("option", { value: c[0] })));
  const coords = h("input", { name: "coords", placeholder: "38.7223, -9.1393", inputmode: "decimal" });
  const tz = h("input", { name: "timezone", value: browserZone(), maxlength: 64 });
  const currency = select("currency", CURRENCIES.map((c) => [c, c]), "EUR");

  dest.addEventListener("change", () => {
    const city = CITIES.find((c) => c[0].toLowerCase() === dest.value.trim().toLowerCase());
    if (!city) return;
    coords.value = `${city[1]}, ${city[2]}`;
    tz.value = city[3];
    currency.value = city[4];
  });
  start.addEventListener("change", () => {
    if (end.value < start.value) end.value = start.value;
  });

  openDialog("New trip", (close) => dialogForm({
    close,
    fields: [
      field("Trip name", title),
      h("div", { class: "grid-2" }, field("First day", start), field("Last day", end)),
      field("Destination", dest, "Pick a city from the list to fill in the rest, or type any place."),
      datalist,
      h("details", { class: "more" }, h("summary", null, "Coordinates, time zone and currency"),
        h("div", { class: "stack" },
          field("Coordinates (latitude, longitude)", coords, "Used for the map, weather and nearby places."),
          h("div", { class: "grid-2" }, field("Time zone", tz), field("Currency", currency)))),
    ],
    submitLabel: "Create trip",
    busyLabel: "Creating…",
    check: buildTrip,
    onSubmit: (body) => post("/api/trips", body),
    after: async (trip, body) => {
      await fillDestination(trip, dest.value.trim(), body);
      app.navigate(`#/trips/${encodeURIComponent(trip.id)}`);
    },
  }));

  function buildTrip() {
    if (!title.value.trim()) throw new ApiError(422, "invalid", "Give the trip a name.");
    if (!start.value || !end.value) throw new ApiError(422, "invalid", "Choose the first and last day.");
    const days = daysBetween(start.value, end.value) + 1;
    const most = Number(app.session.config.limits && app.session.config.limits.tripDays) || 30;
    if (days < 1 || days > most) throw new ApiError(422, "invalid", `A trip lasts from 1 to ${most} days: check the dates.`);
    if (tz.value.trim() && !knownZone(tz.value.trim())) throw new ApiError(422, "invalid", ZONE_HELP);
    const body = { title: title.value.trim(), startDate: start.value, days, timezone: tz.value.trim() || "UTC", currency: currency.value };
    const match = coords.value.match(/^\s*(-?\d+(?:\.\d+)?)\s*[, ]\s*(-?\d+(?:\.\d+)?)\s*$/);
    if (dest.value.trim() && match) {
      body.destination = { name: dest.value.trim(), lat: Number(match[1]), lng: Number(match[2]) };
    } else if (coords.value.trim() && !match) {
      throw new ApiError(422, "invalid", "Coordinates look like “38.72, -9.14” (latitude, longitude).");
    }
    return body;
  }

  // A destination typed without coordinates: ask the trip's place search
  // (Google or OpenStreetMap) and set the first match; quietly skipped when
  // nothing is found.
  async function fillDestination(trip, name, body) {
    if (!name || body.destination) return;
    try {
      const found = await get(`/api/trips/${encodeURIComponent(trip.id)}/places/search?q=${encodeURIComponent(name)}`);
      const place = (found.places || found.results || found || [])[0];
      if (place && place.lat != null && place.lng != null) {
        await post(`/api/trips/${encodeURIComponent(trip.id)}/ops/update_trip`, {
          destination: { name, lat: place.lat, lng: place.lng },
        });
      }
    } catch {
      // The trip exists; the destination can be set later from its settings.
    }
  }
}

function openJoin(app) {
  const link = h("input", { name: "invite", required: true, placeholder: "Paste the invite link", autofocus: true });
  openDialog("Join a trip", (close) => {
    const form = h(
      "form",
      { class: "stack dialog-body" },
      field("Invite link or code", link, "The link a trip owner shared with you."),
      h("div", { class: "actions" }, h("button", { type: "button", class: "btn", onclick: close }, "Cancel"),
        h("button", { type: "submit", class: "btn btn-primary" }, "Join")),
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const token = tokenFrom(link.value);
      if (!token) return;
      close();
      app.navigate(`#/invite/${encodeURIComponent(token)}`);
    });
    return form;
  });
}

export function tokenFrom(text) {
  const value = String(text || "").trim();
  const m = value.match(/invite\/([^/?#\s]+)/);
  return m ? decodeURIComponent(m[1]) : value.replace(/^.*[#/]/, "");
}

// The invite page: who invited you to which trip, as what; joining is a
// button, and says so when it worked.
const ROLE_WORDS = { editor: "an editor (you can change the plan and expenses)", viewer: "a viewer (you can see the plan, comment and vote)" };

export function acceptInvite(main, app, token) {
  const box = h("div", { class: "card narrow invite-card" }, h("p", { role: "status" }, "Opening the invite…"));
  main.append(h("div", { class: "page" }, box));
  const url = `/api/invites/${encodeURIComponent(token)}`;
  const failed = (err) => {
    clear(box).append(
      h("h1", null, "This invite did not work"),
      errorBox(err),
      h("p", null, h("a", { href: "#/" }, "Back to your trips")),
    );
  };
  get(url).then((invite) => {
    const join = h("button", { type: "button", class: "btn btn-primary", autofocus: true, "data-needs-server": true }, "Join the trip");
    const dates = invite.startDate ? fmtDate(invite.startDate) : null;
    clear(box).append(
      h("p", { class: "eyebrow" }, "Invitation"),
      h("h1", null, `${invite.inviterName || "A member"} invited you to “${invite.tripTitle}”`),
      h("p", { class: "muted" }, [invite.destination, dates ? `from ${dates}` : null].filter(Boolean).join(" · ")),
      h("p", null, `You would join as ${ROLE_WORDS[invite.role] || invite.role}.`),
      h("div", { class: "actions start" }, join, h("a", { class: "btn btn-ghost", href: "#/" }, "Not now")),
    );
    join.focus();
    join.addEventListener("click", () => withBusy(join, async () => {
      try {
        const res = await post(`${url}/accept`, {});
        await app.navigate(app.returnToTrip(res.tripId) || `#/trips/${encodeURIComponent(res.tripId)}`, { replace: true });
        toast(`You joined “${invite.tripTitle}”. Welcome!`, "success", 6000);
      } catch (err) {
        failed(err);
      }
    }, "Joining…"));
  }).catch(failed);
  return {};
}
