// Preferences: your private defaults (food, price, usual transport) and the
// trip's shared choices (transport, avoided modes, longest walk, pace,
// interests, budget), each labelled with who can see it.

import { get, put } from "../api.js";
import { keptGet } from "../offline/kept.js";
import { h, clear, field, select, errorBox, handleSubmit, toast } from "../planner/ui.js";
import { icon } from "../planner/icons.js";

const MODES = [["walk", "Walking"], ["transit", "Public transport"], ["drive", "Driving"], ["bicycle", "Cycling"]];
const PRICE = [["", "Any price"], ["1", "€ Inexpensive"], ["2", "€€ Moderate"], ["3", "€€€ Expensive"], ["4", "€€€€ Very expensive"]];
const list = (text) => text.split(",").map((s) => s.trim()).filter(Boolean);

function unwrap(data) {
  return (data && (data.preferences || data.prefs)) || data || {};
}

// The user's private defaults. `onSaved` lets the optimizer retry after a 409.
export function userPreferencesForm(onSaved) {
  const box = h("section", { class: "pref-section private", "aria-labelledby": "pref-private-h" });
  box.append(
    h("h3", { id: "pref-private-h" }, icon("lock", { size: 16 }), " Your defaults"),
    h("p", { class: "who-sees" }, h("strong", null, "Private: only you can see these."), " Food choices are never stored on a trip or shown to other members. They are reused on every trip."),
  );
  const body = h("div", null, h("p", { class: "muted" }, "Loading…"));
  box.append(body);
  keptGet("/api/users/preferences") // offline: as this device last saw them (saving needs a connection)
    .then((data) => build(unwrap(data)))
    .catch((err) => clear(body).append(errorBox(err)));

  function build(p) {
    const cuisines = h("input", { name: "cuisines", value: (p.cuisines || []).join(", "), placeholder: "Portuguese, seafood, Japanese" });
    const dietary = h("input", { name: "dietary", value: (p.dietary || []).join(", "), placeholder: "vegetarian, gluten-free" });
    const allergies = h("textarea", { name: "allergies", rows: 2, maxlength: 500 }, p.allergies || "");
    const price = select("maxPriceLevel", PRICE, p.maxPriceLevel ?? "");
    const transport = select("transport", MODES, p.transport || "transit");
    const errorSlot = h("div"); // its error box is an alert: no live region around it (read twice)
    const save = h("button", { "data-needs-server": true, type: "submit", class: "btn btn-primary" }, "Save my defaults");
    const form = h("form", { class: "stack" },
      field("Cuisines you like", cuisines, "Separate with commas."),
      field("Dietary needs", dietary, "Suggestions always tell you to check with the restaurant; Wayline never claims a place meets a diet."),
      field("Allergies", allergies, "Never sent to the AI: it only learns that you have allergies."),
      h("div", { class: "grid-2" }, field("Restaurant price", price), field("Usual way to get around", transport)),
      errorSlot, h("div", { class: "actions" }, save));
    handleSubmit(form, {
      button: save,
      errorSlot,
      busyLabel: "Saving…",
      check: () => ({
        cuisines: list(cuisines.value), dietary: list(dietary.value), allergies: allergies.value.trim(),
        maxPriceLevel: price.value ? Number(price.value) : null, transport: transport.value,
      }),
      onSubmit: (next) => put("/api/users/preferences", next),
      after: (_, next) => {
        toast("Your defaults are saved", "success");
        if (onSaved) onSaved(next);
      },
    });
    clear(body).append(form);
  }
  return box;
}

// Optimize needs a person's defaults saved once. Saving the trip's choices is
// choosing too, so the defaults (as they stand) are saved with them.
async function saveDefaultsOnce() {
  const { saved, ...mine } = unwrap(await get("/api/users/preferences"));
  if (saved) return;
  await put("/api/users/preferences", mine);
}

