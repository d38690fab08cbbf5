"""What-if: the same policies on a simulated table and workload, cost over time."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from app import charts, components, services
from app.components import guard

st.title("What-if")
st.caption("Replays a generated workload against an in-memory copy of a table's metadata under "
           "several policies, batch by batch, and adds up what queries and reclustering cost.")

if not services.simulator_ready():
    st.info("The simulator is not part of this build yet, so this page has nothing to show. "
            "No numbers are made up here: once `engine.api.simulate` exists, this page runs it.")
    st.stop()

with guard():
    presets = services.presets_frame()
    schema = services.scenario_schema()

with st.form("whatif_form"):
    st.markdown("**Scenario**")
    c1, c2, c3, c4 = st.columns(4)
    preset = c1.selectbox("Preset", list(presets["name"]), key="wi_preset",
                          help="A starting scenario; the fields below override it.")
    rows = c2.number_input("Rows in the simulated table", min_value=10_000, max_value=100_000_000,
                           step=100_000, value=int(schema.get("rows", 1_000_000)), key="wi_rows")
    periods = c3.number_input("Periods", min_value=1, max_value=50,
                              value=int(schema.get("periods", 4)), key="wi_periods")
    batches = c4.number_input("Batches per period", min_value=1, max_value=500,
                              value=int(schema.get("batches", 10)), key="wi_batches")
    c5, c6, c7, c8 = st.columns(4)
    shift = c5.slider("Shifting rate", 0.0, 1.0, float(schema.get("shifting_rate", 0.1)),
                      key="wi_shift", help="How fast the hot range moves between batches.")
    dist = c6.selectbox("Predicate distribution", ["uniform", "gaussian", "zipf"],
                        index=["uniform", "gaussian", "zipf"].index(schema.get("distribution", "uniform"))
                        if schema.get("distribution", "uniform") in ("uniform", "gaussian", "zipf") else 0,
                        key="wi_dist")
    selectivity = c7.number_input("Selectivity (share of rows)", min_value=0.0001, max_value=1.0,
                                  value=float(schema.get("selectivity", 0.01)), format="%.4f",
                                  key="wi_sel")
    start = c8.number_input("Reclustering starts at batch", min_value=0, max_value=10_000,
                            value=int(schema.get("recluster_start", 0)), key="wi_start")
    c9, c10, c11 = st.columns([2, 1, 1])
    switch = c9.text_input("Switch the predicate column to (optional)",
                           value=str(schema.get("switch_column") or ""), key="wi_switch",
                           help="e.g. l_commitdate: from the second period on, queries filter on it.")
    seed = c10.number_input("Seed", min_value=0, value=int(schema.get("seed", 7)), key="wi_seed")
    policies = c11.multiselect("Policies", services.simulator_policies(),
                               default=services.simulator_policies()[:4], key="wi_policies")
    go = st.form_submit_button("Run simulation", type="primary")

if go:
    if not policies:
        st.error("Choose at least one policy.")
        st.stop()
    overrides = {"periods": int(periods), "batches": int(batches), "shifting_rate": float(shift),
                 "distribution": dist, "selectivity": float(selectivity),
                 "recluster_start": int(start), "switch_column": switch.strip() or None}
    bar = st.progress(0.0, text="simulating")

    def progress(fraction: float, message: str = "", *_: object) -> None:
        bar.progress(min(1.0, max(0.0, float(fraction))), text=message or "simulating")

    with guard():
        result = services.simulate(preset, int(rows), policies, int(seed), overrides, progress)
    bar.progress(1.0, text="done")
    st.session_state["whatif_result"] = result

result = st.session_state.get("whatif_result")
if result is None:
    st.info("Set up a scenario and press **Run simulation**.")
    st.stop()

frames = services.simulation_frames(result)
cum = frames["cumulative"]
st.plotly_chart(charts.lines({f"{p} · {part}": (g["batch"], g[part]) for p, g in cum.groupby("policy")
                              for part in ("query", "total")},
                             "Cumulative cost per policy (query + reclustering)", "batch",
                             "cumulative cost (CPU-seconds)",
                             dash={f"{p} · query": "dot" for p in cum["policy"].unique()}),
                key="whatif_cumulative")
st.caption("Solid lines are total cost (queries + reclustering), dotted ones the query part "
           "alone; the gap between them is what reclustering cost. Lower is better.")
st.plotly_chart(charts.lines({p: (g["batch"], g["pruning_rate"] * 100)
                              for p, g in frames["per_batch"].groupby("policy")},
                             "Pruning rate per batch", "batch", "partitions pruned (%)"),
                key="whatif_pruning")
st.caption("The share of partitions a batch's queries skip; a policy that adapts recovers "
           "after the workload shifts.")
st.subheader("Summary")
st.dataframe(frames["summary"], hide_index=True, key="whatif_summary")
