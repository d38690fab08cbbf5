"""Recommendation: what WAIR proposes, why, what it costs and saves; DD and DD-EP beside it."""

from __future__ import annotations

import streamlit as st

from app import charts, components, plan_service, services, views, whatif_service
from app.components import guard
from app.views import fmt_bytes, fmt_seconds


def preview_compare(table: str, rec: dict) -> None:
    """This unsaved preview beside a stored plan of the table."""
    with guard(stop=False):
        stored = plan_service.list_plans(table)
        if stored.empty:
            return
        with st.expander("Compare this preview with a stored plan"):
            ids = [int(i) for i in stored["id"]]
            other = st.selectbox("Stored plan", ids, key="rec_compare_pick",
                                 format_func=lambda i: f"plan {i} · "
                                 f"{stored.loc[stored['id'] == i, 'status'].iloc[0]}")
            frame, overlap = whatif_service.compare_preview(rec, other)
            st.dataframe(frame, hide_index=True, key="rec_compare_table")
            st.caption(f"They share {overlap['shared_partitions']:,} partitions; "
                       f"{overlap['only_a']:,} only in this preview, {overlap['only_b']:,} only "
                       f"in plan {other}."
                       + ("" if overlap["same_base_snapshot"] else
                          f" Plan {other} was proposed on another snapshot, so its partitions "
                          "differ from the current ones."))


st.title("Recommendation")
table = components.require_table()
if components.selected_snapshot() is not None:
    st.warning("Plans always start from the table's current snapshot; the snapshot picked in "
               "the sidebar is ignored here.")

components.require_workload(table, "WAIR recommends from the workload")

# k_max None: derived from the memory budget and the median partition (engine.api.wair_k_max),
# as the CLI's without --k-max
DEFAULTS = {"window": None, "alpha": 1.0, "beta": 0.0, "cost_limit": 0.0, "k_max": None,
            "eps": 0.1, "min_samples": 5}
params = st.session_state.setdefault("wair_params", dict(DEFAULTS))
with guard():
    derived = plan_service.wair_k_max(table)
    first_window = plan_service.wair_window(table)  # None: WAIR's own adaptive window

with st.form("wair_form"):
    st.markdown("**WAIR parameters** (section 4 of the paper)")
    c1, c2, c3, c4 = st.columns(4)
    shown_window = params["window"] or first_window or 50
    window = c1.number_input("Window (queries)", min_value=10, max_value=10_000, step=10,
                             value=int(shown_window), help="Initial sliding-window size; it "
                             "doubles or halves with realized savings. Left as shown, WAIR "
                             "starts from a day of the table's queries, or from the window "
                             "it has learned on the table.")
    alpha = c2.number_input("alpha (aggressiveness)", min_value=0.01, max_value=100.0, step=0.1,
                            value=float(params["alpha"]), help="Act only if saving > alpha × cost (eq. 4).")
    beta = c3.number_input("beta (CPU-s per pruned partition)", min_value=0.0, step=0.001,
                           format="%.4f", value=float(params["beta"]),
                           help="Performance bonus per extra pruned partition (eq. 6).")
    cost_limit = c4.number_input("Cost limit (CPU-s, 0 = none)", min_value=0.0, step=10.0,
                                 value=float(params["cost_limit"]),
                                 help="Ceiling on outstanding reclustering debt (eq. 2).")
    c5, c6, c7, _ = st.columns(4)
    shown_k = int(params["k_max"] if params["k_max"] is not None else derived["k_max"])
    k_max = c5.number_input("k_max (partitions per sort)", min_value=1,
                            max_value=max(10_000, shown_k), value=shown_k, key="rec_k_max",
                            help=views.k_max_help(derived))
    eps = c6.number_input("DBSCAN eps (cosine)", min_value=0.001, max_value=1.0, step=0.01,
                          value=float(params["eps"]), format="%.3f")
    min_samples = c7.number_input("DBSCAN min_samples", min_value=1, max_value=1000,
                                  value=int(params["min_samples"]))
    submitted = st.form_submit_button("Preview recommendation", type="primary")
