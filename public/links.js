// Where a Markdown link or image in a note, a comment or a message may go:
// this trip's uploads, or a web address. Nothing else.
//
// `![alt](url)` becomes an image the browser fetches at once with the
// viewer's cookie, so a prefix check is not enough: `/api/uploads/../trips/
// <id>/live` resolves to the trip's live stream. The address is resolved and
// normalised first, as the browser will, and allowed only when
// - "upload": it is exactly one of this trip's stored files on our origin,
//   written in the one form the browser keeps (no query, fragment, `..`,
//   escapes or backslashes);
// - "web": it is an http(s)://host/... address on another origin (shown as a
//   link, never as an image), its host free of %, \ and @.
// Anything else is null: the renderer shows the text. app/markdown_links.py is
// the server's twin; both run spec/fixtures/markdown_links.json.

const STORED = /^[0-9a-f]{16}\.(png|jpg|webp|pdf|txt|md|csv)$/;
const TRIP_ID = /^[0-9a-f]{16}$/;
const WEB = /^https?:\/\//i;

export function linkTarget(url, tripId, origin = globalThis.location ? globalThis.location.origin : "") {
  if (typeof url !== "string" || !TRIP_ID.test(tripId || "") || !origin) return null;
  let resolved;
  try {
    resolved = new URL(url, `${origin}/`);
  } catch {
    return null;
  }
  const folder = `/api/uploads/trips/${tripId}/`;
  if (resolved.origin === origin) {
    const canonical = url === resolved.pathname || url === resolved.href;
    const file = resolved.pathname.startsWith(folder) ? resolved.pathname.slice(folder.length) : "";
    return canonical && STORED.test(file) && !resolved.search && !resolved.hash ? "upload" : null;
  }
  if (!WEB.test(url) || !/^https?:$/.test(resolved.protocol)) return null;
  const authority = url.split("/")[2];
  if (/[%\\@]/.test(authority) || /[\u0000-\u0020]/.test(url)) return null;
  return "web";
}
