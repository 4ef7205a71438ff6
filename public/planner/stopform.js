// Add or edit a stop: place search (Google or OpenStreetMap, credited; manual
// entry always works), set time vs computed time, duration, meal, note with uploads.

import { get } from "../api.js";
import { h, clear, field, select, errorBox, withBusy, openDialog, dialogForm, attachUpload, osmCredit, KIND_LABELS, MEALS, MEAL_MINUTES,
  toast } from "./ui.js";
import { icon } from "./icons.js";
import { noteAttachments } from "./attachments.js";

const KIND_OPTIONS = Object.entries(KIND_LABELS);

function kindFromTypes(types = []) {
  const t = new Set(types);
  if (["restaurant", "cafe", "bar", "bakery", "meal_takeaway", "food"].some((x) => t.has(x) || [...t].some((y) => y.endsWith("_restaurant")))) return "food";
  if (t.has("lodging") || t.has("hotel")) return "stay";
  if (["train_station", "subway_station", "bus_station", "airport", "transit_station"].some((x) => t.has(x))) return "transit";
  if (["museum", "tourist_attraction", "church", "park", "art_gallery", "historical_landmark"].some((x) => t.has(x))) return "sight";
  return null;
}

export function openStopForm(store, { day, stop = null }) {
  const editing = Boolean(stop);
  const s = stop || {};
  const name = h("input", { name: "name", required: true, maxlength: 120, value: s.name || "", autocomplete: "off" });
  const kind = select("kind", KIND_OPTIONS, s.kind || "sight");
  const meal = select("meal", [["", "Not a meal"], ...MEALS], s.meal || "");
  // A set time is on the day plan's clock: past midnight it reads 24:45 for
  // 00:45 the next morning (as timetables write it). The picker shows the
  // clock time and a "(+1)" choice.
  const [shownTime, nextMorning] = fromServiceTime(s.setTime);
  const setTime = h("input", { name: "setTime", type: "time", value: shownTime });
  const plusOne = h("input", { type: "checkbox", name: "setTimeNextDay", checked: nextMorning });
  const timeField = field("Set time (optional)", setTime, "A fixed appointment. Leave empty and the time is computed from the previous stop and travel. Tick (+1) for a time after midnight, like a club night.");
  setTime.after(h("label", { class: "next-day-choice", title: "After midnight: the next morning of this day's plan" }, plusOne, " (+1) after midnight"));
  const duration = h("input", { name: "durationMin", type: "number", min: 5, max: 1440, step: 5, value: s.durationMin || 60, required: true });
  const address = h("input", { name: "address", maxlength: 300, value: s.address || "" });
  const lat = h("input", { name: "lat", inputmode: "decimal", value: s.lat ?? "", placeholder: "38.7139" });
  const lng = h("input", { name: "lng", inputmode: "decimal", value: s.lng ?? "", placeholder: "-9.1334" });
  const note = h("textarea", { name: "note", rows: 4, maxlength: 4000 }, s.note || "");
  const files = noteAttachments(store, note, { saveLabel: editing ? "Save changes" : "Add stop" });
  const attach = h("button", { type: "button", class: "btn btn-sm", "data-needs-server": true }, icon("clip", { size: 15 }), "Attach a file");
  const fileInput = attachUpload(attach, {
    url: `${store.base}/media`,
    busyLabel: "Uploading…",
    onUploaded(media, file) {
      const link = `${media.mediaType && media.mediaType.startsWith("image/") ? "!" : ""}[${media.filename || file.name}](${media.url})`;
      note.value = `${note.value}${note.value && !note.value.endsWith("\n") ? "\n" : ""}${link}\n`;
      files.attached(media);
      toast(`Attached ${media.filename || file.name}`, "success");
    },
  });
  const positions = (stops) => [["", "At the end of the day"], ...stops.map((x) => [x.id, `After ${x.name}`])];
  const after = select("afterStopId", positions(day.stops), "");
  const mealField = field("Meal", meal);
  let placeId = s.placeId || null;

  const syncMeal = () => { mealField.hidden = kind.value !== "food"; };
  kind.addEventListener("change", syncMeal);
  syncMeal();
  // A meal brings its usual length (dinner 75 min, lunch 60, breakfast 45…)
  // unless someone chose a length themselves.
  const usualLength = (m) => MEAL_MINUTES[m] || 60;
  let lengthChosen = false;
  let mealBefore = meal.value;
  duration.addEventListener("input", () => { lengthChosen = true; });
  meal.addEventListener("change", () => {
    if (!lengthChosen && Number(duration.value) === usualLength(mealBefore)) duration.value = String(usualLength(meal.value));
    mealBefore = meal.value;
  });

  const search = placeSearch(store, (place) => {
    name.value = place.name || name.value;
    address.value = place.address || "";
    lat.value = place.lat ?? "";
    lng.value = place.lng ?? "";
    placeId = place.placeId || null;
    const guessed = kindFromTypes(place.types);
    if (guessed && !editing) {
      kind.value = guessed;
      syncMeal();
    }
    name.focus();
  });

  const dialog = openDialog(editing ? `Edit “${s.name}”` : `Add a stop to day ${day.position + 1}`, (close) => dialogForm({
    close,
    novalidate: true,
    fields: [
      search,
      field("Name", name),
      h("div", { class: "grid-2" }, field("Kind", kind), mealField),
      h("div", { class: "grid-2" },
        timeField,
        field("Duration (minutes)", duration)),
      editing ? null : field("Position", after),
      field("Address", address),
      h("details", { class: "more" },
        h("summary", null, "Location (for the map and travel times)"),
        h("div", { class: "grid-2" }, field("Latitude", lat), field("Longitude", lng))),
      field("Note", note, "Markdown. Attached files are linked here for the group."),
      files.el,
      h("div", { class: "row" }, attach, fileInput),
    ],
    submitLabel: editing ? "Save changes" : "Add stop",
    busyLabel: editing ? "Saving…" : "Adding…",
    check: collect,
    onSubmit: (values) => {
      if (editing) {
        const changes = { stopId: s.id };
        for (const [k, v] of Object.entries(values)) if (v !== (s[k] ?? null)) changes[k] = v;
        return store.op("update_stop", changes);
      }
      const args = { dayId: day.id, ...values };
      if (after.value) args.afterStopId = after.value;
      for (const k of Object.keys(args)) if (args[k] === null) delete args[k];
      return store.op("insert_stop", args);
    },
  }), { wide: true });
  dialog.addEventListener("close", files.stop);
  if (!editing) {
    // Other members (or the agent) change the day while this is open: the
    // Position list follows it, keeping the choice while its stop is there.
    const stopFollowing = store.on((reason) => {
      const now = reason === "trip" && store.trip && store.trip.days.find((d) => d.id === day.id);
      if (!now) return;
      const options = positions(now.stops);
      const same = options.length === after.options.length
        && options.every(([value, label], i) => after.options[i].value === value && after.options[i].text === label);
      if (same) return;
      const chosen = after.value;
      after.replaceChildren(...options.map(([value, label]) => h("option", { value, selected: value === chosen }, label)));
    });
    dialog.addEventListener("close", stopFollowing);
  }

  function collect() {
    if (!name.value.trim()) throw new Error("Give the stop a name.");
    const minutes = Number(duration.value);
    if (!Number.isInteger(minutes) || minutes < 5 || minutes > 1440) throw new Error("Duration is a whole number of minutes from 5 to 1440.");
    const latV = lat.value.trim() === "" ? null : Number(lat.value);
    const lngV = lng.value.trim() === "" ? null : Number(lng.value);
    if ((latV === null) !== (lngV === null) || Number.isNaN(latV) || Number.isNaN(lngV)) {
      throw new Error("Give both latitude and longitude as numbers, or neither.");
    }
    if (latV !== null && (Math.abs(latV) > 90 || Math.abs(lngV) > 180)) {
      throw new Error("Latitude is from -90 to 90 and longitude from -180 to 180.");
    }
    return {
      name: name.value.trim(),
      kind: kind.value,
      meal: kind.value === "food" && meal.value ? meal.value : null,
      setTime: toServiceTime(setTime.value, plusOne.checked),
      durationMin: minutes,
      address: address.value.trim() || null,
      lat: latV,
      lng: lngV,
      placeId,
      note: note.value,
    };
  }
}

