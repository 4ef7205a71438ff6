// The planning assistant for the selected day: find places to eat and
// explore nearby (Google search ranked in code, no AI cost; each suggestion
// applied on its own) and "Optimize my day" (an AI draft shown before/after,
// applied with Apply Plan; a 409 says why).

import { post } from "../api.js";
import { h, clear, errorBox, progressLine, withBusy, field, select, fmtMinutes, toast, MEALS } from "../planner/ui.js";
import { checkHours } from "../hours.js";
import { aiOffNote } from "./common.js";
import { icon } from "../planner/icons.js";

const HOURS_TEXT = { confirmed: "Hours confirmed for that date", unconfirmed: "Usual weekly hours (not confirmed for that date)", none: "No opening hours listed" };

export function mountAssistant(el, store, panel) {
  const config = store.app.session.config;
  const heading = h("p", { class: "muted" });
  const results = h("div", { class: "assistant-results", "aria-live": "polite" });
  const meal = select("meal", [["", "Any meal"], ...MEALS], "");
  meal.setAttribute("aria-label", "Meal");
  const eat = h("button", { type: "button", class: "btn" }, icon("food"), "Find places to eat");
  const explore = h("button", { type: "button", class: "btn" }, icon("compass"), "Explore nearby");
  const optimize = h("button", { type: "button", class: "btn btn-primary" }, icon("sparkle"), "Optimize my day");

  const tools = h("div", { class: "assistant-tools" });
  if (config.placesEnabled) {
    tools.append(h("div", { class: "row wrap" }, meal, eat), h("div", { class: "row wrap" }, explore));
  } else {
    tools.append(h("p", { class: "ai-off small" }, "Finding places needs Google Places, which is not set up on this server."));
  }
  if (config.aiEnabled) tools.append(h("div", { class: "row wrap" }, optimize));
  else tools.append(aiOffNote("“Optimize my day”"));
  el.append(h("div", { class: "panel-intro" }, h("h2", null, "Assistant"), heading), tools, results);

  eat.addEventListener("click", () => suggestions("eat", eat, meal.value ? { meal: meal.value } : {}));
  explore.addEventListener("click", () => suggestions("explore", explore, {}));
  optimize.addEventListener("click", () => runOptimize());

  const dayUrl = (day, what) => `${store.base}/days/${encodeURIComponent(day.id)}/${what}`;

  async function suggestions(kind, button, body) {
    const day = store.day();
    if (!day) return;
    clear(results).append(progressLine(kind === "eat" ? "Looking for places to eat…" : "Looking around the day's stops…"));
    try {
      const res = await withBusy(button, () => post(dayUrl(day, kind), body));
      clear(results);
      const list = res.suggestions || [];
      if (!list.length) {
        results.append(h("p", { class: "muted" }, "Nothing suitable was found near this day's stops."));
        return;
      }
      results.append(h("h3", null, kind === "eat" ? "Places to eat" : "Nearby ideas"));
      for (const s of list) results.append(suggestionCard(day, s));
    } catch (err) {
      clear(results).append(errorBox(err));
    }
  }

  function suggestionCard(day, s) {
    const p = s.place || {};
    const start = h("input", { type: "time", value: s.startTime || "", "aria-label": `Start time for ${p.name}` });
    const duration = h("input", { type: "number", min: 5, max: 1440, step: 5, value: s.durationMin || 60, "aria-label": `Minutes at ${p.name}` });
    const warn = h("p", { class: "hint", "aria-live": "polite" });
    const add = h("button", { type: "button", class: "btn btn-primary btn-sm" }, "Add to day");
    const after = day.stops.find((x) => x.id === s.afterStopId);
    const hours = s.hours || {};
    const precheck = () => {
      warn.textContent = "";
      if (!p.raw || !start.value) return;
      try {
        const r = checkHours(p.raw, day.date, start.value, Number(duration.value));
        if (!r.fits) warn.textContent = r.latestStart ? `Won't fit the opening hours; latest start ${r.latestStart}.` : "Won't fit the opening hours at that time.";
      } catch {
        // the server checks again on apply
      }
    };
    start.addEventListener("change", precheck);
    duration.addEventListener("change", precheck);
    add.addEventListener("click", () => withBusy(add, async () => {
      const body = {};
      if (start.value && start.value !== s.startTime) body.startTime = start.value;
      if (Number(duration.value) !== s.durationMin) body.durationMin = Number(duration.value);
      try {
        const trip = await post(`${store.base}/drafts/${encodeURIComponent(s.draftId)}/apply`, body);
        store.setTrip(trip.trip || trip);
        toast(`Added ${p.name}`, "success");
        card.classList.add("applied");
        add.replaceWith(h("span", { class: "pill ok" }, icon("check", { size: 14 }), " Added"));
      } catch (err) {
        warn.textContent = err.code === "hours" && err.details.latestStart
          ? `${err.message} Latest start that fits: ${err.details.latestStart}.` : err.message;
      }
    }, "Adding…"));
    const card = h("article", { class: "suggestion card", "data-draft-id": s.draftId },
      h("h4", null, p.name),
      h("p", { class: "muted" }, [p.rating ? `★ ${p.rating}` : null, p.priceLevel ? "€".repeat(p.priceLevel) : null, after ? `after ${after.name}` : "at the end of the day"].filter(Boolean).join(" · ")),
      hours.status ? h("p", { class: `hours hours-${hours.status}${hours.fits === false ? " no-fit" : ""}` },
        HOURS_TEXT[hours.status] || hours.status, hours.closesAt ? ` · closes ${hours.closesAt}` : "", hours.fits === false ? " · does not fit" : "") : null,
      s.note ? h("p", { class: "hint" }, s.note) : null,
      store.canEdit ? h("div", { class: "row wrap" }, field("Start", start), field("Minutes", duration), add) : null,
      warn);
    return card;
  }

  async function runOptimize() {
    const day = store.day();
    if (!day) return;
    clear(results).append(progressLine("Optimizing the day: gathering places and asking the AI (this can take up to a minute)…"));
    try {
      const res = await withBusy(optimize, () => post(dayUrl(day, "optimize"), {}), "Optimizing…");
      clear(results).append(draftPreview(day, res.draft));
    } catch (err) {
      clear(results).append(errorBox(err));
      if (err.code === "preferences") {
        results.append(h("button", { type: "button", class: "btn", onclick: () => panel.open("preferences") }, "Open Preferences"));
      }
    }
  }

  function draftPreview(day, draft) {
    const preview = draft.preview || {};
    const stops = preview.stops || [];
    const wrap = h("section", { class: "draft", "data-draft-id": draft.id, "aria-label": "Optimized plan preview" });
    wrap.append(h("h3", null, "Preview"));
    if (preview.summary) wrap.append(h("p", null, preview.summary));
    const before = stops.filter((x) => x.before).sort((a, b) => a.before.startTime.localeCompare(b.before.startTime));
    wrap.append(h("div", { class: "before-after" },
      column("Before", before.map((x) => ({ ...x, time: x.before.startTime }))),
      column("After", stops.map((x) => ({ ...x, time: x.after && x.after.startTime })))));
    const findings = preview.findings || [];
    if (findings.length) {
      wrap.append(h("ul", { class: "draft-findings" }, findings.map((f) => h("li", null, f.message))));
    }
    if (draft.travel) wrap.append(h("p", { class: "hint" }, travelText(draft.travel)));
    const apply = h("button", { type: "button", class: "btn btn-primary", "data-testid": "apply-plan" }, "Apply Plan");
    const discard = h("button", { type: "button", class: "btn", onclick: () => clear(results) }, "Discard");
    const out = h("div", { "aria-live": "assertive" });
    apply.addEventListener("click", () => withBusy(apply, async () => {
      clear(out);
      try {
        const trip = await post(`${store.base}/drafts/${encodeURIComponent(draft.id)}/apply`, {});
        store.setTrip(trip.trip || trip);
        toast("Applied the optimized plan", "success");
        clear(results).append(h("p", { class: "pill ok" }, icon("check", { size: 14 }), " Plan applied"));
      } catch (err) {
        out.append(errorBox(err));
        if (err.code === "stale") out.append(h("p", { class: "hint" }, "The day changed since this preview. Optimize again to get a fresh plan."));
      }
    }, "Applying…"));
    wrap.append(out, store.canEdit ? h("div", { class: "actions" }, discard, apply) : h("p", { class: "muted" }, "Viewers can preview but not apply."));
    return wrap;
  }

  function column(title, items) {
    return h("div", { class: "ba-col" }, h("h4", null, title),
      h("ol", { class: "ba-list" }, items.map((x) => h("li", { class: x.added ? "added" : "" },
        h("span", { class: "ba-time" }, x.time || ""),
        h("span", null, x.name || "Stop"),
        x.setTime ? h("span", { class: "badge" }, "set") : null,
        x.added ? h("span", { class: "badge badge-new" }, "new") : null,
        x.hours && x.hours.fits === false ? h("span", { class: "badge badge-estimate" }, "hours?") : null))));
  }

  function travelText(travel) {
    if (typeof travel === "string") return travel;
    const b = travel.beforeMin ?? travel.before;
    const a = travel.afterMin ?? travel.after;
    if (typeof b === "number" && typeof a === "number") return `Travel: ${fmtMinutes(b)} before, ${fmtMinutes(a)} after.`;
    return "";
  }

  function render() {
    const day = store.day();
    heading.textContent = day ? `For day ${day.position + 1}${day.title ? ` · ${day.title}` : ""}.` : "";
    clear(results);
  }
  const off = store.on((reason) => {
    if (reason === "day") render();
  });
  render();
  return { destroy: off };
}
