// Ideas for the selected day: places to eat and things to see nearby (Google
// or OpenStreetMap places ranked in code, no AI cost; OSM's are credited). Each suggestion is added on its own,
// with its start time and length adjustable and opening hours shown; a 409
// says why it does not fit. Ideas are worked out for the day as it was: once
// the day changes (one of them was used, or anyone edited it) the unused ones
// go, and one button looks again.

import { post } from "../api.js";
import { h, clear, errorBox, progressLine, withBusy, field, select, toast, osmCredit, fmtClock, MEALS, MEAL_MINUTES } from "../planner/ui.js";
import { hoursReading, precheckSuggestion } from "../hours.js";
import { icon } from "../planner/icons.js";

export function mountIdeas(el, store) {
  const config = store.app.session.config;
  const results = h("div", { class: "assistant-results", "aria-live": "polite" });
  const meal = select("meal", [["", "Any meal"], ...MEALS], "");
  meal.setAttribute("aria-label", "Meal");
  const eat = h("button", { "data-needs-server": true, type: "button", class: "btn" }, icon("food"), "Find places to eat");
  const explore = h("button", { "data-needs-server": true, type: "button", class: "btn" }, icon("compass"), "Explore nearby");
  el.append(h("div", { class: "assistant-tools" }, h("div", { class: "row wrap" }, meal, eat), h("div", { class: "row wrap" }, explore)), results);

  eat.addEventListener("click", () => suggestions("eat", eat, meal.value ? { meal: meal.value } : {}));
  explore.addEventListener("click", () => suggestions("explore", explore, {}));
  let shown = null; // {kind, button, body, dayId, stops}: what the list was worked out for

  const stopsOf = (day) => day.stops.map((x) => `${x.id}@${x.startMinutes}-${x.endMinutes}`).join(",");

  // The day changed under the list: the ideas left were for the day as it was.
  function outdated() {
    const day = store.day();
    if (!shown || !day || day.id !== shown.dayId || stopsOf(day) === shown.stops) return;
    const again = shown;
    shown = null;
    for (const card of results.querySelectorAll(".suggestion:not(.applied)")) card.remove();
    const title = results.querySelector("h4.ideas-title");
    if (title) title.remove();
    results.append(h("div", { class: "ideas-outdated", role: "status" },
      h("p", { class: "hint" }, "The day has changed, so the other ideas may no longer fit."),
      h("button", { "data-needs-server": true, type: "button", class: "btn btn-sm", onclick: () => suggestions(again.kind, again.button, again.body) },
        again.kind === "eat" ? "Find places to eat again" : "Explore nearby again")));
  }

  async function suggestions(kind, button, body) {
    const day = store.day();
    if (!day) return;
    shown = null;
    clear(results).append(progressLine(kind === "eat" ? "Looking for places to eat…" : "Looking around the day's stops…"));
    try {
      const res = await withBusy(button, () => post(`${store.base}/days/${encodeURIComponent(day.id)}/${kind}`, body));
      clear(results);
      const list = res.suggestions || [];
      if (!list.length) {
        results.append(h("p", { class: "muted" }, "Nothing suitable was found near this day's stops."));
        return;
      }
      results.append(h("h4", { class: "ideas-title" }, kind === "eat" ? "Places to eat" : "Nearby ideas"));
      for (const s of list) results.append(suggestionCard(day, s, body.meal));
      shown = { kind, button, body, dayId: day.id, stops: stopsOf(store.day(day.id) || day) };
      const credit = osmCredit(config);
      if (credit) results.append(credit);
    } catch (err) {
      clear(results).append(errorBox(err));
    }
  }

  function suggestionCard(day, s, mealChosen) {
    const p = s.place || {};
    const start = h("input", { type: "time", value: s.startTime || "", "aria-label": `Start time for ${p.name}` });
    const minutes = s.durationMin || MEAL_MINUTES[mealChosen] || 60;
    const duration = h("input", { type: "number", min: 5, max: 1440, step: 5, value: minutes, "aria-label": `Minutes at ${p.name}` });
    const warn = h("p", { class: "hint", "aria-live": "polite" });
    const after = day.stops.find((x) => x.id === s.afterStopId);
    // A meal the day already has is replaced (one change, at its place in the day).
    const replaces = s.replacesStopId ? day.stops.find((x) => x.id === s.replacesStopId) : null;
    const add = h("button", { "data-needs-server": true, type: "button", class: "btn btn-primary btn-sm" }, replaces ? "Use instead" : "Add to day");
    // The time field reads on the day's own clock; after midnight the line above says "(+1)".
    const startText = typeof s.startMinutes === "number" && (!store.canEdit || s.startMinutes >= 1440) ? `starts ${fmtClock(s.startMinutes)}` : null;
    const hours = hoursReading(s.hours);
    // An edited start or length, checked on the periods the server sent (no
    // opinion without them; the server checks again on apply).
    const precheck = () => {
      warn.textContent = "";
      const r = precheckSuggestion(s.hours, start.value, Number(duration.value), s.kind === "food");
      if (r && !r.fits) warn.textContent = r.latestStart ? `Won't fit the opening hours; latest start ${r.latestStart}.` : "Won't fit the opening hours at that time.";
    };
    start.addEventListener("change", precheck);
    duration.addEventListener("change", precheck);
    add.addEventListener("click", () => withBusy(add, async () => {
      const body = {};
      if (start.value && start.value !== s.startTime) body.startTime = start.value;
      if (Number(duration.value) !== s.durationMin) body.durationMin = Number(duration.value);
      try {
        const trip = await post(`${store.base}/drafts/${encodeURIComponent(s.draftId)}/apply`, body);
        card.classList.add("applied"); // before the new trip: the others go, this one stays
        store.applyWriteAnswer(trip);
        toast(replaces ? `${p.name} replaces ${replaces.name}` : `Added ${p.name}`, "success");
        add.replaceWith(h("span", { class: "pill ok" }, icon("check", { size: 14 }), replaces ? " Replaced" : " Added"));
      } catch (err) {
        warn.textContent = err.code === "hours" && err.details.latestStart
          ? `${err.message} Latest start that fits: ${err.details.latestStart}.` : err.message;
      }
    }, "Adding…"));
    const card = h("article", { class: "suggestion card", "data-draft-id": s.draftId },
      h("h4", null, p.name),
      replaces ? h("p", { class: "replaces" }, `Replaces “${replaces.name}”`) : null,
      h("p", { class: "muted" }, [
        startText,
        p.rating ? `★ ${p.rating}` : null, p.priceLevel ? "€".repeat(p.priceLevel) : null,
        replaces ? null : after ? `after ${after.name}` : "at the end of the day",
      ].filter(Boolean).join(" · ")),
      hours ? h("p", { class: `hours hours-${s.hours.status}${hours.tone === "closed" ? " no-fit" : ""}` }, hours.line) : null,
      s.note ? h("p", { class: "hint" }, s.note) : null,
      store.canEdit ? h("div", { class: "suggestion-fields" }, field("Start", start), field("Minutes", duration), add) : null,
      warn);
    return card;
  }

  const off = store.on((reason) => {
    if (reason === "day") {
      shown = null;
      clear(results); // ideas were for the day shown before
    }
    if (reason === "trip") outdated();
  });
  return { destroy: off };
}
