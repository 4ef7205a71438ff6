// Account -> Connected assistants: access for an outside AI assistant (Claude,
// ChatGPT, any MCP client) to act for you. Create one (a name, one trip or
// all, read or propose), copy its token once, see when it was last used,
// revoke it. What an assistant proposes waits for the group's approval.

import { get, post, del } from "../api.js";
import { h, clear, openDialog, withBusy, errorBox, copyField, timeAgo, fmtDay, field, select, toast } from "./ui.js";

const SCOPES = [
  ["read", "Read only"],
  ["propose", "Read and propose changes"],
];

export function openAssistants() {
  openDialog("Connected assistants", () => {
    const list = h("ul", { class: "token-list", "aria-label": "Connected assistants", "data-testid": "token-list" });
    const shown = h("div", { class: "stack", "aria-live": "polite" });
    const name = h("input", { name: "assistantName", maxlength: 40, placeholder: "Claude", required: true });
    const trip = select("assistantTrip", [["", "All your trips"]], "");
    const scope = select("assistantScope", SCOPES, "read");
    const create = h("button", { type: "submit", class: "btn btn-primary", "data-testid": "token-create" }, "Connect an assistant");
    const form = h("form", { class: "stack token-form", novalidate: true },
      field("Name the group will see", name, "Suggestions it makes show as “Claude via you”."),
      field("Trips it can see", trip), field("What it may do", scope, "Changes it proposes always wait for a member of the trip to approve them."), h("div", { class: "row" }, create));

    form.addEventListener("submit", (event) => {
      event.preventDefault();
      withBusy(create, async () => {
        clear(shown);
        if (!name.value.trim()) {
          shown.append(h("p", { class: "field-error" }, "Give the assistant a name."));
          name.focus();
          return;
        }
        try {
          const made = await post("/api/users/me/assistants", { name: name.value.trim(), tripId: trip.value || null, scope: scope.value });
          name.value = "";
          await load(); // the list grows first: the token shown below it stays in view
          showToken(made);
        } catch (err) {
          shown.append(errorBox(err));
        }
      }, "Connecting…");
    });

    function showToken(made) {
      const { row, input } = copyField(made.token, { label: "Access token", copied: "Token copied", attrs: { "data-testid": "token-value" } });
      shown.append(
        h("p", null, h("strong", null, `${made.name} is connected. `), "Copy its token now: it is shown only this once."),
        row,
        h("p", { class: "muted" }, "In the assistant's settings, add an MCP server with the address ",
          h("code", null, made.mcpUrl), " and the header ", h("code", null, "Authorization: Bearer <token>"), "."));
      input.focus();
      input.select();
      shown.scrollIntoView({ block: "nearest" }); // the token and how to use it, on a phone too
    }

    async function load() {
      try {
        const data = await get("/api/users/me/assistants");
        clear(list);
        if (!data.tokens.length) list.append(h("li", { class: "muted" }, "No assistant is connected."));
        for (const t of data.tokens) list.append(tokenItem(t));
      } catch (err) {
        clear(list).append(h("li", null, errorBox(err)));
      }
    }

    function tokenItem(t) {
      const revoke = h("button", { type: "button", class: "btn btn-sm btn-ghost danger-text", "data-testid": "token-revoke" }, "Revoke");
      revoke.addEventListener("click", () => withBusy(revoke, async () => {
        try {
          await del(`/api/users/me/assistants/${encodeURIComponent(t.id)}`, {});
          toast(`${t.name} can no longer reach your trips`, "success");
          await load();
        } catch (err) {
          list.append(h("li", null, errorBox(err)));
        }
      }));
      const where = t.tripId ? (t.tripTitle || "One trip") : "All your trips";
      const what = t.scope === "propose" ? "reads and proposes changes" : "reads only";
      const used = t.lastUsedAt ? `last used ${timeAgo(t.lastUsedAt)}` : "never used";
      return h("li", { class: "token", "data-token-id": t.id },
        h("span", { class: "token-text" }, h("strong", null, t.name),
          h("span", { class: "muted" }, ` · ${where} · ${what} · added ${fmtDay(t.createdAt.slice(0, 10))} · ${used}`)),
        revoke);
    }

    get("/api/trips").then(({ trips }) => {
      for (const t of trips) trip.append(h("option", { value: t.id }, t.title));
    }).catch(() => {});
    load();
    return h("div", { class: "dialog-body stack assistants-dialog" },
      h("p", null, "Let an AI assistant you use (Claude, ChatGPT or another that speaks MCP) read your trips "
        + "and propose changes. It never changes a plan: each change waits in the trip for a member to approve it."),
      list, h("h3", null, "Connect an assistant"), form, shown,
      h("p", { class: "muted" }, "It can never do more than you can: a viewer's assistant only reads. "
        + "Leaving a trip, or deleting your account, ends its access."));
  }, { wide: true });
}
