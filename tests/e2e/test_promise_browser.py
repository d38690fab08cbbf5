"""A plan's promise in a real Chromium, on the committed sample demo (``demo --sample``):
WAIR's recommendation stored as a plan, verified on a sample from the Approve page, approved
and run there; the page then shows the predicted, the verified and the realized saving per
window side by side, the very figures stored with the plan."""

from __future__ import annotations

import os
import subprocess

import pytest

from engine import api
from engine.core.config import load_settings
from security_helpers import ROOT, SECRET, ensure_account
from test_browser import CHROMIUM, CHROMIUM_ARGS, SCRIPT_DONE_JS, free_port

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM),
                       reason=f"{CHROMIUM} is missing (apt-get install chromium)"),
]

#: the dashboard's own Spark (verify and run) as small as the test suite's
CONFIG = """spark_master = "local[2]"
spark_driver_memory = "1g"
spark_shuffle_partitions = 4
"""


@pytest.fixture(scope="module")
def sample_demo_dashboard(tmp_path_factory):
    """The dashboard over ``demo --sample`` (Arrow writer, no Spark to build it), with the
    admin ``root`` and the approver ``alice``; yields (base URL, settings)."""
    from engine.cli.demo import build_demo
    from engine.cli.ui import start_ui, stop_ui, wait_until_ready

    home = tmp_path_factory.mktemp("promise-ui") / "home"
    home.mkdir(parents=True)
    (home / "layout-advisor.toml").write_text(CONFIG)
    settings = load_settings({"home": str(home)}, environ={})
    ensure_account(settings, "alice")  # and the admin root: the demo adds no admin of its own
    build_demo(settings, None, "iceberg", writer="arrow")
    port = free_port()
    proc = start_ui(settings, port=port, table="lineitem", address="127.0.0.1", quiet=True)
    assert isinstance(proc, subprocess.Popen)
    try:
        assert wait_until_ready(port, timeout_s=90, process=proc), "dashboard did not start"
        yield f"http://127.0.0.1:{port}", settings
    finally:
        stop_ui(proc, timeout_s=15)


def test_plan_verify_approve_run_shows_predicted_verified_realized(sample_demo_dashboard,
                                                                    tmp_path):
    from playwright.sync_api import sync_playwright

    from browser_helpers import sign_in
    from app.views import promise_text

    base, settings = sample_demo_dashboard
    timeout = 240_000
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1800})

            def idle() -> None:
                page.wait_for_timeout(500)
                page.wait_for_function(SCRIPT_DONE_JS, timeout=timeout)

            page.goto(f"{base}/recommendation", wait_until="domcontentloaded")
            store = page.get_by_role("button", name="Store as proposed plan")
            store.wait_for(timeout=timeout)
            idle()
            store.click()
            page.get_by_text("stored as", exact=False).first.wait_for(timeout=timeout)
            plan_id = api.list_plans(settings, "lineitem")[-1].id
            # stored while nobody was signed in: two approvers; alice through the API
            api.approve_plan(settings, plan_id, api.authenticate(settings, "alice", SECRET))

            page.goto(f"{base}/approve", wait_until="domcontentloaded")
            sign_in(page, ROOT, SECRET, timeout, SCRIPT_DONE_JS)
            verify = page.get_by_role("button", name="Verify on a sample")
            verify.wait_for(timeout=timeout)
            idle()
            verify.click()
            page.get_by_text(f"Verified by {ROOT}", exact=False).first.wait_for(timeout=timeout)
            idle()
            page.screenshot(path=str(tmp_path / "1-verified.png"), full_page=True)
            page.get_by_role("button", name="Approve", exact=True).click()
            run = page.get_by_role("button", name="Run now")
            run.wait_for(timeout=timeout)
            idle()
            run.click()
            page.get_by_text("New snapshot", exact=False).first.wait_for(timeout=timeout * 2)
            idle()
            page.screenshot(path=str(tmp_path / "2-ran.png"), full_page=True)
            assert page.locator("[data-testid='stException']").count() == 0
            shown = " ".join(page.get_by_text("Saving per window: predicted", exact=False)
                             .first.inner_text().split())
        finally:
            browser.close()

    plan = api.show_plan(settings, plan_id).to_json()
    checked = api.verification(settings, plan_id)
    realized = (plan["result"].get("re_estimated") or {}).get("saving_bytes")
    predicted = plan["predicted_saving"]["bytes"]
    assert plan["status"] == "succeeded" and checked is not None
    assert predicted > 0 and checked["verified_saving_bytes"] > 0 and realized > 0
    # the stored figures, as the page formats them, all three on one line
    want = promise_text(predicted, checked["verified_saving_bytes"], realized)
    assert shown == want.replace("**", ""), (shown, want)
    assert "not verified" not in shown and "not measured" not in shown
