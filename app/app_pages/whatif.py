"""What-if: the same policies on a simulated table and workload, cost over time.

Two tabs: the table picked in the sidebar with its imported workload,
and the generated presets (WAIR section 6), whose "As in the benchmark" setup reproduces
the simulator benchmark's figures (bench/sim/README.md)."""

from __future__ import annotations

from typing import Any, Mapping

import streamlit as st

from app import charts, components, services, views, whatif_service
from app.components import guard
from engine import api

# small defaults so a run answers in seconds; the form changes them
QUICK = {"rows": 200_000, "periods": 4, "batches_per_period": 4, "recluster_start": 2}
# the preset's own scenario at 200k rows, as the simulator benchmark runs it (bench/sim/README.md)
README_SETUP = {"rows": 200_000}
# that setup first: the defaults reproduce the simulator benchmark's figures
MODES = {"readme": "As in the benchmark (bench/sim/wair_replication.py --quick; about a minute)",
         "quick": "Quick (seconds)"}
# the own-table what-if: NR, WAIR, DD, DD-EP, PAW and PTO
OWN_POLICIES = ("nr", "wair", "dd", "dd-ep", "paw", "pto")
OWN_BATCHES = 8
OWN_SAMPLE_ROWS = 200_000
#: the what-if's cold-start modes (:data:`engine.api.COLD_START_MODES`) in words
COLD_START_LABELS = {"first": "the first rewrite (one long-lived session)",
                     "every": "every plan (a fresh session each)", "none": "none (all warm)"}


def progress_bar(policy_labels: Mapping[str, str]):
    """A progress bar and the callback the simulator reports to: a policy's batch, or a
    stage of the what-if on a table (``{"stage", "message"}``: the sample read, PTO's
    design) before the policies replay."""
    bar = st.progress(0.0, text="simulating")

    def progress(info) -> None:
        if "stage" in info:
            bar.progress(0.0, text=str(info.get("message") or info["stage"]))
            return
        done = info.get("policy_index", 0) + info.get("batch", 0) / max(info.get("batches", 1), 1)
        frac = min(1.0, done / max(info.get("policies", 1), 1))
        name = info.get("policy")
        label = policy_labels.get(name, name)
        if name == "dd":
            label += " (tuned to WAIR's reclustering budget: one replay per candidate)"
        bar.progress(frac, text=f"{label}: batch {info.get('batch')} of {info.get('batches')}")
    return bar, progress


def timings_caption(result: "api.WhatIfReport", policy_labels: Mapping[str, str]) -> str:
    """Where the what-if's seconds went: the sample read, PTO's design, each policy."""
    t = result.timings or {}
    reused = " (reused)" if (result.sample or {}).get("reused") else ""
    parts = [f"sample read {t['sample_s']:.1f} s{reused}"] if "sample_s" in t else []
    if "pto_design_s" in t:
        parts.append(f"PTO design {t['pto_design_s']:.1f} s"
                     + (" (reused)" if (result.pto or {}).get("reused") else ""))
    for name, sec in (t.get("policies") or {}).items():
        extra = " (tuning reused)" if name == "dd" and (result.dd_tuning or {}).get("reused") else ""
        parts.append(f"{policy_labels.get(name, name)} {sec:.1f} s{extra}")
    return f"Done in {result.seconds:.1f} s: " + " · ".join(parts) if parts else ""


