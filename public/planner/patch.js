// A write's small answer applied to the trip the page shows (issue 26): an
// op answers what it changed (`change`: the trip's own fields, the order of
// the days, the days whose contents changed, and members (with former
// members), expenses or preferences when they changed), not the whole trip. The store applies it
// (store.applyWriteAnswer, the one place the page takes a write's answer).
// No DOM here: spec/js/patch_check.mjs runs it under node against the server.

// `trip` (the server's trip as the page has it) with a write's `change`
// applied, or null when the change does not start from this trip's version.
export function patched(trip, change) {
  if (!trip || change.fromVersion == null || trip.version !== change.fromVersion) return null;
  const days = new Map(trip.days.map((d) => [d.id, d]));
  for (const d of change.days) days.set(d.id, d);
  if (!change.dayIds.every((id) => days.has(id))) return null;
  const next = { ...trip, ...change.trip, days: change.dayIds.map((id) => days.get(id)) };
  for (const key of ["members", "formerMembers", "expenses", "expenseSummary", "preferences"]) {
    if (change[key] !== undefined && change[key] !== null) next[key] = change[key];
  }
  return next;
}
