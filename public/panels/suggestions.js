// Suggestion cards (bottom-right): the AI's pending proposals, each with
// Approve (applies the patch through the server), Discuss (opens the chat
// with a note about it) and Deny (hides it for you only).

import { post } from "../api.js";
import { h, withBusy, toast } from "../planner/ui.js";
import { reconcile, sig } from "../planner/keyed.js";
import { describeWrite } from "./agentview.js";
import { icon } from "../planner/icons.js";

const SEVERITY_WORDS = { high: "important", medium: "worth a look", low: "minor" };

export function mountSuggestionCards(parent, store, panel) {
  const host = h("section", { class: "suggestion-cards", "aria-label": "Suggestions from the AI", "aria-live": "polite" });
  parent.append(host);
  const hidden = new Set(); // decided here; the next poll confirms

  function active() {
    const now = Date.now();
    return [...store.agent.suggestions.values()].filter((s) => s.status === "pending" && !hidden.has(s.id) && (!s.expiresAt || new Date(s.expiresAt).getTime() > now));
  }

  // Keyed by id: a poll leaves a card (its focus, its message) alone.
  function render() {
    reconcile(host, active().slice(-3), {
      key: (s) => s.id,
      signature: (s) => sig(s, store.canEdit, s.patch && s.patch.op ? describeWrite(store, s.patch.op, s.patch.args) : null),
      create: card,
    });
  }

  function card(s) {
    const out = h("p", { class: "tool-err", "aria-live": "assertive" });
    const approve = h("button", { type: "button", class: "btn btn-primary btn-sm", "data-testid": "suggestion-approve" }, "Approve");
    const discuss = h("button", { type: "button", class: "btn btn-sm" }, "Discuss");
    const deny = h("button", { type: "button", class: "btn btn-sm btn-ghost" }, "Deny");
    const url = (what) => `${store.base}/agent/suggestions/${encodeURIComponent(s.id)}/${what}`;

    approve.addEventListener("click", () => withBusy(approve, async () => {
      try {
        const trip = await post(url("approve"), { id: s.id, approved: true });
        store.setTrip(trip.trip || trip);
        store.markSuggestion(s.id, "applied");
        toast("Applied the AI's suggestion", "success");
        render();
      } catch (err) {
        out.textContent = err.message;
        if (err.status === 409) {
          store.markSuggestion(s.id, err.code === "expired" ? "expired" : "stale");
          setTimeout(render, 4000);
        }
      }
    }, "Applying…"));
    deny.addEventListener("click", () => withBusy(deny, async () => {
      try {
        await post(url("approve"), { id: s.id, approved: false });
        hidden.add(s.id);
        render();
      } catch (err) {
        out.textContent = err.message;
      }
    }));
    discuss.addEventListener("click", () => {
      panel.open("chat");
      const view = panel.view("chat");
      if (view && view.prefill) view.prefill(`@agent About your suggestion (“${s.suggestionText || s.reason}”): `);
    });

    const patch = s.patch && s.patch.op ? describeWrite(store, s.patch.op, s.patch.args) : null;
    return h("article", { class: `sugg-card sev-${s.severity || "low"}`, "data-suggestion-id": s.id },
      h("p", { class: "sugg-head" }, icon("sparkle", { size: 16 }), h("strong", null, "Suggestion from the AI"),
        h("span", { class: `badge sev-${s.severity}` }, SEVERITY_WORDS[s.severity] || "note")),
      s.suggestionText ? h("p", null, s.suggestionText) : null,
      s.reason ? h("p", { class: "muted" }, s.reason) : null,
      patch ? h("p", { class: "sugg-patch" }, patch) : null,
      h("div", { class: "row" }, store.canEdit ? approve : null, discuss, deny),
      out);
  }

  const off = store.on((reason) => {
    if (reason === "agent" || reason === "trip") render();
  });
  render();
  return {
    destroy() {
      off();
      host.remove();
    },
  };
}
