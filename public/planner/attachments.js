// The files a stop's note links, listed under the note in the stop dialog:
// each with its name (and a small picture for an image) and, where the API
// allows it, a Remove button that deletes the upload for the whole trip
// (confirmed first, like every delete) and takes its links out of the note
// being edited. The note is then saved as the dialog saves it.
//
// Who uploaded each file comes from the trip's list (GET …/media), read once
// when the dialog opens with files linked (files attached in the dialog are
// the member's own). Until it is in, or when it cannot be read, an editor is
// offered Remove and the server's refusal reads in words (notelinks.js).

import { get, del } from "../api.js";
import { h, clear, uid, confirmDialog, withBusy } from "./ui.js";
import { icon } from "./icons.js";
import { noteUploads, withoutUpload, mediaIdOf, mayRemove, removeRefusal } from "./notelinks.js";

// `note`: the dialog's textarea; `saveLabel`: the dialog's submit button's words.
export function noteAttachments(store, note, { saveLabel }) {
  const tripId = store.trip.id;
  const origin = location.origin;
  const me = store.app.session.me && store.app.session.me.id;
  const known = new Map(); // path -> the trip's record {id, uploadedBy, filename, mediaType}
  const list = h("ul", { class: "attachments-list plain" });
  const status = h("p", { class: "attachments-status", role: "status", "aria-live": "polite" });
  const titleId = uid("files");
  const box = h("section", { class: "attachments", "aria-labelledby": titleId },
    h("h3", { id: titleId, class: "attachments-title" }, "Attached files"), list);
  // What the last Remove did stays said after the last file left the list.
  const el = h("div", { class: "stack attachments-wrap", "data-testid": "note-files" }, box, status);
  let shown = "";
  let asked = false;

  function render() {
    const files = noteUploads(note.value, tripId, origin);
    const role = store.trip ? store.trip.role : null;
    const sig = JSON.stringify([role, files, files.map((f) => known.get(f.path) || null)]);
    if (sig === shown) return;
    shown = sig;
    box.hidden = !files.length;
    if (files.length && !asked) readWhoUploaded();
    clear(list).append(...files.map((f) => item(f, role)));
  }

  function item(file, role) {
    const record = known.get(file.path);
    const name = (record && record.filename) || file.label || "file";
    const image = record ? String(record.mediaType || "").startsWith("image/") : file.image;
    const picture = image
      ? h("img", { class: "attachment-thumb", src: file.path, alt: "", loading: "lazy", width: 40, height: 40 })
      : h("span", { class: "attachment-thumb attachment-icon", "aria-hidden": "true" }, icon("clip", { size: 18 }));
    const uploadedBy = record && record.uploadedBy;
    let action = null;
    if (mayRemove(role, me, uploadedBy)) {
      action = h("button", { type: "button", class: "btn btn-sm attachment-remove", "data-needs-server": true },
        icon("trash", { size: 15 }), "Remove", h("span", { class: "visually-hidden" }, ` ${name}`));
      action.addEventListener("click", () => remove(file, record, name, action));
    } else if (uploadedBy) {
      action = h("span", { class: "muted attachment-by" }, `Added by ${store.memberName(uploadedBy)}`);
    }
    return h("li", { class: "attachment", dataset: { path: file.path } },
      picture, h("span", { class: "attachment-name" }, name), action);
  }

  async function readWhoUploaded() {
    asked = true;
    try {
      const data = await get(`${store.base}/media`);
      for (const m of (data && data.media) || []) {
        if (!known.has(m.url)) known.set(m.url, { id: m.id, uploadedBy: m.uploadedBy, filename: m.filename, mediaType: m.mediaType });
      }
      if (el.isConnected) render();
    } catch {
      // Offline or refused: Remove is offered by role and the server decides.
    }
  }

  async function remove(file, record, name, button) {
    const sure = await confirmDialog(`Remove “${name}”?`,
      "The file is deleted from the trip for every member and its link is taken out of this note. Links to it elsewhere in the trip stop working.",
      "Remove");
    if (!sure) return;
    status.classList.remove("is-error");
    await withBusy(button, async () => {
      try {
        await del(`${store.base}/media/${encodeURIComponent((record && record.id) || mediaIdOf(file.path))}`);
        say(`Removed “${name}” from the trip. Press ${saveLabel} to keep the note without it.`);
      } catch (err) {
        if (err.status === 404 && err.code === "upload_not_found") {
          say(`“${name}” had already been removed from the trip, so its link is taken out of the note. Press ${saveLabel} to keep the note without it.`);
        } else {
          say(removeRefusal(err, store.trip && store.trip.role), true);
          return;
        }
      }
      const at = [...list.children].findIndex((li) => li.dataset.path === file.path);
      note.value = withoutUpload(note.value, file.path, tripId, origin);
      known.delete(file.path);
      render();
      // Focus stays in the list: the next file's Remove, else the note itself.
      const next = list.children[Math.min(at, list.children.length - 1)];
      const target = (next && next.querySelector("button")) || note;
      target.focus();
    }, "Removing…");
  }

  function say(text, error = false) {
    status.textContent = text;
    status.classList.toggle("is-error", error);
  }

  note.addEventListener("input", render);
  // A role changed by an owner meanwhile changes what is offered.
  const stopFollowing = store.on((reason) => { if (reason === "trip" && store.trip) render(); });
  render();
  return {
    el,
    stop: stopFollowing,
    // A file just attached in this dialog: the member's own.
    attached(media) {
      known.set(media.url, { id: media.id, uploadedBy: me, filename: media.filename, mediaType: media.mediaType });
      render();
    },
  };
}
