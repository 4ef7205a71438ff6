// A stop's comment thread (members' comments; the agent replies here only
// after someone writes @agent in the thread).

import { get, post } from "../api.js";
import { h, clear, errorBox, handleSubmit, SKIP_SUBMIT, timeAgo, renderMarkdown } from "./ui.js";

function commentsOf(data) {
  if (Array.isArray(data)) return data;
  return (data && (data.comments || data.items)) || [];
}

function authorOf(store, c) {
  if (c.byAgent) return "Trip agent";
  if (c.userId && store.member(c.userId)) return store.memberName(c.userId);
  return c.author || "A former member";
}

export function renderThread(store, stop) {
  const list = h("ol", { class: "comments", "aria-label": `Comments on ${stop.name}` }, h("li", { class: "muted" }, "Loading comments…"));
  const text = h("textarea", { name: "body", rows: 2, maxlength: 2000, placeholder: "Write a comment… (@agent to ask the trip agent)", "aria-label": `Comment on ${stop.name}` });
  const send = h("button", { type: "submit", class: "btn btn-primary btn-sm" }, "Comment");
  const errorSlot = h("div", { "aria-live": "assertive" });
  const form = h("form", { class: "comment-form" }, text, h("div", { class: "row" }, send), errorSlot);
  const url = `${store.base}/stops/${encodeURIComponent(stop.id)}/comments`;

  async function load() {
    try {
      const comments = commentsOf(await get(url));
      clear(list);
      if (!comments.length) list.append(h("li", { class: "muted" }, "No comments yet."));
      for (const c of comments) {
        list.append(h("li", { class: `comment${authorOf(store, c) === "Trip agent" ? " from-agent" : ""}` },
          h("p", { class: "comment-meta" }, h("strong", null, authorOf(store, c)), " ", h("span", { class: "muted" }, timeAgo(c.createdAt))),
          renderMarkdown(c.body || c.text || "")));
      }
    } catch (err) {
      clear(list).append(h("li", null, errorBox(err)));
    }
  }

  handleSubmit(form, {
    button: send,
    errorSlot,
    busyLabel: "Sending…",
    check: () => text.value.trim() || SKIP_SUBMIT,
    onSubmit: (body) => post(url, { body }),
    after: async () => {
      text.value = "";
      await load();
      // The trip's comment counts changed; a refresh shows them.
      store.refresh().catch(() => {});
    },
  });
  text.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.metaKey || e.ctrlKey)) form.requestSubmit();
  });

  load();
  return h("div", { class: "thread" }, list, form);
}
