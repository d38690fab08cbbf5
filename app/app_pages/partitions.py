"""Partitions: every micro-partition's range on a column, the depth profile, the EP-file view."""

from __future__ import annotations

import numpy as np
import streamlit as st

from app import charts, components, plan_service, services, views
from app.components import guard
from app.views import fmt_bytes, fmt_num
from engine import api

#: the partition table's page sizes: the largest is the default, so a table of up to
#: that many partitions is shown whole (a larger table is paged, never sent at once)
PAGE_SIZES = (100, 1_000, 10_000)


st.title("Partitions")
table = components.require_table()
sid = components.selected_snapshot()

with guard():
    snap = services.snapshot(table, sid)
    zm = snap.zonemaps()
    metrics = {m["column"]: m for m in services.analyze(table, sid)}

orderable = [c for c in snap.schema.orderable() if c in metrics] or list(metrics)
default_col = views.relevant_columns(list(metrics.values()),
                                        services.workload_summary(table, sid), limit=1)
left, mid, right = st.columns(3)
column = left.selectbox("Column", orderable,
                        index=orderable.index(default_col[0]) if default_col and default_col[0] in orderable else 0,
                        key="partitions_column")
order_by = mid.radio("Order partitions by", ["creation", "min"], horizontal=True, key="partitions_order")
color_by = right.radio("Color by", ["depth", "overlaps"], horizontal=True, key="partitions_color")

with guard():
    clus = services.column_clustering(table, column, sid)
cz = zm.column(column)
n = len(zm)
marks = services.partition_marks(table, column, snap.id, order_by, color_by)

st.subheader(f"Ranges of `{column}` per micro-partition")
if marks["k"] > 1:
    st.caption(f"{n:,} partitions: each mark joins up to {marks['k']} neighbouring partitions "
               f"(in {order_by} order) of the same colour, drawn over their combined range, so "
               "the page stays fast. The depth profile and the table below use every partition.")
fig = charts.partition_segments(
    marks["lo"], marks["hi"], cz.ltype, column, marks["category"],
    charts.depth_colors(), title=f"[min, max] of {column} per partition, colored by {color_by}",
    y_title=f"partition (ordered by {order_by}; row number)", y=marks["y"],
    custom=marks["custom"], hovertemplate=marks["hovertemplate"])
st.plotly_chart(fig, key="partitions_segments")
st.caption("Each horizontal segment is one Parquet file's zonemap on this column; long "
           "segments stacked over the same values (warm colors) mean a filter there must read "
           f"all of them. Colors bucket the {color_by}"
           + (" + 1 (the partition itself)" if color_by == "overlaps" else "") + ".")

st.subheader("Depth profile")
st.plotly_chart(charts.depth_profile(clus.depth_profile, cz.ltype, column,
                                     clus.deepest_ranges),
                key="partitions_profile")
st.caption("How many partitions cover each value of the column; red bands are the deepest "
           "ranges, where clustering is worst and a filter reads the most files.")

st.subheader("EP-file view (patent US 12386863)")
with guard(stop=False):
    ep = services.ep_overview(table, column, snap.id)
    a, b, c, d = st.columns(4)
    a.metric("EP files", f"{ep['ep_file_count']:,}", help=f"{ep['ep_file_partitions']} partitions each, "
             "in creation order (setting ep_file_partitions)")
    b.metric("Average local depth", fmt_num(ep["average_local_depth"]))
    c.metric("Average EP overlap", fmt_num(ep["average_ep_overlap"]))
    d.metric("Average EP depth", fmt_num(ep["average_ep_depth"]))
    deepest_sr = ep.get("deepest_subrange")
    # DD-EP's selection is a whole plan preview (seconds at thousands of partitions): on demand
    show_ddep = sid is None and st.toggle(
        "Show the EP files DD-EP would recluster now", key="partitions_ddep",
        help="Runs DD-EP's selection on the current snapshot and marks its EP files.")
    selected_eps = plan_service.ddep_ep_files(table, ep) if show_ddep else set()
    if selected_eps:  # the summary's files plus every one DD-EP selects
        ep = services.ep_overview(table, column, snap.id, keep=selected_eps)
    st.plotly_chart(charts.ep_regions(ep["ep_files"], deepest_sr, cz.ltype, column, selected_eps),
                    key="partitions_ep")
    if deepest_sr:
        st.caption(f"Each segment is one EP file's data region. The deepest sub-range "
                   f"{deepest_sr['start']} .. {deepest_sr['end']} (total average depth "
                   f"{deepest_sr['total_average_depth']:.2f}) is shaded; the EP files covering it "
                   "seed the patent's DD-EP selection" +
                   (f"; DD-EP's current plan touches {len(selected_eps)} EP files (purple/red)."
                    if selected_eps else "."))
    else:
        st.caption("Each segment is one EP file's data region; no sub-range is deeper than another.")
    if ep["ep_files_shown"] < ep["ep_file_count"]:
        st.caption(f"{ep['ep_files_shown']:,} of {ep['ep_file_count']:,} EP files drawn: the "
                   "highlighted ones first, then those covering the deepest sub-range, then the "
                   "deepest; the averages above cover all of them.")

