"""Where a DBA looks when no plan is proposed, in a real Chromium: the Approve-and-run page
(its plan list is empty) and the Recommendation page say why WAIR declines, with the
decision's own numbers, and the busier-workload what-if answers at what rate of the same
queries WAIR would propose: the reason is written."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from demo_helpers import calibrated_demo
from engine import api
from engine.core.fmt import format_number
from test_browser import CHROMIUM, CHROMIUM_ARGS, SCRIPT_DONE_JS, free_port

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM),
                       reason=f"{CHROMIUM} is missing (apt-get install chromium)"),
]


@pytest.fixture(scope="module")
def declined_dashboard(tmp_path_factory):
    """The dashboard over the calibrated sample demo; yields (base URL, settings)."""
    from engine.cli.ui import start_ui, stop_ui, wait_until_ready

    settings = calibrated_demo(tmp_path_factory.mktemp("declined-ui") / "home")
    port = free_port()
    proc = start_ui(settings, port=port, table="lineitem", address="127.0.0.1", quiet=True)
    assert isinstance(proc, subprocess.Popen)
    try:
        assert wait_until_ready(port, timeout_s=90, process=proc), "dashboard did not start"
        yield f"http://127.0.0.1:{port}", settings
    finally:
        stop_ui(proc, timeout_s=15)


def test_no_plan_pages_say_why_with_the_numbers(declined_dashboard, tmp_path):
    from playwright.sync_api import sync_playwright

    base, settings = declined_dashboard
    rec = api.preview_plan(settings, "lineitem", "wair")
    assert rec.status == "no-action"
    d, be = rec.details, rec.details["break_even"]
    # the Recommendation page asks with its form's defaults (k_max derived, as with none), the
    # plan list with none
    form = {"window": 50, "alpha": 1.0, "beta": 0.0, "eps": 0.1, "min_samples": 5}
    busier = {"approve": api.busier_preview(settings, "lineitem"),
              "recommendation": api.busier_preview(settings, "lineitem", form)}
    expected = [f"would cost {format_number(d['cut_cost_cpu_s'])} CPU-s and save "
                f"{format_number(d['cut_saving_cpu_s'])} CPU-s over the last 50 queries",
                f"a net cost of {'+' if d['net_cpu_s'] >= 0 else ''}{format_number(d['net_cpu_s'])} CPU-s",
                f"would cost {format_number(be['cost_cpu_s'])} CPU-s and save "
                f"{format_number(be['saving_cpu_s'])} CPU-s",
                f"ran at least {format_number(be['factor'])} times, {be['queries']:,} queries like "
                "these per window instead of 50",
                "DD or PAW"]
    timeout = 120_000
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 2000})
            for path in ("approve", "recommendation"):
                page.goto(f"{base}/{path}", wait_until="domcontentloaded")
                box = page.get_by_text("WAIR proposes nothing right now.", exact=False).first
                box.wait_for(timeout=timeout)
                page.wait_for_function(SCRIPT_DONE_JS, timeout=timeout)
                text = " ".join(page.locator("[data-testid='stAlert']").all_inner_texts())
                for words in expected:
                    assert words in " ".join(text.split()), (path, words, text)
                page.get_by_role("button", name="What if the workload were busier?").click()
                answer = page.locator("[data-testid='stMarkdownContainer']",
                                      has_text=re.compile(r"If each query of the window ran [\d.]+ times")).last
                answer.wait_for(timeout=timeout)
                page.wait_for_function(SCRIPT_DONE_JS, timeout=timeout)
                shown = " ".join(answer.inner_text().split())
                want = busier[path]
                assert f"If each query of the window ran {format_number(want['factor'])} times" in shown, shown
                assert f"{want['plan']['partition_count']:,} partitions" in shown, shown
                assert "**" not in shown  # rendered as Markdown, not shown as typed
                assert page.locator("[data-testid='stException']").count() == 0
                page.screenshot(path=str(tmp_path / f"declined-{path}.png"), full_page=True)
        finally:
            browser.close()
    assert api.list_plans(settings, "lineitem") == []  # nothing was stored
