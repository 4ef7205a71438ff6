// The trip's uploads a note links, and the note without one of them: what
// the stop dialog lists under the note with a Remove button each
// (planner/attachments.js). DOM-free, so node tests it (spec/js/notelinks.test.mjs).
//
// A link is read as the page's renderer reads it (ui.js `inline`: one line at
// a time, `[label](url)` or `![label](url)`), and counts only when links.js
// says it is one of this trip's uploads; the same file written twice (a path
// and a full address) is one file, named by its path.

import { linkTarget } from "../links.js";

const LINK = /(!?)\[([^\]]*)\]\(([^)\s]+)\)/g;

function uploadPath(url, tripId, origin) {
  return linkTarget(url, tripId, origin) === "upload" ? new URL(url, `${origin}/`).pathname : null;
}

// [{path, label, image}] in the order they first appear, one per file.
export function noteUploads(text, tripId, origin) {
  const found = new Map();
  for (const line of String(text || "").split("\n")) {
    for (const [, bang, label, url] of line.matchAll(LINK)) {
      const path = uploadPath(url, tripId, origin);
      if (path && !found.has(path)) found.set(path, { path, label, image: bang === "!" });
    }
  }
  return [...found.values()];
}

// The note with every link to `path` taken out and nothing else changed: a
// line that held only links to it goes (with its line break), and inside a
// sentence the space before the link goes with it, so no double space stays.
export function withoutUpload(text, path, tripId, origin) {
  const kept = [];
  for (const line of String(text || "").split("\n")) {
    let out = "";
    let from = 0;
    let hit = false;
    for (const m of line.matchAll(LINK)) {
      if (uploadPath(m[3], tripId, origin) !== path) continue;
      hit = true;
      out += line.slice(from, m.index);
      from = m.index + m[0].length;
      const next = line[from];
      const spaceAfter = next === undefined || next === " " || next === "\t";
      if (spaceAfter && /[ \t]$/.test(out)) out = out.slice(0, -1);          // "see it here" -> "see here"
      else if (!out && (next === " " || next === "\t")) from += 1;             // at the start: its space too
    }
    out += line.slice(from);
    if (hit && !out.trim()) continue;   // the line was only the link
    kept.push(out);
  }
  return kept.join("\n");
}

// The upload's id: the server stores a file as `<mediaId>.<ext>` (app/media.py).
export function mediaIdOf(path) {
  const name = String(path).split("/").pop();
  return name.split(".")[0];
}

// Whether to offer Remove, as the API decides (DELETE …/media/:id): an owner
// always; an editor for their own uploads, and when who uploaded is not known
// (the trip's list did not load: the server then says no in words); a viewer never.
export function mayRemove(role, me, uploadedBy) {
  if (role === "owner") return true;
  if (role !== "editor") return false;
  return !uploadedBy || uploadedBy === me;
}

export const NOT_YOURS = "Only the member who uploaded this file or an owner can remove it.";

// A refused Remove in plain words. `role`: the member's role as the page knows
// it now (a viewer was demoted meanwhile: the server's own sentence says so).
export function removeRefusal(err, role) {
  if (err && err.status === 403) return role === "viewer" && err.message ? err.message : NOT_YOURS;
  if (!err || !err.message || /^http_/.test(err.code || "")) return "The file could not be removed. Please try again.";
  return err.message;
}