st.subheader("Depth over a predicate")
where = st.text_input(
    "Only the partitions a predicate may touch (SQL, like a WHERE clause)", key="partitions_where",
    placeholder=f"{column} between ... and ...",
    help="Scopes the metrics below and the partition table to the partitions whose zonemaps "
         "do not rule the predicate out, like Snowflake's SYSTEM$CLUSTERING_DEPTH(table, "
         "columns, predicate).").strip()
scope = None
if where:
    with guard(stop=False):
        scope = services.predicate_scope(table, column, where, sid)
        scoped = scope["metrics"]
        whole = metrics[column]
        a, b, c = st.columns(3)
        a.metric("Partitions it may touch", f"{scoped.where_partition_count:,} of {n:,}")
        b.metric(f"Average depth of {column} there", fmt_num(scoped.average_depth),
                 delta=fmt_num(scoped.average_depth - whole["average_depth"]),
                 delta_color="inverse", help=f"whole table: {fmt_num(whole['average_depth'])}")
        c.metric("Average overlaps there", fmt_num(scoped.average_overlaps),
                 help=f"whole table: {fmt_num(whole['average_overlaps'])}")
        st.caption(services.pruning_unit(table, sid)["file_label"])

st.subheader("All partitions")
st.caption("Click a row to see that partition's zonemaps for every column. The table is "
           "sorted and paged on the server: one page reaches the browser.")
a, b, c, d = st.columns(4)
sort = a.selectbox("Sort by", api.PARTITION_SORT_KEYS, key="partitions_sort",
                   help="min / max: the partition's bounds on the chosen column")
descending = b.toggle("Largest first", value=True, key="partitions_desc")
# 1,000 rows by default: the 10,000-row page sent 784 KB at 1M partitions (warm 4.1 s in
# Chromium against 1.8 s); sorted by depth, the first page holds the partitions to look at
per_page = c.selectbox("Rows per page", PAGE_SIZES, index=1,
                       key="partitions_per_page")
min_depth = d.number_input("Only partitions at least this deep", min_value=0.0, value=0.0,
                           step=1.0, key="partitions_min_depth")
where = where if scope else ""  # a predicate the engine refused scopes nothing
# one sort per (sort, filter): every page and page size slices the same order
ordered = services.partition_order(table, column, snap.id, sort, descending, min_depth, where)
pages = max(1, -(-ordered["matching"] // per_page))
page_no = int(st.number_input(f"Page (of {pages:,})", min_value=1, max_value=pages, value=1,
                              key="partitions_page")) if pages > 1 else 1
offset = (page_no - 1) * per_page
shown = ordered["index"][offset:offset + per_page]
frame = views.partition_frame(zm.subset(shown), column, {
    "depths": np.asarray(clus.depths, dtype=float)[shown],
    "overlaps": np.asarray(clus.overlaps, dtype=float)[shown]})
frame["#"] = shown
st.caption(f"{ordered['matching']:,} of {n:,} partitions match; rows {offset + 1:,} to "
           f"{offset + len(shown):,} shown, {'largest' if descending else 'smallest'} "
           f"{sort} first." if len(shown) else f"0 of {n:,} partitions match.")
event = st.dataframe(frame, hide_index=True, key="partitions_table", on_select="rerun",
                     selection_mode="single-row", height=320)
rows = event.selection.rows if event is not None and hasattr(event, "selection") else []
if rows:
    idx = int(frame.iloc[rows[0]]["#"])
    part = services.partition_details(table, idx, snap.id)  # one row, not every partition
    st.markdown(f"**Partition #{idx}** {views.md_text(part['path'])} · {part['rows']:,} rows · "
                f"{fmt_bytes(part['bytes'])}")
    st.dataframe(views.partition_zonemaps(part), hide_index=True, key="partitions_zonemaps")
else:
    st.info("Select a partition in the table to see its zonemaps for every column.")
