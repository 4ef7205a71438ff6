"""A browser test that fails says what each of its open pages showed
(spec/browser/page_state.py): the address, the screen, its headings, what it
announced and its last console lines, as notes under the error. A wait that
ran out on a loaded machine can then be understood from the report alone."""

from __future__ import annotations

import pytest

from browser.harness import chromium, live, offline, open_page

pytestmark = pytest.mark.browser


class Planted(AssertionError):
    """The failure this test makes on purpose."""


def test_a_failure_carries_what_each_open_page_showed(settings):
    with pytest.raises(Planted) as failure:
        with live(offline(settings)) as server, chromium() as browser:
            signed_out = open_page(browser, server)
            signed_out.goto("/#/signup")
            signed_out.get_by_role("heading", name="Create your account").wait_for()
            signed_out.evaluate("() => console.info('a line the page logged')")
            other = open_page(browser, server)
            other.goto("/")
            other.get_by_role("heading", name="Welcome back").wait_for()
            raise Planted("the test's own failure")

    notes = failure.value.__notes__
    assert len(notes) == 2, notes
    signup, signin = notes
    assert signup.startswith("What the page showed: http://127.0.0.1:") and "/#/signup" in signup.splitlines()[0]
    assert "headings: Create your account" in signup
    assert "screen auth" in signup
    assert "console info: a line the page logged" in signup
    assert "headings: Welcome back" in signin and "a line the page logged" not in signin
