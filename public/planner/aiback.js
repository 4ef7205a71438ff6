// When AI help is back after the day's AI limit (503 `ai_limit`), or a
// member's own share of it renews (429 `ai_user_limit`), in the member's own
// time zone. The server's day ends at 00:00 UTC (its `resetsAt`),
// which is rarely midnight where the member is, so "back at midnight UTC"
// would leave them to do the sum. DOM-free, so node tests it in any zone.

const DAY_MS = 86_400_000;

function clock(date) {
  return `${String(date.getHours()).padStart(2, "0")}:${String(date.getMinutes()).padStart(2, "0")}`;
}

function localDay(date) {
  return Date.UTC(date.getFullYear(), date.getMonth(), date.getDate()); // a calendar day, whatever DST does
}

// When `resetsAt` comes, in the member's zone: "at 17:00" (later today), "at
// midnight" (tonight's), "tomorrow at 01:00", "on Thu 3 Dec at 09:00"
// (further: a far clock); "now" when it has passed; null when `resetsAt` is
// missing or unreadable.
function whenBack(resetsAt, now) {
  const at = typeof resetsAt === "string" ? new Date(resetsAt) : null;
  if (!at || Number.isNaN(at.getTime())) return null;
  if (at <= now) return "now";
  const days = Math.round((localDay(at) - localDay(now)) / DAY_MS);
  if (days === 0) return `at ${clock(at)}`;
  if (days === 1 && clock(at) === "00:00") return "at midnight";
  if (days === 1) return `tomorrow at ${clock(at)}`;
  const date = new Intl.DateTimeFormat("en-GB", { weekday: "short", day: "numeric", month: "short" }).format(at);
  return `on ${date} at ${clock(at)}`;
}

// "AI help is back at 17:00.", "… at midnight.", "… tomorrow at 01:00.",
// "… on Thu 3 Dec at 09:00."; "" without a readable `resetsAt` (the
// server's sentence stands alone).
export function aiBackWords(resetsAt, now = new Date()) {
  const when = whenBack(resetsAt, now);
  if (!when) return "";
  return when === "now" ? "AI help should be back now: try again." : `AI help is back ${when}.`;
}

// The refusal's own sentence, then when AI is back.
export function aiLimitText(err) {
  const back = aiBackWords(err.details && err.details.resetsAt);
  return back ? `${err.message.replace(/\.?$/, ".")} ${back}` : err.message;
}

// A member's own share of the day's AI is spent (429 `ai_user_limit`): the
// server says "It renews at midnight UTC, in 9 h 30 min." (app/aiusage.py), a
// sum left to the member. The page keeps its first sentence (what happened)
// and says when the share renews on the member's own clock: "You have used
// your share of today's AI help. It renews tomorrow at 01:00." Without a
// readable `resetsAt` the server's words stand.
export function aiShareText(err, now = new Date()) {
  const when = whenBack(err.details && err.details.resetsAt, now);
  if (!when) return err.message;
  const [happened] = err.message.split(/(?<=\.)\s+/);
  return when === "now" ? `${happened} It should have renewed by now: try again.` : `${happened} It renews ${when}.`;
}
