// Review findings and their server-computed fixes (each fix is a list of
// edits the server verified; one press applies them all as one change).

import { h, showError, withBusy } from "./ui.js";
import { icon } from "./icons.js";

// A fix is worked out on the trip as one version of it: it is sent with that
// version (`baseVersion`), so after another member's change it is refused
// (409 stale) rather than applied to a plan it was not checked against.
const STALE_FIX = "The plan changed since this fix was worked out, so it was not applied. The review is checked again for the plan as it is now.";

// The version of the latest review of `dayId` when it offers `fix` (the one
// on screen); null when it no longer does; undefined when unknown (an older
// server's review, without its version).
function offeredOn(store, fix, dayId) {
  const entry = dayId ? store.reviewOf(dayId) : null;
  const data = entry && entry.data;
  if (!data || typeof data.version !== "number") return undefined;
  const offered = (data.findings || []).some((f) => (f.fixes || []).some((x) => x.id === fix.id));
  return offered ? data.version : null;
}

// Applies a fix of `dayId`'s review with the button busy; resolves to whether it was applied.
export function applyFix(store, fix, button, dayId) {
  return withBusy(button, async () => {
    try {
      const baseVersion = offeredOn(store, fix, dayId);
      if (baseVersion === null) throw Object.assign(new Error(STALE_FIX), { code: "stale" });
      await store.edits(fix.edits || [{ op: fix.op, args: fix.args }], { baseVersion });
      return true;
    } catch (err) {
      if (err.code === "stale") {
        showError(new Error(STALE_FIX));
        store.refresh().catch(() => {}); // the newer trip brings its review, and fixes for it
      } else {
        showError(err);
      }
      return false;
    }
  }, "Applying…");
}

export function fixButtons(store, finding) {
  const fixes = finding.fixes;
  if (!store.canEdit || !fixes || !fixes.length) return null;
  return h("div", { class: "fixes" }, fixes.map((fix) => {
    const b = h("button", { type: "button", class: "btn btn-sm btn-fix", "data-needs-server": true, "data-fix-id": fix.id, "data-fkey": `fix:${fix.id}` }, fix.label);
    b.addEventListener("click", () => applyFix(store, fix, b, finding.dayId));
    return b;
  }));
}

// A problem or a warning with its fixes; an observation (`info`) is a quiet
// line with an "i", never dressed as a warning.
export function findingBox(store, finding) {
  const severity = finding.severity || "info";
  return h("div", { class: `finding sev-${severity}`, "data-finding-id": finding.id, "data-kind": finding.kind, role: "note" },
    h("span", { class: "finding-icon" }, icon(severity === "info" ? "info" : "alert", { size: 16 })),
    h("div", null, h("p", null, finding.message), fixButtons(store, finding),
      // No fix: the server says why, in plain words ("No day of this trip has it open").
      !(finding.fixes || []).length && finding.noFixReason ? h("p", { class: "hint no-fix" }, finding.noFixReason) : null));
}
