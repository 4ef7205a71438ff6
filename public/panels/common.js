// Shared bits of the panel tabs.

import { h } from "../planner/ui.js";

export function aiOffNote(what) {
  return h("div", { class: "ai-off", role: "note" },
    h("h3", null, "AI is turned off on this server"),
    h("p", null, `${what} needs an OpenAI key, which this Wayline server does not have. Everything else — days, stops, travel times, expenses, comments — works as usual.`));
}
