"""A plan as the Recommendation and Approve-and-run pages show it: its cost against
its saving, its rewrite groups and the partitions each one takes, its predicted effect per
query and per column, the comparison of two plans, WAIR's window state and the
busier-workload what-if.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from app.views.formatting import fmt_bytes, fmt_money, fmt_seconds, plural
from engine.core.fmt import format_number, human_bytes


def wair_params(form: Mapping[str, Any]) -> dict[str, Any]:
    """Form values as WAIR parameters (a cost limit of 0 means none; a k_max of None is
    derived by WAIR from the memory budget and the median partition, as without ``--k-max``;
    a window of None is WAIR's own: a day of queries first, then its learned window).

    >>> wair_params({"window": 50, "cost_limit": 0.0, "k_max": None})
    {'window': 50}
    >>> wair_params({"window": None, "alpha": 1.0})
    {'alpha': 1.0}
    """
    out = dict(form)
    if out.get("window") is None:
        out.pop("window", None)
    if not out.get("cost_limit"):
        out.pop("cost_limit", None)
    if out.get("k_max") is None:
        out.pop("k_max", None)
    return out


def k_max_help(derived: Mapping[str, Any]) -> str:
    """How the Recommendation form's default k_max is derived (:func:`engine.api.wair_k_max`).

    >>> k_max_help({"k_max": 64, "memory_budget_bytes": 2 * 1024**3,
    ...             "median_partition_bytes": 32 * 2**20})
    'Memory limit of one rewrite group. Derived unless changed: the memory budget (2.0 GiB) over the median partition (32.0 MiB) = 64 partitions, as `plan preview` without --k-max.'
    """
    return ("Memory limit of one rewrite group. Derived unless changed: the memory budget "
            f"({human_bytes(derived['memory_budget_bytes'])}) over the median partition "
            f"({human_bytes(derived['median_partition_bytes'])}) = {int(derived['k_max']):,} "
            "partitions, as `plan preview` without --k-max.")


def proposer_label(actor: str) -> str:
    """Who stores a plan from the dashboard: the OS user running it, marked as such."""
    return f"{actor} (dashboard)"


def plans_list(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Stored plans, newest first."""
    df = pd.DataFrame([dict(r) for r in rows])
    if not df.empty and "id" in df.columns:
        df = df.sort_values("id", ascending=False).reset_index(drop=True)
    return df


def plans_frame(plans: pd.DataFrame) -> pd.DataFrame:
    """The columns a human reads in a plan list."""
    rename = {"id": "plan", "status": "status", "policy": "policy", "groups": "groups",
              "partitions": "partitions", "estimated_cpu_seconds": "cost (CPU-s)",
              "predicted_saving_cpu_seconds": "saving per window (CPU-s)",
              "created_by": "proposed by", "created_at": "created (UTC)",
              "updated_at": "updated (UTC)", "underdelivered": "underdelivered"}
    cols = [c for c in rename if c in plans.columns]
    return plans[cols].rename(columns=rename)


def cost_table(rec: Mapping[str, Any]) -> pd.DataFrame:
    """Reclustering cost against predicted saving, in bytes, CPU-seconds and money."""
    cost, saving = rec.get("estimated_cost") or {}, rec.get("predicted_saving") or {}
    return pd.DataFrame([
        {"": "reclustering cost (once)",
         "bytes": f"{fmt_bytes(cost.get('bytes_read'))} read + {fmt_bytes(cost.get('bytes_written'))} written",
         "CPU time": fmt_seconds(cost.get("cpu_seconds")), "money": fmt_money(cost.get("money"))},
        {"": f"predicted saving per window ({int(saving.get('window_queries') or 0)} queries)",
         "bytes": f"{fmt_bytes(saving.get('bytes'))} less read",
         "CPU time": fmt_seconds(saving.get("cpu_seconds")), "money": fmt_money(saving.get("money"))},
    ])


def groups_frame(rec: Mapping[str, Any]) -> pd.DataFrame:
    """One row per rewrite group: layout, key columns, size, saving and the reason."""
    rows = []
    for i, g in enumerate(rec.get("groups") or [], start=1):
        rows.append({"group": i, "layout": g["layout"], "key columns": ", ".join(g["columns"]),
                     "partitions": len(g["partitions"]),
                     "predicted saving per window": fmt_bytes(g.get("predicted_saving_bytes", 0.0)),
                     "reason": g.get("reason", "")})
    return pd.DataFrame(rows)


def group_label(group: Mapping[str, Any]) -> str:
    """``sort l_shipdate``, ``hilbert l_shipdate+l_suppkey``, ``qdtree ...``."""
    return f"{group['layout']} {'+'.join(group['columns'])}".strip()


NOT_REWRITTEN = "not rewritten"


def group_assignment(zm: Any, groups: Sequence[Mapping[str, Any]], column: str,
                     limit: int = 5000) -> dict[str, Any]:
    """Which partitions go to which layout, for the hybrid-layout drawing: every partition's
    ``[lo, hi]`` on ``column`` (encoded), its group label (or ``not rewritten``), ordered by
    its min; past ``limit`` partitions an even sample of the unselected ones is kept (the
    selected ones are all drawn). Returns lo, hi, category, y, ltype and the label order."""
    cz = zm.column(column)
    label = np.full(len(zm.paths), NOT_REWRITTEN, dtype=object)
    where = {p: i for i, p in enumerate(zm.paths)}
    order_labels = []
    for g in groups:
        name = group_label(g)
        order_labels.append(name)
        idx = [where[p] for p in g["partitions"] if p in where]
        label[idx] = name
    keep = np.flatnonzero(cz.valid)
    chosen = keep[label[keep] != NOT_REWRITTEN]
    rest = keep[label[keep] == NOT_REWRITTEN]
    room = max(0, limit - len(chosen))
    if len(rest) > room:
        rest = rest[np.unique(np.linspace(0, len(rest) - 1, room).round().astype(np.int64))] \
            if room else rest[:0]
    idx = np.concatenate([chosen, rest])
    idx = idx[np.argsort(cz.lo[idx], kind="stable")]
    return {"lo": cz.lo[idx], "hi": cz.hi[idx], "category": label[idx], "y": np.arange(len(idx)),
            "ltype": cz.ltype, "labels": list(dict.fromkeys(order_labels)) + [NOT_REWRITTEN],
            "sampled": len(idx) < len(keep)}


def signature_points(scatter: Mapping[str, Any], projection: Mapping[str, Any] | None) -> tuple | None:
    """The arguments of :func:`app.charts.signatures`: the API's 2-D projection of a plan's
    savings signatures with cluster labels, axis titles and hover texts (None: nothing)."""
    if projection is None:
        return None
    pts = np.asarray(projection["points"])
    cols = list(scatter.get("columns") or [])
    var = projection["explained_variance"]
    if var is None:
        axis_names = (f"saving share of {cols[0]} (unit-vector component)",
                      f"saving share of {cols[1]} (unit-vector component)")
    else:
        axis_names = (f"PC1 of the signatures ({var[0] * 100:.0f} % of variance)",
                      f"PC2 ({var[1] * 100:.0f} % of variance)")
    n = len(pts)
    hover = [f"{p.rsplit('/', 1)[-1]} · anchor {a or '-'} · saving {format_number(s)} CPU-s"
             for p, a, s in zip(scatter.get("paths", [""] * n), scatter.get("anchors", [""] * n),
                                scatter.get("saving_cpu_s", [0.0] * n))]
    return (pts, np.asarray(scatter.get("labels", [0] * n)), projection["anchors"],
            projection["anchor_names"], axis_names, hover)


def plan_summary(name: str, rec: Mapping[str, Any]) -> dict[str, Any]:
    """One policy's proposal in a few numbers, for the side-by-side comparison."""
    if rec.get("status") == "no-action":
        return {"policy": name, "decision": f"proposes nothing: {rec.get('reason')}"}
    cost, saving = rec.get("estimated_cost") or {}, rec.get("predicted_saving") or {}
    be = rec.get("break_even_queries")
    return {"policy": name, "partitions": int(rec.get("partition_count") or 0),
            "bytes_written": float(cost.get("bytes_written") or 0.0),
            "cost_cpu_s": float(cost.get("cpu_seconds") or 0.0),
            "saving_cpu_s": float(saving.get("cpu_seconds") or 0.0),
            "decision": plural(len(rec.get("groups") or []), "group") + (
                f"; break-even after {be:,.0f} queries" if be is not None
                else "; no predicted break-even")}


def predicted_time_caption(plan: Mapping[str, Any]) -> str:
    """The plan's predicted rewrite time in a warm session and in a fresh one, and the price
    per cell it was priced with (the table's own, ``calibrate --rewrite-on``, or the
    calibration table's): what ``plan show`` prints, for the plan page;
    "" for a plan whose details do not carry them.

    Example:
    >>> predicted_time_caption({"predicted_rewrite_seconds": {"warm": 2.3, "cold": 13.6,
    ...     "cold_start_s": 11.3}, "rewrite_price": {"source": "table", "cell_bytes": 6.49,
    ...     "label": "table lineitem's own price, measured 2026-11-27T06:20:00+00:00 (snapshot 2)"}})
    "Predicted rewrite time: 2.3 s in a warm session (this dashboard after its first run), 13.6 s in a fresh one (`plan run` from the CLI: +11.3 s cold start). Priced at 6.49 B per cell: table lineitem's own price, measured 2026-11-27T06:20:00+00:00 (snapshot 2)."
    >>> predicted_time_caption({"predicted_rewrite_seconds": {"warm": 2.0, "cold": None,
    ...     "cold_start_s": 0.0}, "rewrite_price": None})
    ''
    """
    parts = []
    predicted = plan.get("predicted_rewrite_seconds") or {}
    if predicted.get("cold"):
        parts.append(f"Predicted rewrite time: {fmt_seconds(predicted['warm'])} in a warm "
                     f"session (this dashboard after its first run), "
                     f"{fmt_seconds(predicted['cold'])} in a fresh one (`plan run` from the "
                     f"CLI: +{fmt_seconds(predicted['cold_start_s'])} cold start).")
    price = plan.get("rewrite_price") or {}
    if price.get("label"):
        cell = float(price.get("cell_bytes") or 0.0)
        head = f"Priced at {cell:.2f} B per cell" if cell > 0 else "Priced"
        parts.append(f"{head}: {price['label']}.")
    return " ".join(parts)


def impact_frames(impact: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    """The predicted effect as two tables: per query (largest saving first) and per column.

    Example:
    >>> f = impact_frames({"queries": [{"query_id": "q1", "partitions_before": 10,
    ...     "partitions_after": 4, "bytes_before": 1000.0, "bytes_after": 400.0}],
    ...     "columns": [{"column": "a", "depth_before": 9.0, "depth_after": 2.0,
    ...                  "queries_filtering": 3}]})
    >>> f["queries"].iloc[0].to_dict()["bytes saved (%)"], f["columns"].iloc[0].to_dict()["effect"]
    (60.0, 'better')
    """
    q = pd.DataFrame(impact["queries"])
    if not q.empty:
        saved = q["bytes_before"] - q["bytes_after"]
        q = pd.DataFrame({
            "query": q["query_id"], "partitions before": q["partitions_before"],
            "partitions after": q["partitions_after"],
            "bytes before": q["bytes_before"].round().astype("int64"),
            "bytes after": q["bytes_after"].round().astype("int64"),
            "bytes saved (%)": np.where(q["bytes_before"] > 0,
                                        (saved / q["bytes_before"].where(q["bytes_before"] > 0, 1)
                                         * 100).round(1), 0.0),
        }).sort_values("bytes saved (%)", ascending=False, kind="stable")
    c = pd.DataFrame(impact["columns"])
    if not c.empty:
        change = c["depth_after"] - c["depth_before"]
        c = pd.DataFrame({
            "column": c["column"], "queries filtering it": c["queries_filtering"],
            "depth before": c["depth_before"].round(2), "depth after": c["depth_after"].round(2),
            "effect": np.where(change < -1e-9, "better", np.where(change > 1e-9, "worse", "same")),
        })
    return {"queries": q, "columns": c}


def regressions_frame(regressions: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None
                      ) -> pd.DataFrame:
    """A plan's predicted losses per filtered column (``preview["regressions"]``, or its
    ``columns`` list): depth before and after, queries that would read more, bytes and
    CPU time lost. Empty when nothing gets worse.

    Example:
    >>> list(regressions_frame({"columns": [{"column": "o_orderdate", "queries": 3,
    ...     "bytes_lost": 3 * 1024 ** 2, "cpu_seconds_lost": 0.25, "depth_before": 2.0,
    ...     "depth_after": 36.14}]}).to_dict("records")[0].values())
    ['o_orderdate', 2.0, 36.14, 3, '3.0 MB', '250 ms']
    """
    cols = regressions.get("columns") if isinstance(regressions, Mapping) else regressions
    rows = [{"column": r["column"],
             "depth before": round(float(r["depth_before"]), 2) if r.get("depth_before") is not None else None,
             "depth after": round(float(r["depth_after"]), 2) if r.get("depth_after") is not None else None,
             "queries affected": int(r.get("queries") or 0),
             "bytes lost": fmt_bytes(r.get("bytes_lost")),
             "CPU time lost": fmt_seconds(r.get("cpu_seconds_lost"))}
            for r in cols or [] if int(r.get("queries") or 0) > 0]
    return pd.DataFrame(rows, columns=["column", "depth before", "depth after",
                                       "queries affected", "bytes lost", "CPU time lost"])


def refused_net_of_losses(rec: Mapping[str, Any]) -> bool:
    """Whether a no-action answer is WAIR refusing a plan whose saving, net of the losses
    it predicts for other queries, is not positive (or not above alpha x cost)."""
    return (rec.get("status") == "no-action"
            and str(rec.get("reason") or "").startswith("net of losses"))


def plan_key_columns(plan: Mapping[str, Any]) -> list[str]:
    """The plan's key columns, in the order its groups name them."""
    cols: list[str] = []
    for g in plan.get("groups") or []:
        for c in g.get("columns") or []:
            if c not in cols:
                cols.append(c)
    return cols


def compare_frame(out: Mapping[str, Any]) -> pd.DataFrame:
    """:func:`engine.api.compare_plans` as a frame: one row per field, plan a, plan b, b - a;
    bytes and seconds in human units."""
    rows = []
    for row in out["rows"]:
        field = str(row["field"])
        fmt = (fmt_bytes if field.startswith("bytes") or "bytes" in field
               else fmt_seconds if "CPU-s" in field
               else fmt_money if "money" in field
               else (lambda v: f"{v:,.0f}" if isinstance(v, (int, float)) else ("–" if v is None else str(v))))
        diff = row.get("difference")
        rows.append({"": field, f"plan {out['a']}": fmt(row["a"]) if row["a"] is not None else "–",
                     f"plan {out['b']}": fmt(row["b"]) if row["b"] is not None else "–",
                     "b − a": ("–" if diff is None else
                               ("+" if diff > 0 else "−" if diff < 0 else "") + fmt(abs(diff)))})
    return pd.DataFrame(rows)


def wair_state_frame(state: Mapping[str, Any]) -> pd.DataFrame:
    """WAIR's latest window closes: end (queries), size before and after, verdict, the
    predicted and realized CPU-seconds that decided it."""
    rows = [{"after query": int(w.get("end_queries") or 0),
             "window before": int(w.get("window_before") or 0),
             "window after": int(w.get("window_after") or 0),
             "verdict": w.get("verdict", ""),
             "predicted": fmt_seconds(w.get("predicted_cpu_s")),
             "realized": fmt_seconds(w.get("realized_cpu_s")),
             "runs": int(w.get("feedbacks") or 0), "proposals": int(w.get("proposals") or 0)}
            for w in state.get("windows") or []]
    return pd.DataFrame(rows)


def busier_text(out: Mapping[str, Any]) -> str:
    """The busier-workload what-if in one paragraph: the factor, the plan WAIR would then
    propose (partitions, cost, saving per window) and how to store it. Numbers by
    :func:`engine.core.fmt.format_number` (1,000, never 1e+03).

    >>> busier_text({"factor": 1000.0, "alpha": 0.001, "plan": None,
    ...              "steps": [{"factor": 1.0}, {"factor": 12.5}, {"factor": 1000.0}]})
    'Even if each query of the window ran 1,000 times, WAIR proposes nothing (tried 1x, 12.5x, 1,000x).'
    """
    tried = ", ".join(f"{format_number(float(s['factor']))}x" for s in out.get("steps") or [])
    plan = out.get("plan")
    if plan is None:
        return (f"Even if each query of the window ran {format_number(float(out['factor']))} times, "
                f"WAIR proposes nothing (tried {tried}).")
    cost, saving = plan.get("estimated_cost") or {}, plan.get("predicted_saving") or {}
    what = (f"{int(plan.get('partition_count') or 0):,} partitions in "
            f"{len(plan.get('groups') or [])} group(s), costing {fmt_seconds(cost.get('cpu_seconds'))} "
            f"CPU and saving {fmt_seconds(saving.get('cpu_seconds'))} CPU per "
            f"{int(saving.get('window_queries') or 0)} queries each run once")
    if not out.get("steps"):
        return f"WAIR proposes a plan on the window as it is: {what}."
    return (f"**If each query of the window ran {format_number(float(out['factor']))} times**, WAIR "
            f"would propose {what} (it declined at {tried}). Equation 4 then weighs each saving "
            f"{format_number(float(out['factor']))} times: preview it on **Recommendation** with alpha "
            f"{format_number(float(out['alpha']))}, or `layout-advisor plan preview --busier`.")
