// An AI review of the selected day: ask about it (or just press the button
// for a general review). The answer recommends among the fixes the rules
// review computed; each is a button that applies it once. The conversation is
// per day (a question that failed stays with its day, and its words go back
// to that day's composer); the last two answered questions go with each
// question, as four turns (the server's limit); the question being written
// is a draft in the store. An answer is the model's words: its links are
// shown as words and address, not followed.

import { post } from "../api.js";
import { h, clear, errorBox, progressLine, withBusy, renderMarkdown } from "../planner/ui.js";
import { applyFix, editorsMayApply } from "../planner/findings.js";
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
  // dayId -> [{question, answer?, error?, pending, fixIds, cached, applied: Map fixId -> label, waiting?}]
  const turnsByDay = new Map();
  // The shown day's log. Another day's is a new element put in its place, not
  // the live region emptied and filled again: a screen reader reads what is
  // added to a live region, so every earlier answer was read again.
  let log = newLog();
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
    const dayId = day.id;
    const text = question.value.trim() || GENERAL_REVIEW;
    if (!turnsByDay.has(dayId)) turnsByDay.set(dayId, []);
    const turns = turnsByDay.get(dayId);
    const history = turns.filter((t) => t.answer != null)
      .flatMap((t) => [{ role: "user", text: t.question }, { role: "assistant", text: t.answer }]).slice(-MAX_TURNS);
    // A question that failed stays with its day until the next one is asked there.
    const failed = turns.some((t) => t.error);
    if (failed) turns.splice(0, turns.length, ...turns.filter((t) => !t.error));
    const turn = { question: text, pending: true, fixIds: [], cached: false, applied: new Map() };
    turns.push(turn);
    if (failed) {
      await render(true);
    } else {
      const empty = log.querySelector(":scope > .copilot-empty");
      if (empty) empty.remove(); // the invitation to ask goes with the first question, answered or not
      log.append(...turnNodes(turn, new Map(), dayId));
    }
    if (turn.waiting) turn.waiting.scrollIntoView({ block: "nearest" });
    question.value = "";
    store.setDraft("questions", dayId, "");
    try {
      const res = await withBusy(ask, () => post(`${store.base}/days/${encodeURIComponent(dayId)}/copilot`, { question: text, history }), "Reading…");
      Object.assign(turn, { answer: res.answer, fixIds: res.recommendedFixIds || [], cached: res.cached });
    } catch (err) {
      turn.error = err;
      if (text !== GENERAL_REVIEW) { // back in its own day's composer, to send again
        store.setDraft("questions", dayId, text);
        if (store.dayId === dayId && !question.value.trim()) question.value = text;
      }
    }
    turn.pending = false;
    const review = turn.fixIds.length ? await store.review(dayId) : null;
    // On its day's log when that day is shown; otherwise it is drawn when the day is.
    if (turn.waiting && turn.waiting.isConnected) turn.waiting.replaceWith(...turnNodes(turn, fixesOf(review), dayId).slice(1));
    ask.textContent = question.value.trim() ? "Ask" : "Review this day";
  });

  function newLog() {
    return h("div", { class: "copilot-log", "aria-live": "polite" });
  }

  // Each turn says who speaks, for a screen reader: the bubbles' sides say it only to the eye.
  function bubble(who, text) {
    if (who === "you") return h("div", { class: "bubble mine" }, h("span", { class: "visually-hidden" }, "You asked: "), h("p", null, text));
    return h("div", { class: "bubble theirs" }, h("span", { class: "visually-hidden" }, "Copilot: "), renderMarkdown(text, store.tripId, { links: false }));
  }

  function fixesOf(review) {
    const fixes = new Map();
    for (const f of (review && review.data && review.data.findings) || []) for (const fix of f.fixes || []) fixes.set(fix.id, fix);
    return fixes;
  }

  // The question, then its answer, its error, or a progress line while it is read.
  function turnNodes(t, fixes, dayId) {
    const asked = bubble("you", t.question);
    if (t.pending) {
      t.waiting = progressLine("Reading the day…", IN_LOG);
      return [asked, t.waiting];
    }
    if (t.error) return [asked, errorBox(t.error, IN_LOG)];
    const answer = bubble("copilot", t.answer);
    if (t.cached) answer.append(h("p", { class: "hint" }, "Same question as before: answered from the saved reply (no AI cost)."));
    const recommended = t.fixIds.map((id) => fixes.get(id) || (t.applied.has(id) ? { id, label: t.applied.get(id) } : null)).filter(Boolean);
    const mine = recommended.filter((fix) => t.applied.has(fix.id) || store.mayApply(fix));
    const others = recommended.filter((fix) => !mine.includes(fix));
    if (mine.length) answer.append(h("div", { class: "fixes" }, mine.map((fix) => fixButton(t, fix, dayId))));
    if (others.length) answer.append(editorsMayApply(others));
    return [asked, answer];
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
    const fresh = newLog();
    if (!turns.length) fresh.append(h("p", { class: "muted copilot-empty" }, "Timing, order, travel, meals: ask anything about this day."));
    const fixes = fixesOf(review);
    for (const t of turns) fresh.append(...turnNodes(t, fixes, day.id));
    log.replaceWith(fresh);
    log = fresh;
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
