"""Workload: what the queries filter on, what they scan, and where the bytes are wasted."""

from __future__ import annotations

import numpy as np
import streamlit as st

from app import charts, components, plan_service, services, views
from app.components import guard
from app.views import fmt_bytes
from engine import api

#: the query table's page sizes (the default shows a small workload whole)
PAGE_SIZES = (50, 100, 1_000)
#: the query table's first view (its selection keeps the plain key ``workload_table``)
TABLE_DEFAULTS = {"workload_sort": "log", "workload_desc": False, "workload_per_page": 100,
                  "workload_page": 1}
#: the picker lists this many queries (the most wasteful on the most filtered column
#: first); a click in the table or a search reaches every other one
TOP_QUERIES = 50
#: a partition's state for one query, in the one-query chart's colours
STATES = np.array(["pruned", "fully covered", "boundary"])


def _first_page() -> None:
    """A new sort, direction or page size starts again at the first page."""
    st.session_state["workload_page"] = 1


def _natural_direction() -> None:
    """Log order reads oldest first; every measure largest first (the user may flip it)."""
    st.session_state["workload_desc"] = st.session_state["workload_sort"] != "log"
    _first_page()


@st.cache_data(show_spinner=False, max_entries=16)
def _query_marks(home_: str, table: str, snapshot_id: str, wkey: str, query_id: str,
                 column: str, limit: int, bins: int) -> dict:
    """The one-query chart's marks (:func:`app.charts.segment_marks` of every partition in
    min order, coloured by its state for the query), cached per query and column: binning
    the states of 1M partitions is too slow for every rerun."""
    zm = services.snapshot(table, snapshot_id).zonemaps()
    scan = services.fragment_scan(table, query_id, snapshot_id)
    # state codes (indexes of STATES): binning orders the 1M categories, numbers faster than
    # names, even one-character strings; the marks get names below
    state = np.where(~scan.scanned, 0, np.where(scan.fully_covered, 1, 2)).astype(np.int8)
    cz = zm.column(column)
    order = views.partition_order(zm, column, "min")
    valid = cz.valid[order]
    marks = charts.segment_marks(cz.lo[order][valid], cz.hi[order][valid],
                                 np.arange(len(zm))[valid], state[order][valid], order[valid],
                                 scan.utilization[order][valid] * 100, "utilization (%)",
                                 limit=limit, bins=bins)
    marks["category"] = STATES[np.asarray(marks["category"]).astype(int)]
    return marks


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
        bins = api.histogram_bins(times.to_numpy(), 40)
        st.plotly_chart(charts.binned_histogram(bins["edges"], bins["counts"], "Queries over time",
                                                "time (UTC)", "queries (count)"),
                        key="workload_time")
        st.caption("How many queries arrived in each time bucket of the log.")
    else:
        bins = api.histogram_bins(np.arange(len(frags)), 40)
        st.plotly_chart(charts.binned_histogram(bins["edges"], bins["counts"],
                                                "Queries in log order", "query number in the log",
                                                "queries (count)"), key="workload_time")
        st.caption("The log has no timestamps: queries are shown in log order.")
with right:
    st.plotly_chart(charts.bar(list(freq.index), list(freq.values), "Predicated-column frequency",
                               "column", "queries filtering on it (count)"), key="workload_freq")
    st.caption("Which columns the workload filters on; these are the columns reclustering can help.")

left, right = st.columns(2)
with left:
    bins = api.histogram_bins(views.selectivity(per_query) * 100, 40)
    st.plotly_chart(charts.binned_histogram(bins["edges"], bins["counts"],
                                            "Selectivity distribution",
                                            "estimated share of the table's rows matched (%)",
                                            "queries (count)"), key="workload_selectivity")
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
# the query table's view (its widgets are at the bottom; their values are known now)
for k, v in TABLE_DEFAULTS.items():
    st.session_state.setdefault(k, v)
