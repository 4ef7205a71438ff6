// Copilot: ask about the selected day. It answers and recommends among the
// fixes the review computed; each recommended fix is a button that applies it.
// The conversation is per day; the last four turns go with each question.

import { post } from "../api.js";
import { h, clear, errorBox, progressLine, withBusy, renderMarkdown } from "../planner/ui.js";
import { applyFix } from "../planner/findings.js";
import { aiOffNote } from "./common.js";

const MAX_QUESTION = 500;
const MAX_TURNS = 4;

export function mountCopilot(el, store) {
  if (!store.app.session.config.aiEnabled) {
    el.append(aiOffNote("The Copilot"));
    return {};
  }
  const turnsByDay = new Map(); // dayId -> [{question, answer, fixIds, cached}]
  const heading = h("p", { class: "muted" });
  const log = h("div", { class: "copilot-log", "aria-live": "polite" });
  const question = h("textarea", { name: "question", rows: 3, maxlength: MAX_QUESTION, placeholder: "Is this day realistic? What should I move?", "aria-label": "Your question about this day" });
  const ask = h("button", { type: "submit", class: "btn btn-primary" }, "Ask Copilot");
  const form = h("form", { class: "composer" }, question, h("div", { class: "row between" }, h("span", { class: "hint" }, "Copilot suggests; it never changes the plan by itself."), ask));
  el.append(h("div", { class: "panel-intro" }, h("h2", null, "Copilot"), heading), log, form);

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const day = store.day();
    const text = question.value.trim();
    if (!day || !text) return;
    const turns = turnsByDay.get(day.id) || [];
    const history = turns.flatMap((t) => [{ role: "user", text: t.question }, { role: "assistant", text: t.answer }]).slice(-MAX_TURNS);
    const waiting = progressLine("Copilot is reading the day…");
    log.append(bubble("you", text), waiting);
    waiting.scrollIntoView({ block: "nearest" });
    question.value = "";
    try {
      const res = await withBusy(ask, () => post(`${store.base}/days/${encodeURIComponent(day.id)}/copilot`, { question: text, history }), "Asking…");
      turns.push({ question: text, answer: res.answer, fixIds: res.recommendedFixIds || [], cached: res.cached });
      turnsByDay.set(day.id, turns);
      waiting.remove();
      if (store.dayId === day.id) render();
    } catch (err) {
      waiting.replaceWith(errorBox(err));
      question.value = text;
    }
  });

  function bubble(who, text) {
    return h("div", { class: `bubble ${who === "you" ? "mine" : "theirs"}` }, who === "you" ? h("p", null, text) : renderMarkdown(text));
  }

  async function render() {
    const day = store.day();
    clear(log);
    if (!day) return;
    heading.textContent = `About day ${day.position + 1}${day.title ? ` · ${day.title}` : ""}.`;
    const turns = turnsByDay.get(day.id) || [];
    if (!turns.length) log.append(h("p", { class: "muted" }, "Ask anything about this day: timing, order, travel, meals."));
    const review = turns.some((t) => t.fixIds.length) ? await store.review(day.id) : null;
    const fixes = new Map();
    for (const f of (review && review.data && review.data.findings) || []) for (const fix of f.fixes || []) fixes.set(fix.id, fix);
    for (const t of turns) {
      log.append(bubble("you", t.question));
      const answer = bubble("copilot", t.answer);
      if (t.cached) answer.append(h("p", { class: "hint" }, "Same question as before: answered from the saved reply (no AI cost)."));
      const recommended = t.fixIds.map((id) => fixes.get(id)).filter(Boolean);
      if (recommended.length && store.canEdit) {
        answer.append(h("div", { class: "fixes" }, recommended.map((fix) => {
          const b = h("button", { type: "button", class: "btn btn-sm btn-fix", "data-fix-id": fix.id }, `Apply: ${fix.label}`);
          b.addEventListener("click", () => applyFix(store, fix, b));
          return b;
        })));
      }
      log.append(answer);
    }
  }

  const off = store.on((reason) => {
    if (reason === "day") render();
  });
  render();
  return { destroy: off, shown: () => render() };
}
