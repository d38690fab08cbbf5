"""The dashboard's only door to the engine.

Every number a page shows comes from ``engine.api`` through this module. Immutable things
(settings, a snapshot of a table, the workload's fragments) are cached as resources and
must never be mutated by a page; derived metrics are cached as data keyed by the snapshot
id, so a new snapshot (after a run or a rollback) is a new cache entry and nothing stale is
shown. Nothing is opened at import time: the first call does the work.

A user mistake surfaces as :class:`engine.core.errors.AdvisorError`; pages catch it through
:func:`app.components.guard` and show ``st.error`` with the reason. A façade function that
is not part of this build raises :class:`FeatureNotReady`, shown as a plain notice.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import streamlit as st

from engine.core.config import CONFIG_FILE_NAME, ENV_PREFIX, Settings, load_settings
from engine.core.errors import AdvisorError

__all__ = ["AdvisorError", "FeatureNotReady"]


class FeatureNotReady(Exception):
    """The engine of this build has no such façade function (yet)."""


def _api() -> Any:
    from engine import api  # imported lazily: importing the app opens nothing

    return api


def has(name: str) -> bool:
    """Whether the engine façade offers ``name``."""
    return hasattr(_api(), name)


def _fn(name: str) -> Callable[..., Any]:
    fn = getattr(_api(), name, None)
    if fn is None:
        raise FeatureNotReady(f"engine.api.{name} is not available in this build")
    return fn


# --------------------------------------------------------------------------- settings

def _env_key() -> tuple[tuple[str, str], ...]:
    env = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(ENV_PREFIX)))
    home = Path(os.environ.get(ENV_PREFIX + "HOME") or ".layout-advisor").expanduser()
    cfg = home / CONFIG_FILE_NAME
    stamp = str(cfg.stat().st_mtime_ns) if cfg.is_file() else ""
    return env + (("__config_mtime__", stamp),)


@st.cache_resource(show_spinner=False, max_entries=8)
def _settings_for(env_key: tuple[tuple[str, str], ...]) -> Settings:
    env = {k: v for k, v in env_key if not k.startswith("__")}
    return load_settings(environ=env)


def settings() -> Settings:
    """Workspace settings, resolved like the CLI (file < environment)."""
    return _settings_for(_env_key())


def home() -> str:
    return str(Path(settings().home).expanduser().resolve())


def approvers() -> tuple[str, ...]:
    return tuple(settings().approvers)


# --------------------------------------------------------------------------- tables

def list_tables() -> list[str]:
    """Names of the workspace's tables (cheap: not cached, so new tables appear at once)."""
    out = _fn("list_tables")(settings())
    return [t["name"] if isinstance(t, Mapping) else str(t) for t in out]


def table_snapshots(table: str) -> pd.DataFrame:
    """The table's snapshot history, newest first, with a ``current`` flag (the engine
    lists the chain oldest first, ending at the current snapshot)."""
    rows = _fn("table_snapshots")(settings(), table)
    df = pd.DataFrame([dict(r) for r in rows])
    if df.empty:
        return df
    if "current" not in df.columns:
        df["current"] = False
        df.loc[df.index[-1], "current"] = True
    df["id"] = df["id"].astype(str)
    return df.iloc[::-1].reset_index(drop=True)


def current_snapshot_id(table: str) -> str:
    snaps = table_snapshots(table)
    if snaps.empty:
        raise AdvisorError(f"table {table!r} has no snapshot")
    cur = snaps[snaps["current"].astype(bool)]
    return str((cur if not cur.empty else snaps).iloc[0]["id"])


@st.cache_resource(show_spinner=False, max_entries=16)
def _snapshot(home_: str, table: str, snapshot_id: str) -> Any:
    return _fn("load_snapshot")(settings(), table, snapshot_id)


def snapshot(table: str, snapshot_id: str | None = None) -> Any:
    """The immutable :class:`engine.table.model.Snapshot` (a shared handle: do not mutate)."""
    sid = snapshot_id or current_snapshot_id(table)
    return _snapshot(home(), table, sid)


def zonemaps(table: str, snapshot_id: str | None = None) -> Any:
    return snapshot(table, snapshot_id).zonemaps()


