// How far I have read the group chat, kept by the server per member
// (GET/PUT /api/trips/:id/chat/read), so the unread count on the Chat
// buttons is right after a reload and on my other devices. The chat counts
// as read while it is open and the page is in front: the marker moves to
// the newest message then (one PUT, a moment later, for a burst).

import { get, put } from "../api.js";

const SAVE_AFTER_MS = 400;

export function trackReading(store, panel) {
  let timer = null;
  let saved = 0;

  get(`${store.base}/chat/read`).then((read) => {
    saved = Math.max(saved, read.seq);
    if (store.setReadSeq(read.seq)) store.emit("agent");
    readNow();
  }).catch(() => {
    if (store.setReadSeq(0)) store.emit("agent"); // count from the start rather than never
  });

  function reading() {
    return panel.showing("chat") && document.visibilityState === "visible" && store.agent.loaded;
  }

  function readNow() {
    if (!reading() || store.agent.readSeq === null) return;
    if (store.setReadSeq(store.agent.latestSeq)) {
      store.emit("agent");
      if (!timer) timer = setTimeout(save, SAVE_AFTER_MS);
    }
  }

  function save() {
    timer = null;
    const seq = store.agent.readSeq;
    if (seq === null || seq <= saved) return;
    saved = seq;
    put(`${store.base}/chat/read`, { seq }).catch(() => {}); // the count is a courtesy
  }

  const off = store.on((reason) => {
    if (reason === "agent") readNow();
  });
  panel.onChange(readNow);
  document.addEventListener("visibilitychange", readNow);
  return {
    destroy() {
      off();
      document.removeEventListener("visibilitychange", readNow);
      if (timer) {
        clearTimeout(timer);
        save();
      }
    },
  };
}
