"""The Recommendation page's k_max defaults to the one WAIR derives from the memory budget
and the table's median partition, through ``engine.api.wair_k_max``,
as the CLI's ``plan preview`` without ``--k-max``, not the paper's 64 whatever the table.
On the committed sample demo (Arrow writer: no Spark)."""

from __future__ import annotations

import numpy as np
import pytest

import app_open
from engine import api
from engine.cli.demo import build_demo
from engine.core.config import load_settings
from engine.table.store import TableStore

TIMEOUT = 180


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory):
    home = tmp_path_factory.mktemp("kmax") / "home"
    home.mkdir()
    build_demo(load_settings({"home": str(home)}, environ={}), None, "iceberg", writer="arrow")
    return home


@pytest.fixture
def settings(demo_home, monkeypatch):
    monkeypatch.setenv("LAYOUT_ADVISOR_HOME", str(demo_home))
    return load_settings()


def test_the_api_derives_k_max_from_the_budget_and_the_median_partition(settings):
    out = api.wair_k_max(settings, "lineitem").to_json()
    sizes = TableStore(settings).current_snapshot("lineitem").zonemaps().bytes
    by_hand = int(2 * 1024**3 // float(np.median(sizes)))  # the default 2 GiB budget
    assert out == {"k_max": by_hand, "derived": True, "memory_budget_bytes": 2 * 1024**3,
                   "median_partition_bytes": float(np.median(sizes))}
    assert by_hand != 64  # the page's old default was not this table's


def test_the_page_shows_the_derived_k_max_and_previews_as_the_cli(settings):
    derived = api.wair_k_max(settings, "lineitem")
    at = app_open.open_page("recommendation", "lineitem", TIMEOUT)
    box = at.number_input(key="rec_k_max")
    assert box.value == derived.k_max
    assert f"= {derived.k_max:,} partitions" in box.help and "Derived unless changed" in box.help
    captions = " ".join(c.value for c in at.caption)
    assert f"k_max {derived.k_max:,}: derived from the memory budget and the median partition" in captions
    # the page previews what the CLI's `plan preview lineitem` (no --k-max) previews
    assert at.session_state["wair_params"]["k_max"] is None
    cli = api.preview_plan(settings, "lineitem", "wair", {"window": 50, "alpha": 1.0, "beta": 0.0,
                                                          "eps": 0.1, "min_samples": 5})
    if cli.status == "no-action":
        assert any(cli.reason in i.value for i in at.info) or cli.reason in " ".join(
            m.value for m in at.markdown)
    else:
        assert next(m.value for m in at.metric if m.label == "Partitions to rewrite") == \
            f"{cli.partition_count:,}"
    # set by hand, it says so and is passed on
    box.set_value(8)
    next(b for b in at.button if b.label == "Preview recommendation").click().run(timeout=TIMEOUT)
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["wair_params"]["k_max"] == 8
    assert f"k_max 8: set here (derived: {derived.k_max:,})" in " ".join(c.value for c in at.caption)