# --------------------------------------------------------------------------- analysis

@st.cache_data(show_spinner=False, max_entries=16)
def _analyze(home_: str, table: str, snapshot_id: str) -> list[dict[str, Any]]:
    rows = [dict(r) for r in _fn("analyze")(settings(), table, snapshot_id=snapshot_id)]
    zm = _snapshot(home_, table, snapshot_id).zonemaps()
    for row in rows:  # how wide a partition is against the column's whole range (for the verdict)
        cz = zm.columns.get(row["column"])
        if cz is None or cz.ltype == "string" or not cz.valid.any():
            row["span_share"] = None
            continue
        lo, hi = cz.lo[cz.valid], cz.hi[cz.valid]
        domain = float(hi.max() - lo.min())
        row["span_share"] = float(np.mean(hi - lo) / domain) if domain > 0 else 0.0
    return rows


def analyze(table: str, snapshot_id: str | None = None) -> list[dict[str, Any]]:
    """Per-column clustering metrics of a snapshot (average depth, overlaps, histogram...)."""
    sid = snapshot_id or current_snapshot_id(table)
    return _analyze(home(), table, sid)


@st.cache_data(show_spinner=False, max_entries=32)
def _column_clustering(home_: str, table: str, column: str, snapshot_id: str) -> dict[str, Any]:
    return dict(_fn("column_clustering")(settings(), table, column, snapshot_id=snapshot_id))


def column_clustering(table: str, column: str, snapshot_id: str | None = None) -> dict[str, Any]:
    """Per-partition overlaps and depths of one column, with the depth profile."""
    sid = snapshot_id or current_snapshot_id(table)
    return _column_clustering(home(), table, column, sid)


@st.cache_data(show_spinner=False, max_entries=32)
def _ep_metrics(home_: str, table: str, column: str, snapshot_id: str) -> dict[str, Any]:
    return dict(_fn("ep_metrics")(settings(), table, column, snapshot_id=snapshot_id))


def ep_metrics(table: str, column: str, snapshot_id: str | None = None) -> dict[str, Any]:
    """The patent's EP-file view of one column (EP regions, sub-ranges, DD-EP selection)."""
    sid = snapshot_id or current_snapshot_id(table)
    return _ep_metrics(home(), table, column, sid)


def partition_order(zm: Any, column: str, order_by: str) -> np.ndarray:
    """Partition indexes in creation order or by the column's min (unknown bounds last)."""
    n = len(zm)
    if order_by == "min":
        cz = zm.column(column)
        key = np.where(cz.valid, cz.lo, cz.lo.max() if cz.ltype == "string" else np.inf)
        return np.argsort(key, kind="stable")
    seq = zm.created_seq if len(zm.created_seq) == n else np.arange(n)
    return np.argsort(seq, kind="stable")


def partition_frame(zm: Any, column: str, clus: Mapping[str, Any]) -> pd.DataFrame:
    """One row per partition: its file, size, range on ``column``, depth and overlaps."""
    cz = zm.column(column)
    from engine.core import logical_types

    def show(v: Any) -> Any:
        return logical_types.decode_scalar(cz.ltype, v)

    return pd.DataFrame({
        "#": np.arange(len(zm)),
        "file": [p.rsplit("/", 1)[-1] for p in zm.paths],
        "rows": zm.rows,
        "bytes": zm.bytes,
        f"min {column}": [show(v) if ok else None for v, ok in zip(cz.lo, cz.valid)],
        f"max {column}": [show(v) if ok else None for v, ok in zip(cz.hi, cz.valid)],
        "depth": np.asarray(clus["depths"], dtype=float),
        "overlaps": np.asarray(clus["overlaps"], dtype=float),
        "created": zm.created_seq if len(zm.created_seq) == len(zm) else np.arange(len(zm)),
    })


@st.cache_data(show_spinner=False, max_entries=16)
def _partition_table(home_: str, table: str, column: str, snapshot_id: str) -> pd.DataFrame:
    zm = _snapshot(home_, table, snapshot_id).zonemaps()
    return partition_frame(zm, column, _column_clustering(home_, table, column, snapshot_id))