if submitted:
    params = {"window": None if int(window) == int(shown_window) and not params["window"]
              else int(window), "alpha": float(alpha), "beta": float(beta),
              "cost_limit": float(cost_limit),
              "k_max": None if int(k_max) == int(derived["k_max"]) else int(k_max), "eps": float(eps),
              "min_samples": int(min_samples)}
    st.session_state["wair_params"] = params
engine_params = views.wair_params(params)
st.caption(f"k_max {int(derived['k_max']):,}: derived from the memory budget and the median "
           "partition" if params["k_max"] is None else
           f"k_max {int(params['k_max']):,}: set here (derived: {int(derived['k_max']):,})")

with guard():
    with st.spinner("WAIR is reading the workload window..."):
        rec = plan_service.preview_plan(table, "wair", engine_params)

components.wair_state_panel(table)

if rec.get("status") == "no-action":
    components.declined_panel(table, rec, engine_params, key="rec")
else:
    cost, saving = rec["estimated_cost"], rec["predicted_saving"]
    st.subheader("Cost against saving")
    a, b, c, d = st.columns(4)
    a.metric("Partitions to rewrite", f"{rec['partition_count']:,}",
             help=f"in {len(rec['groups'])} groups")
    b.metric("Reclustering cost", fmt_seconds(cost["cpu_seconds"]) + " CPU",
             help=f"reads {fmt_bytes(cost['bytes_read'])}, writes {fmt_bytes(cost['bytes_written'])}")
    c.metric("Predicted saving per window", fmt_seconds(saving.get("cpu_seconds")) + " CPU",
             help=f"over the last {int(saving.get('window_queries', 0))} queries")
    be = rec.get("break_even_queries")
    d.metric("Break-even", f"{be:,.0f} queries" if be is not None else "never")
    st.dataframe(views.cost_table(rec), hide_index=True, key="rec_costs")
    st.caption("Cost is paid once; the saving recurs every window of this many queries, so the "
               "rewrite pays back after the break-even number of queries.")

    left, right = st.columns(2)
    with left:
        scatter = plan_service.signature_points(rec)
        if scatter is None:
            st.info("Only one predicated column in the window: every signature is the same unit "
                    "vector, so there is nothing to cluster.")
        else:
            st.plotly_chart(charts.signatures(*scatter), key="rec_signatures")
            st.caption("Each dot is a candidate partition's savings signature (which columns its "
                       "saving comes from), projected to 2-D; colors are DBSCAN clusters, stars "
                       "the anchors that name each group's layout.")
    with right:
        curve = rec.get("curve") or []
        if curve:
            cuts, net = zip(*curve)
            st.plotly_chart(charts.net_cost_curve(cuts, net, rec.get("details", {}).get("cut")),
                            key="rec_curve")
            st.caption("Taking candidates in order of benefit, the net cost (rewrite cost minus "
                       "saving) first falls then rises; the dashed line is the cut WAIR chose.")

    st.subheader("Predicted effect")
    with guard(stop=False):
        impact = plan_service.plan_impact(table, rec)
        left, right = st.columns([3, 2])
        left.dataframe(impact["queries"], hide_index=True, key="rec_impact_queries", height=260)
        left.caption("Per query of the window: partitions and bytes read on the current layout "
                     "and after the plan, predicted from zonemaps (values uniform within a "
                     "partition). Click a header to sort. "
                     + views.sentence(services.pruning_unit(table)["label"]))
        right.dataframe(impact["columns"], hide_index=True, key="rec_impact_columns")
        worse = impact["columns"][impact["columns"]["effect"] == "worse"] \
            if not impact["columns"].empty else impact["columns"]
        right.caption("Average depth of every column the workload filters, before and after: "
                      + (f"the rewrite mixes the rows of {', '.join(worse['column'])}, so queries "
                         "filtering them may read more (a side effect)." if len(worse) else
                         "no filtered column gets worse."))

    regressions = rec.get("regressions") or {}
    losses = views.regressions_frame(regressions)
    st.markdown("**Predicted regressions**")
    if losses.empty:
        st.caption("No query of the window is predicted to read more after this plan.")
    else:
        st.dataframe(losses, hide_index=True, key="rec_regressions")
        net = float(saving.get("cpu_seconds") or 0.0) - float(regressions.get("cpu_seconds") or 0.0)
        st.caption(f"{int(regressions.get('queries') or 0):,} queries of the window would read "
                   f"{fmt_bytes(regressions.get('bytes'))} more, "
                   f"{fmt_seconds(regressions.get('cpu_seconds'))} CPU, because the rewrite "
                   "mixes the order their filter columns had; net of that the plan saves "
                   f"{fmt_seconds(net)} CPU per window. A query's loss is split over the "
                   "columns it filters.")

    st.subheader("Groups")
    files_note = ((rec.get("details") or {}).get("output") or {}).get("files_note")
    if files_note:  # the output keeps every file: where the saving comes from
        st.info(views.md_text(files_note[:1].upper() + files_note[1:]) + ".",
                icon=":material/view_agenda:")
    st.table(views.groups_frame(rec), hide_index=True)
    st.caption("Each group is rewritten together with its own ordering (a hybrid layout): "
               "sort on one column, Hilbert over a blend, or a Qd-tree for diffuse savings.")
    components.hybrid_layout_chart(table, rec, key="rec_layout")
    preview_compare(table, rec)

    identity = components.signed_in()
    actor = identity.name if identity is not None else plan_service.default_proposer()
    if st.button("Store as proposed plan", type="primary", key="rec_store"):
        with guard(stop=False):
            plan = plan_service.create_plan(table, "wair", engine_params, identity or actor)
            if plan.get("id") is None:
                st.info(f"Nothing stored: {views.md_text(plan.get('reason'))}")
            elif plan.get("duplicate_of") is not None:
                st.session_state["selected_plan"] = plan["id"]
                st.info(f"Already stored as plan {plan['id']} ({plan['status']}): the same "
                        "partitions with the same layouts; nothing new was stored.")
            else:
                st.session_state["selected_plan"] = plan["id"]
                st.success(f"Plan {plan['id']} stored as **proposed** by {views.md_text(actor)}. "
                           "An approver reviews and runs it on **Approve and run**.")
                st.page_link("app_pages/approve_run.py", label="Go to Approve and run",
                             icon=":material/task_alt:")