function placeSearch(store, onPick) {
  const input = h("input", { type: "search", name: "q", placeholder: "Search places, e.g. Belém Tower", autocomplete: "off", autofocus: true, "data-needs-server": true });
  const results = h("ul", { class: "place-results", "aria-live": "polite" });
  const button = h("button", { type: "button", class: "btn", "data-needs-server": true }, "Search");
  const run = () => {
    const q = input.value.trim();
    if (!q) return;
    withBusy(button, async () => {
      clear(results).append(h("li", { class: "muted" }, "Searching…"));
      try {
        const data = await get(`${store.base}/places/search?q=${encodeURIComponent(q)}`);
        const places = (data && (data.places || data.results)) || (Array.isArray(data) ? data : []);
        clear(results);
        if (!places.length) results.append(h("li", { class: "muted" }, "No places found. Try other words, or type the details below."));
        for (const p of places.slice(0, 8)) {
          results.append(h("li", null, h("button", { type: "button", class: "place-pick", onclick: () => { clear(results); onPick(p); } },
            h("strong", null, p.name), h("span", { class: "muted" }, [p.address, p.rating ? `★ ${p.rating}` : null].filter(Boolean).join(" · ")))));
        }
        const credit = places.length ? osmCredit(store.app.session.config) : null;
        if (credit) results.append(h("li", { class: "place-credit" }, credit));
      } catch (err) {
        clear(results).append(h("li", null, errorBox(err)));
      }
    });
  };
  button.addEventListener("click", run);
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      run();
    }
  });
  return h("div", { class: "place-search" },
    h("label", { for: input.id || (input.id = "place-q") }, "Find a place"),
    h("div", { class: "row" }, input, button), results);
}

// "24:45" -> ["00:45", true]; "10:00" -> ["10:00", false].
function fromServiceTime(value) {
  if (!value) return ["", false];
  const [hh, mm] = value.split(":").map(Number);
  return hh >= 24 ? [`${String(hh - 24).padStart(2, "0")}:${String(mm).padStart(2, "0")}`, true] : [value, false];
}

// The picker's time and "(+1)" as the server's set time: "00:45" + (+1) -> "24:45".
// Past midnight a plan runs until 05:59 the next morning (29:59).
function toServiceTime(value, nextMorning) {
  if (!value) return null;
  if (!nextMorning) return value;
  const [hh, mm] = value.split(":").map(Number);
  if (hh >= 6) throw new Error("A time after midnight (+1) can be at most 05:59 the next morning.");
  return `${String(hh + 24).padStart(2, "0")}:${String(mm).padStart(2, "0")}`;
}