def partition_table(table: str, column: str, snapshot_id: str | None = None) -> pd.DataFrame:
    """:func:`partition_frame` of a snapshot, cached (10,000 rows decode in ~0.3 s)."""
    sid = snapshot_id or current_snapshot_id(table)
    return _partition_table(home(), table, column, sid)


def partition_zonemaps(partition: Any) -> pd.DataFrame:
    """A partition's zonemap for every column (min, max, nulls, compressed bytes)."""
    rows = [{"column": name, "min": str(st_.min) if st_.min is not None else None,
             "max": str(st_.max) if st_.max is not None else None,
             "nulls": st_.null_count, "compressed bytes": st_.compressed_bytes}
            for name, st_ in partition.columns.items()]
    return pd.DataFrame(rows)


def ddep_ep_files(table: str, column: str, ep: Mapping[str, Any]) -> set[int]:
    """EP files holding partitions DD-EP would recluster now (empty when it proposes nothing
    or is not available); needs the current snapshot, as plans always do."""
    try:
        rec = preview_plan(table, "dd-ep", {})
    except (AdvisorError, FeatureNotReady, ModuleNotFoundError):
        return set()
    if rec.get("status") == "no-action":
        return set()
    paths = {p for g in rec.get("groups") or [] for p in g["partitions"]}
    zm = zonemaps(table)
    from engine.metrics.ep import ep_groups

    groups = ep_groups(zm, int(ep["ep_file_partitions"]))
    return {int(g) for p, g in zip(zm.paths, groups) if p in paths}


# --------------------------------------------------------------------------- workload

def workload_key(table: str) -> str:
    """A cheap fingerprint of the table's imported workload (changes when a log is imported)."""
    if has("workload_version"):
        return str(_fn("workload_version")(settings(), table))
    root = Path(home())
    stamps = [f"{p}:{p.stat().st_mtime_ns}:{p.stat().st_size}"
              for p in sorted(root.rglob("*")) if p.is_file() and "workload" in str(p.relative_to(root))
              and table in str(p)]
    return "|".join(stamps) or "none"


@st.cache_resource(show_spinner=False, max_entries=8)
def _fragments(home_: str, table: str, wkey: str) -> tuple[Any, ...]:
    return tuple(_fn("workload_fragments")(settings(), table))


def fragments(table: str) -> tuple[Any, ...]:
    """The table's scan fragments (shared immutable handles), oldest first."""
    return _fragments(home(), table, workload_key(table))


@st.cache_data(show_spinner=False, max_entries=16)
def _pruning(home_: str, table: str, snapshot_id: str, wkey: str) -> pd.DataFrame:
    from engine.scan.pruning import fragment_summary

    snap, frags, scans = _fn("pruning_scans")(settings(), table, snapshot_id=snapshot_id)
    rows_per_part = snap.zonemaps().rows.astype(np.float64)
    total_rows = float(rows_per_part.sum()) or 1.0
    out = []
    for frag, scan in zip(frags, scans):
        row = fragment_summary(scan)
        row["ts"] = frag.ts
        # estimated share of the table's rows the query matches (utilization x rows)
        row["selectivity"] = float((scan.utilization * rows_per_part).sum() / total_rows)
        row["predicated_columns"] = ", ".join(row.get("predicated_columns") or [])
        out.append(row)
    return pd.DataFrame(out)


def pruning(table: str, snapshot_id: str | None = None) -> pd.DataFrame:
    """One row per scan fragment: scanned, pruned, fully covered, boundary, bytes..."""
    sid = snapshot_id or current_snapshot_id(table)
    return _pruning(home(), table, sid, workload_key(table))


def fragment_scan(table: str, query_id: str, snapshot_id: str | None = None) -> Any:
    """Per-partition outcome (:class:`engine.scan.pruning.FragmentScan`) of one query."""
    sid = snapshot_id or current_snapshot_id(table)
    return _fragment_scan(home(), table, sid, workload_key(table), query_id)


