"""What-if: the same policies on a simulated table and workload, cost over time."""

from __future__ import annotations

import streamlit as st

from app import charts, services, views
from app.components import guard

# small defaults so a run answers in seconds; the form changes them
QUICK = {"rows": 200_000, "periods": 4, "batches_per_period": 4, "recluster_start": 2}
# the preset's own scenario at 200k rows: bench/wair_replication.py --quick, the README's figures
README_SETUP = {"rows": 200_000}
MODES = {"quick": "Quick (seconds)",
         "readme": "As in the README (bench/wair_replication.py --quick; about a minute)"}

st.title("What-if")
st.caption("Replays a generated table and workload batch by batch under several reclustering "
           "policies, in memory, and adds up what the queries and the reclustering cost "
           "(WAIR section 6). Nothing in the workspace changes.")

with guard():
    presets = services.presets()
    policy_labels = services.simulator_policies()
names = [p["name"] for p in presets]
preset = st.selectbox("Preset", names, key="wi_preset",
                      format_func=lambda n: next(f"{p['name']}: {p['description']}"
                                                 for p in presets if p["name"] == n))
with guard():
    schema = services.scenario_parameters(preset)

mode = st.radio("Defaults", list(MODES), format_func=MODES.get, horizontal=True, key="wi_mode",
                help="Quick shortens the scenario (4 periods of 4 batches); the README setup "
                     "is the preset's own scenario at 200,000 rows, whose WAIR and NR totals "
                     "the README and bench/README_sim.md report.")
start_values = QUICK if mode == "quick" else README_SETUP

values: dict[str, object] = {}
with st.form("whatif_form"):
    st.markdown("**Scenario**")
    fields = [f for f in schema if f["name"] != "preset"]
    cols = st.columns(4)
    for i, f in enumerate(fields):
        box = cols[i % 4]
        name, kind, default = f["name"], f["kind"], start_values.get(f["name"], f.get("default"))
        label = name.replace("_", " ").capitalize()
        key = f"wi_{preset}_{name}" if mode == "quick" else f"wi_{preset}_{mode}_{name}"
        if kind == "int":
            values[name] = box.number_input(label, value=int(default), min_value=f.get("min"),
                                            step=1, help=f.get("help"), key=key)
        elif kind == "float":
            values[name] = box.number_input(
                label + (" (empty: preset's)" if default is None else ""),
                value=None if default is None else float(default), min_value=f.get("min"),
                max_value=f.get("max"), help=f.get("help"), key=key, format="%.3f")
        elif kind == "bool":
            values[name] = box.checkbox(label, value=bool(default), help=f.get("help"), key=key)
        elif kind == "choice":
            choices = list(f.get("choices") or [])
            values[name] = box.selectbox(label, choices, index=choices.index(default)
                                         if default in choices else 0, help=f.get("help"), key=key)
    default_pols = [p for p in ("nr", "qd", "dd", "wair", "oracle") if p in policy_labels]
    policies = st.multiselect("Policies", list(policy_labels), default=default_pols,
                              format_func=lambda n: policy_labels[n], key="wi_policies",
                              help="NR never reclusters; Oracle is a lower bound (sorted for free).")
    go_run = st.form_submit_button("Run simulation", type="primary")

if go_run:
    if not policies:
        st.error("Choose at least one policy.")
        st.stop()
    rows, seed = int(values.pop("rows")), int(values.pop("seed", 0))
    overrides = {k: v for k, v in values.items() if v is not None}
    bar = st.progress(0.0, text="simulating")

    def progress(info) -> None:
        done = info.get("policy_index", 0) + info.get("batch", 0) / max(info.get("batches", 1), 1)
        frac = min(1.0, done / max(info.get("policies", 1), 1))
        bar.progress(frac, text=f"{policy_labels.get(info.get('policy'), info.get('policy'))}: "
                                f"batch {info.get('batch')} of {info.get('batches')}")

    with guard():
        result = services.simulate(preset, rows, policies, seed, overrides, progress)
    bar.progress(1.0, text=f"done in {result.get('seconds', 0):.1f} s")
    st.session_state["whatif_result"] = result

result = st.session_state.get("whatif_result")
if result is None:
    st.info("Set up a scenario and press **Run simulation**. Try the TPC-H preset with the "
            "predicate switch on: the workload moves to `l_commitdate`, WAIR adapts, QD does not.")
    st.stop()

scenario = result.get("scenario") or {}
periods = scenario.get("periods") or []
st.caption(f"Scenario: {result.get('preset')}, {result.get('rows'):,} rows, "
           f"{scenario.get('batches')} batches, {scenario.get('queries'):,} queries. Periods: "
           + "; ".join(f"P{p['period']} {p['predicate']}" + ("" if p.get("recluster") else " (no reclustering)")
                       for p in periods))
frames = views.simulation_frames(result)
cum, per = frames["cumulative"], frames["per_batch"]
starts, first = [], 1
for p in periods:
    starts.append((first, f"P{p['period']}"))
    first += int(p["batches"])

series, dash = {}, {}
for name, g in cum.groupby("policy", sort=False):
    series[f"{name} total"] = (g["batch"], g["total"])
    series[f"{name} queries only"] = (g["batch"], g["query"])
    dash[f"{name} queries only"] = "dot"
fig = charts.lines(series, "Cumulative cost per policy: queries + reclustering", "batch",
                   "cumulative cost (CPU-seconds)", dash=dash, height=460)
charts.mark_periods(fig, starts)
st.plotly_chart(fig, key="whatif_cumulative")
st.caption("Solid: total cost (queries + reclustering); dotted: the query part alone, so the "
           "gap is what reclustering cost. Counted from the first reclustering period. Lower is better.")

left, right = st.columns(2)
with left:
    summ = frames["summary"]
    st.plotly_chart(charts.stacked_cost(list(summ["policy"]), list(summ["query CPU-s"]),
                                        list(summ["reclustering CPU-s"]), "CPU-seconds",
                                        "Total cost per policy"), key="whatif_totals")
    st.caption("The same totals as bars: blue is query cost, orange reclustering cost.")
with right:
    fig = charts.lines({name: (g["batch"], g["pruning_rate"] * 100)
                        for name, g in per.groupby("policy", sort=False)},
                       "Pruning rate per batch", "batch", "partitions pruned (%)")
    charts.mark_periods(fig, starts)
    st.plotly_chart(fig, key="whatif_pruning")
    st.caption("The share of partitions a batch's queries skip; a policy that adapts recovers "
               "after the workload shifts.")

st.subheader("Summary")
st.dataframe(frames["summary"], hide_index=True, key="whatif_summary",
             column_config={c: st.column_config.NumberColumn(format="%.3f")
                            for c in ("query CPU-s", "reclustering CPU-s", "total CPU-s")}
             | {"money ($)": st.column_config.NumberColumn(format="%.6f"),
                "mean pruning rate (%)": st.column_config.NumberColumn(format="%.1f"),
                "total cost vs NR (%)": st.column_config.NumberColumn(format="%+.1f")})
st.caption("Total cost vs NR: negative means cheaper than never reclustering.")
