// An AI review of the selected day: ask about it (or just press the button
// for a general review). The answer recommends among the fixes the rules
// review computed; each is a button that applies it once. The conversation is
// per day; the last four turns go with each question; the question being
// written is a draft in the store.

import { post } from "../api.js";
import { h, clear, errorBox, progressLine, withBusy, renderMarkdown } from "../planner/ui.js";
import { applyFix } from "../planner/findings.js";
import { aiOffNote } from "./common.js";
import { icon } from "../planner/icons.js";

// What goes in the log, a live region already (nested, it would be read twice).
const IN_LOG = { live: false };
const MAX_QUESTION = 500;
const MAX_TURNS = 4;
const GENERAL_REVIEW = "Review this day: is it realistic, and what would you change?";

export function mountReview(el, store) {
  if (!store.app.session.config.aiEnabled) {
    el.append(aiOffNote("An AI review of the day"));
    return {};
  }
  const turnsByDay = new Map(); // dayId -> [{question, answer, fixIds, cached, applied: Map fixId -> label}]
  const log = h("div", { class: "copilot-log", "aria-live": "polite" });
  const question = h("textarea", { name: "question", rows: 2, maxlength: MAX_QUESTION, placeholder: "Or ask something specific: can we fit in a museum?", "aria-label": "Your question about this day" });
  const ask = h("button", { "data-needs-server": true, type: "submit", class: "btn btn-primary", "data-testid": "review-day" }, "Review this day");
  const form = h("form", { class: "composer" }, question,
    h("div", { class: "row between wrap" }, h("span", { class: "hint" }, "It suggests; it never changes the plan by itself."), ask));
  el.append(log, form);
  let shownDay = null;

  question.addEventListener("input", () => {
    const day = store.day();
    if (day) store.setDraft("questions", day.id, question.value);
    ask.textContent = question.value.trim() ? "Ask" : "Review this day";
  });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const day = store.day();
    if (!day) return;
    const text = question.value.trim() || GENERAL_REVIEW;
    const turns = turnsByDay.get(day.id) || [];
    const history = turns.flatMap((t) => [{ role: "user", text: t.question }, { role: "assistant", text: t.answer }]).slice(-MAX_TURNS);
    const waiting = progressLine("Reading the day…", IN_LOG);
    const empty = log.querySelector(":scope > .copilot-empty");
    if (empty) empty.remove(); // the invitation to ask goes with the first question, answered or not
    log.append(bubble("you", text), waiting);
    waiting.scrollIntoView({ block: "nearest" });
    question.value = "";
    store.setDraft("questions", day.id, "");
    try {
      const res = await withBusy(ask, () => post(`${store.base}/days/${encodeURIComponent(day.id)}/copilot`, { question: text, history }), "Reading…");
      turns.push({ question: text, answer: res.answer, fixIds: res.recommendedFixIds || [], cached: res.cached, applied: new Map() });
      turnsByDay.set(day.id, turns);
      waiting.remove();
      if (store.dayId === day.id) render(true);
    } catch (err) {
      waiting.replaceWith(errorBox(err, IN_LOG));
      question.value = text === GENERAL_REVIEW ? "" : text;
    }
    ask.textContent = question.value.trim() ? "Ask" : "Review this day";
  });

  function bubble(who, text) {
    return h("div", { class: `bubble ${who === "you" ? "mine" : "theirs"}` }, who === "you" ? h("p", null, text) : renderMarkdown(text, store.tripId));
  }

  async function render(force = false) {
    const day = store.day();
    if (!day) return;
    if (!force && shownDay === day.id) return;
    shownDay = day.id;
    question.value = store.draft("questions", day.id);
    ask.textContent = question.value.trim() ? "Ask" : "Review this day";
    const turns = turnsByDay.get(day.id) || [];
    const review = turns.some((t) => t.fixIds.length) ? await store.review(day.id) : null;
    if (shownDay !== day.id) return; // another day was chosen meanwhile: its render draws the log
    clear(log);
    if (!turns.length) log.append(h("p", { class: "muted copilot-empty" }, "Timing, order, travel, meals: ask anything about this day."));
    const fixes = new Map();
    for (const f of (review && review.data && review.data.findings) || []) for (const fix of f.fixes || []) fixes.set(fix.id, fix);
    for (const t of turns) {
      log.append(bubble("you", t.question));
      const answer = bubble("copilot", t.answer);
      if (t.cached) answer.append(h("p", { class: "hint" }, "Same question as before: answered from the saved reply (no AI cost)."));
      const recommended = t.fixIds.map((id) => fixes.get(id) || (t.applied.has(id) ? { id, label: t.applied.get(id) } : null)).filter(Boolean);
      if (recommended.length && store.canEdit) answer.append(h("div", { class: "fixes" }, recommended.map((fix) => fixButton(t, fix, day.id))));
      log.append(answer);
    }
  }

  // One press applies a fix; after that it says so and cannot be pressed again.
  function fixButton(turn, fix, dayId) {
    const applied = () => h("span", { class: "pill ok" }, icon("check", { size: 13 }), ` Applied: ${fix.label}`);
    if (turn.applied.has(fix.id)) return applied();
    const b = h("button", { "data-needs-server": true, type: "button", class: "btn btn-sm btn-fix", "data-fix-id": fix.id }, `Apply: ${fix.label}`);
    b.addEventListener("click", async () => {
      if (await applyFix(store, fix, b, dayId)) {
        turn.applied.set(fix.id, fix.label);
        // The keyboard was on the button: it stays here, on what it did, not on the page's body.
        const lost = !document.activeElement || document.activeElement === document.body || document.activeElement === b;
        const done = applied();
        done.tabIndex = -1;
        b.replaceWith(done);
        if (lost) done.focus();
      }
    });
    return b;
  }

  const off = store.on((reason) => {
    if (reason === "day") render();
  });
  render();
  return { destroy: off, shown: () => render() };
}