@st.cache_resource(show_spinner=False, max_entries=64)
def _fragment_scan(home_: str, table: str, snapshot_id: str, wkey: str, query_id: str) -> Any:
    frag = next((f for f in _fragments(home_, table, wkey) if f.query_id == query_id), None)
    if frag is None:
        raise AdvisorError(f"query {query_id!r} is not in the workload of {table!r}")
    from engine.scan.pruning import analyze_fragment

    return analyze_fragment(_snapshot(home_, table, snapshot_id).zonemaps(), frag)


def _col(df: pd.DataFrame, *names: str, default: float = 0.0) -> pd.Series:
    for name in names:
        if name in df.columns:
            return df[name].fillna(default)
    return pd.Series(default, index=df.index, dtype=float)


def column_frequency(table: str) -> pd.Series:
    """How many queries filter on each column, most frequent first."""
    counts: dict[str, int] = {}
    for frag in fragments(table):
        for col in frag.predicated_columns:
            counts[col] = counts.get(col, 0) + 1
    return pd.Series(counts, dtype=int).sort_values(ascending=False)


def workload_summary(table: str, snapshot_id: str | None = None) -> dict[str, Any] | None:
    """Totals of the workload over a snapshot, or None when no workload was imported."""
    if not has("workload_fragments") or not fragments(table):
        return None
    df = pruning(table, snapshot_id)
    scanned = _col(df, "scanned")
    boundary = _col(df, "boundary")
    return {
        "queries": int(len(df)),
        "pruning_rate": float(_col(df, "pruning_rate").mean()) if len(df) else 0.0,
        "bytes_scanned": float(_col(df, "bytes_scanned").sum()),
        "wasted_bytes": float(_col(df, "wasted_bytes", "bytes_wasted").sum()),
        "boundary_share": float(boundary.sum() / scanned.sum()) if scanned.sum() else 0.0,
        "column_frequency": column_frequency(table).to_dict(),
    }


def relevant_columns(metrics: Sequence[Mapping[str, Any]], summary: Mapping[str, Any] | None,
                     limit: int = 4) -> list[str]:
    """Columns worth a health card: the workload's predicated ones, then the worst clustered."""
    known = [m["column"] for m in metrics]
    picked = [c for c in (summary or {}).get("column_frequency", {}) if c in known][:limit]
    target = len(picked) if len(picked) >= 3 else (3 if picked else 4)
    by_depth = sorted(metrics, key=lambda m: -float(m.get("average_depth") or 0))
    for m in by_depth:
        if len(picked) >= target:
            break
        if m["column"] not in picked and int(m.get("total_constant_partition_count") or 0) < \
                int(m.get("total_partition_count") or 0):
            picked.append(m["column"])
    return picked


@st.cache_data(show_spinner=False, max_entries=8)
def _workload_views(home_: str, table: str, snapshot_id: str, wkey: str) -> dict[str, Any]:
    per_query = _pruning(home_, table, snapshot_id, wkey)
    freq = column_frequency(table)
    hot = str(freq.index[0]) if len(freq) else None
    return {"freq": freq, "waste": waste_per_column(table, per_query),
            "labels": query_labels(_fragments(home_, table, wkey), per_query, hot_column=hot),
            "times": query_times(_fragments(home_, table, wkey))}


def workload_views(table: str, snapshot_id: str | None = None) -> dict[str, Any]:
    """Column frequency, waste per column, the query picker's labels and the timestamps,
    computed once per snapshot and workload version."""
    sid = snapshot_id or current_snapshot_id(table)
    return _workload_views(home(), table, sid, workload_key(table))


def query_times(frags: Sequence[Any]) -> pd.Series | None:
    """Query timestamps (UTC) when the log has them, else None."""
    ts = pd.to_datetime(pd.Series([f.ts for f in frags]), errors="coerce", utc=True)
    if ts.notna().sum() == 0:
        return None
    return ts.dropna().dt.tz_localize(None)


def selectivity(per_query: pd.DataFrame) -> np.ndarray:
    """Estimated fraction of the table's rows each query matches."""
    return _col(per_query, "selectivity").to_numpy(dtype=float)


