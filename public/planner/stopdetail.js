// A stop's comment thread (members' comments; the AI replies here only after
// someone writes @agent in the thread). The comment being written is a draft
// in the store: it survives polls, re-renders and closing the thread.
// Offline the thread shows the comments this device last saw, and a comment
// written then is kept and sent later (store.comment), shown meanwhile as
// "Waiting to send".

import { h, clear, errorBox, handleSubmit, SKIP_SUBMIT, timeAgo, renderMarkdown } from "./ui.js";
import { readThrough } from "../offline/kept.js";
import { AI_NAME } from "../panels/agentview.js";

function commentsOf(data) {
  if (Array.isArray(data)) return data;
  return (data && (data.comments || data.items)) || [];
}

function authorOf(store, c) {
  if (c.byAgent) return AI_NAME;
  if (c.userId && store.member(c.userId)) return store.memberName(c.userId);
  return c.author || "A former member";
}

export function createThread(store, stop) {
  const list = h("ol", { class: "comments", "aria-label": `Comments on ${stop.name}` }, h("li", { class: "muted" }, "Loading comments…"));
  const waiting = h("ol", { class: "comments comments-waiting", "aria-label": `Comments on ${stop.name} waiting to be sent` });
  const text = h("textarea", {
    name: "body", rows: 2, maxlength: 2000, placeholder: "Write a comment… (@agent to ask the AI)",
    "aria-label": `Comment on ${stop.name}`, "data-fkey": "comment",
  });
  text.value = store.draft("comments", stop.id);
  const send = h("button", { type: "submit", class: "btn btn-primary btn-sm" }, "Comment");
  const errorSlot = h("div"); // its error box is an alert: no live region around it (read twice)
  const form = h("form", { class: "comment-form" }, text, h("div", { class: "row" }, send), errorSlot);
  const url = `${store.base}/stops/${encodeURIComponent(stop.id)}/comments`;
  let shownCount = stop.commentCount || 0;

  async function load() {
    try {
      const comments = commentsOf((await readThrough(url)).data);
      shownCount = comments.length;
      clear(list);
      if (!comments.length) list.append(h("li", { class: "muted" }, "No comments yet."));
      for (const c of comments) {
        const author = authorOf(store, c);
        list.append(h("li", { class: `comment${c.byAgent ? " from-agent" : ""}` },
          h("p", { class: "comment-meta" }, h("strong", null, author), " ", h("span", { class: "muted" }, timeAgo(c.createdAt))),
          renderMarkdown(c.body || c.text || "", store.tripId)));
      }
    } catch (err) {
      clear(list).append(err.status === 0
        ? h("li", { class: "muted" }, "The comments show when you are back online.")
        : h("li", null, errorBox(err)));
    }
  }

  // This device's comments on the stop that wait for the connection.
  const waitingHere = () => store.writes.filter((w) => w.kind === "comment" && w.stopId === stop.id && w.state === "waiting" && w.kept);

  function showWaiting() {
    const mine = waitingHere();
    clear(waiting).append(...mine.map((w) => h("li", { class: "comment comment-waiting" },
      h("p", { class: "comment-meta" }, h("strong", null, store.memberName(store.app.session.me.id)), " ",
        h("span", { class: "pending-badge" }, "Waiting to send")),
      renderMarkdown(w.body.body))));
    waiting.hidden = !mine.length;
  }

  text.addEventListener("input", () => store.setDraft("comments", stop.id, text.value));
  handleSubmit(form, {
    button: send,
    errorSlot,
    busyLabel: "Sending…",
    check: () => text.value.trim() || SKIP_SUBMIT,
    onSubmit: (body) => store.comment(stop.id, body), // the store reads the trip again (new counts)
    after: async (res) => {
      text.value = "";
      store.setDraft("comments", stop.id, "");
      showWaiting();
      if (!res || !res.queued) await load();
    },
  });
  text.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.metaKey || e.ctrlKey)) form.requestSubmit();
  });

  load();
  showWaiting();
  return {
    el: h("div", { class: "thread" }, list, waiting, form),
    // Someone else commented, or a kept comment was sent: show it, leaving the draft alone.
    update(next) {
      showWaiting();
      const count = (next.commentCount || 0) - waitingHere().length; // the server's count
      if (count !== shownCount) load();
    },
  };
}