def show_result(result: Mapping[str, Any], prefix: str) -> None:
    """Cumulative cost, totals, pruning per batch and the summary table of one run."""
    scenario = result.get("scenario") or {}
    periods = scenario.get("periods") or []
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
    st.plotly_chart(fig, key=f"{prefix}_cumulative")
    st.caption("Solid: total cost (queries + reclustering); dotted: the query part alone, so the "
               "gap is what reclustering cost. Counted from the first reclustering period. Lower is better.")

    left, right = st.columns(2)
    with left:
        summ = frames["summary"]
        st.plotly_chart(charts.stacked_cost(list(summ["policy"]), list(summ["query CPU-s"]),
                                            list(summ["reclustering CPU-s"]), "CPU-seconds",
                                            "Total cost per policy"), key=f"{prefix}_totals")
        st.caption("The same totals as bars: blue is query cost, orange reclustering cost.")
    with right:
        fig = charts.lines({name: (g["batch"], g["pruning_rate"] * 100)
                            for name, g in per.groupby("policy", sort=False)},
                           "Pruning rate per batch", "batch", "partitions pruned (%)")
        charts.mark_periods(fig, starts)
        st.plotly_chart(fig, key=f"{prefix}_pruning")
        st.caption("The share of partitions a batch's queries skip; a policy that adapts recovers "
                   "after the workload shifts.")

    st.subheader("Summary")
    st.dataframe(frames["summary"], hide_index=True, key=f"{prefix}_summary",
                 column_config={c: st.column_config.NumberColumn(format="%.3f")
                                for c in ("query CPU-s", "reclustering CPU-s", "of which cold start CPU-s",
                                          "total CPU-s")}
                 | {"money ($)": st.column_config.NumberColumn(format="%.6f"),
                    "mean pruning rate (%)": st.column_config.NumberColumn(format="%.1f"),
                    "total cost vs NR (%)": st.column_config.NumberColumn(format="%+.1f")})
    st.caption("Total cost vs NR: negative means cheaper than never reclustering."
               + cold_start_note(result))


def cold_start_note(result: Mapping[str, Any]) -> str:
    """What the reclustering seconds include of a fresh Spark session's start (empty when
    the run charged none: an uncalibrated workspace, the presets' DuckDB economics, "none")."""
    start = float((result.get("rates") or {}).get("cold_start_s") or 0.0)
    mode = result.get("cold_start", "none")
    if start <= 0 or mode == "none":
        return ""
    return (f" Reclustering includes a fresh Spark session's cold start of {start:.1f} s "
            f"({COLD_START_LABELS[mode]}): the column \"of which cold start CPU-s\".")


# ------------------------------------------------------------------ this table
def own_table_tab() -> None:
    """The imported workload (and a shifted copy) replayed on the selected table."""
    table = components.selected_table()
    if not table:
        st.info("No table selected in the sidebar. Create one with `layout-advisor table create` "
                "or build the demo with `layout-advisor demo`; the presets tab works without one.")
        return
    choices = None
    with guard(stop=False):
        policy_labels = whatif_service.whatif_policies()
        if not services.fragments(table):
            st.info(f"**{table}** has no imported workload to replay. Import a query log with "
                    f"`layout-advisor workload import {table} FILE`, then reload this page.")
            return
        choices = whatif_service.shift_choices(table)
    if choices is None:
        return
    st.caption(f"Replays the imported workload of `{table}` on a simulated copy of its current "
               "files: the files' own zonemaps and a row sample of each file. The workload is "
               "replayed once as history, then again with reclustering, then (optionally) "
               "shifted to another column. Nothing in the workspace changes.")
    columns = list(choices["columns"])
    src_default, dst_default = choices["default"] or (None, None)
    with st.form("own_whatif_form"):
        c1, c2, c3 = st.columns(3)
        batches = c1.number_input("Batches per period", min_value=1, max_value=100,
                                  value=OWN_BATCHES, key="own_batches",
                                  help="The replayed workload is cut into this many batches; "
                                       "policies decide after each.")
        sample_rows = c2.number_input("Sample rows", min_value=1_000, max_value=5_000_000,
                                      value=OWN_SAMPLE_ROWS, step=10_000, key="own_sample_rows",
                                      help="Rows read from the files (the same share of each "
                                           "file) for the layouts that order rows.")
        shifted = c3.checkbox("Then shift the workload", value=src_default is not None,
                              key="own_shift", disabled=src_default is None,
                              help="A third period with the same queries filtering another "
                                   "column of the same type, ranges mapped by quantile.")
        s1, s2 = st.columns(2)
        source = s1.selectbox("Shift from", columns, key="own_shift_from",
                              index=columns.index(src_default) if src_default in columns else 0,
                              format_func=lambda c: f"{c} ({choices['counts'][c]} queries)")
        target = s2.selectbox("to", columns, key="own_shift_to",
                              index=columns.index(dst_default) if dst_default in columns else 0)
        policies = st.multiselect("Policies", list(policy_labels),
                                  default=[p for p in OWN_POLICIES if p in policy_labels],
                                  format_func=lambda n: policy_labels[n], key="own_policies")
        modes = list(api.COLD_START_MODES)
        cold_start = st.selectbox("Spark session cold start", modes, key="own_cold_start",
                                  index=modes.index(api.DEFAULT_COLD_START),
                                  format_func=COLD_START_LABELS.get,
                                  help="Which replayed rewrites pay the calibrated start of a "
                                       "fresh Spark session (`cold_start_s`): the first one, as "
                                       "this dashboard's one session runs plans (default); every "
                                       "one, as a CLI `plan run` per plan; none (every rewrite "
                                       "warm, the paper's model).")
        go_run = st.form_submit_button("Replay on this table", type="primary", key="own_run")
    if go_run:
        if not policies:
            st.error("Choose at least one policy.")
            return
        bar, progress = progress_bar(policy_labels)
        with guard(stop=False):
            result = whatif_service.whatif_table(table, policies, int(batches),
                                                 f"{source}:{target}" if shifted else None,
                                                 int(sample_rows), progress, cold_start)
            bar.progress(1.0, text=f"done in {result.seconds:.1f} s")
            st.session_state["whatif_own_result"] = result
    result = st.session_state.get("whatif_own_result")
    if result is None or result.table != table:
        st.info("Press **Replay on this table** to compare the policies on this table.")
        return
    if result.snapshot != services.current_snapshot_id(table):
        st.warning("The table changed since this replay (another snapshot is current); press "
                   "**Replay on this table** again.")
    own_result_header(result)
    took = timings_caption(result, policy_labels)
    if took:
        st.caption(took)
    show_result(result.to_json(), "own")
    own_periods(result)