def waste_per_column(table: str, per_query: pd.DataFrame) -> pd.Series:
    """Wasted bytes summed per predicated column (a query's waste counts for each column)."""
    wasted = dict(zip(per_query["query_id"].astype(str), _col(per_query, "wasted_bytes", "bytes_wasted")))
    out: dict[str, float] = {}
    for frag in fragments(table):
        w = float(wasted.get(str(frag.query_id), 0.0))
        for col in frag.predicated_columns:
            out[col] = out.get(col, 0.0) + w
    return pd.Series(out, dtype=float).sort_values(ascending=False)


def query_labels(frags: Sequence[Any], per_query: pd.DataFrame, limit: int = 2000,
                 hot_column: str | None = None) -> dict[str, str]:
    """Query id -> a label for the picker: queries filtering on ``hot_column`` (the
    workload's most frequent) first, each group most wasteful first."""
    from app.components import fmt_bytes

    waste = dict(zip(per_query["query_id"].astype(str), _col(per_query, "wasted_bytes", "bytes_wasted")))
    ranked = sorted(frags, key=lambda f: (hot_column not in f.predicated_columns,
                                          -float(waste.get(str(f.query_id), 0.0))))[:limit]
    out = {}
    for f in ranked:
        cols = ", ".join(f.predicated_columns) or "no filter"
        out[str(f.query_id)] = (f"{f.query_id} · {cols} · wastes "
                                f"{fmt_bytes(waste.get(str(f.query_id), 0.0))}")
    return out


def query_bands(frag: Any, column: str, ltype: str) -> list[tuple[Any, Any]]:
    """The fragment's ranges on ``column`` in display units (open ends become None)."""
    from app.charts import axis_values
    from engine.core import logical_types

    bands = []
    for box in frag.boxes:
        rng = box.get(column)
        if rng is None:
            continue
        ends = np.array([logical_types.encode_scalar(ltype, rng.min) if rng.min is not None else np.nan,
                         logical_types.encode_scalar(ltype, rng.max) if rng.max is not None else np.nan],
                        dtype=np.float64 if ltype != "string" else object)
        if ltype == "string":
            continue  # a rank axis has no place for a value outside the zonemaps
        lo, hi = axis_values(ltype, ends).tolist()
        bands.append((lo, hi))
    return bands


# --------------------------------------------------------------------------- plans

@st.cache_data(show_spinner=False, max_entries=32)
def _preview(home_: str, table: str, policy: str, params: tuple[tuple[str, Any], ...],
             snapshot_id: str, wkey: str) -> dict[str, Any]:
    return dict(_fn("preview_plan")(settings(), table, policy=policy, params=dict(params)))


def _param_key(params: Mapping[str, Any] | None) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((k, v) for k, v in (params or {}).items() if v is not None))


