"""Workload: what the queries filter on, what they scan, and where the bytes are wasted."""

from __future__ import annotations

import numpy as np
import streamlit as st

from app import charts, components, services, views
from app.components import guard
from app.views import fmt_bytes

st.title("Workload")
table = components.require_table()
sid = components.selected_snapshot()

with guard():
    frags = services.fragments(table)
if not frags:
    st.info(f"No workload imported for **{table}** yet. Import a query log with\n\n"
            f"`layout-advisor workload import {table} FILE`\n\n"
            "(a .sql file with one statement per line or per `;`, or JSONL with a `sql` field and "
            "optional `ts`), then reload this page.")
    st.stop()

with guard():
    snap = services.snapshot(table, sid)
    zm = snap.zonemaps()
    per_query = services.pruning(table, sid)
    shown_views = services.workload_views(table, sid)
freq = shown_views["freq"]

st.caption(f"{len(frags):,} queries over **{table}** · snapshot `{snap.id}` · "
           f"{len(zm):,} micro-partitions")

left, right = st.columns(2)
with left:
    times = shown_views["times"]
    if times is not None:
        st.plotly_chart(charts.histogram(times, "Queries over time", "time (UTC)", "queries (count)",
                                         nbins=40), key="workload_time")
        st.caption("How many queries arrived in each time bucket of the log.")
    else:
        st.plotly_chart(charts.histogram(np.arange(len(frags)), "Queries in log order",
                                         "query number in the log", "queries (count)", nbins=40),
                        key="workload_time")
        st.caption("The log has no timestamps: queries are shown in log order.")
with right:
    st.plotly_chart(charts.bar(list(freq.index), list(freq.values), "Predicated-column frequency",
                               "column", "queries filtering on it (count)"), key="workload_freq")
    st.caption("Which columns the workload filters on; these are the columns reclustering can help.")

left, right = st.columns(2)
with left:
    sel = views.selectivity(per_query)
    st.plotly_chart(charts.histogram(sel * 100, "Selectivity distribution",
                                     "estimated share of the table's rows matched (%)",
                                     "queries (count)", nbins=40), key="workload_selectivity")
    st.caption("Small selectivities mean selective filters: those queries gain most from good pruning.")
with right:
    waste = shown_views["waste"]
    st.plotly_chart(charts.bar(list(waste.index), [w / 2**20 for w in waste.values],
                               "Wasted bytes per predicated column",
                               "column", "wasted MB (read but not matching)", color="#d62728"),
                    key="workload_waste")
    st.caption("Bytes read from boundary partitions that held no matching rows, attributed to "
               "the columns each query filters on.")

st.subheader("One query over the partitions")
labels = shown_views["labels"]
# a row clicked in the "All queries" table (previous run) selects that query here, once
picked = views.picked_row(st.session_state.get("workload_table"))
if picked is not None and picked != st.session_state.get("workload_table_applied"):
    st.session_state["workload_table_applied"] = picked
    picked_id = str(per_query["query_id"].iloc[picked]) if picked < len(per_query) else None
    if picked_id in labels:
        st.session_state["workload_query"] = picked_id
qid = st.selectbox("Query", list(labels), format_func=lambda q: labels[q], key="workload_query")
frag = next(f for f in frags if f.query_id == qid)
cols = sorted(frag.predicated_columns, key=lambda c: -int(freq.get(c, 0))) or \
    [c for c in snap.schema.orderable()][:1]
column = st.selectbox("Draw ranges on column", cols, key="workload_query_column")
with guard():
    scan = services.fragment_scan(table, qid, sid)

if frag.sql:
    st.code(frag.sql, language="sql", wrap_lines=True)
state = np.where(~scan.scanned, "pruned", np.where(scan.fully_covered, "fully covered", "boundary"))
a, b, c, d = st.columns(4)
a.metric("Pruned", f"{int((~scan.scanned).sum()):,}")
b.metric("Scanned", f"{int(scan.scanned.sum()):,}")
c.metric("Fully covered", f"{int(scan.fully_covered.sum()):,}")
d.metric("Boundary", f"{int(scan.boundary.sum()):,}")

cz = zm.column(column)
order = views.partition_order(zm, column, "min")
valid = cz.valid[order]
marks = charts.segment_marks(cz.lo[order][valid], cz.hi[order][valid], np.arange(len(zm))[valid],
                             state[order][valid], order[valid],
                             scan.utilization[order][valid] * 100, "utilization (%)")
if marks["k"] > 1:
    st.caption(f"{len(zm):,} partitions: each mark joins up to {marks['k']} neighbouring "
               "partitions (in min order) in the same state, drawn over their combined range; "
               "the counts above use every partition.")
fig = charts.partition_segments(
    marks["lo"], marks["hi"], cz.ltype, column, marks["category"],
    charts.STATE_COLORS, title=f"Query {qid}: partitions on {column}",
    y_title="partition (ordered by min; row number)", y=marks["y"],
    bands=charts.query_bands(frag, column, cz.ltype), custom=marks["custom"],
    hovertemplate=marks["hovertemplate"])
st.plotly_chart(fig, key="workload_query_segments")
st.caption("Blue bands are the query's ranges on this column. Grey partitions are pruned, green "
           "ones lie fully inside the range, orange boundary partitions are read but only partly "
           "match: their unmatched rows are the waste.")

util = scan.utilization[scan.scanned]
st.plotly_chart(charts.histogram(util * 100, f"Utilization of the partitions query {qid} scans",
                                 "rows matching in the partition (%)", "partitions (count)",
                                 nbins=20, x_range=(0, 100), color="#ff7f0e"),
                key="workload_utilization")
st.caption(f"Estimated from zonemaps (uniform values within a partition). Read "
           f"{fmt_bytes(scan.bytes_scanned)}; wasted about "
           f"{fmt_bytes(float((scan.read_bytes * (1 - scan.utilization))[scan.scanned].sum()))}.")

st.subheader("Queries that cannot prune")
# the lint parses every stored query again (seconds for hundreds): only when opened
lint_box = st.expander("Check every query's predicates", key="workload_lint_open",
                       on_change="rerun", icon=":material/rule:")
if lint_box.open:
    with lint_box, guard(stop=False):
        lint = services.workload_lint(table)
        if lint.empty:
            st.caption("Every filtering query has a predicate the zonemaps can prune with.")
        else:
            st.dataframe(lint, hide_index=True, key="workload_lint")
            st.caption(f"{lint['query_id'].nunique():,} queries read every partition whatever "
                       "the layout, because of how their predicate is written; the rewrite "
                       "states the same condition so that zonemaps can skip partitions.")

st.subheader("All queries")
st.caption("Click a row to draw that query over the partitions above.")
st.dataframe(views.queries_table(per_query), hide_index=True, key="workload_table", height=300,
             on_select="rerun", selection_mode="single-row")
