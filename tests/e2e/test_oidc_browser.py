"""OIDC sign-in end to end in a real browser: a real OpenID Connect provider (panva's
``oidc-provider`` on node, ``tests/oidc_provider/``), the dashboard under ``streamlit run``
with an ``[auth]`` section in ``.streamlit/secrets.toml``, and Debian's chromium.

The user clicks "Sign in with ...", logs in at the provider (its development login form:
any name, any password), consents, comes back to the dashboard, and the sidebar shows the
approver linked to that account; an account linked to nobody is read-only. Needs node,
``npm ci --prefix tests/oidc_provider`` and streamlit's ``auth`` extra (Authlib and httpx);
skipped with the missing piece named otherwise.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from engine import api
from engine.core.config import load_settings
from plan_helpers import make_table
from security_helpers import ROOT, sign_in
from test_browser import CHROMIUM, CHROMIUM_ARGS, SCRIPT_DONE_JS, free_port

OP_DIR = Path(__file__).resolve().parents[1] / "oidc_provider"
CLIENT_SECRET = "browser-test-client-secret"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing"),
    pytest.mark.skipif(shutil.which("node") is None, reason="node is missing"),
    pytest.mark.skipif(importlib.util.find_spec("httpx") is None,
                       reason="httpx is missing: st.login needs streamlit[auth] (Authlib + "
                              "httpx), as pyproject.toml declares"),
    pytest.mark.skipif(not (OP_DIR / "node_modules" / "oidc-provider").is_dir(),
                       reason="run `npm ci --prefix tests/oidc_provider` first"),
]


def wait_http(url: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


@pytest.fixture
def stack(tmp_path):
    """Provider + dashboard over a small workspace where alice is linked to the provider's
    account ``alice``; yields ``(dashboard_url, settings, issuer)``."""
    from engine.cli.ui import streamlit_command, ui_environment, wait_until_ready, stop_ui

    settings = load_settings({"home": str(tmp_path / "home"), "target_rows": 1000},
                             environ={})
    make_table(settings, n=2000, rows_per_file=500)
    root = sign_in(settings, ROOT)
    sign_in(settings, "alice")
    op_port, ui_port = free_port(), free_port()
    issuer = f"http://localhost:{op_port}"
    api.link_oidc(settings, "alice", issuer, subject="alice", actor=root)
    redirect = f"http://localhost:{ui_port}/oauth2callback"
    secrets = tmp_path / "cwd" / ".streamlit" / "secrets.toml"
    secrets.parent.mkdir(parents=True)
    secrets.write_text(f"""[auth]
redirect_uri = "{redirect}"
cookie_secret = "browser-test-cookie-secret-0123456789"

[auth.local]
client_id = "layout-advisor"
client_secret = "{CLIENT_SECRET}"
server_metadata_url = "{issuer}/.well-known/openid-configuration"
client_kwargs = {{ prompt = "login" }}
""")
    op = subprocess.Popen(["node", str(OP_DIR / "provider.mjs")], cwd=OP_DIR,
                          env={**os.environ, "OP_PORT": str(op_port), "OP_REDIRECT": redirect,
                               "OP_CLIENT_SECRET": CLIENT_SECRET},
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ui = subprocess.Popen(streamlit_command(ui_port, table="lineitem", address="127.0.0.1"),
                          cwd=secrets.parent.parent, env=ui_environment(settings),
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          start_new_session=True)
    try:
        wait_http(f"{issuer}/.well-known/openid-configuration", 30)
        assert wait_until_ready(ui_port, timeout_s=90, process=ui), "dashboard did not start"
        yield f"http://localhost:{ui_port}", settings, issuer
    finally:
        stop_ui(ui, timeout_s=15)
        op.terminate()
        op.wait(timeout=10)


def provider_login(page, account: str, timeout_ms: int) -> None:
    """The dashboard's "Sign in with local", then the provider's login and consent forms."""
    page.get_by_text("Sign in to approve").first.click()
    page.get_by_role("button", name="Sign in with local").click(timeout=timeout_ms)
    page.locator("input[name=login]").fill(account, timeout=timeout_ms)
    page.locator("input[name=password]").fill("anything")
    page.locator("button[type=submit]").click()
    page.locator("button[type=submit]").click(timeout=timeout_ms)  # consent: "Continue"
    page.wait_for_url(lambda url: "/oauth2callback" not in url and "localhost" in url,
                      timeout=timeout_ms)


def click_until(page, button, appears, timeout_ms: int) -> None:
    """Click ``button`` until ``appears`` shows: a click that lands while Streamlit reruns
    the script is lost (the button is redrawn), so one click is not enough on a busy
    machine (CI once waited 90 s for a provider page that a lost click never asked for)."""
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        if appears.count():
            return
        if button.count():
            try:
                button.click(timeout=10_000)
            except Exception:  # redrawn under the click, or gone because the page moved on
                pass
        try:
            appears.wait_for(timeout=10_000)
            return
        except Exception:
            if time.monotonic() > deadline:
                raise


def test_browser_sign_in_with_provider(stack):
    from playwright.sync_api import sync_playwright

    url, settings, issuer = stack
    timeout_ms = 90_000
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                     headless=True)
        try:
            page = browser.new_page()
            page.set_default_timeout(timeout_ms)
            page.goto(url, wait_until="domcontentloaded")
            page.wait_for_function(SCRIPT_DONE_JS)
            # no reload: the server imports pandas before any session (app/server.py)
            assert page.locator("[data-testid='stException']").count() == 0
            provider_login(page, "alice", timeout_ms)
            sidebar = page.locator("[data-testid='stSidebar']")
            sidebar.get_by_text("Signed in as alice (approver) with local").wait_for(
                timeout=timeout_ms)
            page.wait_for_function(SCRIPT_DONE_JS, timeout=timeout_ms)
            assert page.locator("[data-testid='stException']").count() == 0
            # sign out: st.logout ends the session at the provider too (RP-initiated logout,
            # confirmed on the provider's page), and the sidebar offers the provider again
            click_until(page, sidebar.get_by_role("button", name="Sign out"),
                        page.get_by_role("button", name="Yes, sign me out"), timeout_ms)
            page.get_by_role("button", name="Yes, sign me out").click()
            page.wait_for_url(lambda u: u.startswith(url) and "oauth2callback" not in u)
            sidebar.get_by_text("Sign in to approve").first.wait_for(timeout=timeout_ms)

            other = browser.new_page()
            other.set_default_timeout(timeout_ms)
            other.goto(url, wait_until="domcontentloaded")
            provider_login(other, "mallory", timeout_ms)
            other.locator("[data-testid='stSidebar']").get_by_text(
                "Signed in with local as mallory@example.com: read-only").wait_for(
                timeout=timeout_ms)
        finally:
            browser.close()
    log = [(a["actor"], a["action"], a["reason"]) for a in api.audit_log(settings)]
    assert ("alice", "sign-in", f"OIDC subject of {issuer}") in log
    assert ("oidc:mallory@example.com", "sign-in-unlinked",
            f"subject mallory of {issuer}: no approver linked; read-only") in log