def preview_plan(table: str, policy: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What ``policy`` would propose on the current snapshot; nothing is stored.

    ``status`` is ``preview`` with groups, costs and the curve, or ``no-action`` with the
    policy's reason."""
    sid = current_snapshot_id(table)
    return _preview(home(), table, policy, _param_key(params), sid, workload_key(table))


def create_plan(table: str, policy: str, params: Mapping[str, Any], actor: str | None) -> dict[str, Any]:
    """Store the policy's proposal as a plan in state ``proposed``."""
    return dict(_fn("create_plan")(settings(), table, policy=policy,
                                   params={k: v for k, v in params.items() if v is not None},
                                   created_by=actor))


def wair_params(form: Mapping[str, Any]) -> dict[str, Any]:
    """Form values as WAIR parameters (a cost limit of 0 means none)."""
    out = dict(form)
    if not out.get("cost_limit"):
        out.pop("cost_limit", None)
    return out


def default_proposer() -> str:
    """Who stores a plan from the dashboard: the OS user running it."""
    from engine.plans.plan import default_actor

    return f"{default_actor()} (dashboard)"


def cost_table(rec: Mapping[str, Any]) -> pd.DataFrame:
    """Reclustering cost against predicted saving, in bytes, CPU-seconds and money."""
    from app.components import fmt_bytes, fmt_money, fmt_seconds

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
    from app.components import fmt_bytes

    rows = []
    for i, g in enumerate(rec.get("groups") or [], start=1):
        rows.append({"group": i, "layout": g["layout"], "key columns": ", ".join(g["columns"]),
                     "partitions": len(g["partitions"]),
                     "predicted saving per window": fmt_bytes(g.get("predicted_saving_bytes", 0.0)),
                     "reason": g.get("reason", "")})
    return pd.DataFrame(rows)


def signature_points(rec: Mapping[str, Any]) -> tuple | None:
    """Savings signatures and anchors projected on the signatures' first two principal axes.

    Returns the arguments of :func:`app.charts.signatures`, or None when there is nothing
    to project (one column, or no scatter in the plan's evidence).
    """
    sc = (rec.get("details") or {}).get("scatter") or {}
    sig = np.asarray(sc.get("signatures") or [], dtype=float)
    cols = list(sc.get("columns") or [])
    if sig.ndim != 2 or len(sig) == 0 or sig.shape[1] < 2:
        return None
    names = sorted({a for a in sc.get("anchors", []) if a and a != "diffuse"})
    anchors = []
    for name in names:
        v = np.array([1.0 if c in name.split("+") else 0.0 for c in cols])
        anchors.append(v / np.linalg.norm(v) if v.any() else v)
    if sig.shape[1] == 2:  # two columns: the unit vectors themselves, no projection needed
        pts = sig
        anc = np.asarray(anchors) if anchors else None
        axis_names = (f"saving share of {cols[0]} (unit-vector component)",
                      f"saving share of {cols[1]} (unit-vector component)")
    else:
        center = sig.mean(axis=0)
        _, sv, vt = np.linalg.svd(sig - center, full_matrices=False)
        axes = vt[:2] if vt.shape[0] >= 2 else np.vstack([vt, np.zeros_like(vt)])
        pts = (sig - center) @ axes.T
        anc = (np.asarray(anchors) - center) @ axes.T if anchors else None
        var = sv ** 2 / max(float((sv ** 2).sum()), 1e-12)
        axis_names = (f"PC1 of the signatures ({var[0] * 100:.0f} % of variance)",
                      f"PC2 ({(var[1] if len(var) > 1 else 0) * 100:.0f} % of variance)")
    hover = [f"{p.rsplit('/', 1)[-1]} · anchor {a or '-'} · saving {s:.3g} CPU-s"
             for p, a, s in zip(sc.get("paths", [""] * len(sig)), sc.get("anchors", [""] * len(sig)),
                                sc.get("saving_cpu_s", [0.0] * len(sig)))]
    return pts, np.asarray(sc.get("labels", [0] * len(sig))), anc, names, axis_names, hover


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
            "decision": _plural(len(rec.get("groups") or []), "group") + (
                f"; break-even after {be:,.0f} queries" if be is not None
                else "; no predicted break-even")}


def _plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def policy_names() -> list[str]:
    from engine.policy.registry import policy_names as names

    return names()


def list_plans(table: str | None = None) -> pd.DataFrame:
    """Stored plans, newest first (not cached: the control store is the live truth)."""
    rows = [dict(r) for r in _fn("list_plans")(settings(), table=table)]
    df = pd.DataFrame(rows)
    if not df.empty and "id" in df.columns:
        df = df.sort_values("id", ascending=False).reset_index(drop=True)
    return df


def plans_frame(plans: pd.DataFrame) -> pd.DataFrame:
    """The columns a human reads in a plan list."""
    rename = {"id": "plan", "status": "status", "policy": "policy", "groups": "groups",
              "partitions": "partitions", "estimated_cpu_seconds": "cost (CPU-s)",
              "predicted_saving_cpu_seconds": "saving per window (CPU-s)",
              "created_by": "proposed by", "created_at": "created (UTC)",
              "updated_at": "updated (UTC)"}
    cols = [c for c in rename if c in plans.columns]
    return plans[cols].rename(columns=rename)


def show_plan(plan_id: int) -> dict[str, Any]:
    """Everything about one plan (groups, costs, audit, progress, result)."""
    return dict(_fn("show_plan")(settings(), int(plan_id)))


def approve_plan(plan_id: int, actor: str, reason: str = "") -> dict[str, Any]:
    return dict(_fn("approve_plan")(settings(), int(plan_id), actor, reason or None))


