"""Signing in to the dashboard in a real browser (Playwright), as the DBA does: the
browser journey test and the dashboard benchmark (``bench/ui/README.md``) sign in alike."""

from __future__ import annotations

from typing import Any


def sign_in(page: Any, name: str, secret: str, timeout_ms: float = 120_000,
            done_js: str | None = None) -> None:
    """Sign in through the sidebar's "Sign in to approve" form, as a user does, and wait
    until the sidebar says "Signed in as". The session lives in Streamlit's session state,
    so it lasts for the browser tab: reach other pages by the sidebar (a full reload starts
    a new session, signed out). ``done_js``: a JavaScript predicate for the script being
    idle (waited on between steps: a widget changed while the script runs can be lost)."""
    def idle() -> None:
        page.wait_for_timeout(300)
        if done_js:
            page.wait_for_function(done_js, timeout=timeout_ms, polling=50)

    opener = page.get_by_text("Sign in to approve").first
    opener.wait_for(timeout=timeout_ms)
    idle()
    opener.click()
    page.get_by_label("Approver").fill(name)
    page.get_by_label("Secret").fill(secret)
    page.get_by_label("Secret").press("Enter")
    idle()
    page.get_by_role("button", name="Sign in", exact=True).click()
    page.get_by_text("Signed in as").first.wait_for(timeout=timeout_ms)
    idle()