function tripPreferencesForm(store) {
  const box = h("section", { class: "pref-section shared", "aria-labelledby": "pref-shared-h" });
  box.append(
    h("h3", { id: "pref-shared-h" }, icon("users", { size: 16 }), " This trip's shared choices"),
    h("p", { class: "who-sees" }, h("strong", null, "Shared: every member of this trip can see and change these."), " They override your defaults on this trip only."),
  );
  const body = h("div", null, h("p", { class: "muted" }, "Loading…"));
  box.append(body);
  get(`${store.base}/preferences`)
    .then((data) => build(unwrap(data)))
    .catch(() => build(store.trip.preferences || {})); // the route may not exist yet: the TripDto carries them

  function build(p) {
    // Every member may change these, viewers too (they are how the group travels, not the plan).
    const transport = select("transport", MODES, p.transport || "transit");
    const avoid = MODES.map(([v, label]) => h("label", { class: "check" },
      h("input", { type: "checkbox", name: "avoidModes", value: v, checked: (p.avoidModes || []).includes(v) }), ` ${label}`));
    const walk = h("input", { name: "longestWalkM", type: "number", min: 0, max: 50000, step: 100, value: p.longestWalkM ?? 1500 });
    const fewer = h("input", { type: "checkbox", name: "fewerTransfers", checked: Boolean(p.fewerTransfers) });
    const pace = select("pace", [["relaxed", "Relaxed"], ["normal", "Normal"], ["packed", "Packed"]], p.pace || "normal");
    const interests = h("input", { name: "interests", value: (p.interests || []).join(", "), placeholder: "museums, viewpoints, markets" });
    const budget = select("budget", [["", "No budget set"], ["low", "Low"], ["moderate", "Moderate"], ["high", "High"]], p.budget || "");
    const errorSlot = h("div"); // its error box is an alert: no live region around it (read twice)
    const save = h("button", { "data-needs-server": true, type: "submit", class: "btn btn-primary" }, "Save for everyone");
    const form = h("form", { class: "stack" },
      h("div", { class: "grid-2" }, field("Main transport", transport), field("Pace", pace, "Relaxed, normal or packed: about 4, 6 or 8 stops a day.")),
      h("fieldset", { class: "checks" }, h("legend", null, "Modes to avoid"), avoid),
      h("div", { class: "grid-2" }, field("Longest walk (metres)", walk), field("Budget", budget)),
      h("label", { class: "check" }, fewer, " Prefer fewer transfers"),
      field("Interests", interests, "Separate with commas; used to pick places to suggest."),
      errorSlot, h("div", { class: "actions" }, save));
    handleSubmit(form, {
      button: save,
      errorSlot,
      busyLabel: "Saving…",
      check: () => ({
        transport: transport.value,
        avoidModes: avoid.map((l) => l.querySelector("input")).filter((i) => i.checked).map((i) => i.value),
        longestWalkM: Number(walk.value) || 0,
        fewerTransfers: fewer.checked,
        pace: pace.value,
        interests: list(interests.value),
        budget: budget.value || null,
      }),
      onSubmit: async (next) => {
        try {
          await put(`${store.base}/preferences`, next);
          await store.refresh();
        } catch (err) {
          if (err.status !== 404 && err.status !== 405) throw err;
          await store.op("set_trip_preferences", next, { quiet: true });
        }
        await saveDefaultsOnce();
      },
      after: () => toast("Saved the trip's shared choices", "success"),
    });
    clear(body).append(form);
  }
  return box;
}

export function mountTripPreferences(el, store) {
  el.append(
    h("div", { class: "panel-intro" }, h("p", { class: "muted" }, "AI help uses these for ideas, Optimize and the chat.")),
    tripPreferencesForm(store),
    userPreferencesForm(),
  );
  return {};
}

export function mountUserPreferencesPage(main) {
  main.append(h("div", { class: "page narrow" },
    h("h1", null, "Your preferences"),
    h("p", { class: "muted" }, "Each trip also has shared choices (transport, pace, interests, budget): change those from the trip's Preferences tab."),
    h("div", { class: "card" }, userPreferencesForm())));
  return {};
}