def own_periods(result: "api.WhatIfReport") -> None:
    """Cost per policy in each counted period: the replay, then the shifted replay."""
    frame = views.period_frame(result.to_json())
    if frame.empty:
        return
    st.subheader("Per period")
    labels = [f"{p} · {q.split(' ')[0]}" for p, q in zip(frame["policy"], frame["period"])]
    st.plotly_chart(charts.stacked_cost(labels, list(frame["query CPU-s"]),
                                        list(frame["reclustering CPU-s"]), "CPU-seconds",
                                        "Cost per policy and period"), key="own_periods_chart")
    st.dataframe(frame, hide_index=True, key="own_periods",
                 column_config={c: st.column_config.NumberColumn(format="%.3f")
                                for c in ("query CPU-s", "reclustering CPU-s", "total CPU-s")})
    st.caption("P2 replays the imported workload with reclustering; P3 (when asked) replays it "
               "shifted to another column: a policy that adapts pays less there.")


def own_result_header(result: "api.WhatIfReport") -> None:
    """What was replayed, the NR cross-check and what is estimated from the sample."""
    scenario = result.scenario or {}
    shift = result.shift
    sample = result.sample
    st.caption(f"`{result.table}` at snapshot `{result.snapshot}`: {sample['files']:,} files, "
               f"{result.rows:,} rows; {sample['rows']:,} sample rows. Periods: "
               + "; ".join(f"P{p['period']} {p['predicate']} ({p['queries']:,} queries"
                           + (", reclustering)" if p.get("recluster") else ", history, not counted)")
                           for p in scenario.get("periods") or [])
               + (f". Shifted: {shift['from']} → {shift['to']}." if shift else "."))
    check = result.check
    notes = list(result.estimated or [])
    if check:
        notes.append(f"Check: NR's replayed queries read {views.fmt_bytes(check['simulated_bytes'])} "
                     f"in the simulator and {views.fmt_bytes(check['real_zonemap_bytes'])} by the "
                     f"real files' zonemaps (ratio {check['ratio']:.3f}).")
    pto = result.pto
    if pto:
        notes.append(f"PTO's design: {pto['why']} Simulated as {pto['simulated_layout']} on "
                     f"{', '.join(pto['simulated_columns']) or 'nothing'}.")
    with st.expander("What is exact and what is estimated from the sample", expanded=True):
        st.markdown("\n".join(f"- {views.md_text(n)}" for n in notes))