st.subheader("Data-driven plans for comparison")
st.caption("DD reclusters where partitions overlap most; DD-EP is the patent's EP-file "
           "selection. Neither looks at the workload.")
# two more plan previews (DD-EP alone takes seconds at thousands of partitions): computed
# only once the expander is opened, then cached per snapshot
comparison = st.expander("WAIR beside DD and DD-EP", key="rec_compare", on_change="rerun",
                         icon=":material/compare_arrows:")
rows = [views.plan_summary("WAIR", rec)]
if comparison.open:
    for name in ("dd", "dd-ep"):
        try:
            rows.append(views.plan_summary(name.upper(), plan_service.preview_plan(table, name, {})))
        except services.AdvisorError as exc:
            rows.append({"policy": name.upper(), "decision": f"unavailable: {exc}"})
cols = comparison.columns(len(rows)) if comparison.open else []
for box, row in zip(cols, rows):
    with box.container(border=True):
        st.markdown(f"**{row['policy']}**")
        if "partitions" not in row:
            st.markdown(views.md_text(row.get("decision", "")))
            continue
        st.metric("Partitions rewritten", f"{row['partitions']:,}")
        st.metric("Bytes written", fmt_bytes(row["bytes_written"]))
        st.metric("Cost", fmt_seconds(row["cost_cpu_s"]) + " CPU")
        st.metric("Predicted saving per window", fmt_seconds(row["saving_cpu_s"]) + " CPU")
        st.caption(views.md_text(row.get("decision", "")))
