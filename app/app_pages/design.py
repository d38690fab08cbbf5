"""Design: how the whole table should be laid out (PAW, PTO), previewed on a button; a
plan is stored only when asked. Everything comes from ``engine.api`` (``design_paw``, ``design_pto``)."""

from __future__ import annotations

import streamlit as st

from app import charts, components, plan_service, services, views, whatif_service
from app.components import guard

st.title("Design")
st.caption("WAIR repairs the partitions the workload hurts most; these designs answer how the "
           "whole table should be laid out, e.g. when creating or migrating it. Each run reads "
           "a sample of the table, so it starts on a button.")
table = components.require_table()
components.require_workload(table, "Both designs start from the workload")

identity = components.signed_in()
actor = identity.name if identity is not None else plan_service.default_proposer()
paw_tab, pto_tab = st.tabs(["PAW (seed 001)", "PTO (seed 002)"])

with paw_tab:
    st.markdown("A partition tree that stays good for future queries *similar* to past ones "
                "(δ-similar), where a Qd-tree overfits.")
    delta = st.text_input("δ (a number, or auto)", value="auto", key="paw_delta")
    if st.button("Design with PAW", type="primary", key="paw_run"):
        with guard(stop=False), st.spinner("PAW samples the table and builds its tree..."):
            st.session_state["paw_result"] = (table, whatif_service.design_paw(
                table, delta=delta.strip() or "auto"))
    stored = st.session_state.get("paw_result")
    if stored and stored[0] == table:
        result = stored[1]
        if result.get("design") is None:
            st.info(views.md_text(result.get("reason", "PAW proposes nothing.")))
        else:
            summary = result["design"]["summary"]
            a, b, c = st.columns(3)
            a.metric("Leaves", f"{len(result['design']['leaves']):,}")
            b.metric("Queries (history)", f"{result['queries']:,}")
            c.metric("Sample rows", f"{int(summary.get('sample_rows', 0)):,}")
            st.dataframe(views.paw_costs_frame(result["design"]), hide_index=True, key="paw_costs")
            st.caption("Rows read per query, predicted on the sample and scaled to the table; "
                       "the lower bounds say how much any layout could do.")
            design = result["design"]
            columns = list(summary.get("columns") or design["domain"])
            left, right = st.columns(2)
            x_col = left.selectbox("Horizontal axis", columns, index=0, key="paw_x")
            others = [c for c in columns if c != x_col]
            y_col = right.selectbox("Vertical axis", others, index=0, key="paw_y") if others else None
            st.plotly_chart(charts.paw_tree(design, x_col, y_col), key="paw_tree")
            st.caption("The tree's partitions over two of its columns, with the history queries "
                       "and their extended queries q* (each bound moved by δ): PAW cuts its "
                       "partitions around the q*, so a future query within δ of a past one "
                       "reads few of them. With more than two columns the boxes overlap here.")
            st.plotly_chart(charts.histogram([lf["rows"] for lf in design["leaves"]],
                                             "Partition sizes", "sampled rows per partition",
                                             "partitions"), key="paw_leaf_sizes")
            st.caption(f"Every partition holds at least b_min = {summary.get('b_min', '?')} sampled "
                       f"rows ({summary.get('b_min_rows', '?')} rows of the table).")
            if st.button("Store as proposed plan", key="paw_store"):
                with guard(stop=False):
                    plan = plan_service.create_plan(table, "paw", {"delta": delta.strip() or "auto"}, identity or actor)
                    st.success(f"Plan {plan.get('id')} stored ({plan.get('status')}); review it "
                               "on **Approve and run**." if plan.get("id") else
                               f"Nothing stored: {views.md_text(plan.get('reason'))}")

with pto_tab:
    st.markdown("Partition column, sort scheme, file and row-group size, predicted by gradient-"
                "boosted trees from a few labelled layouts.")
    left, right = st.columns(2)
    top_k = left.number_input("Partition columns to try (top k)", min_value=1, max_value=10,
                              value=3, key="pto_topk")
    label = right.selectbox("Label", ["cost", "skip"], key="pto_label",
                            help="cost: rows read plus per-file and per-row-group open cost; "
                                 "skip: the paper's skipped rows.")
    if st.button("Design with PTO", type="primary", key="pto_run"):
        with guard(stop=False), st.spinner("PTO labels candidate layouts on a sample..."):
            st.session_state["pto_result"] = (table, whatif_service.design_pto(table, int(top_k), label))
    stored = st.session_state.get("pto_result")
    if stored and stored[0] == table:
        result = stored[1]
        st.success(f"**Choice:** {views.md_text(result.get('reason', ''))}")
        st.dataframe(views.pto_candidates_frame(result), hide_index=True, key="pto_candidates")
        st.caption("The best-ranked candidates: predicted cost for every one, measured for the "
                   "layouts PTO labelled to train its model.")
        if st.button("Store as proposed plan", key="pto_store"):
            with guard(stop=False):
                plan = plan_service.create_plan(table, "pto", {"top_k": int(top_k), "label": label}, identity or actor)
                st.success(f"Plan {plan.get('id')} stored ({plan.get('status')}); review it on "
                           "**Approve and run**." if plan.get("id") else
                           f"Nothing stored: {views.md_text(plan.get('reason'))}")
