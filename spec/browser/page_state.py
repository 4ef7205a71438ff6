"""What each open page showed when a browser test failed, added to the
failure as notes (PEP 678: pytest prints them under the error).

A wait that runs out says what it waited for, not where the page was
instead: on the sign-in form still, on an error the page explained, on
another screen. That is what a failure seen once, on a loaded CI machine,
needs to be understood later. The harness's `chromium()` and
`playwright_driver()` blocks call `note_pages` with the contexts they opened
before closing them.

Each note names the page's address, its screen (`body[data-screen]`), the
sync state the page publishes for tests (`<html data-*>`), its visible
headings, what it announced (alerts, statuses, toasts, an open dialog),
where the focus is, and its last console lines.
"""

from __future__ import annotations

from collections import deque

CONSOLE_LINES = 8   # the last console lines kept per page, any level
READ_TIMEOUT_MS = 10_000

_SUMMARY = """(root) => {
  const text = (el) => (el.innerText || el.textContent || "").replace(/\\s+/g, " ").trim().slice(0, 160);
  const shown = (el) => Boolean(el.offsetWidth || el.offsetHeight || el.getClientRects().length);
  const pick = (selector) =>
    [...document.querySelectorAll(selector)].filter(shown).map(text).filter(Boolean).slice(0, 6);
  const focused = document.activeElement;
  const label = (el) => el.getAttribute("aria-label") || (el.labels && el.labels[0] && text(el.labels[0])) || text(el);
  const named = (el) => `${el.tagName.toLowerCase()} ${label(el).slice(0, 80)}`;
  return {
    screen: (document.body && document.body.dataset.screen) || "",
    state: Object.entries(root.dataset).map(([k, v]) => `${k}=${v}`).join(" "),
    headings: pick("h1, h2, h3, [role=heading]"),
    announced: pick("[role=alert], [role=status], [role=dialog], dialog[open], .toast"),
    focus: focused && focused !== document.body ? named(focused).trim() : "",
  };
}"""


def console_tail() -> deque[str]:
    return deque(maxlen=CONSOLE_LINES)


def describe(page) -> str:
    """One page, in a few lines; never raises (the page may be gone)."""
    from playwright.sync_api import Error

    if page.is_closed():
        return f"{page.url}: closed"
    lines = [f"{page.url}"]
    try:   # bounded: a page stuck in a script must not turn a failure into a hang
        seen = page.locator(":root").evaluate(_SUMMARY, timeout=READ_TIMEOUT_MS)
    except Error as exc:    # crashed, stuck, or navigating away
        lines.append(f"  (could not read the page: {str(exc).splitlines()[0]})")
    else:
        lines.append(f"  screen {seen['screen'] or '-'}; {seen['state'] or 'no sync state'}")
        lines.append(f"  headings: {' | '.join(seen['headings']) or '-'}")
        if seen["announced"]:
            lines.append(f"  announced: {' | '.join(seen['announced'])}")
        if seen["focus"]:
            lines.append(f"  focus: {seen['focus']}")
    for line in getattr(page, "console_tail", ()):
        lines.append(f"  console {line[:200]}")
    for error in getattr(page, "errors", ()):
        lines.append(f"  page error {error[:200]}")
    return "\n".join(lines)


def note_pages(exc: BaseException, contexts) -> None:
    """Adds a note per open page of `contexts` to `exc` (not to a Ctrl-C)."""
    if isinstance(exc, (KeyboardInterrupt, SystemExit)):
        return
    from playwright.sync_api import Error

    for context in contexts:
        try:
            pages = list(context.pages)
        except Error:
            continue
        for page in pages:
            exc.add_note("What the page showed: " + describe(page))
