// What the page shows while writes wait to be sent (outbox.js, `kept`): the trip
// as the server last sent it, with the waiting writes laid over it, so a
// stop moved offline shows where it was moved and a vote shows as given.
// Each changed stop is marked `pending` (the timeline says "Waiting to
// send"); a stop added offline has the id "pending:<key>" and no actions
// until the server has it. This is a picture, never sent anywhere: the
// server applies the writes with its own rules, and its answer replaces the
// picture. Times are left as the server computed them (a note says they are
// worked out again once the changes are sent); an expense added or changed
// offline shows in the list of expenses, marked `pending` (a new one with the
// id "pending:<key>"), but not in the balances, which are the server's sums.
// Nothing leaves the picture: deletes need a connection (the registry does
// not mark them `replay`; their buttons carry data-needs-server), so none is
// ever waiting. spec/js/project.test.mjs checks that every op the page keeps
// offline shows here, so one added to `offlineOps` cannot go unseen.

export function projectTrip(trip, writes) {
  const waiting = (writes || []).filter((w) => w.state === "waiting" && w.kept);
  if (!trip || !waiting.length) return trip;
  const out = { ...trip, days: trip.days.map((d) => ({ ...d, stops: [...d.stops] })) };
  for (const write of waiting) {
    if (write.kind === "vote") vote(out, write);
    else if (write.kind === "comment") changeStop(out, write.stopId, (s) => ({ commentCount: (s.commentCount || 0) + 1 }));
    else if (write.kind === "op") (OPS[write.op] || (() => {}))(out, write.body, write);
  }
  for (const day of out.days) day.stops.forEach((s, i) => { if (s.position !== i) day.stops[i] = { ...s, position: i }; });
  return out;
}

function find(trip, stopId) {
  for (const day of trip.days) {
    const index = day.stops.findIndex((s) => s.id === stopId);
    if (index >= 0) return { day, index };
  }
  return null;
}

function changeStop(trip, stopId, change) {
  const at = find(trip, stopId);
  if (!at) return;
  const stop = at.day.stops[at.index];
  at.day.stops[at.index] = { ...stop, ...change(stop), pending: true };
}

function vote(trip, write) {
  changeStop(trip, write.stopId, (s) => {
    const votes = { up: 0, down: 0, mine: 0, ...(s.votes || {}) };
    if (votes.mine > 0) votes.up -= 1;
    if (votes.mine < 0) votes.down -= 1;
    votes.mine = write.body.value;
    if (votes.mine > 0) votes.up += 1;
    if (votes.mine < 0) votes.down += 1;
    return { votes };
  });
}

const STOP_FIELDS = ["name", "kind", "note", "durationMin", "setTime", "meal", "address", "placeId", "lat", "lng"];

function given(args, fields) {
  return Object.fromEntries(fields.filter((f) => f in args).map((f) => [f, args[f]]));
}

const EXPENSE_FIELDS = ["title", "amountMinor", "currency", "paidBy", "split", "dayId", "stopId"];

const OPS = {
  add_expense(trip, args, write) {
    trip.expenses = [...(trip.expenses || []), { ...given(args, EXPENSE_FIELDS), id: `pending:${write.key}`, pending: true }];
  },
  update_expense(trip, args) {
    trip.expenses = (trip.expenses || []).map((e) => (e.id === args.expenseId ? { ...e, ...given(args, EXPENSE_FIELDS), pending: true } : e));
  },
  move_stop(trip, args) {
    const at = find(trip, args.stopId);
    const target = trip.days.find((d) => d.id === args.toDayId);
    if (!at || !target) return;
    const [stop] = at.day.stops.splice(at.index, 1);
    target.stops.splice(Math.min(args.position, target.stops.length), 0, { ...stop, pending: true });
  },
  update_stop(trip, args) {
    changeStop(trip, args.stopId, () => given(args, STOP_FIELDS));
  },
  update_day(trip, args) {
    const index = trip.days.findIndex((d) => d.id === args.dayId);
    if (index >= 0) trip.days[index] = { ...trip.days[index], ...given(args, ["title", "note", "startTime"]) };
  },
  insert_stop(trip, args, write) {
    const day = trip.days.find((d) => d.id === args.dayId);
    if (!day) return;
    const after = args.afterStopId ? day.stops.findIndex((s) => s.id === args.afterStopId) : day.stops.length - 1;
    const previous = day.stops[after];
    const duration = args.durationMin || 60;
    const start = args.setTime ? minutes(args.setTime) : previous ? previous.endMinutes : minutes(day.startTime || "09:00");
    day.stops.splice(after + 1, 0, {
      kind: "sight", note: "", ...given(args, STOP_FIELDS), durationMin: duration, id: `pending:${write.key}`,
      startMinutes: start, endMinutes: start + duration, votes: { up: 0, down: 0, mine: 0 }, commentCount: 0, pending: true,
    });
  },
};

function minutes(hhmm) {
  const [h, m] = String(hhmm).split(":").map(Number);
  return h * 60 + m;
}
