// Rendering by region without losing what people are doing.
//
// A region is an element that is built once and then patched: `patch(el, sig,
// build)` rebuilds its children only when its signature (a string of the data
// it shows) changed. A list is reconciled by key: `reconcile(list, items, …)`
// keeps each child whose item is unchanged, patches changed ones in place,
// creates new ones and drops the gone, in the items' order. Text being typed,
// focus, open threads and scroll positions therefore survive a poll or push
// that brings someone else's change.

// A signature for a piece of data: equal data, equal string.
export const sig = (...parts) => JSON.stringify(parts);

// Rebuilds `el`'s children from `build()` when `signature` changed; returns
// whether it did. Focus inside comes back to the element with the same
// `data-fkey`, so a rebuilt button keeps the keyboard where it was.
export function patch(el, signature, build) {
  if (el._sig === signature) return false;
  el._sig = signature;
  const fkey = focusKeyIn(el);
  el.replaceChildren(...nodes(build()));
  if (fkey) refocus(el, fkey);
  return true;
}

// Makes `list`'s children follow `items`. Each child carries data-key =
// key(item). For an existing child, `update(el, item)` runs only when
// signature(item) changed (without `update` the child is rebuilt with
// `create`); new items get `create(item)`. Children without a key are removed.
export function reconcile(list, items, { key, signature, create, update = null }) {
  const wanted = new Map(items.map((item) => [String(key(item)), item]));
  const existing = new Map();
  for (const el of [...list.children]) {
    const k = el.dataset.key;
    if (k === undefined || !wanted.has(k) || existing.has(k)) el.remove();
    else existing.set(k, el);
  }
  let cursor = list.firstElementChild;
  for (const [k, item] of wanted) {
    const s = signature ? signature(item) : null;
    let el = existing.get(k);
    if (!el) {
      el = create(item);
      el.dataset.key = k;
      el._sig = s;
    } else if (s === null || el._sig !== s) {
      if (update) {
        update(el, item);
      } else {
        const fresh = create(item);
        fresh.dataset.key = k;
        const fkey = focusKeyIn(el);
        if (el === cursor) cursor = fresh;
        el.replaceWith(fresh);
        el = fresh;
        if (fkey) refocus(el, fkey);
      }
      el._sig = s;
    }
    if (el === cursor) cursor = cursor.nextElementSibling;
    else moveBefore(list, el, cursor);
  }
}

// insertBefore blurs a moved element that holds focus: give it back, with
// the caret where it was.
function moveBefore(list, el, before) {
  const active = document.activeElement;
  const inside = active && active !== document.body && el.contains(active) ? active : null;
  const range = inside && typeof inside.selectionStart === "number" ? [inside.selectionStart, inside.selectionEnd] : null;
  list.insertBefore(el, before);
  if (inside && document.activeElement !== inside) {
    inside.focus({ preventScroll: true });
    if (range) inside.setSelectionRange(...range);
  }
}

function focusKeyIn(el) {
  const active = document.activeElement;
  if (!active || active === document.body || !el.contains(active)) return null;
  return active.dataset.fkey || null;
}

function refocus(el, fkey) {
  const target = [...el.querySelectorAll("[data-fkey]")].find((x) => x.dataset.fkey === fkey);
  if (target) target.focus({ preventScroll: true });
}

function nodes(built) {
  return [built].flat(Infinity).filter((x) => x !== null && x !== undefined && x !== false)
    .map((x) => (x instanceof Node ? x : document.createTextNode(String(x))));
}
