// Review findings and their server-computed fixes (each fix is a list of
// edits the server verified; one press applies them all as one change).

import { h, showError, withBusy } from "./ui.js";
import { icon } from "./icons.js";

// Applies a fix with the button busy; resolves to whether it was applied.
export function applyFix(store, fix, button) {
  return withBusy(button, async () => {
    try {
      await store.edits(fix.edits || [{ op: fix.op, args: fix.args }]);
      return true;
    } catch (err) {
      showError(err);
      return false;
    }
  }, "Applying…");
}

export function fixButtons(store, fixes) {
  if (!store.canEdit || !fixes || !fixes.length) return null;
  return h("div", { class: "fixes" }, fixes.map((fix) => {
    const b = h("button", { type: "button", class: "btn btn-sm btn-fix", "data-needs-server": true, "data-fix-id": fix.id, "data-fkey": `fix:${fix.id}` }, fix.label);
    b.addEventListener("click", () => applyFix(store, fix, b));
    return b;
  }));
}

// A problem or a warning with its fixes; an observation (`info`) is a quiet
// line with an "i", never dressed as a warning.
export function findingBox(store, finding) {
  const severity = finding.severity || "info";
  return h("div", { class: `finding sev-${severity}`, "data-finding-id": finding.id, "data-kind": finding.kind, role: "note" },
    h("span", { class: "finding-icon" }, icon(severity === "info" ? "info" : "alert", { size: 16 })),
    h("div", null, h("p", null, finding.message), fixButtons(store, finding.fixes),
      // No fix: the server says why, in plain words ("No day of this trip has it open").
      !(finding.fixes || []).length && finding.noFixReason ? h("p", { class: "hint no-fix" }, finding.noFixReason) : null));
}