# ------------------------------------------------------------------ generated presets
def presets_tab(policy_labels: Mapping[str, str]) -> None:
    """A generated scenario (WAIR section 6.1); the "As in the benchmark" setup reproduces the
    simulator benchmark's figures (bench/sim/README.md)."""
    st.caption("Replays a generated table and workload batch by batch under several reclustering "
               "policies, in memory, and adds up what the queries and the reclustering cost "
               "(WAIR section 6). Nothing in the workspace changes.")
    with guard():
        presets = whatif_service.presets()
    names = [p["name"] for p in presets]
    preset = st.selectbox("Preset", names, key="wi_preset",
                          format_func=lambda n: next(f"{p['name']}: {p['description']}"
                                                     for p in presets if p["name"] == n))
    with guard():
        schema = whatif_service.scenario_parameters(preset)

    mode = st.radio("Defaults", list(MODES), format_func=MODES.get, horizontal=True, key="wi_mode",
                    help="The benchmark setup (the default) is the preset's own scenario at 200,000 "
                         "rows, whose WAIR and NR totals bench/sim/README.md "
                         "report; Quick shortens it (4 periods of 4 batches).")
    start_values = QUICK if mode == "quick" else README_SETUP

    values: dict[str, object] = {}
    with st.form("whatif_form"):
        st.markdown("**Scenario**")
        fields = [f for f in schema if f["name"] != "preset"]
        cols = st.columns(4)
        for i, f in enumerate(fields):
            values[f["name"]] = _field(cols[i % 4], f, start_values, preset, mode)
        default_pols = [p for p in ("nr", "qd", "dd", "wair", "oracle") if p in policy_labels]
        policies = st.multiselect("Policies", list(policy_labels), default=default_pols,
                                  format_func=lambda n: policy_labels[n], key="wi_policies",
                                  help="NR never reclusters; Oracle is a lower bound (sorted for free).")
        go_run = st.form_submit_button("Run simulation", type="primary", key="wi_run")

    if go_run:
        if not policies:
            st.error("Choose at least one policy.")
            return
        rows, seed = int(values.pop("rows")), int(values.pop("seed", 0))
        overrides = {k: v for k, v in values.items() if v is not None}
        bar, progress = progress_bar(policy_labels)
        with guard():
            result = whatif_service.simulate(preset, rows, policies, seed, overrides, progress)
        bar.progress(1.0, text=f"done in {result.get('seconds', 0):.1f} s")
        st.session_state["whatif_result"] = result

    result = st.session_state.get("whatif_result")
    if result is None:
        st.info("Set up a scenario and press **Run simulation**. Try the TPC-H preset with the "
                "predicate switch on: the workload moves to `l_commitdate`, WAIR adapts, QD does not.")
        return
    scenario = result.get("scenario") or {}
    st.caption(f"Scenario: {result.get('preset')}, {result.get('rows'):,} rows, "
               f"{scenario.get('batches')} batches, {scenario.get('queries'):,} queries. Periods: "
               + "; ".join(f"P{p['period']} {p['predicate']}" + ("" if p.get("recluster") else " (no reclustering)")
                           for p in scenario.get("periods") or []))
    show_result(result, "whatif")


def _field(box: Any, f: Mapping[str, Any], start_values: Mapping[str, Any], preset: str, mode: str) -> Any:
    """One scenario parameter's input, keyed per preset and mode."""
    name, kind, default = f["name"], f["kind"], start_values.get(f["name"], f.get("default"))
    label = name.replace("_", " ").capitalize()
    key = f"wi_{preset}_{name}" if mode == "quick" else f"wi_{preset}_{mode}_{name}"
    if kind == "int":
        return box.number_input(label, value=int(default), min_value=f.get("min"), step=1,
                                help=f.get("help"), key=key)
    if kind == "float":
        return box.number_input(label + (" (empty: preset's)" if default is None else ""),
                                value=None if default is None else float(default),
                                min_value=f.get("min"), max_value=f.get("max"), help=f.get("help"),
                                key=key, format="%.3f")
    if kind == "bool":
        return box.checkbox(label, value=bool(default), help=f.get("help"), key=key)
    if kind == "choice":
        choices = list(f.get("choices") or [])
        return box.selectbox(label, choices, index=choices.index(default) if default in choices else 0,
                             help=f.get("help"), key=key)
    return None


st.title("What-if")
with guard():
    labels = whatif_service.simulator_policies()
own_tab, presets_tab_box = st.tabs([f"This table ({components.selected_table() or 'none'})",
                                    "Generated presets"])
with own_tab:
    own_table_tab()
with presets_tab_box:
    presets_tab(labels)
