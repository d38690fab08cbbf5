"""The what-if on the sidebar's table charges a fresh Spark session's cold start as chosen
(engine.sim.session): the page offers the api's modes with the api's default, and its
summary shows what the reclustering seconds include of it, as ``engine.api.whatif_table``
computes it. The workspace is a pyarrow-written table registered in place (no Spark)."""

from __future__ import annotations

from pathlib import Path

import pytest

import app_open
from engine import api
from engine.core.config import load_settings
from own_table_helpers import write_files, write_log

TIMEOUT = 180
COLD = 7.5


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "layout-advisor.toml").write_text(f"target_rows = 400\ncold_start_s = {COLD}\n")
    monkeypatch.setenv("LAYOUT_ADVISOR_HOME", str(home))
    settings = load_settings()
    api.register_table(settings, "t", str(write_files(tmp_path / "data")))
    api.import_workload(settings, "t", str(write_log(tmp_path / "log.jsonl")))
    return home


def _rewrites(res):
    return sum(1 for b in res["batches"] if b["partitions_rewritten"] and b["measured"])


def test_the_api_charges_the_cold_start_by_mode(home):
    settings = load_settings()
    kw = dict(policies="nr,dd", batches=4, sample_rows=2400, shift=None)
    got = {m: api.whatif_table(settings, "t", options=api.WhatIfOptions(cold_start=m), **kw) for m in api.COLD_START_MODES}
    dd = {m: r.policies["dd"] for m, r in got.items()}
    n = _rewrites(dd["none"])
    assert n >= 2  # DD rewrites in several batches, so "first" and "every" differ
    for mode, times in (("none", 0), ("first", 1), ("every", n)):
        assert dd[mode]["cold_start_seconds"] == pytest.approx(times * COLD)
        assert dd[mode]["cpu_seconds"] - dd["none"]["cpu_seconds"] == pytest.approx(times * COLD)
        assert got[mode].policies["nr"]["cold_start_seconds"] == 0.0
    assert got["every"].cold_start == "every" and got["every"].rates["cold_start_s"] == COLD


def test_the_page_offers_the_api_default_and_shows_the_charge(home):
    settings = load_settings()
    at = app_open.open_page("whatif", "t", TIMEOUT)
    box = at.selectbox(key="own_cold_start")
    assert box.value == api.DEFAULT_COLD_START == "first"
    assert list(box.options) == ["the first rewrite (one long-lived session)",
                                 "every plan (a fresh session each)", "none (all warm)"]
    at.number_input(key="own_batches").set_value(4)
    at.number_input(key="own_sample_rows").set_value(2400)
    at.checkbox(key="own_shift").set_value(False)
    at.multiselect(key="own_policies").set_value(["nr", "dd"])
    box.set_value("every")
    at.button(key="own_run").click().run(timeout=TIMEOUT)
    assert not at.exception, [e.value for e in at.exception]
    ref = api.whatif_table(settings, "t", policies="nr,dd", batches=4, sample_rows=2400,
                           options=api.WhatIfOptions(cold_start="every"))
    summary = next(f.value for f in at.dataframe if "total CPU-s" in f.value.columns).set_index("policy")
    dd = ref.policies["dd"]
    assert summary.loc["DD", "of which cold start CPU-s"] == pytest.approx(_rewrites(dd) * COLD)
    assert summary.loc["DD", "of which cold start CPU-s"] == pytest.approx(dd["cold_start_seconds"])
    assert summary.loc["DD", "total CPU-s"] == pytest.approx(dd["cpu_seconds"])
    assert summary.loc["NR", "of which cold start CPU-s"] == 0.0
    assert any("fresh Spark session's cold start of 7.5 s (every plan (a fresh session each))" in c.value
               for c in at.caption)
