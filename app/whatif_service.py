"""Engine calls of the what-if controls: an unsaved plan preview beside a stored
plan, and the what-if on the selected table (the columns a shifted workload can move
between, the policies it replays, the replay itself).

Beside :mod:`app.services`, with its settings and cache rules: nothing here mutates a
cached return; the what-if itself is not cached (the page keeps its result in session
state with the snapshot it was computed on).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import pandas as pd
import streamlit as st

from app import services, views
from engine import api


def compare_preview(preview: Mapping[str, Any], plan_id: int) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The unsaved preview beside stored plan ``plan_id``: the frame (as the stored-plan
    comparison shows it) and the partition overlap counts."""
    out = api.compare_preview(services.workspace(), preview, int(plan_id))
    return views.compare_frame(out), {k: out[k] for k in ("shared_partitions", "only_a", "only_b",
                                                          "same_base_snapshot")}


@st.cache_data(show_spinner=False, max_entries=16)
def _shift_choices(home_: str, table: str, snapshot: str, wkey: str) -> dict[str, Any]:
    return dict(api.whatif_shift_choices(services.workspace(), table))


def shift_choices(table: str) -> dict[str, Any]:
    """Columns a shifted workload can move between (``columns`` name -> type, ``counts``
    of queries filtering each, ``default`` (source, target) or None); cached per snapshot
    and workload."""
    return _shift_choices(services.home(), table, services.current_snapshot_id(table),
                          services.workload_key(table))


def whatif_policies() -> dict[str, str]:
    """Policy name -> label for the what-if on a table (the simulator's and PTO)."""
    return {p["name"]: p["label"] for p in api.whatif_policies()}


def whatif_table(table: str, policies: Sequence[str], batches: int, shift: str | None,
                 sample_rows: int, progress: Callable[..., Any] | None = None,
                 cold_start: str = api.DEFAULT_COLD_START) -> api.WhatIfReport:
    """The what-if on ``table`` itself (not cached: the page keeps the result in session
    state, with the snapshot it was computed on); ``cold_start``: which replayed rewrites
    pay the calibrated Spark session start (:data:`engine.api.COLD_START_MODES`)."""
    return api.whatif_table(services.workspace(), table, policies=list(policies),
                            batches=int(batches), shift=shift, sample_rows=int(sample_rows),
                            progress=progress, options=api.WhatIfOptions(cold_start=cold_start))


# the simulator

def presets() -> list[dict[str, Any]]:
    """``[{"name", "description", "default_rows"}]``."""
    return [dict(p) for p in api.list_presets()]


def scenario_parameters(preset: str) -> list[dict[str, Any]]:
    """The what-if form schema of a preset: name, kind, default, choices, min/max, help."""
    return [dict(p) for p in api.scenario_parameters(preset)]


def simulator_policies() -> dict[str, str]:
    """Policy name -> display label."""
    return {p["name"]: p["label"] for p in api.simulation_policies()}


def simulate(preset: str, rows: int, policies: Sequence[str], seed: int,
             overrides: Mapping[str, Any], progress: Callable[..., Any] | None = None) -> dict[str, Any]:
    """Run the what-if simulator (not cached: the page keeps its result in session state)."""
    return dict(api.simulate(services.workspace(), preset=preset, rows=int(rows), policies=list(policies),
                             seed=int(seed), overrides=dict(overrides), progress=progress))


# whole-table designs

def design_paw(table: str, delta: Any = "auto", window: int | None = None) -> dict[str, Any]:
    """PAW's whole-table design of ``table`` (samples the table: the page runs it on a
    button and keeps the answer)."""
    return dict(api.design_paw(services.workspace(), table, delta=delta, window=window))


def design_pto(table: str, top_k: int = 3, label: str = "cost") -> dict[str, Any]:
    """PTO's whole-table design of ``table`` (labels layouts on a sample: on a button)."""
    return dict(api.design_pto(services.workspace(), table, top_k=int(top_k), label=label))
