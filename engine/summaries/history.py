"""How a table's clustering moved across its snapshots, and what every
reclustering run cost and saved.

The two questions Snowflake answers with ``SYSTEM$CLUSTERING_INFORMATION`` over time and
``AUTOMATIC_CLUSTERING_HISTORY``: is the table getting better or worse, and what did the
rewrites buy. Metadata only (each snapshot's zonemaps, the stored workload, the plan store).
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from engine.summaries.store import column_summaries, pruning_fields
from engine.core.errors import InvalidParameterError
from engine.plans.service import list_plans, show_plan

if TYPE_CHECKING:
    from engine.workspace import Workspace

__all__ = ["clustering_trend", "reclustering_history", "snapshot_history"]

#: snapshots the trend covers by default (the newest); each one's metrics and pruning are
#: computed once and stored (:mod:`engine.summaries.store`)
DEFAULT_TREND_SNAPSHOTS = 20


def clustering_trend(ws: "Workspace", table: str, columns: Sequence[str] | str | None = None,
                     last: int = DEFAULT_TREND_SNAPSHOTS) -> list[dict[str, Any]]:
    """One row per snapshot (oldest first, the newest ``last``): its id, time, operation,
    partitions, rows, per column ``average_depth`` and ``average_overlaps``, and how the
    stored workload prunes on it (``pruning_rate``, the mean share of partitions a query
    skips, and ``bytes_scanned``, the workload's total; None without a workload)."""
    if last < 1:
        raise InvalidParameterError(f"last must be >= 1, got {last}")
    store = ws.tables
    current_id = store.current_id(table)
    rows = []
    names: list[str] | None = None
    for entry in store.history(table)[-last:]:
        # each snapshot's metrics and pruning are stored once (engine.summaries.store)
        summary = column_summaries(ws, table, str(entry["id"]))
        head, by_column = summary["snapshot"], {c["column"]: c for c in summary["columns"]}
        if names is None:
            names = _names(columns, list(by_column), lambda: store.snapshot(table, current_id))
        row: dict[str, Any] = {"snapshot": head["id"], "created_at": head["created_at"],
                               "operation": head["operation"], "current": head["id"] == current_id,
                               "partitions": head["partitions"], "rows": head["rows"]}
        for name in names:
            metrics = by_column.get(name) or {}
            row[f"{name}.average_depth"] = metrics.get("average_depth")
            row[f"{name}.average_overlaps"] = metrics.get("average_overlaps")
        row.update(_workload_on(pruning_fields(ws, table, ("pruning_rate", "bytes_scanned"),
                                               str(entry["id"]))
                                if head["partitions"] else {}))
        rows.append(row)
    return rows


def _names(columns: Sequence[str] | str | None, known: Sequence[str],
           snapshot: Callable[[], Any]) -> list[str]:
    """The trend's columns: all summarised ones by default; given names matched to them
    case-insensitively, else resolved by the snapshot's schema (which names a wrong one).

    >>> _names("L_SHIPDATE, l_tax", ["l_shipdate", "l_tax"], lambda: None)
    ['l_shipdate', 'l_tax']
    """
    if columns is None:
        return list(known)
    if isinstance(columns, str):
        columns = [c.strip() for c in columns.split(",") if c.strip()]
    lower = {k.lower(): k for k in known}
    return [lower.get(c.lower()) or snapshot().schema.resolve(c) for c in columns]


def _workload_on(fields: Mapping[str, Sequence[Any]]) -> dict[str, float | None]:
    """The workload's mean pruning rate and total bytes scanned over one snapshot, from
    its per-query ``pruning_rate`` and ``bytes_scanned`` (:func:`pruning_fields`).

    >>> _workload_on({"pruning_rate": [0.5, 1.0], "bytes_scanned": [10, 20]})
    {'pruning_rate': 0.75, 'bytes_scanned': 30.0}
    >>> _workload_on({})
    {'pruning_rate': None, 'bytes_scanned': None}
    """
    if not fields or not len(fields["pruning_rate"]):
        return {"pruning_rate": None, "bytes_scanned": None}
    return {"pruning_rate": float(np.mean(fields["pruning_rate"])),
            "bytes_scanned": float(sum(fields["bytes_scanned"]))}


def reclustering_history(ws: "Workspace", table: str) -> list[dict[str, Any]]:
    """Every plan of ``table`` that ran (succeeded or failed), oldest first: what it
    rewrote, the predicted cost and saving beside what the run measured and realized."""
    out = []
    for summary in list_plans(ws, table):
        if summary["status"] not in ("succeeded", "failed", "running"):
            continue
        plan = show_plan(ws, summary["id"])
        result = plan.get("result") or {}
        realized = result.get("realized") or {}
        cost, saving = plan["estimated_cost"], plan["predicted_saving"]
        out.append({
            "plan": plan["id"], "policy": plan["policy"], "status": plan["status"],
            "finished_at": plan["updated_at"], "base_snapshot": plan["base_snapshot"],
            "new_snapshot": result.get("snapshot_id"),
            "partitions_rewritten": result.get("partitions_removed", plan["partition_count"]),
            "bytes_read": result.get("bytes_read"), "bytes_written": result.get("bytes_written"),
            "predicted_cost_cpu_seconds": cost["cpu_seconds"],
            "predicted_cost_money": cost["money"],
            "measured_seconds": result.get("seconds"),
            "predicted_saving_cpu_seconds": saving.get("cpu_seconds"),
            "realized_saving_cpu_seconds": realized.get("saving_cpu_seconds"),
            "realized_saving_bytes": realized.get("saving_bytes"),
            "error": result.get("error") if plan["status"] == "failed" else None,
        })
    return out


#: the same fact under each format's key: native summary, Iceberg summary, Delta metrics
_FACTS = {
    "plan_id": ("plan_id", "la.plan-id"),
    "policy": ("policy", "la.policy"),
    "approver": ("approver", "la.approver"),
    "added_files": ("added", "added-data-files", "la.added-files", "num_added_files",
                    "numAddedFiles", "numFiles"),
    "removed_files": ("removed", "deleted-data-files", "la.removed-files", "num_removed_files",
                      "numRemovedFiles"),
    "added_rows": ("added-records", "num_added_rows", "numOutputRows"),
    "total_files": ("total-data-files",),
    "total_rows": ("total-records",),
}


def snapshot_history(ws: "Workspace", table: str) -> list[dict[str, Any]]:
    """The table's snapshots as its format records them, oldest first, for any format.

    One dict per snapshot (JSON-friendly): ``id``, ``parent``, ``created_at`` (ISO UTC),
    ``operation`` (the format's word: Iceberg ``append``/``overwrite``/..., Delta
    ``write``/``restore``/..., native ``create``/``recluster``/``rollback``), ``actor``
    (the approver of an advisor rewrite, else the format's user when it records one),
    ``current`` (bool), ``format``; the facts every format can answer under one name:
    ``plan_id``, ``policy``, ``approver``, ``added_files``, ``removed_files``,
    ``added_rows``, ``total_files``, ``total_rows`` (None when the format does not say);
    and ``summary``, everything the format recorded (Iceberg's snapshot summary, Delta's
    commit info with ``operationParameters`` and ``operationMetrics``, the native header's
    summary). Rollback goes through :func:`engine.api.rollback_table` with an ``id``.
    """
    fmt = ws.tables.format(table)
    current = fmt.current_id()
    out = []
    for info in fmt.history():
        summary = _flat(info.summary)
        row: dict[str, Any] = {"id": info.id, "parent": info.parent,
                               "created_at": info.created_at, "operation": info.operation,
                               "actor": info.actor, "current": info.id == current,
                               "format": fmt.format_name}
        for fact, keys in _FACTS.items():
            row[fact] = next((summary[k] for k in keys if summary.get(k) is not None), None)
        for fact in ("added_files", "removed_files", "added_rows", "total_files", "total_rows"):
            row[fact] = _int(row[fact])
        row["plan_id"] = None if row["plan_id"] is None else str(row["plan_id"])
        row["summary"] = _jsonable(info.summary)
        out.append(row)
    return out


def _flat(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The summary with Delta's nested ``operationMetrics`` lifted to the top level."""
    flat = dict(summary)
    metrics = summary.get("operationMetrics")
    if isinstance(metrics, Mapping):
        for key, value in metrics.items():
            flat.setdefault(key, value)
    return flat


def _int(value: Any) -> int | None:
    try:
        return None if value is None else int(value)
    except (TypeError, ValueError):
        return None


def _jsonable(value: Any) -> Any:
    """Dates as ISO strings, decimals and other objects as strings; containers kept."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    return str(value)