def reject_plan(plan_id: int, actor: str, reason: str = "") -> dict[str, Any]:
    return dict(_fn("reject_plan")(settings(), int(plan_id), actor, reason or None))


def plan_progress(plan_id: int) -> dict[str, Any]:
    return dict(_fn("plan_progress")(settings(), int(plan_id)))


def audit_log(plan_id: int | None = None) -> pd.DataFrame:
    rows = _fn("audit_log")(settings(), plan_id=None if plan_id is None else int(plan_id))
    return pd.DataFrame([dict(r) for r in rows])


def rollback_table(table: str, to_snapshot_id: str, actor: str) -> Any:
    """Make ``to_snapshot_id`` current again (a new snapshot; nothing is deleted)."""
    if not actor or actor not in approvers():
        from engine.core.errors import ApprovalError

        raise ApprovalError(f"{actor!r} is not a configured approver; approvers are: "
                            f"{', '.join(approvers()) or 'none'}")
    out = _fn("rollback_table")(settings(), table, to_snapshot_id, actor=actor)
    clear_caches()
    return out


def snapshots_frame(snaps: pd.DataFrame) -> pd.DataFrame:
    keep = [c for c in ("id", "current", "operation", "created_at", "parent", "partition_count",
                        "partitions", "rows", "bytes") if c in snaps.columns]
    return snaps[keep]


def realized_frame(realized: Mapping[str, Any]) -> pd.DataFrame:
    """Predicted against realized saving of a run, in bytes and CPU time."""
    from app.components import fmt_bytes, fmt_seconds

    return pd.DataFrame([
        {"": "predicted", "bytes saved": fmt_bytes(realized.get("predicted_saving_bytes")),
         "CPU time saved": fmt_seconds(realized.get("predicted_saving_cpu_seconds"))},
        {"": "realized", "bytes saved": fmt_bytes(realized.get("saving_bytes")),
         "CPU time saved": fmt_seconds(realized.get("saving_cpu_seconds"))},
    ])


def depth_before_after(plan: Mapping[str, Any]) -> pd.DataFrame:
    """Average and max depth of the plan's key columns on its base and result snapshots."""
    result = plan.get("result") or {}
    after_id = result.get("snapshot_id")
    cols = []
    for g in plan.get("groups") or []:
        for c in g.get("columns") or []:
            if c not in cols:
                cols.append(c)
    if not after_id or not cols:
        return pd.DataFrame()
    before = {m["column"]: m for m in analyze(plan["table"], plan["base_snapshot"])}
    after = {m["column"]: m for m in analyze(plan["table"], after_id)}
    rows = []
    for c in cols:
        if c in before and c in after:
            rows.append({"column": c,
                         "average depth before": before[c]["average_depth"],
                         "average depth after": after[c]["average_depth"],
                         "max depth before": before[c].get("max_depth"),
                         "max depth after": after[c].get("max_depth"),
                         "verdict after": after[c].get("verdict")})
    return pd.DataFrame(rows)


class PlanRun:
    """A plan executing in a background thread; the page polls the control store.

    The executor writes its progress to the control store (``plan_progress``); the page
    reads it from there, so a run started elsewhere (the CLI) shows the same way.
    """

    def __init__(self, plan_id: int, actor: str) -> None:
        self.plan_id, self.actor = int(plan_id), actor
        self.result: Any = None
        self.error: BaseException | None = None
        self._settings = settings()
        self._thread = threading.Thread(target=self._work, name=f"plan-{plan_id}", daemon=True)

    def _work(self) -> None:
        try:
            # the engine reuses the process's SparkSession after the first run (~12 s cold)
            self.result = _fn("run_plan")(self._settings, self.plan_id, actor=self.actor)
        except BaseException as exc:  # handed to the page, which shows AdvisorErrors plainly
            self.error = exc

    def start(self) -> "PlanRun":
        self._thread.start()
        return self

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    def poll(self) -> tuple[float, str, str]:
        """(fraction done, message, status) from the control store."""
        prog = plan_progress(self.plan_id)
        total = prog.get("groups_total") or 0
        frac = (prog.get("groups_done") or 0) / total if total else 0.0
        return min(1.0, float(frac)), str(prog.get("message") or ""), str(prog.get("status"))

    def wait(self, timeout_s: float | None = None) -> None:
        self._thread.join(timeout_s)


