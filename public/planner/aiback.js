// When AI help is back after the day's AI limit (503 `ai_limit`), in the
// member's own time zone. The server's day ends at 00:00 UTC (its `resetsAt`),
// which is rarely midnight where the member is, so "back at midnight UTC"
// would leave them to do the sum. DOM-free, so node tests it in any zone.

const DAY_MS = 86_400_000;

function clock(date) {
  return `${String(date.getHours()).padStart(2, "0")}:${String(date.getMinutes()).padStart(2, "0")}`;
}

function localDay(date) {
  return Date.UTC(date.getFullYear(), date.getMonth(), date.getDate()); // a calendar day, whatever DST does
}

// "AI help is back at 17:00." (later today), "… at midnight." (tonight's),
// "… tomorrow at 01:00.", "… on Thu 3 Dec at 09:00." (further: a far clock);
// "" when `resetsAt` is missing or unreadable (the server's sentence stands alone).
export function aiBackWords(resetsAt, now = new Date()) {
  const at = typeof resetsAt === "string" ? new Date(resetsAt) : null;
  if (!at || Number.isNaN(at.getTime())) return "";
  if (at <= now) return "AI help should be back now: try again.";
  const days = Math.round((localDay(at) - localDay(now)) / DAY_MS);
  if (days === 0) return `AI help is back at ${clock(at)}.`;
  if (days === 1 && clock(at) === "00:00") return "AI help is back at midnight.";
  if (days === 1) return `AI help is back tomorrow at ${clock(at)}.`;
  const date = new Intl.DateTimeFormat("en-GB", { weekday: "short", day: "numeric", month: "short" }).format(at);
  return `AI help is back on ${date} at ${clock(at)}.`;
}

// The refusal's own sentence, then when AI is back.
export function aiLimitText(err) {
  const back = aiBackWords(err.details && err.details.resetsAt);
  return back ? `${err.message.replace(/\.?$/, ".")} ${back}` : err.message;
}
