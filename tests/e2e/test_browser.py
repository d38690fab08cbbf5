"""The dashboard in a real browser: ``layout-advisor ui`` + Debian chromium via playwright.

Starts the dashboard as a subprocess on a free port against a small test workspace, opens
every page, waits for its plotly charts and key text, checks that no exception is shown
and saves a screenshot of each page (``UPDATE_SCREENSHOTS=1`` copies them to
``docs/screenshots/``; the committed ones come from the real demo table, see
``bench/ui/bench_ui.py --screenshots``).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from app_workspace import build_table

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-dev-shm-usage"]
VIEWPORT = {"width": 1400, "height": 2400}
REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "docs" / "screenshots"

# (url path, file name, text that must appear, plotly charts expected at least,
#  button to press first or None)
PAGES = [
    ("", "overview", "Clustering health per column", 1, None),
    ("partitions", "partitions", "Depth profile", 2, None),
    ("workload", "workload", "One query over the partitions", 4, None),
    ("recommendation", "recommendation", "Data-driven plans for comparison", 1, None),
    ("approve", "approve", "Snapshot history", 0, None),
    ("whatif", "whatif", "Summary", 3, "Replay on this table"),  # the sidebar table's what-if
    ("design", "design", "PAW (seed 001)", 0, None),
]

#: the script finished: Streamlit's state on the app root (the running-man icon shows only
#: after a delay, so its absence proves nothing)
SCRIPT_DONE_JS = ("() => document.querySelector('[data-testid=\"stApp\"]')"
                  "?.getAttribute('data-test-script-state') === 'notRunning'")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.spark,
    pytest.mark.skipif(not os.path.exists(CHROMIUM),
                       reason=f"{CHROMIUM} is missing (apt-get install chromium); "
                              "the browser test drives Debian's chromium, never a downloaded one"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


#: the dashboard fixture's workspace home (the journey approves once through the API)
DASHBOARD_HOME: list[Path] = []


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory, spark):
    """The UI server on a free port over a fresh small workspace; yields its base URL."""
    from engine.cli.ui import start_ui, stop_ui, wait_until_ready
    from engine.core.config import load_settings

    home = tmp_path_factory.mktemp("browser") / "home"
    build_table(home, "lineitem", spark=spark)
    settings = load_settings({"home": str(home)}, environ={})
    DASHBOARD_HOME.append(home)
    port = free_port()
    proc = start_ui(settings, port=port, table="lineitem", address="127.0.0.1",
                    quiet=True)
    assert isinstance(proc, subprocess.Popen)
    try:
        assert wait_until_ready(port, timeout_s=90, process=proc), "dashboard did not start"
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_ui(proc, timeout_s=15)


def capture_pages(base_url: str, out_dir: Path, pages=PAGES, timeout_ms: int = 60_000) -> dict:
    """Open each page, wait for content and charts, screenshot it; returns per-page facts."""
    from playwright.sync_api import sync_playwright

    out_dir.mkdir(parents=True, exist_ok=True)
    facts = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            for path, name, text, charts, press in pages:
                page.goto(f"{base_url}/{path}", wait_until="domcontentloaded")
                if press:
                    button = page.get_by_role("button", name=press)
                    button.wait_for(timeout=timeout_ms)
                    page.wait_for_timeout(500)
                    button.click()
                page.get_by_text(text, exact=True).first.wait_for(timeout=timeout_ms)
                if charts:
                    page.wait_for_function(
                        f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {charts}",
                        timeout=timeout_ms)
                page.wait_for_function(SCRIPT_DONE_JS, timeout=timeout_ms)
                page.wait_for_timeout(1500)  # let plotly finish its transitions
                shot = out_dir / f"{name}.png"
                page.screenshot(path=str(shot), full_page=True)
                facts[name] = {
                    "exceptions": page.locator("[data-testid='stException']").count(),
                    "errors": page.locator("[data-testid='stAlertContentError']").all_inner_texts(),
                    "charts": page.locator(".js-plotly-plot").count(),
                    "screenshot": shot,
                }
        finally:
            browser.close()
    return facts


def test_every_page_renders_in_chromium(dashboard, tmp_path):
    facts = capture_pages(dashboard, tmp_path / "screenshots")
    for _, name, _, charts, _ in PAGES:
        f = facts[name]
        assert f["exceptions"] == 0, f"{name}: an exception is shown"
        assert f["errors"] == [], f"{name}: errors shown: {f['errors']}"
        assert f["charts"] >= charts, f"{name}: {f['charts']} charts, expected {charts}"
        assert f["screenshot"].stat().st_size > 20_000, f"{name}: screenshot looks empty"
    if os.environ.get("UPDATE_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        for f in facts.values():
            shutil.copy(f["screenshot"], SCREENSHOTS / f["screenshot"].name)


def _snapshot_options(page) -> list[str]:
    """The labels of the sidebar's snapshot picker (``id · operation · time (current)``),
    read by opening it: the table's history as the DBA sees it."""
    picker = page.locator("[data-testid='stSidebar'] [data-testid='stSelectbox']").nth(1)
    picker.click()
    page.get_by_role("option").first.wait_for(timeout=30_000)
    labels = page.get_by_role("option").all_inner_texts()
    page.keyboard.press("Escape")
    return [label for label in labels if label.strip() != "current"]