def start_run(plan_id: int, actor: str) -> PlanRun:
    return PlanRun(plan_id, actor).start()


# --------------------------------------------------------------------------- simulator

def simulator_ready() -> bool:
    return has("simulate") and has("list_presets") and has("scenario_parameters")


def presets() -> list[dict[str, Any]]:
    """``[{"name", "description", "default_rows"}]``."""
    return [dict(p) for p in _fn("list_presets")()]


def scenario_parameters(preset: str) -> list[dict[str, Any]]:
    """The what-if form schema of a preset: name, kind, default, choices, min/max, help."""
    return [dict(p) for p in _fn("scenario_parameters")(preset)]


def simulator_policies() -> dict[str, str]:
    """Policy name -> display label."""
    return {p["name"]: p["label"] for p in _fn("simulation_policies")()}


def simulate(preset: str, rows: int, policies: Sequence[str], seed: int,
             overrides: Mapping[str, Any], progress: Callable[..., Any] | None = None) -> dict[str, Any]:
    """Run the what-if simulator (not cached: the page keeps its result in session state)."""
    return dict(_fn("simulate")(settings(), preset=preset, rows=int(rows), policies=list(policies),
                                seed=int(seed), overrides=dict(overrides), progress=progress))


def simulation_frames(result: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    """Per-batch rows, cumulative CPU-seconds split into query and reclustering cost (over the
    measured batches, as the totals), and one summary row per policy."""
    rows = []
    for name, res in (result.get("policies") or {}).items():
        for b in res.get("batches") or []:
            rows.append({"policy": res.get("label", name), "batch": int(b["index"]) + 1,
                         "period": b["period"], "measured": bool(b["measured"]),
                         "query": float(b["query_cpu_seconds"]),
                         "recluster": float(b["recluster_cpu_seconds"]),
                         "pruning_rate": float(b["pruning_rate"]),
                         "partitions_rewritten": int(b.get("partitions_rewritten") or 0)})
    per = pd.DataFrame(rows)
    cum = per[per["measured"]].copy() if not per.empty else per
    if not cum.empty:
        cum["query"] = cum.groupby("policy")["query"].cumsum()
        cum["recluster"] = cum.groupby("policy")["recluster"].cumsum()
        cum["total"] = cum["query"] + cum["recluster"]
    comp = result.get("comparison") or {}
    summary = []
    for name, res in (result.get("policies") or {}).items():
        c = comp.get(name, {})
        summary.append({
            "policy": res.get("label", name),
            "query CPU-s": res["query_cpu_seconds"], "reclustering CPU-s": res["recluster_cpu_seconds"],
            "total CPU-s": res["cpu_seconds"], "money ($)": res["money"],
            "mean pruning rate (%)": 100 * float(res["pruning_rate"]),
            "partitions rewritten": res["partitions_rewritten"],
            "total cost vs NR (%)": (None if c.get("cpu_reduction_vs_nr") is None
                                     else -100 * float(c["cpu_reduction_vs_nr"])),
        })
    frame = pd.DataFrame(summary)
    if not frame.empty:
        frame = frame.sort_values("total CPU-s").reset_index(drop=True)
    return {"per_batch": per, "cumulative": cum, "summary": frame}


def clear_caches() -> None:
    """Forget cached metrics (after an action that changed the workspace)."""
    st.cache_data.clear()


def decoded(ltype: str, encoded: np.ndarray) -> np.ndarray:
    """Encoded zonemap values as displayable values (dates as datetime64, numbers as is)."""
    if ltype == "date":
        return (np.datetime64("1970-01-01") + np.round(np.nan_to_num(encoded)).astype("timedelta64[D]"))
    if ltype == "timestamp":
        return np.datetime64("1970-01-01T00:00:00") + np.nan_to_num(encoded).astype("timedelta64[us]")
    return encoded