view = {k: st.session_state[k] for k in TABLE_DEFAULTS}
ordered = services.query_order(table, view["workload_sort"], bool(view["workload_desc"]), sid)
per_page = int(view["workload_per_page"])
pages = max(1, -(-len(ordered) // per_page))
page_no = min(max(1, int(view["workload_page"])), pages)
if page_no != view["workload_page"]:  # a shorter workload since: the last page
    st.session_state["workload_page"] = page_no
shown = ordered[(page_no - 1) * per_page:page_no * per_page]
# each view of the table is its own widget, so a selection never outlives its rows
table_key = "workload_table" if view == TABLE_DEFAULTS else (
    f"workload_table_{view['workload_sort']}_{int(bool(view['workload_desc']))}_{per_page}_{page_no}")
# a row clicked in the "All queries" table (previous run) selects that query here, once
picked = views.picked_row(st.session_state.get(table_key))
if picked is not None and (table_key, picked) != st.session_state.get("workload_table_applied"):
    st.session_state["workload_table_applied"] = (table_key, picked)
    picked_id = str(per_query["query_id"].iloc[shown[picked]]) if picked < len(shown) else None
    if picked_id in labels:
        st.session_state["workload_query"] = picked_id

pick_col, find_col = st.columns([2, 1])
find = find_col.text_input("Find a query", key="workload_find",
                           placeholder="query id or SQL text, e.g. l_commitdate",
                           help="An exact id first, then ids starting with or containing the "
                                "text, then queries whose SQL contains it.").strip()
found = []
if find:
    hits = api.find_queries([f.query_id for f in frags], find, sql=[f.sql for f in frags],
                            limit=TOP_QUERIES)
    found = list(dict.fromkeys(str(frags[i].query_id) for i in hits))
    if found and find != st.session_state.get("workload_find_applied"):
        st.session_state["workload_query"] = found[0]  # a new search shows its best match
    st.session_state["workload_find_applied"] = find
options = found or list(labels)[:TOP_QUERIES]
current = st.session_state.get("workload_query")
if current in labels and current not in options:
    options = [current, *options]  # what a click or an earlier search picked stays picked
qid = pick_col.selectbox("Query", options, format_func=lambda q: labels[q], key="workload_query",
                         help=f"The {min(TOP_QUERIES, len(labels)):,} most wasteful queries "
                              "(those filtering on the most filtered column first), or what the "
                              "search finds; click a row of the table below to pick any query.")
if find and not found:
    st.caption(f"No query id or SQL contains {views.md_text(find)}.")
elif find:
    st.caption(f"{len(found):,} queries found"
               + (f" (the first {TOP_QUERIES})" if len(found) >= TOP_QUERIES else "")
               + "; clear the search to list the most wasteful again.")
frag = next(f for f in frags if f.query_id == qid)
cols = sorted(frag.predicated_columns, key=lambda c: -int(freq.get(c, 0))) or \
    [c for c in snap.schema.orderable()][:1]
column = st.selectbox("Draw ranges on column", cols, key="workload_query_column")
with guard():
    scan = services.fragment_scan(table, qid, sid)

if frag.sql:
    st.code(frag.sql, language="sql", wrap_lines=True)
derived = [s for s in frag.sources if s.kind != "direct"]
if derived:  # ranges that arrived through joins, and joins that gave none
    st.caption("Where this query's ranges come from: "
               + "; ".join(views.md_text(s.describe()) for s in derived))
a, b, c, d = st.columns(4)
a.metric("Pruned", f"{int((~scan.scanned).sum()):,}")
b.metric("Scanned", f"{int(scan.scanned.sum()):,}")
c.metric("Fully covered", f"{int(scan.fully_covered.sum()):,}")
d.metric("Boundary", f"{int(scan.boundary.sum()):,}")
with guard(stop=False):
    st.caption(views.sentence(services.pruning_unit(table, sid)["label"]))

cz = zm.column(column)
marks = _query_marks(services.home(), table, snap.id, services.workload_key(table), qid, column,
                     charts.partitions.BIN_LIMIT, charts.partitions.BINS)
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

bins = api.histogram_bins(scan.utilization[scan.scanned] * 100, 20, (0, 100))
st.plotly_chart(charts.binned_histogram(bins["edges"], bins["counts"],
                                        f"Utilization of the partitions query {qid} scans",
                                        "rows matching in the partition (%)", "partitions (count)",
                                        x_range=(0, 100), color="#ff7f0e"),
                key="workload_utilization")
# row-group level (the prune_row_groups setting): what the row groups met cost, as the query table
row_groups = (f" in {scan.row_groups[0]:,} of the table's {scan.row_groups[1]:,} row groups"
              if scan.row_groups is not None else "")
st.caption(f"Estimated from zonemaps (uniform values within a partition). Read "
           f"{fmt_bytes(scan.bytes_scanned)}{row_groups}; wasted about "
           f"{fmt_bytes(float(scan.waste.sum()))}.")

st.subheader("Queries that cannot prune")
# the lint parses every stored query again (seconds for hundreds): only when opened
lint_box = st.expander("Check every query's predicates", key="workload_lint_open",
                       on_change="rerun", icon=":material/rule:")
if lint_box.open:
    with lint_box, guard(stop=False):
        lint = plan_service.workload_lint(table)
        if lint.empty:
            st.caption("Every filtering query has a predicate the zonemaps can prune with.")
        else:
            st.dataframe(lint, hide_index=True, key="workload_lint")
            st.caption(f"{lint['query_id'].nunique():,} queries read every partition whatever "
                       "the layout, because of how their predicate is written; the rewrite "
                       "states the same condition so that zonemaps can skip partitions.")

st.subheader("All queries")
a, b, c, d = st.columns(4)
# (defaults come from TABLE_DEFAULTS through the session state, set above)
a.selectbox("Sort by", api.QUERY_SORT_KEYS, format_func=views.QUERY_SORT_LABELS.get,
            key="workload_sort", on_change=_natural_direction)
b.toggle("Largest first", key="workload_desc", on_change=_first_page)
c.selectbox("Rows per page", PAGE_SIZES, key="workload_per_page", on_change=_first_page)
if pages > 1:
    d.number_input(f"Page (of {pages:,})", min_value=1, max_value=pages, key="workload_page")
offset = (page_no - 1) * per_page
sort_label = views.QUERY_SORT_LABELS[view["workload_sort"]]
st.caption(f"{len(ordered):,} queries; rows {offset + 1:,} to {offset + len(shown):,} shown, "
           + ("in log order" + (", newest first" if view["workload_desc"] else "")
              if view["workload_sort"] == "log" else
              f"{'largest' if view['workload_desc'] else 'smallest'} {sort_label} first")
           + ". Click a row to draw that query over the partitions above; the table is sorted "
             "and paged on the server, one page reaches the browser. "
           + views.sentence(services.pruning_unit(table, sid)["label"]))
st.dataframe(views.queries_table(per_query.iloc[shown],
                                 sources=services.range_sources(table)),
             hide_index=True, key=table_key,
             height=300, on_select="rerun", selection_mode="single-row")