def test_journey_store_sign_in_approve_run_roll_back_in_chromium(dashboard, tmp_path):
    """A DBA's path through the pages in the browser: WAIR's recommendation stored as a
    plan, sign in as an approver (an admin: rolling back needs one), approve it, run it
    with progress, see the realized saving beside the predicted one, then roll the table
    back to the snapshot before the run and see its history grow by a rollback snapshot
    that is current. Screenshots of each step go to ``tmp_path`` (and to
    ``docs/screenshots/journey-*.png`` with ``UPDATE_SCREENSHOTS=1``)."""
    from playwright.sync_api import sync_playwright

    from browser_helpers import sign_in
    from security_helpers import ROOT, SECRET

    timeout = 240_000
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1600})

            def idle() -> None:
                page.wait_for_timeout(500)
                page.wait_for_function(SCRIPT_DONE_JS, timeout=timeout)

            page.goto(f"{dashboard}/recommendation", wait_until="domcontentloaded")
            store = page.get_by_role("button", name="Store as proposed plan")
            store.wait_for(timeout=timeout)
            idle()
            store.click()
            page.get_by_text("stored as", exact=False).first.wait_for(timeout=timeout)
            page.screenshot(path=str(tmp_path / "1-stored.png"), full_page=True)
            # stored while nobody was signed in: it needs two different approvers; alice
            # approves first through the API, the admin second in the browser
            from engine import api
            from engine.core.config import load_settings

            ws_settings = load_settings({"home": str(DASHBOARD_HOME[-1])}, environ={})
            stored = api.list_plans(ws_settings, "lineitem")[-1].id
            api.approve_plan(ws_settings, stored, api.authenticate(ws_settings, "alice", SECRET))

            page.goto(f"{dashboard}/approve", wait_until="domcontentloaded")
            sign_in(page, ROOT, SECRET, timeout, SCRIPT_DONE_JS)  # as the dashboard benchmark signs in
            page.get_by_role("button", name="Approve", exact=True).click()
            run = page.get_by_role("button", name="Run now")
            run.wait_for(timeout=timeout)
            idle()
            run.click()
            page.get_by_text("New snapshot", exact=False).first.wait_for(timeout=timeout * 2)
            idle()
            page.screenshot(path=str(tmp_path / "2-ran.png"), full_page=True)
            assert page.locator("[data-testid='stException']").count() == 0
            assert page.get_by_text("Re-estimated / predicted").count() >= 1

            before = _snapshot_options(page)  # newest first: the run's snapshot is current
            assert len(before) == 2 and "(current)" in before[0] and "create" in before[1]
            base_id = before[1].split(" · ")[0]
            idle()
            page.get_by_text("Snapshot history", exact=True).first.scroll_into_view_if_needed()
            page.get_by_text("I want snapshot", exact=False).first.click()
            idle()
            page.get_by_role("button", name="Roll back", exact=True).click()
            page.get_by_text("is current again", exact=False).first.wait_for(timeout=timeout)
            idle()
            page.screenshot(path=str(tmp_path / "3-rolled-back.png"), full_page=True)
            after = _snapshot_options(page)
            assert len(after) == 3, after
            assert "rollback" in after[0] and "(current)" in after[0]
            assert after[1:] == [before[0].replace(" (current)", ""), before[1]]
            flash = page.get_by_text("is current again", exact=False).first.inner_text()
            assert base_id in flash, (base_id, flash)  # the snapshot before the run is back
            assert page.locator("[data-testid='stException']").count() == 0
        finally:
            browser.close()
    if os.environ.get("UPDATE_SCREENSHOTS") == "1":
        for shot, name in (("1-stored", "journey-1-stored"), ("2-ran", "journey-2-ran"),
                           ("3-rolled-back", "journey-3-rolled-back")):
            shutil.copy(tmp_path / f"{shot}.png", SCREENSHOTS / f"{name}.png")
