"""Overview: how well is the table clustered, per column, and what does the workload waste?"""

from __future__ import annotations

import streamlit as st

from app import charts, components, plan_service, services, views
from app.components import guard
from app.views import fmt_bytes, fmt_num

st.title("Overview")
table = components.require_table()
sid = components.selected_snapshot()

with guard():  # stored per-snapshot summaries: no manifest read, no metric recomputed
    head = services.snapshot_header(table, sid)
    metrics = services.analyze(table, sid)
    summary = services.workload_summary(table, sid)

st.caption(f"Table **{table}** · snapshot `{head['id']}` ({head['operation']}, "
           f"{str(head['created_at'])[:19]}) · {head['partitions']:,} micro-partitions · "
           f"{head['rows']:,} rows · {fmt_bytes(head['bytes'])}")

by_column = {m["column"]: m for m in metrics}
default_cols = views.relevant_columns(metrics, summary)
chosen = st.multiselect("Columns to assess", list(by_column), default=default_cols,
                        help="Defaults to the columns the workload filters on, then the worst "
                             "clustered ones.")

st.subheader("Clustering health per column")
st.caption("Average depth = how many partitions hold a typical value (1 is perfect); "
           "overlaps = how many other partitions a partition's range intersects; constant = "
           "partitions with min = max.")
if not chosen:
    st.info("Pick at least one column above.")
per_row = 2
for start in range(0, len(chosen), per_row):
    cols = st.columns(per_row)
    for col_box, name in zip(cols, chosen[start:start + per_row]):
        m = by_column[name]
        light, reason = m.get("verdict", "grey"), m.get("reason", "")
        with col_box.container(border=True):
            st.markdown(f"#### {views.md_text(name)} &nbsp; {views.light_badge(light)}")
            a, b, c = st.columns(3)
            a.metric("Average depth", fmt_num(m["average_depth"]))
            b.metric("Average overlaps", fmt_num(m["average_overlaps"]))
            c.metric("Constant", f"{int(m['total_constant_partition_count']):,}"
                     f" / {int(m['total_partition_count']):,}")
            text = views.verdict_reason(light, reason)
            st.markdown(text[:1].upper() + text[1:])
            if m.get("span_share") is not None:
                st.caption(f"A partition spans {m['span_share'] * 100:.0f} % of the column's "
                           "value range on average.")

st.subheader("Depth histogram")
hist_col = st.selectbox("Column", list(by_column),
                        index=list(by_column).index(chosen[0]) if chosen else 0,
                        key="overview_hist_column")
st.plotly_chart(charts.depth_histogram(by_column[hist_col]["partition_depth_histogram"], hist_col),
                key="overview_hist")
st.caption("Each bar counts micro-partitions by the overlap depth around them; mass on the "
           "right means a value of this column is spread over many partitions.")

st.subheader("Workload")
if summary is None:
    st.info(f"No workload imported for **{table}** yet. Import a query log with "
            f"`layout-advisor workload import {table} FILE` (SQL, one query per line or JSONL), "
            "then reload this page.")
else:
    a, b, c, d = st.columns(4)
    a.metric("Queries", f"{summary['queries']:,}")
    b.metric("Average pruning rate", f"{summary['pruning_rate'] * 100:.1f} %",
             help="Share of partitions skipped thanks to zonemaps, averaged over queries.")
    c.metric("Bytes scanned", fmt_bytes(summary["bytes_scanned"]))
    d.metric("Wasted bytes", fmt_bytes(summary["wasted_bytes"]),
             help="Bytes read from scanned partitions that held no matching row "
                  "(estimated from utilization).")
    st.caption(f"{summary['boundary_share'] * 100:.1f} % of scanned partitions are boundary "
               "partitions (only partly inside the query range): the waste a recluster removes. "
               + views.sentence(services.pruning_unit(table, sid)["label"]))

st.subheader("Trend across snapshots")
with guard(stop=False):
    trend = plan_service.clustering_trend(table, chosen)
    if len(trend) < 2:
        st.caption("One snapshot so far: the trend appears after the first reclustering run.")
    else:
        st.plotly_chart(charts.lines(views.trend_series(trend, chosen),
                                     "Average depth per snapshot (lower is better)",
                                     "snapshot", "average depth", mode="lines+markers"),
                        key="overview_trend")
        if trend["pruning_rate"].notna().all():
            first, last = trend["pruning_rate"].iloc[0], trend["pruning_rate"].iloc[-1]
            st.caption(f"The workload's average pruning rate went from {first * 100:.1f} % on "
                       f"snapshot {trend['snapshot'].iloc[0]} to {last * 100:.1f} % on "
                       f"snapshot {trend['snapshot'].iloc[-1]}.")

st.subheader("Latest plans and runs")
with guard(stop=False):
    plans = plan_service.list_plans(table)
    if plans.empty:
        st.info("No plan yet. Open **Recommendation** to preview what WAIR proposes and store it.")
    else:
        st.dataframe(views.plans_frame(plans).head(8), hide_index=True, key="overview_plans")
